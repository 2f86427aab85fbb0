// A root complex whose peer-to-peer traffic goes through the CPU: each peer write is written to
// host memory and read back before it continues.
#include <gtest/gtest.h>

#include "dmasim/sim/simulator.h"
#include "dmasim/topology/platform_file.h"

namespace dmasim::sim {
namespace {

constexpr std::uint64_t kMiB = 1 << 20;

TEST(PeerPolicy, ViaCpuBouncesPeerTrafficThroughHostMemory) {
    config::ModelParams p;
    p.host_memory.bandwidth = core::Bandwidth{40e9};  // a memory slower than the link shows the bounce
    const std::string yaml =
        "name: bounce\nnodes:\n  - {name: cpu0, kind: cpu}\n  - {name: rc0, kind: root_complex, p2p: via_cpu}\n"
        "  - {name: gpu0, kind: gpu}\n  - {name: gpu1, kind: gpu}\nlinks:\n  - {a: cpu0, b: rc0, kind: internal}\n"
        "  - {a: rc0, b: gpu0}\n  - {a: rc0, b: gpu1}\n";
    Simulator sim(topology::parse_platform(yaml, "bounce.yaml", p), p);
    config::StrategyOptions o;
    o.peer.access = "on";
    const CaseResult r = sim.run(p, CaseSpec{"peer", "h2d", 32 * kMiB, o, {}, nullptr});
    // Written to host memory and read back: twice the bytes through the memory controller.
    EXPECT_GE(r.host_memory_bytes, 2 * 32 * kMiB);
    // ... which, at 40 GB/s for both, is the bound: 64 MiB of memory traffic per 32 MiB moved.
    const double gbps = 32.0 * kMiB / (r.time_ps * 1e-12) * 1e-9;
    EXPECT_LT(gbps, 20.5);
    EXPECT_GT(gbps, 15.0);
}

}  // namespace
}  // namespace dmasim::sim
