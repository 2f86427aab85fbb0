// The watchdog (issue 11): a case that slips past validation and deadlocks or runs away ends in
// a SimulationError naming the scenario file and the case, never in a hang.
//
// A model the watchdog stopped is left mid-case, and SystemC elaborates once per process, so
// every test elaborates its own model in a child process (a death test); the test process
// itself never elaborates.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <functional>

#include "dmasim/sim/simulator.h"
#include "dmasim/topology/platform_file.h"

namespace dmasim::sim {
namespace {

constexpr int kSimulationError = 3;
constexpr int kOtherError = 4;

// Runs `body` against a fresh h100-sxm model and exits: 0 when it returns, 3 with the message
// on stderr for a SimulationError, 4 for any other exception.
[[noreturn]] void in_child(const std::function<void(Simulator&)>& body) {
    try {
        Simulator sim(topology::load_platform("h100-sxm", config::ModelParams{}), config::ModelParams{});
        body(sim);
    } catch (const SimulationError& e) {
        std::fprintf(stderr, "SimulationError: %s\n", e.what());
        std::fflush(stderr);
        std::_Exit(kSimulationError);
    } catch (const std::exception& e) {
        std::fprintf(stderr, "other error: %s\n", e.what());
        std::fflush(stderr);
        std::_Exit(kOtherError);
    }
    std::_Exit(0);
}

// The case issue 11 found: async_overlap with fewer bytes than streams gives a stream an empty
// chunk, which never completes on a copy engine. Validation refuses it now; built here
// directly, it must still end in a clear error. The GPU's front end would write an empty
// host-to-device chunk itself (runtime.front_end_h2d_max), or read it with the work
// (runtime.command_fetch_bandwidth), so these parameters send it to the copy engine's own read,
// where it deadlocks as it did.
config::ModelParams deadlocking() {
    config::ModelParams p;
    p.runtime.front_end_h2d_max = core::Bytes{0};
    p.runtime.command_fetch_bandwidth = core::Bandwidth{0.0};
    return p;
}

CaseSpec async_below_streams() {
    config::StrategyOptions o;
    o.async_overlap.streams = 4;
    CaseSpec spec{"async_overlap", "both", 3, o, "overlap: async_overlap both 3B"};
    spec.origin = "scenarios/overlap.yaml";
    return spec;
}

TEST(Watchdog, DeadlockNamesTheScenarioFileAndTheCase) {
    EXPECT_EXIT(in_child([](Simulator& sim) { sim.run(deadlocking(), async_below_streams()); }),
                ::testing::ExitedWithCode(kSimulationError),
                "SimulationError: scenarios/overlap.yaml: overlap: async_overlap both 3B: deadlock: no event is left "
                "to run after .* operations unfinished, the first op [0-9]+: copy h2d of 0B");
}

TEST(Watchdog, RunawayStopsAtTheSimulatedTimeBudget) {
    // A budget of a thousandth of the estimate: any real copy runs past it, as a runaway would.
    EXPECT_EXIT(in_child([](Simulator& sim) {
                    sim.set_watchdog(Watchdog{1e-3, core::Duration{0}});
                    CaseSpec spec{"pinned", "h2d", 64 << 20, {}, "big: pinned h2d 64MiB"};
                    spec.origin = "scenarios/big.yaml";
                    sim.run(config::ModelParams{}, spec);
                }),
                ::testing::ExitedWithCode(kSimulationError),
                "SimulationError: scenarios/big.yaml: big: pinned h2d 64MiB: ran past its simulated-time budget of "
                ".*: stopped after .* of simulated time, 1 of 1 operations unfinished");
}

// The campaign's `link.latency: 1000000s`, built here past the parameter checks: the case would
// outrun SystemC's 64-bit picosecond clock (about 213 days), and is refused before it starts.
TEST(Watchdog, ACaseLongerThanTheSimulatedClockIsRefusedBeforeItStarts) {
    EXPECT_EXIT(in_child([](Simulator& sim) {
                    config::ModelParams p;
                    p.link.latency = core::Duration{std::int64_t{1000000} * 1000 * 1000 * 1000 * 1000};
                    CaseSpec spec{"pinned", "h2d", 64 << 20, {}, "slow: pinned h2d 64MiB"};
                    spec.origin = "scenarios/slow.yaml";
                    try {
                        sim.run(p, spec);
                    } catch (const SimulationError& e) {
                        std::fprintf(stderr, "%s\n", e.what());
                    }
                    // Nothing ran, so the model takes the next case.
                    sim.run(config::ModelParams{}, "pinned", "h2d", 4096);
                }),
                ::testing::ExitedWithCode(0),
                "scenarios/slow.yaml: slow: pinned h2d 64MiB: needs up to .* of simulated time, more than SystemC's "
                "clock has left");
}

TEST(Watchdog, FlowsAreWatchedToo) {
    EXPECT_EXIT(in_child([](Simulator& sim) {
                    sim.set_watchdog(Watchdog{1e-3, core::Duration{0}});
                    config::FlowSpec a;
                    a.name = "a";
                    a.size = 64 << 20;
                    sim.run_flows(config::ModelParams{}, {a}, nullptr, "two: flows", "scenarios/two.yaml");
                }),
                ::testing::ExitedWithCode(kSimulationError),
                "SimulationError: scenarios/two.yaml: two: flows: ran past its simulated-time budget");
}

TEST(Watchdog, AModelLeftMidCaseRefusesLaterCases) {
    EXPECT_EXIT(in_child([](Simulator& sim) {
                    try {
                        sim.run(deadlocking(), async_below_streams());
                    } catch (const SimulationError&) {
                    }
                    sim.run(config::ModelParams{}, "pinned", "h2d", 4096);
                }),
                ::testing::ExitedWithCode(kSimulationError),
                "SimulationError: the model was left mid-case by an earlier failure .*async_overlap both 3B: deadlock");
}

// The budget must never stop a case that is merely slow: one read tag, one posted-header credit
// and 128-byte requests make every request wait for a round trip.
TEST(Watchdog, SlowButLegalCasesFinishUnderTheDefaultBudget) {
    EXPECT_EXIT(in_child([](Simulator& sim) {
                    config::ModelParams p;
                    p.dma.max_read_requests = 1;
                    p.link.mrrs = core::Bytes{128};
                    p.link.mps = core::Bytes{128};
                    p.link.credits_posted_header = 1;
                    p.link.credits_nonposted_header = 1;
                    for (const char* dir : {"h2d", "d2h"}) {
                        const CaseResult r = sim.run(p, "pinned", dir, 4 << 20);
                        const CaseResult fast = sim.run(config::ModelParams{}, "pinned", dir, 4 << 20);
                        // Far slower than the default link, and finished all the same.
                        if (!(r.time_ps > 2.0 * fast.time_ps)) std::_Exit(5);
                    }
                    config::StrategyOptions chase;
                    chase.zero_copy.pattern = "chase";
                    chase.zero_copy.hops = 20000;
                    sim.run(p, CaseSpec{"zero_copy", "h2d", 4096, chase, {}});
                    sim.run(p, "cpu_mapped", "d2h", 1 << 20);
                }),
                ::testing::ExitedWithCode(0), "");
}

}  // namespace
}  // namespace dmasim::sim
