// The model as a library: elaborates a platform once, then runs one case after another with
// fresh parameters (SystemC elaborates one module hierarchy per process, so everything a
// sweep varies is applied at run time). Strategies become programs of runtime calls here.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "dmasim/config/params.h"
#include "dmasim/config/scenario.h"
#include "dmasim/pcie/wire.h"
#include "dmasim/sim/pcie_link.h"
#include "dmasim/topology/platform.h"

namespace dmasim::sim {

class PlatformTop;
struct Program;
struct ProgramOutcome;
struct ProgramFamily;
enum class CopyDirection : std::uint8_t;

// How a case is computed (docs/fast-forward.md): `kFast` simulates long transfers at a few
// reduced sizes and extrapolates exactly when the run is affine in the size (and reuses a
// periodic frame's result while the model is at rest between frames), falling back to TLP level
// otherwise; `kTlp` simulates every TLP. A Tracer forces TLP level: a timeline needs every event.
enum class Fidelity : std::uint8_t { kFast, kTlp };
const char* to_string(Fidelity f);
// "fast" or "tlp"; throws std::invalid_argument for anything else.
Fidelity parse_fidelity(const std::string& text);
// What a Simulator starts with (kFast unless set): `dmasim --fidelity` sets it once per
// command, before the processes that simulate are forked.
void set_default_fidelity(Fidelity f);
Fidelity default_fidelity();

struct LinkReport {
    std::string label;  // "gpu0->rc0"
    LinkStats stats;
    double gbps_raw = 0.0;  // link rate after encoding and SKP
};

// One results row of a case: the main measurement (variant "") or a sub-case, named as the
// harness names them ("setup=register", "amortised_10", "serial", "p99", "misses").
struct RowResult {
    std::string variant;
    double time_ps = 0.0;
    int directions = 1;
    std::string note;
    double p10_ps = 0.0, p90_ps = 0.0, min_ps = 0.0, max_ps = 0.0;  // spread (periodic frames)
    // "ok", or "not_modelled" for a case whose mechanism this version lacks (the note says
    // which): a clear answer per row instead of a number the model cannot back.
    std::string status = "ok";
    // The host memory traffic of the program the row times (ProgramOutcome), where the row is
    // one program's: a copy's, a pair's; not a per-hop latency, a frame or a setup cost.
    bool host_bytes = false;
    std::uint64_t host_read_bytes = 0;
    std::uint64_t host_written_bytes = 0;
};

struct CaseSpec {
    std::string strategy;
    std::string direction;  // h2d, d2h, both
    std::uint64_t bytes = 0;
    config::StrategyOptions options;
    std::string label;  // names the case on the timeline (default: strategy, direction, size)
    // The case's own load of the platform (same topology, this case's link settings); null:
    // the elaborated platform's.
    const topology::Platform* platform = nullptr;
    // The scenario file the case comes from: a failure names it.
    std::string origin{};
};

// A case the simulation could not finish: it deadlocked (no event left to run, work still
// unfinished) or ran past its simulated-time budget (see Watchdog). The message names the
// scenario file and the case. The model is left mid-case, so the Simulator refuses every later
// run with this error too: a process that catches it must not go on simulating.
class SimulationError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

// Every program runs under a simulated-time budget of `factor` x an estimate of its duration
// plus `margin`. The estimate is generous (each operation costed alone, its bytes at the
// slowest rate on the platform, its requests a round trip per window of tags or credits), so a
// case that needs more than the budget is one that runs away, not a slow one.
struct Watchdog {
    double factor = 100.0;
    core::Duration margin{10'000'000'000};  // 10 ms
};

struct CaseResult {
    std::vector<RowResult> rows;     // rows.front() is the main measurement
    std::vector<LinkReport> links;   // what the links carried during the main program
    std::uint64_t read_requests = 0;
    std::uint64_t writes = 0;
    std::uint32_t peak_outstanding_reads = 0;
    std::uint64_t host_memory_bytes = 0;  // read + written in host DRAM during the main program
    double time_ps = 0.0;            // rows.front().time_ps
    // The simulated time `links` were gathered over: the whole main program (every frame of a
    // periodic case, every hop of a chase), which rows.front() need not be. Busy fractions are
    // over this, so never above 1.
    double links_interval_ps = 0.0;
    // How the main program was computed: empty when simulated TLP by TLP, else how it was
    // fast-forwarded (the same text ends the note of each row it gave).
    std::string fast_forward;
    std::uint64_t tlps() const;
};

// Which strategies this version simulates.
bool strategy_modelled(const std::string& strategy);
const char* modelled_strategies();

class Simulator {
public:
    // Elaborates `platform`. Only one Simulator may exist per process (a SystemC limit).
    Simulator(topology::Platform platform, const config::ModelParams& params);
    ~Simulator();
    Simulator(const Simulator&) = delete;
    Simulator& operator=(const Simulator&) = delete;

    // Throws std::invalid_argument for a case the model cannot run and SimulationError when the
    // simulation deadlocks or runs past its budget.
    CaseResult run(const config::ModelParams& params, const CaseSpec& spec);
    CaseResult run(const config::ModelParams& params, const std::string& strategy, const std::string& direction,
                   std::uint64_t bytes);
    // Several transfers at once (contention): one row per flow, variant "flow=<name>", its time
    // from its own start to its completion. `platform` as in CaseSpec.
    CaseResult run_flows(const config::ModelParams& params, const std::vector<config::FlowSpec>& flows,
                         const topology::Platform* platform = nullptr, const std::string& label = {},
                         const std::string& origin = {});

    const topology::Platform& platform() const { return *platform_; }
    // Tests shrink the budget to see the watchdog stop a case.
    void set_watchdog(const Watchdog& w) { watchdog_ = w; }
    const Watchdog& watchdog() const { return watchdog_; }
    void set_fidelity(Fidelity f) { fidelity_ = f; }
    Fidelity fidelity() const { return fidelity_; }

    // One program as built in code (sim::Program), simulated TLP by TLP: what the strategies
    // run, for tests of the runtime's own mechanisms and tools that build programs of their own.
    ProgramOutcome execute(const config::ModelParams& params, const Program& program);

    // The host memory a program's writes cover: its largest device-to-host copy's end in its
    // host buffers, or a mapped kernel's writes (root_complex.io_cache).
    static std::uint64_t host_write_extent(const Program& program);

private:
    // The family's real program, fast-forwarded when the fidelity allows and the checks pass.
    ProgramOutcome execute(const config::ModelParams& params, const ProgramFamily& family);
    // Byte period of everything that splits a transfer on this platform (MPS, MRRS, completions,
    // engine requests, NVLink packets, CPU stores and loads) times `extra`; 0 when too large.
    std::uint64_t transfer_period(const config::ModelParams& params, std::uint64_t extra) const;
    // A family whose every member is build(bytes) at bytes = size mod U + m * U, U the transfer
    // period with `extra`, m >= the level of `warmup_bytes`.
    ProgramFamily sized_family(const config::ModelParams& params, std::uint64_t size, std::uint64_t extra,
                               std::uint64_t warmup_bytes, std::function<Program(std::uint64_t bytes)> build) const;
    std::uint64_t default_warmup(const config::ModelParams& params) const;
    // The largest I/O cache a transfer's writes fill before they evict (0: none that matters).
    std::uint64_t io_cache_bytes(const config::ModelParams& params) const;
    Fidelity fidelity_ = default_fidelity();
    [[noreturn]] void fail(const std::string& what);
    std::string trace_label_;
    std::string origin_;
    std::string failed_;  // why the model was left mid-case; empty while it is usable
    Watchdog watchdog_;
    const topology::Platform* links_from_ = nullptr;
    std::vector<int> devices_of_kind(topology::NodeKind kind) const;
    std::string device_name(int device) const;
    // The strategies (model/src/strategies/) run their programs through it.
    friend class SimulatorEngine;

    std::unique_ptr<topology::Platform> platform_;
    std::unique_ptr<PlatformTop> top_;
};

}  // namespace dmasim::sim
