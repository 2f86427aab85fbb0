// Strategies: one file each under model/src/strategies/, registered in one table (table()).
//
// A strategy turns a case (strategy, direction, size, options) into the programs the host
// runtime runs — the calls an application makes, as dmaprobe makes them — and into the rows the
// harness measures, each over the interval dmaprobe times. The simulator elaborates the
// platform once and runs a case's programs for it through Engine; the model's mechanisms live in
// the modules (links, bridges, engines, runtime), not here.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "dmasim/config/params.h"
#include "dmasim/sim/fast_forward.h"
#include "dmasim/sim/simulator.h"
#include "dmasim/topology/platform.h"

namespace dmasim::strategies {

// What a strategy may ask of the simulator.
class Engine {
public:
    virtual ~Engine() = default;
    // One program, simulated TLP by TLP.
    virtual sim::ProgramOutcome execute(const config::ModelParams& params, const sim::Program& program) = 0;
    // A family's real program, fast-forwarded when the fidelity allows and the checks pass.
    virtual sim::ProgramOutcome execute(const config::ModelParams& params, const sim::ProgramFamily& family) = 0;
    // build(bytes) at bytes = size mod U + m * U, U the platform's transfer period with `extra`,
    // m from the level of `warmup_bytes` (Simulator::sized_family).
    virtual sim::ProgramFamily sized_family(const config::ModelParams& params, std::uint64_t size, std::uint64_t extra,
                                            std::uint64_t warmup_bytes,
                                            std::function<sim::Program(std::uint64_t bytes)> build) const = 0;
    // A transfer as strategies usually run one: execute(sized_family(...)).
    sim::ProgramOutcome execute_sized(const config::ModelParams& params, std::uint64_t size, std::uint64_t extra,
                                      std::uint64_t warmup_bytes, std::function<sim::Program(std::uint64_t bytes)> build) {
        return execute(params, sized_family(params, size, extra, warmup_bytes, std::move(build)));
    }
    virtual std::uint64_t default_warmup(const config::ModelParams& params) const = 0;
    virtual std::uint64_t transfer_period(const config::ModelParams& params, std::uint64_t extra) const = 0;
    // Runtime device indices of the platform's GPUs or endpoints, in the order users number them.
    virtual std::vector<int> devices_of_kind(topology::NodeKind kind) const = 0;
    virtual std::string device_name(int device) const = 0;
    // The case's platform: its topology is the elaborated one's; its settings and bridges'
    // policies are the case's.
    virtual const topology::Platform& platform() const = 0;
    virtual sim::Fidelity fidelity() const = 0;
    // The case as messages and the timeline name it ("pinned h2d 1MiB").
    virtual const std::string& label() const = 0;
};

// One case as a strategy sees it: what to run, and where its rows go.
struct Case {
    const config::ModelParams& params;
    const sim::CaseSpec& spec;
    std::vector<sim::CopyDirection> dirs;
    sim::CaseResult& result;

    int ndirs() const { return static_cast<int>(dirs.size()); }
    // The program whose links and counts the case reports (links.csv): the main row's.
    void take_main(const sim::ProgramOutcome& o);
};

struct Strategy {
    const char* name;  // as scenarios spell it
    void (*run)(Engine& engine, Case& c);
    // The most runtime calls, waits and kernel launches on the critical path of one of its rows
    // (setup rows aside), where that is known and no other host cost (a CPU copy) is on it: the
    // band of machines may then bound the host's part of a row without simulating a machine
    // (sim/host_band.h). 0: not known.
    int host_calls = 0;
};

// Every strategy the model simulates, in the order docs list them.
const std::vector<Strategy>& table();
// The entry for `name`, or null.
const Strategy* find(const std::string& name);

}  // namespace dmasim::strategies
