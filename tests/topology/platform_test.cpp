#include "dmasim/topology/platform.h"

#include <gtest/gtest.h>

namespace dmasim::topology {
namespace {

TEST(Platform, DefaultPlatformRoutesGpuToHostThroughTheRootComplex) {
    const Platform p = make_single_gpu_platform("h100-sxm", config::LinkParams{});
    const auto route = p.route(p.at("gpu0"), p.at("cpu0"));
    ASSERT_EQ(route.size(), 2U);
    EXPECT_EQ(p.node(route[0].to).name, "rc0");
    EXPECT_EQ(p.link(route[0].edge).kind, LinkKind::kPcie);
    EXPECT_EQ(p.link(route[1].edge).kind, LinkKind::kInternal);
    EXPECT_TRUE(p.route(p.at("gpu0"), p.at("gpu0")).empty());
    EXPECT_EQ(p.next_edge(p.at("cpu0"), p.at("gpu0")), route[1].edge);
}

TEST(Platform, FewestHopRouteInABranchingGraph) {
    // cpu - rc - sw - {gpuA, gpuB}, and a direct NVLink between the GPUs.
    Platform p("t");
    const auto cpu = p.add_node({"cpu", NodeKind::kCpu, 0});
    const auto rc = p.add_node({"rc", NodeKind::kRootComplex, 0});
    const auto sw = p.add_node({"sw", NodeKind::kSwitch, 0});
    const auto a = p.add_node({"gpuA", NodeKind::kGpu, 0});
    const auto b = p.add_node({"gpuB", NodeKind::kGpu, 0});
    p.add_link(cpu, rc, {LinkKind::kInternal, {}, {}});
    p.add_link(rc, sw, {LinkKind::kPcie, {}, {}});
    p.add_link(sw, a, {LinkKind::kPcie, {}, {}});
    p.add_link(sw, b, {LinkKind::kPcie, {}, {}});
    const auto via_switch = p.route(a, b);
    ASSERT_EQ(via_switch.size(), 2U);
    EXPECT_EQ(p.node(via_switch[0].to).name, "sw");
    p.add_link(a, b, {LinkKind::kNvlink, {}, {}});
    const auto direct = p.route(a, b);
    ASSERT_EQ(direct.size(), 1U);
    EXPECT_EQ(p.link(direct[0].edge).kind, LinkKind::kNvlink);
    EXPECT_EQ(p.route(a, cpu).size(), 3U);
    EXPECT_EQ(p.nodes_of(NodeKind::kGpu).size(), 2U);
}

TEST(Platform, RejectsUnreachableNodesAndDuplicateNames) {
    Platform p("t");
    const auto a = p.add_node({"a", NodeKind::kGpu, 0});
    const auto b = p.add_node({"b", NodeKind::kGpu, 0});
    EXPECT_THROW(p.route(a, b), std::runtime_error);
    EXPECT_THROW(p.add_node({"a", NodeKind::kCpu, 0}), std::invalid_argument);
    EXPECT_THROW(p.add_link(a, a, {}), std::invalid_argument);
    EXPECT_THROW(p.at("nope"), std::out_of_range);
}

}  // namespace
}  // namespace dmasim::topology
