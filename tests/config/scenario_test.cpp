#include "dmasim/config/scenario.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>

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

// What a scenario's config.json and its explicit keys say: all a case reads of it.
std::string effective(const Scenario& sc) {
    core::JsonWriter j;
    write_config_json(j, sc);
    std::vector<std::string> keys = sc.explicit_keys;
    std::sort(keys.begin(), keys.end());
    std::string out = j.str() + (sc.link_explicit ? "\nlink explicit" : "\nlink from the platform");
    for (const auto& k : keys) out += "\n" + k;
    return out;
}

TEST(Scenario, ParameterSetOnAScenarioReadIsTheSameAsSetWhileReading) {
    const std::string yaml = "name: a\nstrategy: pinned\nsizes: 4KiB\nruntime: {sync_latency: 2us}\n";
    // Values a calibration step sets, none of them the default.
    const std::vector<SetOverride> sets{parse_set("runtime.call_overhead=3700ns"), parse_set("runtime.sync_latency=900ns"),
                                        parse_set("cpu.memcpy_bandwidth=14.9GB/s"), parse_set("dma.launch_latency=2461785ps"),
                                        parse_set("root_complex.forward_latency=314ns"), parse_set("link.generation=4")};
    Scenario applied = parse_scenarios(yaml, "s.yaml").at(0);
    for (const auto& set : sets) apply_parameter(applied, set);
    EXPECT_EQ(effective(applied), effective(parse_scenarios(yaml, "s.yaml", sets).at(0)));
    EXPECT_EQ(applied.params.cpu.memcpy_bandwidth.bytes_per_s, 14.9e9);
    EXPECT_TRUE(applied.link_explicit);

    // Every model parameter, at its default: the same again; a strategy option is not one.
    int parameters = 0;
    for (const auto& d : describe(ModelParams{}, StrategyOptions{})) {
        const SetOverride set{d.path, d.value, ""};
        Scenario sc = parse_scenarios(yaml, "s.yaml").at(0);
        try {
            apply_parameter(sc, set);
        } catch (const core::InputError& e) {
            EXPECT_NE(std::string(e.what()).find("not a model parameter"), std::string::npos) << d.path << ": " << e.what();
            EXPECT_NO_THROW(parse_scenarios(yaml, "s.yaml", {set})) << d.path;  // an option, set while reading
            continue;
        }
        ++parameters;
        EXPECT_EQ(effective(sc), effective(parse_scenarios(yaml, "s.yaml", {set}).at(0))) << d.path;
    }
    EXPECT_GT(parameters, 40);

    // A bad value, a value out of range, a key that is no parameter: the file and the key.
    Scenario sc = parse_scenarios(yaml, "s.yaml").at(0);
    for (const auto& [text, expect] : std::vector<std::pair<std::string, std::string>>{
             {"runtime.call_overhead=fast", "key 'runtime.call_overhead'"},
             {"link.lanes=3", "key 'link.lanes'"},
             {"runtime.warp_speed=1us", "key 'runtime.warp_speed': not a model parameter"},
             {"zero_copy.access=4B", "key 'zero_copy.access': not a model parameter"}}) {
        try {
            apply_parameter(sc, parse_set(text));
            ADD_FAILURE() << text << " was accepted";
        } catch (const core::InputError& e) {
            EXPECT_EQ(std::string(e.what()).rfind("s.yaml", 0), 0U) << e.what();
            EXPECT_NE(std::string(e.what()).find(expect), std::string::npos) << e.what();
        }
    }
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
        "name: a\nstrategy: async_overlap\nsizes: [1MiB]\nasync_overlap: {issue: breadth_first}\ndma: {engines: 1}\n"
        "runtime: {connections: 2}\n---\n"
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
    EXPECT_EQ(plan.cases[2].integer("connections"), 2);  // the run's CUDA_DEVICE_MAX_CONNECTIONS must match
    EXPECT_FALSE(x.has("connections"));
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
    EXPECT_NE(error_of("name: a\nstrategy: zero_copy\nsizes: [4KiB]\nzero_copy: {copy_beside: up}\n")
                  .find("zero_copy.copy_beside"),
              std::string::npos);
    EXPECT_NE(error_of("name: a\nstrategy: zero_copy\nsizes: [4KiB]\nzero_copy: {stores_beside: 8}\n")
                  .find("zero_copy.stores_beside"),
              std::string::npos);
    EXPECT_NE(error_of("name: a\nstrategy: zero_copy\ndirection: h2d\nsizes: [4KiB]\n"
                       "zero_copy: {pattern: chase, stores_beside: 2000}\n")
                  .find("zero_copy.stores_beside"),
              std::string::npos);
    EXPECT_NE(error_of("name: a\nstrategy: zero_copy\ndirection: h2d\nsizes: [4KiB]\n"
                       "zero_copy: {pattern: chase, stores_beside: 8, hops: 5000}\n")
                  .find("zero_copy.hops"),
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

// Issue 11: values without an upper bound passed validation and then made `run` hang or grow
// memory. Every scenario value now has a bound (core/limits.h, docs/scenarios.md "Limits").
TEST(ScenarioLimits, SizesAboveTheLargestCopyAreRefused) {
    EXPECT_EQ(error_of("strategy: pinned\nsizes: 64GiB\n"), "");
    const std::string e = error_of("strategy: pinned\nsizes: 1TiB\n");
    EXPECT_NE(e.find("key 'sizes'"), std::string::npos) << e;
    EXPECT_NE(e.find("64GiB"), std::string::npos) << e;
    EXPECT_NE(error_of("strategy: pinned\nsizes: 68719476737B\n").find("key 'sizes'"), std::string::npos);
    EXPECT_NE(error_of("strategy: pinned\nsizes: {from: 1MiB, to: 1TiB}\n").find("key 'sizes.to'"), std::string::npos);
    EXPECT_NE(error_of("strategy: pinned\nsizes: 4KiB\n", {parse_set("sizes=4KiB,2TiB")}).find("key 'sizes'"),
              std::string::npos);
}

TEST(ScenarioLimits, RangesAreCountedBeforeTheyAreExpanded) {
    // 2^36 sizes: expanding them first ran `validate` out of memory. The exact count in the
    // message can only come from counting, since expansion stops at 10001 sizes.
    const std::string e = error_of("strategy: pinned\nsizes: {from: 1B, to: 64GiB, step: 1B}\n");
    EXPECT_NE(e.find("key 'sizes'"), std::string::npos) << e;
    EXPECT_NE(e.find("68719476736 sizes"), std::string::npos) << e;
    // A factor barely above 1: the count of steps, not the sizes that rounding leaves distinct.
    EXPECT_NE(error_of("strategy: pinned\nsizes: {from: 1B, to: 64GiB, factor: 1.000001}\n").find("more than 10000 sizes"),
              std::string::npos);
    // The bound itself is allowed.
    const auto v = parse_scenarios("strategy: pinned\nsizes: {from: 1B, to: 10000B, step: 1B}\n", "s.yaml");
    EXPECT_EQ(v[0].sizes.size(), 10000U);
    EXPECT_NE(error_of("strategy: pinned\nsizes: {from: 1B, to: 10001B, step: 1B}\n"), "");
    // A direct call is capped too, and does not wrap past `to`.
    EXPECT_EQ(expand_size_range(1, std::uint64_t{1} << 40, 0, 1).size(), 10001U);
    EXPECT_EQ(expand_size_range(~std::uint64_t{0} - 10, ~std::uint64_t{0}, 0, 8).size(), 2U);
}

TEST(ScenarioLimits, EveryCountAndDurationHasAnUpperBound) {
    struct Case {
        std::string yaml;
        std::string key;
    };
    const std::string pinned = "strategy: pinned\nsizes: 4KiB\n";
    const Case cases[] = {
        {pinned + "repetitions: 1000001\n", "repetitions"},
        {pinned + "warmup: 1000001\n", "warmup"},
        {"strategy: registered\nsizes: 4KiB\nregistered: {reuses: 1000001}\n", "registered.reuses"},
        {"strategy: async_overlap\nsizes: 4KiB\nasync_overlap: {streams: 65}\n", "async_overlap.streams"},
        {"strategy: async_overlap\nsizes: 4KiB\nasync_overlap: {kernel: 3601s}\n", "async_overlap.kernel"},
        {"strategy: zero_copy\nsizes: 4KiB\nzero_copy: {stride: 1048577}\n", "zero_copy.stride"},
        {"strategy: zero_copy\nsizes: 4KiB\nzero_copy: {blocks: 2147483648}\n", "zero_copy.blocks"},
        {"strategy: zero_copy\nsizes: 4KiB\nzero_copy: {pattern: chase, hops: 100000001}\n", "zero_copy.hops"},
        {"strategy: duplex\nsizes: 4KiB\ncompute: {duration: 3601s}\n", "compute.duration"},
        {"strategy: duplex\nsizes: 4KiB\ncompute: {blocks: 1000001}\n", "compute.blocks"},
        {"strategy: peer\nsizes: 4KiB\npeer: {src_device: 0, dst_device: 1024}\n", "peer.dst_device"},
        {"strategy: peer\nsizes: 4KiB\npeer: {src_device: 1024}\n", "peer.src_device"},
        {"strategy: periodic\nframe: {count: 1000000000}\n", "frame.count"},
        {"strategy: periodic\nframe: {count: 100001, size: 1KiB, period: 1us}\n", "frame.count"},
        {"strategy: periodic\nframe: {size: 65GiB, count: 1}\n", "frame.size"},
        {"strategy: periodic\nframe: {period: 3601s, count: 1}\n", "frame.period"},
        {"strategy: periodic\nframe: {period: 500ps}\n", "frame.period"},
        {"strategy: periodic\nframe: {deadline: 500ps}\n", "frame.deadline"},
        {"strategy: periodic\nframe: {kernel: 3601s}\n", "frame.kernel"},
        // One hour of frames, and 128 GiB moved in one case, at most.
        {"strategy: periodic\nframe: {count: 1000, period: 4s, size: 1KiB}\n", "frame.count"},
        {"strategy: periodic\nframe: {count: 100000, period: 1ms, size: 4MiB}\n", "frame.count"},
    };
    for (const auto& c : cases) {
        const std::string e = error_of(c.yaml);
        EXPECT_NE(e.find("key '" + c.key + "'"), std::string::npos) << c.yaml << " -> " << e;
    }
}

TEST(ScenarioLimits, ValuesAtTheirBoundsPass) {
    const auto v = parse_scenarios(
        "name: a\nstrategy: [pinned, registered]\ndirection: h2d\nsizes: [1B, 64GiB]\nrepetitions: 1000000\n"
        "warmup: 1000000\nregistered: {reuses: 1000000}\nhost_buffer: {offset: 1GiB}\n---\n"
        "name: b\nstrategy: async_overlap\nsizes: [64B, 64GiB]\nasync_overlap: {streams: 64, kernel: 3600s}\n---\n"
        "name: c\nstrategy: periodic\nframe: {count: 100000, period: 36ms, size: 1MiB, deadline: 1ns, kernel: 3600s}\n---\n"
        "name: d\nstrategy: zero_copy\nsizes: 64GiB\ndirection: h2d\nzero_copy: {access: 16B, stride: 2, blocks: 2147483647}\n"
        "compute: {duration: 3600s, blocks: 1000000, bytes: 1TiB}\n---\n"
        "name: e\nstrategy: peer\nsizes: 64GiB\npeer: {src_device: 1023, dst_device: 0}\n",
        "s.yaml");
    ASSERT_EQ(v.size(), 5U);
    EXPECT_EQ(v[0].sizes.back(), std::uint64_t{64} << 30);
    EXPECT_EQ(v[2].options.periodic.count, 100000);
}

TEST(ScenarioLimits, FlowsAreBounded) {
    const std::string head = "platform: workstation-2gpu-switch\nflows:\n";
    EXPECT_EQ(error_of(head + "  - {size: 64GiB}\n  - {size: 64GiB, device: 1}\n"), "");
    EXPECT_NE(error_of(head + "  - {size: 65GiB}\n").find("key 'flows[0].size'"), std::string::npos);
    EXPECT_NE(error_of(head + "  - {size: 64GiB}\n  - {size: 64GiB}\n  - {size: 1MiB}\n").find("key 'flows[2].size'"),
              std::string::npos);
    EXPECT_NE(error_of(head + "  - {size: 1MiB, start: 3601s}\n").find("key 'flows[0].start'"), std::string::npos);
    EXPECT_NE(error_of(head + "  - {size: 1MiB, device: 1024}\n").find("key 'flows[0].device'"), std::string::npos);
    std::string many = head;
    for (int i = 0; i < 65; ++i) many += "  - {size: 1MiB}\n";
    EXPECT_NE(error_of(many).find("key 'flows': 65 flows"), std::string::npos);
}

// Cases that used to pass validation and then deadlock or run for hours.
TEST(ScenarioLimits, CasesTheModelCannotFinishAreRefused) {
    // async_overlap below its stream count: an empty chunk deadlocked the whole run.
    std::string e = error_of("strategy: async_overlap\nsizes: [1MiB, 3B]\nasync_overlap: {streams: 4}\n");
    EXPECT_NE(e.find("key 'sizes': 3B is below async_overlap.streams (4)"), std::string::npos) << e;
    EXPECT_EQ(error_of("strategy: async_overlap\nsizes: 4B\nasync_overlap: {streams: 4}\n"), "");
    // A BAR window of 4 KiB cuts 64 GiB into 16M remaps.
    e = error_of("platform: radar-switch\nstrategy: third_party_dma\nsizes: 64GiB\ngpu: {bar_aperture: 4KiB}\n");
    EXPECT_NE(e.find("key 'gpu.bar_aperture'"), std::string::npos) << e;
    EXPECT_EQ(error_of("platform: radar-switch\nstrategy: third_party_dma\nsizes: 64GiB\ngpu: {bar_aperture: 256MiB}\n"), "");
    // The campaign's 1-byte window is refused, whichever check sees it first.
    EXPECT_NE(error_of("platform: radar-switch\nstrategy: third_party_dma\nsizes: 1MiB\ngpu: {bar_aperture: 1B}\n")
                  .find("key 'gpu.bar_aperture'"),
              std::string::npos);
    // Staging 64 GiB through 4 KiB bounce buffers: 16M chunks.
    e = error_of("strategy: pageable\nsizes: 64GiB\npageable: {bounce_size: 4KiB}\n");
    EXPECT_NE(e.find("key 'pageable.bounce_size'"), std::string::npos) << e;
    e = error_of("strategy: periodic\nframe: {via: pageable, count: 100000, size: 1MiB, period: 10ms}\npageable: {bounce_size: 4KiB}\n");
    EXPECT_NE(e.find("key 'frame.count'"), std::string::npos) << e;
    // Strided 1-byte zero-copy accesses move a 32-byte sector each: 32x the work.
    e = error_of("strategy: zero_copy\nsizes: 64GiB\ndirection: h2d\nzero_copy: {access: 1B, stride: 32}\n");
    EXPECT_NE(e.find("key 'sizes'"), std::string::npos) << e;
    EXPECT_EQ(error_of("strategy: zero_copy\nsizes: 4GiB\ndirection: h2d\nzero_copy: {access: 1B, stride: 32}\n"), "");
    // Uncached 1-byte loads: a round trip per byte.
    e = error_of("strategy: cpu_mapped\nsizes: 64GiB\ndirection: d2h\ncpu: {mmio_read_bytes: 1B}\n");
    EXPECT_NE(e.find("key 'sizes'"), std::string::npos) << e;
}

// What `dmasim plan` writes must be what dmaprobe runs (gpu_validation/src/spec.cpp): these
// cases used to expand into plan lines dmaprobe refused.
TEST(ScenarioLimits, CasesDmaprobeRefusesAreRefusedHere) {
    EXPECT_NE(error_of("strategy: zero_copy\nsizes: 4098B\nzero_copy: {access: 4B}\n").find("multiple of zero_copy.access"),
              std::string::npos);
    EXPECT_NE(error_of("strategy: zero_copy\nsizes: 32B\nzero_copy: {pattern: chase}\n").find("chase node"),
              std::string::npos);
    EXPECT_NE(error_of("strategy: zero_copy\nsizes: 4KiB\nzero_copy: {pattern: chase}\ncompute: {duration: 1ms}\n")
                  .find("key 'compute.duration'"),
              std::string::npos);
    EXPECT_NE(error_of("strategy: duplex\nsizes: 4KiB\nduplex: {host_memory: pageable}\ncompute: {duration: 1ms}\n")
                  .find("key 'compute.duration'"),
              std::string::npos);
    EXPECT_NE(error_of("strategy: duplex\nsizes: 4KiB\nduplex: {host_memory: pageable, one_way_beside: true}\n")
                  .find("key 'duplex.one_way_beside'"),
              std::string::npos);
    EXPECT_NE(error_of("strategy: duplex\nsizes: 4KiB\nduplex: {one_way_beside: true}\ncompute: {duration: 1ms}\n")
                  .find("key 'duplex.one_way_beside'"),
              std::string::npos);
    EXPECT_EQ(error_of("strategy: duplex\nsizes: 4KiB\nduplex: {one_way_beside: true}\n"), "");
    EXPECT_NE(error_of("strategy: [pinned, pageable]\nsizes: 4KiB\nhost_buffer: {fresh: true}\n").find("key 'host_buffer.fresh'"),
              std::string::npos);
    EXPECT_EQ(error_of("strategy: pageable\nsizes: 4KiB\nhost_buffer: {fresh: true}\n"), "");
    EXPECT_NE(error_of("strategy: peer\ndirection: both\nsizes: 4KiB\npeer: {access: on, src_device: 0, dst_device: 0}\n")
                  .find("key 'direction'"),
              std::string::npos);
    // Without a direction, a copy within one GPU is one-way only (peer's default adds 'both').
    const auto v = parse_scenarios("strategy: peer\nsizes: 4KiB\npeer: {access: on, src_device: 0, dst_device: 0}\n", "s.yaml");
    EXPECT_EQ(v[0].directions, (std::vector<std::string>{"h2d"}));
    // dmaprobe measures peer one way (h2d) or both ways, and a chase as loads (h2d).
    EXPECT_NE(error_of("strategy: peer\ndirection: d2h\nsizes: 4KiB\n").find("key 'direction'"), std::string::npos);
    EXPECT_NE(error_of("strategy: zero_copy\ndirection: d2h\nsizes: 4KiB\nzero_copy: {pattern: chase}\n").find("key 'direction'"),
              std::string::npos);
    const auto chase = parse_scenarios("strategy: zero_copy\nsizes: 4KiB\nzero_copy: {pattern: chase}\n", "s.yaml");
    EXPECT_EQ(chase[0].directions, (std::vector<std::string>{"h2d"}));
    // The model runs cpu_mapped one direction at a time: 'both' failed only once simulated.
    EXPECT_NE(error_of("strategy: cpu_mapped\ndirection: both\nsizes: 4KiB\n").find("key 'direction'"), std::string::npos);
    // Pinned both ways is simulated; dmaprobe measures it as duplex, so the plan skips it.
    const core::Plan plan = expand_plan(parse_scenarios("strategy: [pinned, pageable]\ndirection: [h2d, both]\nsizes: 4KiB\n", "s.yaml"));
    ASSERT_EQ(plan.cases.size(), 4U);
    EXPECT_FALSE(plan.cases[0].has("hw_skip"));
    EXPECT_NE(plan.cases[1].str_or("hw_skip", "").find("duplex"), std::string::npos);
    EXPECT_NE(plan.cases[3].str_or("hw_skip", "").find("duplex.host_memory: pageable"), std::string::npos);
    // duplex.burst: copies of each size back to back until the burst has gone each way.
    EXPECT_EQ(error_of("strategy: duplex\nsizes: [4KiB, 4MiB]\nduplex: {burst: 2MiB}\n"), "");
    EXPECT_NE(error_of("strategy: duplex\nsizes: 4KiB\nduplex: {host_memory: pageable, burst: 4MiB}\n")
                  .find("key 'duplex.burst'"),
              std::string::npos);
    EXPECT_NE(error_of("strategy: duplex\nsizes: 4KiB\nduplex: {one_way_beside: true, burst: 4MiB}\n")
                  .find("key 'duplex.burst'"),
              std::string::npos);
    EXPECT_NE(error_of("strategy: duplex\nsizes: 4KiB\nduplex: {burst: 4MiB}\ncompute: {duration: 1ms}\n")
                  .find("key 'duplex.burst'"),
              std::string::npos);
    // 4 MiB of 64-byte copies is 65536 copies each way.
    const std::string many = error_of("strategy: duplex\nsizes: 64B\nduplex: {burst: 4MiB}\n");
    EXPECT_NE(many.find("key 'duplex.burst'"), std::string::npos);
    EXPECT_NE(many.find("65536 copies"), std::string::npos);

}

}  // namespace
}  // namespace dmasim::config

namespace dmasim::config {
namespace {

TEST(Scenario, FrameCoversProcessingOrTransfer) {
    const std::string base = "strategy: periodic\ndirection: h2d\nframe: {kernel: 2ms, covers: ";
    EXPECT_EQ(parse_scenarios(base + "transfer}\n", "s.yaml").at(0).options.periodic.covers, "transfer");
    EXPECT_EQ(parse_scenarios("strategy: periodic\ndirection: h2d\n", "s.yaml").at(0).options.periodic.covers, "processing");
    EXPECT_NE(error_of(base + "nothing}\n").find("s.yaml: key 'frame.covers'"), std::string::npos);
    // The harness times frames to the end of their processing: a transfer-only deadline with a
    // kernel is the model's alone.
    const core::Plan plan = expand_plan(parse_scenarios(base + "transfer}\n", "s.yaml"));
    ASSERT_EQ(plan.cases.size(), 1U);
    EXPECT_NE(plan.cases[0].str("hw_skip").find("frame.covers: transfer"), std::string::npos);
    EXPECT_FALSE(expand_plan(parse_scenarios(base + "processing}\n", "s.yaml")).cases[0].has("hw_skip"));
}

}  // namespace
}  // namespace dmasim::config

namespace dmasim::config {
namespace {

// What the scenario reads when `parameters` of the calibration `ref` are applied by hand.
Scenario by_hand(const std::string& yaml, const std::string& ref) {
    Scenario s = parse_scenarios(yaml, "s.yaml").at(0);
    for (const auto& p : load_calibration(ref).parameters) apply_parameter(s, p);
    return s;
}

TEST(Calibration, EachScenarioStartsFromItsPlatformsCalibration) {
    const std::string h100 = "strategy: pinned\nsizes: 4KiB\n";  // the default platform
    const Scenario s = parse_scenarios(h100, "s.yaml", {}, CalibrationChoice::platform()).at(0);
    EXPECT_EQ(s.calibration, "h100-sxm");
    const Scenario expected = by_hand(h100, "h100-sxm");
    EXPECT_EQ(s.params.runtime.call_overhead.ps, expected.params.runtime.call_overhead.ps);
    EXPECT_EQ(s.params.cpu.memcpy_bandwidth.bytes_per_s, expected.params.cpu.memcpy_bandwidth.bytes_per_s);
    // The calibration moves parameters off their defaults, or this test would prove nothing.
    EXPECT_NE(s.params.runtime.call_overhead.ps, RuntimeParams{}.call_overhead.ps);

    // Another platform, another machine's calibration.
    const std::string h200 = "strategy: pinned\nsizes: 4KiB\nplatform: h200x2-nvlink\n";
    const Scenario t = parse_scenarios(h200, "s.yaml", {}, CalibrationChoice::platform()).at(0);
    EXPECT_EQ(t.calibration, "h200x2-nvlink");
    EXPECT_EQ(t.params.runtime.call_overhead.ps, by_hand(h200, "h200x2-nvlink").params.runtime.call_overhead.ps);
    EXPECT_NE(t.params.runtime.call_overhead.ps, s.params.runtime.call_overhead.ps);

    // An override naming the platform is applied before the platform's calibration is chosen.
    const Scenario moved =
        parse_scenarios(h100, "s.yaml", {parse_set("platform=h200x2-nvlink")}, CalibrationChoice::platform()).at(0);
    EXPECT_EQ(moved.calibration, "h200x2-nvlink");
}

TEST(Calibration, NoneGivesTheDefaultsAndSetWinsOverACalibration) {
    const std::string yaml = "strategy: pinned\nsizes: 4KiB\n";
    const Scenario none = parse_scenarios(yaml, "s.yaml", {}, CalibrationChoice::fixed("none")).at(0);
    EXPECT_EQ(none.calibration, "none");
    EXPECT_EQ(none.params.runtime.call_overhead.ps, RuntimeParams{}.call_overhead.ps);
    // Without a choice (the library's callers, tests) nothing is calibrated either.
    EXPECT_EQ(parse_scenarios(yaml, "s.yaml").at(0).params.runtime.call_overhead.ps, RuntimeParams{}.call_overhead.ps);
    for (const auto& choice : {CalibrationChoice::platform(), CalibrationChoice::fixed("h100-sxm")}) {
        const Scenario s = parse_scenarios(yaml, "s.yaml", {parse_set("runtime.call_overhead=1us")}, choice).at(0);
        EXPECT_EQ(s.params.runtime.call_overhead.ps, 1000000);
        EXPECT_EQ(s.calibration, "h100-sxm");  // the rest of it still applies
        EXPECT_EQ(s.params.cpu.memcpy_bandwidth.bytes_per_s,
                  by_hand(yaml, "h100-sxm").params.cpu.memcpy_bandwidth.bytes_per_s);
    }
}

class CalibrationFiles : public ::testing::Test {
protected:
    void SetUp() override {
        char tmpl[] = "/tmp/dmasim-cal-XXXXXX";
        ASSERT_NE(::mkdtemp(tmpl), nullptr);
        dir_ = tmpl;
    }
    std::string write(const std::string& name, const std::string& text) const {
        std::ofstream(dir_ + "/" + name) << text;
        return dir_ + "/" + name;
    }
    std::string platform(const std::string& calibration_line) const {
        return write("p.yaml", "name: p\n" + calibration_line +
                                   "nodes:\n  - { name: cpu0, kind: cpu }\n  - { name: rc0, kind: root_complex }\n"
                                   "  - { name: gpu0, kind: gpu }\nlinks:\n  - { a: cpu0, b: rc0, kind: internal }\n"
                                   "  - { a: rc0, b: gpu0, kind: pcie }\n");
    }
    // The error a scenario on p.yaml gets, from the platform's calibration (empty: none).
    std::string load_error() const {
        const std::string scenario = write("s.yaml", "strategy: pinned\nsizes: 4KiB\nplatform: p.yaml\n");
        try {
            load_scenarios(scenario, {}, CalibrationChoice::platform());
        } catch (const core::InputError& e) {
            return std::string(e.what());
        }
        return std::string();
    }
    std::string dir_;
};

TEST_F(CalibrationFiles, APlatformFileNamesAFileBesideItOrNone) {
    write("cal.yaml", "parameters:\n  runtime.call_overhead: 7us\n");
    platform("calibration: cal.yaml\n");
    const std::string scenario = write("s.yaml", "strategy: pinned\nsizes: 4KiB\nplatform: p.yaml\n");
    const Scenario s = load_scenarios(scenario, {}, CalibrationChoice::platform()).at(0);
    EXPECT_EQ(s.params.runtime.call_overhead.ps, 7000000);
    EXPECT_EQ(s.calibration, dir_ + "/cal.yaml");
    // --calibration names another for every scenario, whatever the platform says.
    EXPECT_EQ(load_scenarios(scenario, {}, CalibrationChoice::fixed("none")).at(0).params.runtime.call_overhead.ps,
              RuntimeParams{}.call_overhead.ps);
    // A platform that names no calibration: the defaults.
    platform("");
    const Scenario plain = load_scenarios(scenario, {}, CalibrationChoice::platform()).at(0);
    EXPECT_EQ(plain.calibration, "none");
    EXPECT_EQ(plain.params.runtime.call_overhead.ps, RuntimeParams{}.call_overhead.ps);
}

TEST_F(CalibrationFiles, ABadReferenceNamesThePlatformFileAndKey) {
    const auto error = [&] { return load_error(); };
    platform("calibration: missing.yaml\n");
    EXPECT_NE(error().find("p.yaml: key 'calibration': 'missing.yaml' is neither a built-in calibration (h100-sxm"),
              std::string::npos)
        << error();
    platform("calibration: [a, b]\n");
    EXPECT_NE(error().find("p.yaml: key 'calibration'"), std::string::npos) << error();
    // A calibration file with a parameter that does not exist: named by that file.
    write("cal.yaml", "parameters:\n  runtime.call_overheat: 7us\n");
    platform("calibration: cal.yaml\n");
    EXPECT_NE(error().find("cal.yaml: key 'parameters.runtime.call_overheat'"), std::string::npos) << error();
}

TEST_F(CalibrationFiles, APlatformsHostValuesGoOverItsCalibrationAndUnderSet) {
    write("cal.yaml", "parameters:\n  cpu.memcpy_bandwidth: 12GB/s\n  runtime.call_overhead: 7us\n");
    platform("calibration: cal.yaml\nhost:\n  cpu: { memcpy_bandwidth: 6GB/s, llc_size: 50MB }\n"
             "  host_memory: { bandwidth: 68.3GB/s }\n");
    const std::string scenario = write("s.yaml", "strategy: pinned\nsizes: 4KiB\nplatform: p.yaml\n");
    const Scenario s = load_scenarios(scenario, {}, CalibrationChoice::platform()).at(0);
    EXPECT_DOUBLE_EQ(s.params.cpu.memcpy_bandwidth.bytes_per_s, 6e9);
    EXPECT_EQ(s.params.cpu.llc_size.value, 50000000U);
    EXPECT_DOUBLE_EQ(s.params.host_memory.bandwidth.bytes_per_s, 68.3e9);
    // The calibration's other values stay, and the label says where the host's come from.
    EXPECT_EQ(s.params.runtime.call_overhead.ps, 7000000);
    EXPECT_EQ(s.calibration, dir_ + "/cal.yaml" + kHostOf + dir_ + "/p.yaml");
    // --set wins over both.
    const Scenario set =
        load_scenarios(scenario, {parse_set("cpu.memcpy_bandwidth=9GB/s")}, CalibrationChoice::platform()).at(0);
    EXPECT_DOUBLE_EQ(set.params.cpu.memcpy_bandwidth.bytes_per_s, 9e9);
    // A calibration named on the command line applies alone: it was fitted to a machine whole.
    const Scenario fixed = load_scenarios(scenario, {}, CalibrationChoice::fixed(dir_ + "/cal.yaml")).at(0);
    EXPECT_DOUBLE_EQ(fixed.params.cpu.memcpy_bandwidth.bytes_per_s, 12e9);
    EXPECT_EQ(fixed.calibration, dir_ + "/cal.yaml");
}

TEST_F(CalibrationFiles, ABadHostValueNamesThePlatformFileAndKey) {
    const auto error = [&] { return load_error(); };
    platform("host:\n  cpu: { memcpy_bandwidht: 6GB/s }\n");
    EXPECT_NE(error().find("p.yaml: key 'host.cpu.memcpy_bandwidht': not a model parameter"), std::string::npos)
        << error();
    platform("host:\n  cpu: { memcpy_bandwidth: -6GB/s }\n");
    EXPECT_NE(error().find("p.yaml: key 'host.cpu.memcpy_bandwidth'"), std::string::npos) << error();
    // Only the host's sections: a GPU's or a link's settings are not the host's.
    platform("host:\n  gpu: { sms: 80 }\n");
    EXPECT_NE(error().find("p.yaml: key 'host.gpu': not a host section; host takes: cpu, host_memory"),
              std::string::npos)
        << error();
    platform("host: 6GB/s\n");
    EXPECT_NE(error().find("p.yaml: key 'host'"), std::string::npos) << error();
}

}  // namespace
}  // namespace dmasim::config
