// A GPU as a PCIe (and NVLink) endpoint: its copy engines, the traffic its SMs make to mapped
// host memory (zero-copy loads and stores), its memory, and its ports. The egress arbiter takes
// TLPs round-robin from every source whose next TLP's port can take one, so copies, kernels and
// answers to BAR reads share a port the way they share the GPU's PCIe interface; the SMs' two
// units among them leave in the order their TLPs were issued (gpu.sysmem_in_order), and a copy
// engine's TLP waits behind every one of theirs towards its port issued before it reached the
// arbiter (gpu.copies_in_order), while theirs do not wait for it: the SMs go first. With
// dma.egress_queue the copy engines' TLPs towards a PCIe link first enter one queue per port, in
// order, up to that many bytes: that queue is then one source, and a request of one engine leaves
// only after the writes another engine queued before it. Writes from
// others (a peer GPU, a capture card, the CPU through the BAR) land in GPU memory; reads of the
// BAR are answered with completions.
#pragma once

#include <systemc>
#include <tlm>

#include <memory>
#include <string>
#include <vector>

#include "dmasim/config/params.h"
#include "dmasim/sim/dma_engine.h"
#include "dmasim/sim/memory.h"
#include "dmasim/sim/ring.h"
#include "dmasim/sim/timed_fifo.h"
#include "dmasim/sim/tlp.h"

namespace dmasim::sim {

struct GpuStats {
    std::uint64_t bytes_written_by_others = 0;  // peer / third-party / CPU writes into GPU memory
    std::uint64_t bar_reads = 0;
};

class Gpu : public sc_core::sc_module {
public:
    // Engines are elaborated once; a run may use any number up to this.
    static constexpr int kMaxEngines = 16;
    // SM traffic to mapped host memory goes through two more request units, after the engines.
    static constexpr int kSmReadUnit = kMaxEngines;
    static constexpr int kSmWriteUnit = kMaxEngines + 1;
    static constexpr int kUnits = kSmWriteUnit + 1;

    struct Port {
        Port(const std::string& name, std::uint16_t peer_node)
            : egress((name + "_egress").c_str()), ingress((name + "_ingress").c_str()), peer(peer_node) {}
        TlpInitiatorSocket egress;
        TlpTargetSocket ingress;
        std::uint16_t peer;
    };

    std::vector<std::unique_ptr<Port>> ports;
    MemoryController memory;
    MemoryPort bar;  // what others write or read through the BAR reaches memory through here
    std::vector<std::unique_ptr<DmaEngine>> engines;  // copy engines, then the two SM units

    Gpu(sc_core::sc_module_name name, std::uint16_t node_id, const config::ModelParams& params,
        const std::vector<std::uint16_t>& peers);

    void set_route(std::uint16_t destination, int port);
    void configure(const config::ModelParams& params);
    // The same with this device's own copy engines and link: a capture card's DMA engine
    // (card_dma) on its own link (its MPS and MRRS), where a GPU's engines take dma.* and link.*.
    void configure(const config::ModelParams& params, const config::DmaParams& engines, const config::LinkParams& link);
    // Which ports' engine traffic goes through the queue of dma.egress_queue (1: a PCIe link);
    // after configure, which queues every port.
    void set_queued_ports(const std::vector<std::uint8_t>& queued);
    int active_engines() const { return engine_count_; }
    DmaEngine& engine(int i) { return *engines[static_cast<std::size_t>(i)]; }
    std::uint16_t node_id() const { return node_id_; }
    const GpuStats& stats() const { return stats_; }
    bool idle() const;

    tlm::tlm_sync_enum port_fw(int port, Tlp& t, tlm::tlm_phase& p, sc_core::sc_time& d);
    tlm::tlm_sync_enum port_bw(int port, Tlp& t, tlm::tlm_phase& p, sc_core::sc_time& d);

private:
    struct Out {
        Tlp tlp;
    };
    void arbitrate();  // on the doorbell and on answers to BAR reads coming due
    int port_towards(std::uint16_t node) const;
    bool send(int port, Tlp t);
    void set_ready(int port, bool ready);  // whether the port's link takes a TLP now
    bool sm_turn(int unit);  // whether an SM unit's offered TLP is next in the SMs' queue
    // gpu.copies_in_order: the earliest issue time of what the SM units hold towards `port` (a
    // TLP offered, or a due warp's read waiting for a tag); false if there is none.
    bool sm_waiting(int port, double& since_ps);
    // Whether a copy TLP that reached the arbiter (or its copy queue) at `since_ps` may go
    // towards `port`: no SM traffic issued before it waits there.
    bool copy_turn(int port, double since_ps);
    void fill_copy_queues();  // the engines' offered TLPs into their ports' queues, while there is room
    bool send_queued();       // the head of a queue whose port takes a TLP; false if none

    // The copy engines' queue towards one port (dma.egress_queue) and the payload it holds.
    struct CopyQueue {
        Ring<Tlp> tlps{16};
        Ring<double> since{16};  // when each was issued (DmaEngine::offered_since_ps)
        std::uint64_t bytes = 0;
    };
    // In sources_ where the copy engines' queues take their turn.
    static constexpr int kCopyQueues = -1;

    std::uint16_t node_id_;
    int engine_count_ = 0;
    std::size_t next_source_ = 0;
    std::uint32_t completion_bytes_ = 256;
    bool sm_in_order_ = true;  // GpuParams::sysmem_in_order
    bool copies_in_order_ = true;  // GpuParams::copies_in_order
    std::vector<int> sources_;  // engines taking part in arbitration this run
    std::uint64_t copy_queue_cap_ = 0;  // dma.egress_queue; 0: no queue
    std::vector<CopyQueue> copy_queues_;  // per port
    std::vector<std::uint8_t> port_queued_;  // per port: its engine traffic takes the queue
    int next_fill_ = 0;                   // the engine whose TLP the queues take next
    std::size_t next_queue_port_ = 0;     // the port whose queue sends next
    std::vector<std::uint8_t> link_ready_;  // per port: 1 while its link takes a TLP
    std::size_t ready_ports_ = 0;
    std::vector<int> route_;
    std::vector<std::unique_ptr<FwPort<Gpu>>> fw_;
    std::vector<std::unique_ptr<BwPort<Gpu>>> bw_;
    TimedHeap<Out, FabricEvent> completions_;  // answers to BAR reads
    Doorbell doorbell_;
    GpuStats stats_;
};

}  // namespace dmasim::sim
