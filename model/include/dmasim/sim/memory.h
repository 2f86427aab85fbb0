// A memory controller (host DRAM or GPU HBM) as a TLM-2.0 loosely-timed target.
//
// Requests are served in arrival order at the controller's bandwidth, so every requester —
// DMA engines, the root complex, CPU copies — shares it; the answer is a timing annotation
// (queueing + transfer + latency), which costs no event: callers schedule what depends on it.
#pragma once

#include <systemc>
#include <tlm>
#include <tlm_utils/simple_initiator_socket.h>
#include <tlm_utils/multi_passthrough_target_socket.h>

#include <cstdint>

#include "dmasim/config/params.h"
#include "dmasim/sim/tlp.h"

namespace dmasim::sim {

struct MemoryStats {
    std::uint64_t reads = 0;
    std::uint64_t writes = 0;
    std::uint64_t bytes_read = 0;
    std::uint64_t bytes_written = 0;
    double busy_ps = 0.0;
};

class MemoryController : public sc_core::sc_module {
public:
    using Params = config::MemoryParams;

    // Any number of requesters bind here; they share the controller's bandwidth.
    tlm_utils::multi_passthrough_target_socket<MemoryController> socket;

    MemoryController(sc_core::sc_module_name name, const Params& params);

    void configure(const Params& params);
    const MemoryStats& stats() const { return stats_; }
    const Params& params() const { return params_; }

    // The timing of one access arriving `offset_ps` (whole picoseconds) after now: the delay from
    // now until it completes, in whole picoseconds. What b_transport answers, for a MemoryPort
    // bound to this controller to ask directly.
    // latency_ps < 0: the controller's own (params().latency); else the latency of a cache in front
    // of it that serves this access (the GPU's L2 for a copy engine: DmaParams::gpu_memory_latency).
    double serve(bool write, std::uint64_t bytes, double offset_ps, double latency_ps = -1.0);
    // Kernels that stream through this memory as fast as it serves them (a compute kernel over
    // GPU memory): the controller takes their requests in turn with everyone else's, so each
    // other access waits for one of each such kernel's, as long, before its own.
    void set_streaming_kernels(int n) { streaming_ = n; }

private:
    void b_transport(int requester, tlm::tlm_generic_payload& gp, sc_core::sc_time& delay);

    Params params_;
    double ps_per_byte_ = 0.0;
    double busy_until_ps_ = 0.0;
    int streaming_ = 0;
    MemoryStats stats_;
};

// A requester's port to a MemoryController. access() returns the delay (from `now + offset`)
// until the access completes.
class MemoryPort {
public:
    explicit MemoryPort(const char* name);
    tlm_utils::simple_initiator_socket<MemoryPort> socket;
    // Binds the socket to the controller's. Accesses then ask the controller directly (serve):
    // the model moves no data, and building a generic payload and passing it through the
    // sockets' binders cost more than the answer (a tenth of a posted write's work per TLP).
    void bind(MemoryController& controller);
    sc_core::sc_time access(bool write, std::uint64_t bytes, const sc_core::sc_time& offset = sc_core::SC_ZERO_TIME) {
        return sc_core::sc_time::from_value(
            static_cast<sc_dt::uint64>(access_ps(write, bytes, static_cast<double>(offset.value()))));
    }
    // The same in whole picoseconds, for the packet level (no sc_time per packet: tlp.h, delay_ps).
    double access_ps(bool write, std::uint64_t bytes, double offset_ps = 0.0, double latency_ps = -1.0) {
        DMASIM_ASSERT(controller_ != nullptr);
        return controller_->serve(write, bytes, offset_ps, latency_ps);
    }

private:
    MemoryController* controller_ = nullptr;
};

}  // namespace dmasim::sim
