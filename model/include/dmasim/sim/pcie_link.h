// One direction of a PCIe link, at TLP granularity.
//
// It serialises TLPs and DLLPs onto the wire (bytes from pcie/wire.h over the rate after line
// encoding and SKP ordered sets), delivers them after the link latency, enforces the
// receiver's flow-control credits, and generates the data-link traffic its receiver owes the
// sender: Ack DLLPs and UpdateFC DLLPs. Those travel on the paired link of the opposite
// direction, where they take wire time away from that direction's TLPs — which is why a
// duplex copy does not reach twice the one-way rate.
#pragma once

#include <systemc>
#include <tlm>

#include <array>
#include <cstdint>
#include <string>

#include "dmasim/config/params.h"
#include "dmasim/pcie/wire.h"
#include "dmasim/sim/fabric.h"
#include "dmasim/sim/ring.h"
#include "dmasim/sim/tlp.h"
#include "dmasim/sim/trace.h"

namespace dmasim::sim {

// Flow-control classes (spec): posted, non-posted, completion.
enum class FcClass : std::uint8_t { kPosted = 0, kNonPosted = 1, kCompletion = 2 };
inline constexpr std::size_t kFcClasses = 3;
// A memory write is posted, a read non-posted, a completion a completion: the two enumerations
// list them in the same order, so the class is the kind's value (a switch per packet was not free).
constexpr FcClass fc_class(TlpKind kind) { return static_cast<FcClass>(kind); }
static_assert(fc_class(TlpKind::kMemWrite) == FcClass::kPosted && fc_class(TlpKind::kMemRead) == FcClass::kNonPosted &&
              fc_class(TlpKind::kCompletion) == FcClass::kCompletion);

struct LinkStats {
    std::uint64_t tlps = 0;
    std::uint64_t tlps_by_kind[3] = {0, 0, 0};  // indexed by TlpKind
    std::uint64_t payload_bytes = 0;            // data carried in TLPs
    std::uint64_t tlp_overhead_bytes = 0;       // framing, headers, ECRC, LCRC of those TLPs
    std::uint64_t dllps = 0;
    std::uint64_t ack_dllps = 0;
    std::uint64_t updatefc_dllps = 0;
    std::uint64_t dllp_bytes = 0;
    double busy_ps = 0.0;                       // time the wire was sending something
    double credit_stall_ps = 0.0;               // time a TLP waited only for credits
};

class PcieLink : public sc_core::sc_module, private TlpFwOnly, private TlpBwOnly {
public:
    using Params = config::LinkParams;

    TlpTargetSocket tx;     // the sending node's egress binds here
    TlpInitiatorSocket rx;  // bound to the receiving node's ingress

    PcieLink(sc_core::sc_module_name name, const Params& params);

    // The link of the opposite direction, which carries this link's Acks and UpdateFCs.
    void pair_with(PcieLink& reverse);
    // New parameters between runs (the model is elaborated once per process). Resets credits
    // and statistics; the link must be idle.
    void configure(const Params& params);
    // The same module as one direction of an NVLink bond: packets of payload + a fixed
    // overhead at the bond's rate; no DLLPs and no credit limit.
    void configure_nvlink(const config::NvlinkParams& params);
    // A socket link's rate for peer-to-peer writes (Tlp::peer), payload per direction; 0: as any
    // other traffic. After configure/configure_nvlink, which clear it.
    void set_peer_bandwidth(core::Bandwidth bw);
    // A socket link's flow control: credits as a PCIe receiver's (the scenario's link.* ones),
    // returned by updates that cost the link no wire time. Without it a root complex behind the
    // link would take in whatever the other socket sends, however slowly it can pass it on.
    // After configure_nvlink, which clears it.
    void use_socket_credits(const Params& credits);
    bool is_nvlink() const { return nvlink_; }
    bool idle() const;
    // Timeline: the name its occupancy counter goes under, and the end of a run.
    void set_trace_name(const std::string& name) { trace_name_ = name; }
    void flush_trace() { probe_.flush(trace_name_); }

    const LinkStats& stats() const { return stats_; }
    const Params& params() const { return params_; }
    const pcie::LinkPhysics& physics() const { return phys_; }

private:
    enum class DllpKind : std::uint8_t { kAck, kUpdateFc };
    struct Dllp {
        DllpKind kind = DllpKind::kAck;
        FcClass fc = FcClass::kPosted;
        std::uint32_t header_credits = 0;
        std::uint32_t data_credits = 0;
    };
    struct InFlight {
        Tlp tlp;
        double arrival_ps = 0.0;
    };
    struct Credits {
        bool infinite_header = false;
        bool infinite_data = false;
        std::int64_t header = 0;
        std::int64_t data = 0;
    };

    // TLM entry points: a TLP offered by the sender; a buffer freed by the receiver.
    tlm::tlm_sync_enum nb_transport_fw(Tlp& t, tlm::tlm_phase& p, sc_core::sc_time& d) override;
    tlm::tlm_sync_enum nb_transport_bw(Tlp& t, tlm::tlm_phase& p, sc_core::sc_time& d) override;

    void transmit();  // on tx_event_: puts the next DLLP or TLP on the wire
    void wake();      // something was queued: transmit when the wire is free
    void wake_for_credits(double arrival_ps);  // stalled for credits: look again when these arrive
    bool anything_queued() const;
    void deliver();   // on deliver_event_: hands arrivals to the receiver (TLPs) or the paired link (DLLPs)

    bool has_credit(const Tlp& t) const;
    void take_credit(const Tlp& t);
    void queue_dllp(const Dllp& d);         // called by the paired link
    void send_dllp(const Dllp& d, double start);  // puts it on the wire from `start`
    // An UpdateFC about this link's TLPs left the paired link's wire; its credits count from
    // `arrival_ps`, when it reaches this link's sender.
    void update_in_flight(double arrival_ps, const Dllp& d);
    void apply_updates(double now);         // the credits of every UpdateFC that has arrived by `now`
    void tlp_freed(const Tlp& t);           // receiver released a buffer: credits to return
    void flush_updates(bool force);
    void reset_credits();
    void start_idle();

    std::uint32_t wire_bytes(const Tlp& t) const;
    void cache_overheads();

    Params params_;
    pcie::LinkPhysics phys_{};
    bool nvlink_ = false;
    std::uint32_t nvlink_overhead_ = 0;
    double port_ps_per_byte_ = 0.0;  // NVLink: the GPU's port, payload only (0: no limit)
    double peer_ps_per_byte_ = 0.0;  // socket links: peer-to-peer writes, payload only (0: no limit)
    bool flow_control_ = true;       // credits returned by UpdateFC (PCIe, socket links); NVLink: none
    std::array<std::uint32_t, 3> overhead_bytes_{};  // wire bytes a TLP adds to its payload, by TlpKind
    std::uint32_t dllp_bytes_ = 0;
    PcieLink* reverse_ = nullptr;

    std::array<Ring<Tlp>, kFcClasses> queue_;
    std::array<bool, kFcClasses> sender_waiting_{};
    std::array<Credits, kFcClasses> credits_{};
    std::size_t next_class_ = 0;  // round-robin between classes that can go
    Ring<Dllp> dllp_queue_;
    Ring<InFlight> in_flight_;  // TLPs on the wire; DLLPs are not delivered as events (transmit())
    struct PendingUpdate {
        double arrival_ps = 0.0;
        Dllp dllp;
    };
    Ring<PendingUpdate> updates_;      // UpdateFCs for this link's TLPs, on their way to its sender
    double last_dllp_arrival_ps_ = -1.0;  // arrival of the last DLLP sent on this link
    double wire_free_ps_ = 0.0;
    double stall_since_ps_ = -1.0;
    bool tx_scheduled_ = false;
    bool in_transmit_ = false;
    bool credit_wake_ = false;  // the pending wake-up is an UpdateFC's arrival (transmit())
    double credit_wake_ps_ = 0.0;

    // Receiver-side bookkeeping for the TLPs this link delivered.
    std::uint32_t unacked_ = 0;
    std::uint32_t held_by_receiver_ = 0;
    std::uint32_t freed_since_update_ = 0;
    std::array<std::uint32_t, kFcClasses> freed_header_{};
    std::array<std::uint32_t, kFcClasses> freed_data_{};

    FabricEvent tx_event_;
    FabricEvent deliver_event_;
    LinkStats stats_;
    OccupancyProbe probe_;
    std::string trace_name_;

    static constexpr std::size_t kQueueDepth = 2;  // TLPs per class the transmit buffer holds
};

}  // namespace dmasim::sim
