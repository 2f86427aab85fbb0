#include "dmasim/topology/platform.h"
#include "dmasim/topology/platform_file.h"
#include "dmasim/core/error.h"
#include "dmasim/pcie/wire.h"
#include "dmasim/config/scenario.h"

#include <algorithm>

#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

namespace dmasim::topology {
namespace {

TEST(Platform, DefaultPlatformRoutesGpuToHostThroughTheRootComplex) {
    const Platform p = load_platform("h100-sxm", config::ModelParams{});
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
    const auto cpu = p.add_node({"cpu", NodeKind::kCpu, 0, P2pPolicy::kAllowed, "", {}, {}, true});
    const auto rc = p.add_node({"rc", NodeKind::kRootComplex, 0, P2pPolicy::kAllowed, "", {}, {}, true});
    const auto sw = p.add_node({"sw", NodeKind::kSwitch, 0, P2pPolicy::kAllowed, "", {}, {}, true});
    const auto a = p.add_node({"gpuA", NodeKind::kGpu, 0, P2pPolicy::kAllowed, "gpu", {}, {}, true});
    const auto b = p.add_node({"gpuB", NodeKind::kGpu, 0, P2pPolicy::kAllowed, "gpu", {}, {}, true});
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
    const auto a = p.add_node({"a", NodeKind::kGpu, 0, P2pPolicy::kAllowed, "gpu", {}, {}, true});
    const auto b = p.add_node({"b", NodeKind::kGpu, 0, P2pPolicy::kAllowed, "gpu", {}, {}, true});
    EXPECT_THROW(p.route(a, b), std::runtime_error);
    EXPECT_THROW(p.add_node({"a", NodeKind::kCpu, 0, P2pPolicy::kAllowed, "", {}, {}, true}), std::invalid_argument);
    EXPECT_THROW(p.add_link(a, a, {}), std::invalid_argument);
    EXPECT_THROW(p.at("nope"), std::out_of_range);
}

}  // namespace
}  // namespace dmasim::topology

namespace dmasim::topology {
namespace {

std::string cls(const Platform& p, const char* a, const char* b) { return route_class(p, p.at(a), p.at(b)); }

TEST(RouteClasses, ShippedPlatformsMatchWhatNvidiaSmiPrints) {
    const config::ModelParams params;
    const Platform h200 = load_platform("h200x2-nvlink", params);
    EXPECT_EQ(cls(h200, "gpu0", "gpu1"), "NV18");  // as the lent machine's nvidia-smi topo -m says
    EXPECT_EQ(cls(h200, "gpu0", "gpu0"), "X");
    EXPECT_EQ(cls(load_platform("workstation-2gpu-switch", params), "gpu0", "gpu1"), "PIX");
    EXPECT_EQ(cls(load_platform("2gpu-rootports", params), "gpu0", "gpu1"), "PHB");
    EXPECT_EQ(cls(load_platform("radar-switch", params), "fpga0", "gpu0"), "PIX");
    EXPECT_EQ(cls(load_platform("radar-rootports", params), "fpga0", "gpu0"), "PHB");
    const Platform dgx = load_platform("dgx-h100", params);
    EXPECT_EQ(dgx.nodes_of(NodeKind::kGpu).size(), 8U);
    EXPECT_EQ(cls(dgx, "gpu0", "gpu7"), "NV18");   // through the NVSwitch
    EXPECT_EQ(cls(dgx, "gpu0", "nic0"), "PIX");    // same PCIe switch
    EXPECT_EQ(cls(dgx, "nic0", "nic2"), "NODE");   // two host bridges of socket 0
    EXPECT_EQ(cls(dgx, "nic0", "nic7"), "SYS");    // across the sockets
    EXPECT_EQ(cls(dgx, "gpu0", "nic5"), "SYS");
}

TEST(RouteClasses, BottleneckIsTheSlowestLinkOnTheRoute) {
    config::ModelParams params;
    const Platform dgx = load_platform("dgx-h100", params);
    const Bottleneck b = bottleneck(dgx, dgx.at("nic0"), dgx.at("nic7"));
    EXPECT_NE(b.link.find("PCIe Gen5 x16"), std::string::npos) << b.link;
    EXPECT_NEAR(b.gbps, pcie::raw_gbps(params.link), 1e-9);
    // A what-if on the scenario side reaches every PCIe link of a platform file.
    const Platform gen3 = load_platform("dgx-h100", [] {
        config::ModelParams p;
        p.link.generation = 3;
        return p;
    }(), {"link.generation"});
    EXPECT_NEAR(bottleneck(gen3, gen3.at("nic0"), gen3.at("nic7")).gbps, pcie::raw_gbps(params.link) / 4.0, 1e-6);
}

TEST(PlatformFiles, ErrorsNameTheFileAndTheKey) {
    const config::ModelParams params;
    const std::string ok = "name: t\nnodes:\n  - {name: cpu0, kind: cpu}\n  - {name: rc0, kind: root_complex}\n"
                           "  - {name: g, kind: gpu}\nlinks:\n  - {a: cpu0, b: rc0, kind: internal}\n";
    EXPECT_NO_THROW(parse_platform(ok + "  - {a: rc0, b: g, lanes: 8}\n", "t.yaml", params));
    const std::pair<std::string, std::string> bad[] = {
        {ok + "  - {a: rc0, b: nowhere}\n", "key 'links[1].b'"},
        {ok + "  - {a: rc0, b: g, lanez: 8}\n", "key 'links[1].lanez'"},
        {ok + "  - {a: rc0, b: g, kind: warp}\n", "key 'links[1].kind'"},
        {ok + "  - {a: rc0, b: g, kind: socket, bandwidth: fast}\n", "key 'links[1].bandwidth'"},
        {"name: t\nnodes:\n  - {name: x, kind: toaster}\nlinks: []\n", "key 'nodes[0].kind'"},
        {"name: t\nnodes:\n  - {name: g, kind: gpu, p2p: refused}\nlinks: []\n", "key 'nodes[0].p2p'"},
        // Root-complex settings belong to bridges only, and take the units of their parameters.
        {"name: t\nnodes:\n  - {name: g, kind: gpu, completion_size: 64B}\nlinks: []\n", "key 'nodes[0].completion_size'"},
        {"name: t\nnodes:\n  - {name: r, kind: root_complex, completion_size: lots}\nlinks: []\n",
         "key 'nodes[0].completion_size'"},
        {"name: t\nnodes: [\n", "malformed YAML"},
    };
    for (const auto& [yaml, expect] : bad) {
        try {
            parse_platform(yaml, "t.yaml", params);
            ADD_FAILURE() << "accepted: " << yaml;
        } catch (const core::InputError& e) {
            EXPECT_NE(std::string(e.what()).find("t.yaml"), std::string::npos) << e.what();
            EXPECT_NE(std::string(e.what()).find(expect), std::string::npos) << e.what();
        }
    }
    EXPECT_THROW(load_platform("/nonexistent/platform.yaml", params), core::InputError);
}

// The parsed text is kept between calls (a calibration reads each platform thousands of times):
// parameters still apply per call, and a text that failed fails again the same way.
TEST(PlatformFiles, ReadingATextAgainAppliesTheNewParameters) {
    const std::string yaml = "name: t\nnodes:\n  - {name: cpu0, kind: cpu}\n  - {name: rc0, kind: root_complex}\n"
                             "  - {name: g, kind: gpu}\nlinks:\n  - {a: cpu0, b: rc0, kind: internal}\n"
                             "  - {a: rc0, b: g}\n";
    auto gpu_link_generation = [&](int generation) {
        config::ModelParams params;
        params.link.generation = generation;
        const Platform p = parse_platform(yaml, "t.yaml", params, {"link.generation"});
        const auto edges = boost::edges(p.graph());
        for (auto e = edges.first; e != edges.second; ++e) {
            if (p.link(*e).kind == LinkKind::kPcie) return p.link(*e).pcie.generation;
        }
        return std::int64_t{-1};
    };
    EXPECT_EQ(gpu_link_generation(4), 4);
    EXPECT_EQ(gpu_link_generation(6), 6);
    EXPECT_EQ(gpu_link_generation(4), 4);
    for (int i = 0; i < 2; ++i) {
        try {
            parse_platform(yaml + "  - {a: rc0, b: nowhere}\n", "t.yaml", config::ModelParams{});
            ADD_FAILURE() << "accepted a link to no node, time " << i;
        } catch (const core::InputError& e) {
            EXPECT_NE(std::string(e.what()).find("key 'links[2].b'"), std::string::npos) << e.what();
        }
    }
}

TEST(PeerPolicy, AscendRuleAllowsPeerCopiesOnlyUnderOneSwitch) {
    const config::ModelParams params;
    const std::string nodes = "nodes:\n  - {name: cpu0, kind: cpu}\n  - {name: rc0, kind: root_complex}\n"
                              "  - {name: sw0, kind: switch}\n  - {name: sw1, kind: switch}\n"
                              "  - {name: npu0, kind: gpu}\n  - {name: npu1, kind: gpu}\n  - {name: npu2, kind: gpu}\n"
                              "links:\n  - {a: cpu0, b: rc0, kind: internal}\n  - {a: rc0, b: sw0}\n  - {a: rc0, b: sw1}\n"
                              "  - {a: sw0, b: npu0}\n  - {a: sw0, b: npu1}\n  - {a: sw1, b: npu2}\n";
    const Platform ascend = parse_platform("name: ascend\npeer_rule: same_switch\n" + nodes, "a.yaml", params);
    EXPECT_EQ(peer_refusal(ascend, ascend.at("npu0"), ascend.at("npu1")), "");
    EXPECT_NE(peer_refusal(ascend, ascend.at("npu0"), ascend.at("npu2")).find("only between devices under one PCIe switch"),
              std::string::npos);
    const Platform any = parse_platform("name: any\n" + nodes, "a.yaml", params);
    EXPECT_EQ(peer_refusal(any, any.at("npu0"), any.at("npu2")), "");
    // A scenario that asks for an error instead of a staged fallback is refused up front.
    config::Scenario s;
    s.file = "s.yaml";
    s.strategies = {"peer"};
    s.options.peer.dst_device = 2;
    s.options.peer.refused = "error";
    EXPECT_THROW(check_scenario_platform(s, ascend), core::InputError);
    s.options.peer.refused = "staged";
    EXPECT_NO_THROW(check_scenario_platform(s, ascend));
    s.options.peer.dst_device = 3;
    EXPECT_THROW(check_scenario_platform(s, ascend), core::InputError);  // there is no fourth GPU
}

// Issue 15: the same-switch rule is about the PCIe tree, whatever NVLink joins the pair. Two
// GPUs under sw0 with an NVSwitch between all three: gpu0-gpu1 share sw0 and may copy (over
// NVLink); gpu0-gpu2 have NVLink but sit under different switches and may not.
TEST(PeerPolicy, TheSameSwitchRuleIsJudgedOnPcieMembershipNotOnNvlink) {
    const config::ModelParams params;
    const std::string yaml =
        "name: ascend-nv\npeer_rule: same_switch\nnodes:\n  - {name: cpu0, kind: cpu}\n  - {name: rc0, kind: root_complex}\n"
        "  - {name: sw0, kind: switch}\n  - {name: sw1, kind: switch}\n  - {name: nvs, kind: nvswitch}\n"
        "  - {name: gpu0, kind: gpu}\n  - {name: gpu1, kind: gpu}\n  - {name: gpu2, kind: gpu}\n"
        "links:\n  - {a: cpu0, b: rc0, kind: internal}\n  - {a: rc0, b: sw0}\n  - {a: rc0, b: sw1}\n"
        "  - {a: sw0, b: gpu0}\n  - {a: sw0, b: gpu1}\n  - {a: sw1, b: gpu2}\n"
        "  - {a: gpu0, b: nvs, kind: nvlink}\n  - {a: gpu1, b: nvs, kind: nvlink}\n  - {a: gpu2, b: nvs, kind: nvlink}\n";
    const Platform p = parse_platform(yaml, "a.yaml", params);
    EXPECT_EQ(route_class(p, p.at("gpu0"), p.at("gpu1")), "NV18");
    EXPECT_EQ(pcie_route_class(p, p.at("gpu0"), p.at("gpu1")), "PIX");
    EXPECT_EQ(peer_refusal(p, p.at("gpu0"), p.at("gpu1")), "");
    const std::string why = peer_refusal(p, p.at("gpu0"), p.at("gpu2"));
    EXPECT_NE(why.find("gpu0 and gpu2 are PHB on PCIe"), std::string::npos) << why;
}

// Every device-to-device path honours the bridges on it: refused names the bridge; via_cpu is
// reported, not refused; NVLink crosses no bridge.
TEST(PeerPolicy, EveryBridgeOnTheRouteSaysWhatItDoesWithPeerTraffic) {
    const config::ModelParams params;
    const auto host = [&](const std::string& policy) {
        return parse_platform("name: h\nnodes:\n  - {name: cpu0, kind: cpu}\n  - {name: rc0, kind: root_complex, p2p: " + policy +
                                  "}\n  - {name: gpu0, kind: gpu}\n  - {name: fpga0, kind: fpga}\n"
                                  "links:\n  - {a: cpu0, b: rc0, kind: internal}\n  - {a: rc0, b: gpu0}\n  - {a: rc0, b: fpga0}\n",
                              "h.yaml", params);
    };
    const Platform allowed = host("allowed"), via = host("via_cpu"), refused = host("refused");
    EXPECT_EQ(peer_path(allowed, allowed.at("fpga0"), allowed.at("gpu0")).refusal, "");
    EXPECT_EQ(peer_path(allowed, allowed.at("fpga0"), allowed.at("gpu0")).via_cpu, "");
    EXPECT_EQ(peer_path(via, via.at("fpga0"), via.at("gpu0")).via_cpu, "rc0");
    EXPECT_EQ(peer_path(via, via.at("fpga0"), via.at("gpu0")).refusal, "");
    EXPECT_EQ(peer_path(refused, refused.at("fpga0"), refused.at("gpu0")).refusal, "rc0 refuses peer-to-peer traffic");
    // A card that writes each frame into the GPU itself has no fallback: the scenario is refused,
    // naming frame.via; the way through pinned host memory is not.
    config::Scenario s;
    s.file = "frames.yaml";
    s.strategies = {"periodic"};
    s.options.periodic.via = "fpga_direct";
    try {
        check_scenario_platform(s, refused);
        ADD_FAILURE() << "fpga_direct through a refusing root complex was accepted";
    } catch (const core::InputError& e) {
        EXPECT_EQ(e.file(), "frames.yaml");
        EXPECT_EQ(e.key(), "frame.via");
        EXPECT_NE(std::string(e.what()).find("rc0 refuses peer-to-peer traffic"), std::string::npos) << e.what();
    }
    EXPECT_NO_THROW(check_scenario_platform(s, via));
    s.options.periodic.via = "fpga_via_host";
    EXPECT_NO_THROW(check_scenario_platform(s, refused));
    // Flows have no fallback either: a card's flow into the GPU through it is refused.
    config::Scenario f;
    f.file = "flows.yaml";
    config::FlowSpec flow;
    flow.strategy = "third_party_dma";
    flow.device = 0;
    f.flows = {flow};
    try {
        check_scenario_platform(f, refused);
        ADD_FAILURE() << "a card's flow through a refusing root complex was accepted";
    } catch (const core::InputError& e) {
        EXPECT_EQ(e.key(), "flows[0].strategy");
    }
    EXPECT_NO_THROW(check_scenario_platform(f, allowed));
}

}  // namespace
}  // namespace dmasim::topology

namespace dmasim::topology {
namespace {

// The lent machines' own nvidia-smi topo -m output, cell by cell, against the shipped platform.
TEST(RouteClasses, ShippedPlatformsReproduceTheLentMachinesNvidiaSmiMatrix) {
    const std::pair<const char*, const char*> cases[] = {{"h100-sxm", "h100.txt"}, {"h200x2-nvlink", "h200x2.txt"}};
    for (const auto& [platform, fixture] : cases) {
        const Platform p = load_platform(platform, config::ModelParams{});
        const auto g = gpus(p);
        std::ifstream in(std::string(DMASIM_SOURCE_DIR) + "/tests/topology/fixtures/nvidia-smi-topo/" + fixture);
        std::string line;
        std::size_t rows = 0;
        while (std::getline(in, line)) {
            if (line.rfind("GPU", 0) != 0 || line.find('\t') == std::string::npos) continue;
            std::vector<std::string> cells;
            std::stringstream ss(line);
            std::string cell;
            while (std::getline(ss, cell, '\t')) {
                const auto b = cell.find_first_not_of(' ');
                cells.push_back(b == std::string::npos ? "" : cell.substr(b, cell.find_last_not_of(' ') - b + 1));
            }
            ASSERT_LT(rows, g.size()) << fixture;
            for (std::size_t j = 0; j < g.size(); ++j) {
                EXPECT_EQ(route_class(p, g[rows], g[j]), cells.at(j + 1)) << fixture << " GPU" << rows << " GPU" << j;
            }
            ++rows;
        }
        EXPECT_EQ(rows, g.size()) << fixture;
    }
}

}  // namespace
}  // namespace dmasim::topology

namespace dmasim::topology {
namespace {

// Issue 15: one device's own link set by the scenario (`links:` or --set links.DEV.KEY), where
// `link:` sets every link: the radar what-if's card on Gen3 x8 no longer slows the GPU's link.
TEST(DeviceLinks, AScenarioSetsOneDevicesLinkAndLeavesTheOthers) {
    const auto scenarios = config::load_scenarios(std::string(DMASIM_SOURCE_DIR) + "/scenarios/whatif/radar.yaml", {});
    const auto it = std::find_if(scenarios.begin(), scenarios.end(),
                                 [](const config::Scenario& s) { return s.name == "radar-switch-fpga-direct-gen3x8"; });
    ASSERT_NE(it, scenarios.end());
    const Platform p = load_platform(*it);
    const config::LinkParams* card = device_pcie_link(p, p.at("fpga0"));
    const config::LinkParams* gpu = device_pcie_link(p, p.at("gpu0"));
    ASSERT_NE(card, nullptr);
    ASSERT_NE(gpu, nullptr);
    EXPECT_EQ(card->generation, 3);
    EXPECT_EQ(card->lanes, 8);
    EXPECT_EQ(gpu->generation, 5);
    EXPECT_EQ(gpu->lanes, 16);
    // --set links.fpga0.lanes=4 changes that one key of that one link.
    config::Scenario s = *it;
    config::apply_parameter(s, config::SetOverride{"links.fpga0.lanes", "4", ""});
    const Platform q = load_platform(s);
    EXPECT_EQ(device_pcie_link(q, q.at("fpga0"))->lanes, 4);
    EXPECT_EQ(device_pcie_link(q, q.at("fpga0"))->generation, 3);
    EXPECT_EQ(device_pcie_link(q, q.at("gpu0"))->lanes, 16);
}

TEST(DeviceLinks, BadDeviceKeyOrValueNamesTheScenarioKey) {
    const auto outcome = [](const std::string& links) -> std::pair<std::string, std::string> {
        try {
            const auto v = config::parse_scenarios("platform: radar-switch\nstrategy: third_party_dma\nsizes: 4MiB\n" + links,
                                                   "s.yaml");
            (void)load_platform(v.front());
        } catch (const core::InputError& e) {
            return {e.file() + ": " + e.key(), e.what()};
        }
        return {"accepted", ""};
    };
    EXPECT_EQ(outcome("links: { fpga0: { lanes: 4 } }\n").first, "accepted");
    EXPECT_EQ(outcome("links: { gpu7: { lanes: 4 } }\n").first, "s.yaml: links.gpu7");
    EXPECT_NE(outcome("links: { gpu7: { lanes: 4 } }\n").second.find("no device named 'gpu7' (gpu0, fpga0)"), std::string::npos);
    EXPECT_EQ(outcome("links: { sw0: { lanes: 4 } }\n").first, "s.yaml: links.sw0");
    EXPECT_EQ(outcome("links: { fpga0: { lanes: 3 } }\n").first, "s.yaml: links.fpga0.lanes");
    EXPECT_EQ(outcome("links: { fpga0: { speed: 3 } }\n").first, "s.yaml: links.fpga0.speed");
    EXPECT_EQ(outcome("links: { fpga0: { lanes: eight } }\n").first, "s.yaml: links.fpga0.lanes");
    EXPECT_EQ(outcome("links: { fpga0: 8 }\n").first, "s.yaml: links.fpga0");
    EXPECT_EQ(outcome("links: [fpga0]\n").first, "s.yaml: links");
}

}  // namespace
}  // namespace dmasim::topology

namespace dmasim::topology {
namespace {

// Issue 15: an accelerator that is not a GPU. Ascend's NPUs under one switch, peer copies only
// there: an npu node is numbered with the GPUs, says what it is, and the same-switch rule holds.
TEST(Npu, AnNpuIsAnAcceleratorNumberedWithTheGpusAndNamedAsItIs) {
    const Platform p = parse_platform(
        "name: ascend\npeer_rule: same_switch\nnodes:\n  - {name: cpu0, kind: cpu}\n  - {name: rc0, kind: root_complex}\n"
        "  - {name: sw0, kind: switch}\n  - {name: sw1, kind: switch}\n"
        "  - {name: npu0, kind: npu}\n  - {name: npu1, kind: npu}\n  - {name: npu2, kind: npu}\n"
        "links:\n  - {a: cpu0, b: rc0, kind: internal}\n  - {a: rc0, b: sw0}\n  - {a: rc0, b: sw1}\n"
        "  - {a: sw0, b: npu0}\n  - {a: sw0, b: npu1}\n  - {a: sw1, b: npu2}\n",
        "ascend.yaml", config::ModelParams{});
    const auto g = gpus(p);
    ASSERT_EQ(g.size(), 3U);
    EXPECT_EQ(p.node(g[0]).name, "npu0");
    EXPECT_EQ(p.node(g[0]).device, "npu");
    EXPECT_NE(effective_json(p).find("\"kind\": \"npu\""), std::string::npos);
    EXPECT_EQ(peer_refusal(p, g[0], g[1]), "");
    EXPECT_NE(peer_refusal(p, g[0], g[2]), "");
    try {
        parse_platform("name: x\nnodes:\n  - {name: cpu0, kind: cpu}\n  - {name: rc0, kind: root_complex}\n"
                       "  - {name: tpu0, kind: tpu}\nlinks:\n  - {a: cpu0, b: rc0, kind: internal}\n  - {a: rc0, b: tpu0}\n",
                       "x.yaml", config::ModelParams{});
        ADD_FAILURE() << "an unknown kind was accepted";
    } catch (const core::InputError& e) {
        EXPECT_NE(std::string(e.what()).find("gpu, npu, fpga, nic or nvme"), std::string::npos) << e.what();
    }
}

}  // namespace
}  // namespace dmasim::topology
