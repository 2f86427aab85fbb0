// The shipped reference hosts against the figures published for their GPUs: 1 GiB-class pinned
// host-to-device copies with default parameters. a100-gen4 and v100-gen3 share one graph, so
// one elaboration runs both, each case with its own platform file's settings.
#include <gtest/gtest.h>

#include "dmasim/config/scenario.h"
#include "dmasim/sim/simulator.h"
#include "dmasim/topology/platform_file.h"

namespace dmasim::sim {
namespace {

constexpr std::uint64_t kMiB = 1 << 20;
// Long enough that the copy's start and end cost < 0.5 % of its time.
constexpr std::uint64_t kSize = 256 * kMiB;

double gbps(Simulator& sim, const config::ModelParams& p, const topology::Platform& host, const char* strategy) {
    const CaseResult r = sim.run(p, CaseSpec{strategy, "h2d", kSize, {}, {}, &host});
    return static_cast<double>(kSize) / (r.time_ps * 1e-12) * 1e-9;
}

double h2d_gbps(Simulator& sim, const config::ModelParams& p, const topology::Platform& host) {
    return gbps(sim, p, host, "pinned");
}

// The parameters a scenario on `platform` runs with: its calibration and its host's values.
config::ModelParams as_run(const std::string& platform) {
    return config::parse_scenarios("platform: " + platform + "\nstrategy: pinned\nsizes: 4KiB\n", "t.yaml", {},
                                   config::CalibrationChoice::platform())
        .at(0)
        .params;
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

// A pageable copy is staged by one CPU thread, so on a host whose thread copies 6 GB/s from DRAM
// (a DGX-1's Broadwell-EP) a large one runs at half the pinned rate of the Gen3 link, and behind
// another host's CPU on the same link at that host's rate (the lent H100 host's 7.98 GB/s). The
// host's values come from the platform file.
TEST(ReferenceHosts, APageableCopyRunsAtTheEraHostsCpuCopyRate) {
    const config::ModelParams v100_host = as_run("v100-gen3");
    const topology::Platform v100 = topology::load_platform("v100-gen3", v100_host);
    Simulator sim(v100, v100_host);
    const double pinned = gbps(sim, v100_host, v100, "pinned");
    const double pageable = gbps(sim, v100_host, v100, "pageable");
    EXPECT_NEAR(pageable, v100_host.cpu.memcpy_bandwidth.gb_per_s(), 0.05 * v100_host.cpu.memcpy_bandwidth.gb_per_s());
    EXPECT_LT(pageable, 0.6 * pinned);
    const config::ModelParams h100_host = as_run("h100-sxm");
    ASSERT_NE(h100_host.cpu.memcpy_bandwidth.bytes_per_s, v100_host.cpu.memcpy_bandwidth.bytes_per_s);
    // That CPU (7.98 GB/s) copies a 64 KiB piece (pageable.h2d_piece) in about the time the Gen3
    // engine takes to start and move it, so the engine's pieces hold the copy a little below it.
    const double other_cpu = gbps(sim, h100_host, v100, "pageable");
    EXPECT_LE(other_cpu, 1.01 * h100_host.cpu.memcpy_bandwidth.gb_per_s());
    EXPECT_GE(other_cpu, 0.9 * h100_host.cpu.memcpy_bandwidth.gb_per_s());
    EXPECT_GT(other_cpu, 1.2 * pageable);
}

}  // namespace
}  // namespace dmasim::sim
