// Two GPUs joined by NVLink, each on its own root port (the lent 2xH200 machine).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "dmasim/config/scenario.h"
#include "dmasim/core/results.h"
#include "dmasim/pcie/wire.h"
#include "dmasim/sim/host_runtime.h"
#include "dmasim/sim/simulator.h"
#include "dmasim/sim/trace.h"
#include "dmasim/strategies/programs.h"
#include "dmasim/topology/platform_file.h"

namespace dmasim::sim {
namespace {

constexpr std::uint64_t kMiB = 1 << 20;

Simulator& simulator() {
    static Simulator s(topology::load_platform("h200x2-nvlink", config::ModelParams{}), config::ModelParams{});
    return s;
}

const RowResult& row(const CaseResult& r, const std::string& variant) {
    for (const auto& x : r.rows) {
        if (x.variant == variant) return x;
    }
    throw std::runtime_error("no row " + variant);
}

CaseResult peer(const config::ModelParams& p, const std::string& dir, std::uint64_t bytes, const std::string& access) {
    config::StrategyOptions o;
    o.peer.access = access;
    return simulator().run(p, CaseSpec{"peer", dir, bytes, o, {}});
}

double gbps(double ps, std::uint64_t bytes, int dirs = 1) { return static_cast<double>(bytes) * dirs / (ps * 1e-12) * 1e-9; }

TEST(Peer, NvlinkCopyApproachesTheBondRate) {
    config::ModelParams p;
    const CaseResult r = peer(p, "h2d", 256 * kMiB, "on");
    const double payload = static_cast<double>(p.nvlink.max_payload.value);
    const double bound = static_cast<double>(p.nvlink.links) * p.nvlink.link_rate.gb_per_s() * payload /
                         (payload + static_cast<double>(p.nvlink.packet_overhead.value));
    const double got = gbps(row(r, "peer=on").time_ps, 256 * kMiB);
    EXPECT_LT(got, bound);
    EXPECT_GT(got, 0.95 * bound);
    // The data went over NVLink, not through the host.
    EXPECT_LT(r.host_memory_bytes, 1024U);
    // Half the links, half the rate.
    p.nvlink.links = 9;
    EXPECT_NEAR(gbps(row(peer(p, "h2d", 256 * kMiB, "on"), "peer=on").time_ps, 256 * kMiB) / got, 0.5, 0.03);
}

TEST(Peer, NvlinkCarriesFlitsAtTheQuotedRateBehindTwoHeaderFlits) {
    // NVIDIA quotes 900 GB/s for 18 NVLink-4 links, both directions: 25 GB/s per link and
    // direction. A write carries two 16-byte header flits: NCCL's maintainers give ~20 of 25 GB/s
    // for 128-byte writes, and copy engines write 256 bytes, so a copy gets 256/288 of 450 GB/s.
    config::ModelParams p;
    EXPECT_DOUBLE_EQ(static_cast<double>(p.nvlink.links) * p.nvlink.link_rate.gb_per_s() * 2, 900.0);
    const double ce = gbps(row(peer(p, "h2d", 256 * kMiB, "on"), "peer=on").time_ps, 256 * kMiB);
    EXPECT_NEAR(ce, 450.0 * 256 / 288, 0.02 * 400) << "measured on the 2xH200: 393 GB/s at 256 MiB";
    p.nvlink.max_payload = config::Bytes{128};
    const double sm_sized = gbps(row(peer(p, "h2d", 256 * kMiB, "on"), "peer=on").time_ps, 256 * kMiB);
    EXPECT_NEAR(sm_sized / 450.0, 0.8, 0.02) << "128-byte writes: 20 of every 25 GB/s";
}

// The GPU feeds the bond more slowly than its flits would go (nvlink.port_bandwidth): measured
// 390.9 GB/s a further MiB on two H100 and two H200 (isolating/peer-step), against 400 from the
// packet format. The port caps the payload; where the flits are slower (128-byte writes) they set
// the rate.
TEST(Peer, NvlinkPortCapsTheCopyBelowTheFlitRate) {
    config::ModelParams p;
    const double flits = gbps(row(peer(p, "h2d", 256 * kMiB, "on"), "peer=on").time_ps, 256 * kMiB);
    p.nvlink.port_bandwidth = config::Bandwidth{390.9e9};
    const double capped = gbps(row(peer(p, "h2d", 256 * kMiB, "on"), "peer=on").time_ps, 256 * kMiB);
    EXPECT_LT(capped, 390.9);
    EXPECT_GT(capped, 0.98 * 390.9);
    EXPECT_LT(capped, flits - 5.0);
    // A further 16 MiB costs what the port moves, not the flits.
    const double t16 = row(peer(p, "h2d", 16 * kMiB, "on"), "peer=on").time_ps;
    const double t32 = row(peer(p, "h2d", 32 * kMiB, "on"), "peer=on").time_ps;
    EXPECT_NEAR(gbps(t32 - t16, 16 * kMiB), 390.9, 1.0);
    // 128-byte writes get 360 GB/s of flits, below the port: the cap changes nothing there.
    p.nvlink.max_payload = config::Bytes{128};
    const double sm_capped = row(peer(p, "h2d", 64 * kMiB, "on"), "peer=on").time_ps;
    p.nvlink.port_bandwidth = config::Bandwidth{0};
    EXPECT_DOUBLE_EQ(row(peer(p, "h2d", 64 * kMiB, "on"), "peer=on").time_ps, sm_capped);
}

// The lent 2xH200's platform file carries the measured port rate on its bond.
TEST(Peer, TheLentMachinesBondHasItsMeasuredPortRate) {
    const topology::Platform plat = topology::load_platform("h200x2-nvlink", config::ModelParams{});
    int bonds = 0;
    for (auto [e, end] = boost::edges(plat.graph()); e != end; ++e) {
        const topology::LinkProps& l = plat.link(*e);
        if (l.kind != topology::LinkKind::kNvlink) continue;
        ++bonds;
        EXPECT_DOUBLE_EQ(l.nvlink.port_bandwidth.bytes_per_s, 390.9e9);
        EXPECT_EQ(l.nvlink.links, 18);
    }
    EXPECT_EQ(bonds, 1);
    // `topo show` names the port beside the bond's flit rate.
    const topology::Bottleneck b = topology::bottleneck(plat, plat.at("gpu0"), plat.at("gpu1"));
    EXPECT_NE(b.link.find("NVLink x18, GPU port 390.9GB/s"), std::string::npos) << b.link;
}

TEST(Peer, BothWaysUseBothDirectionsOfTheBond) {
    config::ModelParams p;
    const double one = row(peer(p, "h2d", 128 * kMiB, "on"), "peer=on").time_ps;
    const double both = row(peer(p, "both", 128 * kMiB, "on"), "peer=on").time_ps;
    EXPECT_NEAR(both / one, 1.0, 0.05);
}

TEST(Peer, StagedCopyCostsAboutTwoHostCopiesLessTheOverlap) {
    config::ModelParams p;
    const CaseResult off = peer(p, "h2d", 64 * kMiB, "off");
    const double staged = row(off, "peer=off").time_ps;
    const double d2h = simulator().run(p, "pinned", "d2h", 64 * kMiB).time_ps;
    const double h2d = simulator().run(p, "pinned", "h2d", 64 * kMiB).time_ps;
    // Every byte crosses host memory twice: written by GPU 0, read by GPU 1.
    EXPECT_GE(off.host_memory_bytes, 2 * 64 * kMiB);
    // Pieces pipeline over the two GPUs' own links: between one host copy and two.
    EXPECT_GT(staged, std::max(d2h, h2d));
    EXPECT_LT(staged, d2h + h2d);
    // With one buffer nothing overlaps: two host copies and two handoffs a piece.
    p.runtime.peer_staging_buffers = 1;
    const double serial = row(peer(p, "h2d", 64 * kMiB, "off"), "peer=off").time_ps;
    EXPECT_GT(serial, d2h + h2d);
    EXPECT_GT(serial, staged);
}

// The row is what dmaprobe's events see: from the start event, recorded just before the call,
// to the copy's end on the source's stream. No synchronisation is in it; the call is, at the
// CPU's time in cudaMemcpyPeerAsync between two GPUs (runtime.peer_gpu_call; runtime.peer_call
// is a copy's within one GPU), not the blocking copies' fitted call_overhead.
TEST(Peer, OneWayRowRunsFromTheCallToTheCopysEnd) {
    config::ModelParams p;
    const double base = row(peer(p, "h2d", kMiB, "on"), "peer=on").time_ps;
    config::ModelParams q = p;
    q.runtime.sync_latency = config::Duration{p.runtime.sync_latency.ps + 5'000'000};
    EXPECT_DOUBLE_EQ(row(peer(q, "h2d", kMiB, "on"), "peer=on").time_ps, base);
    q = p;
    q.runtime.call_overhead = config::Duration{p.runtime.call_overhead.ps + 5'000'000};
    EXPECT_DOUBLE_EQ(row(peer(q, "h2d", kMiB, "on"), "peer=on").time_ps, base);
    q = p;
    q.runtime.peer_call = config::Duration{p.runtime.peer_call.ps + 5'000'000};
    EXPECT_DOUBLE_EQ(row(peer(q, "h2d", kMiB, "on"), "peer=on").time_ps, base);
    q = p;
    q.runtime.peer_gpu_call = config::Duration{p.runtime.peer_gpu_call.ps + 5'000'000};
    EXPECT_NEAR(row(peer(q, "h2d", kMiB, "on"), "peer=on").time_ps - base, 5e6, 1e3);
    // Staged, the application's one call is a staged peer call (runtime.peer_staged_call), not
    // a plain one; the pieces the runtime queues as it goes cost the call more CPU time each
    // (runtime.peer_staged_piece_call) but keep ahead of the GPUs, so a one-way row does not see
    // them.
    const double staged = row(peer(p, "h2d", 4 * kMiB, "off"), "peer=off").time_ps;
    EXPECT_DOUBLE_EQ(row(peer(q, "h2d", 4 * kMiB, "off"), "peer=off").time_ps, staged);
    q = p;
    q.runtime.peer_staged_call = config::Duration{p.runtime.peer_staged_call.ps + 5'000'000};
    EXPECT_NEAR(row(peer(q, "h2d", 4 * kMiB, "off"), "peer=off").time_ps - staged, 5e6, 1e3);
    q = p;
    q.runtime.peer_staged_piece_call = config::Duration{p.runtime.peer_staged_piece_call.ps + 1'000'000};
    EXPECT_NEAR(row(peer(q, "h2d", 4 * kMiB, "off"), "peer=off").time_ps, staged, 1e3);
}

// dmaprobe's peer rows run from a start event recorded on the source's idle stream, which the GPU
// stamps runtime.record_stamp after the record's call returns: the row holds the copy's call less
// that, and the copy's whole launch (isolating/event-stamp: an ungated peer copy's interval follows
// its call's CPU time only a little). A later stamp shortens the row by as much; a longer launch
// lengthens it by as much, staged too (the source's piece pays it, the destination's once more).
TEST(Peer, TheRowStartsAtTheStartEventsStamp) {
    config::ModelParams p;
    const auto on = [](const config::ModelParams& q) { return row(peer(q, "h2d", kMiB, "on"), "peer=on").time_ps; };
    const auto off = [](const config::ModelParams& q) { return row(peer(q, "h2d", 64 * 1024, "off"), "peer=off").time_ps; };
    const double base_on = on(p);
    const double base_off = off(p);
    config::ModelParams stamp = p;
    stamp.runtime.record_stamp = config::Duration{p.runtime.record_stamp.ps + 500'000};
    EXPECT_NEAR(on(stamp) - base_on, -0.5e6, 1e3);
    EXPECT_NEAR(off(stamp) - base_off, -0.5e6, 1e3);
    config::ModelParams launch = p;
    launch.dma.launch_latency = config::Duration{p.dma.launch_latency.ps + 2'000'000};
    EXPECT_NEAR(on(launch) - base_on, 2e6, 1e3);
    EXPECT_NEAR(off(launch) - base_off, 4e6, 1e3);
}

// Both ways, dmaprobe makes the other way's call first: the source's own call starts once that
// one has returned, which, staged, is after it queued every piece. So a copy of N pieces holds
// the second way back by (N - 2) piece calls (measured: the call takes 7.9-8.3 us at 1 MiB and
// 79.9-90.6 us at 16 MiB, results/h200x2-nvlink/isolating/cross-device-wait).
TEST(Peer, BothWaysStagedTheSecondCallWaitsForTheFirstsPieces) {
    config::ModelParams p;
    // The calls alone: no acquire, whose count moves with the two ways' phase, and no polls for
    // the source's wait on the other way (CrossDeviceWait tests those). On the platform as its
    // file describes it (root ports, their ways to memory), as the shipped rows run.
    p.runtime.cross_device_acquire = config::Duration{0};
    p.runtime.poll_period = config::Duration{0};
    static const topology::Platform platform = topology::load_platform("h200x2-nvlink", config::ModelParams{});
    const auto both = [](const config::ModelParams& q, std::uint64_t bytes) {
        config::StrategyOptions o;
        o.peer.access = "off";
        return row(simulator().run(q, CaseSpec{"peer", "both", bytes, o, {}, &platform}), "peer=off").time_ps;
    };
    const std::uint64_t bytes = 8 * kMiB;
    const double pieces = static_cast<double>(bytes / p.runtime.peer_staging_piece.value);
    const double base = both(p, bytes);
    config::ModelParams q = p;
    // Piece calls still quicker than the GPUs move pieces (about 14 us each), so that the calls
    // hold back the source's way and not its own pieces.
    const double delta = 5e6;
    q.runtime.peer_staged_piece_call = config::Duration{p.runtime.peer_staged_piece_call.ps + 5'000'000};
    // The source's way starts (N - 2) * delta later; it ends the row, sooner than that much
    // later, as it then overlaps the other way less and shares less with it.
    const double later = both(q, bytes) - base;
    EXPECT_LT(later, (pieces - 2) * delta + 1e3);
    EXPECT_GT(later, 0.25 * (pieces - 2) * delta);
    // Two pieces or fewer: the call costs the same whatever the piece call.
    EXPECT_DOUBLE_EQ(both(q, kMiB), both(p, kMiB));
}

// Both ways, as dmaprobe issues them: the other GPU's stream waits for the start event on the
// source's, and the source's stream for an event behind the other GPU's copy. Those are the
// application's waits, tried at the polls of their calls (CrossDeviceWait), not the runtime's own
// handoffs of a staged copy (runtime.cross_device_wait): the row follows a try's length.
TEST(Peer, BothWaysTheApplicationsWaitsPassATryAfterTheirEvent) {
    config::ModelParams p;
    const auto both = [](const config::ModelParams& q) { return row(peer(q, "both", 16 * kMiB, "on"), "peer=on").time_ps; };
    const double base = both(p);
    config::ModelParams q = p;
    q.runtime.cross_device_wait = config::Duration{p.runtime.cross_device_wait.ps + 10'000'000};
    EXPECT_DOUBLE_EQ(both(q), base);
    // A longer try: the source's wait passes that much later, and the other GPU's copy, behind
    // its own wait for the start event, ends up to that much later, which the source's tries
    // see at the same try or at the next.
    q = p;
    q.runtime.cross_device_try = config::Duration{p.runtime.cross_device_try.ps + 1'000'000};
    EXPECT_GE(both(q) - base, 1e6 - 1e3);
    EXPECT_LE(both(q) - base, 2e6 + 1e3);
    // The row is the mean over the phases of the source's tries: a poll period at most apart.
    const RowResult r = row(peer(p, "both", 16 * kMiB, "on"), "peer=on");
    ASSERT_GT(r.max_ps, r.min_ps);
    EXPECT_LE(r.max_ps - r.min_ps, static_cast<double>(p.runtime.poll_period.ps) + 1.0);
    EXPECT_NE(r.note.find("phases of the wait for the other GPU's copy"), std::string::npos) << r.note;
}

// A staged copy hands every piece from one GPU to the other and each buffer back, two
// cross-device waits a piece; with B buffers a long copy pays them once every B pieces. A copy
// of one piece pays both in full.
TEST(Peer, StagedPiecesPayTwoHandoffsPerBufferRound) {
    config::ModelParams p;
    // Waits long enough that the buffers' round, not a copy engine, paces a long copy (at the
    // measured wait, runtime.cross_device_wait, the engines do).
    p.runtime.cross_device_wait = config::Duration{20'000'000};
    // The handoffs alone: no acquire where an engine is still busy when a piece is handed over.
    p.runtime.cross_device_acquire = config::Duration{0};
    const std::uint64_t piece = p.runtime.peer_staging_piece.value;
    const double pieces = static_cast<double>(128 * kMiB / piece);
    const auto staged = [&](const config::ModelParams& q, std::uint64_t bytes) {
        return row(peer(q, "h2d", bytes, "off"), "peer=off").time_ps;
    };
    const double small = staged(p, 64 * 1024);
    const double large = staged(p, 128 * kMiB);
    config::ModelParams q = p;
    const double delta = 2e6;
    q.runtime.cross_device_wait = config::Duration{p.runtime.cross_device_wait.ps + 2'000'000};
    // One piece: out of the source, the handoff, into the destination, the source learning of it.
    EXPECT_NEAR(staged(q, 64 * 1024) - small, 2 * delta, 1e3);
    const double per_round = 2 * delta * pieces / static_cast<double>(p.runtime.peer_staging_buffers);
    EXPECT_NEAR(staged(q, 128 * kMiB) - large, per_round, 0.05 * per_round);
}

// A copy that depends on the other GPU's work and finds it done when its engine gets to it still
// acquires that GPU's semaphore first (runtime.cross_device_acquire): measured, host-to-device
// pieces of 512 KiB that each depend on the other GPU's piece, done long before, take 13.74 us
// where back to back they take 12.11 (results/h200x2-nvlink/isolating/cross-device-wait,
// pipeline.cu). Here a copy into GPU 1 follows, on its stream, a copy out of GPU 0; GPU 1's
// engine is busy with a long copy when it is handed over, or idle.
TEST(Peer, ACopyAfterTheOtherGpusWorkAcquiresItsSemaphoreWhenItsEngineGetsToIt) {
    // The follower's end: the acquire delays its launch, once its engine has taken it.
    const auto end_of_follower = [](const config::ModelParams& q, bool engine_busy) {
        Program prog;
        Op first = strategies::copy_op(CopyDirection::kDeviceToHost, 64 * 1024, 1, false);
        first.gpu = 0;
        Op follower = strategies::copy_op(CopyDirection::kHostToDevice, 64 * 1024, 1, false);
        follower.gpu = 1;
        if (engine_busy) {
            Op busy = strategies::copy_op(CopyDirection::kHostToDevice, 16 * kMiB, 2, false);
            busy.gpu = 1;
            prog.ops.push_back(busy);
        }
        prog.ops.push_back(first);
        prog.ops.push_back(follower);
        prog.ops.push_back(strategies::simple_op(Op::Kind::kSynchronize));
        const ProgramOutcome o = simulator().execute(q, prog);
        const std::size_t f = engine_busy ? 2 : 1;
        return o.timings[f].end_ps;
    };
    config::ModelParams p;
    config::ModelParams q = p;
    q.runtime.cross_device_acquire = config::Duration{p.runtime.cross_device_acquire.ps + 1'000'000};
    EXPECT_NEAR(end_of_follower(q, true) - end_of_follower(p, true), 1e6, 1e3);
    EXPECT_NEAR(end_of_follower(q, false), end_of_follower(p, false), 1e3);
}

// The runtime's own waits inside a staged copy (the source's stream learning that the last piece
// arrived) on the other GPU's work: reached after that work is done, one ends one acquire after it
// is reached; reached before, one cross-device wait after the work.
TEST(Peer, TheRuntimesOwnWaitOnTheOtherGpusFinishedWorkCostsAnAcquire) {
    config::ModelParams p;
    const auto kernel = [](double us, int stream, int gpu) {
        Op k = strategies::kernel_op(core::Duration{static_cast<std::int64_t>(us * 1e6)}, stream);
        k.gpu = gpu;
        return k;
    };
    const auto gap = [&](double hold_us) {
        Program prog;
        Op w = strategies::simple_op(Op::Kind::kWaitFor);
        w.after = 0;   // GPU 0's short kernel
        w.stream = 1;  // behind GPU 1's kernel of hold_us
        w.gpu = 1;
        w.queued_by_runtime = true;
        prog.ops = {kernel(2.0, 0, 0), kernel(hold_us, 1, 1), w, strategies::simple_op(Op::Kind::kSynchronize)};
        const ProgramOutcome o = simulator().execute(p, prog);
        return std::make_pair(o.timings[2].end_ps - o.timings[1].end_ps, o.timings[2].end_ps - o.timings[0].end_ps);
    };
    // Long after GPU 0's kernel: the wait, reached a stream step after GPU 1's kernel, takes the acquire.
    EXPECT_NEAR(gap(200.0).first,
                static_cast<double>(p.runtime.stream_wait_latency.ps + p.runtime.cross_device_acquire.ps), 1e3);
    // Reached at once: the handoff across GPUs.
    EXPECT_NEAR(gap(0.0).second, static_cast<double>(p.runtime.cross_device_wait.ps), 1e3);
}


}  // namespace
}  // namespace dmasim::sim

namespace dmasim::sim {
namespace {

// Issue 15: peer access enabled from the source to the destination only. One way the copy is a
// peer copy as before; both ways the destination's copy into the source has no peer access and
// is staged through host memory, so the row follows that staged copy.
TEST(Peer, AccessEnabledOneWayStagesTheOtherWaysCopy) {
    const config::ModelParams p;
    const auto run = [&](const std::string& dir, const std::string& access, const std::string& enable) {
        config::StrategyOptions o;
        o.peer.access = access;
        o.peer.enable = enable;
        return simulator().run(p, CaseSpec{"peer", dir, 16 * kMiB, o, {}});
    };
    const double one_way_alone = run("h2d", "on", "one_way").time_ps;
    EXPECT_DOUBLE_EQ(one_way_alone, run("h2d", "on", "both_ways").time_ps);
    const CaseResult both_on = run("both", "on", "both_ways");
    const CaseResult half = run("both", "on", "one_way");
    const double staged_alone = run("h2d", "off", "both_ways").time_ps;
    const double staged_both = run("both", "off", "both_ways").time_ps;
    EXPECT_GT(half.time_ps, 3.0 * both_on.time_ps);  // NVLink's copy is several times the staged one
    EXPECT_GT(half.time_ps, 0.95 * staged_alone);    // the staged copy sets the row...
    EXPECT_LT(half.time_ps, staged_both);            // ...without the other staged copy beside it
    EXPECT_NE(half.rows.front().note.find("peer access enabled one way"), std::string::npos) << half.rows.front().note;
}


// The host's two call states (results/h200x2-nvlink/isolating/copy-levels, lease_states.py): the
// staged both-ways row at 256 MiB holds one staged call of 512 pieces, so its main-plan leases fall
// in two groups (split at the row's widest gap), and the leases of the quicker group are exactly
// those whose blocking 64 KiB copies are quickest. The model with the calibration's values (runtime.peer_staged_piece_call the slow
// level of the staged calls' CPU times) has to land in the slow group, the larger one; given the
// fast level of those same calls, in the fast group.
namespace lease_states {

// A main-plan row's key, as lease_states.py has it.
std::string key_of(const core::ResultRow& r) {
    return r.scenario + "," + r.direction + "," + std::to_string(r.size_bytes) + "," + r.variant;
}

// Each committed flushed 2xH200 lease's rows that measured fine (training and held-out leases),
// by key, read as dmasim compare reads them.
std::vector<std::map<std::string, double>> main_plan_leases() {
    const std::filesystem::path results = std::filesystem::path(DMASIM_SOURCE_DIR) / "results/h200x2-nvlink";
    std::vector<std::map<std::string, double>> out;
    for (const char* dir : {"measured", "measured-held-out"}) {
        EXPECT_TRUE(std::filesystem::is_directory(results / dir)) << results / dir;
        if (!std::filesystem::is_directory(results / dir)) continue;
        for (const auto& lease : std::filesystem::directory_iterator(results / dir)) {
            std::ifstream in(lease.path() / "measured.csv");
            EXPECT_TRUE(in) << lease.path();
            std::map<std::string, double> rows;
            for (const core::ResultRow& r : core::read_results_csv(in, (lease.path() / "measured.csv").string())) {
                if (r.status == "ok") rows[key_of(r)] = r.time_us;
            }
            out.push_back(std::move(rows));
        }
    }
    return out;
}

// An isolating case's CSV (plain fields, no quoting) as maps from its header's names.
std::vector<std::map<std::string, std::string>> read_csv(const std::filesystem::path& path) {
    const auto split = [](const std::string& line) {
        std::vector<std::string> f;
        std::stringstream ss(line);
        for (std::string x; std::getline(ss, x, ',');) f.push_back(x);
        return f;
    };
    std::vector<std::map<std::string, std::string>> out;
    std::ifstream in(path);
    EXPECT_TRUE(in) << path;
    std::string line;
    if (!std::getline(in, line)) return out;
    const std::vector<std::string> head = split(line);
    while (std::getline(in, line)) {
        const std::vector<std::string> f = split(line);
        EXPECT_EQ(f.size(), head.size()) << path << ": " << line;
        if (f.size() != head.size()) continue;
        std::map<std::string, std::string> r;
        for (std::size_t i = 0; i < f.size(); ++i) r[head[i]] = f[i];
        out.push_back(std::move(r));
    }
    return out;
}

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    const std::size_t n = v.size();
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

// The threshold between two groups of values with the least sum of squares about their means.
double split_in_two(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    const auto ss = [&v](std::size_t from, std::size_t to) {
        double m = 0.0;
        for (std::size_t i = from; i < to; ++i) m += v[i];
        m /= static_cast<double>(to - from);
        double s = 0.0;
        for (std::size_t i = from; i < to; ++i) s += (v[i] - m) * (v[i] - m);
        return s;
    };
    std::size_t best = 1;
    double best_ss = -1.0;
    for (std::size_t k = 1; k + 2 < v.size(); ++k) {
        const double s = ss(0, k + 1) + ss(k + 1, v.size());
        if (best_ss < 0.0 || s < best_ss) best = k, best_ss = s;
    }
    return 0.5 * (v[best] + v[best + 1]);
}

// The threshold halfway across the widest gap between consecutive sorted values, the outer tenth at
// each end left out, so that a few values far out on one side do not move it.
double split_at_gap(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    const std::size_t k = v.size() / 10;
    std::size_t best = k;
    for (std::size_t i = k; i + 1 < v.size() - k; ++i) {
        if (v[i + 1] - v[i] > v[best + 1] - v[best]) best = i;
    }
    return 0.5 * (v[best] + v[best + 1]);
}

}  // namespace lease_states

TEST(Peer, TheStagedBothWaysRowOfTheMainPlanFollowsTheHostsCallState) {
    namespace ls = lease_states;
    const std::filesystem::path results = std::filesystem::path(DMASIM_SOURCE_DIR) / "results/h200x2-nvlink";
    const std::string staged_key = "peer,both,268435456,peer=off";
    std::vector<double> staged, calls;
    for (auto& row : ls::main_plan_leases()) {
        ASSERT_TRUE(row.count(staged_key) && row.count("pinned,h2d,65536,") && row.count("pinned,d2h,65536,"));
        staged.push_back(row[staged_key]);
        calls.push_back(row["pinned,h2d,65536,"] + row["pinned,d2h,65536,"]);
    }
    ASSERT_GE(staged.size(), 20U);
    const double cut = ls::split_at_gap(staged);
    std::vector<double> fast, slow, fast_calls, slow_calls;
    for (std::size_t i = 0; i < staged.size(); ++i) {
        (staged[i] < cut ? fast : slow).push_back(staged[i]);
        (staged[i] < cut ? fast_calls : slow_calls).push_back(calls[i]);
    }
    // The groups are the host's: every fast lease's blocking copies quicker than every slow one's.
    EXPECT_LT(*std::max_element(fast_calls.begin(), fast_calls.end()), *std::min_element(slow_calls.begin(), slow_calls.end()));
    EXPECT_GT(slow.size(), staged.size() / 2) << "the median lease is a slow one";

    const config::ModelParams q = config::parse_scenarios("strategy: peer\nsizes: 256MiB\ndirection: both\nplatform: h200x2-nvlink\n",
                                                          "staged.yaml", {}, config::CalibrationChoice::platform())
                                      .at(0)
                                      .params.without_spread();
    // The pieces the runtime stages a copy in, and the call's time for its first two, as the model has them.
    const std::uint64_t piece_bytes = q.runtime.peer_staging_piece.value;
    const double first_two_us = static_cast<double>(q.runtime.peer_staged_call.ps) * 1e-6;
    // The staged calls' CPU time a piece past the second (../staged-both, two H200): two levels.
    std::vector<double> per_piece;
    const std::filesystem::path runs = results / "isolating/staged-both/leases";
    for (const auto& lease : std::filesystem::directory_iterator(runs)) {
        if (lease.path().filename().string().rfind("h200x2-", 0) != 0) continue;
        for (const auto& file : std::filesystem::directory_iterator(lease.path())) {
            if (file.path().filename().string().rfind("stagedboth", 0) != 0) continue;
            for (const auto& r : ls::read_csv(file.path())) {
                const std::uint64_t bytes = std::stoull(r.at("bytes"));
                if (bytes < 16 * kMiB) continue;
                const double pieces = static_cast<double>(bytes / piece_bytes);
                for (const char* col : {"call0_us", "call1_us"}) {
                    const double call = std::stod(r.at(col));
                    if (call > 0.0) per_piece.push_back((call - first_two_us) / (pieces - 2.0));
                }
            }
        }
    }
    ASSERT_GE(per_piece.size(), 100U);
    const double level_cut = ls::split_in_two(per_piece);
    std::vector<double> lo, hi;
    for (const double v : per_piece) (v < level_cut ? lo : hi).push_back(v);
    const double fast_level_us = ls::median(lo), slow_level_us = ls::median(hi);
    // The levels' difference is the main plan's groups' difference, a piece at a time.
    const double row_pieces = static_cast<double>(256 * kMiB / piece_bytes);
    EXPECT_NEAR((ls::median(slow) - ls::median(fast)) / (row_pieces - 2.0), slow_level_us - fast_level_us, 0.15);

    EXPECT_NEAR(q.runtime.peer_staged_piece_call.ps * 1e-6, slow_level_us, 0.05);
    static const topology::Platform platform = topology::load_platform("h200x2-nvlink", q);
    const auto model_us = [&](const config::ModelParams& m) {
        config::StrategyOptions o;
        o.peer.access = "off";
        return row(simulator().run(m, CaseSpec{"peer", "both", 256 * kMiB, o, {}, &platform}), "peer=off").time_ps * 1e-6;
    };
    const double as_shipped = model_us(q);
    EXPECT_GE(as_shipped, *std::min_element(slow.begin(), slow.end()));
    EXPECT_LE(as_shipped, *std::max_element(slow.begin(), slow.end()));
    EXPECT_NEAR(as_shipped / ls::median(slow), 1.0, 0.03);
    config::ModelParams f = q;
    f.runtime.peer_staged_piece_call = config::Duration{static_cast<std::int64_t>(fast_level_us * 1e6)};
    const double fast_host = model_us(f);
    EXPECT_GE(fast_host, *std::min_element(fast.begin(), fast.end()) * 0.99);
    EXPECT_LE(fast_host, *std::max_element(fast.begin(), fast.end()));
    if (std::getenv("DMASIM_VERBOSE")) {
        std::printf("leases: %zu fast (median %.0f us), %zu slow (median %.0f us); piece levels %.3f / %.3f us; model %.0f (slow), %.0f (fast)\n",
                    fast.size(), ls::median(fast), slow.size(), ls::median(slow), fast_level_us, slow_level_us, as_shipped, fast_host);
    }
}

// A staged copy's first piece entering its destination GPU holds other copies starting there by
// runtime.staged_entry_hold (results/h200x2-nvlink/isolating/staged-loss: a probe on an idle
// stream of that GPU, issued 18-30 us after the staged copy, starts 5.3-5.4 us late; before the
// piece has left the source, or once it is in, not). Here: a staged copy of two pieces, GPU 1 to
// GPU 0, then the CPU's delay D, then a 4 KiB copy out of GPU 0 (or GPU 1) on a stream of its own.
TEST(Peer, ACopyStartsLateWhileAnotherStagedCopysFirstPieceEntersItsGpu) {
    config::ModelParams p;
    const std::uint64_t piece = p.runtime.peer_staging_piece.value;
    struct Run {
        double probe_start, probe_held, probe_end, down_end, up_end, staged_end;
    };
    // probe_gpu < 0: no probe.
    const auto run = [&](const config::ModelParams& q, double delay_us, int probe_gpu) {
        Program prog;
        for (std::uint64_t k = 0; k < 2; ++k) {
            Op down = strategies::copy_op(CopyDirection::kDeviceToHost, piece, 2 + static_cast<int>(k), false);
            down.gpu = 1;
            down.queued_by_runtime = k > 0;
            down.peer_call = k == 0;
            down.staged_peer = k == 0;
            down.staged_way = 0;
            Op up = strategies::copy_op(CopyDirection::kHostToDevice, piece, 2 + static_cast<int>(k), false);
            up.gpu = 0;
            up.queued_by_runtime = true;
            up.staged_way = 0;
            prog.ops.push_back(down);
            prog.ops.push_back(up);
        }
        prog.ops.push_back(strategies::simple_op(Op::Kind::kCpuWork, core::Duration{static_cast<std::int64_t>(delay_us * 1e6)}));
        const std::size_t pi = prog.ops.size();
        if (probe_gpu >= 0) {
            Op probe = strategies::copy_op(CopyDirection::kDeviceToHost, 4096, 6, false);
            probe.gpu = probe_gpu;
            prog.ops.push_back(probe);
        }
        prog.ops.push_back(strategies::simple_op(Op::Kind::kSynchronize));
        const ProgramOutcome o = simulator().execute(q, prog);
        const OpTiming none{};
        const OpTiming& t = probe_gpu >= 0 ? o.timings[pi] : none;
        return Run{t.start_ps, t.entry_held_ps, t.end_ps, o.timings[0].end_ps, o.timings[1].end_ps, o.timings[3].end_ps};
    };
    config::ModelParams none = p;
    none.runtime.staged_entry_hold = config::Duration{0};
    const double hold = static_cast<double>(p.runtime.staged_entry_hold.ps);
    ASSERT_GT(hold, 0.0);
    // The staged copy's own pieces are not held.
    EXPECT_DOUBLE_EQ(run(p, 0.0, -1).staged_end, run(none, 0.0, -1).staged_end);
    int inside = 0, outside = 0;
    for (double d = 0.0; d <= 60.0; d += 2.0) {
        const Run a = run(none, d, 0), b = run(p, d, 0);
        EXPECT_DOUBLE_EQ(a.probe_held, 0.0);
        EXPECT_DOUBLE_EQ(a.probe_start, b.probe_start) << "D " << d << " us";
        // Held while the first piece is between leaving GPU 1 and being in GPU 0, not before or after.
        const bool entering = a.probe_start > a.down_end && a.probe_start < a.up_end;
        (entering ? inside : outside) += 1;
        EXPECT_DOUBLE_EQ(b.probe_held, entering ? hold : 0.0) << "D " << d << " us";
        if (entering) {
            EXPECT_GE(b.probe_end, a.probe_end) << "D " << d << " us";
        } else {
            EXPECT_DOUBLE_EQ(b.probe_end, a.probe_end) << "D " << d << " us";
        }
        // On the GPU the piece leaves, nothing.
        EXPECT_DOUBLE_EQ(run(p, d, 1).probe_held, 0.0) << "D " << d << " us";
    }
    EXPECT_GE(inside, 5);
    EXPECT_GE(outside, 10);
}

// dmaprobe's staged row both ways at 1 MiB (peer access off; the other way's call first, its
// first piece entering the source's GPU as the source's own pieces start there) against the
// main plan's flushed 2xH200 leases (31): within 3 % of their median with the hold, and not
// without it.
TEST(Peer, TheStagedRowBothWaysAtOneMiBFallsOnTheMainPlansLeases) {
    const config::ModelParams q = config::parse_scenarios("strategy: peer\nsizes: 1MiB\ndirection: both\nplatform: h200x2-nvlink\n",
                                                          "staged.yaml", {}, config::CalibrationChoice::platform())
                                      .at(0)
                                      .params.without_spread();
    std::vector<double> leases;
    for (const auto& row : lease_states::main_plan_leases()) {
        if (const auto it = row.find("peer,both,1048576,peer=off"); it != row.end()) leases.push_back(it->second);
    }
    ASSERT_GE(leases.size(), 20U);
    const double measured = lease_states::median(leases);
    static const topology::Platform platform = topology::load_platform("h200x2-nvlink", q);
    const auto model_us = [&](const config::ModelParams& m) {
        config::StrategyOptions o;
        o.peer.access = "off";
        return row(simulator().run(m, CaseSpec{"peer", "both", kMiB, o, {}, &platform}), "peer=off").time_ps * 1e-6;
    };
    EXPECT_NEAR(model_us(q) / measured, 1.0, 0.03) << "median of " << leases.size() << " leases " << measured << " us";
    config::ModelParams none = q;
    none.runtime.staged_entry_hold = config::Duration{0};
    EXPECT_LT(model_us(none) / measured, 0.97);
}

// dmaprobe's staged row both ways at 1 MiB is in one of two groups by the host's call state, which
// GPU 1's staged call (the other way's, made first) shows: 77.5-79.6 us with calls of 5.5-6.0 us,
// 84.3-86.8 with 7.8-9.1 (results/h200x2-nvlink/isolating/staged-both, `both` at 1 MiB, runs whose
// call was steady; ../copy-levels). The model, given each run's call (which lengthens both of its
// staged calls), puts the row in its group and within 6.5 % of it: 4.4-6.0 % low in both states
// (within 6 % until dma.queued_launch_latency was re-derived, 0.83 -> 0.77 us, once a timed
// record's cost was modelled: 0.06 us less on these rows, one queued launch; why the row is low is
// not known). Its
// rows rise with the call, about 2 us a us, where the hardware's step 7 us between the states and
// rise 1-2 us over 4 us of the CPU's delay within one (`bothlate`): what the test holds is where the
// rows fall, not why. (Until 2026-11-30 the model held a piece's release behind the other way's
// reads and stepped 5-10 us at calls of 6.5-7.0 us, a step the hardware does not take.)
TEST(Peer, TheStagedRowBothWaysAtOneMiBFollowsTheOtherWaysCall) {
    const config::ModelParams q = config::parse_scenarios("strategy: peer\nsizes: 1MiB\ndirection: both\nplatform: h200x2-nvlink\n",
                                                          "staged.yaml", {}, config::CalibrationChoice::platform())
                                      .at(0)
                                      .params.without_spread();
    static const topology::Platform platform = topology::load_platform("h200x2-nvlink", q);
    const auto model_us = [&](double call_us) {
        config::ModelParams m = q;
        m.runtime.peer_staged_call = config::Duration{static_cast<std::int64_t>(std::llround(call_us * 1e6))};
        config::StrategyOptions o;
        o.peer.access = "off";
        return row(simulator().run(m, CaseSpec{"peer", "both", kMiB, o, {}, &platform}), "peer=off").time_ps * 1e-6;
    };
    struct Run {
        double call_us, row_us;
    };
    std::vector<Run> runs;
    const std::filesystem::path leases =
        std::filesystem::path(DMASIM_SOURCE_DIR) / "results/h200x2-nvlink/isolating/staged-both/leases";
    for (const auto& lease : std::filesystem::directory_iterator(leases)) {
        if (lease.path().filename().string().rfind("h200x2-", 0) != 0) continue;
        for (const auto& file : std::filesystem::directory_iterator(lease.path())) {
            const std::string name = file.path().filename().string();
            // Runs' medians, not their repetitions (stagedboth-NAME-reps.csv).
            if (name.rfind("stagedboth", 0) != 0 || name.find("-reps") != std::string::npos) continue;
            for (const auto& r : lease_states::read_csv(file.path())) {
                if (r.at("case") != "both" || std::stoull(r.at("bytes")) != kMiB) continue;
                // A run whose call wandered between the host's states (p10 to p90 over 2 us) has no one call.
                if (r.count("call1_p10_us") && std::stod(r.at("call1_p90_us")) - std::stod(r.at("call1_p10_us")) > 2.0) continue;
                runs.push_back({std::stod(r.at("call1_us")), std::stod(r.at("row_us"))});
            }
        }
    }
    ASSERT_GE(runs.size(), 4U);
    std::sort(runs.begin(), runs.end(), [](const Run& a, const Run& b) { return a.call_us < b.call_us; });
    // The host's two states: split at the widest gap between the calls.
    std::size_t split = 1;
    for (std::size_t i = 1; i < runs.size(); ++i) {
        if (runs[i].call_us - runs[i - 1].call_us > runs[split].call_us - runs[split - 1].call_us) split = i;
    }
    ASSERT_GT(runs[split].call_us - runs[split - 1].call_us, 1.0) << "no gap between the calls' states";
    double fast_measured = 0.0, slow_measured = 1e9, fast_model = 0.0, slow_model = 1e9;
    for (std::size_t i = 0; i < runs.size(); ++i) {
        const double m = model_us(runs[i].call_us);
        EXPECT_NEAR(m / runs[i].row_us, 1.0, 0.065) << "call " << runs[i].call_us << " us: measured " << runs[i].row_us << " us";
        if (i < split) {
            fast_measured = std::max(fast_measured, runs[i].row_us);
            fast_model = std::max(fast_model, m);
        } else {
            slow_measured = std::min(slow_measured, runs[i].row_us);
            slow_model = std::min(slow_model, m);
        }
    }
    ASSERT_GT(slow_measured - fast_measured, 3.0);
    EXPECT_GT(slow_model - fast_model, 0.5 * (slow_measured - fast_measured)) << "the model's rows are not in two groups";
}

// A copy that another staged peer copy's first piece held back (runtime.staged_entry_hold) shows
// the hold inside its span on its stream in a timeline: dmaprobe's staged row both ways at 1 MiB
// has one.
TEST(Peer, ATimelineShowsTheCopyAStagedCopysFirstPieceHeld) {
    const config::ModelParams p;
    Tracer tracer(10e6);
    Tracer::set_active(&tracer);
    config::StrategyOptions o;
    o.peer.access = "off";
    static_cast<void>(simulator().run(p, CaseSpec{"peer", "both", kMiB, o, "staged"}));
    Tracer::set_active(nullptr);
    const std::string json = tracer.json();
    const std::regex held("\"name\": \"held: a staged copy's first piece entering\", \"pid\": \\d+, \"tid\": \\d+, \"ts\": [0-9.]+, \"dur\": ([0-9.]+)");
    std::smatch m;
    ASSERT_TRUE(std::regex_search(json, m, held));
    EXPECT_NEAR(std::stod(m[1]), static_cast<double>(p.runtime.staged_entry_hold.ps) * 1e-6, 1e-3);
}

}  // namespace
}  // namespace dmasim::sim
