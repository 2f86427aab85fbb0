// The transaction-level packet of the PCIe model and its TLM-2.0 protocol traits.
//
// PCIe is not the TLM base protocol, so, as IEEE 1666 allows, the model defines its own
// protocol types: the payload is a Transaction Layer Packet (a small value, copied by whoever
// keeps it, so nothing is allocated per packet) and the phases are TLM's own:
//   sender --BEGIN_REQ--> link   the link takes the TLP into its transmit queue; it answers
//                                END_REQ (at once, or later on the backward path) when the
//                                sender may offer the next one.
//   link --BEGIN_REQ--> receiver the TLP arrives; the receiver answers TLM_COMPLETED if it
//                                consumed it at once, or sends END_REQ back later when it frees
//                                the buffer, which is what returns flow-control credits.
#pragma once

#include <systemc>
#include <tlm>

#include <cstdint>
#include <string>

#include "dmasim/pcie/wire.h"

namespace dmasim::sim {

// Model invariants are checked in every build: a broken invariant would otherwise turn into a
// plausible-looking wrong number.
[[noreturn]] void invariant_failed(const char* expr, const char* file, int line);
#define DMASIM_ASSERT(expr) ((expr) ? static_cast<void>(0) : ::dmasim::sim::invariant_failed(#expr, __FILE__, __LINE__))

using pcie::TlpKind;

// What a write is to the host's cache: whole lines, part of a line no other write of its stream
// touches, part of a line that neighbouring writes also write (merged one after another), or
// whole lines that a CPU core's cache holds (the host takes them out of the core first:
// root_complex.held_write_bandwidth).
enum class LineWrite : std::uint8_t { kWhole, kPartial, kShared, kHeld };

// 32 bytes, aligned to 16: a packet is copied as two aligned 16-byte halves, so that a field read
// right after a copy comes from one store. As 26 bytes it was copied as two overlapping halves,
// and reading its payload straight after (a link taking it off its queue) stalled on every packet.
// (A static_assert below keeps it so.)
struct alignas(16) Tlp {
    TlpKind kind = TlpKind::kMemWrite;
    bool semaphore = false;      // the copy engine's completion write: the host polls for it
    std::uint16_t requester = 0; // node that issued the request (completions route back to it)
    std::uint16_t completer = 0; // node the request is for
    std::uint32_t payload = 0;   // data bytes carried (writes, completions)
    std::uint32_t length = 0;    // bytes asked for (reads)
    std::uint32_t tag = 0;       // requester's tag: engine index << 16 | slot
    std::uint32_t job = 0;       // the transfer it belongs to
    bool last = false;           // last completion of its read request
    LineWrite line_write = LineWrite::kWhole;  // writes: how much of its host cache line it writes
    // A write from one device to another (peer-to-peer), which bridges may treat apart.
    bool peer = false;
    // A write a bridge re-packetized (root_complex.peer_write_size): it now travels as packets of
    // at most 2^packet_log2 bytes, each with its own header, framing and LCRC on the wire. 0: one
    // packet. It stays one Tlp, so a link charges what its packets cost, not an event per packet,
    // and its pieces share one flow-control header credit (with a credit each, the 128 posted
    // header credits of link.* would hold two GPUs on two root ports to 14 GB/s, a loop of
    // credits no measurement or source here speaks for).
    std::uint8_t packet_log2 = 0;
    // Writes to host memory: where in the program's host buffers its transfer starts, in KiB
    // (a pass finds the first share of its buffers in root_complex.io_cache, and evicts past it).
    std::uint32_t host_kib = 0;
};

static_assert(sizeof(Tlp) == 32, "a TLP is copied as two aligned 16-byte halves");

// The packets a Tlp stands for on the wire (Tlp::packet_log2).
inline std::uint32_t packets_of(const Tlp& t) {
    if (t.packet_log2 == 0 || t.payload == 0) return 1;
    const std::uint32_t size = 1U << t.packet_log2;
    return (t.payload + size - 1) >> t.packet_log2;
}

struct PcieProtocol {
    using tlm_payload_type = Tlp;
    using tlm_phase_type = tlm::tlm_phase;
};

using TlpFwIf = tlm::tlm_fw_transport_if<PcieProtocol>;
using TlpBwIf = tlm::tlm_bw_transport_if<PcieProtocol>;
using TlpInitiatorSocket = tlm::tlm_initiator_socket<32, PcieProtocol>;
using TlpTargetSocket = tlm::tlm_target_socket<32, PcieProtocol>;

// The completions a completer returns for a read request: at most `max_payload` bytes each,
// the last one flagged, all carrying the request's tag back to its requester.
template <class Emit>
void for_each_completion(const Tlp& request, std::uint16_t completer, std::uint32_t max_payload, Emit&& emit) {
    std::uint32_t remaining = request.length;
    while (remaining > 0) {
        Tlp c;
        c.kind = TlpKind::kCompletion;
        c.requester = request.requester;
        c.completer = completer;
        c.payload = remaining < max_payload ? remaining : max_payload;
        c.tag = request.tag;
        c.job = request.job;
        remaining -= c.payload;
        c.last = remaining == 0;
        emit(c);
    }
}

// Packets are non-blocking only; these satisfy the rest of the TLM interfaces with clear errors.
class TlpFwOnly : public TlpFwIf {
public:
    void b_transport(Tlp&, sc_core::sc_time&) override;
    bool get_direct_mem_ptr(Tlp&, tlm::tlm_dmi&) override { return false; }
    unsigned int transport_dbg(Tlp&) override { return 0; }
};
class TlpBwOnly : public TlpBwIf {
public:
    void invalidate_direct_mem_ptr(sc_dt::uint64, sc_dt::uint64) override {}
};

// Adapters so that a module with several ports can tell which port a call came in on.
template <class Owner>
class FwPort final : public TlpFwOnly {
public:
    FwPort(Owner& owner, int port) : owner_(owner), port_(port) {}
    tlm::tlm_sync_enum nb_transport_fw(Tlp& t, tlm::tlm_phase& p, sc_core::sc_time& d) override {
        return owner_.port_fw(port_, t, p, d);
    }

private:
    Owner& owner_;
    int port_;
};

template <class Owner>
class BwPort final : public TlpBwOnly {
public:
    BwPort(Owner& owner, int port) : owner_(owner), port_(port) {}
    tlm::tlm_sync_enum nb_transport_bw(Tlp& t, tlm::tlm_phase& p, sc_core::sc_time& d) override {
        return owner_.port_bw(port_, t, p, d);
    }

private:
    Owner& owner_;
    int port_;
};

// Simulated time of the case running now, in picoseconds (the kernel's default resolution), as
// a double for sub-picosecond byte times that must not accumulate rounding error over millions
// of TLPs. It counts from the case's start, not from the process's: one process runs many
// cases back to back, and a double near 1e11 ps rounds those byte times differently than near
// 0, so a case's answer would otherwise depend on what ran before it (tests/sim/invariants_test).
inline double& case_origin_ps() {
    static double origin = 0.0;
    return origin;
}
// Called by the simulator with the model at rest, before it configures a case.
// The kernel's clock read inline: sc_time_stamp() is a library call, and the model reads the
// clock several times per packet.
inline sc_dt::uint64 kernel_now() { return sc_core::sc_get_curr_simcontext()->time_stamp().value(); }
// While the fabric's scheduler runs the packet-level modules ahead of the kernel (fabric.h), the
// model's clock is the scheduler's; otherwise it is the kernel's.
struct FabricClock {
    bool ahead = false;
    sc_dt::uint64 now = 0;
};
inline FabricClock& fabric_clock() {
    static FabricClock clock;
    return clock;
}
inline sc_dt::uint64 model_now() {
    const FabricClock& c = fabric_clock();
    return c.ahead ? c.now : kernel_now();
}
inline void start_case_clock() { case_origin_ps() = static_cast<double>(kernel_now()); }
// Through a signed integer: the clock never nears 2^63 ps, and an unsigned 64-bit conversion to
// double is a longer instruction sequence on every read of the clock.
inline double now_ps() { return static_cast<double>(static_cast<std::int64_t>(model_now())) - case_origin_ps(); }
// A whole number of picoseconds as an sc_time. sc_time::from_value is a library call per packet;
// scaling one picosecond is inline (sc_time::operator*=) and, for a whole number below 2^53,
// gives the same value.
inline sc_core::sc_time whole_ps(double ps) {
    static const sc_core::sc_time one = sc_core::sc_time::from_value(1);
    sc_core::sc_time t(one);
    t *= ps;  // rounds ps + 0.5 down
    return t;
}
// The kernel's resolution is 1 ps (SystemC's default, never changed by the model), so a
// delay is its count of picoseconds, rounded to the nearest (whole_ps): no unit conversion in
// doubles as sc_time(double, SC_PS) makes on every packet.
inline sc_core::sc_time ps_delay(double ps) {
    return ps > 0.0 ? whole_ps(ps) : sc_core::SC_ZERO_TIME;
}
// The same delay as a count of picoseconds, for the packet level's own events (fabric.h), which
// need no sc_time: sc_time's scaling rounds through a volatile double, a store and a load on
// every packet. whole_ps(ps) is exactly int64(ps + 0.5) (sc_time::operator*= on a value of 1).
inline sc_dt::uint64 delay_ps(double ps) {
    return ps > 0.0 ? static_cast<sc_dt::uint64>(static_cast<std::int64_t>(ps + 0.5)) : 0;
}
// A timed notification `ps` from now, rounded as above: for modules templated on their event
// type (timed_fifo.h). fabric.h has the FabricEvent overload.
inline void notify_after_ps(sc_core::sc_event& e, double ps) { e.notify(ps_delay(ps)); }
// A livelock in zero time (processes waking one another in delta cycles, the clock never
// moving) would never reach the simulator's simulated-time budget (simulator.h, Watchdog). Every
// zero-delay wake-up of the model is asked for here, and more than `zero_delay_limit()` of them
// at one simulated instant is a model error: sc_start throws and the case fails with a message
// naming it. A legitimate instant has a few wake-ups per packet in flight, far below the limit.
inline std::uint64_t& zero_delay_limit() {
    static std::uint64_t limit = 50'000'000;
    return limit;
}
inline sc_core::sc_time zero_delay() {
    static sc_dt::uint64 instant = ~sc_dt::uint64{0};
    static std::uint64_t count = 0;
    const sc_dt::uint64 now = model_now();
    if (now != instant) {
        instant = now;
        count = 0;
    } else if (++count > zero_delay_limit()) {
        count = 0;
        SC_REPORT_ERROR("dmasim/livelock", ("more than " + std::to_string(zero_delay_limit()) +
                                            " zero-delay wake-ups without simulated time advancing: a livelock in the model")
                                               .c_str());
    }
    return sc_core::SC_ZERO_TIME;
}
inline sc_core::sc_time to_sc(core::Duration d) {
    return d.ps > 0 ? whole_ps(static_cast<double>(d.ps)) : sc_core::SC_ZERO_TIME;
}

}  // namespace dmasim::sim
