// The top module: creates the SystemC modules a platform graph describes and binds them.
// It holds no behaviour of its own.
//   CPU node        -> a host memory controller
//   root complex    -> RootComplex bound to its socket's memory
//   PCIe switch     -> RootComplex without memory
//   GPU, endpoint   -> Gpu (a capture card is a device with DMA engines and a buffer memory)
//   PCIe edge       -> two PcieLink modules, one per direction, paired for their DLLPs
//   NVLink edge     -> two PcieLink modules in NVLink mode
#pragma once

#include <systemc>

#include <memory>
#include <string>
#include <vector>

#include "dmasim/config/params.h"
#include "dmasim/sim/fabric.h"
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

    // Applies a run's parameters to every module; each link takes the settings of its edge in
    // `links_from` (the same platform, loaded with the case's parameters).
    void configure(const config::ModelParams& params, const topology::Platform& links_from);
    bool idle() const;
    // The first part not at rest (a link, bridge or device, by name), empty when all are.
    std::string busy_part() const;
    void flush_trace();

    HostRuntime& runtime() { return *runtime_; }
    // Devices (GPUs and other endpoints) in node order; device(i) is what Op::gpu = i means.
    Gpu& device(std::size_t i) { return *devices_[i]; }
    std::size_t device_count() const { return devices_.size(); }
    int device_index(const std::string& node_name) const;  // -1 if none
    MemoryController& host_memory() { return *host_memories_.front(); }
    const std::vector<LinkEntry>& links() const { return links_; }
    const std::vector<std::unique_ptr<RootComplex>>& bridges() const { return bridges_; }
    FabricScheduler& fabric() { return fabric_; }

private:
    const topology::Platform& platform_;
    FabricScheduler fabric_;  // first: the packet-level modules built after it use it
    std::vector<std::unique_ptr<MemoryController>> host_memories_;
    std::vector<std::unique_ptr<RootComplex>> bridges_;
    std::vector<std::uint16_t> bridge_nodes_;  // bridges_[i] is node bridge_nodes_[i]
    std::vector<std::unique_ptr<Gpu>> devices_;
    std::vector<std::string> device_names_;
    std::vector<std::uint16_t> device_nodes_;
    std::vector<LinkEntry> links_;
    std::unique_ptr<HostRuntime> runtime_;
};

}  // namespace dmasim::sim
