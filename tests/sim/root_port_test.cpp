// A root port's data path between its link and host memory (root_complex.port_bandwidth and
// port_bandwidth_total): one-way copies run at its per-direction rate, not the link's, and the
// two directions together at its shared rate. Measured on the lent H100 and H200 hosts: 55.2
// GB/s each way for copies whose link would allow 57-58 GB/s, and less than twice that both
// ways (results/h100-sxm/isolating/copy-beside-zero-copy).
#include <gtest/gtest.h>

#include <cmath>

#include "dmasim/sim/root_complex.h"
#include "dmasim/sim/simulator.h"
#include "dmasim/topology/platform_file.h"

namespace dmasim::sim {
namespace {

constexpr std::uint64_t kMiB = 1 << 20;
constexpr double kPerDirection = 40e9;  // below the Gen5 x16 link's rate either way
constexpr double kShared = 60e9;        // below twice that

std::string platform_text(bool limited) {
    const std::string rc = limited ? ", port_bandwidth: 40GB/s, port_bandwidth_total: 60GB/s" : "";
    return "name: port-host\nnodes:\n  - {name: cpu0, kind: cpu}\n"
           "  - {name: rc0, kind: root_complex, completion_size: 256B" + rc + "}\n  - {name: gpu0, kind: gpu}\n"
           "links:\n  - {a: cpu0, b: rc0, kind: internal}\n  - {a: rc0, b: gpu0, generation: 5, lanes: 16}\n";
}

double row_ps(const CaseResult& r, const std::string& variant) {
    for (const auto& x : r.rows) {
        if (x.variant == variant) return x.time_ps;
    }
    throw std::runtime_error("no row '" + variant + "'");
}

TEST(RootPort, CopiesRunAtThePortsDataPathEachWayAndAtItsSharedRateBothWays) {
    const config::ModelParams p;
    const topology::Platform open = topology::parse_platform(platform_text(false), "port-host.yaml", p);
    const topology::Platform limited = topology::parse_platform(platform_text(true), "port-host.yaml", p);
    Simulator sim(open, p);
    const std::uint64_t size = 64 * kMiB;
    const auto gbps = [&](const CaseResult& r) { return static_cast<double>(size) / (r.time_ps * 1e-12); };

    for (const char* dir : {"h2d", "d2h"}) {
        const double free_rate = gbps(sim.run(p, CaseSpec{"pinned", dir, size, {}, {}, &open}));
        const double capped = gbps(sim.run(p, CaseSpec{"pinned", dir, size, {}, {}, &limited}));
        EXPECT_GT(free_rate, 1.3 * kPerDirection) << dir << ": the link alone is faster than the port";
        EXPECT_NEAR(capped, kPerDirection, 0.02 * kPerDirection) << dir;
    }

    // Both ways: the two directions take the shared stage in turn, so each moves half the shared
    // rate and the two copies end together (measured: duplex copies of 8-40 MiB on the lent
    // H100 and of every size on the H200, results/h100-sxm/isolating/duplex-host-memory).
    const CaseResult both = sim.run(p, CaseSpec{"duplex", "both", size, {}, {}, &limited});
    const double h2d = row_ps(both, "h2d") * 1e-12;
    const double d2h = row_ps(both, "d2h") * 1e-12;
    ASSERT_GE(row_ps(both, ""), std::max(row_ps(both, "h2d"), row_ps(both, "d2h")))
        << "the pair's row ends with its later copy (and the synchronize)";
    EXPECT_NEAR(static_cast<double>(size) / h2d, kShared / 2.0, 0.03 * kShared / 2.0);
    EXPECT_NEAR(static_cast<double>(size) / d2h, kShared / 2.0, 0.03 * kShared / 2.0);
    EXPECT_NEAR(h2d / d2h, 1.0, 0.02) << "neither direction goes first";
    const double open_both = 2.0 * static_cast<double>(size) /
                             (sim.run(p, CaseSpec{"duplex", "both", size, {}, {}, &open}).time_ps * 1e-12);
    EXPECT_GT(open_both, 1.5 * kShared) << "without the port's limits both ways run at the link's rates";
}

// A port's I/O cache and its way to host memory (root_complex.io_cache, memory_bandwidth): a
// device-to-host copy's writes past the cache each evict a line the copy wrote before, and the
// write-backs share the way to memory with the host-to-device reads, ahead of them. Measured on
// the lent H100 hosts: duplex copies move 97-100 GB/s together up to 40 MiB and 91-93 past it,
// but 98-99 when the device-to-host copy writes the same 16 MiB again and again (three leases,
// results/h100-sxm/isolating/duplex-host-memory).
TEST(RootPort, WritesPastTheIoCacheShareTheWayToMemoryWithTheReadsAheadOfThem) {
    constexpr double kMemory = 60e9;  // above one direction's 40, below the two's 80
    const auto text = [](const std::string& io_cache) {
        return "name: evict-host\nnodes:\n  - {name: cpu0, kind: cpu}\n"
               "  - {name: rc0, kind: root_complex, completion_size: 256B, port_bandwidth: 40GB/s, io_cache: " +
               io_cache + ", memory_bandwidth: 60GB/s}\n  - {name: gpu0, kind: gpu}\n"
               "links:\n  - {a: cpu0, b: rc0, kind: internal}\n  - {a: rc0, b: gpu0, generation: 5, lanes: 16}\n";
    };
    const config::ModelParams p;
    const topology::Platform roomy = topology::parse_platform(text("1GiB"), "evict-host.yaml", p);  // never filled
    const topology::Platform small = topology::parse_platform(text("4MiB"), "evict-host.yaml", p);
    Simulator sim(roomy, p);
    const std::uint64_t size = 128 * kMiB;
    const auto gbps = [&](double seconds) { return static_cast<double>(size) / seconds; };

    // One way, the write-backs alone fit in the way to memory, as the reads alone do.
    for (const char* dir : {"h2d", "d2h"}) {
        const CaseResult one = sim.run(p, CaseSpec{"pinned", dir, size, {}, {}, &small});
        EXPECT_NEAR(gbps(one.time_ps * 1e-12), kPerDirection, 0.02 * kPerDirection) << dir;
    }
    // Both ways inside the cache: nothing goes back to memory, and each direction runs at its rate.
    const CaseResult inside = sim.run(p, CaseSpec{"duplex", "both", size, {}, {}, &roomy});
    EXPECT_NEAR(gbps(row_ps(inside, "h2d") * 1e-12), kPerDirection, 0.03 * kPerDirection);
    EXPECT_NEAR(gbps(row_ps(inside, "d2h") * 1e-12), kPerDirection, 0.03 * kPerDirection);

    // Past it: the device-to-host copy keeps its rate, its write-backs going first, and the reads
    // get what is left of the way to memory while both run, then the whole direction alone.
    const CaseResult past = sim.run(p, CaseSpec{"duplex", "both", size, {}, {}, &small});
    const double first = row_ps(past, "d2h") * 1e-12;
    const double last = row_ps(past, "h2d") * 1e-12;
    ASSERT_LT(first, last);
    EXPECT_NEAR(gbps(first), kPerDirection, 0.03 * kPerDirection);
    const double together = (2.0 * static_cast<double>(size) - (last - first) * kPerDirection) / first;
    // The reads' queue filling behind the first write-backs runs faster (of 128 MiB written again
    // and again, a 4 MiB cache keeps nothing: io_cache_kept_share).
    EXPECT_NEAR(together, kMemory, 0.05 * kMemory);
    EXPECT_GT(row_ps(past, ""), 1.2 * row_ps(inside, "")) << "past the cache the pair takes longer";
}

// A program repeated on the same buffers finds in the I/O cache what survived its last pass. The
// I/O ways replace lines at random, so a line survives a pass's misses with probability
// exp(-misses / lines) and the share kept solves h = exp(-(E / C)(1 - h)). Measured, repeated as
// dmaprobe runs, on the lent H100 a4585846: the duplex pair moves 100.7 GB/s at 40 MiB and
// 96.6/94.1/92.9/90.5 at 48/56/64/80 MiB, losing the share evicted (0.31/0.51/0.64/0.80) of what
// it loses at 256 MiB (results/h100-sxm/isolating/duplex-host-memory, repeat/).
TEST(RootPort, ARepeatedBufferFindsTheShareARandomCacheKeeps) {
    constexpr std::uint64_t kCache = 40 * kMiB;
    EXPECT_DOUBLE_EQ(io_cache_kept_share(16 * kMiB, kCache), 1.0);
    EXPECT_DOUBLE_EQ(io_cache_kept_share(kCache, kCache), 1.0);
    EXPECT_EQ(io_cache_free_bytes(16 * kMiB, kCache), kCache) << "a buffer that fits evicts nothing";
    double last = 1.0;
    for (const std::uint64_t mib : {48, 56, 64, 80, 96, 256}) {
        const double h = io_cache_kept_share(mib * kMiB, kCache);
        const double r = static_cast<double>(mib * kMiB) / static_cast<double>(kCache);
        EXPECT_NEAR(h, std::exp(-r * (1.0 - h)), 1e-9) << mib << " MiB";
        EXPECT_LT(h, last) << mib << " MiB: a larger buffer keeps a smaller share";
        EXPECT_LT(h * static_cast<double>(mib * kMiB), static_cast<double>(kCache)) << "never more than the cache holds";
        last = h;
    }
    EXPECT_NEAR(io_cache_kept_share(48 * kMiB, kCache), 0.686, 0.001);
    EXPECT_NEAR(io_cache_kept_share(64 * kMiB, kCache), 0.358, 0.001);
    EXPECT_LT(io_cache_kept_share(256 * kMiB, kCache), 0.002);
    EXPECT_EQ(io_cache_free_bytes(64 * kMiB, kCache),
              static_cast<std::uint64_t>(std::llround(io_cache_kept_share(64 * kMiB, kCache) * 64.0 * kMiB)));

    // A duplex pair loses to the write-backs in proportion to the share its writes evict.
    const auto text = [](const std::string& io_cache) {
        return "name: evict-host\nnodes:\n  - {name: cpu0, kind: cpu}\n"
               "  - {name: rc0, kind: root_complex, completion_size: 256B, port_bandwidth: 40GB/s, io_cache: " +
               io_cache + ", memory_bandwidth: 60GB/s}\n  - {name: gpu0, kind: gpu}\n"
               "links:\n  - {a: cpu0, b: rc0, kind: internal}\n  - {a: rc0, b: gpu0, generation: 5, lanes: 16}\n";
    };
    const config::ModelParams p;
    const topology::Platform none = topology::parse_platform(text("1GiB"), "evict-host.yaml", p);
    const topology::Platform part = topology::parse_platform(text("32MiB"), "evict-host.yaml", p);
    const topology::Platform all = topology::parse_platform(text("1MiB"), "evict-host.yaml", p);
    Simulator sim(none, p);
    const std::uint64_t size = 48 * kMiB;
    const auto pair = [&](const topology::Platform& plat) { return sim.run(p, CaseSpec{"duplex", "both", size, {}, {}, &plat}).time_ps; };
    const double t_none = pair(none);
    const double t_part = pair(part);
    const double t_all = pair(all);
    ASSERT_GT(t_all, 1.1 * t_none);
    const double evicted = 1.0 - io_cache_kept_share(size, 32 * kMiB);  // 0.58
    EXPECT_NEAR((t_part - t_none) / (t_all - t_none), evicted, 0.1);
    // A single pass evicting only what passes the cache (40 % of 48 MiB past 32 MiB) would lose less.
    EXPECT_GT((t_part - t_none) / (t_all - t_none), 1.0 - 32.0 / 48.0 + 0.05);
}

// The shared stage's turns are kept: while the other direction is active, the slot after a
// direction's own is the other's, used or not. So past the I/O cache, where the write-backs hold
// the host-to-device reads below half the shared rate, the device-to-host copy still gets half of
// it, not the slack up to its own direction's rate. Measured on the lent H100 hosts: past the
// cache the D2H copy of a duplex pair runs at 51 GB/s, beside an H2D copy at about 41, where its
// link and port would take 55; beside eight CPU threads storing, D2H 48-51 GB/s against an H2D
// copy slowed to 37-47 (results/h100-sxm/isolating/duplex-host-memory).
TEST(RootPort, WhileBothDirectionsAreActiveEachKeepsItsTurnsUsedOrNot) {
    constexpr double kPort = 40e9;    // each way
    constexpr double kStage = 60e9;   // both ways together: 30 each when both are active
    constexpr double kMemory = 52e9;  // reads and write-backs: the reads get 22 beside 30 written
    const auto text = [](const std::string& memory) {
        return "name: turns-host\nnodes:\n  - {name: cpu0, kind: cpu}\n"
               "  - {name: rc0, kind: root_complex, completion_size: 256B, port_bandwidth: 40GB/s, "
               "port_bandwidth_total: 60GB/s, io_cache: 4MiB" + memory + "}\n  - {name: gpu0, kind: gpu}\n"
               "links:\n  - {a: cpu0, b: rc0, kind: internal}\n  - {a: rc0, b: gpu0, generation: 5, lanes: 16}\n";
    };
    const config::ModelParams p;
    const topology::Platform open = topology::parse_platform(text(""), "turns-host.yaml", p);
    const topology::Platform held = topology::parse_platform(text(", memory_bandwidth: 52GB/s"), "turns-host.yaml", p);
    Simulator sim(open, p);
    const std::uint64_t size = 128 * kMiB;
    const auto gbps = [&](double ps) { return static_cast<double>(size) / (ps * 1e-12); };

    // One way the turns are not in the way: nothing else is active.
    EXPECT_NEAR(gbps(sim.run(p, CaseSpec{"pinned", "d2h", size, {}, {}, &held}).time_ps), kPort, 0.02 * kPort);
    // Both ways with nothing else limiting them, half the stage each, ending together.
    const CaseResult free_pair = sim.run(p, CaseSpec{"duplex", "both", size, {}, {}, &open});
    EXPECT_NEAR(gbps(row_ps(free_pair, "d2h")), kStage / 2.0, 0.03 * kStage / 2.0);
    EXPECT_NEAR(gbps(row_ps(free_pair, "h2d")), kStage / 2.0, 0.03 * kStage / 2.0);
    // Host memory holds the reads back: the device-to-host copy keeps half the stage (30), not
    // its direction's 40, which a stage taken by whoever waits would give it.
    const CaseResult held_pair = sim.run(p, CaseSpec{"duplex", "both", size, {}, {}, &held});
    const double d2h = gbps(row_ps(held_pair, "d2h"));
    EXPECT_NEAR(d2h, kStage / 2.0, 0.04 * kStage / 2.0);
    EXPECT_LT(d2h, 0.85 * kPort) << "the other direction's unused turns stay unused";
    ASSERT_GT(row_ps(held_pair, "h2d"), row_ps(held_pair, "d2h")) << "the reads, held by memory, end last";
    // While both run the two move what host memory gives: the reads get the rest of it.
    const double first = row_ps(held_pair, "d2h") * 1e-12;
    const double last = row_ps(held_pair, "h2d") * 1e-12;
    const double reads_while_both = (static_cast<double>(size) - (last - first) * kPort) / first;
    EXPECT_NEAR(reads_while_both + d2h, kMemory, 0.06 * kMemory);
}

// Two GPUs on two ports of one root complex, staging peer copies through host memory both ways:
// each GPU's writes queue on its own port's data path, so a copy's completion semaphore on one
// port can land before an earlier one's on the other. The root complex hands semaphores to the
// host in the order they land, not the order they arrived (this aborted on an invariant of an
// in-order queue with the H100 calibration's timing on the 2xH200 platform).
TEST(RootPort, SemaphoresFromTwoPortsLandInTheirOwnOrder) {
    const config::ModelParams p;
    const topology::Platform two = topology::parse_platform(
        "name: two-ports\nnodes:\n  - {name: cpu0, kind: cpu}\n"
        "  - {name: rc0, kind: root_complex, completion_size: 256B, port_bandwidth: 20GB/s, port_bandwidth_total: 30GB/s}\n"
        "  - {name: gpu0, kind: gpu}\n  - {name: gpu1, kind: gpu}\n"
        "links:\n  - {a: cpu0, b: rc0, kind: internal}\n  - {a: rc0, b: gpu0, generation: 5, lanes: 16}\n"
        "  - {a: rc0, b: gpu1, generation: 5, lanes: 16}\n",
        "two-ports.yaml", p);
    Simulator sim(two, p);
    config::StrategyOptions o;
    o.peer.access = "off";
    for (const std::uint64_t size : {std::uint64_t{1} * kMiB, 16 * kMiB}) {
        const CaseResult one = sim.run(p, CaseSpec{"peer", "h2d", size, o, {}, &two});
        const CaseResult both = sim.run(p, CaseSpec{"peer", "both", size, o, {}, &two});
        const double one_ps = row_ps(one, "peer=off");
        const double both_ps = row_ps(both, "peer=off");
        // Each way crosses both ports once (down one, up the other), so both ways share each
        // port's paths and take longer than one way, but less than two one-way copies in turn.
        EXPECT_GT(both_ps, one_ps) << size;
        EXPECT_LT(both_ps, 2.0 * one_ps) << size;
    }
}

// A copy out of the GPU makes its writes visible with a read behind them, which the root port
// answers in the order it took reads in: a small copy out of the GPU issued while a copy into it
// keeps its engine's window of reads queued ends about that window's time at the port's outward
// rate late, whatever the other copy's size beyond the window; issued within the other copy's
// last window, it ends as that copy's last completions leave, just before that copy ends, however
// late it starts. Measured on the lent hosts (results/h100-sxm/isolating/d2h-landing, tau): a
// 4 KiB copy out of the GPU 9-10 us late beside copies into it of 2 and 4 MiB, and in their last
// window ending 0.5-1.7 us before them; the 122 GB/s stage both directions share would give it
// less than half that wait, and end it well before the other copy.
TEST(RootPort, ACopyOutOfTheGpuEndsBehindTheReadsThePortTookInBeforeItsFlush) {
    const config::ModelParams p;
    topology::Platform platform = topology::load_platform("h100-sxm", p);
    const auto rc = platform.find("rc0");
    ASSERT_TRUE(rc.has_value());
    const double outward = platform.node(*rc).bridge.port_bandwidth.bytes_per_s;
    ASSERT_GT(outward, 0.0);
    const auto flow = [](const char* name, const char* dir, std::uint64_t size, std::int64_t start_ns) {
        config::FlowSpec f;
        f.name = name;
        f.direction = dir;
        f.size = size;
        f.start = core::Duration{start_ns * 1000};
        return f;
    };
    Simulator sim(platform, p);
    // Each flow's end from the first call: [0] the copy into the GPU, [1] the 4 KiB copy out of it.
    const auto ends_us = [&](std::uint64_t beside, std::int64_t tau_ns) {
        std::vector<config::FlowSpec> flows;
        if (beside > 0) flows.push_back(flow("in", "h2d", beside, 0));
        flows.push_back(flow("out", "d2h", 4096, tau_ns));
        const auto rows = sim.run_flows(p, flows, &platform).rows;
        std::vector<double> ends;
        for (std::size_t i = 0; i < rows.size(); ++i) {
            ends.push_back((static_cast<double>(flows[i].start.ps) + rows[i].time_ps) / 1e6);
        }
        return ends;
    };
    const double alone = ends_us(0, 0).back();
    const double window_us = static_cast<double>(p.dma.max_read_requests) * 4096.0 / outward * 1e6;
    for (const std::uint64_t mib : {2, 4, 16}) {
        EXPECT_NEAR(ends_us(mib * kMiB, 10000).back() - 10.0 - alone, window_us, 0.2 * window_us) << mib << " MiB beside";
    }
    // Within the last window of a 2 MiB copy (which ends about 45 us after its call), wherever it starts.
    for (const std::int64_t tau_ns : {30000, 33000, 36000}) {
        const std::vector<double> e = ends_us(2 * kMiB, tau_ns);
        EXPECT_GT(e[1] - static_cast<double>(tau_ns) / 1e3 - alone, 1.0) << tau_ns << " ns: it waits";
        EXPECT_NEAR(e[1], e[0], 1.0) << tau_ns << " ns: it ends with the copy into the GPU";
    }
}

}  // namespace
}  // namespace dmasim::sim
