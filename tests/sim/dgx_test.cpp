// The DGX-H100-like box: NVSwitch between all GPUs, two sockets joined by a socket link.
#include <gtest/gtest.h>

#include "dmasim/sim/simulator.h"
#include "dmasim/topology/platform_file.h"

namespace dmasim::sim {
namespace {

constexpr std::uint64_t kMiB = 1 << 20;

TEST(Dgx, CrossSocketTrafficCrossesTheSocketLinkAndPeerUsesTheNvswitch) {
    Simulator sim(topology::load_platform("dgx-h100", config::ModelParams{}), config::ModelParams{});
    config::ModelParams p;
    // GPU 5 hangs off socket 1; the runtime's buffers are in socket 0's memory.
    config::FlowSpec f;
    f.name = "far";
    f.device = 5;
    f.size = 64 * kMiB;
    const CaseResult far = sim.run_flows(p, {f});
    std::uint64_t socket_payload = 0;
    for (const auto& l : far.links) {
        if (l.label == "rc0->rc2") socket_payload += l.stats.payload_bytes;
    }
    EXPECT_EQ(socket_payload, 64 * kMiB);
    f.device = 0;
    const CaseResult near = sim.run_flows(p, {f});
    for (const auto& l : near.links) {
        if (l.label == "rc0->rc2") { EXPECT_EQ(l.stats.payload_bytes, 0U); }
    }
    // Peer copies between any two GPUs go over the NVSwitch, not PCIe.
    config::StrategyOptions o;
    o.peer.access = "on";
    o.peer.dst_device = 6;
    const CaseResult peer = sim.run(p, CaseSpec{"peer", "h2d", 64 * kMiB, o, {}, nullptr});
    for (const auto& l : peer.links) {
        if (l.label == "gpu0->nvswitch0" || l.label == "nvswitch0->gpu6") { EXPECT_GE(l.stats.payload_bytes, 64 * kMiB); }
        if (l.label == "gpu0->sw0") { EXPECT_LT(l.stats.payload_bytes, 64U); }
    }
}

}  // namespace
}  // namespace dmasim::sim
