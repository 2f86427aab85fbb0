// A root complex's own settings, from its node in the platform file: the completion size it
// cuts host-memory reads into decides what a host-to-device copy costs on the wire.
#include <gtest/gtest.h>

#include "dmasim/pcie/wire.h"
#include "dmasim/sim/simulator.h"
#include "dmasim/topology/platform_file.h"

namespace dmasim::sim {
namespace {

constexpr std::uint64_t kMiB = 1 << 20;

const char* const kPlatform =
    "name: old-host\nnodes:\n  - {name: cpu0, kind: cpu}\n"
    "  - {name: rc0, kind: root_complex, completion_size: 64B}\n  - {name: gpu0, kind: gpu}\n"
    "links:\n  - {a: cpu0, b: rc0, kind: internal}\n  - {a: rc0, b: gpu0, generation: 4, lanes: 16}\n";

const LinkReport& downstream(const CaseResult& r) {
    for (const auto& l : r.links) {
        if (l.label == "rc0->gpu0") return l;
    }
    throw std::runtime_error("no rc0->gpu0 link in the report");
}

TEST(RootComplexNode, CompletionSizeFromThePlatformFileSetsTheWireCost) {
    const config::ModelParams p;  // the scenario says 128-byte completions
    Simulator sim(topology::parse_platform(kPlatform, "old-host.yaml", p), p);
    const topology::Platform node64 = topology::parse_platform(kPlatform, "old-host.yaml", p);
    // A scenario that sets the key explicitly overrides the file (a what-if on that machine).
    const topology::Platform node128 =
        topology::parse_platform(kPlatform, "old-host.yaml", p, {"root_complex.completion_size"});
    ASSERT_EQ(node128.node(*node128.find("rc0")).bridge.completion_size.value, 128U);

    const std::uint64_t size = 64 * kMiB;
    const CaseResult r64 = sim.run(p, CaseSpec{"pinned", "h2d", size, {}, {}, &node64});
    const CaseResult r128 = sim.run(p, CaseSpec{"pinned", "h2d", size, {}, {}, &node128});

    // Every completion carries at most the node's size.
    const auto cpl = static_cast<std::size_t>(TlpKind::kCompletion);
    EXPECT_EQ(downstream(r64).stats.tlps_by_kind[cpl], size / 64);
    EXPECT_EQ(downstream(r128).stats.tlps_by_kind[cpl], size / 128);

    // The copy is link-bound, so times scale with the bytes on the wire per payload byte:
    // 64 + 20 against 128 + 20 (3DW header, STP token and LCRC at Gen4).
    const double wire64 = pcie::tlp_wire_bytes(TlpKind::kCompletion, 64, p.link) / 64.0;
    const double wire128 = pcie::tlp_wire_bytes(TlpKind::kCompletion, 128, p.link) / 128.0;
    EXPECT_NEAR(r64.time_ps / r128.time_ps, wire64 / wire128, 0.01);
    EXPECT_GT(r64.time_ps, 1.10 * r128.time_ps);
}

}  // namespace
}  // namespace dmasim::sim
