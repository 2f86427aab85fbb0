// Two GPUs on two root ports: each has its own link, so two host copies do not slow each other.
#include <gtest/gtest.h>

#include "dmasim/sim/simulator.h"
#include "dmasim/topology/platform_file.h"

namespace dmasim::sim {
namespace {

constexpr std::uint64_t kMiB = 1 << 20;

TEST(Contention, TwoGpusOnTwoRootPortsEachGetTheFullLink) {
    Simulator sim(topology::load_platform("2gpu-rootports", config::ModelParams{}), config::ModelParams{});
    config::ModelParams p;
    config::FlowSpec a;
    a.name = "a";
    a.size = 128 * kMiB;
    config::FlowSpec b = a;
    b.name = "b";
    b.device = 1;
    const double alone = sim.run_flows(p, {a}).rows[0].time_ps;
    const CaseResult both = sim.run_flows(p, {a, b});
    for (const auto& r : both.rows) { EXPECT_NEAR(r.time_ps / alone, 1.0, 0.02) << r.variant; }
    // Peer traffic between them turns around in the root complex.
    config::StrategyOptions o;
    o.peer.access = "on";
    const CaseResult peer = sim.run(p, CaseSpec{"peer", "h2d", 32 * kMiB, o, {}, nullptr});
    for (const auto& l : peer.links) {
        if (l.label == "gpu0->rc0" || l.label == "rc0->gpu1") { EXPECT_GE(l.stats.payload_bytes, 32 * kMiB) << l.label; }
    }
}

}  // namespace
}  // namespace dmasim::sim
