// A GPU as a PCIe endpoint: its copy engines, the traffic its SMs make to mapped host memory
// (zero-copy loads and stores), its memory, and the one port they all share. The egress
// arbiter takes TLPs round-robin from every source that has one whenever the link will accept
// one, so copies and kernels share the link the way they share the GPU's PCIe port.
#pragma once

#include <systemc>
#include <tlm>

#include <memory>
#include <vector>

#include "dmasim/config/params.h"
#include "dmasim/sim/dma_engine.h"
#include "dmasim/sim/memory.h"
#include "dmasim/sim/tlp.h"

namespace dmasim::sim {

class Gpu : public sc_core::sc_module, private TlpFwOnly, private TlpBwOnly {
public:
    SC_HAS_PROCESS(Gpu);
    // Engines are elaborated once; a run may use any number up to this.
    static constexpr int kMaxEngines = 16;
    // SM traffic to mapped host memory goes through two more request units, after the engines.
    static constexpr int kSmReadUnit = kMaxEngines;
    static constexpr int kSmWriteUnit = kMaxEngines + 1;

    TlpInitiatorSocket egress;  // to the uplink's tx
    TlpTargetSocket ingress;    // from the downlink's rx
    MemoryController memory;
    std::vector<std::unique_ptr<DmaEngine>> engines;  // copy engines, then the two SM units

    Gpu(sc_core::sc_module_name name, std::uint16_t node_id, const config::ModelParams& params);

    void configure(const config::ModelParams& params);
    int active_engines() const { return engine_count_; }
    DmaEngine& engine(int i) { return *engines[static_cast<std::size_t>(i)]; }
    std::uint16_t node_id() const { return node_id_; }

private:
    tlm::tlm_sync_enum nb_transport_fw(Tlp& t, tlm::tlm_phase& p, sc_core::sc_time& d) override;
    tlm::tlm_sync_enum nb_transport_bw(Tlp& t, tlm::tlm_phase& p, sc_core::sc_time& d) override;
    void arbitrate();  // SC_METHOD

    std::uint16_t node_id_;
    int engine_count_ = 0;
    std::vector<int> sources_;  // engines taking part in arbitration this run
    int next_engine_ = 0;
    bool link_ready_ = true;
    sc_core::sc_event kick_;
};

}  // namespace dmasim::sim
