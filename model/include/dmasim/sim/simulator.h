// The model as a library: elaborates a platform once, then runs one transfer case after
// another with fresh parameters (SystemC elaborates one module hierarchy per process, so
// everything a sweep varies is applied at run time).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "dmasim/config/params.h"
#include "dmasim/pcie/wire.h"
#include "dmasim/sim/pcie_link.h"
#include "dmasim/topology/platform.h"

namespace dmasim::sim {

class PlatformTop;

struct LinkReport {
    std::string label;  // "gpu0->rc0"
    LinkStats stats;
    double gbps_raw = 0.0;  // link rate after encoding and SKP
};

struct CaseResult {
    double time_ps = 0.0;
    std::vector<LinkReport> links;
    std::uint64_t read_requests = 0;
    std::uint64_t writes = 0;
    std::uint32_t peak_outstanding_reads = 0;
    double host_memory_busy_ps = 0.0;
    std::uint64_t tlps() const;
};

// Which strategies this version simulates, and why not the others.
bool strategy_modelled(const std::string& strategy);

class Simulator {
public:
    // Elaborates `platform`. Only one Simulator may exist per process (a SystemC limit).
    Simulator(topology::Platform platform, const config::ModelParams& params);
    ~Simulator();
    Simulator(const Simulator&) = delete;
    Simulator& operator=(const Simulator&) = delete;

    // One timed transfer: `strategy` pinned or duplex, `direction` h2d, d2h or both, `bytes`
    // per direction. Throws std::invalid_argument for a case the model cannot run and
    // std::runtime_error if the simulation stalls.
    CaseResult run(const config::ModelParams& params, const std::string& strategy, const std::string& direction,
                   std::uint64_t bytes);

    const topology::Platform& platform() const { return *platform_; }

private:
    std::unique_ptr<topology::Platform> platform_;
    std::unique_ptr<PlatformTop> top_;
};

}  // namespace dmasim::sim
