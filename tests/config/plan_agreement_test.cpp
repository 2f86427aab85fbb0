// `dmasim plan` and dmaprobe agree (issue 11): every plan case dmasim writes from a valid
// scenario is one dmaprobe's case checks accept, and a value just past a limit is refused on
// both sides. dmaprobe's checks (gpu_validation/src/spec.cpp) are plain C++ and compiled into
// this test, so it runs without the CUDA toolkit.
#include <gtest/gtest.h>

#include <filesystem>

#include "dmasim/config/plan_expand.h"
#include "dmasim/config/scenario.h"
#include "dmasim/core/error.h"
#include "dmasim/core/limits.h"
#include "spec.h"

namespace dmasim::config {
namespace {

namespace lim = core::limits;

dmaprobe::Options probe_options() {
    dmaprobe::Options o;
    o.plan = "plan.txt";
    o.out = "out";
    return o;
}

// dmaprobe's verdict on every case of `plan` ("" when it accepts them all).
std::string refusals(const core::Plan& plan) {
    std::string out;
    for (std::size_t i = 0; i < plan.cases.size(); ++i) {
        try {
            dmaprobe::decide_case(plan.cases[i], i, "plan.txt", probe_options());
        } catch (const core::InputError& e) {
            out += std::string(e.what()) + "\n";
        }
    }
    return out;
}

TEST(PlanAgreement, EveryShippedScenarioGivesAPlanDmaprobeAccepts) {
    namespace fs = std::filesystem;
    std::size_t cases = 0;
    for (const auto& entry : fs::recursive_directory_iterator(fs::path(DMASIM_SOURCE_DIR) / "scenarios")) {
        if (entry.path().extension() != ".yaml") continue;
        const core::Plan plan = expand_plan(load_scenarios(entry.path().string()));
        cases += plan.cases.size();
        EXPECT_EQ(refusals(plan), "") << entry.path();
    }
    EXPECT_GT(cases, 300U);
}

// Each row: a scenario at a limit, which both accept; the same scenario one step past it, which
// dmasim refuses; and that step written into the first scenario's plan, which dmaprobe refuses
// naming `refused_key` (the plan key itself where empty).
struct Limit {
    const char* what;
    std::string at_limit;
    std::string past_limit;
    const char* plan_key;
    std::string plan_value;
    const char* refused_key = "";
};

std::string sized(const std::string& strategy, const std::string& size, const std::string& rest = "",
                  const std::string& name = "s") {
    return "name: " + name + "\nstrategy: " + strategy + "\nsizes: " + size + "\n" + rest;
}

const std::vector<Limit>& limits() {
    const std::string max_size = std::to_string(lim::kMaxCopyBytes) + "B";
    const std::string over_size = std::to_string(lim::kMaxCopyBytes + 1) + "B";
    static const std::vector<Limit> rows{
        {"largest copy", sized("pinned", max_size), sized("pinned", over_size), "size_bytes",
         std::to_string(lim::kMaxCopyBytes + 1)},
        {"repetitions", sized("pinned", "4KiB", "repetitions: 1000000\n"), sized("pinned", "4KiB", "repetitions: 1000001\n"),
         "repetitions", "1000001"},
        {"warmup", sized("pinned", "4KiB", "warmup: 1000000\n"), sized("pinned", "4KiB", "warmup: 1000001\n"), "warmup",
         "1000001"},
        {"reuses", sized("registered", "4KiB", "registered: {reuses: 1000000}\n"),
         sized("registered", "4KiB", "registered: {reuses: 1000001}\n"), "reuses", "1000001"},
        {"streams", sized("async_overlap", "1MiB", "async_overlap: {streams: 64}\n"),
         sized("async_overlap", "1MiB", "async_overlap: {streams: 65}\n"), "streams", "65"},
        {"size below the streams", sized("async_overlap", "64B", "async_overlap: {streams: 64}\n"),
         sized("async_overlap", "63B", "async_overlap: {streams: 64}\n"), "size_bytes", "63"},
        {"async kernel", sized("async_overlap", "1MiB", "async_overlap: {kernel: 3600s}\n"),
         sized("async_overlap", "1MiB", "async_overlap: {kernel: 3601s}\n"), "kernel_ns", "3601000000000"},
        {"stride", sized("zero_copy", "4KiB", "direction: h2d\nzero_copy: {stride: 1048576}\n"),
         sized("zero_copy", "4KiB", "direction: h2d\nzero_copy: {stride: 1048577}\n"), "stride", "1048577"},
        {"zero-copy size a multiple of the access", sized("zero_copy", "4KiB", "direction: h2d\nzero_copy: {access: 4B}\n"),
         sized("zero_copy", "4098B", "direction: h2d\nzero_copy: {access: 4B}\n"), "size_bytes", "4098"},
        {"hops", sized("zero_copy", "64B", "direction: h2d\nzero_copy: {pattern: chase, hops: 100000000}\n"),
         sized("zero_copy", "64B", "direction: h2d\nzero_copy: {pattern: chase, hops: 100000001}\n"), "hops", "100000001"},
        {"a chase node", sized("zero_copy", "64B", "direction: h2d\nzero_copy: {pattern: chase}\n"),
         sized("zero_copy", "32B", "direction: h2d\nzero_copy: {pattern: chase}\n"), "size_bytes", "32"},
        {"compute duration", sized("duplex", "4KiB", "compute: {duration: 3600s}\n"),
         sized("duplex", "4KiB", "compute: {duration: 3601s}\n"), "compute_ns", "3601000000000"},
        {"compute blocks", sized("duplex", "4KiB", "compute: {duration: 1ms, blocks: 1000000}\n"),
         sized("duplex", "4KiB", "compute: {duration: 1ms, blocks: 1000001}\n"), "compute_blocks", "1000001"},
        {"burst copies", sized("duplex", "1KiB", "duplex: {burst: 512KiB}\n"), sized("duplex", "1KiB", "duplex: {burst: 513KiB}\n"),
         "burst_copies", "513"},
        {"host offset", sized("pinned", "4KiB", "host_buffer: {offset: 1GiB}\n"),
         sized("pinned", "4KiB", "host_buffer: {offset: 1073741825B}\n"), "host_offset", "1073741825"},
        {"device ordinal", sized("peer", "4KiB", "peer: {access: on, src_device: 0, dst_device: 1023}\n"),
         sized("peer", "4KiB", "peer: {access: on, src_device: 0, dst_device: 1024}\n"), "dst_device", "1024"},
        {"frames", "name: s\nstrategy: periodic\nframe: {count: 100000, size: 1KiB, period: 1ms}\n",
         "name: s\nstrategy: periodic\nframe: {count: 100001, size: 1KiB, period: 1ms}\n", "frames", "100001"},
        {"an hour of frames", "name: s\nstrategy: periodic\nframe: {count: 1000, size: 1KiB, period: 3600ms}\n",
         "name: s\nstrategy: periodic\nframe: {count: 1000, size: 1KiB, period: 3601ms}\n", "period_ns", "3601000000",
         "frames"},
        {"bytes of a frame stream", "name: s\nstrategy: periodic\nframe: {count: 2048, size: 64MiB, period: 1ms}\n",
         "name: s\nstrategy: periodic\nframe: {count: 2049, size: 64MiB, period: 1ms}\n", "frames", "2049"},
        {"frame period of a nanosecond", "name: s\nstrategy: periodic\nframe: {period: 1ns, size: 1KiB}\n",
         "name: s\nstrategy: periodic\nframe: {period: 999ps, size: 1KiB}\n", "period_ns", "0"},
    };
    return rows;
}

TEST(PlanAgreement, AtALimitBothAcceptAndPastItBothRefuse) {
    for (const Limit& l : limits()) {
        SCOPED_TRACE(l.what);
        core::Plan plan;
        ASSERT_NO_THROW(plan = expand_plan(parse_scenarios(l.at_limit, "s.yaml"))) << l.at_limit;
        ASSERT_FALSE(plan.cases.empty());
        EXPECT_EQ(refusals(plan), "");
        EXPECT_THROW(parse_scenarios(l.past_limit, "s.yaml"), core::InputError) << l.past_limit;
        for (auto& c : plan.cases) {
            ASSERT_TRUE(c.has(l.plan_key)) << l.plan_key;
            c.set(l.plan_key, l.plan_value);
        }
        const std::string refused = refusals(plan);
        const std::string key = *l.refused_key != '\0' ? l.refused_key : l.plan_key;
        EXPECT_NE(refused.find("key '" + key + "'"), std::string::npos) << refused;
    }
}

// Every strategy in every direction validation lets through: dmaprobe runs or skips each case,
// and never refuses one.
TEST(PlanAgreement, EveryDirectionValidationAllowsIsOneDmaprobeTakes) {
    std::string yaml;
    int n = 0;
    for (const char* st : {"pageable", "pinned", "registered", "async_overlap", "duplex", "zero_copy", "peer",
                           "third_party_dma", "cpu_mapped", "periodic"}) {
        for (const char* dir : {"h2d", "d2h", "both"}) {
            const std::string doc = "name: c" + std::to_string(n++) + "\nplatform: radar-switch\nstrategy: " + st +
                                    "\ndirection: " + dir + "\nsizes: 4KiB\n";
            try {
                parse_scenarios(doc, "s.yaml");
            } catch (const core::InputError&) {
                continue;  // refused by validation: never planned
            }
            yaml += (yaml.empty() ? "" : "---\n") + doc;
        }
    }
    const core::Plan plan = expand_plan(parse_scenarios(yaml, "s.yaml"));
    EXPECT_GT(plan.cases.size(), 15U);
    EXPECT_EQ(refusals(plan), "");
}

// Cases dmaprobe has no way to run, which dmasim used to write into plans all the same.
TEST(PlanAgreement, CasesDmaprobeCannotRunAreNotPlanned) {
    const std::string refused[] = {
        sized("zero_copy", "4KiB", "zero_copy: {pattern: chase}\ncompute: {duration: 1ms}\n"),
        sized("duplex", "4KiB", "duplex: {host_memory: pageable}\ncompute: {duration: 1ms}\n"),
        sized("duplex", "4KiB", "duplex: {host_memory: pageable, one_way_beside: true}\n"),
        sized("duplex", "4KiB", "duplex: {host_memory: pageable, burst: 1MiB}\n"),
        sized("duplex", "4KiB", "duplex: {burst: 1MiB}\ncompute: {duration: 1ms}\n"),
        sized("[pinned, pageable]", "4KiB", "host_buffer: {fresh: true}\n"),
        sized("peer", "4KiB", "direction: both\npeer: {access: on, src_device: 0, dst_device: 0}\n"),
        sized("peer", "4KiB", "direction: d2h\n"),
        sized("zero_copy", "4KiB", "direction: d2h\nzero_copy: {pattern: chase}\n"),
        sized("zero_copy", "4KiB", "direction: h2d\nzero_copy: {pattern: chase, memory: device, copy_beside: h2d}\n"),
        sized("zero_copy", "4KiB", "direction: h2d\nzero_copy: {pattern: chase, copy_beside: h2d, stores_beside: 8}\n"),
        sized("zero_copy", "4KiB", "direction: h2d\nzero_copy: {pattern: chase, copy_beside: d2h, hops: 5000}\n"),
        sized("zero_copy", "4KiB", "zero_copy: {copy_beside: d2h}\ncompute: {duration: 1ms}\n"),
        sized("zero_copy", "4KiB", "zero_copy: {copy_beside: both}\n"),
        sized("zero_copy", "4KiB", "zero_copy: {stores_beside: 8}\n"),
        sized("zero_copy", "4KiB", "direction: h2d\nzero_copy: {pattern: chase, memory: device, stores_beside: 8}\n"),
    };
    for (const auto& yaml : refused) EXPECT_THROW(parse_scenarios(yaml, "s.yaml"), core::InputError) << yaml;
    // What they become when written as dmasim would have: dmaprobe refuses each.
    const core::Plan ok = expand_plan(parse_scenarios(
        sized("zero_copy", "4KiB", "direction: h2d\nzero_copy: {pattern: chase}\n---\n") +
            sized("duplex", "4KiB", "duplex: {host_memory: pageable}\n---\n", "t") +
            sized("pinned", "4KiB", "direction: h2d\n---\n", "u") +
            sized("peer", "4KiB", "peer: {access: on, src_device: 0, dst_device: 0}\n", "v"),
        "s.yaml"));
    ASSERT_EQ(ok.cases.size(), 4U);
    EXPECT_EQ(refusals(ok), "");
    core::Plan bad = ok;
    bad.cases[0].set("compute_ns", std::int64_t{1000000});
    bad.cases[0].set("compute_blocks", 1);
    bad.cases[0].set("compute_threads", 32);
    bad.cases[0].set("compute_bytes", std::int64_t{4096});
    bad.cases[1].set("compute_ns", std::int64_t{1000000});
    bad.cases[1].set("compute_blocks", 1);
    bad.cases[1].set("compute_threads", 32);
    bad.cases[1].set("compute_bytes", std::int64_t{4096});
    bad.cases[2].set("host_fresh", 1);
    bad.cases[3].set("direction", "both");
    bad.cases.push_back(ok.cases[0]);
    bad.cases.back().set("direction", "d2h");
    bad.cases.push_back(ok.cases[1]);
    bad.cases.back().set("one_way_beside", 1);
    bad.cases.push_back(ok.cases[1]);
    bad.cases.back().set("burst_copies", 16);
    for (std::size_t i = 0; i < bad.cases.size(); ++i) {
        core::Plan one;
        one.cases.push_back(bad.cases[i]);
        EXPECT_NE(refusals(one), "") << core::format_plan_case(bad.cases[i]);
    }
}

}  // namespace
}  // namespace dmasim::config
