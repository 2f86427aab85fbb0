// A cudaStreamWaitEvent on another GPU's event, and the CPU's time in the calls around it.
// Measured on two 2xH200 leases (results/h200x2-nvlink/isolating/peer-phase): with the CPU held
// D us before the wait's call, dmaprobe's both-ways row grows one for one with D and drops by a
// poll period where a try of the wait, counted from its call, first finds the other GPU's copy
// done; behind a copy of its own stream the wait passes a step after that copy when a try found
// the event while the copy ran, else at the next try.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "dmasim/config/scenario.h"

#include "dmasim/sim/host_runtime.h"
#include "dmasim/sim/simulator.h"
#include "dmasim/strategies/programs.h"
#include "dmasim/topology/platform_file.h"

namespace dmasim::sim {
namespace {

constexpr std::uint64_t kMiB = 1 << 20;

Simulator& simulator() {
    static Simulator s(topology::load_platform("h200x2-nvlink", config::ModelParams{}), config::ModelParams{});
    return s;
}

double ps_of(const config::Duration& d) { return static_cast<double>(d.ps); }

// dmaprobe's both-ways sequence with the CPU held `hold_us` before the source's (GPU 0's) copy:
// the start event on GPU 0; GPU 1's stream waits for it, runs `gpu1_us` of work (a kernel, so
// that its end does not depend on the other GPU's traffic) and records an event; GPU 0 then
// copies `own_bytes` out of the GPU (none: no copy), waits for GPU 1's event and records the stop.
struct Pair {
    Program prog;
    std::size_t other_done = 0, wait = 0, stop = 0, own = 0;
};

Pair pair_program(double gpu1_us, double hold_us, std::uint64_t own_bytes) {
    Pair p;
    auto& ops = p.prog.ops;
    const auto on = [&ops](Op op, int stream, int gpu) {
        op.stream = stream;
        op.gpu = gpu;
        ops.push_back(op);
        return ops.size() - 1;
    };
    on(strategies::simple_op(Op::Kind::kRecord), 0, 0);
    Op w1 = strategies::simple_op(Op::Kind::kWaitFor);
    w1.after = 0;
    on(w1, 1, 1);
    on(strategies::kernel_op(core::Duration{static_cast<std::int64_t>(gpu1_us * 1e6)}, 1), 1, 1);
    p.other_done = on(strategies::simple_op(Op::Kind::kRecord), 1, 1);
    if (hold_us > 0.0) ops.push_back(strategies::simple_op(Op::Kind::kCpuWork, core::Duration{static_cast<std::int64_t>(hold_us * 1e6)}));
    if (own_bytes > 0) p.own = on(strategies::copy_op(CopyDirection::kDeviceToHost, own_bytes, 0, false), 0, 0);
    Op w0 = strategies::simple_op(Op::Kind::kWaitFor);
    w0.after = p.other_done;
    p.wait = on(w0, 0, 0);
    p.stop = on(strategies::simple_op(Op::Kind::kRecord), 0, 0);
    return p;
}

// When the wait's call returned (its channel's first try): its issue plus the call.
double call_of(const ProgramOutcome& o, const Pair& p, const config::ModelParams& q) {
    return o.timings[p.wait].issued_ps + ps_of(q.runtime.cross_device_wait_call);
}

TEST(CrossDeviceWait, IsTriedFromItsCallEveryPollPeriodAndPassesATryAfterTheFirstThatSeesTheEvent) {
    const config::ModelParams q;
    const double period = ps_of(q.runtime.poll_period);
    const double read = ps_of(q.runtime.cross_device_read);
    const double tries = ps_of(q.runtime.cross_device_try);
    int passed_at_first_try = 0, passed_later = 0;
    // Hold the CPU over two periods before the wait: every phase of its tries against the event.
    for (double hold = 0.0; hold <= 2.0 * period * 1e-6; hold += period * 1e-6 / 16.0) {
        const Pair p = pair_program(40.0, hold, 0);
        const ProgramOutcome o = simulator().execute(q, p.prog);
        const double call = call_of(o, p, q);
        const double event = o.timings[p.other_done].end_ps;
        const double tried = o.timings[p.wait].end_ps - tries;
        // On the grid of the wait's call...
        const double k = (tried - call) / period;
        EXPECT_NEAR(k, std::round(k), 1e-6) << "hold " << hold << " us";
        // ...the first try whose read sees the event.
        EXPECT_GE(tried + read, event - 1.0) << "hold " << hold << " us";
        if (std::round(k) > 0) {
            EXPECT_LT(tried - period + read, event) << "hold " << hold << " us";
            ++passed_later;
        } else {
            ++passed_at_first_try;
        }
        // The stop event behind the wait is stamped as it passes.
        EXPECT_DOUBLE_EQ(o.timings[p.stop].end_ps, o.timings[p.wait].end_ps);
    }
    // 40 us of GPU 1's work: the wait's call comes before its end throughout the sweep.
    EXPECT_EQ(passed_at_first_try, 0);
    EXPECT_GT(passed_later, 30);
}

TEST(CrossDeviceWait, TheRowGrowsOneForOneWithTheCallUntilAnEarlierTrySeesTheEvent) {
    // The sawtooth of isolating/peer-phase: from one hold to the next the row moves by the hold,
    // except where it drops by a period.
    const config::ModelParams q;
    const double period = ps_of(q.runtime.poll_period);
    const double step_us = 0.5;
    double last = -1.0;
    int rises = 0, drops = 0;
    for (double hold = 0.0; hold <= 16.0; hold += step_us) {
        const Pair p = pair_program(40.0, hold, 0);
        const ProgramOutcome o = simulator().execute(q, p.prog);
        const double row = o.timings[p.stop].end_ps - o.timings[0].end_ps;
        if (last >= 0.0) {
            const double d = row - last;
            if (std::abs(d - step_us * 1e6) < 1e3) {
                ++rises;
            } else {
                EXPECT_NEAR(d, step_us * 1e6 - period, 1e3) << "hold " << hold << " us";
                ++drops;
            }
        }
        last = row;
    }
    // 16 us: two periods, so two drops.
    EXPECT_EQ(drops, 2);
    EXPECT_EQ(rises, 30);
}

TEST(CrossDeviceWait, BehindACopyAFoundEventLetsTheWaitPassAStepAfterTheCopy) {
    const config::ModelParams q;
    const double step = ps_of(q.runtime.stream_wait_latency);
    const double tries = ps_of(q.runtime.cross_device_try);
    const double period = ps_of(q.runtime.poll_period);
    // GPU 1's work ends after the wait's call but long before GPU 0's 16 MiB copy: a try during
    // the copy finds it.
    {
        const Pair p = pair_program(30.0, 0.0, 16 * kMiB);
        const ProgramOutcome o = simulator().execute(q, p.prog);
        ASSERT_LT(o.timings[p.other_done].end_ps + period, o.timings[p.own].end_ps);
        EXPECT_NEAR(o.timings[p.wait].end_ps, o.timings[p.own].end_ps + step + tries, 1.0);
    }
    // GPU 1's work ends after GPU 0's copy: the wait passes at a try on its call's grid, later
    // than a step after the copy.
    {
        const Pair p = pair_program(600.0, 0.0, 16 * kMiB);
        const ProgramOutcome o = simulator().execute(q, p.prog);
        ASSERT_GT(o.timings[p.other_done].end_ps, o.timings[p.own].end_ps);
        const double tried = o.timings[p.wait].end_ps - tries;
        const double k = (tried - call_of(o, p, q)) / period;
        EXPECT_NEAR(k, std::round(k), 1e-6);
        EXPECT_GT(o.timings[p.wait].end_ps, o.timings[p.own].end_ps + step + tries);
    }
}

TEST(CrossDeviceWait, AWaitCalledOnceTheCpuSeesTheEventDoneQueuesNothing) {
    const config::ModelParams q;
    const double step = ps_of(q.runtime.stream_wait_latency);
    // GPU 1's 2 us of work is long done when the CPU, held 40 us, calls the wait: the stop event
    // follows GPU 0's copy a stream step later, with no try (isolating/peer-phase: 2.9-3.3 us).
    const Pair p = pair_program(2.0, 40.0, kMiB);
    const ProgramOutcome o = simulator().execute(q, p.prog);
    ASSERT_LT(o.timings[p.other_done].end_ps + ps_of(q.runtime.cross_device_seen), call_of(o, p, q));
    ASSERT_LT(call_of(o, p, q), o.timings[p.own].end_ps);
    EXPECT_NEAR(o.timings[p.stop].end_ps, o.timings[p.own].end_ps + step, 1.0);
    // Seen a little later than the call: the wait is queued and tried, a try's length more.
    config::ModelParams late = q;
    late.runtime.cross_device_seen = config::Duration{50'000'000};
    const ProgramOutcome l = simulator().execute(late, p.prog);
    EXPECT_NEAR(l.timings[p.stop].end_ps, l.timings[p.own].end_ps + step + ps_of(q.runtime.cross_device_try), 1.0);
}

TEST(CrossDeviceWait, TheCallsBetweenTheStartAndTheSourcesCopyCostTheCpuTheirTime) {
    // dmaprobe's both-ways order: the start event, cudaSetDevice, the other GPU's wait, its copy and
    // event, cudaSetDevice back, then the source's copy. Each call's time moves the source's copy.
    const auto own_issue = [](const config::ModelParams& q) {
        const Pair p = pair_program(5.0, 0.0, kMiB);
        return simulator().execute(q, p.prog).timings[p.own].issued_ps;
    };
    const config::ModelParams base;
    const double t0 = own_issue(base);
    const auto more = [](config::Duration d) { return config::Duration{d.ps + 1'000'000}; };
    config::ModelParams q = base;
    q.runtime.record_call = more(q.runtime.record_call);  // two records before it
    EXPECT_NEAR(own_issue(q) - t0, 2e6, 1.0);
    q = base;
    q.runtime.set_device_call = more(q.runtime.set_device_call);  // to GPU 1 and back
    EXPECT_NEAR(own_issue(q) - t0, 2e6, 1.0);
    q = base;
    q.runtime.cross_device_wait_call = more(q.runtime.cross_device_wait_call);  // GPU 1's wait
    EXPECT_NEAR(own_issue(q) - t0, 1e6, 1.0);
    q = base;
    q.runtime.stream_wait_call = more(q.runtime.stream_wait_call);  // no wait on the same GPU
    EXPECT_NEAR(own_issue(q) - t0, 0.0, 1.0);
}

// The isolating case's own program (results/h200x2-nvlink/isolating/peer-phase, peerphase.cu):
// dmaprobe's both-ways sequence with an event behind the other GPU's wait (start1) and one behind
// the source's copy (end0), the CPU held `hold_us` before the source's copy call; `own`: whether
// the source copies at all (else "alone1"). Returns the row and the CPU's time from the start
// event's call to the source's copy call (call0), as the program prints them.
// `events`: with start1 and end0 (peer-phase's sequence), else dmaprobe's own (peer-sequence's `main`).
std::pair<double, double> peer_phase_row(Simulator& sim, const config::ModelParams& q, std::uint64_t bytes, bool own, double hold_us,
                                         bool events = true) {
    Program p;
    auto& ops = p.ops;
    const auto on = [&ops](Op op, int stream, int gpu) {
        op.stream = stream;
        op.gpu = gpu;
        ops.push_back(op);
        return ops.size() - 1;
    };
    const auto peer = [&](int from, int to, int stream) {
        Op op = strategies::copy_op(CopyDirection::kDeviceToHost, bytes, stream, false);
        op.peer_gpu = to;
        op.peer_call = true;
        op.request_bytes = static_cast<std::uint32_t>(q.nvlink.max_payload.value);
        return on(op, stream, from);
    };
    const std::size_t start0 = on(strategies::simple_op(Op::Kind::kRecord), 0, 0);
    Op w1 = strategies::simple_op(Op::Kind::kWaitFor);
    w1.after = start0;
    on(w1, 1, 1);
    if (events) on(strategies::simple_op(Op::Kind::kRecord), 1, 1);
    peer(1, 0, 1);
    const std::size_t end1 = on(strategies::simple_op(Op::Kind::kRecord), 1, 1);
    if (hold_us > 0.0) ops.push_back(strategies::simple_op(Op::Kind::kCpuWork, core::Duration{static_cast<std::int64_t>(hold_us * 1e6)}));
    const std::size_t call0 = ops.size();
    if (own) peer(0, 1, 0);
    if (events) on(strategies::simple_op(Op::Kind::kRecord), 0, 0);
    Op w0 = strategies::simple_op(Op::Kind::kWaitFor);
    w0.after = end1;
    on(w0, 0, 0);
    const std::size_t stop = on(strategies::simple_op(Op::Kind::kRecord), 0, 0);
    const ProgramOutcome o = sim.execute(q, p);
    return {o.timings[stop].end_ps - o.timings[start0].end_ps, o.timings[call0].issued_ps - o.timings[start0].issued_ps};
}

// Against the leases' sweeps, cell by cell at the CPU's time the cell measured (the model's own
// calls take 5.4 us to the source's copy call, the leases 5.9-9.8 us unheld): cross_device_try,
// _read and _seen were chosen on the cells of 7902bd27 and 4494dd59 (median |error| 3.35 %);
// 29a6cf92, a third lease, was held out. Without the tries' grid the model was 14-50 % off on
// many of them.
// |model / measured - 1| of every cell of the peer-phase sweeps, by size and case, by lease, and
// all; how many lease files were read.
struct SweepErrors {
    std::map<std::string, std::vector<double>> errors, per_lease;
    std::vector<double> all;
    int files = 0;
};

SweepErrors sweep_errors(Simulator& sim, const config::ModelParams& q) {
    SweepErrors out;
    const std::filesystem::path leases = std::filesystem::path(DMASIM_SOURCE_DIR) / "results/h200x2-nvlink/isolating/peer-phase/leases";
    EXPECT_TRUE(std::filesystem::is_directory(leases)) << leases;
    if (!std::filesystem::is_directory(leases)) return out;
    using Cell = std::tuple<std::uint64_t, std::string, std::string>;  // bytes, case, delay
    for (const auto& lease : std::filesystem::directory_iterator(leases)) {
        std::ifstream in(lease.path() / "peerphase.csv");
        EXPECT_TRUE(in) << lease.path();
        ++out.files;
        std::string line;
        std::getline(in, line);  // bytes,case,delay_us,rep,row_us,gpu0_us,gpu1_us,call0_us
        std::map<Cell, std::pair<std::vector<double>, std::vector<double>>> cells;
        while (std::getline(in, line)) {
            std::vector<std::string> f;
            std::stringstream ss(line);
            for (std::string x; std::getline(ss, x, ',');) f.push_back(x);
            EXPECT_EQ(f.size(), 8U) << line;
            if (f.size() != 8U) continue;
            auto& c = cells[Cell{std::stoull(f[0]), f[1], f[2]}];
            c.first.push_back(std::stod(f[4]));
            c.second.push_back(std::stod(f[7]));
        }
        const auto median = [](std::vector<double> v) {
            std::sort(v.begin(), v.end());
            const std::size_t n = v.size();
            return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
        };
        for (const auto& [cell, reps] : cells) {
            const auto& [bytes, kase, delay] = cell;
            const bool own = kase == "both";
            const double row_us = median(reps.first);
            const double call0_us = median(reps.second);
            const double unheld = peer_phase_row(sim, q, bytes, own, 0.0).second * 1e-6;
            if (call0_us < unheld) continue;
            const double hold = std::round((call0_us - unheld) * 2.0) / 2.0;  // the model on the sweep's 0.5 us grid
            const double model_us = peer_phase_row(sim, q, bytes, own, hold).first * 1e-6;
            const double e = std::abs(model_us / row_us - 1.0);
            out.errors[std::to_string(bytes >> 20) + " MiB " + kase].push_back(e);
            out.per_lease[lease.path().filename().string()].push_back(e);
            out.all.push_back(e);
        }
    }
    return out;
}

TEST(CrossDeviceWait, TheIsolatingSweepsOfThreeLeasesFollowTheModel) {
    const std::string yaml = "strategy: peer\nsizes: 1MiB\ndirection: both\nplatform: h200x2-nvlink\n";
    const config::ModelParams q =
        config::parse_scenarios(yaml, "peer-phase.yaml", {}, config::CalibrationChoice::platform()).at(0).params.without_spread();
    // This file's model of the platform (a process elaborates one), run with the calibration's values.
    Simulator& sim = simulator();
    const SweepErrors sweeps = sweep_errors(sim, q);
    const auto& errors = sweeps.errors;
    const auto& per_lease = sweeps.per_lease;
    const auto& all = sweeps.all;
    const int files = sweeps.files;
    EXPECT_EQ(files, 3);
    ASSERT_GT(all.size(), 300U);
    const auto median = [](std::vector<double> v) {
        std::sort(v.begin(), v.end());
        return v[v.size() / 2];
    };
    EXPECT_LT(median(all), 0.04);
    for (const auto& [what, e] : errors) {
        EXPECT_GT(e.size(), 60U) << what;
        EXPECT_LT(median(e), 0.06) << what;
    }
    for (const auto& [lease, e] : per_lease) EXPECT_LT(median(e), 0.05) << lease;
    if (std::getenv("DMASIM_VERBOSE")) {
        for (const auto& [what, e] : errors) std::printf("%s: median |error| %.2f %% over %zu cells\n", what.c_str(), 100 * median(e), e.size());
        for (const auto& [lease, e] : per_lease) std::printf("%s: median |error| %.2f %%\n", lease.c_str(), 100 * median(e));
        std::printf("all: %.2f %% over %zu cells\n", 100 * median(all), all.size());
    }
}

// dmaprobe's own both-ways sequence (no start1, no end0; peer-sequence's `main` and `bare` cases,
// results/h200x2-nvlink/isolating/peer-sequence, two fresh leases and a second run), cell by cell
// at the CPU's time each cell measured to GPU 0's copy call, as above. The two sequences differ
// only in two event records, which cost the GPUs about 3 us each: a stream's records land 2.9 us
// apart on the 2xH200 and a copy right behind one starts 2.35 us after it (release-spacing; the
// calibration has both). The handoff after finished work (runtime.stream_wait_latency) has to be
// small for this sequence, as the H100's 0.11 us: the 2xH200's calibration fits 2.11 us, which its
// duplex pairs hold (their stop behind a same-GPU wait comes 4.6-6.5 us after the copy's end,
// something not modelled), and with it the model is 6.6 % off here (was 9.1 % with 3.38 us and
// no record costs).
TEST(CrossDeviceWait, DmaprobesOwnSequenceFollowsTheModelOnLeasesItWasNotChosenOn) {
    const std::string yaml = "strategy: peer\nsizes: 1MiB\ndirection: both\nplatform: h200x2-nvlink\n";
    config::ModelParams q =
        config::parse_scenarios(yaml, "peer-sequence.yaml", {}, config::CalibrationChoice::platform()).at(0).params.without_spread();
    q.runtime.stream_wait_latency = core::Duration{110'000};

    Simulator& sim = simulator();
    const std::filesystem::path leases = std::filesystem::path(DMASIM_SOURCE_DIR) / "results/h200x2-nvlink/isolating/peer-sequence/leases";
    ASSERT_TRUE(std::filesystem::is_directory(leases)) << leases;
    std::map<std::string, std::vector<double>> errors;  // per run and size
    std::vector<double> all;
    for (const auto& lease : std::filesystem::directory_iterator(leases)) {
        for (const auto& file : std::filesystem::directory_iterator(lease.path())) {
            if (file.path().extension() != ".csv") continue;
            std::ifstream in(file.path());
            ASSERT_TRUE(in) << file.path();
            std::string line;
            std::getline(in, line);  // bytes,case,delay_us,rep,row_us,call0_us,wait_call_us
            std::map<std::pair<std::uint64_t, std::string>, std::pair<std::vector<double>, std::vector<double>>> cells;
            while (std::getline(in, line)) {
                std::vector<std::string> f;
                std::stringstream ss(line);
                for (std::string x; std::getline(ss, x, ',');) f.push_back(x);
                ASSERT_EQ(f.size(), 7U) << line;
                if (f[1] != "main" && f[1] != "bare") continue;
                auto& c = cells[{std::stoull(f[0]), f[1] + "," + f[2]}];
                c.first.push_back(std::stod(f[4]));
                c.second.push_back(std::stod(f[5]));
            }
            const auto median = [](std::vector<double> v) {
                std::sort(v.begin(), v.end());
                const std::size_t n = v.size();
                return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
            };
            for (const auto& [cell, reps] : cells) {
                const std::uint64_t bytes = cell.first;
                const double row_us = median(reps.first);
                const double call0_us = median(reps.second);
                const double unheld = peer_phase_row(sim, q, bytes, true, 0.0, false).second * 1e-6;
                if (call0_us < unheld) continue;
                const double hold = std::round((call0_us - unheld) * 2.0) / 2.0;
                const double model_us = peer_phase_row(sim, q, bytes, true, hold, false).first * 1e-6;
                const double e = std::abs(model_us / row_us - 1.0);
                errors[lease.path().filename().string() + "/" + file.path().filename().string() + " " + std::to_string(bytes >> 20) +
                       " MiB"]
                    .push_back(e);
                all.push_back(e);
            }
        }
    }
    const auto median = [](std::vector<double> v) {
        std::sort(v.begin(), v.end());
        return v[v.size() / 2];
    };
    ASSERT_GT(all.size(), 150U);
    if (std::getenv("DMASIM_VERBOSE")) {
        for (const auto& [what, e] : errors) std::printf("%s: median |error| %.2f %% over %zu cells\n", what.c_str(), 100 * median(e), e.size());
        std::printf("all: %.2f %% over %zu cells\n", 100 * median(all), all.size());
    }
    EXPECT_LT(median(all), 0.04);
    for (const auto& [what, e] : errors) EXPECT_LT(median(e), 0.05) << what;
}

// dma.egress_queue orders the copy engines' TLPs towards PCIe links only (where it is measured):
// a copy to the other GPU over NVLink takes as long with the queue as without it.
TEST(EgressQueue, LeavesNvlinkAlone) {
    const auto peer_us = [](std::uint64_t queue) {
        config::ModelParams q;
        q.dma.egress_queue = core::Bytes{queue};
        Program prog;
        prog.ops.push_back(strategies::simple_op(Op::Kind::kRecord));
        Op copy = strategies::copy_op(CopyDirection::kDeviceToHost, kMiB, 0, false);
        copy.peer_gpu = 1;
        prog.ops.push_back(copy);
        prog.ops.push_back(strategies::simple_op(Op::Kind::kRecord));
        const ProgramOutcome o = simulator().execute(q, prog);
        return (o.timings.back().end_ps - o.timings.front().end_ps) * 1e-6;
    };
    const double without = peer_us(0);
    EXPECT_GT(without, 2.0) << "1 MiB over NVLink and the copy's own costs";
    EXPECT_DOUBLE_EQ(peer_us(54 * 1024), without);
}

}  // namespace
}  // namespace dmasim::sim
