#include "dmasim/sim/pcie_link.h"

#include <algorithm>
#include <string>

namespace dmasim::sim {

void invariant_failed(const char* expr, const char* file, int line) {
    const std::string msg = std::string("model invariant broken: ") + expr + " (" + file + ":" + std::to_string(line) + ")";
    SC_REPORT_FATAL("dmasim/invariant", msg.c_str());
    std::abort();
}

void TlpFwOnly::b_transport(Tlp&, sc_core::sc_time&) {
    SC_REPORT_ERROR("dmasim/tlp", "TLPs travel through nb_transport only; b_transport is not supported");
}

PcieLink::PcieLink(sc_core::sc_module_name name, const Params& params)
    : sc_core::sc_module(name), tx("tx"), rx("rx"), params_(params), dllp_queue_(16), in_flight_(64), updates_(16) {
    tx.bind(static_cast<TlpFwIf&>(*this));
    rx.bind(static_cast<TlpBwIf&>(*this));
    configure(params);

    tx_event_.calls<&PcieLink::transmit>(this);
    deliver_event_.calls<&PcieLink::deliver>(this);
    deliver_event_.run_late();
}

void PcieLink::pair_with(PcieLink& reverse) {
    reverse_ = &reverse;
    reverse.reverse_ = this;
}

void PcieLink::configure(const Params& params) {
    params_ = params;
    phys_ = pcie::link_physics(params_);
    nvlink_ = false;
    flow_control_ = true;
    port_ps_per_byte_ = 0.0;
    peer_ps_per_byte_ = 0.0;
    cache_overheads();
    stats_ = LinkStats{};
    reset_credits();
    start_idle();
}

void PcieLink::start_idle() {
    // A case starts with the link at rest and the case clock at zero (tlp.h, now_ps).
    wire_free_ps_ = 0.0;
    stall_since_ps_ = -1.0;
    updates_.clear();
    last_dllp_arrival_ps_ = -1.0;
    credit_wake_ = false;
}

void PcieLink::configure_nvlink(const config::NvlinkParams& nv) {
    params_ = Params{};
    params_.latency = nv.latency;
    params_.credits_posted_header = params_.credits_posted_data = 0;
    params_.credits_nonposted_header = params_.credits_completion_header = params_.credits_completion_data = 0;
    nvlink_ = true;
    flow_control_ = false;
    nvlink_overhead_ = static_cast<std::uint32_t>(nv.packet_overhead.value);
    port_ps_per_byte_ = nv.port_bandwidth.bytes_per_s > 0.0 ? 1e12 / nv.port_bandwidth.bytes_per_s : 0.0;
    peer_ps_per_byte_ = 0.0;
    phys_ = pcie::LinkPhysics{};
    phys_.lanes = nv.links;
    phys_.stream_bytes_per_s = static_cast<double>(nv.links) * nv.link_rate.bytes_per_s;
    phys_.ps_per_byte = 1e12 / phys_.stream_bytes_per_s;
    cache_overheads();
    stats_ = LinkStats{};
    reset_credits();
    start_idle();
}

std::uint32_t PcieLink::wire_bytes(const Tlp& t) const {
    return t.payload + packets_of(t) * overhead_bytes_[static_cast<std::size_t>(t.kind)];
}

void PcieLink::use_socket_credits(const Params& credits) {
    params_.credits_posted_header = credits.credits_posted_header;
    params_.credits_posted_data = credits.credits_posted_data;
    params_.credits_nonposted_header = credits.credits_nonposted_header;
    params_.credits_completion_header = credits.credits_completion_header;
    params_.credits_completion_data = credits.credits_completion_data;
    params_.updatefc_coalesce = credits.updatefc_coalesce;
    flow_control_ = true;
    reset_credits();
}

void PcieLink::set_peer_bandwidth(core::Bandwidth bw) {
    peer_ps_per_byte_ = bw.bytes_per_s > 0.0 ? 1e12 / bw.bytes_per_s : 0.0;
}

// A TLP's wire bytes are its payload plus what its kind adds (framing, header, digests), which
// depends only on the link's settings: worked out once here rather than per packet.
void PcieLink::cache_overheads() {
    for (const TlpKind k : {TlpKind::kMemWrite, TlpKind::kMemRead, TlpKind::kCompletion}) {
        overhead_bytes_[static_cast<std::size_t>(k)] = nvlink_ ? nvlink_overhead_ : pcie::tlp_wire_bytes(k, 0, params_);
    }
    dllp_bytes_ = nvlink_ ? 0 : pcie::dllp_wire_bytes(params_);
}

bool PcieLink::idle() const {
    const double now = now_ps();
    return std::all_of(queue_.begin(), queue_.end(), [](const Ring<Tlp>& q) { return q.empty(); }) &&
           dllp_queue_.empty() && in_flight_.empty() && held_by_receiver_ == 0 &&
           !(last_dllp_arrival_ps_ > now + 0.5) && (updates_.empty() || updates_.back().arrival_ps <= now + 0.5);
}

void PcieLink::reset_credits() {
    auto set = [](Credits& c, std::int64_t header, std::int64_t data) {
        c.infinite_header = header == 0;
        c.infinite_data = data == 0;
        c.header = header;
        c.data = data;
    };
    set(credits_[static_cast<std::size_t>(FcClass::kPosted)], params_.credits_posted_header,
        params_.credits_posted_data);
    // Memory reads carry no data, so non-posted data credits never limit them.
    set(credits_[static_cast<std::size_t>(FcClass::kNonPosted)], params_.credits_nonposted_header, 0);
    set(credits_[static_cast<std::size_t>(FcClass::kCompletion)], params_.credits_completion_header,
        params_.credits_completion_data);
    unacked_ = 0;
    freed_since_update_ = 0;
    freed_header_.fill(0);
    freed_data_.fill(0);
}

tlm::tlm_sync_enum PcieLink::nb_transport_fw(Tlp& t, tlm::tlm_phase& phase, sc_core::sc_time&) {
    DMASIM_ASSERT(phase == tlm::BEGIN_REQ);
    const auto c = static_cast<std::size_t>(fc_class(t.kind));
    DMASIM_ASSERT(queue_[c].size() < kQueueDepth);
    const bool at_rest = !tx_scheduled_ && !in_transmit_ && !anything_queued() && !(wire_free_ps_ > now_ps() + 0.5);
    queue_[c].push(t);
    if (at_rest) {
        // Nothing queued and the wire free: the packet starts now, as the transmit process woken
        // for it would start it, without that wake-up. Nothing waits behind it, so transmit()
        // calls no sender back from inside this call.
        transmit();
        phase = tlm::END_REQ;
        return tlm::TLM_UPDATED;
    }
    wake();
    if (queue_[c].size() < kQueueDepth) {
        phase = tlm::END_REQ;
        return tlm::TLM_UPDATED;
    }
    sender_waiting_[c] = true;
    return tlm::TLM_ACCEPTED;
}

tlm::tlm_sync_enum PcieLink::nb_transport_bw(Tlp& t, tlm::tlm_phase& phase, sc_core::sc_time&) {
    DMASIM_ASSERT(phase == tlm::END_REQ);
    tlp_freed(t);
    return tlm::TLM_COMPLETED;
}

bool PcieLink::has_credit(const Tlp& t) const {
    const Credits& c = credits_[static_cast<std::size_t>(fc_class(t.kind))];
    const bool header_ok = c.infinite_header || c.header >= 1;
    const bool data_ok = c.infinite_data || t.payload == 0 || c.data >= pcie::data_credits(t.payload);
    return header_ok && data_ok;
}

void PcieLink::take_credit(const Tlp& t) {
    Credits& c = credits_[static_cast<std::size_t>(fc_class(t.kind))];
    if (!c.infinite_header) c.header -= 1;
    if (!c.infinite_data && t.payload > 0) c.data -= pcie::data_credits(t.payload);
}

void PcieLink::wake() {
    // While transmit() runs it decides itself when to run next (it looks at the queues last).
    if (in_transmit_) return;
    const double now = now_ps();
    // A packet offered while the wire is busy goes when it is free: one wake-up then, not one
    // now that would only find the wire busy.
    const double at = wire_free_ps_ > now + 0.5 ? wire_free_ps_ : now;
    if (tx_scheduled_) {
        // Only a wake-up for credits still on their way may come later than this one; the
        // earlier notification replaces it (transmit() arms it again if still stalled).
        if (!credit_wake_ || at + 0.5 >= credit_wake_ps_) return;
        credit_wake_ = false;
    }
    tx_scheduled_ = true;
    if (at > now) {
        tx_event_.notify_in(delay_ps(at - now));
    } else {
        tx_event_.notify(zero_delay());
    }
}

void PcieLink::wake_for_credits(double arrival_ps) {
    tx_scheduled_ = true;
    credit_wake_ = true;
    credit_wake_ps_ = arrival_ps;
    tx_event_.notify_in(delay_ps(arrival_ps - now_ps()));
}

bool PcieLink::anything_queued() const {
    return !dllp_queue_.empty() || !queue_[0].empty() || !queue_[1].empty() || !queue_[2].empty();
}

void PcieLink::transmit() {
    tx_scheduled_ = false;
    if (credit_wake_) {
        // Woken at an UpdateFC's arrival. Had it been delivered as an event, its credits would
        // have woken us one delta cycle after that delivery, after whatever else arrived at
        // the same instant (an Ack to send first): look one delta cycle later, as then.
        credit_wake_ = false;
        tx_scheduled_ = true;
        tx_event_.notify(zero_delay());
        return;
    }
    const double now = now_ps();
    if (wire_free_ps_ > now + 0.5) {
        tx_scheduled_ = true;
        tx_event_.notify_in(delay_ps(wire_free_ps_ - now));
        return;
    }
    // Woken for the wire coming free, the kernel's clock sits on the 1 ps grid within half a
    // picosecond of it; the wire itself has no gap, so the next packet starts exactly then.
    // Starting at `now` would lose up to 0.5 ps per back-to-back packet, and more queued
    // requesters would mean more lost (a slower zero-copy kernel with more blocks).
    const double start = now < wire_free_ps_ + 0.5 ? wire_free_ps_ : now;
    if (!dllp_queue_.empty()) {
        // DLLPs go first: delaying Acks and credit updates would stall the other direction.
        // A DLLP takes wire time here but is not delivered as an event: an Ack's arrival
        // changes nothing modelled (replay buffers are not a limit), and an UpdateFC's credits
        // are handed to the paired link with their arrival time, which counts them from then
        // (and wakes its sender then only if it waits for credits).
        const Dllp d = dllp_queue_.front();
        dllp_queue_.pop();
        send_dllp(d, start);
        if (anything_queued()) {
            tx_scheduled_ = true;
            tx_event_.notify_in(delay_ps(wire_free_ps_ - now));
        }
        return;
    }
    const bool was_empty = in_flight_.empty();
    InFlight* slot = nullptr;
    std::size_t freed_class = kFcClasses;  // a full transmit queue that now has room
    std::uint32_t bytes_on_wire = 0;
    {
        apply_updates(now);
        bool any_queued = false;
        std::size_t chosen = kFcClasses;
        for (std::size_t i = 0; i < kFcClasses; ++i) {
            std::size_t c = next_class_ + i;
            if (c >= kFcClasses) c -= kFcClasses;
            if (queue_[c].empty()) continue;
            any_queued = true;
            if (has_credit(queue_[c].front())) {
                chosen = c;
                break;
            }
        }
        if (chosen == kFcClasses) {
            // Nothing can go: either nothing is queued, or every head waits for credits: the
            // next UpdateFC on its way wakes us when it arrives (or one sent later will).
            if (any_queued) {
                if (stall_since_ps_ < 0) stall_since_ps_ = now;
                if (!updates_.empty()) wake_for_credits(updates_.front().arrival_ps);
            }
            return;
        }
        if (stall_since_ps_ >= 0) {
            stats_.credit_stall_ps += now - stall_since_ps_;
            stall_since_ps_ = -1.0;
        }
        next_class_ = chosen + 1 == kFcClasses ? 0 : chosen + 1;
        slot = &in_flight_.push_slot();
        slot->tlp = queue_[chosen].front();
        queue_[chosen].pop();
        take_credit(slot->tlp);
        bytes_on_wire = wire_bytes(slot->tlp);
        stats_.tlps++;
        stats_.tlps_by_kind[static_cast<std::size_t>(slot->tlp.kind)]++;
        stats_.payload_bytes += slot->tlp.payload;
        stats_.tlp_overhead_bytes += bytes_on_wire - slot->tlp.payload;
        if (sender_waiting_[chosen]) {
            sender_waiting_[chosen] = false;
            freed_class = chosen;
        }
    }
    // The GPU's NVLink port may feed the bond more slowly than its flits go (port_bandwidth), and
    // a socket link may carry peer-to-peer writes more slowly than other traffic (peer_bandwidth).
    const double payload_ps_per_byte = std::max(port_ps_per_byte_, slot->tlp.peer ? peer_ps_per_byte_ : 0.0);
    const double duration = std::max(bytes_on_wire * phys_.ps_per_byte, slot->tlp.payload * payload_ps_per_byte);
    wire_free_ps_ = start + duration;
    stats_.busy_ps += duration;
    if (Tracer::active() != nullptr) probe_.busy(trace_name_, start, duration);
    slot->arrival_ps = wire_free_ps_ + static_cast<double>(params_.latency.ps);
    if (was_empty) deliver_event_.notify_in(delay_ps(slot->arrival_ps - now));
    if (freed_class < kFcClasses) {
        Tlp copy = slot->tlp;
        tlm::tlm_phase phase = tlm::END_REQ;
        sc_core::sc_time delay = sc_core::SC_ZERO_TIME;
        // The sender may offer its next TLP from inside this call; the wake-up below is decided
        // after it returns, from what is queued then.
        in_transmit_ = true;
        tx->nb_transport_bw(copy, phase, delay);
        in_transmit_ = false;
    }
    // Next wake-up when the wire is free, and only if something waits for it: a link carrying
    // a request now and then (the read requests of an H2D copy) is woken once per packet.
    if (anything_queued()) {
        tx_scheduled_ = true;
        tx_event_.notify_in(delay_ps(wire_free_ps_ - now));
    }
}

void PcieLink::deliver() {
    const double now = now_ps();
    while (!in_flight_.empty() && in_flight_.front().arrival_ps <= now + 0.5) {
        InFlight item = in_flight_.front();
        in_flight_.pop();
        ++held_by_receiver_;
        // Nothing left behind it on the wire (DLLPs are not in in_flight_: one sent after this
        // TLP arrives after it): the receiver acknowledges what it has.
        const bool wire_empty = in_flight_.empty() && !(last_dllp_arrival_ps_ > item.arrival_ps);
        if (!nvlink_ && (++unacked_ >= static_cast<std::uint32_t>(params_.ack_coalesce) || wire_empty)) {
            unacked_ = 0;
            reverse_->queue_dllp(Dllp{DllpKind::kAck, FcClass::kPosted, 0, 0});
        }
        tlm::tlm_phase phase = tlm::BEGIN_REQ;
        sc_core::sc_time delay = sc_core::SC_ZERO_TIME;
        const tlm::tlm_sync_enum r = rx->nb_transport_fw(item.tlp, phase, delay);
        if (r == tlm::TLM_COMPLETED) tlp_freed(item.tlp);
    }
    if (!in_flight_.empty()) deliver_event_.notify_in(delay_ps(in_flight_.front().arrival_ps - now));
}

void PcieLink::tlp_freed(const Tlp& t) {
    DMASIM_ASSERT(held_by_receiver_ > 0);
    --held_by_receiver_;
    const auto c = static_cast<std::size_t>(fc_class(t.kind));
    const Credits& cr = credits_[c];
    // Infinite credits are never updated (spec): nothing to send for them.
    if (!cr.infinite_header) freed_header_[c] += 1;
    if (!cr.infinite_data && t.payload > 0) freed_data_[c] += pcie::data_credits(t.payload);
    ++freed_since_update_;
    if (flow_control_) flush_updates(held_by_receiver_ == 0);
}

void PcieLink::flush_updates(bool force) {
    if (!force && freed_since_update_ < static_cast<std::uint32_t>(params_.updatefc_coalesce)) return;
    freed_since_update_ = 0;
    for (std::size_t c = 0; c < kFcClasses; ++c) {
        if (freed_header_[c] == 0 && freed_data_[c] == 0) continue;
        reverse_->queue_dllp(Dllp{DllpKind::kUpdateFc, static_cast<FcClass>(c), freed_header_[c], freed_data_[c]});
        freed_header_[c] = 0;
        freed_data_[c] = 0;
    }
}

void PcieLink::send_dllp(const Dllp& d, double start) {
    const std::uint32_t bytes_on_wire = dllp_bytes_;
    stats_.dllps++;
    stats_.dllp_bytes += bytes_on_wire;
    (d.kind == DllpKind::kAck ? stats_.ack_dllps : stats_.updatefc_dllps)++;
    const double duration = bytes_on_wire * phys_.ps_per_byte;
    wire_free_ps_ = start + duration;
    stats_.busy_ps += duration;
    if (Tracer::active() != nullptr) probe_.busy(trace_name_, start, duration);
    last_dllp_arrival_ps_ = wire_free_ps_ + static_cast<double>(params_.latency.ps);
    if (d.kind == DllpKind::kUpdateFc) reverse_->update_in_flight(last_dllp_arrival_ps_, d);
}

void PcieLink::queue_dllp(const Dllp& d) {
    if (tx_scheduled_ || in_transmit_ || !dllp_queue_.empty()) {
        // The transmit process runs (or is about to) and sends queued DLLPs first.
        dllp_queue_.push(d);
        wake();
        return;
    }
    const double now = now_ps();
    if (!(wire_free_ps_ > now + 0.5)) {
        // The wire is free and nothing is about to use it: the DLLP starts now, as the transmit
        // process woken for it would start it (DLLPs go before any TLP), without that wake-up.
        // The link of an H2D copy's read requests carries the Acks of the completions so.
        send_dllp(d, now < wire_free_ps_ + 0.5 ? wire_free_ps_ : now);
        if (anything_queued()) {
            tx_scheduled_ = true;
            tx_event_.notify_in(delay_ps(wire_free_ps_ - now));
        }
        return;
    }
    if (!anything_queued() && (in_flight_.empty() || in_flight_.front().arrival_ps > wire_free_ps_ + 0.5)) {
        // The wire is busy, but nothing waits for it: the transmit process would be woken when
        // it is free and send this DLLP first (DLLPs go before TLPs, so a TLP offered meanwhile
        // waits for it, and a later DLLP queues behind it). It is sent now for then, without
        // that wake-up: the Ack and UpdateFC a receiver owes at one instant go back to back so.
        // No TLP of this link arrives before it starts, so no receiver sees it too early
        // (deliver() looks at the last DLLP's arrival).
        send_dllp(d, wire_free_ps_);
        return;
    }
    dllp_queue_.push(d);
    wake();
}

void PcieLink::update_in_flight(double arrival_ps, const Dllp& d) {
    updates_.push(PendingUpdate{arrival_ps, d});
    // A sender that waits for credits is woken when they arrive; any other finds them counted
    // the next time it looks (apply_updates).
    if (stall_since_ps_ >= 0 && !tx_scheduled_ && !in_transmit_) wake_for_credits(arrival_ps);
}

void PcieLink::apply_updates(double now) {
    while (!updates_.empty() && updates_.front().arrival_ps <= now + 0.5) {
        const Dllp& d = updates_.front().dllp;
        Credits& c = credits_[static_cast<std::size_t>(d.fc)];
        c.header += d.header_credits;
        c.data += d.data_credits;
        updates_.pop();
    }
}

}  // namespace dmasim::sim
