#include "dmasim/sim/gpu.h"

#include <algorithm>

namespace dmasim::sim {

Gpu::Gpu(sc_core::sc_module_name name, std::uint16_t node_id, const config::ModelParams& params,
         const std::vector<std::uint16_t>& peers)
    : sc_core::sc_module(name), memory("memory", params.gpu_memory), bar("bar"), node_id_(node_id) {
    bar.bind(memory);
    for (std::size_t i = 0; i < peers.size(); ++i) {
        ports.push_back(std::make_unique<Port>("port" + std::to_string(i), peers[i]));
        fw_.push_back(std::make_unique<FwPort<Gpu>>(*this, static_cast<int>(i)));
        bw_.push_back(std::make_unique<BwPort<Gpu>>(*this, static_cast<int>(i)));
        ports.back()->ingress.bind(*fw_.back());
        ports.back()->egress.bind(*bw_.back());
    }
    link_ready_.assign(peers.size(), 1);
    ready_ports_ = peers.size();
    for (int i = 0; i < kUnits; ++i) {
        const std::string n = i == kSmReadUnit ? "sm_reads" : i == kSmWriteUnit ? "sm_writes" : "ce" + std::to_string(i);
        engines.push_back(std::make_unique<DmaEngine>(n.c_str(), params.dma, i, node_id, doorbell_));
        engines.back()->gpu_memory.bind(memory);
    }
    configure(params);
    doorbell_.event().calls<&Gpu::arbitrate>(this);
    completions_.event().calls<&Gpu::arbitrate>(this);
}

void Gpu::set_route(std::uint16_t destination, int port) {
    if (route_.size() <= destination) route_.resize(destination + 1U, -1);
    route_[destination] = port;
}

int Gpu::port_towards(std::uint16_t node) const {
    if (node < route_.size() && route_[node] >= 0) return route_[node];
    SC_REPORT_ERROR(name(), ("no route towards node " + std::to_string(node)).c_str());
    return 0;
}

void Gpu::configure(const config::ModelParams& params) { configure(params, params.dma, params.link); }

void Gpu::configure(const config::ModelParams& params, const config::DmaParams& dma, const config::LinkParams& link) {
    if (dma.engines > kMaxEngines) {
        SC_REPORT_ERROR(name(), ("dma.engines is larger than the " + std::to_string(kMaxEngines) +
                                 " engines elaborated").c_str());
    }
    engine_count_ = static_cast<int>(dma.engines);
    memory.configure(params.gpu_memory);
    for (int i = 0; i < kMaxEngines; ++i) engines[static_cast<std::size_t>(i)]->configure(dma, link);
    // SM traffic starts with the kernel, not with a copy engine's work fetch.
    config::DmaParams sm = params.dma;
    sm.launch_latency = params.runtime.kernel_launch_latency;
    sm.queued_launch_latency = params.runtime.kernel_launch_latency;
    sm.max_read_requests = params.gpu.sysmem_max_outstanding_reads;
    engines[kSmReadUnit]->configure(sm, params.link);
    engines[kSmReadUnit]->set_return_path(params.gpu.sm_host_path);
    engines[kSmWriteUnit]->configure(sm, params.link);
    for (const int unit : {kSmReadUnit, kSmWriteUnit}) engines[static_cast<std::size_t>(unit)]->set_kernel_end(params.gpu.sysmem_kernel_end);
    sources_.clear();
    copy_queue_cap_ = dma.egress_queue.value;
    copy_queues_.clear();
    copy_queues_.resize(ports.size());
    port_queued_.assign(ports.size(), 1);
    next_fill_ = 0;
    next_queue_port_ = 0;
    // With the queue the engines still take turns as sources, for ports it does not cover.
    if (copy_queue_cap_ > 0) sources_.push_back(kCopyQueues);
    for (int i = 0; i < engine_count_; ++i) sources_.push_back(i);
    sources_.push_back(kSmReadUnit);
    sources_.push_back(kSmWriteUnit);
    next_source_ = 0;
    std::fill(link_ready_.begin(), link_ready_.end(), std::uint8_t{1});
    ready_ports_ = link_ready_.size();
    completion_bytes_ = static_cast<std::uint32_t>(params.link.mps.value);
    sm_in_order_ = params.gpu.sysmem_in_order;
    copies_in_order_ = params.gpu.copies_in_order;
    stats_ = GpuStats{};
}

bool Gpu::idle() const {
    return completions_.empty() &&
           std::none_of(engines.begin(), engines.end(), [](const auto& e) { return e->busy(); }) &&
           std::all_of(copy_queues_.begin(), copy_queues_.end(), [](const CopyQueue& q) { return q.tlps.empty(); });
}

tlm::tlm_sync_enum Gpu::port_fw(int /*port*/, Tlp& t, tlm::tlm_phase& phase, sc_core::sc_time&) {
    DMASIM_ASSERT(phase == tlm::BEGIN_REQ);
    switch (t.kind) {
        case TlpKind::kCompletion: {
            const std::uint32_t engine = t.tag >> 16;
            DMASIM_ASSERT(engine < engines.size());
            // A completion may free the engine's tag for its next read: offered to the port
            // now, from inside this call, rather than by a process woken for it a delta later.
            DmaEngine& e = *engines[engine];
            doorbell_.hold(true);
            e.on_completion(t);
            doorbell_.hold(false);
            // The completion may also have given another engine a TLP (an exchange's stores,
            // CopyJob::stores), whose ring the hold swallowed: offered now too, or it would wait
            // for whatever next wakes the arbiter (results/h100-sxm/isolating/exchange-host).
            if (e.has_tlp() || doorbell_.rang_while_held()) arbitrate();
            // Endpoints advertise infinite completion credits: the data goes straight to memory.
            return tlm::TLM_COMPLETED;
        }
        case TlpKind::kMemWrite:
            // A peer, a capture card or the CPU writing GPU memory through the BAR; HBM takes
            // it at a rate far above any link's.
            (void)bar.access_ps(true, t.payload);
            stats_.bytes_written_by_others += t.payload;
            return tlm::TLM_COMPLETED;
        case TlpKind::kMemRead: {
            stats_.bar_reads++;
            const double ready = now_ps() + bar.access_ps(false, t.length);
            for_each_completion(t, node_id_, completion_bytes_, [&](const Tlp& c) { completions_.push(ready, Out{c}); });
            return tlm::TLM_COMPLETED;
        }
    }
    return tlm::TLM_COMPLETED;
}

tlm::tlm_sync_enum Gpu::port_bw(int port, Tlp&, tlm::tlm_phase& phase, sc_core::sc_time&) {
    DMASIM_ASSERT(phase == tlm::END_REQ);
    // The link took a TLP off its transmit queue (from inside its transmit process): offer the
    // next one now rather than from a process woken for it a delta cycle later.
    set_ready(port, true);
    arbitrate();
    return tlm::TLM_COMPLETED;
}

void Gpu::set_ready(int port, bool ready) {
    std::uint8_t& r = link_ready_[static_cast<std::size_t>(port)];
    if (r != static_cast<std::uint8_t>(ready)) {
        ready_ports_ = ready ? ready_ports_ + 1 : ready_ports_ - 1;
        r = ready ? 1 : 0;
    }
}

bool Gpu::send(int port, Tlp t) {
    tlm::tlm_phase phase = tlm::BEGIN_REQ;
    sc_core::sc_time delay = sc_core::SC_ZERO_TIME;
    const tlm::tlm_sync_enum r = ports[static_cast<std::size_t>(port)]->egress->nb_transport_fw(t, phase, delay);
    set_ready(port, r == tlm::TLM_UPDATED && phase == tlm::END_REQ);
    return true;
}

// The SMs' loads and stores of host memory leave through one queue, in the order the warps
// issued them: a store goes only when no load issued before it is still waiting (for a free line
// too: the queue's head holds it), a load only when no store issued before it is.
bool Gpu::sm_turn(int unit) {
    DmaEngine& reads = *engines[kSmReadUnit];
    DmaEngine& writes = *engines[kSmWriteUnit];
    if (unit == kSmReadUnit) return !(writes.has_tlp() && writes.offered_since_ps() < reads.offered_since_ps());
    if (unit == kSmWriteUnit) {
        double since = 0.0;
        if (reads.has_tlp()) {
            since = reads.offered_since_ps();
        } else if (!reads.read_waiting(since)) {
            return true;
        }
        return !(since < writes.offered_since_ps());
    }
    return true;
}

bool Gpu::sm_waiting(int port, double& since_ps) {
    bool any = false;
    for (const int unit : {kSmReadUnit, kSmWriteUnit}) {
        DmaEngine& e = *engines[static_cast<std::size_t>(unit)];
        if (!e.busy()) continue;
        double since = 0.0;
        bool waiting = false;
        if (unit == kSmReadUnit) {
            // By the access its pending or waiting line belongs to (a load issues all its lines).
            waiting = e.access_waiting(since);
            if (e.has_tlp() && (!waiting || e.offered_since_ps() < since)) {
                since = e.offered_since_ps();
                waiting = true;
            }
        } else if (e.has_tlp()) {
            since = e.offered_since_ps();
            waiting = true;
        }
        if (!waiting) continue;
        if (port_towards(e.next_destination()) != port) continue;
        if (!any || since < since_ps) since_ps = since;
        any = true;
    }
    return any;
}

bool Gpu::copy_turn(int port, double since_ps) {
    double sm = 0.0;
    return !copies_in_order_ || !sm_waiting(port, sm) || !(sm < since_ps);
}

void Gpu::set_queued_ports(const std::vector<std::uint8_t>& queued) {
    DMASIM_ASSERT(queued.size() == ports.size());
    port_queued_ = queued;
}

// Round robin over the engines, as the arbiter goes without the queues. A queue is full once it
// holds its bytes of payload: a read request (none) then waits too, so nothing passes what is in
// it. An entry goes on at once when its port is free (arbitrate sends right after filling).
void Gpu::fill_copy_queues() {
    for (;;) {
        bool moved = false;
        for (int i = 0; i < engine_count_; ++i) {
            const int k = (next_fill_ + i) % engine_count_;
            DmaEngine& e = *engines[static_cast<std::size_t>(k)];
            if (!e.has_tlp()) continue;
            const auto port = static_cast<std::size_t>(port_towards(e.next_destination()));
            CopyQueue& q = copy_queues_[port];
            if (port_queued_[port] == 0 || q.bytes >= copy_queue_cap_) continue;
            q.since.push(now_ps());
            const Tlp& t = q.tlps.push_slot() = e.take();
            q.bytes += t.payload;
            next_fill_ = (k + 1) % engine_count_;
            moved = true;
            break;
        }
        if (!moved) return;
    }
}

bool Gpu::send_queued() {
    const std::size_t n = copy_queues_.size();
    for (std::size_t i = 0, p = next_queue_port_; i < n; ++i, p = p + 1 == n ? 0 : p + 1) {
        CopyQueue& q = copy_queues_[p];
        if (q.tlps.empty() || link_ready_[p] == 0) continue;
        if (!copy_turn(static_cast<int>(p), q.since.front())) continue;
        const Tlp t = q.tlps.front();
        q.tlps.pop();
        q.since.pop();
        q.bytes -= t.payload;
        next_queue_port_ = p + 1 == n ? 0 : p + 1;
        send(static_cast<int>(p), t);
        return true;
    }
    return false;
}

void Gpu::arbitrate() {
    doorbell_.hold(true);
    // Answers to BAR reads first: they hold a requester's tag.
    bool blocked = false;
    while (completions_.due()) {
        const int port = port_towards(completions_.front().tlp.requester);
        if (link_ready_[static_cast<std::size_t>(port)] == 0) {
            blocked = true;  // the link's END_REQ kicks us again
            break;
        }
        send(port, completions_.front().tlp);
        completions_.pop();
    }
    if (!blocked) completions_.rearm();
    // Round robin from the source after the last one served. Once no port can take a TLP
    // nothing more can go: the common case of a single port, busy after each TLP, stops there.
    const bool queued = copy_queue_cap_ > 0;
    if (queued) fill_copy_queues();
    const std::size_t n = sources_.size();
    while (ready_ports_ > 0) {
        bool sent = false;
        // A queue sent its head, or an engine a TLP past the queues: the engines may fill them.
        bool room = false;
        std::size_t k = next_source_;
        for (std::size_t i = 0; i < n; ++i, k = k + 1 == n ? 0 : k + 1) {
            if (sources_[k] == kCopyQueues) {
                if (!send_queued()) continue;
                next_source_ = k + 1 == n ? 0 : k + 1;
                sent = room = true;
                break;
            }
            DmaEngine& e = *engines[static_cast<std::size_t>(sources_[k])];
            if (!e.has_tlp()) continue;
            if (sm_in_order_ && !sm_turn(sources_[k])) continue;
            const int port = port_towards(e.next_destination());
            if (link_ready_[static_cast<std::size_t>(port)] == 0) continue;
            // An engine's TLP for a queued port goes through the queue.
            const bool copy = sources_[k] < kMaxEngines;
            if (queued && copy && port_queued_[static_cast<std::size_t>(port)] != 0) continue;
            if (copy && !copy_turn(port, e.pending_since_ps())) continue;
            send(port, e.take());
            next_source_ = k + 1 == n ? 0 : k + 1;
            sent = true;
            room = queued && copy;
            break;
        }
        if (!sent) break;
        if (room) fill_copy_queues();
    }
    doorbell_.hold(false);
}

}  // namespace dmasim::sim
