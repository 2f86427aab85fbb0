// The shipped reference hosts against the figures published for their GPUs: 1 GiB-class pinned
// host-to-device copies with default parameters. a100-gen4 and v100-gen3 share one graph, so
// one elaboration runs both, each case with its own platform file's settings.
#include <gtest/gtest.h>

#include "dmasim/sim/simulator.h"
#include "dmasim/topology/platform_file.h"

namespace dmasim::sim {
namespace {

constexpr std::uint64_t kMiB = 1 << 20;
// Long enough that the copy's start and end cost < 0.5 % of its time.
constexpr std::uint64_t kSize = 256 * kMiB;

double h2d_gbps(Simulator& sim, const config::ModelParams& p, const topology::Platform& host) {
    const CaseResult r = sim.run(p, CaseSpec{"pinned", "h2d", kSize, {}, {}, &host});
    return static_cast<double>(kSize) / (r.time_ps * 1e-12) * 1e-9;
}

TEST(ReferenceHosts, PinnedHostToDeviceIsWithinFivePercentOfPublishedFigures) {
    const config::ModelParams p;
    const topology::Platform a100 = topology::load_platform("a100-gen4", p);
    const topology::Platform v100 = topology::load_platform("v100-gen3", p);
    Simulator sim(a100, p);
    // A100 SXM4 on Gen4 x16: 25.1 GB/s published.
    EXPECT_NEAR(h2d_gbps(sim, p, a100), 25.1, 0.05 * 25.1);
    // V100 on Gen3 x16: 12-13 GB/s published.
    const double v = h2d_gbps(sim, p, v100);
    EXPECT_GE(v, 0.95 * 12.0);
    EXPECT_LE(v, 1.05 * 13.0);
}

}  // namespace
}  // namespace dmasim::sim
