#include "dmasim/sim/root_complex.h"

#include <algorithm>

namespace dmasim::sim {

RootComplex::RootComplex(sc_core::sc_module_name name, const Params& params, std::uint16_t node_id,
                         const std::vector<std::uint16_t>& peers)
    : sc_core::sc_module(name), memory("memory"), params_(params), node_id_(node_id) {
    for (std::size_t i = 0; i < peers.size(); ++i) {
        const std::string n = "port" + std::to_string(i);
        auto port = std::make_unique<Port>(n, peers[i]);
        fw_.push_back(std::make_unique<FwPort<RootComplex>>(*this, static_cast<int>(i)));
        bw_.push_back(std::make_unique<BwPort<RootComplex>>(*this, static_cast<int>(i)));
        port->ingress.bind(*fw_.back());
        port->egress.bind(*bw_.back());
        ports.push_back(std::move(port));
        egress_.push_back(std::make_unique<EgressQueue>());
    }

    SC_METHOD(egress);
    sensitive << egress_event_;
    for (auto& q : egress_) sensitive << q->fifo.event();
    dont_initialize();
    SC_METHOD(release_writes);
    sensitive << write_release_.event();
    dont_initialize();
    SC_METHOD(release_reads);
    sensitive << read_release_.event();
    dont_initialize();
    SC_METHOD(notify_semaphores);
    sensitive << semaphores_.event();
    dont_initialize();
}

void RootComplex::configure(const Params& params, const config::LinkParams& link,
                            core::Duration host_memory_latency) {
    params_ = params;
    // Completions never exceed MPS and are cut at RCB multiples (spec).
    completion_bytes_ = static_cast<std::uint32_t>(std::min(params_.completion_size.value, link.mps.value));
    completion_bytes_ -= completion_bytes_ % static_cast<std::uint32_t>(link.rcb.value);
    memory_latency_ps_ = static_cast<double>(host_memory_latency.ps);
    stats_ = RootComplexStats{};
}

bool RootComplex::idle() const {
    return write_release_.empty() && read_release_.empty() && semaphores_.empty() &&
           std::all_of(egress_.begin(), egress_.end(), [](const auto& q) { return q->fifo.empty(); });
}

int RootComplex::port_towards(std::uint16_t node) const {
    for (std::size_t i = 0; i < ports.size(); ++i) {
        if (ports[i]->peer == node) return static_cast<int>(i);
    }
    SC_REPORT_ERROR(name(), "no port towards the requester of a read");
    return 0;
}

tlm::tlm_sync_enum RootComplex::port_fw(int port, Tlp& t, tlm::tlm_phase& phase, sc_core::sc_time&) {
    DMASIM_ASSERT(phase == tlm::BEGIN_REQ);
    const double now = now_ps();
    const sc_core::sc_time forward = to_sc(params_.forward_latency);
    switch (t.kind) {
        case TlpKind::kMemWrite: {
            stats_.writes++;
            const double done = now + static_cast<double>(memory.access(true, t.payload, forward).value());
            // The buffer is free when the controller has taken the data; it is visible a
            // memory latency later.
            write_release_.push(done - memory_latency_ps_, Release{port, t});
            if (t.semaphore) semaphores_.push(done, t.job);
            return tlm::TLM_ACCEPTED;
        }
        case TlpKind::kMemRead: {
            stats_.reads++;
            const double data_ready =
                now + static_cast<double>((memory.access(false, t.length, forward) + forward).value());
            read_release_.push(now + static_cast<double>(forward.value()), Release{port, t});
            EgressQueue& q = *egress_[static_cast<std::size_t>(port_towards(t.requester))];
            std::uint32_t remaining = t.length;
            while (remaining > 0) {
                Tlp c;
                c.kind = TlpKind::kCompletion;
                c.requester = t.requester;
                c.completer = node_id_;
                c.payload = std::min(remaining, completion_bytes_);
                c.tag = t.tag;
                c.job = t.job;
                remaining -= c.payload;
                c.last = remaining == 0;
                q.fifo.push(data_ready, c);
                stats_.completions++;
            }
            return tlm::TLM_ACCEPTED;
        }
        case TlpKind::kCompletion:
            SC_REPORT_ERROR(name(), "the root complex issued no reads, yet a completion arrived");
            return tlm::TLM_COMPLETED;
    }
    return tlm::TLM_COMPLETED;
}

tlm::tlm_sync_enum RootComplex::port_bw(int port, Tlp&, tlm::tlm_phase& phase, sc_core::sc_time&) {
    DMASIM_ASSERT(phase == tlm::END_REQ);
    egress_[static_cast<std::size_t>(port)]->link_ready = true;
    egress_event_.notify(sc_core::SC_ZERO_TIME);
    return tlm::TLM_COMPLETED;
}

void RootComplex::egress() {
    for (std::size_t i = 0; i < egress_.size(); ++i) {
        EgressQueue& q = *egress_[i];
        while (q.link_ready && q.fifo.due()) {
            Tlp t = q.fifo.front();
            q.fifo.pop();
            tlm::tlm_phase phase = tlm::BEGIN_REQ;
            sc_core::sc_time delay = sc_core::SC_ZERO_TIME;
            const tlm::tlm_sync_enum r = ports[i]->egress->nb_transport_fw(t, phase, delay);
            q.link_ready = (r == tlm::TLM_UPDATED && phase == tlm::END_REQ);
        }
        if (q.link_ready) q.fifo.rearm();
    }
}

void RootComplex::free_buffer(const Release& r) {
    Tlp t = r.tlp;
    tlm::tlm_phase phase = tlm::END_REQ;
    sc_core::sc_time delay = sc_core::SC_ZERO_TIME;
    ports[static_cast<std::size_t>(r.port)]->ingress->nb_transport_bw(t, phase, delay);
}

void RootComplex::release_writes() {
    while (write_release_.due()) {
        free_buffer(write_release_.front());
        write_release_.pop();
    }
    write_release_.rearm();
}

void RootComplex::release_reads() {
    while (read_release_.due()) {
        free_buffer(read_release_.front());
        read_release_.pop();
    }
    read_release_.rearm();
}

void RootComplex::notify_semaphores() {
    while (semaphores_.due()) {
        if (listener_ != nullptr) listener_->semaphore_written(semaphores_.front());
        semaphores_.pop();
    }
    semaphores_.rearm();
}

}  // namespace dmasim::sim
