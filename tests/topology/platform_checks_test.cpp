// Platform files are checked as strictly as scenarios: every node and link value against the same
// bounds (config/param_checks.h), and the shape of the machine (a PCIe tree under each root
// complex, devices hanging off one, root complexes joined by socket links, NVLink only between
// GPUs and NVSwitches). Each defect of the bad-input campaign of issue 11 is a case here.
#include "dmasim/config/param_checks.h"
#include "dmasim/config/scenario.h"
#include "dmasim/config/shipped_platforms.h"
#include "dmasim/core/error.h"
#include "dmasim/topology/platform.h"
#include "dmasim/topology/platform_file.h"

#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>

#include <gtest/gtest.h>

namespace dmasim::topology {
namespace {

// cpu0 - rc0 and a GPU; `rc` is added to rc0's map, `links` are appended after the internal link
// (which is links[0]); `more_nodes` come after gpu0 (nodes[2]).
std::string platform(const std::string& links, const std::string& rc = "", const std::string& more_nodes = "") {
    return "name: t\nnodes:\n  - {name: cpu0, kind: cpu}\n  - {name: rc0, kind: root_complex" + rc +
           "}\n  - {name: gpu0, kind: gpu}\n" + more_nodes + "links:\n  - {a: cpu0, b: rc0, kind: internal}\n" + links;
}

struct Outcome {
    bool accepted = false;
    std::string file;
    std::string key;
    std::string what;
};

Outcome parse(const std::string& yaml, const config::ModelParams& params = {},
              const std::vector<std::string>& explicit_keys = {}) {
    try {
        parse_platform(yaml, "t.yaml", params, explicit_keys);
    } catch (const core::InputError& e) {
        return {false, e.file(), e.key(), e.what()};
    }
    return {true, "", "", ""};
}

// The message after "file: key 'k': ".
std::string message_of(const std::string& what) {
    const auto at = what.find("': ");
    return at == std::string::npos ? what : what.substr(at + 3);
}

struct Case {
    std::string yaml;
    std::string key;
    std::string says;  // a fragment of the message
};

void expect_rejected(const std::vector<Case>& cases) {
    for (const auto& c : cases) {
        const Outcome o = parse(c.yaml);
        EXPECT_FALSE(o.accepted) << c.yaml;
        EXPECT_EQ(o.file, "t.yaml") << c.yaml;
        EXPECT_EQ(o.key, c.key) << c.yaml << " -> " << o.what;
        EXPECT_NE(o.what.find(c.says), std::string::npos) << c.yaml << " -> " << o.what;
        EXPECT_EQ(o.what.find('\n'), std::string::npos) << o.what;
    }
}

TEST(PlatformChecks, TheBaseOfEveryCaseIsAccepted) {
    // Without this the cases below could fail for a reason of the base platform.
    EXPECT_TRUE(parse(platform("  - {a: rc0, b: gpu0, kind: pcie, generation: 5, lanes: 16}\n")).accepted);
}

TEST(PlatformChecks, LinkValuesOutsideThePcieSpecAreRejected) {
    const auto link = [](const std::string& keys) { return platform("  - {a: rc0, b: gpu0, kind: pcie, " + keys + "}\n"); };
    expect_rejected({
        {link("generation: 5, lanes: 3"), "links[1].lanes", "not a PCIe width (1, 2, 4, 8 or 16)"},
        {link("mps: 100B"), "links[1].mps", "a power of two from 128B to 4KiB"},
        {link("lanes: 0"), "links[1].lanes", "0 lanes"},
        {link("generation: 7"), "links[1].generation", "1..6"},
        {link("credits_posted_data: 1"), "links[1].credits_posted_data", "at least 16"},
        {link("completion_size: 0B"), "links[1].completion_size", "unknown key"},
        {link("generation: 5, rate: 1GT/s"), "links[1].rate", "does not match generation 5 (32GT/s"},
        {link("mps: 8192B"), "links[1].mps", "power of two"},
        {link("mrrs: 64B"), "links[1].mrrs", "power of two"},
        {link("rcb: 32B"), "links[1].rcb", "64B or 128B"},
        {link("latency: 2ms"), "links[1].latency", "0s..1ms"},
        {link("ack_coalesce: 0"), "links[1].ack_coalesce", "1..1024"},
        {link("updatefc_coalesce: 5000"), "links[1].updatefc_coalesce", "1..1024"},
        {link("credits_posted_header: 5000"), "links[1].credits_posted_header", "0..2048"},
        {link("credits_nonposted_header: -1"), "links[1].credits_nonposted_header", "0..2048"},
        {link("credits_completion_data: 4"), "links[1].credits_completion_data", "at least 16"},
        {link("credits_posted_data: 40000"), "links[1].credits_posted_data", "0..32768"},
        {link("lanes: [1, 2]"), "links[1].lanes", "single value"},
    });
}

TEST(PlatformChecks, BridgeNvlinkAndSocketValuesAreRejectedOutsideTheirBounds) {
    const std::string pcie = "  - {a: rc0, b: gpu0}\n";
    const std::string two_gpus = "  - {name: gpu1, kind: gpu}\n";
    const std::string nv = pcie + "  - {a: rc0, b: gpu1}\n  - {a: gpu0, b: gpu1, kind: nvlink, ";
    const std::string rc1 = "  - {name: rc1, kind: root_complex}\n";
    const std::string sock = pcie + "  - {a: cpu0, b: rc1, kind: internal}\n  - {a: rc0, b: rc1, kind: socket, ";
    expect_rejected({
        {platform(pcie, ", completion_size: 0B"), "nodes[1].completion_size", "64B..4KiB"},
        {platform(pcie, ", completion_size: 8KiB"), "nodes[1].completion_size", "64B..4KiB"},
        {platform(pcie, ", forward_latency: 2ms"), "nodes[1].forward_latency", "0s..1ms"},
        {platform(pcie, ", switch_latency: 5s"), "nodes[1].switch_latency", "0s..1ms"},
        {platform(pcie, ", completion_size: 96B"), "nodes[1].completion_size", "not a positive multiple of links[1].rcb (64B)"},
        {platform(pcie, ", socket: 64"), "nodes[1].socket", "0..63"},
        {platform(pcie, ", p2p: [allowed]"), "nodes[1].p2p", "single value"},
        {platform(nv + "links: 0}\n", "", two_gpus), "links[3].links", "1..64"},
        {platform(nv + "link_rate: 0GB/s}\n", "", two_gpus), "links[3].link_rate", "above 0B/s"},
        {platform(nv + "link_rate: 2TB/s}\n", "", two_gpus), "links[3].link_rate", "at most 1TB/s"},
        {platform(nv + "max_payload: 8B}\n", "", two_gpus), "links[3].max_payload", "16B..4KiB"},
        {platform(nv + "latency: 3ms}\n", "", two_gpus), "links[3].latency", "0s..1ms"},
        {platform(nv + "port_bandwidth: -1GB/s}\n", "", two_gpus), "links[3].port_bandwidth", "must not be negative"},
        {platform(nv + "port_bandwidth: 30TB/s}\n", "", two_gpus), "links[3].port_bandwidth", "0B/s (the links' rate only) or a rate up to"},
        {platform(sock + "bandwidth: 0GB/s}\n", "", rc1), "links[3].bandwidth", "above 0B/s"},
        {platform(sock + "latency: 2ms}\n", "", rc1), "links[3].latency", "0s..1ms"},
        {platform(sock + "latency: [1ns]}\n", "", rc1), "links[3].latency", "single value"},
        {platform(pcie, ", peer_write_size: 100B"), "nodes[1].peer_write_size", "a power of two from 64B to 4KiB"},
        {platform(pcie, ", peer_write_size: 32B"), "nodes[1].peer_write_size", "a power of two from 64B to 4KiB"},
        {platform(pcie, ", peer_write_size: 8KiB"), "nodes[1].peer_write_size", "a power of two from 64B to 4KiB"},
        {platform(sock + "bandwidth: 64GB/s, peer_bandwidth: 80GB/s}\n", "", rc1), "links[3].peer_bandwidth",
         "up to the link's bandwidth (64GB/s)"},
        {platform(sock + "peer_bandwidth: -1GB/s}\n", "", rc1), "links[3].peer_bandwidth", "must not be negative"},
        {platform(pcie + "  - {a: cpu0, b: rc1, kind: internal}\n  - {a: rc0, b: rc1, kind: pcie, peer_bandwidth: 1GB/s}\n", "", rc1),
         "links[3].peer_bandwidth", "unknown key"},
    });
    // Accepted: a root complex that cuts peer writes into 64-byte ones, a socket link's peer rate.
    EXPECT_TRUE(parse(platform(pcie, ", peer_write_size: 64B")).accepted);
    EXPECT_TRUE(parse(platform(sock + "bandwidth: 64GB/s, peer_bandwidth: 22GB/s}\n", "", rc1)).accepted);
}

TEST(PlatformChecks, TheShapeOfTheMachineIsChecked) {
    const std::string pcie = "  - {a: rc0, b: gpu0}\n";
    const std::string sw = "  - {name: sw0, kind: switch}\n";
    const std::string rc1 = "  - {name: rc1, kind: root_complex}\n";
    expect_rejected({
        // Entries that are not maps, names that are not there or not unique.
        {"name: t\nnodes: [1, 2]\nlinks: []\n", "nodes[0]", "a node is a map"},
        {platform("  - 1\n"), "links[1]", "a link is a map"},
        {"name: t\nnodes: []\nlinks: []\n", "nodes", "a list of nodes"},
        {platform(pcie, "", "  - {name: gpu0, kind: gpu}\n"), "nodes[3].name", "already the name of nodes[2]"},
        {platform(pcie, "", "  - {name: 'gpu 1', kind: gpu}\n"), "nodes[3].name", "letters, digits"},
        {platform("  - {a: rc0, b: gpu9}\n"), "links[1].b", "no node named 'gpu9'"},
        // Links: to itself, twice, between kinds that take no such link.
        {platform("  - {a: gpu0, b: gpu0, kind: pcie}\n"), "links[1].b", "two different nodes"},
        {platform(pcie + pcie), "links[2]", "a second link between rc0 and gpu0 (links[1] is the first)"},
        {platform(pcie + "  - {a: rc0, b: sw0, kind: nvlink}\n", "", sw), "links[2].a", "NVLink joins GPUs and NVSwitches only"},
        {platform("  - {a: cpu0, b: gpu0}\n"), "links[1].a", "cpu0 is a cpu"},
        {platform(pcie + "  - {a: gpu0, b: gpu1}\n", "", "  - {name: gpu1, kind: gpu}\n"), "links[2].b", "both devices"},
        {platform(pcie + "  - {a: rc0, b: rc1}\n  - {a: cpu0, b: rc1, kind: internal}\n", "", rc1), "links[2].b",
         "both root complexes"},
        {platform(pcie + "  - {a: rc0, b: gpu1, kind: socket}\n", "", "  - {name: gpu1, kind: gpu}\n"), "links[2].b",
         "a socket link"},
        {platform("  - {a: rc0, b: gpu0, kind: internal}\n"), "links[1].b", "an internal link joins a cpu"},
        // The PCIe tree: no loops, one root complex per tree, one upstream link per device.
        {platform("  - {a: rc0, b: sw0}\n  - {a: rc0, b: sw1}\n  - {a: sw0, b: sw1}\n  - {a: sw0, b: gpu0}\n", "",
                  sw + "  - {name: sw1, kind: switch}\n"),
         "links[3]", "closes a loop in the PCIe tree"},
        {platform("  - {a: rc0, b: sw0}\n  - {a: sw0, b: gpu0}\n  - {a: rc0, b: gpu0}\n", "", sw), "links[3]",
         "gpu0 already has a PCIe link (links[2])"},
        {platform("  - {a: cpu0, b: rc1, kind: internal}\n  - {a: rc0, b: rc1, kind: socket}\n  - {a: rc0, b: sw0}\n"
                  "  - {a: rc1, b: sw0}\n  - {a: sw0, b: gpu0}\n",
                  "", rc1 + sw),
         "links[4]", "joins the PCIe trees of rc1 and rc0"},
        // Devices and switches hang off a root complex; root complexes off one CPU each.
        {platform(pcie, "", "  - {name: gpu1, kind: gpu}\n"), "nodes[3]", "gpu1 (gpu) has no PCIe path to a root complex"},
        {platform(pcie + "  - {a: gpu0, b: gpu1, kind: nvlink}\n", "", "  - {name: gpu1, kind: gpu}\n"), "nodes[3]",
         "no PCIe path"},
        {platform(pcie + "  - {a: sw0, b: nic0}\n", "", sw + "  - {name: nic0, kind: nic}\n"), "nodes[3]",
         "sw0 (switch) has no PCIe path"},
        {platform(pcie + "  - {a: cpu0, b: rc1}\n", "", rc1), "links[2].a", "cpu0 is a cpu"},
        {platform(pcie + "  - {a: rc0, b: rc1, kind: socket}\n", "", rc1), "nodes[3]", "rc1 has no CPU"},
        {platform(pcie + "  - {a: cpu1, b: rc0, kind: internal}\n", "", "  - {name: cpu1, kind: cpu, socket: 1}\n"),
         "links[2]", "rc0 already hangs off cpu0 (links[0])"},
        {platform(pcie, "", "  - {name: cpu1, kind: cpu, socket: 1}\n"), "nodes[3]", "cpu1 has no root complex"},
        {platform(pcie + "  - {a: cpu0, b: rc1, kind: internal}\n", "", rc1), "nodes[3]",
         "rc1 is not joined to rc0 by socket links"},
        // Sockets agree along the tree.
        {"name: t\nnodes:\n  - {name: cpu0, kind: cpu}\n  - {name: rc0, kind: root_complex}\n"
         "  - {name: gpu0, kind: gpu, socket: 1}\nlinks:\n  - {a: cpu0, b: rc0, kind: internal}\n" + pcie,
         "nodes[2].socket", "hangs off rc0 of socket 0: give it socket: 0"},
        {platform(pcie, "", "  - {name: cpu1, kind: cpu}\n"), "nodes[3].socket", "both socket 0"},
        // NVSwitches carry NVLinks; a platform has a CPU, a root complex and a device.
        {platform(pcie, "", "  - {name: nvs0, kind: nvswitch}\n"), "nodes[3]", "nvs0 (nvswitch) has no NVLink"},
        {"name: t\nnodes:\n  - {name: cpu0, kind: cpu}\n  - {name: rc0, kind: root_complex}\n"
         "links:\n  - {a: cpu0, b: rc0, kind: internal}\n",
         "nodes", "needs a device"},
        {"name: t\nnodes:\n  - {name: rc0, kind: root_complex}\n  - {name: gpu0, kind: gpu}\nlinks:\n  - {a: rc0, b: gpu0}\n",
         "nodes", "needs a cpu"},
        {"name: ''\nnodes: []\nlinks: []\n", "name", "must not be empty"},
        {"name: t\ndescription: [a, b]\nnodes: []\nlinks: []\n", "description", "single value"},
    });
}

TEST(PlatformChecks, CyclesOfNvlinkAndSocketLinksAreAllowed) {
    // Three GPUs in an NVLink ring and three root complexes in a socket-link triangle (as the
    // importer joins a socket's host bridges), each GPU on its own root complex.
    const std::string yaml =
        "name: ring\nnodes:\n  - {name: cpu0, kind: cpu}\n  - {name: rc0, kind: root_complex}\n"
        "  - {name: rc1, kind: root_complex}\n  - {name: rc2, kind: root_complex}\n"
        "  - {name: gpu0, kind: gpu}\n  - {name: gpu1, kind: gpu}\n  - {name: gpu2, kind: gpu}\n"
        "links:\n  - {a: cpu0, b: rc0, kind: internal}\n  - {a: cpu0, b: rc1, kind: internal}\n"
        "  - {a: cpu0, b: rc2, kind: internal}\n  - {a: rc0, b: rc1, kind: socket}\n  - {a: rc1, b: rc2, kind: socket}\n"
        "  - {a: rc2, b: rc0, kind: socket}\n  - {a: rc0, b: gpu0}\n  - {a: rc1, b: gpu1}\n  - {a: rc2, b: gpu2}\n"
        "  - {a: gpu0, b: gpu1, kind: nvlink}\n  - {a: gpu1, b: gpu2, kind: nvlink}\n  - {a: gpu2, b: gpu0, kind: nvlink}\n";
    const Outcome o = parse(yaml);
    EXPECT_TRUE(o.accepted) << o.what;
}

TEST(PlatformChecks, ValuesAreCheckedAfterTheScenariosOverrides) {
    // The file's credits suit its MPS; the scenario's what-if raises the MPS on every link.
    config::ModelParams big;
    big.link.mps = core::Bytes{4096};
    const std::string yaml = platform("  - {a: rc0, b: gpu0, credits_posted_data: 16}\n");
    EXPECT_TRUE(parse(yaml).accepted);
    const Outcome o = parse(yaml, big, {"link.mps"});
    EXPECT_EQ(o.key, "links[1].credits_posted_data") << o.what;
    EXPECT_NE(o.what.find("4KiB"), std::string::npos) << o.what;

    // The V100 host cuts completions at 64 bytes; an RCB of 128 would make it send none.
    config::ModelParams rcb128;
    rcb128.link.rcb = core::Bytes{128};
    rcb128.root_complex.completion_size = core::Bytes{128};
    try {
        load_platform("v100-gen3", rcb128, {"link.rcb"});
        ADD_FAILURE() << "v100-gen3 with link.rcb=128B accepted";
    } catch (const core::InputError& e) {
        EXPECT_EQ(e.file(), "platforms/v100-gen3.yaml");
        EXPECT_EQ(e.key(), "nodes[1].completion_size");
        EXPECT_NE(std::string(e.what()).find("links[1].rcb (128B)"), std::string::npos) << e.what();
    }
}

TEST(PlatformChecks, FiniteCreditsMustTakeTheLargestTlpOfThePlatform) {
    // 256 bytes of posted credit below a 512-byte-MPS uplink: the uplink's writes would never fit.
    const std::string yaml = platform("  - {a: rc0, b: sw0, mps: 512B}\n  - {a: sw0, b: gpu0, credits_posted_data: 16}\n",
                                      "", "  - {name: sw0, kind: switch}\n");
    const Outcome o = parse(yaml);
    EXPECT_EQ(o.key, "links[2].credits_posted_data") << o.what;
    EXPECT_NE(o.what.find("512B TLP (links[1].mps)"), std::string::npos) << o.what;
    // Infinite credits (0) always fit.
    std::string infinite = yaml;
    infinite.replace(infinite.find("credits_posted_data: 16"), 23, "credits_posted_data: 0");
    EXPECT_TRUE(parse(infinite).accepted) << parse(infinite).what;
}

TEST(PlatformChecks, AScenarioAndAPlatformFileGetTheSameMessageForOneBadValue) {
    const std::pair<std::string, std::string> values[] = {
        {"lanes", "3"},          {"generation", "7"}, {"mps", "100B"},     {"rcb", "32B"},
        {"rate", "1GT/s"},       {"latency", "2ms"},  {"mrrs", "8192B"},   {"credits_posted_data", "1"},
        {"ack_coalesce", "0"},   {"credits_completion_header", "9999"},
    };
    for (const auto& [key, value] : values) {
        std::string scenario_error;
        try {
            config::parse_scenarios("strategy: pinned\nsizes: 4KiB\nlink: {" + key + ": " + value + "}\n", "s.yaml");
        } catch (const core::InputError& e) {
            EXPECT_EQ(e.key(), "link." + key);
            scenario_error = e.what();
        }
        const Outcome o = parse(platform("  - {a: rc0, b: gpu0, " + key + ": " + value + "}\n"));
        EXPECT_EQ(o.key, "links[1]." + key) << o.what;
        ASSERT_FALSE(scenario_error.empty()) << key;
        EXPECT_EQ(message_of(scenario_error), message_of(o.what)) << key;
    }
    std::string scenario_error;
    try {
        config::parse_scenarios("strategy: pinned\nsizes: 4KiB\nroot_complex: {forward_latency: 2ms}\n", "s.yaml");
    } catch (const core::InputError& e) {
        scenario_error = e.what();
    }
    const Outcome o = parse(platform("  - {a: rc0, b: gpu0}\n", ", forward_latency: 2ms"));
    EXPECT_EQ(o.key, "nodes[1].forward_latency");
    EXPECT_EQ(message_of(scenario_error), message_of(o.what));
}

TEST(PlatformChecks, EveryShippedAndCommittedPlatformPasses) {
    const config::ModelParams params;
    ASSERT_FALSE(config::shipped_platforms().empty());
    for (const auto& [name, text] : config::shipped_platforms()) {
        EXPECT_NO_THROW(load_platform(name, params)) << name;
    }
    // The files on disk (the shipped ones as users copy them, and the imports of the lent machines).
    std::size_t files = 0;
    for (const char* dir : {"platforms", "results/h100-sxm/pci", "results/h200x2-nvlink/pci"}) {
        for (const auto& entry : std::filesystem::directory_iterator(std::string(DMASIM_SOURCE_DIR) + "/" + dir)) {
            if (entry.path().extension() != ".yaml") continue;
            ++files;
            try {
                load_platform(entry.path().string(), params);
            } catch (const core::InputError& e) {
                ADD_FAILURE() << e.what();
            }
        }
    }
    EXPECT_GE(files, config::shipped_platforms().size() + 4);
}

// A Platform built in code is not checked; asking it for a route that does not exist must still
// be an input error that names the platform, not a generic failure.
Platform two_islands() {
    Platform p("islands");
    const auto cpu = p.add_node({"cpu0", NodeKind::kCpu, 0, P2pPolicy::kAllowed, "", {}, {}, true});
    const auto rc = p.add_node({"rc0", NodeKind::kRootComplex, 0, P2pPolicy::kAllowed, "", {}, {}, true});
    const auto g0 = p.add_node({"gpu0", NodeKind::kGpu, 0, P2pPolicy::kAllowed, "gpu", {}, {}, true});
    p.add_node({"gpu1", NodeKind::kGpu, 0, P2pPolicy::kAllowed, "gpu", {}, {}, true});
    p.add_link(cpu, rc, {LinkKind::kInternal, {}, {}});
    p.add_link(rc, g0, {LinkKind::kPcie, {}, {}});
    return p;
}

TEST(PlatformChecks, RoutesBetweenUnconnectedNodesAreInputErrors) {
    Platform p = two_islands();
    p.set_origin("islands.yaml");
    try {
        p.route(p.at("gpu0"), p.at("gpu1"));
        ADD_FAILURE() << "a route between unconnected GPUs";
    } catch (const core::InputError& e) {
        EXPECT_EQ(e.file(), "islands.yaml");
        EXPECT_NE(std::string(e.what()).find("no route from gpu0 to gpu1"), std::string::npos) << e.what();
    }
}

TEST(PlatformChecks, APeerCopyBetweenUnconnectedGpusIsRefusedUpFront) {
    const Platform p = two_islands();
    config::Scenario s;
    s.file = "s.yaml";
    s.strategies = {"peer"};
    s.options.peer.src_device = 0;
    s.options.peer.dst_device = 1;
    try {
        check_scenario_platform(s, p);
        ADD_FAILURE() << "a peer copy between unconnected GPUs accepted";
    } catch (const core::InputError& e) {
        EXPECT_EQ(e.file(), "s.yaml");
        EXPECT_EQ(e.key(), "peer.dst_device");
        EXPECT_NE(std::string(e.what()).find("gpu0 and gpu1 of platform islands are not connected"), std::string::npos)
            << e.what();
    }
    s.options.peer.dst_device = 0;  // within one GPU: nothing to route
    EXPECT_NO_THROW(check_scenario_platform(s, p));

    config::Scenario flows;
    flows.file = "f.yaml";
    flows.strategies = {"peer"};
    config::FlowSpec f;
    f.strategy = "peer";
    f.device = 1;
    f.peer_device = 0;
    f.size = 4096;
    flows.flows = {f};
    try {
        check_scenario_platform(flows, p);
        ADD_FAILURE() << "a peer flow between unconnected GPUs accepted";
    } catch (const core::InputError& e) {
        EXPECT_EQ(e.key(), "flows[0].peer_device");
    }
}

}  // namespace
}  // namespace dmasim::topology

namespace dmasim::config {
namespace {

struct Failure {
    std::string key;
    std::string message;
};

const FailFn kThrow = [](const std::string& key, const std::string& message) { throw Failure{key, message}; };

// Sets the n-th numeric field of ModelParams (in visit order) to an extreme value and records its
// key; `high` picks a value far above any bound, else one below every lower bound.
struct Extreme {
    int target = 0;
    bool high = true;
    int seen = 0;
    std::string section_name = {};
    std::string key = {};

    template <class T>
    void set(const FieldInfo& fi, T& field, T value) {
        if (seen++ != target) return;
        field = value;
        key = section_name + "." + fi.key;
    }
    void operator()(const FieldInfo& fi, std::int64_t& v) {
        set(fi, v, high ? std::numeric_limits<std::int64_t>::max() / 4 : std::int64_t{-1});
    }
    void operator()(const FieldInfo& fi, Duration& v) { set(fi, v, Duration{high ? std::int64_t{1} << 60 : -1}); }
    void operator()(const FieldInfo& fi, Bandwidth& v) {
        set(fi, v, Bandwidth{high ? 1e300 : std::numeric_limits<double>::quiet_NaN()});
    }
    void operator()(const FieldInfo& fi, TransferRate& v) { set(fi, v, TransferRate{high ? 1e6 : -1.0}); }
    // Ratios (host_spread): NaN below, as for bandwidths, so that a check written to let NaN
    // through fails here.
    void operator()(const FieldInfo& fi, double& v) { set(fi, v, high ? 1e300 : std::numeric_limits<double>::quiet_NaN()); }
    void operator()(const FieldInfo& fi, Bytes& v) {
        // Sizes are unsigned and several take 0: only the upper bound applies to all of them.
        if (high) {
            set(fi, v, Bytes{std::uint64_t{1} << 60});
        } else {
            ++seen;
        }
    }
    void operator()(const FieldInfo&, bool&) {}
    template <class S>
    void section(const char* name, const char* /*doc*/, S& s) {
        section_name = name;
        s.visit(*this);
    }
};

TEST(ParamChecks, DefaultsPass) { EXPECT_NO_THROW(check_model_params(ModelParams{}, kThrow)); }

TEST(ParamChecks, EveryNumericParameterHasBounds) {
    int fields = 0;
    for (const bool high : {true, false}) {
        for (int target = 0;; ++target) {
            ModelParams p;
            Extreme e{target, high, 0, {}, {}};
            p.visit_sections(e);
            if (target >= e.seen) break;
            if (e.key.empty()) continue;  // a size below its lower bound: not representable
            ++fields;
            try {
                check_model_params(p, kThrow);
                ADD_FAILURE() << e.key << " accepts an extreme value (" << (high ? "high" : "low") << ")";
            } catch (const Failure& f) {
                EXPECT_EQ(f.key, e.key) << f.message;
                EXPECT_FALSE(f.message.empty());
            }
        }
    }
    EXPECT_GT(fields, 60);
}

TEST(ParamChecks, NewBoundsReachScenarioFiles) {
    const std::pair<std::string, std::string> cases[] = {
        {"cpu: {page_size: 2KiB}", "cpu.page_size"},
        {"cpu: {page_size: 2GiB}", "cpu.page_size"},
        {"dma: {launch_latency: 2s}", "dma.launch_latency"},
        {"runtime: {call_overhead: -1us}", "runtime.call_overhead"},
        {"host_memory: {bandwidth: 200TB/s}", "host_memory.bandwidth"},
        {"gpu: {bar_aperture: 3MiB}", "gpu.bar_aperture"},
        {"nvlink: {packet_overhead: 1KiB}", "nvlink.packet_overhead"},
        {"root_complex: {completion_size: 8KiB}", "root_complex.completion_size"},
        {"dma: {semaphore_size: 512B}", "dma.semaphore_size"},
        {"host_spread: {calls: 3}", "host_spread.calls"},
        {"host_spread: {draws: 1}", "host_spread.draws"},
    };
    for (const auto& [yaml, key] : cases) {
        try {
            parse_scenarios("strategy: pinned\nsizes: 4KiB\n" + yaml + "\n", "s.yaml");
            ADD_FAILURE() << yaml << " accepted";
        } catch (const core::InputError& e) {
            EXPECT_EQ(e.key(), key) << e.what();
        }
    }
}

TEST(ParamChecks, AFailureCallbackThatReturnsStillStopsTheCheck) {
    LinkParams l;
    l.lanes = 3;
    EXPECT_THROW(check_link(l, "link.", [](const std::string&, const std::string&) {}), std::logic_error);
}

}  // namespace
}  // namespace dmasim::config
