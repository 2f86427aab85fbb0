#include "dmasim/config/scenario.h"

#include <gtest/gtest.h>

#include "dmasim/config/param_io.h"
#include "dmasim/config/plan_expand.h"
#include "dmasim/core/error.h"

namespace dmasim::config {
namespace {

std::string error_of(const std::string& yaml, const std::vector<SetOverride>& sets = {}) {
    try {
        parse_scenarios(yaml, "s.yaml", sets);
    } catch (const core::InputError& e) {
        return e.what();
    }
    return "";
}

TEST(Scenario, UnitsListsAndRanges) {
    const auto v = parse_scenarios(
        "name: a\nstrategy: pinned\nsizes: {from: 4KiB, to: 1MiB, factor: 4}\n"
        "link: {generation: 4, lanes: 8, mps: 512B, latency: 750ns, rate: 16GT/s}\n"
        "host_memory: {bandwidth: 25GB/s}\n",
        "s.yaml");
    ASSERT_EQ(v.size(), 1U);
    const Scenario& s = v[0];
    EXPECT_EQ(s.sizes, (std::vector<std::uint64_t>{4096, 16384, 65536, 262144, 1048576}));
    EXPECT_EQ(s.params.link.generation, 4);
    EXPECT_EQ(s.params.link.lanes, 8);
    EXPECT_EQ(s.params.link.mps.value, 512U);
    EXPECT_EQ(s.params.link.latency.ps, 750000);
    EXPECT_DOUBLE_EQ(s.params.host_memory.bandwidth.bytes_per_s, 25e9);
    EXPECT_TRUE(s.link_explicit);
    // Defaults stay where the file is silent.
    EXPECT_EQ(s.params.link.mrrs.value, LinkParams{}.mrrs.value);
    EXPECT_EQ(s.directions, (std::vector<std::string>{"h2d", "d2h"}));
}

TEST(Scenario, StepRangeAndExplicitList) {
    EXPECT_EQ(expand_size_range(1000, 4000, 0, 1000), (std::vector<std::uint64_t>{1000, 2000, 3000, 4000}));
    const auto v = parse_scenarios("strategy: duplex\nsizes: [4KiB, 1GiB]\n", "dir/my-file.yaml");
    EXPECT_EQ(v[0].name, "my-file");  // unnamed scenarios are named after their file
    EXPECT_EQ(v[0].sizes, (std::vector<std::uint64_t>{4096, 1073741824}));
    EXPECT_EQ(v[0].directions, (std::vector<std::string>{"both"}));
}

TEST(Scenario, SeveralDocumentsInOneFile) {
    const auto v = parse_scenarios("name: a\nstrategy: pinned\nsizes: 4KiB\n---\nname: b\nstrategy: duplex\nsizes: 8KiB\n",
                                   "s.yaml");
    ASSERT_EQ(v.size(), 2U);
    EXPECT_EQ(v[1].name, "b");
    EXPECT_NE(error_of("name: a\nstrategy: pinned\nsizes: 4KiB\n---\nname: a\nstrategy: pinned\nsizes: 4KiB\n"), "");
}

TEST(Scenario, SetOverridesAnyKeyByDottedPath) {
    const std::string yaml = "name: a\nstrategy: pinned\nsizes: 4KiB\n";
    const auto v = parse_scenarios(yaml, "s.yaml",
                                   {parse_set("link.generation=6"), parse_set("sizes=4KiB,1MiB"),
                                    parse_set("direction=d2h"), parse_set("strategy=pinned,pageable"),
                                    parse_set("link.mrrs=1KiB"), parse_set("link.mps=128B"), parse_set("link.lanes=4")});
    EXPECT_EQ(v[0].params.link.generation, 6);
    EXPECT_EQ(v[0].params.link.lanes, 4);
    EXPECT_EQ(v[0].params.link.mps.value, 128U);
    EXPECT_EQ(v[0].params.link.mrrs.value, 1024U);
    EXPECT_EQ(v[0].sizes, (std::vector<std::uint64_t>{4096, 1048576}));
    EXPECT_EQ(v[0].strategies, (std::vector<std::string>{"pinned", "pageable"}));
    EXPECT_TRUE(v[0].link_explicit);
    // duplex with direction d2h is contradictory, and the error says which key.
    EXPECT_NE(error_of(yaml, {parse_set("direction=d2h"), parse_set("strategy=duplex")}).find("'direction'"),
              std::string::npos);
    EXPECT_THROW(parse_set("novalue"), core::InputError);
}

TEST(Scenario, ErrorsNameFileAndKey) {
    const std::string base = "name: a\nstrategy: pinned\nsizes: 4KiB\n";
    struct Case {
        std::string yaml;
        std::string expect;
    };
    const Case cases[] = {
        {base + "link: {lanes: 3}\n", "key 'link.lanes'"},
        {base + "link: {mps: 100B}\n", "key 'link.mps'"},
        {base + "link: {generation: 7}\n", "key 'link.generation'"},
        {base + "link: {lanez: 4}\n", "key 'link.lanez': unknown key"},
        {base + "linq: {lanes: 4}\n", "key 'linq': unknown key"},
        {base + "link: {latency: 80}\n", "key 'link.latency'"},
        {base + "link: {rate: 16GT/s}\n", "key 'link.rate'"},
        {"name: a\nstrategy: pinned\nsizes: -4KiB\n", "key 'sizes'"},
        {"name: a\nstrategy: pinned\nsizes: {from: 1MiB, to: 4KiB}\n", "key 'sizes.to'"},
        {"name: a\nstrategy: warp_drive\nsizes: 4KiB\n", "key 'strategy'"},
        {"name: a\nsizes: 4KiB\n", "key 'strategy': missing"},
        {"name: a\nstrategy: pinned\n", "key 'sizes': missing"},
        {"name: a\nstrategy: pinned\nsizes: [4KiB\n", "malformed YAML at line"},
        {"- just\n- a list\n", "must be a YAML map"},
        {base + "zero_copy: {access: 12B}\n", "key 'zero_copy.access'"},
        {base + "frame: {via: carrier_pigeon}\n", "key 'frame.via'"},
        {base + "platform: cray-1\n", "key 'platform': 'cray-1' is neither a shipped platform"},
    };
    for (const auto& c : cases) {
        const std::string e = error_of(c.yaml);
        EXPECT_EQ(e.rfind("s.yaml", 0), 0U) << c.yaml << " -> " << e;
        EXPECT_NE(e.find(c.expect), std::string::npos) << c.yaml << " -> " << e;
    }
    EXPECT_THROW(load_scenarios("/nonexistent/x.yaml"), core::InputError);
}

TEST(Scenario, EveryParameterIsDocumentedWithUnit) {
    const auto docs = describe(ModelParams{}, StrategyOptions{});
    EXPECT_GT(docs.size(), 30U);
    for (const auto& d : docs) {
        EXPECT_FALSE(d.unit.empty()) << d.path;
        EXPECT_GT(d.doc.size(), 10U) << d.path;
        EXPECT_NE(d.path.find('.'), std::string::npos);
    }
}

TEST(Scenario, ConfigJsonHasEveryParameter) {
    const auto v = parse_scenarios("name: a\nstrategy: pinned\nsizes: 4KiB\n", "s.yaml");
    core::JsonWriter j;
    write_config_json(j, v[0]);
    const std::string json = j.str();
    for (const auto& d : describe(ModelParams{}, StrategyOptions{})) {
        const std::string key = "\"" + d.path.substr(d.path.find('.') + 1) + "\"";
        EXPECT_NE(json.find(key), std::string::npos) << d.path;
    }
}

TEST(Scenario, PlanExpansionCarriesStrategyKeysAndSkips) {
    const auto v = parse_scenarios(
        "name: z\nplatform: radar-switch\nstrategy: [zero_copy, third_party_dma]\ndirection: h2d\n"
        "sizes: [4KiB, 8KiB]\nzero_copy: {access: 4B, stride: 8, blocks: 4, threads: 128}\n---\n"
        "name: p\nplatform: h200x2-nvlink\nstrategy: peer\ndirection: h2d\nsizes: 1MiB\npeer: {access: both}\n",
        "s.yaml");
    const core::Plan plan = expand_plan(v);
    ASSERT_EQ(plan.cases.size(), 2U + 2U + 2U);
    const auto& zc = plan.cases[0];
    EXPECT_EQ(zc.str("strategy"), "zero_copy");
    EXPECT_EQ(zc.integer("stride"), 8);
    EXPECT_EQ(zc.integer("access_bytes"), 4);
    EXPECT_FALSE(zc.has("hw_skip"));
    EXPECT_FALSE(zc.has("link_generation"));  // the scenario did not pin the link
    EXPECT_TRUE(plan.cases[2].has("hw_skip"));
    EXPECT_EQ(plan.cases[4].str("peer_access"), "1");
    EXPECT_EQ(plan.cases[5].str("peer_access"), "0");
    EXPECT_EQ(plan.cases[4].str("variant"), "peer=on");
    EXPECT_EQ(plan.cases[5].str("variant"), "peer=off");
}

TEST(Scenario, PlanExpansionCarriesTheIsolatingCasesKeys) {
    const auto v = parse_scenarios(
        "name: c\nstrategy: zero_copy\ndirection: h2d\nsizes: [64KiB]\n"
        "zero_copy: {pattern: chase, memory: device, hops: 77}\n---\n"
        "name: x\nstrategy: zero_copy\ndirection: both\nsizes: [1MiB]\nzero_copy: {access: 2B}\n"
        "compute: {duration: 3ms, blocks: 10, threads: 64, bytes: 1MiB}\n---\n"
        "name: a\nstrategy: async_overlap\nsizes: [1MiB]\nasync_overlap: {issue: breadth_first}\ndma: {engines: 1}\n---\n"
        "name: o\nstrategy: [pinned, registered]\ndirection: h2d\nsizes: [4KiB]\nhost_buffer: {offset: 64B}\n"
        "pinned: {setup_only: true}\nregistered: {setup_only: true}\n---\n"
        "name: l\nstrategy: peer\ndirection: h2d\nsizes: [1MiB]\npeer: {access: on, src_device: 0, dst_device: 0}\n",
        "s.yaml");
    const core::Plan plan = expand_plan(v);
    ASSERT_EQ(plan.cases.size(), 6U);
    const auto& chase = plan.cases[0];
    EXPECT_EQ(chase.str("pattern"), "chase");
    EXPECT_EQ(chase.str("memory"), "device");
    EXPECT_EQ(chase.integer("hops"), 77);
    const auto& x = plan.cases[1];
    EXPECT_EQ(x.integer("access_bytes"), 2);
    EXPECT_EQ(x.integer("compute_ns"), 3000000);
    EXPECT_EQ(x.integer("compute_blocks"), 10);
    EXPECT_EQ(x.integer("compute_bytes"), 1 << 20);
    EXPECT_FALSE(x.has("pattern"));  // a streaming kernel carries no chase keys
    EXPECT_EQ(plan.cases[2].str("issue"), "breadth_first");
    EXPECT_EQ(plan.cases[2].integer("copy_engines"), 1);  // set by the scenario: the harness must match it
    EXPECT_FALSE(x.has("copy_engines"));
    EXPECT_EQ(plan.cases[3].integer("host_offset"), 64);
    EXPECT_EQ(plan.cases[3].integer("setup_only"), 1);
    EXPECT_EQ(plan.cases[4].integer("setup_only"), 1);
    EXPECT_EQ(plan.cases[5].str("variant"), "local");
    EXPECT_EQ(plan.cases[5].integer("dst_device"), 0);
}

TEST(Scenario, IsolatingCaseOptionsAreChecked) {
    EXPECT_NE(error_of("name: a\nstrategy: zero_copy\nsizes: [4KiB]\nzero_copy: {access: 3B}\n").find("zero_copy.access"),
              std::string::npos);
    EXPECT_NE(error_of("name: a\nstrategy: zero_copy\nsizes: [4KiB]\nzero_copy: {pattern: zigzag}\n").find("zero_copy.pattern"),
              std::string::npos);
    EXPECT_NE(error_of("name: a\nstrategy: zero_copy\nsizes: [4KiB]\nzero_copy: {memory: device}\n").find("chase"),
              std::string::npos);
    EXPECT_NE(error_of("name: a\nstrategy: duplex\nsizes: [4KiB]\ncompute: {threads: 33}\n").find("compute.threads"),
              std::string::npos);
    EXPECT_NE(error_of("name: a\nstrategy: async_overlap\nsizes: [4KiB]\nasync_overlap: {issue: random}\n")
                  .find("async_overlap.issue"),
              std::string::npos);
    EXPECT_NE(error_of("name: a\nstrategy: peer\nsizes: [4KiB]\npeer: {access: off, src_device: 0, dst_device: 0}\n")
                  .find("peer.access"),
              std::string::npos);
}

}  // namespace
}  // namespace dmasim::config
