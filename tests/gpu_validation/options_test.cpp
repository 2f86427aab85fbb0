#include "options.h"

#include <gtest/gtest.h>

namespace dmaprobe {
namespace {

Options parse(std::vector<std::string> args) { return parse_options(args); }

TEST(DmaprobeOptions, ParsesEveryOptionInBothSpellings) {
    const Options o = parse({"--plan", "p.txt", "--out=results/h100", "--device", "1", "--peer-device=2",
                             "--only", "pinned", "--max-size", "64MiB", "--repetitions=7", "--warmup", "0",
                             "--budget-ms", "500", "--commit", "abc123", "--quiet", "--fresh-host-data",
                             "--flush-host-data"});
    EXPECT_EQ(o.plan, "p.txt");
    EXPECT_EQ(o.out, "results/h100");
    ASSERT_TRUE(o.device.has_value());
    EXPECT_EQ(*o.device, 1);
    EXPECT_EQ(o.measuring_device(), 1);
    ASSERT_TRUE(o.peer_device.has_value());
    EXPECT_EQ(*o.peer_device, 2);
    EXPECT_EQ(o.only.value_or(""), "pinned");
    EXPECT_EQ(o.max_size.value_or(0), 64U << 20);
    EXPECT_EQ(o.repetitions.value_or(0), 7);
    EXPECT_EQ(o.warmup.value_or(-1), 0);
    EXPECT_DOUBLE_EQ(o.budget_s, 0.5);
    EXPECT_EQ(o.commit.value_or(""), "abc123");
    EXPECT_TRUE(o.quiet);
    EXPECT_TRUE(o.fresh_host_data);
    EXPECT_TRUE(o.flush_host_data);
    EXPECT_FALSE(o.list);
}

TEST(DmaprobeOptions, DefaultsWhenOnlyPlanAndOut) {
    const Options o = parse({"--plan", "p.txt", "--out", "d"});
    EXPECT_EQ(o.measuring_device(), 0);
    EXPECT_FALSE(o.peer_device);
    EXPECT_FALSE(o.only);
    EXPECT_FALSE(o.max_size);
    EXPECT_FALSE(o.repetitions);
    EXPECT_FALSE(o.warmup);
    EXPECT_DOUBLE_EQ(o.budget_s, 2.0);
    EXPECT_FALSE(o.quiet);
    EXPECT_FALSE(o.fresh_host_data);
    EXPECT_FALSE(o.flush_host_data);
}

TEST(DmaprobeOptions, OrderSeedPinningAndJson) {
    const Options d = parse({"--plan", "p.txt", "--out", "d"});
    EXPECT_EQ(d.order, CaseOrder::shuffle);
    EXPECT_FALSE(d.seed);
    EXPECT_TRUE(d.pin_cpus);
    EXPECT_FALSE(d.json);
    EXPECT_EQ(d.frame_wait, FrameWait::sleep);

    const Options o = parse({"--plan", "p.txt", "--out", "d", "--order", "plan", "--seed=18446744073709551615",
                             "--no-pin", "--json", "out/r.json"});
    EXPECT_EQ(o.order, CaseOrder::plan);
    EXPECT_EQ(o.seed.value_or(0), 18446744073709551615ULL);
    EXPECT_FALSE(o.pin_cpus);
    EXPECT_EQ(o.json.value_or(""), "out/r.json");
    EXPECT_EQ(parse({"--plan", "p", "--out", "d", "--order=shuffle", "--seed", "0"}).seed.value_or(1), 0U);
    EXPECT_STREQ(to_string(CaseOrder::shuffle), "shuffle");
    EXPECT_STREQ(to_string(CaseOrder::plan), "plan");
    EXPECT_EQ(parse({"--plan", "p", "--out", "d", "--frame-wait", "spin"}).frame_wait, FrameWait::spin);
    EXPECT_EQ(parse({"--plan", "p", "--out", "d", "--frame-wait=sleep"}).frame_wait, FrameWait::sleep);
    EXPECT_STREQ(to_string(FrameWait::spin), "spin");
    EXPECT_EQ(parse({"--plan", "p", "--out", "d"}).host_stalls_s, 0);
    EXPECT_EQ(parse({"--plan", "p", "--out", "d", "--host-stalls", "20"}).host_stalls_s, 20);
}

TEST(DmaprobeOptions, ListNeedsNoOut) {
    const Options o = parse({"--list", "--plan", "p.txt"});
    EXPECT_TRUE(o.list);
    EXPECT_TRUE(o.out.empty());
}

TEST(DmaprobeOptions, HelpNeedsNothingElse) {
    EXPECT_TRUE(parse({"--help"}).help);
    EXPECT_TRUE(parse({"-h"}).help);
    EXPECT_TRUE(parse({"--version"}).version);
}

void expect_usage_error(std::vector<std::string> args, const std::string& fragment) {
    try {
        parse_options(args);
        ADD_FAILURE() << "no error for: " << fragment;
    } catch (const UsageError& e) {
        EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
    }
}

TEST(DmaprobeOptions, ClearErrors) {
    expect_usage_error({"--out", "d"}, "--plan FILE is required");
    expect_usage_error({"--plan", "p"}, "--out DIR is required");
    expect_usage_error({"--plan"}, "--plan needs a value");
    expect_usage_error({"--plan", "p", "--out", "d", "--frobnicate"}, "unknown option '--frobnicate'");
    expect_usage_error({"--plan", "p", "--out", "d", "--device", "x"}, "--device: 'x' is not an integer");
    expect_usage_error({"--plan", "p", "--out", "d", "--device", "-1"}, "--device: -1 is out of range");
    expect_usage_error({"--plan", "p", "--out", "d", "--repetitions", "0"}, "--repetitions: 0 is out of range");
    expect_usage_error({"--plan", "p", "--out", "d", "--only", "warp_drive"}, "--only: unknown strategy 'warp_drive'");
    expect_usage_error({"--plan", "p", "--out", "d", "--max-size", "12 parsecs"}, "--max-size");
    expect_usage_error({"--plan", "p", "--out", "d", "--max-size", "0"}, "at least 1 byte");
    expect_usage_error({"--plan", "p", "--out", "d", "--quiet=yes"}, "--quiet takes no value");
    expect_usage_error({"--plan", "p", "--out", "d", "--flush-host-data=1"}, "--flush-host-data takes no value");
    expect_usage_error({"--plan", "p", "--out", "d", "--order", "random"}, "--order: 'random' is neither shuffle nor plan");
    expect_usage_error({"--plan", "p", "--out", "d", "--seed", "-1"}, "--seed: '-1' is not an integer");
    expect_usage_error({"--plan", "p", "--out", "d", "--seed", "18446744073709551616"}, "--seed: '18446744073709551616'");
    expect_usage_error({"--plan", "p", "--out", "d", "--seed", "12ab"}, "--seed: '12ab'");
    expect_usage_error({"--plan", "p", "--out", "d", "--json", ""}, "--json: empty file name");
    expect_usage_error({"--plan", "p", "--out", "d", "--no-pin=1"}, "--no-pin takes no value");
    expect_usage_error({"--plan", "p", "--out", "d", "--frame-wait", "nap"}, "--frame-wait: 'nap' is neither sleep nor spin");
    expect_usage_error({"--plan", "p", "--out", "d", "--host-stalls", "601"}, "--host-stalls");
    expect_usage_error({"--plan", "p", "--out", "d", "--host-stalls", "1.5"}, "--host-stalls");
    expect_usage_error({"--plan", "p", "--out", "d", "--device", "1", "--peer-device", "1"},
                       "--peer-device must differ from --device");
}

TEST(DmaprobeOptions, HelpMentionsEveryOption) {
    const std::string help = usage_text();
    for (const char* opt : {"--plan", "--out", "--list", "--device", "--peer-device", "--only", "--max-size",
                            "--repetitions", "--warmup", "--budget-ms", "--commit", "--quiet", "--help", "--fresh-host-data", "--flush-host-data",
                            "--version", "--order", "--seed", "--no-pin", "--json", "--frame-wait", "--host-stalls"}) {
        EXPECT_NE(help.find(opt), std::string::npos) << opt;
    }
}

TEST(DmaprobeOptions, CommandLineIsQuotedForTheShell) {
    const char* argv[] = {"dmaprobe", "--plan", "my plan.txt", "--out", "it's"};
    EXPECT_EQ(join_command_line(5, argv), "dmaprobe --plan 'my plan.txt' --out 'it'\\''s'");
}

}  // namespace
}  // namespace dmaprobe
