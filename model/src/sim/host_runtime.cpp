#include "dmasim/sim/host_runtime.h"

namespace dmasim::sim {

HostRuntime::HostRuntime(sc_core::sc_module_name name, const Params& params, Gpu& gpu, std::uint16_t host_node)
    : sc_core::sc_module(name), params_(params), gpu_(gpu), host_node_(host_node) {
    SC_THREAD(driver);
}

void HostRuntime::configure(const Params& params) { params_ = params; }

void HostRuntime::submit(const CopyRequest& request) {
    request_ = request;
    has_request_ = true;
    done_ = false;
    work_event_.notify(sc_core::SC_ZERO_TIME);
}

void HostRuntime::driver() {
    for (;;) {
        while (!has_request_) {
            sc_core::sc_pause();
            wait(work_event_);
        }
        has_request_ = false;
        const double t0 = now_ps();
        const auto engines = static_cast<std::size_t>(gpu_.active_engines());
        engine_queue_.assign(engines, {});
        engine_busy_.assign(engines, false);
        job_engine_.clear();
        completed_ = 0;
        first_job_id_ = next_job_id_;
        for (const auto& copy : request_.copies) {
            wait(to_sc(params_.call_overhead));
            CopyJob job;
            job.id = next_job_id_++;
            job.direction = copy.direction;
            job.bytes = copy.bytes;
            job.host_node = host_node_;
            const auto e = static_cast<std::size_t>(copy.engine) % engines;
            job_engine_.push_back(static_cast<int>(e));
            engine_queue_[e].push_back(job);
            if (!engine_busy_[e]) start_next_on(static_cast<int>(e));
        }
        if (completed_ < request_.copies.size()) wait(all_done_event_);
        wait(to_sc(params_.sync_latency));
        elapsed_ps_ = now_ps() - t0;
        done_ = true;
    }
}

void HostRuntime::start_next_on(int engine) {
    auto& q = engine_queue_[static_cast<std::size_t>(engine)];
    if (q.empty()) {
        engine_busy_[static_cast<std::size_t>(engine)] = false;
        return;
    }
    engine_busy_[static_cast<std::size_t>(engine)] = true;
    gpu_.engine(engine).start(q.front());
    q.pop_front();
}

void HostRuntime::semaphore_written(std::uint32_t job) {
    DMASIM_ASSERT(job >= first_job_id_ && job - first_job_id_ < job_engine_.size());
    start_next_on(job_engine_[job - first_job_id_]);
    if (++completed_ == request_.copies.size()) all_done_event_.notify(sc_core::SC_ZERO_TIME);
}

}  // namespace dmasim::sim
