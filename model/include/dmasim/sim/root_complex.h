// Root complex: terminates device DMA into host memory.
//
// Writes from a device go to the memory controller; their posted credits return once the
// controller has taken them, so a slow or busy DRAM pushes back on the link. Reads go to the
// controller too, and the data comes back as completions of at most `completion_size` bytes
// (a multiple of the Read Completion Boundary, capped at MPS), queued on the port towards the
// requester. A write flagged as a copy engine's semaphore tells the completion listener (the
// host runtime polling for it) when it becomes visible in memory.
#pragma once

#include <systemc>
#include <tlm>

#include <functional>
#include <memory>
#include <vector>

#include "dmasim/config/params.h"
#include "dmasim/sim/memory.h"
#include "dmasim/sim/timed_fifo.h"
#include "dmasim/sim/tlp.h"

namespace dmasim::sim {

class CompletionListener {
public:
    virtual ~CompletionListener() = default;
    virtual void semaphore_written(std::uint32_t job) = 0;
};

struct RootComplexStats {
    std::uint64_t writes = 0;
    std::uint64_t reads = 0;
    std::uint64_t completions = 0;
};

class RootComplex : public sc_core::sc_module {
public:
    SC_HAS_PROCESS(RootComplex);
    using Params = config::RootComplexParams;

    struct Port {
        Port(const std::string& name, std::uint16_t peer_node)
            : egress((name + "_egress").c_str()), ingress((name + "_ingress").c_str()), peer(peer_node) {}
        TlpInitiatorSocket egress;  // to the link leaving through this port
        TlpTargetSocket ingress;    // from the link arriving at this port
        std::uint16_t peer;         // node at the other end
    };

    std::vector<std::unique_ptr<Port>> ports;
    MemoryPort memory;  // bound to the host memory controller

    // `peers[i]`: the node id reached through port i (routing table for completions).
    RootComplex(sc_core::sc_module_name name, const Params& params, std::uint16_t node_id,
                const std::vector<std::uint16_t>& peers);

    void configure(const Params& params, const config::LinkParams& link, core::Duration host_memory_latency);
    void set_listener(CompletionListener* listener) { listener_ = listener; }
    bool idle() const;
    const RootComplexStats& stats() const { return stats_; }

    tlm::tlm_sync_enum port_fw(int port, Tlp& t, tlm::tlm_phase& p, sc_core::sc_time& d);
    tlm::tlm_sync_enum port_bw(int port, Tlp& t, tlm::tlm_phase& p, sc_core::sc_time& d);

private:
    struct Release {
        int port = 0;
        Tlp tlp;
    };
    struct EgressQueue {
        TimedFifo<Tlp> fifo;
        bool link_ready = true;
    };

    void egress();           // SC_METHOD: completions to their ports as they become ready
    void release_writes();   // SC_METHOD: posted buffers freed once the controller took the write
    void release_reads();    // SC_METHOD: non-posted buffers freed once the read was forwarded
    void notify_semaphores();
    void free_buffer(const Release& r);
    int port_towards(std::uint16_t node) const;

    Params params_;
    std::uint16_t node_id_;
    std::uint32_t completion_bytes_ = 256;
    double memory_latency_ps_ = 0.0;
    std::vector<std::unique_ptr<FwPort<RootComplex>>> fw_;
    std::vector<std::unique_ptr<BwPort<RootComplex>>> bw_;
    std::vector<std::unique_ptr<EgressQueue>> egress_;
    TimedFifo<Release> write_release_;
    TimedFifo<Release> read_release_;
    TimedFifo<std::uint32_t> semaphores_;
    sc_core::sc_event egress_event_;
    CompletionListener* listener_ = nullptr;
    RootComplexStats stats_;
};

}  // namespace dmasim::sim
