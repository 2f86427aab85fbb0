// Two GPUs joined by NVLink, each on its own root port (the lent 2xH200 machine).
#include <gtest/gtest.h>

#include "dmasim/pcie/wire.h"
#include "dmasim/sim/simulator.h"
#include "dmasim/topology/platform_file.h"

namespace dmasim::sim {
namespace {

constexpr std::uint64_t kMiB = 1 << 20;

Simulator& simulator() {
    static Simulator s(topology::load_platform("h200x2-nvlink", config::ModelParams{}), config::ModelParams{});
    return s;
}

const RowResult& row(const CaseResult& r, const std::string& variant) {
    for (const auto& x : r.rows) {
        if (x.variant == variant) return x;
    }
    throw std::runtime_error("no row " + variant);
}

CaseResult peer(const config::ModelParams& p, const std::string& dir, std::uint64_t bytes, const std::string& access) {
    config::StrategyOptions o;
    o.peer.access = access;
    return simulator().run(p, CaseSpec{"peer", dir, bytes, o, {}});
}

double gbps(double ps, std::uint64_t bytes, int dirs = 1) { return static_cast<double>(bytes) * dirs / (ps * 1e-12) * 1e-9; }

TEST(Peer, NvlinkCopyApproachesTheBondRate) {
    config::ModelParams p;
    const CaseResult r = peer(p, "h2d", 256 * kMiB, "on");
    const double payload = static_cast<double>(p.nvlink.max_payload.value);
    const double bound = static_cast<double>(p.nvlink.links) * p.nvlink.link_rate.gb_per_s() * payload /
                         (payload + static_cast<double>(p.nvlink.packet_overhead.value));
    const double got = gbps(row(r, "peer=on").time_ps, 256 * kMiB);
    EXPECT_LT(got, bound);
    EXPECT_GT(got, 0.95 * bound);
    // The data went over NVLink, not through the host.
    EXPECT_LT(r.host_memory_bytes, 1024U);
    // Half the links, half the rate.
    p.nvlink.links = 9;
    EXPECT_NEAR(gbps(row(peer(p, "h2d", 256 * kMiB, "on"), "peer=on").time_ps, 256 * kMiB) / got, 0.5, 0.03);
}

TEST(Peer, NvlinkCarriesFlitsAtTheQuotedRateBehindTwoHeaderFlits) {
    // NVIDIA quotes 900 GB/s for 18 NVLink-4 links, both directions: 25 GB/s per link and
    // direction. A write carries two 16-byte header flits: NCCL's maintainers give ~20 of 25 GB/s
    // for 128-byte writes, and copy engines write 256 bytes, so a copy gets 256/288 of 450 GB/s.
    config::ModelParams p;
    EXPECT_DOUBLE_EQ(static_cast<double>(p.nvlink.links) * p.nvlink.link_rate.gb_per_s() * 2, 900.0);
    const double ce = gbps(row(peer(p, "h2d", 256 * kMiB, "on"), "peer=on").time_ps, 256 * kMiB);
    EXPECT_NEAR(ce, 450.0 * 256 / 288, 0.02 * 400) << "measured on the 2xH200: 393 GB/s at 256 MiB";
    p.nvlink.max_payload = config::Bytes{128};
    const double sm_sized = gbps(row(peer(p, "h2d", 256 * kMiB, "on"), "peer=on").time_ps, 256 * kMiB);
    EXPECT_NEAR(sm_sized / 450.0, 0.8, 0.02) << "128-byte writes: 20 of every 25 GB/s";
}

TEST(Peer, BothWaysUseBothDirectionsOfTheBond) {
    config::ModelParams p;
    const double one = row(peer(p, "h2d", 128 * kMiB, "on"), "peer=on").time_ps;
    const double both = row(peer(p, "both", 128 * kMiB, "on"), "peer=on").time_ps;
    EXPECT_NEAR(both / one, 1.0, 0.05);
}

TEST(Peer, StagedCopyCostsAboutTwoHostCopiesLessTheOverlap) {
    config::ModelParams p;
    const CaseResult off = peer(p, "h2d", 64 * kMiB, "off");
    const double staged = row(off, "peer=off").time_ps;
    const double d2h = simulator().run(p, "pinned", "d2h", 64 * kMiB).time_ps;
    const double h2d = simulator().run(p, "pinned", "h2d", 64 * kMiB).time_ps;
    // Every byte crosses host memory twice: written by GPU 0, read by GPU 1.
    EXPECT_GE(off.host_memory_bytes, 2 * 64 * kMiB);
    // Chunks pipeline over the two GPUs' own links: between one host copy and two.
    EXPECT_GT(staged, std::max(d2h, h2d));
    EXPECT_LT(staged, d2h + h2d);
    // With one bounce buffer nothing overlaps: about two host copies.
    p.pageable.bounce_buffers = 1;
    const double serial = row(peer(p, "h2d", 64 * kMiB, "off"), "peer=off").time_ps;
    EXPECT_GT(serial, 0.9 * (d2h + h2d));
    EXPECT_GT(serial, staged);
}

}  // namespace
}  // namespace dmasim::sim
