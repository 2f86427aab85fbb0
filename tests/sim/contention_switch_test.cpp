// Two GPUs under one PCIe switch: flows that share the uplink share its bandwidth; a peer copy
// between them stays below the root complex.
#include <gtest/gtest.h>

#include "dmasim/pcie/wire.h"
#include "dmasim/sim/simulator.h"
#include "dmasim/topology/platform_file.h"

namespace dmasim::sim {
namespace {

constexpr std::uint64_t kMiB = 1 << 20;

Simulator& simulator() {
    static Simulator s(topology::load_platform("workstation-2gpu-switch", config::ModelParams{}), config::ModelParams{});
    return s;
}

double gbps(double ps, std::uint64_t bytes) { return static_cast<double>(bytes) / (ps * 1e-12) * 1e-9; }

config::FlowSpec flow(const char* name, std::int64_t device, std::uint64_t bytes) {
    config::FlowSpec f;
    f.name = name;
    f.device = device;
    f.size = bytes;
    return f;
}

TEST(Contention, TwoGpusPullingThroughOneUplinkGetHalfEach) {
    config::ModelParams p;
    const double alone = gbps(simulator().run_flows(p, {flow("a", 0, 128 * kMiB)}).rows[0].time_ps, 128 * kMiB);
    const CaseResult both = simulator().run_flows(p, {flow("a", 0, 128 * kMiB), flow("b", 1, 128 * kMiB)});
    for (const auto& r : both.rows) { EXPECT_NEAR(gbps(r.time_ps, 128 * kMiB) / alone, 0.5, 0.03) << r.variant; }
    // The uplink carried both flows' completions.
    for (const auto& l : both.links) {
        if (l.label == "rc0->sw0") { EXPECT_EQ(l.stats.payload_bytes, 2 * 128 * kMiB); }
    }
}

TEST(Contention, ALaterFlowSlowsAnEarlierOneOnlyWhileTheyOverlap) {
    config::ModelParams p;
    config::FlowSpec late = flow("late", 1, 16 * kMiB);
    late.start = core::Duration{1'000'000'000};  // 1 ms in, while the first is still running
    const CaseResult r = simulator().run_flows(p, {flow("early", 0, 128 * kMiB), late});
    const double alone_early = simulator().run_flows(p, {flow("early", 0, 128 * kMiB)}).rows[0].time_ps;
    EXPECT_GT(r.rows[0].time_ps, alone_early);
    // The early flow lost about what the late one took: 16 MiB worth of uplink time.
    EXPECT_NEAR(r.rows[0].time_ps - alone_early, 16.0 * kMiB * (alone_early / (128.0 * kMiB)), 0.05 * alone_early / 8);
}

TEST(Peer, UnderOneSwitchItAvoidsTheRootComplex) {
    config::ModelParams p;
    config::StrategyOptions o;
    o.peer.access = "on";
    const CaseResult r = simulator().run(p, CaseSpec{"peer", "h2d", 64 * kMiB, o, {}, nullptr});
    for (const auto& l : r.links) {
        if (l.label == "sw0->rc0" || l.label == "rc0->sw0") { EXPECT_LT(l.stats.payload_bytes, 64U) << l.label; }
        if (l.label == "sw0->gpu1") { EXPECT_EQ(l.stats.payload_bytes, 64 * kMiB); }
    }
    EXPECT_LT(r.host_memory_bytes, 64U);
}

}  // namespace
}  // namespace dmasim::sim
