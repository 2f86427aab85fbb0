#include "dmasim/sim/host_runtime.h"

#include <algorithm>
#include <cmath>

#include "dmasim/core/units.h"
#include "dmasim/sim/root_complex.h"
#include "dmasim/sim/trace.h"

namespace dmasim::sim {

HostRuntime::HostRuntime(sc_core::sc_module_name name, const Params& params, std::vector<Gpu*> gpus,
                         std::uint16_t host_node)
    : sc_core::sc_module(name), host_memory("host_memory"), params_(params), gpus_(std::move(gpus)), host_node_(host_node) {
    SC_THREAD(driver);
    SC_METHOD(front_end);
    sensitive << ready_.event();
    dont_initialize();
    SC_METHOD(kernel_finished);
    sensitive << kernel_end_.event();
    dont_initialize();
    SC_METHOD(wait_finished);
    sensitive << wait_end_.event();
    dont_initialize();
    SC_METHOD(release_wait_over);
    sensitive << release_wait_end_.event();
    dont_initialize();
}

void HostRuntime::configure(const Params& params) { params_ = params; }

std::string HostRuntime::unfinished() const {
    std::size_t left = 0;
    std::size_t first = finished_.size();
    for (std::size_t i = 0; i < finished_.size(); ++i) {
        if (finished_[i]) continue;
        if (left++ == 0) first = i;
    }
    std::string out = std::to_string(left) + " of " + std::to_string(finished_.size()) + " operations unfinished";
    if (first == finished_.size()) return out;
    const Op& op = program_.ops[first];
    const char* dir = op.direction == CopyDirection::kHostToDevice ? "h2d" : "d2h";
    std::string what;
    switch (op.kind) {
        case Op::Kind::kCopy: what = std::string("copy ") + dir + " of " + core::to_string(core::Bytes{op.bytes}); break;
        case Op::Kind::kStagedCopy: what = std::string("pageable copy ") + dir + " of " + core::to_string(core::Bytes{op.bytes}); break;
        case Op::Kind::kKernel: what = "kernel of " + core::to_string(op.duration); break;
        case Op::Kind::kCpuWork: what = "CPU work of " + core::to_string(op.duration); break;
        case Op::Kind::kReleaseAt: what = "release at " + core::to_string(op.duration); break;
        case Op::Kind::kSynchronize: what = "synchronize"; break;
        case Op::Kind::kMappedKernel:
            what = "mapped-memory kernel reading " + core::to_string(core::Bytes{op.mapped.read_bytes}) + " and writing " +
                   core::to_string(core::Bytes{op.mapped.write_bytes});
            break;
        case Op::Kind::kCpuMapped: what = std::string("CPU access through the BAR ") + dir + " of " + core::to_string(core::Bytes{op.bytes}); break;
        case Op::Kind::kOpenGate: what = "the gate opening"; break;
        case Op::Kind::kWaitFor: what = "a wait for op " + std::to_string(op.after); break;
        case Op::Kind::kRecord: what = "an event record"; break;
    }
    return out + ", the first op " + std::to_string(first) + ": " + what + " on stream " + std::to_string(op.stream);
}

void HostRuntime::submit(const Program& program) {
    program_ = program;
    has_program_ = true;
    done_ = false;
    work_event_.notify(zero_delay());
}

std::size_t HostRuntime::engine_for(int gpu, CopyDirection dir) const {
    // The CUDA runtime gives each direction its own copy engine; with one engine they share.
    const int n = gpus_[static_cast<std::size_t>(gpu)]->active_engines();
    return unit(gpu, (dir == CopyDirection::kHostToDevice ? 0 : 1) % n);
}

bool HostRuntime::streams_idle() const {
    return std::all_of(streams_.begin(), streams_.end(), [](const StreamState& s) { return s.pending.empty(); });
}

void HostRuntime::driver() {
    for (;;) {
        while (!has_program_) {
            sc_core::sc_pause();
            wait(work_event_);
        }
        has_program_ = false;
        t0_ps_ = now_ps();
        const std::size_t n_ops = program_.ops.size();
        timings_.assign(n_ops, OpTiming{});
        finished_.assign(n_ops, false);
        op_seen_at_ps_.assign(n_ops, 0.0);
        jobs_left_.assign(n_ops, 0);
        waiters_.assign(n_ops, {});
        enqueued_ps_.assign(n_ops, 0.0);
        record_stamp_ps_.assign(n_ops, 0.0);
        release_held_.assign(n_ops, 0);
        landed_ps_.assign(n_ops, 0.0);
        held_releases_.clear();
        // A held release that landed when its copies ended leaves its latest time behind: the
        // last program's waits are all over, so what is left is only that.
        wait_end_.clear();
        release_wait_end_.clear();
        handed_ps_.assign(n_ops, -1.0);
        early_.assign(n_ops, 0);
        records_ridden_.assign(n_ops, 0);
        dispatched_.assign(n_ops, 0);
        in_stream_.assign(n_ops, 0);
        with_work_.assign(n_ops, 0);
        gate_closed_ = std::any_of(program_.ops.begin(), program_.ops.end(),
                                   [](const Op& op) { return op.kind == Op::Kind::kOpenGate; });
        assign_channels();
        // The harness sets the device of a program's first call before it starts.
        cpu_device_ = n_ops > 0 ? program_.ops.front().gpu : 0;
        int max_stream = 0;
        for (const Op& op : program_.ops) max_stream = std::max(max_stream, op.stream);
        streams_.assign(static_cast<std::size_t>(max_stream) + 1, StreamState{});
        released_ps_.assign(streams_.size(), -1e300);
        const auto nq = static_cast<std::size_t>(params_.runtime.connections);
        const auto nch = static_cast<std::size_t>(channels());
        queue_.assign(n_ops, -1);
        held_.assign(n_ops, 0);
        queue_waiting_.assign(nch, std::vector<std::deque<std::size_t>>(nq));
        queue_unfinished_.assign(nch, std::vector<int>(nq, 0));
        stream_unfinished_.assign(streams_.size(), std::vector<int>(nch, 0));
        stream_queue_.assign(streams_.size(), std::vector<int>(nch, -1));
        // Each program starts on streams the CPU has waited for, but for the gate kernel's.
        stream_synced_.assign(streams_.size(), 1);
        if (gate_closed_) stream_synced_[0] = 0;
        engines_.assign(gpus_.size() * Gpu::kUnits, EngineState{});
        launches_.assign(static_cast<std::size_t>(channels()), 0);
        compute_queue_.clear();
        compute_busy_ = false;
        sm_warps_used_ = 0.0;
        sm_blocks_used_ = 0.0;
        kernel_blocks_waiting_ = 0;
        kernel_blocks_running_ = 0;
        mapped_waiting_.clear();
        resident_blocks_.assign(n_ops, 0);
        kernel_batches_.clear();
        job_op_.clear();
        job_engine_.clear();
        job_done_.clear();
        job_let_go_.clear();
        job_runtime_piece_.clear();
        job_seen_late_.clear();
        job_seen_at_ps_.clear();
        cpu_sees_after_ps_ = 0.0;
        first_job_id_ = next_job_id_;
        behind_gate_.clear();
        staged_ways_.clear();
        for (std::size_t i = 0; i < n_ops; ++i) {
            const Op& op = program_.ops[i];
            if (op.staged_way < 0 || op.kind != Op::Kind::kCopy) continue;
            // A program has fewer staged copies than operations.
            const auto w = std::min(static_cast<std::size_t>(op.staged_way), n_ops);
            if (staged_ways_.size() <= w) staged_ways_.resize(w + 1);
            StagedWay& way = staged_ways_[w];
            std::size_t& first = op.direction == CopyDirection::kDeviceToHost ? way.first_down : way.first_up;
            if (first == kNoOp) first = i;
            if (op.direction == CopyDirection::kHostToDevice) way.to = op.gpu;
        }
        gpu_active_ = 0;
        idle_since_ps_ = -1.0;
        cpu_copy_end_ps_ = -1.0;
        awake_at_ps_ = 0.0;

        for (std::size_t i = 0; i < n_ops; ++i) {
            const Op& op = program_.ops[i];
            switch_device(op);
            timings_[i].issued_ps = now_ps() - t0_ps_;
            switch (op.kind) {
                case Op::Kind::kCpuWork:
                    timings_[i].start_ps = now_ps() - t0_ps_;
                    wait(to_sc(op.duration));
                    timings_[i].end_ps = now_ps() - t0_ps_;
                    finished_[i] = true;
                    break;
                case Op::Kind::kReleaseAt: {
                    const double at = t0_ps_ + static_cast<double>(op.duration.ps);
                    if (at > now_ps()) wait(ps_delay(at - now_ps()));
                    timings_[i].start_ps = timings_[i].end_ps = now_ps() - t0_ps_;
                    finished_[i] = true;
                    break;
                }
                case Op::Kind::kSynchronize:
                    timings_[i].start_ps = now_ps() - t0_ps_;
                    wait(to_sc(params_.runtime.call_overhead));
                    while (!streams_idle()) wait(progress_event_);
                    wait_cpu_seen(cpu_sees_after_ps_);
                    wait(to_sc(params_.runtime.sync_latency));
                    std::fill(stream_synced_.begin(), stream_synced_.end(), 1);
                    timings_[i].end_ps = now_ps() - t0_ps_;
                    finished_[i] = true;
                    break;
                case Op::Kind::kCpuMapped:
                    cpu_mapped(i);
                    break;
                case Op::Kind::kOpenGate:
                    // The host's store to the gate's flag; what the GPU takes to see it is part of
                    // the interval only as the launch latency of the work behind it.
                    timings_[i].start_ps = timings_[i].end_ps = now_ps() - t0_ps_;
                    finished_[i] = true;
                    gate_closed_ = false;
                    for (const std::size_t op : behind_gate_) {
                        // The gate is a kernel on stream 0: the compute channel there, and the
                        // front end's own work, follow it at once; every other channel has been
                        // trying since its call.
                        const bool at_once = channel_[op] == kFrontEnd || (program_.ops[op].stream == 0 &&
                                                                         channel_[op] == channel_of_compute(program_.ops[op].gpu));
                        // Work at once behind the gate kernel was handed out with it: what follows
                        // on another channel has tried its semaphore since its own call.
                        if (at_once) handed_ps_[op] = enqueued_ps_[op];
                        ready_.push(at_once ? now_ps() : polled_ps(enqueued_ps_[op], now_ps()), op);
                    }
                    behind_gate_.clear();
                    break;
                case Op::Kind::kStagedCopy:
                    wait(to_sc(params_.runtime.call_overhead));
                    // A pageable copy is ordered after earlier work on its stream.
                    while (!streams_[static_cast<std::size_t>(op.stream)].pending.empty()) wait(progress_event_);
                    staged_copy(i);
                    // Synchronous: the CPU has seen its stream's work done.
                    stream_synced_[static_cast<std::size_t>(op.stream)] = 1;
                    break;
                case Op::Kind::kWaitFor:
                    DMASIM_ASSERT(op.after < i);
                    if (!op.queued_by_runtime) {
                        const bool other_gpu = program_.ops[op.after].gpu != op.gpu;
                        wait(to_sc(other_gpu ? params_.runtime.cross_device_wait_call : params_.runtime.stream_wait_call));
                    }
                    stream_synced_[static_cast<std::size_t>(op.stream)] = 0;
                    enqueue(i);
                    break;
                case Op::Kind::kRecord:
                    if (!op.queued_by_runtime) wait(to_sc(params_.runtime.record_call));
                    stream_synced_[static_cast<std::size_t>(op.stream)] = 0;
                    enqueue(i);
                    break;
                case Op::Kind::kCopy:
                case Op::Kind::kKernel:
                case Op::Kind::kMappedKernel: {
                    if (!op.queued_by_runtime || op.staged_peer) wait(to_sc(call_time(op)));
                    // The call copies the data into the command stream before it returns: a copy
                    // up to runtime.inline_h2d_max on a stream the CPU has waited for since its
                    // last work (the front end then reads it with the work), and one the front
                    // end writes (runtime.front_end_h2d_max) on any stream.
                    const auto stream = static_cast<std::size_t>(op.stream);
                    if (inline_copy(op) && (stream_synced_[stream] || front_end_write(op.direction, op.bytes))) {
                        in_stream_[i] = 1;
                        with_work_[i] = stream_synced_[stream];
                        cpu_copy(op.bytes, false, true, cold_share());
                    }
                    stream_synced_[stream] = 0;
                    enqueue(i);
                    if (op.blocking) {
                        while (!finished_[i]) wait(progress_event_);
                        wait_cpu_seen(op_seen_at_ps_[i]);
                        wait(to_sc(params_.runtime.sync_latency));
                        stream_synced_[stream] = 1;
                    }
                    break;
                }
            }
        }
        while (!streams_idle()) wait(progress_event_);
        elapsed_ps_ = now_ps() - t0_ps_;
        trace_program();
        done_ = true;
    }
}

void HostRuntime::assign_queue(std::size_t op) {
    const int ch = channel_[op];
    // The front end's own work holds no queue; nor does an event record, which the engine stamps
    // behind its stream's work before it and which holds up nothing behind it
    // (StreamHandoff.ACopyBehindACopyOnItsChannelGoesToTheEngineAsItsNext).
    if (ch < 0 || program_.ops[op].kind == Op::Kind::kRecord) return;
    const auto stream = static_cast<std::size_t>(program_.ops[op].stream);
    const auto c = static_cast<std::size_t>(ch);
    std::vector<int>& unfinished = queue_unfinished_[c];
    int q = stream_unfinished_[stream][c] > 0 ? stream_queue_[stream][c] : -1;
    if (q < 0) {
        // An empty queue if there is one (the first), else the least loaded (the first of those).
        q = static_cast<int>(std::min_element(unfinished.begin(), unfinished.end()) - unfinished.begin());
    }
    queue_[op] = q;
    stream_queue_[stream][c] = q;
    ++stream_unfinished_[stream][c];
    ++unfinished[static_cast<std::size_t>(q)];
    queue_waiting_[c][static_cast<std::size_t>(q)].push_back(op);
}

void HostRuntime::enqueue(std::size_t op) {
    enqueued_ps_[op] = now_ps();
    assign_queue(op);
    StreamState& s = streams_[static_cast<std::size_t>(program_.ops[op].stream)];
    s.pending.push_back(op);
    if (s.running) {
        // Behind a copy its channel has handed out already (records between them run inline):
        // this copy goes to the same engine now (hand_on_behind).
        std::uint32_t timed_records = 0;
        for (auto it = s.pending.rbegin() + 1; it != s.pending.rend(); ++it) {
            if (program_.ops[*it].kind == Op::Kind::kRecord) {
                if (release_held_[*it] && !finished_[*it]) break;  // its stream waits for it to land
                if (program_.ops[*it].timed) ++timed_records;
                continue;
            }
            if (dispatched_[*it] && rides_behind(*it, op)) {
                early_[op] = 1;
                records_ridden_[op] = timed_records;
                dispatch(op);
            }
            break;
        }
    }
    if (!s.running) {
        s.running = true;
        if (gate_closed_ && op >= program_.gate_closes_at) {
            // The gate kernel keeps the GPU busy until it opens: no idle time to wake from.
            behind_gate_.push_back(op);
        } else {
            // An event recorded on an idle stream is stamped a little after its call returns
            // (runtime.record_stamp); it holds nothing up, only its stamp is later (start_op).
            if (program_.ops[op].kind == Op::Kind::kRecord) record_stamp_ps_[op] = static_cast<double>(params_.runtime.record_stamp.ps);
            ready_.push(stream_start_ps(), op);
        }
    }
}

double HostRuntime::stream_start_ps() {
    const double now = now_ps();
    if (gpu_active_ == 0 && idle_since_ps_ >= 0.0) {
        // The first operation after idle: the GPU wakes once, and whatever else comes while it
        // wakes waits for the same moment.
        const double idle = now - idle_since_ps_;
        const double wake = static_cast<double>(params_.runtime.idle_wake.ps) *
                            -std::expm1(-idle / static_cast<double>(params_.runtime.idle_wake_time.ps));
        awake_at_ps_ = now + wake;
        idle_since_ps_ = -1.0;
    }
    return std::max(now, awake_at_ps_);
}

void HostRuntime::gpu_work_ended() {
    DMASIM_ASSERT(gpu_active_ > 0);
    if (--gpu_active_ == 0) idle_since_ps_ = now_ps();
}

void HostRuntime::front_end() {
    while (ready_.due()) {
        dispatch(ready_.front());
        ready_.pop();
    }
    ready_.rearm();
}

void HostRuntime::dispatch(std::size_t i) {
    const int q = queue_[i];
    if (q < 0) {
        start_op(i);
        return;
    }
    const int ch = channel_[i];
    std::deque<std::size_t>& waiting = queue_waiting_[static_cast<std::size_t>(ch)][static_cast<std::size_t>(q)];
    DMASIM_ASSERT(!waiting.empty());
    if (waiting.front() != i) {
        held_[i] = 1;
        return;
    }
    // A wait holds its queue until it is over (op_finished moves the queue on).
    const bool wait = program_.ops[i].kind == Op::Kind::kWaitFor;
    if (!wait) waiting.pop_front();
    start_op(i);
    if (!wait) release_queue(ch, q);
}

void HostRuntime::release_queue(int channel, int q) {
    std::deque<std::size_t>& waiting = queue_waiting_[static_cast<std::size_t>(channel)][static_cast<std::size_t>(q)];
    if (waiting.empty() || !held_[waiting.front()]) return;
    const std::size_t next = waiting.front();
    held_[next] = 0;
    dispatch(next);
}

void HostRuntime::start_op(std::size_t i) {
    const Op& op = program_.ops[i];
    if (op.kind == Op::Kind::kWaitFor) {
        wait_for(i);
        return;
    }
    if (op.kind == Op::Kind::kRecord) {
        // Its stamp, which a wait on it sees too (wait_for): no sooner than the stream's release
        // before it has landed. Set first: a copy behind it waits for it (follow_ps).
        // An event without timing writes no timestamp: it neither waits for nor holds its stream.
        double& released = released_ps_[static_cast<std::size_t>(op.stream)];
        const double stamp = op.timed ? std::max(now_ps() + record_stamp_ps_[i], released + static_cast<double>(params_.runtime.release_spacing.ps))
                                      : now_ps() + record_stamp_ps_[i];
        if (op.timed) released = stamp;
        // Beside a copy of its GPU reading host memory (or writing the other GPU) the release
        // waits for it (isolating/handoff-behind-traffic): its stream and its waiters go when it
        // lands (land_release, later), its stamp stays.
        if (!hold_release(i, stamp)) op_finished(i);
        timings_[i].start_ps = timings_[i].end_ps = stamp - t0_ps_;
        return;
    }
    if (op.kind == Op::Kind::kCopy) {
        dispatched_[i] = 1;
        if (op.peer_gpu >= 0) {
            // Device to device: the engine writes into the peer (peer access), or reads the
            // peer's memory through its BAR (a card's window registered as I/O memory).
            CopyJob job;
            const bool reads = op.direction == CopyDirection::kHostToDevice;
            job.direction = reads ? CopyDirection::kHostToDevice : CopyDirection::kDeviceToHost;
            job.bytes = op.bytes;
            job.host_node = gpus_[static_cast<std::size_t>(op.peer_gpu)]->node_id();
            job.peer = !reads;
            job.semaphore_node = host_node_;
            job.request_bytes = op.request_bytes;
            submit_job(engine_for(op.gpu, job.direction), job, i);
        } else {
            submit_copy(op.gpu, op.direction, op.bytes, i, op.host_offset, in_stream_[i] && front_end_write(op.direction, op.bytes),
                        with_work_[i] && params_.runtime.command_fetch_bandwidth.bytes_per_s > 0.0);
        }
        if (!early_[i]) hand_on_behind(i);
        return;
    }
    if (op.kind == Op::Kind::kMappedKernel) {
        if (op.grid.blocks > 0 && blocks_that_fit(op.grid) == 0) {
            // Every SM is full: its first blocks start when a kernel gives room back (sms_freed).
            mapped_waiting_.push_back(i);
            return;
        }
        start_mapped(i);
        return;
    }
    DMASIM_ASSERT(op.kind == Op::Kind::kKernel);
    compute_queue_.push_back(i);
    if (!compute_busy_) {
        // Synthetic kernels run one after the other; each takes SM room for its grid (if it has one).
        compute_busy_ = true;
        gpu_work_started();
        const std::size_t k = compute_queue_.front();
        kernel_blocks_waiting_ = program_.ops[k].grid.blocks;
        const core::Duration latency = kernel_follows_[k] ? params_.runtime.queued_kernel_latency : params_.runtime.kernel_launch_latency;
        start_kernel_blocks(k, now_ps() + static_cast<double>(latency.ps));
    }
}

std::int64_t HostRuntime::blocks_that_fit(const Op::Grid& g) const {
    const std::int64_t wpb = std::max<std::int64_t>(1, g.warps_per_block);
    // Uses of less than one SM's room round to a whole block: kernels spread their blocks evenly.
    const auto free_blocks = static_cast<std::int64_t>(std::floor(static_cast<double>(params_.max_blocks_per_sm) - sm_blocks_used_ + 1e-9));
    const auto free_warps = static_cast<std::int64_t>(std::floor(static_cast<double>(params_.max_warps_per_sm) - sm_warps_used_ + 1e-9));
    std::int64_t per_sm = std::max<std::int64_t>(0, std::min(free_blocks, free_warps / wpb));
    // On idle SMs a block always fits (a grid larger than an SM's room runs a block at a time).
    if (sm_warps_used_ <= 1e-9 && sm_blocks_used_ <= 1e-9) per_sm = std::max<std::int64_t>(per_sm, 1);
    return params_.sms * per_sm;
}

void HostRuntime::take_sms(const Op::Grid& g, std::int64_t blocks, int sign) {
    const double per_sm = static_cast<double>(blocks) / static_cast<double>(params_.sms);
    sm_blocks_used_ = std::max(0.0, sm_blocks_used_ + sign * per_sm);
    sm_warps_used_ = std::max(0.0, sm_warps_used_ + sign * per_sm * static_cast<double>(g.warps_per_block));
}

void HostRuntime::start_kernel_blocks(std::size_t k, double start_ps) {
    const Op& op = program_.ops[k];
    std::int64_t n = 0;
    if (op.grid.blocks > 0) {
        n = std::min(kernel_blocks_waiting_, blocks_that_fit(op.grid));
        if (n == 0) return;  // no room: sms_freed() starts them
        kernel_blocks_waiting_ -= n;
        kernel_blocks_running_ += n;
        take_sms(op.grid, n, 1);
    }
    if (timings_[k].start_ps == 0.0) {
        ++launches_[static_cast<std::size_t>(channel_of_compute(op.gpu))];
        timings_[k].start_ps = start_ps - t0_ps_;
        // From its launch: the launch latency is short beside any kernel that streams memory.
        if (op.grid.streams_memory) gpus_[static_cast<std::size_t>(op.gpu)]->memory.set_streaming_kernels(1);
    }
    kernel_end_.push(start_ps + static_cast<double>(op.duration.ps), k);
    kernel_batches_.push_back(n);
}

void HostRuntime::sms_freed() {
    if (compute_busy_ && kernel_blocks_waiting_ > 0) start_kernel_blocks(compute_queue_.front(), now_ps());
    // Called whenever a kernel ends: nothing to look at in the usual case of no zero-copy kernel waiting.
    if (mapped_waiting_.empty()) return;
    std::vector<std::size_t> still;
    for (const std::size_t m : mapped_waiting_) {
        if (blocks_that_fit(program_.ops[m].grid) > 0) {
            start_mapped(m);
        } else {
            still.push_back(m);
        }
    }
    mapped_waiting_.swap(still);
}

void HostRuntime::start_mapped(std::size_t i) {
    const Op& op = program_.ops[i];
    ++launches_[static_cast<std::size_t>(channel_of_compute(op.gpu))];
    Op::MappedTraffic m = op.mapped;
    if (op.grid.blocks > 0) {
        // What of its grid fits beside the kernels running: its warps, and so the loads they keep
        // in flight and the SMs that store, in proportion to the blocks resident alone.
        const std::int64_t alone = std::max<std::int64_t>(1, op.grid.resident_alone);
        const std::int64_t resident = std::min<std::int64_t>({op.grid.blocks, blocks_that_fit(op.grid), alone});
        resident_blocks_[i] = resident;
        take_sms(op.grid, resident, 1);
        if (resident < alone) {
            const double share = static_cast<double>(resident) / static_cast<double>(alone);
            const auto scaled = [share](std::uint64_t v) { return std::max<std::uint64_t>(1, static_cast<std::uint64_t>(std::llround(static_cast<double>(v) * share))); };
            m.loop.warps = static_cast<std::uint32_t>(scaled(m.loop.warps));
            m.loop.round_bytes = scaled(m.loop.round_bytes);
            if (m.warp_reads > 0) m.reads_in_flight = static_cast<std::uint32_t>(std::min<std::uint64_t>(m.reads_in_flight, scaled(m.warp_reads)));
            const double sms_with_blocks = static_cast<double>(std::min<std::int64_t>(resident, params_.sms));
            m.loop.store_bytes_per_s *= sms_with_blocks / static_cast<double>(std::min<std::int64_t>(op.grid.blocks, params_.sms));
        }
    }
    // The kernel's loads and stores run concurrently; it ends when both are done.
    CopyJob job;
    job.host_node = host_node_;
    job.semaphore_node = host_node_;
    job.release_on_gpu = true;
    job.request_bytes = m.request_bytes;
    job.max_outstanding = m.reads_in_flight;
    job.loop = m.loop;
    // Loads and stores both: each warp's store follows its load (CopyJob::stores).
    const bool exchange = m.read_bytes > 0 && m.write_bytes > 0 && m.loop.warps > 0;
    if (m.read_bytes > 0) {
        job.direction = CopyDirection::kHostToDevice;
        job.bytes = m.read_bytes;
        if (exchange) job.stores = &gpus_[static_cast<std::size_t>(op.gpu)]->engine(Gpu::kSmWriteUnit);
        submit_job(unit(op.gpu, Gpu::kSmReadUnit), job, i);
        job.stores = nullptr;
    }
    if (m.write_bytes > 0) {
        job.fed = exchange;
        job.direction = CopyDirection::kDeviceToHost;
        job.bytes = m.write_bytes;
        if (m.write_request_bytes > 0) job.request_bytes = m.write_request_bytes;
        job.write_spacing = m.write_spacing;
        job.host_line = m.host_line;
        submit_job(unit(op.gpu, Gpu::kSmWriteUnit), job, i);
    }
}

void HostRuntime::kernel_finished() {
    while (kernel_end_.due()) {
        const std::size_t k = kernel_end_.front();
        kernel_end_.pop();
        const std::int64_t batch = kernel_batches_.front();
        kernel_batches_.pop_front();
        if (batch > 0) {
            take_sms(program_.ops[k].grid, batch, -1);
            kernel_blocks_running_ -= batch;
        }
        if (kernel_blocks_running_ > 0 || kernel_blocks_waiting_ > 0) {
            // A batch of its blocks is done: the room goes to its blocks still waiting.
            sms_freed();
            continue;
        }
        compute_queue_.pop_front();
        if (program_.ops[k].grid.streams_memory) gpus_[static_cast<std::size_t>(program_.ops[k].gpu)]->memory.set_streaming_kernels(0);
        op_finished(k);
        if (!compute_queue_.empty()) {
            // A kernel queued behind another was launched while that one ran: it starts now.
            const std::size_t next = compute_queue_.front();
            kernel_blocks_waiting_ = program_.ops[next].grid.blocks;
            start_kernel_blocks(next, now_ps());
        } else {
            compute_busy_ = false;
            gpu_work_ended();
        }
        sms_freed();
    }
    kernel_end_.rearm();
}

bool HostRuntime::front_end_write(CopyDirection dir, std::uint64_t bytes) const {
    // 0B turns the path off, also for an empty copy.
    return dir == CopyDirection::kHostToDevice && params_.runtime.front_end_h2d_max.value > 0 &&
           bytes <= params_.runtime.front_end_h2d_max.value &&
           bytes <= params_.runtime.inline_h2d_max.value;
}

bool HostRuntime::inline_copy(const Op& op) const {
    return op.kind == Op::Kind::kCopy && !op.queued_by_runtime && op.peer_gpu < 0 &&
           op.direction == CopyDirection::kHostToDevice && op.bytes <= params_.runtime.inline_h2d_max.value;
}

core::Duration HostRuntime::call_time(const Op& op) const {
    const config::RuntimeParams& r = params_.runtime;
    if (op.queued_by_runtime) return op.staged_peer ? r.peer_staged_piece_call : core::Duration{};
    if (op.staged_peer) return r.peer_staged_call;
    // Between two GPUs with peer access the call is shorter than a copy within one GPU's.
    if (op.peer_call && op.peer_gpu >= 0 && op.peer_gpu != op.gpu) return r.peer_gpu_call;
    return op.peer_call ? r.peer_call : r.call_overhead;
}

double HostRuntime::handoff_ps(std::size_t done, std::size_t next) const {
    // The GPU that runs `next` learns of `done` by its front end: at once on the same GPU, by
    // polling a semaphore the other GPU releases in host memory otherwise.
    const bool same_gpu = program_.ops[done].gpu == program_.ops[next].gpu;
    return static_cast<double>((same_gpu ? params_.runtime.stream_wait_latency : params_.runtime.cross_device_wait).ps);
}

void HostRuntime::switch_device(const Op& op) {
    // Calls the application makes for a stream: cudaSetDevice first when they are for another GPU
    // than its last call. The runtime's own work and the CPU's own doings need no device.
    const bool call = op.kind == Op::Kind::kCopy || op.kind == Op::Kind::kKernel || op.kind == Op::Kind::kMappedKernel ||
                      op.kind == Op::Kind::kRecord || op.kind == Op::Kind::kWaitFor || op.kind == Op::Kind::kStagedCopy;
    if (!call || op.queued_by_runtime || op.gpu == cpu_device_) return;
    cpu_device_ = op.gpu;
    wait(to_sc(params_.runtime.set_device_call));
}

double cross_device_wait_pass(const config::RuntimeParams& r, double call_ps, double event_ps, double reached_ps) {
    if (event_ps + static_cast<double>(r.cross_device_seen.ps) <= call_ps) return std::max(reached_ps, call_ps);
    const double read = static_cast<double>(r.cross_device_read.ps);
    const auto period = static_cast<double>(r.poll_period.ps);
    double tried = call_ps;
    if (event_ps > call_ps + read) {
        tried = period > 0.0 ? call_ps + period * std::ceil((event_ps - call_ps - read) / period) : event_ps - read;
    }
    return std::max(reached_ps, tried) + static_cast<double>(r.cross_device_try.ps);
}

void HostRuntime::assign_channels() {
    const std::size_t n = program_.ops.size();
    channel_.assign(n, -1);
    for (std::size_t i = 0; i < n; ++i) {
        const Op& op = program_.ops[i];
        switch (op.kind) {
            case Op::Kind::kCopy:
            case Op::Kind::kStagedCopy: {
                if (op.kind == Op::Kind::kCopy && inline_copy(op) && front_end_write(op.direction, op.bytes)) {
                    channel_[i] = kFrontEnd;
                    break;
                }
                const CopyDirection dir = op.peer_gpu >= 0 ? CopyDirection::kDeviceToHost : op.direction;
                channel_[i] = channel_of_engine(engine_for(op.gpu, dir));
                break;
            }
            case Op::Kind::kKernel:
            case Op::Kind::kMappedKernel: channel_[i] = channel_of_compute(op.gpu); break;
            default: break;
        }
    }
    // A wait or an event record runs where its stream's work runs: on the channel of the
    // operation before it, or, first on its stream, of the one after it.
    // Set from the program before this runs: a gate kernel holds stream 0 until the gate opens.
    const bool gated = gate_closed_;
    for (std::size_t i = 0; i < n; ++i) {
        const Op& op = program_.ops[i];
        if (op.kind != Op::Kind::kWaitFor && op.kind != Op::Kind::kRecord) continue;
        int before = -1, after = -1;
        for (std::size_t j = i; j-- > 0;) {
            if (program_.ops[j].stream == op.stream && channel_[j] >= 0) {
                before = channel_[j];
                break;
            }
        }
        for (std::size_t j = i + 1; j < n && before < 0; ++j) {
            if (program_.ops[j].stream == op.stream && channel_[j] >= 0 && program_.ops[j].kind != Op::Kind::kWaitFor &&
                program_.ops[j].kind != Op::Kind::kRecord) {
                after = channel_[j];
                break;
            }
        }
        // First on stream 0 of a gated program, it follows the gate kernel on the compute channel.
        if (before < 0 && op.stream == 0 && gated) after = -1;
        channel_[i] = before >= 0 ? before : after >= 0 ? after : channel_of_compute(op.gpu);
    }
    after_other_gpu_.assign(n, 0);
    record_behind_copy_.assign(n, 0);
    behind_kernel_.assign(n, 0);
    kernel_follows_.assign(n, 0);
    std::vector<int> last_gpu;  // per stream: the GPU of its latest work (-1: none yet)
    std::vector<char> last_copy;  // per stream: its latest operation but records is a copy
    std::vector<int> last_kernel_gpu;  // per stream: its latest operation but records is a kernel, of this GPU (-1: not)
    for (std::size_t i = 0; i < n; ++i) {
        const Op& op = program_.ops[i];
        const auto s = static_cast<std::size_t>(op.stream);
        if (last_copy.size() <= s) last_copy.resize(s + 1, 0);
        if (last_kernel_gpu.size() <= s) last_kernel_gpu.resize(s + 1, -1);
        if (op.kind == Op::Kind::kRecord) {
            record_behind_copy_[i] = last_copy[s];
            continue;
        }
        last_copy[s] = op.kind == Op::Kind::kCopy;
        behind_kernel_[i] = op.kind == Op::Kind::kKernel && last_kernel_gpu[s] == op.gpu;
        last_kernel_gpu[s] = op.kind == Op::Kind::kKernel ? op.gpu : -1;
        if (op.kind != Op::Kind::kCopy && op.kind != Op::Kind::kKernel && op.kind != Op::Kind::kMappedKernel) continue;
        if (last_gpu.size() <= s) last_gpu.resize(s + 1, -1);
        after_other_gpu_[i] = last_gpu[s] >= 0 && last_gpu[s] != op.gpu;
        last_gpu[s] = op.gpu;
    }
}

double HostRuntime::polled_ps(double tried, double done_ps) const {
    const auto period = static_cast<double>(params_.runtime.poll_period.ps);
    if (period <= 0.0 || done_ps <= tried) return std::max(tried, done_ps);
    return tried + period * std::ceil((done_ps - tried) / period);
}

// A channel fetches its stream's work ahead of the engine: a copy behind a copy on the same
// channel reaches the engine while the other runs, as the next copy of its queue, with no
// handoff between them (isolating/copy-records, pipeline.cu: 512 KiB pieces back to back take
// 12.11 us each on both hosts, where a handoff and an idle engine's launch would add 3-4 us).
// Records between them are stamped inline; a timed one's timestamp holds the copy behind it
// (runtime.release_spacing, start_next_on), an untimed one nothing.
bool HostRuntime::rides_behind(std::size_t before, std::size_t op) const {
    const Op& a = program_.ops[before];
    const Op& b = program_.ops[op];
    return a.kind == Op::Kind::kCopy && b.kind == Op::Kind::kCopy && a.gpu == b.gpu && channel_[before] == channel_[op] &&
           channel_[op] != kFrontEnd;
}

void HostRuntime::hand_on_behind(std::size_t op) {
    const StreamState& s = streams_[static_cast<std::size_t>(program_.ops[op].stream)];
    auto it = std::find(s.pending.begin(), s.pending.end(), op);
    if (it == s.pending.end()) return;
    std::size_t last = op;
    std::uint32_t timed_records = 0;
    for (++it; it != s.pending.end(); ++it) {
        if (program_.ops[*it].kind == Op::Kind::kRecord) {
            if (program_.ops[*it].timed) ++timed_records;
            continue;
        }
        if (!rides_behind(last, *it)) break;
        early_[*it] = 1;
        records_ridden_[*it] = timed_records;
        timed_records = 0;
        dispatch(*it);
        last = *it;
    }
}

double HostRuntime::follow_ps(std::size_t done, std::size_t next) const {
    const double now = now_ps();
    // Event records and waits are semaphore methods the channel runs inline: a record behind work
    // on its channel is stamped as that work ends, and work behind a wait its channel acquired
    // starts at once. What follows finished work (through a record or not) pays the channel's
    // handoff below (isolating/stream-handoffs, duplexphase: 2-3 us from a copy's end event to a
    // stop event behind a satisfied wait on the same stream).
    // A copy the front end writes itself is one of those methods too: a record behind it on its
    // stream is stamped as it ends (isolating/copy-release: a flag behind an 8 B copy into the
    // GPU lands 1.1 us before one behind an 8 B copy out of it, not a poll period after).
    const Op::Kind dk = program_.ops[done].kind, nk = program_.ops[next].kind;
    const bool inline_behind = channel_[done] == channel_[next] || (channel_[done] == kFrontEnd && nk == Op::Kind::kRecord &&
                                                                    program_.ops[done].stream == program_.ops[next].stream);
    if (program_.ops[done].gpu == program_.ops[next].gpu && inline_behind && (nk == Op::Kind::kRecord || dk == Op::Kind::kWaitFor)) {
        return now;
    }
    // A kernel behind a kernel on its stream (records between them aside) was fetched while that
    // one ran: it starts runtime.queued_kernel_latency after it, with no handoff (start_op).
    if (kernel_follows_[next]) return now;
    // A copy right behind a record on its stream waits besides for the record's release to land
    // (runtime.record_follow, isolating/release-spacing); the record's stamp is its stream's latest.
    const bool behind_record = dk == Op::Kind::kRecord && program_.ops[done].timed && nk == Op::Kind::kCopy &&
                               program_.ops[done].stream == program_.ops[next].stream && program_.ops[done].gpu == program_.ops[next].gpu;
    const double landed = behind_record ? released_ps_[static_cast<std::size_t>(program_.ops[next].stream)] +
                                              static_cast<double>(params_.runtime.record_follow.ps)
                                        : 0.0;
    return std::max(landed, [&] {
        if (program_.ops[done].gpu != program_.ops[next].gpu || channel_[done] == channel_[next] || channel_[next] == kFrontEnd) {
            return now + handoff_ps(done, next);
        }
        // `next`'s channel reached it once it was issued and `done` had been handed out, and has
        // retried its semaphore since; issued only now, it finds `done` finished.
        const double handed = handed_ps_[done] >= 0.0 ? handed_ps_[done] : t0_ps_ + timings_[done].start_ps;
        const double tried = std::max(enqueued_ps_[next], handed);
        if (tried >= now || params_.runtime.poll_period.ps == 0) return now + handoff_ps(done, next);
        return polled_ps(tried, now);
    }());
}

void HostRuntime::wait_cpu_seen(double seen_ps) {
    if (const double now = now_ps(); now < seen_ps) wait(ps_delay(seen_ps - now));
}

bool HostRuntime::hold_release(std::size_t op, double stamp_ps) {
    const double most = static_cast<double>(params_.runtime.busy_release_spacing.ps) -
                        static_cast<double>(params_.runtime.release_spacing.ps);
    if (most <= 0.0) return false;
    // Work its channel handed out already behind it (a copy riding behind the copy before it)
    // runs on regardless: the record then is not held (its stream's order stays).
    const StreamState& s = streams_[static_cast<std::size_t>(program_.ops[op].stream)];
    if (std::any_of(s.pending.begin(), s.pending.end(), [&](std::size_t x) { return x != op && early_[x]; })) return false;
    HeldRelease h{op, {}};
    bool any = false;
    const int gpu = program_.ops[op].gpu;
    for (int u = 0; u < Gpu::kUnits; ++u) {
        const EngineState& e = engines_[unit(gpu, u)];
        h.jobs[static_cast<std::size_t>(u)] = e.busy && e.fencing ? e.job : 0;
        any = any || h.jobs[static_cast<std::size_t>(u)] != 0;
    }
    if (!any) return false;
    release_held_[op] = 1;
    held_releases_.push_back(h);
    // At the latest: the reads a long copy keeps in flight take this long.
    wait_end_.push(stamp_ps + most, op);
    return true;
}

void HostRuntime::land_release(std::size_t op) {
    if (finished_[op]) return;
    landed_ps_[op] = now_ps();
    // The next record on its stream follows the landing, release_spacing on.
    double& released = released_ps_[static_cast<std::size_t>(program_.ops[op].stream)];
    released = std::max(released, now_ps());
    const OpTiming stamp = timings_[op];
    op_finished(op);
    timings_[op] = stamp;
    held_releases_.erase(std::remove_if(held_releases_.begin(), held_releases_.end(),
                                        [op](const HeldRelease& h) { return h.op == op; }),
                         held_releases_.end());
}

double HostRuntime::seen_ps(std::size_t op, double stamp_ps) const {
    return record_behind_copy_[op] ? stamp_ps + static_cast<double>(params_.runtime.release_seen_lag.ps) : stamp_ps;
}

void HostRuntime::wait_for(std::size_t i) {
    const std::size_t after = program_.ops[i].after;
    timings_[i].start_ps = now_ps() - t0_ps_;
    if (!finished_[after]) {
        waiters_[after].push_back(i);
        return;
    }
    // A held record is seen once its release has landed, and never before its stamp.
    const double stamp = t0_ps_ + timings_[after].end_ps;
    const double event = release_held_[after] ? std::max(landed_ps_[after], stamp) : stamp;
    if (program_.ops[after].gpu != program_.ops[i].gpu) {
        // Done already: the wait's channel found it at a try of its own (perhaps one made while
        // the work before the wait on its stream ran). The runtime's own waits inside a staged
        // copy acquire the other GPU's semaphore as they are reached.
        const double acquired = now_ps() + static_cast<double>(params_.runtime.cross_device_acquire.ps);
        wait_end_.push(program_.ops[i].queued_by_runtime ? std::max(acquired, event + handoff_ps(after, i))
                                                         : cross_device_wait_pass(params_.runtime, enqueued_ps_[i], event, now_ps()),
                       i);
        return;
    }
    // A channel that reached the wait by polling another channel's semaphore (the gate released
    // it at a poll) found the event there: the poll was its handoff.
    const bool polled = channel_[after] != channel_[i] && params_.runtime.poll_period.ps > 0;
    // Seen only later (release_seen_lag): its channel, which tried as it reached the wait, tries
    // again on its poll.
    const double visible = channel_[after] != channel_[i] ? seen_ps(after, event) : event;
    const double seen = polled ? (visible > now_ps() ? polled_ps(now_ps(), visible) : event) : visible + handoff_ps(after, i);
    wait_end_.push(std::max(now_ps(), seen), i);
}

void HostRuntime::wait_finished() {
    while (wait_end_.due()) {
        const std::size_t k = wait_end_.front();
        wait_end_.pop();
        if (program_.ops[k].kind == Op::Kind::kRecord) {
            land_release(k);
        } else {
            op_finished(k);
        }
    }
    wait_end_.rearm();
}

std::uint32_t HostRuntime::submit_copy(int gpu, CopyDirection dir, std::uint64_t bytes, std::size_t op,
                                       std::uint64_t host_offset, bool front_end, bool with_work, std::uint64_t held_bytes) {
    CopyJob job;
    job.direction = dir;
    job.bytes = bytes;
    job.held_bytes = dir == CopyDirection::kDeviceToHost ? std::min(held_bytes, bytes) : 0;
    if (with_work) {
        // The front end read the data from the command stream as it fetched the work, at its own
        // rate; a copy engine then writes it into GPU memory through the L2.
        job.fetch_ps = static_cast<std::uint64_t>(
            std::llround(static_cast<double>(bytes) / params_.runtime.command_fetch_bandwidth.bytes_per_s * 1e12));
        job.fetched_bytes = bytes;
        job.writes_fetched = !front_end;
    }
    if (front_end || with_work) {
        // The data came with the commands, which the front end read from host memory: what is
        // left to go over the link is the semaphore, after the work fetch (dma.launch_latency).
        static_cast<void>(host_memory.access(false, bytes));
        job.direction = CopyDirection::kDeviceToHost;
        job.bytes = 0;
    }
    job.into_host_memory = dir == CopyDirection::kDeviceToHost && !front_end && !with_work;
    job.stream = op == kNoOp ? -1 : program_.ops[op].stream;
    // The application's stream is the engine's channel; the runtime's own pieces (a pageable
    // copy's, a staged peer copy's, however the model spreads them over streams) are one.
    if (!front_end && !with_work) {
        job.runtime_piece = op == kNoOp || program_.ops[op].staged_way >= 0;
        job.channel = job.runtime_piece ? kRuntimeChannel : program_.ops[op].stream;
    }
    job.host_kib = static_cast<std::uint32_t>(std::min<std::uint64_t>(host_offset >> 10, UINT32_MAX));
    job.host_node = host_node_;
    job.semaphore_node = host_node_;
    submit_job(engine_for(gpu, dir), job, op);
    // Every copy's semaphore but that of one whose engine read its data from host memory: the
    // CPU sees it done runtime.cpu_seen_lag late.
    job_seen_late_.back() = job.direction == CopyDirection::kDeviceToHost ? 1 : 0;
    return next_job_id_ - 1;
}

void HostRuntime::submit_job(std::size_t engine, CopyJob job, std::size_t op) {
    job.id = next_job_id_++;
    // A copy that depends on another GPU's work and waits behind a busy engine finds that work
    // done when its channel reaches it: the channel still acquires the semaphore first. One that
    // starts at once was handed over when the work ended (runtime.cross_device_wait).
    if (op != kNoOp && after_other_gpu_[op] && engines_[engine].busy) {
        job.acquire_ps = static_cast<std::uint64_t>(params_.runtime.cross_device_acquire.ps);
    }
    job.queued = engines_[engine].busy;
    job_op_.push_back(op);
    job_engine_.push_back(engine);
    job_done_.push_back(false);
    job_let_go_.push_back(0);
    job_runtime_piece_.push_back(job.runtime_piece ? 1 : 0);
    job_seen_late_.push_back(0);
    job_seen_at_ps_.push_back(0.0);
    if (op != kNoOp) ++jobs_left_[op];
    gpu_work_started();
    engines_[engine].queue.push_back(job);
    if (!engines_[engine].busy) start_next_on(engine);
}

void HostRuntime::start_next_on(std::size_t engine) {
    EngineState& e = engines_[engine];
    if (e.queue.empty()) {
        e.busy = false;
        e.fencing = false;
        e.reads_host = false;
        e.job = 0;
        return;
    }
    e.busy = true;
    CopyJob job = e.queue.front();
    e.queue.pop_front();
    // While another staged peer copy's first piece enters this GPU, a copy starts late here, its
    // own pieces but (isolating/staged-loss: a probe on that GPU's idle stream 5.3-5.4 us late).
    if (const std::size_t o = job_op_[job.id - first_job_id_]; o != kNoOp && !staged_ways_.empty()) {
        const int gpu = static_cast<int>(engine / Gpu::kUnits);
        const int own = program_.ops[o].staged_way;
        for (std::size_t w = 0; w < staged_ways_.size(); ++w) {
            const StagedWay& way = staged_ways_[w];
            if (static_cast<int>(w) != own && way.to == gpu && way.entering_since_ps >= 0.0 && !way.entered) {
                job.acquire_ps += static_cast<std::uint64_t>(params_.runtime.staged_entry_hold.ps);
                timings_[o].entry_held_ps += static_cast<double>(params_.runtime.staged_entry_hold.ps);
                break;
            }
        }
    }
    // An engine turning to another channel's copy, idle or busy (dma.channel_turn, isolating/engine-turn).
    if (job.channel != CopyJob::kNoTurn) {
        if (e.last_channel != CopyJob::kNoTurn && e.last_channel != job.channel) {
            job.turn_ps = static_cast<std::uint64_t>(params_.dma_channel_turn.ps);
        }
        e.last_channel = job.channel;
    }
    const std::size_t op = job_op_[job.id - first_job_id_];
    // An application's copy into the GPU queued behind the one before it on its engine: where
    // another channel of the GPU launched work since that one started, the front end turns back to
    // this channel first (gpu.front_end_turn; isolating/duplex-burst, chainfront and chainturn).
    const int gpu = static_cast<int>(engine / Gpu::kUnits);
    const std::uint64_t others = launches_beside(gpu, engine);
    if (job.direction == CopyDirection::kHostToDevice && job.host_node == host_node_ && job.channel >= 0 && op != kNoOp &&
        job.queued && e.started) {
        const auto turns = static_cast<double>(others - e.others_at_start);
        job.acquire_ps += static_cast<std::uint64_t>(std::min(turns * static_cast<double>(params_.gpu_front_end_turn.ps),
                                                              static_cast<double>(params_.gpu_front_end_turn_max.ps)));
    }
    // Whether the copy's channel still fetches work queued behind it (gpu.fetch_window): the engine
    // then holds after a copy into host memory dma.host_write_hold_fetching, not
    // dma.host_write_hold (it applies either itself). Only a copy queued behind one of its own
    // stream is held at all, so only such a copy counts what waits behind it.
    job.fetching = job.queued && job.stream == e.last_stream && op != kNoOp &&
                   static_cast<std::int64_t>(queued_behind(op)) > params_.gpu_fetch_window;
    // The engine's hold after a copy into host memory, while another engine of the GPU reads host
    // memory (dma.host_write_hold_beside_reads): what it holds beyond the hold the engine applies;
    // not where it waited for a release to land (let_go).
    if (job.queued && e.last_into_host && job.stream == e.last_stream && reading_beside(gpu, engine)) {
        const auto own = job.fetching ? params_.dma_host_write_hold_fetching.ps : params_.dma_host_write_hold.ps;
        const auto more = params_.dma_host_write_hold_beside_reads.ps - own;
        if (more > 0) job.acquire_ps += static_cast<std::uint64_t>(more);
    }
    // A copy riding behind timed event records on its stream: each record's timestamp holds the
    // channel runtime.release_spacing after the copy before it ended, as it holds a record right
    // behind it (isolating/record-cost: 1.27-1.39 us a record between copies of 4-128 KiB either
    // way on the H100's kind of host, records 1.25-1.28 apart; 2.92-3.01 on the 2xH200, records
    // 2.85-3.04 apart). A copy its channel hands to an idle engine waits runtime.record_follow
    // instead (follow_ps), part of which its engine's start hides on the 2xH200.
    if (job.queued && op != kNoOp && records_ridden_[op] > 0) {
        job.acquire_ps += static_cast<std::uint64_t>(static_cast<std::int64_t>(records_ridden_[op]) * params_.runtime.release_spacing.ps);
    }
    e.last_stream = job.stream;
    e.last_into_host = job.into_host_memory;
    e.started = true;
    e.others_at_start = others;
    ++launches_[static_cast<std::size_t>(channel_of_engine(engine))];
    e.fencing = job.peer || (job.direction == CopyDirection::kHostToDevice && job.host_node == host_node_);
    e.reads_host = job.direction == CopyDirection::kHostToDevice && job.host_node == host_node_ && job.bytes > 0;
    e.job = job.id;
    if (op != kNoOp && timings_[op].start_ps == 0.0) timings_[op].start_ps = now_ps() - t0_ps_;
    gpus_[engine / Gpu::kUnits]->engine(static_cast<int>(engine % Gpu::kUnits)).start(job);
}

std::size_t HostRuntime::queued_behind(std::size_t op) const {
    const std::deque<std::size_t>& pending = streams_[static_cast<std::size_t>(program_.ops[op].stream)].pending;
    const auto it = std::find(pending.begin(), pending.end(), op);
    return it == pending.end() ? 0 : static_cast<std::size_t>(pending.end() - it - 1);
}

bool HostRuntime::reading_beside(int gpu, std::size_t engine) const {
    for (int u = 0; u < Gpu::kMaxEngines; ++u) {
        const std::size_t other = unit(gpu, u);
        if (other != engine && engines_[other].busy && engines_[other].reads_host) return true;
    }
    return false;
}

std::uint64_t HostRuntime::launches_beside(int gpu, std::size_t engine) const {
    const auto first = static_cast<std::size_t>(gpu * (Gpu::kUnits + 1));
    const auto own = static_cast<std::size_t>(channel_of_engine(engine));
    std::uint64_t n = 0;
    for (std::size_t c = first; c < first + Gpu::kUnits + 1; ++c) {
        if (c != own) n += launches_[c];
    }
    return n;
}

void HostRuntime::semaphore_written(std::uint32_t job) {
    DMASIM_ASSERT(job >= first_job_id_ && job - first_job_id_ < job_op_.size());
    const std::size_t idx = job - first_job_id_;
    job_done_[idx] = true;
    // Releases held behind this copy land once every copy they wait for has ended.
    for (std::size_t h = 0; h < held_releases_.size();) {
        HeldRelease& r = held_releases_[h];
        bool left = false;
        for (std::uint32_t& j : r.jobs) {
            if (j == job) j = 0;
            left = left || j != 0;
        }
        if (!left) {
            const std::size_t op = r.op;
            land_release(op);  // erases it
            continue;
        }
        ++h;
    }
    job_seen_at_ps_[idx] = now_ps() + (job_seen_late_[idx] ? static_cast<double>(params_.runtime.cpu_seen_lag.ps) : 0.0);
    cpu_sees_after_ps_ = std::max(cpu_sees_after_ps_, job_seen_at_ps_[idx]);
    if (const std::size_t o = job_op_[idx]; o != kNoOp) op_seen_at_ps_[o] = std::max(op_seen_at_ps_[o], job_seen_at_ps_[idx]);
    EngineState& engine = engines_[job_engine_[idx]];
    if (job_let_go_[idx]) {
        // Its engine went on already; the copy it runs now, if its release waits too, may let it
        // go on again now that one fewer does.
        --engine.held;
        if (engine.current_held) let_go(job_engine_[idx], true);
    } else {
        engine.current_held = false;
        start_next_on(job_engine_[idx]);
    }
    const std::size_t op = job_op_[idx];
    if (op != kNoOp && --jobs_left_[op] == 0) op_finished(op);
    gpu_work_ended();
    progress_event_.notify(zero_delay());
}

// dma.held_releases: a copy's release waits at the root port for the reads ahead of it
// (RootComplex::release_held); the engine waits for it to land, but only dma.release_wait_max, and
// then takes its next copy if fewer than held_releases of its releases wait already, else once the
// oldest has landed. The engine's gap between copies beside reads is one length whatever is ahead
// of the release (isolating/duplex-burst, chainland mid): a wait that gives up, not one that drains.
void HostRuntime::semaphore_held(std::uint32_t job) {
    DMASIM_ASSERT(job >= first_job_id_ && job - first_job_id_ < job_op_.size());
    const std::size_t engine = job_engine_[job - first_job_id_];
    EngineState& e = engines_[engine];
    if (e.job != job || params_.dma_held_releases == 0) return;
    e.current_held = true;
    if (params_.dma_release_wait_max.ps > 0) {
        release_wait_end_.push(now_ps() + static_cast<double>(params_.dma_release_wait_max.ps), job);
        return;
    }
    let_go(engine, false);
}

void HostRuntime::release_wait_over() {
    while (release_wait_end_.due()) {
        const std::uint32_t job = release_wait_end_.front();
        release_wait_end_.pop();
        const std::size_t engine = job_engine_[job - first_job_id_];
        // Landed meanwhile, its engine has gone on already.
        if (engines_[engine].job == job && engines_[engine].current_held) let_go(engine, false);
    }
    release_wait_end_.rearm();
}

// The runtime's own pieces (a staged peer copy's, a pageable copy's) release without the flush that
// makes an application's copy wait at the root port for the reads ahead of it: a staged copy both
// ways whose second call comes 0.5-4 us later loses 1-2 us, where that wait would cost it one
// piece's window of the other way's reads, about 9 us (isolating/staged-both, bothlate).
bool HostRuntime::release_waits_for_reads(std::uint32_t job) const {
    DMASIM_ASSERT(job >= first_job_id_ && job - first_job_id_ < job_op_.size());
    return job_runtime_piece_[job - first_job_id_] == 0;
}

void HostRuntime::let_go(std::size_t engine, bool after_landing) {
    EngineState& e = engines_[engine];
    if (e.held >= params_.dma_held_releases) return;
    ++e.held;
    e.current_held = false;
    job_let_go_[e.job - first_job_id_] = 1;
    // An engine stopped until an earlier release landed has waited for the reads ahead already: it
    // goes on without dma.host_write_hold_beside_reads.
    if (after_landing) e.last_into_host = false;
    start_next_on(engine);
}

void HostRuntime::op_finished(std::size_t i) {
    timings_[i].end_ps = now_ps() - t0_ps_;
    finished_[i] = true;
    for (StagedWay& way : staged_ways_) {
        if (i == way.first_down) way.entering_since_ps = now_ps();
        if (i == way.first_up) way.entered = true;
    }
    if (resident_blocks_[i] > 0) {
        take_sms(program_.ops[i].grid, resident_blocks_[i], -1);
        resident_blocks_[i] = 0;
        sms_freed();
    }
    if (const int q = queue_[i]; q >= 0) {
        const auto c = static_cast<std::size_t>(channel_[i]);
        --queue_unfinished_[c][static_cast<std::size_t>(q)];
        --stream_unfinished_[static_cast<std::size_t>(program_.ops[i].stream)][c];
        if (program_.ops[i].kind == Op::Kind::kWaitFor) {
            std::deque<std::size_t>& waiting = queue_waiting_[c][static_cast<std::size_t>(q)];
            DMASIM_ASSERT(!waiting.empty() && waiting.front() == i);
            waiting.pop_front();
            release_queue(channel_[i], q);
        }
    }
    StreamState& s = streams_[static_cast<std::size_t>(program_.ops[i].stream)];
    DMASIM_ASSERT(!s.pending.empty() && s.pending.front() == i);
    s.pending.pop_front();
    if (s.pending.empty()) {
        s.running = false;
    } else if (!early_[s.pending.front()]) {
        const std::size_t next = s.pending.front();
        kernel_follows_[next] = behind_kernel_[next] && (program_.ops[i].kind == Op::Kind::kKernel || program_.ops[i].kind == Op::Kind::kRecord);
        ready_.push(follow_ps(i, next), next);
    }
    for (const std::size_t w : waiters_[i]) {
        // A wait on the same GPU has tried its semaphore since its stream reached it; one on
        // another GPU's work since its call, reading that GPU's semaphore (cross_device_wait_pass).
        const double reached = t0_ps_ + timings_[w].start_ps;
        if (program_.ops[i].gpu != program_.ops[w].gpu) {
            // The runtime's own waits inside a staged copy learn of it a handoff later
            // (runtime.cross_device_wait).
            wait_end_.push(program_.ops[w].queued_by_runtime ? now_ps() + handoff_ps(i, w)
                                                             : cross_device_wait_pass(params_.runtime, enqueued_ps_[w], now_ps(), reached),
                           w);
            continue;
        }
        const bool polled = params_.runtime.poll_period.ps > 0;
        const double visible = channel_[i] != channel_[w] ? seen_ps(i, now_ps()) : now_ps();
        wait_end_.push(polled ? polled_ps(reached, visible) : visible + handoff_ps(i, w), w);
    }
    waiters_[i].clear();
    progress_event_.notify(zero_delay());
}

double HostRuntime::cold_share() const {
    const double tau = static_cast<double>(params_.cpu.cache_cooling_time.ps);
    if (tau <= 0.0 || cpu_copy_end_ps_ < 0.0) return 0.0;
    return -std::expm1(-(now_ps() - cpu_copy_end_ps_) / tau);
}

void HostRuntime::cpu_copy(std::uint64_t bytes, bool source_cached, bool destination_in_dram, double cold, bool out_of_staging,
                           bool zero_page_source, bool unaligned_destination) {
    // One thread copies at its own rate, and its DRAM traffic queues with the DMA's in the
    // memory controller; whichever is slower sets the pace. What went cold while the CPU did not
    // copy (source lines, the staging buffers, their translations) comes back at the cold rate,
    // never faster than the warm one. The zero page is a source in the core's own cache, never
    // slower than one in the last-level cache.
    const double start = now_ps();
    const double warm_rate = out_of_staging     ? params_.cpu.copy_out_bytes_per_s()
                             : zero_page_source ? std::max(params_.cpu.zero_page_bandwidth.bytes_per_s, params_.cpu.memcpy_bandwidth_cached.bytes_per_s)
                                                : (source_cached ? params_.cpu.memcpy_bandwidth_cached : params_.cpu.memcpy_bandwidth).bytes_per_s;
    const double cold_rate = std::min(warm_rate, params_.cpu.memcpy_bandwidth_cold.bytes_per_s);
    const double unaligned_rate = params_.pageable.unaligned_pass_bandwidth.bytes_per_s;
    const double pass = unaligned_destination && unaligned_rate > 0.0 ? 1.0 / unaligned_rate : 0.0;
    const double ps_per_byte = ((1.0 - cold) / warm_rate + cold / cold_rate + pass) * 1e12;
    std::uint64_t left = bytes;
    while (left > 0) {
        const std::uint64_t n = std::min(left, kCpuCopyGranule);
        left -= n;
        const double cpu_ps = static_cast<double>(n) * ps_per_byte;
        double dram_ps = 0.0;
        if (!source_cached) {
            dram_ps = static_cast<double>(host_memory.access(false, n).value());
        } else if (cold > 0.0) {
            const auto from_dram = static_cast<std::uint64_t>(std::llround(cold * static_cast<double>(n)));
            if (from_dram > 0) dram_ps = static_cast<double>(host_memory.access(false, from_dram).value());
        }
        if (destination_in_dram) dram_ps = std::max(dram_ps, static_cast<double>(host_memory.access(true, n).value()));
        wait(ps_delay(std::max(cpu_ps, dram_ps)));
    }
    cpu_copy_end_ps_ = now_ps();
    if (Tracer* tr = Tracer::active()) {
        tr->span(tr->track("cpu", "memcpy"), "memcpy " + core::to_string(core::Bytes{bytes}), start, now_ps());
    }
}

namespace {
std::string copy_direction_label(CopyDirection d) {
    switch (d) {
        case CopyDirection::kHostToDevice: return " H2D";
        case CopyDirection::kDeviceToHost: return " D2H";
    }
    return "";
}

const char* op_name(const Op& op) {
    switch (op.kind) {
        case Op::Kind::kCopy: return op.peer_gpu >= 0 ? "cudaMemcpyPeer" : op.blocking ? "cudaMemcpy" : "cudaMemcpyAsync";
        case Op::Kind::kStagedCopy: return "cudaMemcpy (pageable)";
        case Op::Kind::kKernel: return "kernel";
        case Op::Kind::kCpuWork: return "CPU work";
        case Op::Kind::kReleaseAt: return "wait for release";
        case Op::Kind::kSynchronize: return "cudaDeviceSynchronize";
        case Op::Kind::kMappedKernel: return "zero-copy kernel";
        case Op::Kind::kCpuMapped: return "BAR access";
        case Op::Kind::kOpenGate: return "gate opens";
        case Op::Kind::kWaitFor: return "cudaStreamWaitEvent";
        case Op::Kind::kRecord: return "cudaEventRecord";
    }
    return "?";
}
}  // namespace

void HostRuntime::trace_program() {
    Tracer* tr = Tracer::active();
    if (tr == nullptr) return;
    const int cpu = tr->track("cpu", "application thread");
    for (std::size_t i = 0; i < program_.ops.size(); ++i) {
        const Op& op = program_.ops[i];
        const OpTiming& t = timings_[i];
        std::string size = op.bytes ? " " + core::to_string(core::Bytes{op.bytes}) : std::string();
        // Which way a copy goes, so that a timeline (scripts/plot-trace.py) can colour it.
        if (op.kind == Op::Kind::kCopy && op.peer_gpu < 0) size = copy_direction_label(op.direction) + size;
        const bool on_stream = op.kind == Op::Kind::kCopy || op.kind == Op::Kind::kKernel ||
                               op.kind == Op::Kind::kMappedKernel || op.kind == Op::Kind::kWaitFor ||
                               op.kind == Op::Kind::kRecord;
        if (on_stream) {
            // The call on the CPU (none for what the runtime queues itself), then the work on its stream.
            if ((!op.queued_by_runtime || op.staged_peer) && op.kind != Op::Kind::kWaitFor && op.kind != Op::Kind::kRecord) {
                const core::Duration call = call_time(op);
                tr->span(cpu, std::string(op_name(op)) + size, t0_ps_ + t.issued_ps, t0_ps_ + t.issued_ps + static_cast<double>(call.ps));
            }
            const int stream_track = tr->track("streams", "stream " + std::to_string(op.stream));
            tr->span(stream_track, std::string(op_name(op)) + size, t0_ps_ + t.start_ps, t0_ps_ + t.end_ps);
            // Inside it, what its engine held it back for (runtime.staged_entry_hold).
            if (t.entry_held_ps > 0.0) {
                tr->span(stream_track, "held: a staged copy's first piece entering", t0_ps_ + t.start_ps,
                         t0_ps_ + t.start_ps + t.entry_held_ps);
            }
            if (op.kind != Op::Kind::kCopy && op.kind != Op::Kind::kWaitFor && op.kind != Op::Kind::kRecord) {
                tr->span(tr->track(gpus_[static_cast<std::size_t>(op.gpu)]->basename(), "compute"), op_name(op),
                         t0_ps_ + t.start_ps, t0_ps_ + t.end_ps);
            }
        } else {
            tr->span(cpu, std::string(op_name(op)) + size, t0_ps_ + t.issued_ps, t0_ps_ + t.end_ps);
        }
    }
}

void HostRuntime::cpu_write_left() {
    --wc_in_flight_;
    progress_event_.notify(zero_delay());
}

void HostRuntime::cpu_read_done() {
    --reads_in_flight_;
    progress_event_.notify(zero_delay());
}

void HostRuntime::cpu_mapped(std::size_t i) {
    // gdrcopy style: the thread itself moves the data through a mapping of GPU memory. Stores
    // fill write-combining buffers that leave as 64-byte posted writes; loads are uncached and
    // each waits for its completion.
    const Op& op = program_.ops[i];
    DMASIM_ASSERT(root_complex_ != nullptr);
    timings_[i].start_ps = now_ps() - t0_ps_;
    Tlp t;
    t.requester = host_node_;
    t.completer = gpus_[static_cast<std::size_t>(op.gpu)]->node_id();
    constexpr std::uint64_t kWcLine = 64;
    if (op.direction == CopyDirection::kHostToDevice) {
        t.kind = TlpKind::kMemWrite;
        const double line_ps = static_cast<double>(kWcLine) / params_.cpu.wc_bandwidth.bytes_per_s * 1e12;
        for (std::uint64_t done = 0; done < op.bytes; done += kWcLine) {
            while (wc_in_flight_ >= params_.cpu.wc_buffers) wait(progress_event_);
            wait(ps_delay(line_ps));
            t.payload = static_cast<std::uint32_t>(std::min(kWcLine, op.bytes - done));
            ++wc_in_flight_;
            root_complex_->inject(t);
        }
        while (wc_in_flight_ > 0) wait(progress_event_);  // sfence: the buffers have drained
    } else {
        t.kind = TlpKind::kMemRead;
        const std::uint64_t step = params_.cpu.mmio_read_bytes.value;
        std::uint32_t tag = 0;
        for (std::uint64_t done = 0; done < op.bytes; done += step) {
            while (reads_in_flight_ >= params_.cpu.mmio_reads_in_flight) wait(progress_event_);
            t.length = static_cast<std::uint32_t>(std::min(step, op.bytes - done));
            t.tag = 0xFFFF0000U | (tag++ & 0xFFFFU);
            ++reads_in_flight_;
            root_complex_->inject(t);
        }
        while (reads_in_flight_ > 0) wait(progress_event_);
    }
    timings_[i].end_ps = now_ps() - t0_ps_;
    finished_[i] = true;
}

void HostRuntime::staged_copy(std::size_t i) {
    const Op& op = program_.ops[i];
    timings_[i].start_ps = now_ps() - t0_ps_;
    const bool into_gpu = op.direction == CopyDirection::kHostToDevice;
    // Small enough, a copy into the GPU goes into the command stream whole, copied by the call as
    // a small pinned one is, and the front end reads it with the work (pageable.inline_max).
    const bool carried = into_gpu && op.bytes > 0 && op.bytes <= params_.pageable.inline_max.value &&
                         params_.runtime.command_fetch_bandwidth.bytes_per_s > 0.0;
    const std::uint64_t chunk = carried ? op.bytes : params_.pageable.piece(into_gpu);
    // The staging buffers hold as many pieces as fit in them: into the GPU each buffer goes to
    // the engine piece by piece as the CPU fills it (pageable.h2d_piece).
    const std::uint64_t staging = static_cast<std::uint64_t>(params_.pageable.bounce_buffers) * params_.pageable.bounce_size.value;
    const auto buffers = static_cast<std::size_t>(std::max<std::uint64_t>(1, staging / chunk));
    const std::uint64_t chunks = (op.bytes + chunk - 1) / chunk;
    auto chunk_bytes = [&](std::uint64_t k) { return std::min(chunk, op.bytes - k * chunk); };
    std::vector<std::uint32_t> job_of(chunks, 0);
    auto done = [&](std::uint64_t k) { return job_done_[job_of[k] - first_job_id_]; };
    // Whatever cooled since the CPU's last copy, the whole copy's data did (the user buffer and
    // every staging buffer were last touched then or before).
    const double cold = cold_share();
    // A never-touched user buffer faults each page in as the thread's copy first reaches it: a
    // source maps the zero page, a destination is allocated and zeroed. A source's fault is
    // measured against the same copy of a mapping whose pages already map the zero page, and the
    // staged copy then reads that one page from the core's cache at its own rate, whatever the size
    // (results/h100-sxm/isolating/zero-page); a destination's against pages the CPU had written
    // (isolating/page-faults), so its copy runs as it would there.
    const bool zero_source = into_gpu && op.fresh_pages && params_.cpu.zero_page_bandwidth.bytes_per_s > 0.0;
    // A destination off the runtime's alignment (a cache line) takes its slower way out of the
    // staging buffers (results/h100-sxm/isolating/offset-copy-out, unaligned-buffers); a source off
    // it costs a copy into the GPU nothing.
    const bool unaligned_destination = !into_gpu && op.page_offset % params_.pageable.copy_out_alignment.value != 0;
    const auto faults = [&](std::uint64_t bytes) {
        if (!op.fresh_pages) return;
        const std::uint64_t page = params_.cpu.page_size.value;
        const core::Duration per_page = into_gpu ? params_.cpu.first_touch_read : params_.cpu.first_touch_write;
        wait(ps_delay(static_cast<double>((bytes + page - 1) / page) * static_cast<double>(per_page.ps)));
    };
    if (op.direction == CopyDirection::kHostToDevice) {
        // Fill a piece of a bounce buffer (the user data comes from DRAM unless cached), hand it
        // to the copy engine, move on to the next; reuse a piece once its DMA is done.
        if (carried) {
            // One piece: the call's copy into the command stream, as for a small pinned copy. Its
            // pace is not the source's: from the zero page it costs what an old source does.
            faults(op.bytes);
            cpu_copy(op.bytes, false, true, cold);
            job_of[0] = submit_copy(op.gpu, op.direction, op.bytes, kNoOp, 0, front_end_write(op.direction, op.bytes), true);
        }
        for (std::uint64_t k = 0; k < chunks && !carried; ++k) {
            if (k >= buffers) {
                while (!done(k - buffers)) wait(progress_event_);
            }
            faults(chunk_bytes(k));
            cpu_copy(chunk_bytes(k), op.working_set_cached || zero_source, false, cold, false, zero_source);
            // With pageable.inline_max off, a copy the front end writes itself still goes whole.
            job_of[k] = submit_copy(op.gpu, op.direction, chunk_bytes(k), kNoOp, 0, front_end_write(op.direction, op.bytes));
        }
        while (!done(chunks - 1)) wait(progress_event_);
    } else {
        // The engine fills bounce buffers ahead; the thread waits for each, then copies it out
        // to the user's buffer, which goes to DRAM unless it fits in the cache. Each buffer was
        // last copied out of by this thread, whose core still holds its lines (cpu.core_cache,
        // shared with the destination's lines that copy wrote) unless they cooled since: the
        // engine's writes find them there (root_complex.held_write_bandwidth).
        const auto held = [&](std::uint64_t k) {
            const double kept = std::min(static_cast<double>(chunk_bytes(k)), 0.5 * static_cast<double>(params_.cpu.core_cache.value));
            return static_cast<std::uint64_t>(std::llround(kept * (1.0 - cold)));
        };
        for (std::uint64_t k = 0; k < std::min<std::uint64_t>(chunks, buffers); ++k) {
            job_of[k] = submit_copy(op.gpu, op.direction, chunk_bytes(k), kNoOp, 0, false, false, held(k));
        }
        for (std::uint64_t k = 0; k < chunks; ++k) {
            while (!done(k)) wait(progress_event_);
            wait_cpu_seen(job_seen_at_ps_[job_of[k] - first_job_id_]);
            wait(to_sc(params_.runtime.sync_latency));
            faults(chunk_bytes(k));
            cpu_copy(chunk_bytes(k), true, !op.working_set_cached, cold, true, false, unaligned_destination);
            if (k + buffers < chunks) {
                job_of[k + buffers] = submit_copy(op.gpu, op.direction, chunk_bytes(k + buffers), kNoOp, 0, false, false, held(k + buffers));
            }
        }
    }
    if (chunks > 0) wait_cpu_seen(job_seen_at_ps_[job_of[chunks - 1] - first_job_id_]);
    wait(to_sc(params_.runtime.sync_latency));
    timings_[i].end_ps = now_ps() - t0_ps_;
    finished_[i] = true;
}

}  // namespace dmasim::sim
