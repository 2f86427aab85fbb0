// Mechanisms of the strategies beyond a single pinned copy, each pinned by a number that
// follows from it.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "dmasim/gpu/coalescing.h"
#include "dmasim/pcie/wire.h"
#include "dmasim/sim/simulator.h"
#include "dmasim/topology/platform_file.h"

namespace dmasim::sim {

// The one elaboration of this test process (isolating_cases_test.cpp shares it).
Simulator& strategies_simulator() {
    static Simulator s(topology::load_platform("h100-sxm", config::ModelParams{}), config::ModelParams{});
    return s;
}

namespace {

constexpr std::uint64_t kMiB = 1 << 20;

Simulator& simulator() { return strategies_simulator(); }

CaseResult run(const config::ModelParams& p, const std::string& strategy, const std::string& dir, std::uint64_t bytes,
               const config::StrategyOptions& o = {}) {
    return simulator().run(p, CaseSpec{strategy, dir, bytes, o, {}});
}

double gbps(const CaseResult& r, std::uint64_t bytes, int directions = 1) {
    return static_cast<double>(bytes) * directions / (r.time_ps * 1e-12) * 1e-9;
}

const RowResult& row(const CaseResult& r, const std::string& variant) {
    for (const auto& x : r.rows) {
        if (x.variant == variant) return x;
    }
    throw std::runtime_error("no row " + variant);
}

config::StrategyOptions zc(std::uint64_t access, std::int64_t stride, std::int64_t blocks) {
    config::StrategyOptions o;
    o.zero_copy.access = core::Bytes{access};
    o.zero_copy.stride = stride;
    o.zero_copy.blocks = blocks;
    o.zero_copy.threads = 256;
    return o;
}

TEST(ZeroCopy, ReadThroughputGrowsWithBlocksUntilTheLinkBoundsIt) {
    config::ModelParams p;
    double previous = 0.0;
    std::vector<double> rates;
    for (std::int64_t blocks : {1, 2, 4, 8, 264}) {
        const double r = gbps(run(p, "zero_copy", "h2d", 32 * kMiB, zc(16, 1, blocks)), 32 * kMiB);
        // More warps never hurt; once the link is the bound they no longer help.
        EXPECT_GT(r, 0.98 * previous) << blocks << " blocks";
        previous = r;
        rates.push_back(r);
    }
    // Latency-bound at first: twice the warps, about twice the bytes in flight and the rate.
    EXPECT_NEAR(rates[1] / rates[0], 2.0, 0.15);
    EXPECT_NEAR(rates[2] / rates[1], 2.0, 0.15);
    // Link-bound at the end: 128-byte completions on the downstream link.
    const double bound = pcie::completion_efficiency(p.link, 128).gbps;
    EXPECT_LT(rates.back(), bound);
    EXPECT_GT(rates.back(), 0.9 * bound);
}

TEST(ZeroCopy, StrideTwoMovesHalfTheUsefulBytesPerWireByte) {
    config::ModelParams p;
    const CaseResult s1 = run(p, "zero_copy", "h2d", 16 * kMiB, zc(4, 1, 264));
    const CaseResult s2 = run(p, "zero_copy", "h2d", 16 * kMiB, zc(4, 2, 264));
    auto completion_payload = [](const CaseResult& r) {
        for (const auto& l : r.links) {
            if (l.label == "rc0->gpu0") return l.stats.payload_bytes;
        }
        return std::uint64_t{0};
    };
    EXPECT_EQ(completion_payload(s1), 16 * kMiB);
    EXPECT_EQ(completion_payload(s2), 2 * 16 * kMiB);
    EXPECT_NEAR(gbps(s2, 16 * kMiB) / gbps(s1, 16 * kMiB), 0.5, 0.03);
}

TEST(ZeroCopy, WritesArePostedAndExchangeUsesBothDirections) {
    config::ModelParams p;
    const CaseResult w = run(p, "zero_copy", "d2h", 16 * kMiB, zc(4, 1, 264));
    EXPECT_EQ(w.read_requests, 0U);
    EXPECT_EQ(w.writes, 16 * kMiB / gpu::kLineBytes);  // one 128-byte line per write
    const CaseResult x = run(p, "zero_copy", "both", 16 * kMiB, zc(4, 1, 264));
    EXPECT_GT(gbps(x, 16 * kMiB, 2), 1.5 * gbps(w, 16 * kMiB));
}

TEST(AsyncOverlap, PipelineApproachesTheLongerOfTransferAndKernelPlusOneChunk) {
    config::ModelParams p;
    const std::uint64_t bytes = 64 * kMiB;
    const double duplex_ps = run(p, "duplex", "both", bytes).time_ps;
    config::StrategyOptions o;
    o.async_overlap.kernel = core::Duration{2'000'000'000};  // 2 ms, longer than the transfers
    for (std::int64_t n : {4, 16}) {
        o.async_overlap.streams = n;
        const CaseResult r = run(p, "async_overlap", "both", bytes, o);
        const double floor_ps = std::max(duplex_ps, static_cast<double>(o.async_overlap.kernel.ps));
        // One chunk's H2D before the first kernel, one chunk's D2H after the last.
        const double chunk_ps = 2.0 * run(p, "pinned", "h2d", bytes / n).time_ps;
        EXPECT_GT(r.time_ps, floor_ps) << n;
        // + the first calls' overhead and the stream hand-offs of one chunk
        EXPECT_LT(r.time_ps, floor_ps + chunk_ps + 20e6) << n;
        EXPECT_LT(r.time_ps, row(r, "serial").time_ps) << n;
    }
    // Serial: the copies and the kernel one after the other.
    o.async_overlap.streams = 1;
    const CaseResult one = run(p, "async_overlap", "both", bytes, o);
    const double serial_sum = run(p, "pinned", "h2d", bytes).time_ps + run(p, "pinned", "d2h", bytes).time_ps +
                              static_cast<double>(o.async_overlap.kernel.ps);
    EXPECT_NEAR(row(one, "serial").time_ps / serial_sum, 1.0, 0.02);
}

TEST(Duplex, ThePinnedPairIsTimedFromTheStartEventBehindTheGate) {
    // dmaprobe issues every call of the pair behind a gate kernel and times from the start event
    // recorded behind it: the calls' CPU time is outside the interval. Without polling (no phase
    // for the calls to set), a dearer call leaves every row as it was.
    config::ModelParams p;
    p.runtime.poll_period = core::Duration{0};
    config::StrategyOptions o;
    o.duplex.host_memory = "pinned";
    const CaseResult cheap = run(p, "duplex", "both", 64 * 1024, o);
    config::ModelParams dear = p;
    dear.runtime.call_overhead = core::Duration{p.runtime.call_overhead.ps * 3};
    const CaseResult r = run(dear, "duplex", "both", 64 * 1024, o);
    for (const char* v : {"", "h2d", "d2h"}) EXPECT_NEAR(row(r, v).time_ps, row(cheap, v).time_ps, 1.0) << "row '" << v << "'";
    // The stop event follows the later copy: stream 0's wait for the D2H copy's end event, then
    // the channel's handoff (runtime.stream_wait_latency) from its own copy, and no sooner than
    // the spacing of stream 0's releases after the H2D copy's end event (runtime.release_spacing).
    const double later = std::max(row(r, "h2d").time_ps, row(r, "d2h").time_ps);
    const double handoff = static_cast<double>(std::max(p.runtime.stream_wait_latency.ps, p.runtime.release_spacing.ps));
    EXPECT_GE(row(r, "").time_ps, later);
    EXPECT_GE(row(r, "").time_ps, row(r, "h2d").time_ps + static_cast<double>(p.runtime.release_spacing.ps) - 1.0);
    EXPECT_LE(row(r, "").time_ps, later + handoff + 1.0);
}

TEST(Duplex, ThePairsBandIsItsSpreadOverTheGatesPhases) {
    // Which phase of the channels' polls a machine's calls give the pair is what differs between
    // machines (the calls fall outside the interval): each row is the mean over the phases and
    // carries their spread as its own band, so the band of drawn machines has nothing to add.
    config::ModelParams p;
    config::StrategyOptions o;
    o.duplex.host_memory = "pinned";
    const CaseResult r = run(p, "duplex", "both", 64 * 1024, o);
    for (const char* v : {"", "h2d", "d2h"}) {
        const RowResult& x = row(r, v);
        EXPECT_LT(x.min_ps, x.p10_ps) << v;
        EXPECT_LT(x.p10_ps, x.time_ps) << v;
        EXPECT_LT(x.time_ps, x.p90_ps) << v;
        EXPECT_LT(x.p90_ps, x.max_ps) << v;
        // The polls' period bounds how far the phase can move a row.
        EXPECT_LE(x.max_ps - x.min_ps, 2.0 * static_cast<double>(p.runtime.poll_period.ps)) << v;
    }
    // One machine, no spread (--deterministic): the mean alone.
    const CaseResult d = run(p.without_spread(), "duplex", "both", 64 * 1024, o);
    for (const char* v : {"", "h2d", "d2h"}) {
        EXPECT_DOUBLE_EQ(row(d, v).time_ps, row(r, v).time_ps) << v;
        EXPECT_DOUBLE_EQ(row(d, v).p10_ps, row(d, v).time_ps) << v;
        EXPECT_DOUBLE_EQ(row(d, v).p90_ps, row(d, v).time_ps) << v;
    }
}

TEST(Duplex, BlockingCopiesBesideThePairTakeTheirEnginesTurn) {
    // duplex.one_way_beside: dmaprobe times a blocking copy each way right after the pair, every
    // repetition, on the legacy stream. Each is the pinned strategy's blocking copy but for its
    // engine, whose last copy was the pair's, another stream's: a copy an engine carries starts
    // dma.channel_turn later, while a small copy into the GPU that the command stream carries
    // takes no engine and no turn. The next pair follows them: its copies turn back.
    config::ModelParams p;
    config::StrategyOptions o;
    o.duplex.host_memory = "pinned";
    const double turn = static_cast<double>(p.dma.channel_turn.ps);
    ASSERT_GT(turn, 0.0);
    config::ModelParams none = p;
    none.dma.channel_turn = core::Duration{0};
    for (const std::uint64_t size : {std::uint64_t{16 * 1024}, std::uint64_t{256 * 1024}}) {
        const bool carried = size <= p.runtime.inline_h2d_max.value;
        o.duplex.one_way_beside = false;
        const CaseResult plain = run(p, "duplex", "both", size, o);
        o.duplex.one_way_beside = true;
        const CaseResult beside = run(p, "duplex", "both", size, o);
        ASSERT_EQ(beside.rows.size(), plain.rows.size() + 2);
        const double up = row(run(p, "pinned", "h2d", size), "").time_ps;
        const double down = row(run(p, "pinned", "d2h", size), "").time_ps;
        EXPECT_NEAR(row(beside, "blocking_h2d").time_ps - up, carried ? 0.0 : turn, 0.1 * turn) << size;
        EXPECT_NEAR(row(beside, "blocking_d2h").time_ps - down, turn, 0.1 * turn) << size;
        // The pair's copies: the one out of the GPU a turn later at every phase; the one into it
        // only where the blocking copy before it took the engine.
        EXPECT_NEAR(row(beside, "d2h").time_ps - row(plain, "d2h").time_ps, turn, 0.1 * turn) << size;
        if (carried) {
            EXPECT_NEAR(row(beside, "h2d").time_ps, row(plain, "h2d").time_ps, 0.1 * turn) << size;
        }
        // Without the turn the copies beside the pair are the pinned strategy's, and the pair
        // after them is the pair alone.
        const CaseResult flat = run(none, "duplex", "both", size, o);
        o.duplex.one_way_beside = false;
        const CaseResult flat_plain = run(none, "duplex", "both", size, o);
        EXPECT_NEAR(row(flat, "blocking_h2d").time_ps, row(run(none, "pinned", "h2d", size), "").time_ps, 0.1 * turn) << size;
        EXPECT_NEAR(row(flat, "blocking_d2h").time_ps, row(run(none, "pinned", "d2h", size), "").time_ps, 0.1 * turn) << size;
        for (const char* v : {"", "h2d", "d2h"}) EXPECT_DOUBLE_EQ(row(flat, v).time_ps, row(flat_plain, v).time_ps) << v << " " << size;
    }
}

TEST(Duplex, ABurstQueuesItsCopiesBackToBackAndTimesEachWayAlone) {
    // duplex.burst: dmaprobe queues burst / size copies each way behind the gate, as nvbandwidth
    // does, and times each way's burst alone with the other direction's calls left out. Copies of
    // a stream go to their engine one behind the other (no poll between them), so a burst grows
    // by the chain's cost a copy, and both ways it lasts at least as long as its longer way.
    config::ModelParams p;
    config::StrategyOptions o;
    o.duplex.host_memory = "pinned";
    constexpr std::uint64_t kSize = 4096;
    const auto burst_of = [&](std::uint64_t copies) {
        o.duplex.burst = core::Bytes{copies * kSize};
        return run(p, "duplex", "both", kSize, o);
    };
    const CaseResult small = burst_of(8);
    const CaseResult large = burst_of(24);
    for (const char* v : {"", "h2d", "d2h", "burst_h2d", "burst_d2h"}) EXPECT_GT(row(large, v).time_ps, 0.0) << v;
    EXPECT_EQ(large.rows.size(), 5U);
    // Sixteen more copies each way: the engine's own time for each, well under a poll period.
    for (const char* v : {"burst_h2d", "burst_d2h"}) {
        const double per_copy = (row(large, v).time_ps - row(small, v).time_ps) / 16.0;
        EXPECT_GT(per_copy, static_cast<double>(p.dma.queued_launch_latency.ps)) << v;
        EXPECT_LT(per_copy, 0.5 * static_cast<double>(p.runtime.poll_period.ps)) << v;
    }
    EXPECT_GE(row(large, "").time_ps, std::max(row(large, "burst_h2d").time_ps, row(large, "burst_d2h").time_ps) -
                                          static_cast<double>(p.runtime.release_spacing.ps));
    // Large copies: both ways the shared root port holds the pair near its two directions' sum,
    // well above one way but below twice it.
    o.duplex.burst = core::Bytes{16ULL << 20};
    const CaseResult big = run(p, "duplex", "both", 4ULL << 20, o);
    const double over_up = 2.0 * row(big, "burst_h2d").time_ps / row(big, "").time_ps;
    EXPECT_GT(over_up, 1.5);
    EXPECT_LT(over_up, 1.95);
    // Without a burst the case is the one pair, as before.
    o.duplex.burst = core::Bytes{0};
    EXPECT_EQ(run(p, "duplex", "both", kSize, o).rows.size(), 3U);
}

TEST(Registered, AmortisedCostApproachesPinnedWithReuse) {
    config::ModelParams p;
    config::StrategyOptions o;
    o.registered.reuses = 1;
    const CaseResult once = run(p, "registered", "h2d", 16 * kMiB, o);
    const double pages = 16.0 * kMiB / static_cast<double>(p.cpu.page_size.value);
    EXPECT_DOUBLE_EQ(row(once, "setup=register").time_ps,
                     static_cast<double>(p.cpu.register_fixed.ps) + pages * static_cast<double>(p.cpu.register_per_page.ps));
    o.registered.reuses = 1000;
    const CaseResult many = run(p, "registered", "h2d", 16 * kMiB, o);
    const double pinned = run(p, "pinned", "h2d", 16 * kMiB).time_ps;
    // The copy dmaprobe times is the first after registering: the pinned one plus what the driver
    // does first with a new registration.
    const double first = pinned + static_cast<double>(p.cpu.register_first_copy.ps);
    EXPECT_NEAR(row(once, "").time_ps, first, 1.0);
    EXPECT_GT(row(once, "amortised_1").time_ps, 2.0 * pinned);
    // As dmaprobe amortises: each copy like the timed one, the registration shared by K of them.
    const double shared = (row(many, "setup=register").time_ps + row(many, "setup=unregister").time_ps) / 1000.0;
    EXPECT_NEAR(row(many, "amortised_1000").time_ps, first + shared, 1.0);
    EXPECT_NEAR(row(many, "amortised_1000").time_ps / first, 1.0, 0.01);
}

// The first copy of memory just registered costs a fixed cpu.register_first_copy more than a
// pinned one, at every size (on the H100 leases: 2.3-3.6 us at 64 KiB and 1 MiB), both ways.
TEST(Registered, TheFirstCopyAfterRegisteringCostsAFixedTimeOnTopOfThePinnedOne) {
    config::ModelParams p;
    p.cpu.register_first_copy = core::Duration{5'000'000};
    for (const char* dir : {"h2d", "d2h"}) {
        for (const std::uint64_t bytes : {std::uint64_t{65536}, kMiB}) {
            const double pinned = run(p, "pinned", dir, bytes).time_ps;
            const double registered = row(run(p, "registered", dir, bytes), "").time_ps;
            EXPECT_NEAR(registered - pinned, 5e6, 1.0) << dir << " " << bytes;
        }
    }
    p.cpu.register_first_copy = core::Duration{0};
    EXPECT_NEAR(row(run(p, "registered", "h2d", kMiB), "").time_ps, run(p, "pinned", "h2d", kMiB).time_ps, 1.0);
}

TEST(Pageable, StagingIsBoundByTheCpuCopyAndSharesDram) {
    config::ModelParams p;
    p.cpu.llc_size = core::Bytes{1 << 20};  // make the 64 MiB buffer stream from DRAM
    const double pinned = gbps(run(p, "pinned", "h2d", 64 * kMiB), 64 * kMiB);
    const double pageable = gbps(run(p, "pageable", "h2d", 64 * kMiB), 64 * kMiB);
    EXPECT_LT(pageable, pinned);
    EXPECT_LT(pageable, p.cpu.memcpy_bandwidth.gb_per_s());
    // With more CPU copy bandwidth than the link, the DMA of the previous piece overlaps the
    // copy of the next: with pieces as large as the staging buffers the rate approaches the
    // pinned one minus the pipeline's fill; with small ones each piece's own start on the engine
    // (a chain of copies) holds it lower.
    p.cpu.memcpy_bandwidth = core::Bandwidth{400e9};
    const double small_pieces = gbps(run(p, "pageable", "h2d", 64 * kMiB), 64 * kMiB);
    p.pageable.h2d_piece = p.pageable.bounce_size;
    const double fast_cpu = gbps(run(p, "pageable", "h2d", 64 * kMiB), 64 * kMiB);
    EXPECT_GT(fast_cpu, 0.6 * pinned);
    EXPECT_LT(small_pieces, fast_cpu);
    // A starved memory controller slows the staging (CPU copy and DMA share it).
    p.host_memory.bandwidth = core::Bandwidth{20e9};
    EXPECT_LT(gbps(run(p, "pageable", "h2d", 64 * kMiB), 64 * kMiB), 20.0);
}

// Issue 13, item 3 (results/h100-sxm/isolating/pageable-size, pagecache): a pageable host-to-device
// copy steps down once its source is larger than the cache the copying thread keeps it in, to the
// thread's copy rate from DRAM; a device-to-host one copies out of the staging buffers, which stay
// cached, and has no step. The H100 hosts' values: 7.98 GB/s from DRAM, 40 MiB of cache.
TEST(Pageable, AHostToDeviceCopyPastTheThreadsCacheReadsItsSourceFromDram) {
    config::ModelParams p;
    p.cpu.memcpy_bandwidth = core::Bandwidth{7.98e9};
    p.cpu.memcpy_bandwidth_cached = core::Bandwidth{12.1e9};
    p.cpu.llc_size = core::Bytes{40 * kMiB};
    const auto rate = [&](const char* dir, std::uint64_t bytes) { return gbps(run(p, "pageable", dir, bytes), bytes); };
    const double below = rate("h2d", 32 * kMiB);
    const double past = rate("h2d", 48 * kMiB);
    EXPECT_GT(below, 0.9 * p.cpu.memcpy_bandwidth_cached.gb_per_s());
    EXPECT_NEAR(past, p.cpu.memcpy_bandwidth.gb_per_s(), 0.05 * p.cpu.memcpy_bandwidth.gb_per_s());
    EXPECT_GT(rate("d2h", 48 * kMiB), 0.9 * p.cpu.memcpy_bandwidth_cached.gb_per_s());
}

// results/h100-sxm/isolating/pageable-pieces (three fresh one-GPU H200 leases, the H100's kind of
// host): a pageable copy into the GPU of 96 KiB-1 MiB grows at the CPU's copy rate alone (12.3-13.5
// GB/s, 7.2-8.2 us fixed), the engine moving each piece while the CPU copies the next
// (pageable.h2d_piece); out of the GPU the engine fills a staging buffer of pageable.bounce_size
// before the CPU copies it out, so up to that size the two add (1 MiB 105-124 us, against 25.6-27.2
// for the pinned copy and 27-50 for the CPU's copy alone).
TEST(Pageable, IntoTheGpuTheEngineMovesEachPieceWhileTheCpuCopiesTheNext) {
    config::ModelParams p = config::ModelParams{}.without_spread();
    p.cpu.llc_size = core::Bytes{64 * kMiB};  // the sources stay in the thread's cache
    p.cpu.memcpy_bandwidth_cached = core::Bandwidth{13e9};  // the leases' 12.3-13.5 GB/s
    // The engine's writes at the link's rate, as the pinned copy's (the lines the CPU's core holds
    // of a staging buffer: the next test).
    p.root_complex.held_write_bandwidth = core::Bandwidth{0.0};
    const double cpu_ps_per_byte = 1e12 / p.cpu.memcpy_bandwidth_cached.bytes_per_s;
    const double dma_ps_per_byte = (run(p, "pinned", "h2d", kMiB).time_ps - run(p, "pinned", "h2d", 256 * 1024).time_ps) /
                                   static_cast<double>(kMiB - 256 * 1024);
    const auto growth = [&](const char* dir) {
        return (run(p, "pageable", dir, kMiB).time_ps - run(p, "pageable", dir, 256 * 1024).time_ps) /
               static_cast<double>(kMiB - 256 * 1024);
    };
    ASSERT_LT(p.pageable.h2d_piece.value, std::uint64_t{256 * 1024});
    ASSERT_GE(p.pageable.bounce_size.value, kMiB);
    // Into the GPU the CPU's copy alone sets the growth; the engine's share would add its rate.
    EXPECT_NEAR(growth("h2d") / cpu_ps_per_byte, 1.0, 0.05);
    // Out of the GPU, within one staging buffer, the engine's move and the CPU's copy add.
    EXPECT_NEAR(growth("d2h") / (cpu_ps_per_byte + dma_ps_per_byte), 1.0, 0.05);
    // With the pieces as large as the buffers the copy into the GPU adds them too.
    p.pageable.h2d_piece = p.pageable.bounce_size;
    EXPECT_NEAR(growth("h2d") / (cpu_ps_per_byte + dma_ps_per_byte), 1.0, 0.05);
}

// results/h100-sxm/isolating/pageable-out: the thread's copy out of a staging buffer runs faster than its
// copy into one (0.67-0.89 of it into the GPU on seven leases, and not a cost per piece: tail): a pageable
// copy out of the GPU copies out at cpu.copy_out_bandwidth, 0 meaning memcpy_bandwidth_cached.
TEST(Pageable, TheCopyOutOfAStagingBufferHasItsOwnRate) {
    config::ModelParams p = config::ModelParams{}.without_spread();
    p.cpu.llc_size = core::Bytes{64 * kMiB};
    p.cpu.memcpy_bandwidth_cached = core::Bandwidth{12e9};
    p.root_complex.held_write_bandwidth = core::Bandwidth{0.0};  // the engine's part as a pinned copy's
    ASSERT_EQ(p.cpu.copy_out_bandwidth.bytes_per_s, 0.0);
    config::ModelParams out = p;
    out.cpu.copy_out_bandwidth = core::Bandwidth{15e9};
    const auto time = [](const config::ModelParams& q, const char* strategy, const char* dir, std::uint64_t bytes) {
        return run(q, strategy, dir, bytes).time_ps;
    };
    const auto growth = [&](const config::ModelParams& q, const char* strategy, const char* dir) {
        return (time(q, strategy, dir, kMiB) - time(q, strategy, dir, 256 * 1024)) / static_cast<double>(kMiB - 256 * 1024);
    };
    // Within one staging buffer the engine's move and the thread's copy-out add.
    const double dma_ps_per_byte = growth(p, "pinned", "d2h");
    EXPECT_NEAR(growth(out, "pageable", "d2h") / (1e12 / 15e9 + dma_ps_per_byte), 1.0, 0.05);
    EXPECT_NEAR(growth(p, "pageable", "d2h") / (1e12 / 12e9 + dma_ps_per_byte), 1.0, 0.05);
    // Into the GPU the thread copies into staging buffers at the other rate.
    EXPECT_EQ(time(out, "pageable", "h2d", kMiB), time(p, "pageable", "h2d", kMiB));
}

// results/h100-sxm/isolating/pageable-out (two fresh one-GPU H200 leases, the H100's kind of host, and
// one held out): a pinned copy out of the GPU into a buffer the CPU has just read takes 24.5 us a MiB
// longer than one into a buffer the engine wrote last, up to 1 MiB, and 29-41 us longer from 1.5 MiB
// on (the core's cache full); a pageable copy out of the GPU starts copying out only once the engine
// has filled its piece, in about the time of that pinned copy into just-read lines: each piece lands
// on a staging buffer the CPU copied out of last (cpu.core_cache, root_complex.held_write_bandwidth).
TEST(Pageable, OutOfTheGpuTheEngineWritesLinesTheCpusCoreHolds) {
    config::ModelParams p = config::ModelParams{}.without_spread();
    p.cpu.llc_size = core::Bytes{64 * kMiB};
    config::ModelParams none = p;
    none.root_complex.held_write_bandwidth = core::Bandwidth{0.0};
    const auto time = [](const config::ModelParams& q, const char* strategy, const char* dir, std::uint64_t bytes) {
        return run(q, strategy, dir, bytes).time_ps;
    };
    const double link_ps_per_byte = (time(p, "pinned", "d2h", kMiB) - time(p, "pinned", "d2h", 256 * 1024)) /
                                    static_cast<double>(kMiB - 256 * 1024);
    const double held_ps_per_byte = 1e12 / p.root_complex.held_write_bandwidth.bytes_per_s;
    ASSERT_GT(held_ps_per_byte, 1.5 * link_ps_per_byte);  // the host, not the link, sets the rate
    const double half_core = 0.5 * static_cast<double>(p.cpu.core_cache.value);
    ASSERT_LT(512.0 * 1024, half_core);
    ASSERT_GE(p.pageable.bounce_size.value, kMiB);  // a 1 MiB copy is one piece
    const auto excess = [&](std::uint64_t bytes) { return time(p, "pageable", "d2h", bytes) - time(none, "pageable", "d2h", bytes); };
    // A piece within the core's share is held whole: its every byte lands at the host's rate.
    for (const std::uint64_t bytes : {128 * 1024ULL, 512 * 1024ULL}) {
        EXPECT_NEAR(excess(bytes) / (static_cast<double>(bytes) * (held_ps_per_byte - link_ps_per_byte)), 1.0, 0.1) << bytes;
    }
    // A larger piece: the core holds half its cache's worth of it (the copy-out wrote as many
    // destination lines), the rest lands at the link's rate.
    EXPECT_NEAR(excess(kMiB) / (half_core * (held_ps_per_byte - link_ps_per_byte)), 1.0, 0.1);
    // Pinned copies land on lines the engine wrote last, and a copy into the GPU writes no host line.
    EXPECT_EQ(time(p, "pinned", "d2h", kMiB), time(none, "pinned", "d2h", kMiB));
    EXPECT_EQ(time(p, "pageable", "h2d", kMiB), time(none, "pageable", "h2d", kMiB));
}

// results/h100-sxm/isolating/pageable-pieces: a pageable copy into the GPU of 64 KiB takes longer than
// one of 96 KiB on every lease (22.65 against 14.65 us), and from 4 to 64 KiB it grows by 3.9 GB/s:
// up to pageable.inline_max the call copies it into the command stream, as it does a small pinned
// copy (cpu.memcpy_bandwidth, then the front end at runtime.command_fetch_bandwidth), and no engine
// reads host memory for it.
TEST(Pageable, ASmallCopyIntoTheGpuGoesIntoTheCommandStream) {
    config::ModelParams p = config::ModelParams{}.without_spread();
    ASSERT_GE(p.pageable.inline_max.value, std::uint64_t{64 * 1024});
    const auto time = [&](const config::ModelParams& q, std::uint64_t bytes) { return run(q, "pageable", "h2d", bytes).time_ps; };
    const double per_byte = 1e12 / p.cpu.memcpy_bandwidth.bytes_per_s + 1e12 / p.runtime.command_fetch_bandwidth.bytes_per_s;
    EXPECT_NEAR((time(p, 64 * 1024) - time(p, 32 * 1024)) / (32.0 * 1024) / per_byte, 1.0, 0.05);
    // Host memory serves the call's read of the source and the front end's fetch of the command
    // stream, no engine's read.
    const CaseResult carried = run(p, "pageable", "h2d", 64 * 1024);
    EXPECT_EQ(carried.rows.at(0).host_read_bytes, 2u * 64 * 1024);
    // Off, the same copy is staged: the CPU copies the source from its cache and an engine reads
    // the staging piece from host memory.
    config::ModelParams staged = p;
    staged.pageable.inline_max = core::Bytes{0};
    EXPECT_EQ(run(staged, "pageable", "h2d", 64 * 1024).rows.at(0).host_read_bytes, 64u * 1024);
    EXPECT_NE(time(staged, 64 * 1024), time(p, 64 * 1024));
}

TEST(Periodic, RadarFramesMeetTheirDeadlineUntilTheLinkCannotKeepUp) {
    // Every frame as simulated, none late by the host (frame_jitter off).
    const config::ModelParams p = config::ModelParams{}.without_spread();
    config::StrategyOptions o;
    o.periodic.size = core::Bytes{4 * kMiB};
    o.periodic.period = core::Duration{8'000'000'000};  // 8 ms
    o.periodic.count = 20;
    auto misses = [](const CaseResult& r) { return std::stoi(row(r, "misses").note); };  // "N of M frames ..."
    const CaseResult ok = run(p, "periodic", "h2d", 4 * kMiB, o);
    EXPECT_EQ(misses(ok), 0);
    // Each frame alone: a back-to-back copy, started late by the GPU's wake after the idle
    // rest of the period (runtime.idle_wake).
    const double copy_ps = run(p, "pinned", "h2d", 4 * kMiB).time_ps;
    const double wake_ps = static_cast<double>(p.runtime.idle_wake.ps) *
                           -std::expm1(-(8e9 - ok.time_ps) / static_cast<double>(p.runtime.idle_wake_time.ps));
    EXPECT_GT(wake_ps, 1e6);
    EXPECT_NEAR(ok.time_ps, copy_ps + wake_ps, 1e6);
    // 4 MiB every 50 us is 84 GB/s: more than Gen5 x16 carries, so frames queue up.
    o.periodic.period = core::Duration{50'000'000};
    const CaseResult late = run(p, "periodic", "h2d", 4 * kMiB, o);
    EXPECT_GT(misses(late), 0);
    EXPECT_GT(row(late, "p99").time_ps, 5 * ok.time_ps);
}

config::StrategyOptions radar(std::int64_t period_ns, std::int64_t count) {
    config::StrategyOptions o;
    o.periodic.size = core::Bytes{4 * kMiB};
    o.periodic.period = core::Duration{period_ns * 1000};
    o.periodic.count = count;
    return o;
}

// Frames late by the host (config::FrameJitterParams): the body leaves the median where it was,
// the slow mode makes the tail, the more so the longer the host sat idle before each release.
TEST(Periodic, TheHostStartsFramesLateAndMoreOftenAfterALongerIdle) {
    const config::ModelParams none = config::ModelParams{}.without_spread();
    config::ModelParams p = none;
    p.frame_jitter = config::FrameJitterParams{};  // the H100's quiet machines'
    const CaseResult still = run(none, "periodic", "h2d", 4 * kMiB, radar(8'000'000, 500));
    const CaseResult jittered = run(p, "periodic", "h2d", 4 * kMiB, radar(8'000'000, 500));
    EXPECT_EQ(row(still, "p99").time_ps, row(still, "").time_ps);
    EXPECT_NEAR(row(jittered, "").time_ps, row(still, "").time_ps, 3e6);  // the median: a few us
    // Their p99 lies 49 us past the median on the calibration's quiet leases.
    EXPECT_GT(row(jittered, "p99").time_ps, row(jittered, "").time_ps + 30e6);
    EXPECT_GT(row(jittered, "").p90_ps, row(jittered, "").time_ps);
    EXPECT_LT(row(jittered, "").p10_ps, row(jittered, "").time_ps);
    // The same seed gives the same frames; another gives others.
    EXPECT_EQ(row(run(p, "periodic", "h2d", 4 * kMiB, radar(8'000'000, 500)), "p99").time_ps, row(jittered, "p99").time_ps);
    config::ModelParams other = p;
    other.frame_jitter.seed = 7;
    EXPECT_NE(row(run(other, "periodic", "h2d", 4 * kMiB, radar(8'000'000, 500)), "p99").time_ps, row(jittered, "p99").time_ps);

    // Slow frames only, of a fixed 300 us, all or none: after 7.9 ms of idle the chance is
    // 1 - exp(-7.9 / 10) of slow_probability, after 1.9 ms 1 - exp(-1.9 / 10).
    config::ModelParams slow = none;
    slow.frame_jitter.body = core::Duration{0};
    slow.frame_jitter.slow_probability = 0.5;
    slow.frame_jitter.slow_time = core::Duration{300'000'000};
    slow.frame_jitter.slow_sigma = 0.0;
    // A deadline 150 us past the frame's own time: the frames that miss it are the slow ones.
    const auto late_share = [&](std::int64_t period_ns) {
        config::StrategyOptions o = radar(period_ns, 4000);
        const double base_ps = run(none, "periodic", "h2d", 4 * kMiB, o).time_ps;
        o.periodic.deadline = core::Duration{static_cast<std::int64_t>(base_ps) + 150'000'000};
        const CaseResult r = run(slow, "periodic", "h2d", 4 * kMiB, o);
        return std::stod(row(r, "misses").note) / 4000.0;  // "N of M frames missed ..."
    };
    const auto expected = [&](double idle_ms) { return 0.5 * -std::expm1(-idle_ms / 10.0); };
    const double every_8ms = late_share(8'000'000), every_2ms = late_share(2'000'000);
    EXPECT_NEAR(every_8ms, expected(8.0 - 0.11), 0.025);
    EXPECT_NEAR(every_2ms, expected(2.0 - 0.09), 0.02);
    EXPECT_GT(every_8ms, 2.5 * every_2ms);
}

// One run's p99 of 1000 frames is the 10th latest frame: a few slow frames more or less move it by
// tens of microseconds. The row is the median over frame_jitter.runs runs, as the measured one is
// the median over leases: another seed moves it far less than it moves one run's.
TEST(Periodic, TheP99IsTheMedianOverRunsOfTheStream) {
    config::ModelParams p = config::ModelParams{}.without_spread();
    // A tail the p99 lies in: a slow mode on some 2 % of the frames every 2 ms (what the H100's
    // leases gave before its noisy machines were told apart).
    p.frame_jitter.body = core::Duration{33'300'000};
    p.frame_jitter.body_sigma = 0.180;
    p.frame_jitter.slow_probability = 0.110;
    p.frame_jitter.slow_time = core::Duration{103'200'000};
    p.frame_jitter.slow_sigma = 0.842;
    const auto p99 = [&](std::int64_t seed, std::int64_t runs) {
        config::ModelParams q = p;
        q.frame_jitter.seed = seed;
        q.frame_jitter.runs = runs;
        return row(run(q, "periodic", "h2d", 4 * kMiB, radar(2'000'000, 1000)), "p99").time_ps;
    };
    std::vector<double> one, many;
    for (std::int64_t seed = 1; seed <= 6; ++seed) {
        one.push_back(p99(seed, 1));
        many.push_back(p99(seed, 101));
    }
    const auto range = [](const std::vector<double>& v) { return *std::max_element(v.begin(), v.end()) - *std::min_element(v.begin(), v.end()); };
    EXPECT_GT(range(one), 30e6);
    EXPECT_LT(range(many), range(one) / 3);
    // The row's band is how one run's p99 spreads over the runs: it holds most single runs.
    config::ModelParams q = p;
    q.frame_jitter.runs = 101;
    const RowResult band = row(run(q, "periodic", "h2d", 4 * kMiB, radar(2'000'000, 1000)), "p99");
    EXPECT_LT(band.p10_ps, band.time_ps);
    EXPECT_GT(band.p90_ps, band.time_ps);
    const auto inside = std::count_if(one.begin(), one.end(), [&](double x) { return x >= band.min_ps && x <= band.max_ps; });
    EXPECT_GE(inside, 5);
}

// A frame released while the one before is still in flight waits anyway: its own lateness,
// smaller than that wait, changes nothing, and it moves with the frame before. 9 ms of processing
// every 8 ms: every frame after the first waits, so all move by the first one's lateness.
TEST(Periodic, AFrameThatWaitsForTheOneBeforeHidesItsLateness) {
    const config::ModelParams none = config::ModelParams{}.without_spread();
    config::ModelParams p = none;
    p.frame_jitter = config::FrameJitterParams{};
    p.frame_jitter.runs = 1;  // one run's frames: each statistic moves by the same shift
    config::StrategyOptions o = radar(8'000'000, 100);
    o.periodic.kernel = core::Duration{9'000'000'000};
    const CaseResult still = run(none, "periodic", "h2d", 4 * kMiB, o);
    const CaseResult jittered = run(p, "periodic", "h2d", 4 * kMiB, o);
    const double shift = row(jittered, "backlog").time_ps - row(still, "backlog").time_ps;
    EXPECT_NEAR(row(jittered, "p99").time_ps - row(still, "p99").time_ps, shift, 1.0);
    EXPECT_NEAR(row(jittered, "backlog").p10_ps - row(still, "backlog").p10_ps, shift, 1.0);
    EXPECT_GE(shift, 0.0);
    EXPECT_LT(shift, 1e9);  // one frame's lateness, not a sum over a hundred frames
}

}  // namespace
}  // namespace dmasim::sim

namespace dmasim::sim {
namespace {

TEST(CpuMapped, SmallStoresAreFastAndLoadsSerialise) {
    config::ModelParams p;
    // One store of a few bytes is one 64-byte posted write: well under a microsecond, against
    // the microseconds of a cudaMemcpy call.
    const double store4 = run(p, "cpu_mapped", "h2d", 4).time_ps;
    EXPECT_LT(store4, 1e6);
    EXPECT_LT(store4, run(p, "pinned", "h2d", 4).time_ps / 5);
    // Loads wait for their completions one at a time: time grows with the number of loads.
    const double load4k = run(p, "cpu_mapped", "d2h", 4096).time_ps;
    const double load8k = run(p, "cpu_mapped", "d2h", 8192).time_ps;
    EXPECT_NEAR(load8k / load4k, 2.0, 0.05);
    p.cpu.mmio_reads_in_flight = 4;
    EXPECT_NEAR(run(p, "cpu_mapped", "d2h", 8192).time_ps / load8k, 0.25, 0.05);
    // Stores stream: limited by the core's write-combining rate when buffers are plenty.
    p.cpu.wc_buffers = 64;
    const CaseResult big = run(p, "cpu_mapped", "h2d", 1 << 20);
    EXPECT_NEAR(gbps(big, 1 << 20), p.cpu.wc_bandwidth.gb_per_s(), 0.05 * p.cpu.wc_bandwidth.gb_per_s());
    // ... and by the buffers when they are few: 64 bytes each, held until they leave the root complex.
    p.cpu.wc_buffers = 2;
    EXPECT_LT(gbps(run(p, "cpu_mapped", "h2d", 1 << 20), 1 << 20), 0.5 * p.cpu.wc_bandwidth.gb_per_s());
}

// Issue 15: a CPU mapping of GPU memory goes through BAR1; a buffer larger than its aperture is
// mapped a window at a time, with a remap between windows (before, 512 MiB through a 256 MiB
// aperture ran as if it fit).
TEST(CpuMapped, ABufferLargerThanTheBarApertureIsMappedWindowByWindow) {
    config::ModelParams p;
    p.cpu.mmio_reads_in_flight = 8;
    constexpr std::uint64_t kBytes = 4 << 20;
    const CaseResult whole = run(p, "cpu_mapped", "d2h", kBytes);
    p.gpu.bar_aperture = core::Bytes{1 << 20};
    p.gpu.bar_remap = core::Duration{50'000'000};  // 50 us: well above what one window's loads leave over
    const CaseResult windows = run(p, "cpu_mapped", "d2h", kBytes);
    // Four windows, three remaps, each on the CPU's way between its loads.
    EXPECT_NEAR(windows.time_ps - whole.time_ps, 3 * 50e6, 0.02 * 3 * 50e6);
    EXPECT_NE(windows.rows.front().note.find("in 4 windows of the 1MiB BAR1 aperture"), std::string::npos)
        << windows.rows.front().note;
    EXPECT_EQ(whole.rows.front().note.find("windows"), std::string::npos);
}

}  // namespace
}  // namespace dmasim::sim

namespace dmasim::sim {
namespace {

// The boundary the H100 shows (results/h100-sxm/isolating/pinned-pool, two leases): 511 pages
// (2 MiB - 4 KiB) come from the pool in 3-5 us; 2 MiB - 1 B, which is 512 pages, costs what
// 2 MiB does (about 1 ms), as does every larger size, page by page.
TEST(Pinned, AllocationsOfFewerPagesThanThePoolComeFromItLargerOnesPinPageByPage) {
    config::ModelParams p;
    ASSERT_EQ(p.cpu.alloc_pinned_pool.value, 2U << 20);
    ASSERT_EQ(p.cpu.page_size.value, 4096U);
    const double pooled = static_cast<double>(p.cpu.alloc_pinned_pool_fixed.ps);
    const double fixed = static_cast<double>(p.cpu.alloc_pinned_fixed.ps);
    const double per_page = static_cast<double>(p.cpu.alloc_pinned_per_page.ps);
    auto alloc = [&](std::uint64_t bytes) { return row(run(p, "pinned", "h2d", bytes), "setup=mallochost").time_ps; };
    EXPECT_DOUBLE_EQ(alloc(4096), pooled);
    EXPECT_DOUBLE_EQ(alloc((1U << 20) + 4096), pooled);  // beyond the 1 MiB the model once assumed
    EXPECT_DOUBLE_EQ(alloc((2U << 20) - 4096), pooled);
    EXPECT_DOUBLE_EQ(alloc((2U << 20) - 1), fixed + per_page * 512);
    EXPECT_DOUBLE_EQ(alloc(2U << 20), fixed + per_page * 512);
    EXPECT_DOUBLE_EQ(alloc((2U << 20) + 4096), fixed + per_page * 513);
    // The two paths differ by orders of magnitude, as measured (3-5 us against about 1 ms).
    EXPECT_GT(alloc(2U << 20), 100 * alloc((2U << 20) - 4096));
    // A platform of another driver sets its own boundary.
    p.cpu.alloc_pinned_pool = core::Bytes{1U << 20};
    EXPECT_DOUBLE_EQ(alloc((1U << 20) - 4096), pooled);
    EXPECT_DOUBLE_EQ(alloc(1U << 20), fixed + per_page * 256);
}

// A repeated cudaMallocHost of one size gets back the pages the one before freed; the share of
// them the cache kept is zeroed there, the rest in DRAM, each such page dearer by
// cpu.alloc_pinned_cold_per_page (results/h100-sxm/isolating/alloc-pages: on two of three fresh
// leases of the H100's kind of host the allocations cost 0.32-0.33 us more a page from 24 MiB on
// than at 2-4 MiB, as the CPU's memset of a rewritten region slows at 16-24 MiB).
TEST(Pinned, PagesAnAllocationFindsOutOfTheCacheAreZeroedInDram) {
    config::ModelParams p;
    ASSERT_EQ(p.cpu.page_size.value, 4096U);
    const std::uint64_t cache = p.cpu.alloc_pinned_cache.value;
    ASSERT_GE(cache, p.cpu.alloc_pinned_pool.value);
    const double fixed = static_cast<double>(p.cpu.alloc_pinned_fixed.ps);
    const double per_page = static_cast<double>(p.cpu.alloc_pinned_per_page.ps);
    const double cold = static_cast<double>(p.cpu.alloc_pinned_cold_per_page.ps);
    ASSERT_GT(cold, 0.0);
    auto alloc = [&](std::uint64_t bytes) { return row(run(p, "pinned", "h2d", bytes), "setup=mallochost").time_ps; };
    auto pages = [](std::uint64_t bytes) { return static_cast<double>(bytes / 4096); };
    // Up to the cache every page is found in it.
    EXPECT_NEAR(alloc(cache), fixed + per_page * pages(cache), 1.0);
    // At twice the cache a cache that replaces lines at random keeps h = exp(-2 (1 - h)) = 0.2032
    // of them; the rest pay.
    EXPECT_NEAR((alloc(2 * cache) - fixed - per_page * pages(2 * cache)) / (cold * pages(2 * cache)), 1.0 - 0.2032, 1e-3);
    // Far past it nearly every page does: the cost a page rises by the cold cost.
    const double big = 256.0 * static_cast<double>(cache);
    EXPECT_NEAR((alloc(256 * cache) - fixed) / (big / 4096.0), per_page + cold, 1e-3 * cold);
    // Without that cost the allocation is linear in its pages at every size.
    p.cpu.alloc_pinned_cold_per_page = core::Duration{0};
    EXPECT_NEAR(alloc(256 * cache), fixed + per_page * pages(256 * cache), 1.0);
    // With no cache to find pages in, every page pays from the pool's end on.
    p.cpu.alloc_pinned_cold_per_page = core::Duration{static_cast<std::int64_t>(cold)};
    p.cpu.alloc_pinned_cache = core::Bytes{0};
    EXPECT_NEAR(alloc(2U << 20), fixed + (per_page + cold) * 512, 1.0);
}

// Host-to-device copies up to runtime.inline_h2d_max are copied into the command stream by the
// call, at the CPU's copy rate: at that size a copy takes longer than one a little larger, which
// a copy engine reads (results/h100-sxm/isolating/small-copies: 24 KiB 2.45 us above 28 KiB,
// dmaprobe's median of three leases, sources flushed; 1.63 us in smallcopy.cu's blocking column).
TEST(Pinned, SmallHostToDeviceCopiesAreWrittenByTheCall) {
    config::ModelParams p;
    const std::uint64_t max = p.runtime.inline_h2d_max.value;
    const std::uint64_t step = 4096;
    auto copy = [&](const config::ModelParams& q, const char* dir, std::uint64_t bytes) {
        return row(run(q, "pinned", dir, bytes), "").time_ps;
    };
    const double written = static_cast<double>(max) / p.cpu.memcpy_bandwidth.bytes_per_s * 1e12;
    const double fetched = static_cast<double>(max) / p.runtime.command_fetch_bandwidth.bytes_per_s * 1e12;
    // Without the command stream the larger copy takes a little longer.
    config::ModelParams dma = p;
    dma.runtime.inline_h2d_max = core::Bytes{0};
    const double dma_step = copy(dma, "h2d", max + step) - copy(dma, "h2d", max);
    EXPECT_GT(dma_step, 0.0);
    // With an engine that reads the data from the command stream as from any source, the call's
    // copy is all the command stream adds.
    config::ModelParams read = p;
    read.runtime.command_fetch_bandwidth = core::Bandwidth{0.0};
    EXPECT_NEAR(copy(read, "h2d", max) - copy(dma, "h2d", max), written, 1e3);
    EXPECT_NEAR(copy(read, "h2d", max) - copy(read, "h2d", max + step), written - dma_step, 1e3);
    // Read by the front end with the work, the data costs its fetch in place of the engine's read
    // (a round trip and the data at the link's rate): 1.2-1.7 us more than the 28 KiB copy.
    const double above = copy(p, "h2d", max) - copy(p, "h2d", max + step);
    EXPECT_GT(above, 1.0e6);
    EXPECT_LT(above, written + fetched);
    // Device-to-host copies always take the copy engine.
    EXPECT_DOUBLE_EQ(copy(p, "d2h", max), copy(dma, "d2h", max));
}

// Host-to-device copies up to runtime.front_end_h2d_max are written by the GPU's front end from
// the command stream: no copy engine reads the host, so a tiny copy to the device takes less
// than one from it (measured: 4 B 0.5 us less on three H100 leases; behind a kernel 4 B and
// 1 KiB copies are not polled, 4 KiB ones are; results/h100-sxm/isolating/stream-handoffs).
TEST(Pinned, TinyHostToDeviceCopiesAreWrittenByTheFrontEnd) {
    config::ModelParams p;
    auto copy = [&](const config::ModelParams& q, const char* dir, std::uint64_t bytes) {
        return run(q, "pinned", dir, bytes);
    };
    const std::uint64_t tiny = p.runtime.front_end_h2d_max.value;
    ASSERT_GT(tiny, 0U);
    const CaseResult up = copy(p, "h2d", tiny);
    EXPECT_LT(row(copy(p, "h2d", 4), "").time_ps, row(copy(p, "d2h", 4), "").time_ps);
    // Host memory sees the call's copy into the command stream (read and written), the front
    // end's read of it and the semaphore, and no read of the GPU's.
    const auto semaphore = static_cast<std::uint64_t>(p.dma.semaphore_size.value);
    EXPECT_EQ(up.host_memory_bytes, 3 * tiny + semaphore);
    // Without the front end's path, or without the fetch of the data with the work, the tiny
    // copy takes a copy engine's read of the host, a read's round trip longer.
    config::ModelParams off = p;
    off.runtime.front_end_h2d_max = core::Bytes{0};
    off.runtime.command_fetch_bandwidth = core::Bandwidth{0.0};
    const CaseResult engine = copy(off, "h2d", tiny);
    EXPECT_GT(row(engine, "").time_ps, row(up, "").time_ps + 2.0 * static_cast<double>(p.link.latency.ps));
    EXPECT_EQ(engine.host_memory_bytes, 3 * tiny + semaphore);
    EXPECT_GT(row(engine, "").time_ps, row(copy(off, "d2h", tiny), "").time_ps);
}

// A copy carried in the command stream that is larger than the front end writes goes to a copy
// engine, but on an idle stream the front end has read its data with the work: the engine writes
// it into GPU memory and reads nothing from the host. Measured (results/h100-sxm/isolating/
// small-copies, three H100 leases and an H200): a blocking 2 KiB copy costs what a 1 KiB one,
// the front end's, does beyond the call (-0.34 to +0.37 us; an engine's read would add its round
// trip, 1.3 us), and from 2 to 24 KiB the copy grows beyond the call by a further kB at
// 15.4-22.4 GB/s, not the link's rate.
TEST(Pinned, AnInlineCopyOnAnIdleStreamTakesItsDataWithItsWork) {
    config::ModelParams p;
    auto copy = [&](const config::ModelParams& q, std::uint64_t bytes) { return run(q, "pinned", "h2d", bytes); };
    auto time = [&](const config::ModelParams& q, std::uint64_t bytes) { return row(copy(q, bytes), "").time_ps; };
    const std::uint64_t front = p.runtime.front_end_h2d_max.value;
    const std::uint64_t small = 2 * front;
    ASSERT_LE(small, p.runtime.inline_h2d_max.value);
    const double per_byte = 1e12 / p.cpu.memcpy_bandwidth.bytes_per_s + 1e12 / p.runtime.command_fetch_bandwidth.bytes_per_s;
    // The engine's step: the L2's write of the data, no round trip to the host.
    const double step = time(p, small) - time(p, front);
    // (Within 20 ns: the call's copy of the source mixes the CPU's rates as the caches say.)
    EXPECT_NEAR(step, static_cast<double>(front) * per_byte + static_cast<double>(p.dma.gpu_memory_latency.ps), 20e3);
    EXPECT_LT(step, 0.5e6);
    // Each further byte: the call's copy and the front end's fetch.
    const std::uint64_t a = 4096, b = 20480;
    EXPECT_NEAR(time(p, b) - time(p, a), static_cast<double>(b - a) * per_byte, 20e3);
    // Host memory: the source read and the command stream written by the call, read by the front
    // end, and the semaphore.
    EXPECT_EQ(copy(p, small).host_memory_bytes, 3 * small + static_cast<std::uint64_t>(p.dma.semaphore_size.value));
    // Read by the engine instead, the step has the round trip in it.
    config::ModelParams read = p;
    read.runtime.command_fetch_bandwidth = core::Bandwidth{0.0};
    EXPECT_GT(time(read, small) - time(read, front), step + 2.0 * static_cast<double>(p.link.latency.ps));
}

}  // namespace
}  // namespace dmasim::sim
