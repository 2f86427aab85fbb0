// The band of machines around a case's rows (sim/host_band.h): which costs a drawn machine
// changes, where its quantiles lie, and that each way of finding the band gives the spread the
// host's part of a row implies.
#include "dmasim/sim/host_band.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "dmasim/config/param_checks.h"
#include "dmasim/topology/platform_file.h"

namespace dmasim::sim {
namespace {

constexpr std::uint64_t kMiB = 1 << 20;

Simulator& simulator() {
    static Simulator s(topology::load_platform("h100-sxm", config::ModelParams{}), config::ModelParams{});
    return s;
}

BandedCase banded(const config::ModelParams& p, const std::string& strategy, const std::string& dir,
                  std::uint64_t bytes, const config::StrategyOptions& o = {}) {
    return run_with_host_band(simulator(), p, CaseSpec{strategy, dir, bytes, o, {}});
}

// Only the calls' costs spread: a blocking copy's host part is then its call and its wait.
config::ModelParams calls_only(double sigma) {
    config::ModelParams p;
    p.host_spread.calls = sigma;
    p.host_spread.cpu_copies = 0.0;
    p.host_spread.setup = 0.0;
    return p;
}

TEST(HostBand, ADrawScalesEachGroupOfHostCostsAndNothingElse) {
    const config::ModelParams p;
    const double z = 1.5;
    const config::ModelParams d = host_draw(p, z);
    const auto ratio = [](core::Duration a, core::Duration b) { return static_cast<double>(a.ps) / static_cast<double>(b.ps); };
    EXPECT_NEAR(ratio(d.runtime.call_overhead, p.runtime.call_overhead), std::exp(p.host_spread.calls * z), 1e-6);
    EXPECT_NEAR(ratio(d.runtime.sync_latency, p.runtime.sync_latency), std::exp(p.host_spread.calls * z), 1e-6);
    EXPECT_NEAR(ratio(d.runtime.peer_call, p.runtime.peer_call), std::exp(p.host_spread.calls * z), 1e-6);
    EXPECT_NEAR(p.cpu.memcpy_bandwidth.bytes_per_s / d.cpu.memcpy_bandwidth.bytes_per_s, std::exp(p.host_spread.cpu_copies * z),
                1e-9);
    EXPECT_NEAR(ratio(d.cpu.alloc_pinned_per_page, p.cpu.alloc_pinned_per_page), std::exp(p.host_spread.setup * z), 1e-6);
    EXPECT_NEAR(ratio(d.cpu.register_fixed, p.cpu.register_fixed), std::exp(p.host_spread.setup * z), 1e-6);
    // A page fault is the kernel's work on a page, as pinning one is; the zero page's copy is the CPU's.
    EXPECT_NEAR(ratio(d.cpu.first_touch_read, p.cpu.first_touch_read), std::exp(p.host_spread.setup * z), 1e-6);
    EXPECT_NEAR(ratio(d.cpu.first_touch_write, p.cpu.first_touch_write), std::exp(p.host_spread.setup * z), 1e-6);
    EXPECT_NEAR(p.cpu.zero_page_bandwidth.bytes_per_s / d.cpu.zero_page_bandwidth.bytes_per_s,
                std::exp(p.host_spread.cpu_copies * z), 1e-9);
    EXPECT_NEAR(p.pageable.unaligned_pass_bandwidth.bytes_per_s / d.pageable.unaligned_pass_bandwidth.bytes_per_s,
                std::exp(p.host_spread.cpu_copies * z), 1e-9);
    // What the GPU, the link and memory do is the same on every machine.
    EXPECT_EQ(d.dma.launch_latency.ps, p.dma.launch_latency.ps);
    EXPECT_EQ(d.runtime.poll_period.ps, p.runtime.poll_period.ps);
    EXPECT_EQ(d.runtime.stream_wait_latency.ps, p.runtime.stream_wait_latency.ps);
    EXPECT_EQ(d.host_memory.bandwidth.bytes_per_s, p.host_memory.bandwidth.bytes_per_s);
    EXPECT_EQ(d.link.lanes, p.link.lanes);
    // The nominal machine is the one given.
    const config::ModelParams same = host_draw(p, 0.0);
    EXPECT_EQ(same.runtime.call_overhead.ps, p.runtime.call_overhead.ps);
    EXPECT_EQ(same.cpu.memcpy_bandwidth.bytes_per_s, p.cpu.memcpy_bandwidth.bytes_per_s);
}

TEST(HostBand, TheMachinesSitAtEvenQuantilesWithTheNominalOneInTheMiddle) {
    const std::vector<double> z = host_quantiles(9);
    ASSERT_EQ(z.size(), 9u);
    EXPECT_EQ(z[4], 0.0);
    for (std::size_t i = 0; i < 4; ++i) EXPECT_EQ(z[i], -z[8 - i]);
    for (std::size_t i = 0; i < 9; ++i) {
        EXPECT_NEAR(0.5 * std::erfc(-z[i] / std::sqrt(2.0)), (static_cast<double>(i) + 0.5) / 9.0, 1e-9);
    }
    // A row linear in z has the normal's quantiles as its band, the machines' own values at their
    // quantiles, and the extreme machines beyond them.
    std::vector<double> v(z.rbegin(), z.rend());  // in any order
    EXPECT_NEAR(band_quantile(v, 0.1), -1.2815515655446004, 1e-9);
    EXPECT_NEAR(band_quantile(v, 0.9), 1.2815515655446004, 1e-9);
    EXPECT_NEAR(band_quantile(v, 6.5 / 9.0), z[6], 1e-9);
    EXPECT_EQ(band_quantile(v, 0.01), z[0]);
    EXPECT_EQ(band_quantile(v, 0.99), z[8]);
}

// A blocking copy of 4 B is all host: its call and the wait for its end, around a GPU part that
// is the same everywhere. The slowest machine adds what exp(sigma z) adds to those two.
TEST(HostBand, ASmallCopysBandIsItsCallAndWaitSpread) {
    const double sigma = 0.1;
    const config::ModelParams p = calls_only(sigma);
    const BandedCase b = banded(p, "pinned", "d2h", 4);
    ASSERT_EQ(b.method, BandMethod::kDrawn);
    EXPECT_EQ(b.runs, static_cast<int>(p.host_spread.draws));  // the nominal machine is the middle draw
    const RowResult& r = b.result.rows.front();
    ASSERT_TRUE(b.banded.front());
    const double host = static_cast<double>(p.runtime.call_overhead.ps + p.runtime.sync_latency.ps);
    const double z_hi = host_quantiles(p.host_spread.draws).back();
    EXPECT_NEAR(r.max_ps - r.time_ps, host * std::expm1(sigma * z_hi), 0.01 * host * std::expm1(sigma * z_hi));
    EXPECT_NEAR(r.time_ps - r.min_ps, host * -std::expm1(-sigma * z_hi), 0.01 * host * -std::expm1(-sigma * z_hi));
    EXPECT_LT(r.p10_ps, r.time_ps);
    EXPECT_GT(r.p90_ps, r.time_ps);
    EXPECT_GT(r.p10_ps, r.min_ps);
    EXPECT_LT(r.p90_ps, r.max_ps);
    // The nominal machine's time is the deterministic run's.
    EXPECT_EQ(r.time_ps, simulator().run(p, "pinned", "d2h", 4).time_ps);
}

// Interpolating from the fastest and slowest machines is exact for one group of costs on a path
// that does not change: the same band as simulating every machine.
TEST(HostBand, InterpolatedBandMatchesTheDrawnOneForOneGroup) {
    config::ModelParams p = calls_only(0.15);
    const BandedCase drawn = banded(p, "pinned", "h2d", 64 << 10);
    ASSERT_EQ(drawn.method, BandMethod::kDrawn);
    p.host_spread.full_draw_tlps = 0;
    const BandedCase interpolated = banded(p, "pinned", "h2d", 64 << 10);
    ASSERT_EQ(interpolated.method, BandMethod::kInterpolated);
    EXPECT_EQ(interpolated.runs, 3);
    const RowResult& a = drawn.result.rows.front();
    const RowResult& b = interpolated.result.rows.front();
    EXPECT_EQ(a.time_ps, b.time_ps);
    for (const auto& [x, y] : {std::pair{a.p10_ps, b.p10_ps}, {a.p90_ps, b.p90_ps}, {a.min_ps, b.min_ps}, {a.max_ps, b.max_ps}}) {
        EXPECT_NEAR(y, x, 1e-3 * a.time_ps);
    }
}

// A large copy is the link's: its host part is two calls' worth in milliseconds. The case's
// pinned allocation row is all host, but its band is its setup costs' and takes no run; the copy
// row's is bounded by its call and wait (strategies::Strategy::host_calls), also without a run:
// a bound at least as wide as what the slowest machine, simulated, gives, and within the screen.
TEST(HostBand, ALargeCopysRowIsLinkBoundWithANarrowBand) {
    const config::ModelParams p;
    const BandedCase b = banded(p, "pinned", "h2d", 256 * kMiB);
    EXPECT_EQ(b.method, BandMethod::kBounded);
    EXPECT_EQ(b.runs, 1);
    const RowResult& copy = b.result.rows.front();
    EXPECT_GT(copy.p90_ps, copy.time_ps);
    EXPECT_LT((copy.p90_ps - copy.p10_ps) / copy.time_ps, p.host_spread.screen);
    const double z_hi = host_quantiles(p.host_spread.draws).back();
    // What the slowest machine, simulated, gives its rows.
    const CaseResult slowest = simulator().run(host_draw(p, z_hi), CaseSpec{"pinned", "h2d", 256 * kMiB, {}, {}});
    EXPECT_GE(copy.max_ps, slowest.rows.front().time_ps);
    EXPECT_GT(slowest.rows.front().time_ps, copy.time_ps);
    bool setup = false;
    for (std::size_t i = 0; i < b.result.rows.size(); ++i) {
        const RowResult& r = b.result.rows[i];
        if (r.variant != "setup=mallochost") continue;
        setup = true;
        ASSERT_TRUE(b.banded[i]);
        EXPECT_NEAR(r.max_ps / r.time_ps, std::exp(p.host_spread.setup * z_hi), 1e-9);
        EXPECT_NEAR(r.max_ps, slowest.rows[i].time_ps, 1e-6 * r.max_ps);
    }
    EXPECT_TRUE(setup);
    // A small copy's host part is most of it: no bound holds, and machines are simulated.
    EXPECT_EQ(banded(p, "pinned", "h2d", 4 * kMiB >> 6).method, BandMethod::kDrawn);
}

// Registration alone is setup rows only: their band without a single run more.
// With only the kernel's work on pages spreading (host_spread.setup), a pageable copy into memory
// nothing has touched moves between machines by its page faults, and the same copy into old
// memory does not move at all.
TEST(HostBand, ANeverTouchedBuffersBandIsItsPageFaultsSpread) {
    config::ModelParams p;
    p.host_spread.calls = 0.0;
    p.host_spread.cpu_copies = 0.0;
    p.host_spread.setup = 0.2;
    config::StrategyOptions fresh;
    fresh.host_buffer.fresh = true;
    const BandedCase f = banded(p, "pageable", "d2h", 4 * kMiB, fresh);
    ASSERT_TRUE(f.banded.front());
    const RowResult& r = f.result.rows.front();
    const double faults = static_cast<double>(4 * kMiB / p.cpu.page_size.value) * static_cast<double>(p.cpu.first_touch_write.ps);
    const double z_hi = host_quantiles(p.host_spread.draws).back();
    // The faults sit on the thread's path: the slowest machine is later by nearly all of their growth.
    EXPECT_GT(r.max_ps - r.time_ps, 0.85 * faults * std::expm1(p.host_spread.setup * z_hi));
    EXPECT_LE(r.max_ps - r.time_ps, 1.01 * faults * std::expm1(p.host_spread.setup * z_hi));
    EXPECT_LT(r.p10_ps, r.time_ps);
    const BandedCase old = banded(p, "pageable", "d2h", 4 * kMiB);
    const RowResult& o = old.result.rows.front();
    EXPECT_NEAR(o.max_ps, o.time_ps, 1e-6 * o.time_ps);
    EXPECT_NEAR(o.min_ps, o.time_ps, 1e-6 * o.time_ps);
}

TEST(HostBand, SetupRowsAloneTakeNoRun) {
    const config::ModelParams p;
    config::StrategyOptions o;
    o.registered.setup_only = true;
    const BandedCase b = banded(p, "registered", "h2d", 16 * kMiB, o);
    EXPECT_EQ(b.method, BandMethod::kAnalytic);
    EXPECT_EQ(b.runs, 1);
    for (const RowResult& r : b.result.rows) {
        EXPECT_LT(r.p10_ps, r.time_ps) << r.variant;
        EXPECT_NEAR(r.min_ps / r.time_ps, std::exp(-p.host_spread.setup * host_quantiles(p.host_spread.draws).back()), 1e-9);
    }
}

// A zero-copy kernel of 64 MiB is bounded by its launch call, launch and wait: no run. A pinned
// duplex pair carries its spread over the gate's phases: no machine drawn either.
TEST(HostBand, ALargeZeroCopyKernelIsBoundedAndADuplexPairDrawsNoMachine) {
    const config::ModelParams p;
    const BandedCase b = banded(p, "zero_copy", "h2d", 64 * kMiB);
    EXPECT_EQ(b.method, BandMethod::kBounded);
    EXPECT_EQ(b.runs, 1);
    const RowResult& r = b.result.rows.front();
    EXPECT_GT(r.p90_ps, r.time_ps);
    EXPECT_LT(r.p10_ps, r.time_ps);
    EXPECT_LT((r.p90_ps - r.p10_ps) / r.time_ps, p.host_spread.screen);
    const double z_hi = host_quantiles(p.host_spread.draws).back();
    const CaseResult slowest = simulator().run(host_draw(p, z_hi), CaseSpec{"zero_copy", "h2d", 64 * kMiB, {}, {}});
    EXPECT_GE(r.max_ps, slowest.rows.front().time_ps);
    const BandedCase d = banded(p, "duplex", "both", 64 * kMiB);
    EXPECT_EQ(d.method, BandMethod::kNone);
    EXPECT_EQ(d.runs, 1);
    EXPECT_LT(d.result.rows.front().p10_ps, d.result.rows.front().time_ps);
}

TEST(HostBand, WithoutSpreadACaseRunsOnceAndKeepsOneNumber) {
    config::ModelParams p;
    p.host_spread = p.host_spread.without_spread();
    const BandedCase b = banded(p, "pinned", "h2d", 4);
    EXPECT_EQ(b.method, BandMethod::kNone);
    EXPECT_EQ(b.runs, 1);
    const RowResult& r = b.result.rows.front();
    EXPECT_EQ(r.p10_ps, r.time_ps);
    EXPECT_EQ(r.p90_ps, r.time_ps);
    EXPECT_EQ(r.max_ps, r.time_ps);
}

// Periodic frames have a spread of their own (the frames' latencies): it is not replaced.
TEST(HostBand, RowsWithASpreadOfTheirOwnKeepIt) {
    config::StrategyOptions o;
    o.periodic.size = core::Bytes{kMiB};
    o.periodic.period = core::Duration{1'000'000'000};
    o.periodic.count = 8;
    o.periodic.kernel = core::Duration{200'000'000};
    config::ModelParams none;
    none.host_spread = none.host_spread.without_spread();
    const CaseResult plain = simulator().run(none, CaseSpec{"periodic", "h2d", kMiB, o, {}});
    const BandedCase b = banded(config::ModelParams{}, "periodic", "h2d", kMiB, o);
    ASSERT_EQ(plain.rows.size(), b.result.rows.size());
    int own = 0;
    for (std::size_t i = 0; i < plain.rows.size(); ++i) {
        if (plain.rows[i].p10_ps == plain.rows[i].p90_ps) continue;
        ++own;
        EXPECT_FALSE(b.banded.empty() ? false : b.banded[i]) << plain.rows[i].variant;
        EXPECT_EQ(b.result.rows[i].p10_ps, plain.rows[i].p10_ps) << plain.rows[i].variant;
        EXPECT_EQ(b.result.rows[i].p90_ps, plain.rows[i].p90_ps) << plain.rows[i].variant;
    }
    EXPECT_GT(own, 0);
}

// The model's own error widens the band in log space around the row's time, which stays put:
// alone, p10/p90 are t e^(-/+ 1.2816 sigma); beside the machines, the two add in quadrature.
TEST(HostBand, TheModelsErrorWidensADuplexPairsSpreadOverTheGatesPhases) {
    // A pinned duplex pair carries its spread over the gate's phases (the machines' calls set the
    // phase) and takes no band of drawn machines; the model's own error adds to that spread in
    // log space, as to a machines' band.
    constexpr double kZ90 = 1.2815515655446004;
    config::ModelParams p;
    config::StrategyOptions o;
    o.duplex.host_memory = "pinned";
    const auto pair = [&](const config::ModelParams& q) {
        return run_with_host_band(simulator(), q, CaseSpec{"duplex", "both", 16 * kMiB, o, {}});
    };
    config::ModelParams none = p;
    none.model_error.duplex = 0.0;
    const BandedCase phases = pair(none);
    EXPECT_EQ(phases.runs, 1) << "the nominal machine only";
    const RowResult& rp = phases.result.rows.front();
    ASSERT_LT(rp.p10_ps, rp.time_ps);
    config::ModelParams wide = p;
    wide.model_error.duplex = 0.05;
    const RowResult rw = pair(wide).result.rows.front();
    EXPECT_EQ(rw.time_ps, rp.time_ps);
    EXPECT_NEAR(std::log(rw.time_ps / rw.p10_ps), std::hypot(std::log(rp.time_ps / rp.p10_ps), kZ90 * 0.05), 1e-9);
    EXPECT_NEAR(std::log(rw.p90_ps / rw.time_ps), std::hypot(std::log(rp.p90_ps / rp.time_ps), kZ90 * 0.05), 1e-9);
}

TEST(HostBand, TheModelsErrorWidensTheBandAroundAnUnmovedTime) {
    constexpr double kZ90 = 1.2815515655446004;
    config::ModelParams alone;
    alone.host_spread = alone.host_spread.without_spread();
    alone.model_error.pinned = 0.05;
    const BandedCase a = banded(alone, "pinned", "h2d", 16 * kMiB);
    const RowResult& ra = a.result.rows.front();
    const CaseResult plain = simulator().run(alone.without_spread(), CaseSpec{"pinned", "h2d", 16 * kMiB, {}, {}});
    EXPECT_EQ(ra.time_ps, plain.rows.front().time_ps);
    EXPECT_NEAR(ra.p10_ps / ra.time_ps, std::exp(-kZ90 * 0.05), 1e-9);
    EXPECT_NEAR(ra.p90_ps / ra.time_ps, std::exp(kZ90 * 0.05), 1e-9);
    EXPECT_LT(ra.min_ps, ra.p10_ps);
    EXPECT_GT(ra.max_ps, ra.p90_ps);
    EXPECT_EQ(a.model_error.front(), 0.05);
    EXPECT_EQ(a.runs, 1);  // no machine drawn: the error is a width, not a simulation

    // Beside the machines' band of a small copy (the calls spread).
    config::ModelParams machines = calls_only(0.2);
    const RowResult rm = banded(machines, "pinned", "h2d", 4).result.rows.front();
    config::ModelParams both = machines;
    both.model_error.pinned_small = 0.1;
    const RowResult rb = banded(both, "pinned", "h2d", 4).result.rows.front();
    EXPECT_EQ(rb.time_ps, rm.time_ps);
    const double below = std::log(rm.time_ps / rm.p10_ps), above = std::log(rm.p90_ps / rm.time_ps);
    EXPECT_NEAR(std::log(rb.time_ps / rb.p10_ps), std::hypot(below, kZ90 * 0.1), 1e-9);
    EXPECT_NEAR(std::log(rb.p90_ps / rb.time_ps), std::hypot(above, kZ90 * 0.1), 1e-9);
    // Another kind's sigma leaves the row alone.
    config::ModelParams other = machines;
    other.model_error.pinned = 0.3;
    other.model_error.zero_copy = 0.3;
    const RowResult ro = banded(other, "pinned", "h2d", 4).result.rows.front();
    EXPECT_EQ(ro.p10_ps, rm.p10_ps);
    EXPECT_EQ(ro.p90_ps, rm.p90_ps);
}

TEST(HostBand, EachRowTakesTheModelErrorOfItsKind) {
    using E = config::ModelErrorParams;
    EXPECT_STREQ(E::kind("pinned", "", 4096), "pinned_small");
    EXPECT_STREQ(E::kind("pinned", "", 65536), "pinned");
    EXPECT_STREQ(E::kind("pinned", "setup=mallochost", 1 << 20), "setup");
    EXPECT_STREQ(E::kind("registered", "setup=unregister", 4096), "setup");
    EXPECT_STREQ(E::kind("pageable", "", 65535), "pageable_small");
    EXPECT_STREQ(E::kind("duplex", "", 1 << 20), "duplex");
    EXPECT_STREQ(E::kind("async_overlap", "serial", 1 << 20), "async_overlap");
    EXPECT_EQ(E::kind("async_overlap", "kernel", 1 << 20), nullptr);
    EXPECT_EQ(E::kind("periodic", "p99", 1 << 20), nullptr);
    E e;
    e.setup = 0.2;
    e.registered = 0.1;
    EXPECT_EQ(e.of("registered", "setup=register", 4096), 0.2);
    EXPECT_EQ(e.of("registered", "", 4096), 0.1);
    EXPECT_EQ(e.of("third_party_dma", "", 4096), 0.0);
    // A setup row in a copy's case takes the setup sigma, the copy its own.
    config::ModelParams p;
    p.host_spread = p.host_spread.without_spread();
    p.model_error.setup = 0.2;
    const BandedCase b = banded(p, "pinned", "h2d", 4096);
    for (std::size_t i = 0; i < b.result.rows.size(); ++i) {
        const bool setup = b.result.rows[i].variant.rfind("setup=", 0) == 0;
        EXPECT_EQ(b.model_error[i], setup ? 0.2 : 0.0) << b.result.rows[i].variant;
        EXPECT_EQ(b.result.rows[i].p90_ps > b.result.rows[i].time_ps, setup) << b.result.rows[i].variant;
    }
    // --deterministic's parameters clear it with the machines.
    EXPECT_EQ(p.without_spread().model_error.setup, 0.0);
}

TEST(HostBand, ImpossibleSpreadsAreRefusedByName) {
    const auto refused = [](const config::ModelParams& p) {
        std::string key;
        try {
            config::check_model_params(p, [&](const std::string& k, const std::string&) {
                key = k;
                throw std::invalid_argument(k);
            });
        } catch (const std::invalid_argument&) {
        }
        return key;
    };
    config::ModelParams p;
    EXPECT_EQ(refused(p), "");
    p.host_spread.calls = -0.1;
    EXPECT_EQ(refused(p), "host_spread.calls");
    p = {};
    p.host_spread.setup = std::nan("");
    EXPECT_EQ(refused(p), "host_spread.setup");
    p = {};
    p.host_spread.draws = 2;
    EXPECT_EQ(refused(p), "host_spread.draws");
    p = {};
    p.model_error.zero_copy = 2.5;
    EXPECT_EQ(refused(p), "model_error.zero_copy");
    p = {};
    p.model_error.setup = std::nan("");
    EXPECT_EQ(refused(p), "model_error.setup");
}

}  // namespace
}  // namespace dmasim::sim
