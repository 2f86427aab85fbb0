// The band's calibration (app/band_fit.h): rows whose right sigma is known, by construction.
#include "dmasim/app/band_fit.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

#include "dmasim/core/draws.h"
#include "dmasim/core/results.h"

namespace dmasim::app {
namespace {

constexpr double kZ90 = 1.2815515655446004;

// A row at 100 us whose ten leases measured 100 e^(offset + step i), i = 0..9.
BandFitRow row(const std::string& key, const std::string& kind, double offset, double step, bool train = true,
               double p10 = 100.0, double p90 = 100.0) {
    BandFitRow r{key, kind, train, 100.0, p10, p90, {}};
    for (int i = 0; i < 10; ++i) r.leases.emplace_back("lease" + std::to_string(i), 100.0 * std::exp(offset + step * i));
    return r;
}

const BandKindFit& kind_of(const BandFit& f, const std::string& kind) {
    for (const auto& k : f.kinds) {
        if (k.kind == kind) return k;
    }
    throw std::out_of_range(kind);
}

TEST(BandFit, AModelOffByAKnownAmountNeedsJustTheSigmaThatReachesItsLeases) {
    // Leases at +0.05 .. +0.14 in log: eight of ten inside needs the band to reach +0.12.
    const BandFit f = fit_band({row("a", "pinned", 0.05, 0.01), row("b", "pinned", 0.05, 0.01)}, 0.8);
    const BandKindFit& k = kind_of(f, "pinned");
    EXPECT_NEAR(k.sigma, 0.12 / kZ90, 2e-4);
    EXPECT_GE(k.train, 0.8);
    EXPECT_EQ(k.machines_only, 0.0);
    // The least such sigma: a little less holds only seven of ten.
    BandFitRow a = row("a", "pinned", 0.05, 0.01);
    const auto [lo, hi] = widened(a, k.sigma - 1e-3);
    int inside = 0;
    for (const auto& [l, v] : a.leases) inside += v >= lo && v <= hi;
    EXPECT_EQ(inside, 7);
}

TEST(BandFit, ABandOfMachinesThatAlreadyHoldsTheLeasesNeedsNoModelError) {
    // Leases from -0.045 to +0.045 around the model, and a band of machines of +-0.04: eight inside.
    const double p10 = 100.0 * std::exp(-0.04), p90 = 100.0 * std::exp(0.04);
    const BandFit f = fit_band({row("a", "setup", -0.045, 0.01, true, p10, p90)}, 0.8);
    EXPECT_EQ(kind_of(f, "setup").sigma, 0.0);
    EXPECT_DOUBLE_EQ(kind_of(f, "setup").machines_only, 0.8);
    // A higher target needs some of the model's error on top of the machines.
    const BandFit g = fit_band({row("a", "setup", -0.045, 0.01, true, p10, p90)}, 0.95);
    EXPECT_GT(kind_of(g, "setup").sigma, 0.0);
    // In quadrature with the machines' 0.04 it reaches the outermost lease, 0.045.
    EXPECT_NEAR(std::hypot(0.04, kZ90 * kind_of(g, "setup").sigma), 0.045, 2e-4);
}

TEST(BandFit, EachKindGetsItsOwnSigmaAndHeldOutRowsAreNotFitted) {
    const BandFit f = fit_band({row("a", "pinned", 0.0, 0.001), row("b", "duplex", 0.2, 0.001),
                                // Held out: far off, yet it does not move duplex's sigma.
                                row("c", "duplex", 0.8, 0.001, false)},
                               0.8);
    EXPECT_LT(kind_of(f, "pinned").sigma, 0.01 / kZ90);
    EXPECT_NEAR(kind_of(f, "duplex").sigma, (0.2 + 0.007) / kZ90, 2e-4);
    EXPECT_EQ(kind_of(f, "duplex").held_out_rows, 0.0);
    EXPECT_EQ(kind_of(f, "duplex").train_rows, 1u);
    EXPECT_EQ(kind_of(f, "duplex").held_rows, 1u);
    EXPECT_EQ(kind_of(f, "pinned").held_out_rows, -1.0);  // none to count
}

TEST(BandFit, ALeaseLeftOutIsJudgedByTheSigmaFittedWithoutIt) {
    // Nine leases agree with the model; the tenth is 30 % slow on every row. Fitted with it, 90 %
    // of the medians are inside at sigma 0, so it stays 0 and the tenth lease is outside; left
    // out, each of the nine is inside a band fitted to the other eight and the tenth.
    BandFitRow a{"a", "zero_copy", true, 100.0, 100.0, 100.0, {}};
    for (int i = 0; i < 9; ++i) a.leases.emplace_back("lease" + std::to_string(i), 100.0);
    a.leases.emplace_back("slow", 130.0);
    BandFitRow b = a;
    b.key = "b";
    const BandFit f = fit_band({a, b}, 0.8);
    EXPECT_EQ(kind_of(f, "zero_copy").sigma, 0.0);
    EXPECT_DOUBLE_EQ(kind_of(f, "zero_copy").held_out_leases, 0.9);
    EXPECT_DOUBLE_EQ(f.held_out_leases, 0.9);
}

TEST(BandFit, WidthsAreSetBesideTheLeasesSpread) {
    const BandFit f = fit_band({row("a", "pinned", 0.05, 0.01)}, 0.8);
    const BandKindFit& k = kind_of(f, "pinned");
    EXPECT_NEAR(k.band_width_pct, (std::exp(0.12) - std::exp(-0.12)) * 100.0, 0.05);
    // The leases' p10-p90 width over their median (linear interpolation between ranks).
    EXPECT_GT(k.measured_spread_pct, 7.0);
    EXPECT_LT(k.measured_spread_pct, 8.5);
    EXPECT_EQ(k.values, 10u);
    // As the machines' own p10-p90: ten leases show on average expected_p10_p90_width(10) of the
    // population's 2.5631, so the spread is that much wider.
    EXPECT_NEAR(k.population_spread_pct, k.measured_spread_pct * 2.5631 / expected_p10_p90_width(10), 1e-4);
    EXPECT_GT(k.population_spread_pct, 1.1 * k.measured_spread_pct);
    EXPECT_NEAR(f.population_spread_pct, k.population_spread_pct, 1e-9);
}

TEST(HostSpreadFit, FewLeasesWidenTheirP10P90ByWhatFewDrawsOfANormalGive) {
    EXPECT_NEAR(expected_p10_p90_width(20000), 2 * kZ90, 0.01);
    // Eight leases: the sample's p10-p90 is about 0.8 of the population's.
    EXPECT_GT(expected_p10_p90_width(8), 0.75 * 2 * kZ90);
    EXPECT_LT(expected_p10_p90_width(8), 0.85 * 2 * kZ90);
    EXPECT_LT(expected_p10_p90_width(8), expected_p10_p90_width(16));
}

TEST(HostSpreadFit, EachGroupTakesTheSigmaOfItsKindsOfRow) {
    // Rows whose leases sit exactly at n normal scores times sigma: each gives sigma back.
    const auto at = [](double sigma, std::size_t n) {
        std::vector<double> v;
        for (std::size_t i = 0; i < n; ++i) {
            // Blom's scores, as expected_p10_p90_width takes them.
            const double q = (static_cast<double>(i + 1) - 0.375) / (static_cast<double>(n) + 0.25);
            v.push_back(50.0 * std::exp(sigma * core::normal_quantile(q)));
        }
        return v;
    };
    const std::vector<SpreadRow> rows{
        {"pinned", "", 4096, at(0.09, 8)},
        {"pinned", "", 1 << 20, at(0.5, 8)},       // a large pinned copy says nothing of the calls
        {"pageable", "", 1 << 20, at(0.1, 16)},
        {"pageable", "", 4096, at(0.7, 16)},       // nor a small pageable one of the CPU's copies
        {"pinned", "setup=mallochost", 4096, at(0.2, 8)},
        {"pinned", "setup=freehost", 4096, at(0.3, 8)},
        {"registered", "setup=register", 4096, at(0.15, 8)},
        {"registered", "setup=unregister", 4096, at(0.1, 8)},
        {"pinned", "setup=mallochost", 8192, at(5.0, 3)},  // three leases: not a spread
    };
    const std::vector<HostSpreadGroup> g = fit_host_spread(rows);
    ASSERT_EQ(g.size(), 3u);
    EXPECT_EQ(g[0].group, "calls");
    EXPECT_NEAR(g[0].sigma, 0.09, 1e-9);
    EXPECT_EQ(g[1].group, "cpu_copies");
    EXPECT_NEAR(g[1].sigma, 0.1, 1e-9);
    EXPECT_EQ(g[2].group, "setup");
    EXPECT_NEAR(g[2].sigma, 0.175, 1e-9);  // the median of 0.1, 0.15, 0.2, 0.3
    EXPECT_EQ(g[2].rows, 4u);
    // No row of a group: no sigma, rather than a zero that would claim machines agree.
    const std::vector<HostSpreadGroup> none = fit_host_spread({{"pinned", "", 4096, at(0.09, 8)}});
    EXPECT_EQ(none[1].sigma, -1.0);
    EXPECT_EQ(none[2].sigma, -1.0);
}

// Leases whose frames come from known lateness: the fit gives back the tail it was made with.
TEST(FrameJitterFit, RecoversTheTailOfFramesMadeWithKnownLateness) {
    // body 30 us, sigma 0.2; slow mode 0.12 after a long idle, 120 us, sigma 0.8; idle time 10 ms.
    const auto make = [](const std::string& name, double period_us, std::int64_t frames) {
        FrameStream s{name, period_us, frames, {}, {}};
        core::Draws d(core::fnv1a(name));
        const double chance = 0.12 * -std::expm1(-(period_us - 100.0) / 10000.0);
        for (int lease = 0; lease < 12; ++lease) {
            std::vector<double> l;
            for (std::int64_t i = 0; i < frames; ++i) {
                const double e = d.normal(), u = d.uniform(), x = d.normal();
                l.push_back(100.0 + 30.0 * std::expm1(0.2 * e) + (u < chance ? 120.0 * std::exp(0.8 * x) : 0.0));
            }
            std::sort(l.begin(), l.end());
            const auto q = [&](double f) { return core::percentile(l, f); };
            s.leases.push_back({q(0.1), q(0.5), q(0.9), q(0.99), l.back()});
        }
        return s;
    };
    const FrameJitterFit f = fit_frame_jitter({make("every-8ms", 8000.0, 500), make("every-2ms", 2000.0, 1000)}, 10000.0);
    ASSERT_EQ(f.lines.size(), 2u);
    for (const auto& l : f.lines) {
        // The p99 the issue judges, and the body's p10/p90, within 15 % of the leases'.
        EXPECT_NEAR(l.model[2] / l.measured[2], 1.0, 0.15) << l.stream;
        EXPECT_NEAR(l.model[0] / l.measured[0], 1.0, 0.15) << l.stream;
        EXPECT_NEAR(l.model[1] / l.measured[1], 1.0, 0.15) << l.stream;
    }
    // The longer idle's tail is the longer one, in the model as in the leases.
    EXPECT_GT(f.lines[0].model[2], 1.3 * f.lines[1].model[2]);
    EXPECT_LT(f.rms_log_error, 0.15);
    EXPECT_THROW(fit_frame_jitter({FrameStream{"one", 8000.0, 500, {{1, 2, 3, 4, 5}}, {}}}, 10000.0), std::invalid_argument);
}

TEST(FrameJitterFit, RecoversHowTheColdShareOfPageableFramesSpreads) {
    // Pageable frames every 8 ms: the jitter of pinned frames (body 30 us, sigma 0.2; slow mode
    // 0.12, 120 us, sigma 0.8) plus a cold excess of 300 us drawn as 300 (exp(0.35 z) - 1).
    FrameJitterFit jitter;
    jitter.body_us = 30.0;
    jitter.body_sigma = 0.2;
    jitter.slow_probability = 0.12;
    jitter.slow_us = 120.0;
    jitter.slow_sigma = 0.8;
    const auto make = [](double cold_sigma) {
        FrameStream s{"pageable-8ms", 8000.0, 500, {}, {}};
        core::Draws d(core::fnv1a("leases"));
        const double chance = 0.12 * -std::expm1(-(8000.0 - 600.0) / 10000.0);
        for (int lease = 0; lease < 12; ++lease) {
            std::vector<double> l;
            for (int i = 0; i < 500; ++i) {
                const double e = d.normal(), u = d.uniform(), x = d.normal(), z = d.normal();
                l.push_back(600.0 + 30.0 * std::expm1(0.2 * e) + (u < chance ? 120.0 * std::exp(0.8 * x) : 0.0) +
                            300.0 * std::expm1(cold_sigma * z));
            }
            std::sort(l.begin(), l.end());
            const auto q = [&](double f) { return core::percentile(l, f); };
            s.leases.push_back({q(0.1), q(0.5), q(0.9), q(0.99), l.back()});
        }
        return s;
    };
    FrameJitterFit::Line line;
    const double sigma = fit_cold_sigma(make(0.35), jitter, 10000.0, 300.0, line);
    EXPECT_NEAR(sigma, 0.35, 0.05);
    EXPECT_NEAR(line.model[2] / line.measured[2], 1.0, 0.15);
    // A wider spread of the leases' frames is a wider sigma.
    EXPECT_GT(fit_cold_sigma(make(0.7), jitter, 10000.0, 300.0, line), 0.55);
    EXPECT_THROW(fit_cold_sigma(make(0.35), jitter, 10000.0, 0.0, line), std::invalid_argument);
    EXPECT_THROW(fit_cold_sigma(FrameStream{"one", 8000.0, 500, {{1, 2, 3, 4, 5}}, {}}, jitter, 10000.0, 300.0, line),
                 std::invalid_argument);
}

// Pageable streams whose p99 / p50 is about 1.4 on some leases and about 4.5 on others: those
// are the noisy ones, whatever order the leases come in; one kind of machine only is no split.
TEST(NoisyHostFit, SortsLeasesByTheirPageableFramesTails) {
    FrameStream s{"pageable-8ms", 8000.0, 500, {}, {}};
    const std::vector<double> ratio{1.35, 4.4, 1.5, 1.42, 5.2, 1.3, 3.9, 1.6};
    for (std::size_t i = 0; i < ratio.size(); ++i) {
        s.leases.push_back({550.0, 640.0, 760.0, 640.0 * ratio[i], 640.0 * ratio[i] * 1.2});
        s.lease.push_back(i);
    }
    const std::vector<bool> noisy = noisy_leases({s}, ratio.size() + 1);  // the last lease measured no stream
    ASSERT_EQ(noisy.size(), ratio.size() + 1);
    for (std::size_t i = 0; i < ratio.size(); ++i) EXPECT_EQ(noisy[i], ratio[i] > 2.0) << i;
    EXPECT_FALSE(noisy.back());
    EXPECT_EQ(leases_of_kind(s, noisy, true).leases.size(), 3u);
    EXPECT_EQ(leases_of_kind(s, noisy, false).lease, (std::vector<std::size_t>{0, 2, 3, 5, 7}));
    // Tails that differ by less than kNoisyGap between neighbours: every lease quiet.
    FrameStream even{"pageable-8ms", 8000.0, 500, {}, {}};
    for (std::size_t i = 0; i < 8; ++i) {
        const double r = 1.3 + 0.1 * static_cast<double>(i);
        even.leases.push_back({550.0, 640.0, 760.0, 640.0 * r, 900.0 * r});
        even.lease.push_back(i);
    }
    const std::vector<bool> none = noisy_leases({even}, 8);
    EXPECT_EQ(std::count(none.begin(), none.end(), true), 0);
}

// Noisy leases made with a known wake mode and copy stalls on top of a known quiet jitter: the fit
// gives back the tails they have, and the copy stalls come out as the pageable stream's tail.
TEST(NoisyHostFit, RecoversTheTailsOfNoisyMachinesFrames) {
    FrameJitterFit quiet;
    quiet.body_us = 30.0;
    quiet.body_sigma = 0.2;
    quiet.slow_probability = 0.05;
    quiet.slow_us = 60.0;
    quiet.slow_sigma = 0.5;
    // wake mode 3 % at 250 us (sigma 0.5); copy stalls every 30 ms of copying, 2 ms (sigma 0.3).
    const auto make = [&](const std::string& name, double p50, bool copies) {
        FrameStream s{name, 8000.0, 500, {}, {}};
        core::Draws d(core::fnv1a(name + "/made"));
        const double chance = 0.05 * -std::expm1(-(8000.0 - p50) / 10000.0);
        for (int lease = 0; lease < 6; ++lease) {
            std::vector<double> l;
            for (int i = 0; i < 500; ++i) {
                double t = p50 + 30.0 * std::expm1(0.2 * d.normal());
                if (d.uniform() < chance) t += 60.0 * std::exp(0.5 * d.normal());
                if (d.uniform() < 0.03) t += 250.0 * std::exp(0.5 * d.normal());
                if (copies) {
                    for (double at = -30000.0 * std::log(1.0 - d.uniform()); at < p50; at += -30000.0 * std::log(1.0 - d.uniform())) {
                        t += 2000.0 * std::exp(0.3 * d.normal());
                    }
                }
                l.push_back(t);
            }
            std::sort(l.begin(), l.end());
            const auto q = [&](double f) { return core::percentile(l, f); };
            s.leases.push_back({q(0.1), q(0.5), q(0.9), q(0.99), l.back()});
            s.lease.push_back(static_cast<std::size_t>(lease));
        }
        return s;
    };
    const NoisyHostFit f = fit_noisy_host({make("pinned-8ms", 110.0, false)}, {make("pageable-8ms", 640.0, true)}, {}, quiet, 10000.0);
    ASSERT_EQ(f.lines.size(), 2u);
    for (const auto& l : f.lines) {
        EXPECT_NEAR(l.model[2] / l.measured[2], 1.0, 0.2) << l.stream << " p99";
        EXPECT_NEAR(l.model[1] / l.measured[1], 1.0, 0.25) << l.stream << " p90";
    }
    // The pageable stream's p99 is the copy stalls' (ms), the pinned one's the wake mode's (us).
    EXPECT_GT(f.lines[1].model[2], 4.0 * f.lines[0].model[2]);
    EXPECT_GT(f.busy_us, 1000.0);
    EXPECT_LT(f.busy_us, 4000.0);
    EXPECT_THROW(fit_noisy_host({FrameStream{"one", 8000.0, 500, {{1, 2, 3, 4, 5}}, {0}}}, {}, {}, quiet, 10000.0),
                 std::invalid_argument);
}

TEST(BandFit, ATargetOutsideAHalfTo99PercentIsRefused) {
    EXPECT_THROW(fit_band({}, 0.3), std::invalid_argument);
    EXPECT_THROW(fit_band({}, 1.0), std::invalid_argument);
    EXPECT_TRUE(fit_band({}, 0.8).kinds.empty());
}

}  // namespace
}  // namespace dmasim::app
