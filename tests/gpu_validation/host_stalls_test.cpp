// The host-stall probe: gaps between clock reads over the threshold are stalls, shorter ones
// are not; /proc/stat's steal field is read from the right column.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "host_stalls.h"

namespace dmaprobe {
namespace {

// A clock that advances 50 ns a read, with the scripted gaps (ns) inserted before given reads.
struct ScriptedClock {
    std::int64_t t = 1'000'000;
    std::size_t reads = 0;
    std::vector<std::pair<std::size_t, std::int64_t>> gaps;  // (before read n, extra ns)
    std::int64_t operator()() {
        t += 50;
        for (const auto& g : gaps) {
            if (g.first == reads) t += g.second;
        }
        ++reads;
        return t;
    }
};

TEST(DmaprobeHostStalls, RecordsGapsOverTheThresholdWithTheirStartAndLength) {
    ScriptedClock clock;
    clock.gaps = {{100, 9'000}, {200, 25'000}, {300, 400'000}};
    StallReport r = probe_stalls(0.001, 10.0, std::ref(clock));
    ASSERT_EQ(r.stalls.size(), 2u);  // the 9 us gap is under the threshold
    EXPECT_NEAR(r.stalls[0].us, 25.05, 1e-9);
    EXPECT_NEAR(r.stalls[1].us, 400.05, 1e-9);
    // The second began after 300 reads of 50 ns and the two earlier gaps.
    EXPECT_NEAR(r.stalls[1].at_s, (299 * 50 + 9'000 + 25'000) * 1e-9, 1e-12);
    EXPECT_GE(r.seconds, 0.001);
    const StallSummary s = summarize_stalls(r);
    EXPECT_EQ(s.count, 2u);
    EXPECT_NEAR(s.max_us, 400.05, 1e-9);
    EXPECT_NEAR(s.stalled_ms, (25.05 + 400.05) * 1e-3, 1e-12);
    EXPECT_NEAR(s.per_second, 2.0 / r.seconds, 1e-9);
    EXPECT_EQ(stalls_csv(r).substr(0, 21), "kind,at_s,us,copy_us\n");
    EXPECT_NE(stalls_csv(r).find("spin,"), std::string::npos);
}

TEST(DmaprobeHostStalls, AQuietClockHasNoStalls) {
    ScriptedClock clock;
    const StallReport r = probe_stalls(0.0005, 10.0, std::ref(clock));
    EXPECT_TRUE(r.stalls.empty());
    EXPECT_EQ(summarize_stalls(r).count, 0u);
    EXPECT_EQ(summarize_stalls(r).max_us, 0.0);
    EXPECT_GT(r.reads, 9000u);
}

TEST(DmaprobeHostStalls, SummarisesTheWakesLatenessAndListsEachWake) {
    StallReport r;
    r.wake_period_us = 8000.0;
    for (int k = 0; k < 99; ++k) {
        r.wake_late_us.push_back(k < 90 ? 0.0 : 50.0);
        r.wake_copy_us.push_back(300.0);
    }
    r.wake_late_us.push_back(2000.0);
    r.wake_copy_us.push_back(2500.0);
    const StallSummary s = summarize_stalls(r);
    EXPECT_EQ(s.wakes, 100u);
    EXPECT_EQ(s.wake_p50_us, 0.0);
    EXPECT_EQ(s.wake_max_us, 2000.0);
    EXPECT_GT(s.wake_p99_us, 50.0);
    EXPECT_LT(s.wake_p99_us, 2000.0);
    EXPECT_EQ(s.count, 0u);
    EXPECT_EQ(s.copy_p50_us, 300.0);
    EXPECT_EQ(s.copy_max_us, 2500.0);
    const std::string csv = stalls_csv(r);
    EXPECT_NE(csv.find("wake,0.800000,2000.000,2500.000\n"), std::string::npos) << csv.substr(csv.size() - 60);
}

TEST(DmaprobeHostStalls, ReadsStealFromTheEighthFieldOfTheCpuLine) {
    const std::string stat =
        "cpu  4705 356 584 3699 23 23 0 17 0 0\n"
        "cpu0 1393 280 294 1875 4 10 0 9 0 0\n"
        "intr 1462898\n";
    ASSERT_TRUE(steal_ticks(stat).has_value());
    EXPECT_EQ(*steal_ticks(stat), 17u);
    EXPECT_FALSE(steal_ticks("cpu  1 2 3 4\n").has_value());
    EXPECT_FALSE(steal_ticks("intr 5\n").has_value());
}

}  // namespace
}  // namespace dmaprobe
