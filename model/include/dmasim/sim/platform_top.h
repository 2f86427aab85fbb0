// The top module: creates the SystemC modules a platform graph describes and binds them.
// It holds no behaviour of its own.
#pragma once

#include <systemc>

#include <memory>
#include <string>
#include <vector>

#include "dmasim/config/params.h"
#include "dmasim/sim/gpu.h"
#include "dmasim/sim/host_runtime.h"
#include "dmasim/sim/memory.h"
#include "dmasim/sim/pcie_link.h"
#include "dmasim/sim/root_complex.h"
#include "dmasim/topology/platform.h"

namespace dmasim::sim {

class PlatformTop : public sc_core::sc_module {
public:
    struct LinkEntry {
        std::string label;  // "rc0->gpu0"
        topology::EdgeId edge;
        std::unique_ptr<PcieLink> link;
    };

    PlatformTop(sc_core::sc_module_name name, const topology::Platform& platform, const config::ModelParams& params);

    // Applies a run's parameters to every module. Links take their parameters from the graph
    // edge, overridden by `params.link` for the links on the GPU's route to the host.
    void configure(const config::ModelParams& params);
    bool idle() const;

    HostRuntime& runtime() { return *runtime_; }
    Gpu& gpu() { return *gpus_.front(); }
    RootComplex& root_complex() { return *root_complexes_.front(); }
    MemoryController& host_memory() { return *host_memories_.front(); }
    const std::vector<LinkEntry>& links() const { return links_; }

private:
    const topology::Platform& platform_;
    std::vector<std::unique_ptr<MemoryController>> host_memories_;
    std::vector<std::unique_ptr<RootComplex>> root_complexes_;
    std::vector<std::unique_ptr<Gpu>> gpus_;
    std::vector<LinkEntry> links_;
    std::unique_ptr<HostRuntime> runtime_;
};

}  // namespace dmasim::sim
