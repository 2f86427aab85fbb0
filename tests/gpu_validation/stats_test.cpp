#include "stats.h"

#include <gtest/gtest.h>

#include <stdexcept>
#include <thread>

namespace dmaprobe {
namespace {

MeasurementSpec spec(Direction d = Direction::h2d) {
    MeasurementSpec s;
    s.scenario = "sc";
    s.strategy = Strategy::pinned;
    s.direction = d;
    s.size_bytes = 1000;
    s.repetitions = 20;
    s.warmup = 3;
    return s;
}

TEST(DmaprobeStats, SummaryIsMedianAndSpread) {
    std::vector<double> v;
    for (int i = 1; i <= 11; ++i) v.push_back(static_cast<double>(i));
    v.push_back(1000.0);  // one outlier: the median barely moves
    const Summary s = summarize(v);
    EXPECT_EQ(s.n, 12);
    EXPECT_DOUBLE_EQ(s.median, 6.5);
    EXPECT_DOUBLE_EQ(s.min, 1.0);
    EXPECT_DOUBLE_EQ(s.max, 1000.0);
    EXPECT_NEAR(s.p10, 2.1, 1e-12);
    EXPECT_NEAR(s.p90, 10.9, 1e-12);
    EXPECT_THROW(summarize({}), std::logic_error);
}

TEST(DmaprobeStats, EveryRepetitionIsKeptInTheOrderItRan) {
    // A pair of clusters: the median says nothing of the shares; the samples do, in run order.
    const std::vector<double> v = {15.4, 12.1, 15.6, 12.0, 15.5};
    const Summary s = summarize(v);
    EXPECT_EQ(s.samples, v);
    const dmasim::core::ResultRow r = make_row(spec(), "", s);
    EXPECT_EQ(r.samples_us, v);
    EXPECT_DOUBLE_EQ(r.time_us, 15.4);
}

TEST(DmaprobeStats, CoefficientOfVariationIsSampleStddevOverMean) {
    // mean 20, sample stddev sqrt(((-10)^2 + 0 + 10^2) / 2) = 10
    EXPECT_NEAR(coefficient_of_variation({10.0, 20.0, 30.0}), 0.5, 1e-12);
    EXPECT_NEAR(summarize({10.0, 20.0, 30.0}).cv, 0.5, 1e-12);
    // Large values with a small spread: the two-pass formula keeps it.
    EXPECT_NEAR(coefficient_of_variation({1e9 + 1.0, 1e9 + 2.0, 1e9 + 3.0}), 1e-9, 1e-13);
    EXPECT_DOUBLE_EQ(coefficient_of_variation({7.0, 7.0, 7.0}), 0.0);
    EXPECT_DOUBLE_EQ(coefficient_of_variation({42.0}), 0.0);  // one sample: no spread to state
    EXPECT_DOUBLE_EQ(coefficient_of_variation({}), 0.0);
    EXPECT_DOUBLE_EQ(coefficient_of_variation({-1.0, 1.0}), 0.0);  // mean 0
    EXPECT_DOUBLE_EQ(summarize({5.0}).cv, 0.0);
}

TEST(DmaprobeStats, RepetitionsReducedToTheBudgetButNotBelowTheMinimum) {
    EXPECT_EQ(reduced_repetitions(100, 0.001, 2.0, false), 100);  // 0.1 s: fits
    EXPECT_EQ(reduced_repetitions(100, 0.1, 2.0, false), 20);     // 10 s → 20 reps
    EXPECT_EQ(reduced_repetitions(100, 1.0, 2.0, false), kMinRepetitions);
    EXPECT_EQ(reduced_repetitions(3, 10.0, 2.0, false), 3);       // plan asks for fewer than the minimum
    EXPECT_EQ(reduced_repetitions(100, 1.0, 2.0, true), 100);     // --repetitions: fixed
    EXPECT_EQ(reduced_repetitions(100, 1.0, 0.0, false), 100);    // --budget-ms 0
}

TEST(DmaprobeStats, RunRepetitionsDoesWarmupsThenTimedOnes) {
    MeasurementSpec s = spec();
    s.repetitions = 4;
    s.warmup = 2;
    std::vector<std::pair<int, bool>> calls;
    std::string note;
    const int n = run_repetitions(s, 2.0, &note, [&](int rep, bool timed) { calls.emplace_back(rep, timed); });
    EXPECT_EQ(n, 4);
    ASSERT_EQ(calls.size(), 6U);
    EXPECT_EQ(calls[0], std::make_pair(0, false));
    EXPECT_EQ(calls[1], std::make_pair(1, false));
    EXPECT_EQ(calls[2], std::make_pair(2, true));
    EXPECT_EQ(calls[5], std::make_pair(5, true));
    EXPECT_TRUE(note.empty());
}

TEST(DmaprobeStats, RunRepetitionsReducesSlowCasesAndSaysSo) {
    MeasurementSpec s = spec();
    s.repetitions = 50;
    s.warmup = 0;
    int timed = 0;
    std::string note;
    const int n = run_repetitions(s, 0.02, &note, [&](int, bool t) {
        if (t) ++timed;
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    });
    EXPECT_EQ(n, kMinRepetitions);
    EXPECT_EQ(timed, kMinRepetitions);
    EXPECT_NE(note.find("repetitions reduced from 50 to 5"), std::string::npos) << note;
}

TEST(DmaprobeStats, RowsCarryTheSchema) {
    MeasurementSpec s = spec(Direction::both);
    s.strategy = Strategy::duplex;
    s.variant = "host=pinned";
    const Summary sum = summarize({10.0, 20.0, 30.0});
    const auto r = make_row(s, "extra", sum, "a note");
    EXPECT_EQ(r.scenario, "sc");
    EXPECT_EQ(r.strategy, "duplex");
    EXPECT_EQ(r.direction, "both");
    EXPECT_EQ(r.directions, 2);
    EXPECT_EQ(r.size_bytes, 1000U);
    EXPECT_DOUBLE_EQ(r.time_us, 20.0);
    EXPECT_EQ(r.source, "hw");
    EXPECT_EQ(r.repetitions, 3);
    EXPECT_DOUBLE_EQ(r.min_us, 10.0);
    EXPECT_DOUBLE_EQ(r.max_us, 30.0);
    EXPECT_NEAR(r.cv, 0.5, 1e-12);
    EXPECT_EQ(r.variant, "host=pinned;extra");
    EXPECT_EQ(r.status, "ok");
    EXPECT_EQ(r.note, "a note");
    EXPECT_NEAR(r.gbps(), 2000.0 / 20.0 / 1e3, 1e-12);

    const auto sk = skipped_row(spec(), "no GPU link");
    EXPECT_EQ(sk.status, "skipped");
    EXPECT_EQ(sk.note, "no GPU link");
    EXPECT_EQ(sk.repetitions, 0);
    EXPECT_EQ(sk.time_us, 0.0);
    EXPECT_EQ(sk.cv, 0.0);
    EXPECT_EQ(sk.source, "hw");
}

TEST(DmaprobeStats, VariantJoin) {
    EXPECT_EQ(join_variant("", ""), "");
    EXPECT_EQ(join_variant("a", ""), "a");
    EXPECT_EQ(join_variant("", "serial"), "serial");
    EXPECT_EQ(join_variant("streams=4", "serial"), "streams=4;serial");
}

TEST(DmaprobeStats, PeriodicRowsReportP50P99AndMisses) {
    MeasurementSpec s = spec();
    s.strategy = Strategy::periodic;
    std::vector<double> lat;
    for (int i = 0; i < 100; ++i) lat.push_back(1000.0 + i);  // 1000..1099 us
    lat[50] = 9000.0;                                            // two frames over an 8 ms deadline
    lat[51] = 8500.0;
    const PeriodicStats st = periodic_stats(lat, 8000.0);
    EXPECT_EQ(st.frames, 100);
    EXPECT_EQ(st.misses, 2);
    const auto rows = periodic_rows(s, st, "via pinned");
    ASSERT_EQ(rows.size(), 3U);
    EXPECT_EQ(rows[0].variant, "");
    EXPECT_DOUBLE_EQ(rows[0].time_us, st.latency.median);
    EXPECT_EQ(rows[0].repetitions, 100);
    EXPECT_NE(rows[0].note.find("misses=2 frames=100 deadline_us=8000"), std::string::npos) << rows[0].note;
    EXPECT_NE(rows[0].note.find("via pinned"), std::string::npos);
    EXPECT_EQ(rows[1].variant, "p99");
    EXPECT_DOUBLE_EQ(rows[1].time_us, st.p99);
    EXPECT_GT(rows[0].cv, 0.0);  // the latency's spread, on every row
    EXPECT_DOUBLE_EQ(rows[2].cv, rows[0].cv);
    EXPECT_GT(rows[1].time_us, 8000.0);
    EXPECT_EQ(rows[2].variant, "misses");
    EXPECT_DOUBLE_EQ(rows[2].time_us, 8000.0);
    EXPECT_DOUBLE_EQ(rows[2].max_us, 9000.0);
    EXPECT_EQ(rows[2].note.rfind("misses=2 frames=100", 0), 0U) << rows[2].note;
    // The frames once, on the p50 row: the p99 and misses rows are the same frames.
    EXPECT_EQ(rows[0].samples_us, lat);
    EXPECT_TRUE(rows[1].samples_us.empty());
    EXPECT_TRUE(rows[2].samples_us.empty());
}

}  // namespace
}  // namespace dmaprobe
