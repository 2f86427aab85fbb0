// periodic: a frame every period (the radar card of the seeds), moved pinned, pageable, by
// zero-copy or by a capture card; per-frame latency from release, tails, misses and backlog.
#include "dmasim/strategies/programs.h"
#include "dmasim/strategies/registry.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <optional>
#include <stdexcept>

#include "dmasim/core/draws.h"
#include "dmasim/core/limits.h"
#include "dmasim/core/results.h"
#include "dmasim/sim/trace.h"

namespace dmasim::strategies {

namespace {

// A sample's median, p10, p90 and extremes, as a periodic row reports its frames.
struct Spread {
    double p50, p10, p90, min, max;
};
std::string fmt_ratio(double v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.3g", v);
    return buf;
}

Spread spread_of(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return {core::percentile_sorted(v, 0.5), core::percentile_sorted(v, 0.1), core::percentile_sorted(v, 0.9), v.front(),
            v.back()};
}

// One run's machine (config::NoisyHostParams): noisy or not, and on a noisy one each frame's wake
// and copy stalls, from draws of their own so that the frames' other draws stay as they are
// whatever these do.
class NoisyHost {
public:
    NoisyHost(const config::NoisyHostParams& h, std::uint64_t seed) : h_(h), draws_(seed) {
        noisy_ = h.active() && draws_.uniform() < h.noisy_share;
    }
    bool noisy() const { return noisy_; }

    // What a frame released after a sleep adds on a noisy machine: the wake mode, with a chance
    // that grows with the idle before it as the quiet slow mode's does (`idle_share`: 1 -
    // exp(-idle / runtime.idle_wake_time)): the longer a virtual CPU halts, the likelier its
    // core is elsewhere when it is wanted.
    double wake(double idle_share) {
        if (!noisy_) return 0.0;
        const double u = draws_.uniform(), z = draws_.normal();
        return u < h_.wake_probability * idle_share ? static_cast<double>(h_.wake_time.ps) * std::exp(h_.wake_sigma * z) : 0.0;
    }
    // What stalls add to a CPU copy that takes `busy` ps: Poisson arrivals in the copying time,
    // each stopping the copy for its length (the copy's own time is what the arrivals are in).
    double busy(double busy_ps) {
        if (!noisy_ || h_.busy_interval.ps <= 0 || h_.busy_time.ps <= 0 || !(busy_ps > 0.0)) return 0.0;
        const auto mean = static_cast<double>(h_.busy_interval.ps);
        const auto median = static_cast<double>(h_.busy_time.ps);
        // Past kMaxDrawn stalls in one frame (a copy thousands of intervals long), the rest add
        // their expected lengths: the draws stay bounded whatever the parameters.
        constexpr int kMaxDrawn = 256;
        double added = 0.0;
        int drawn = 0;
        for (double t = -mean * std::log(1.0 - draws_.uniform()); t < busy_ps; t += -mean * std::log(1.0 - draws_.uniform())) {
            if (++drawn > kMaxDrawn) {
                added += (busy_ps - t) / mean * median * std::exp(0.5 * h_.busy_sigma * h_.busy_sigma);
                break;
            }
            added += median * std::exp(h_.busy_sigma * draws_.normal());
        }
        return added;
    }

private:
    const config::NoisyHostParams& h_;
    core::Draws draws_;
    bool noisy_ = false;
};

// Each frame starts later than its release by its draw (config::FrameJitterParams): the body on
// every frame, the slow mode with a chance that grows with the idle time before the release. A
// frame released while the one before was still running (as jittered) is issued when that one
// returns, with no sleep to wake from: it moves by what the jitter added to that one's end, so a
// backlog carries its first frame's lateness and adds none of its own. `cold` is each frame's
// excess over a warm copy (pageable frames; empty otherwise): it is drawn anew per frame
// (cold_sigma), from draws of its own so that the other frames' draws stay as they are. The run is
// one machine, `host`: on a noisy one a frame at rest may wake late, and a frame the CPU copies
// (`cpu_busy`: pageable, whose latency is nearly all the CPU's copy) meets its copy stalls.
void jitter_frames(const std::vector<double>& simulated, const std::vector<double>& cold, std::vector<double>& latency,
                   const config::FrameJitterParams& j, double period_ps, double idle_time_ps, std::uint64_t seed,
                   NoisyHost& host, bool cpu_busy) {
    latency = simulated;
    if ((!j.active() && !host.noisy()) || latency.empty()) return;
    core::Draws draws(seed);
    core::Draws cold_draws(seed ^ 0xC01DC0DEULL);
    const auto b = static_cast<double>(j.body.ps);
    const auto slow = static_cast<double>(j.slow_time.ps);
    double before = simulated.front();        // the frame before the first counted one, as simulated
    double before_simulated = simulated.front();
    for (std::size_t i = 0; i < latency.size(); ++i) {
        const double e = draws.normal(), u = draws.uniform(), x = draws.normal();
        const double idle = std::max(0.0, period_ps - before);
        const double idle_share = idle_time_ps > 0.0 ? -std::expm1(-idle / idle_time_ps) : 1.0;
        const double chance = j.slow_probability * idle_share;
        double late = b * std::expm1(j.body_sigma * e) + (u < chance ? slow * std::exp(j.slow_sigma * x) : 0.0);
        if (!cold.empty()) late += cold[i] * std::expm1(j.cold_sigma * cold_draws.normal());
        const double stalled = cpu_busy ? host.busy(simulated[i]) : 0.0;
        if (before <= period_ps) {
            // At rest at its release: the frame starts as late (or as early) as its draw.
            latency[i] = simulated[i] + late + host.wake(idle_share) + stalled;
        } else {
            // Released into the one before: the thread is still waiting for that one and issues
            // this frame as it returns, without sleeping (dmaprobe's wait_until returns at once),
            // so the frame moves by what the jitter added to that one's end, not by a lateness of
            // its own.
            const double issued = std::max(0.0, (before - period_ps) - std::max(0.0, before_simulated - period_ps));
            latency[i] = simulated[i] + issued + stalled;
        }
        before = latency[i];
        before_simulated = simulated[i];
    }
}

}  // namespace

void run_periodic(Engine& engine, Case& c) {
    const config::ModelParams& params = c.params;
    const CaseSpec& spec = c.spec;
    CaseResult& result = c.result;
    if (spec.direction != "h2d") throw std::invalid_argument("periodic frames go host to device");
    const auto& f = spec.options.periodic;
    const bool from_card = f.via == "fpga_direct" || f.via == "fpga_via_host";
    const auto cards = engine.devices_of_kind(topology::NodeKind::kEndpoint);
    const auto gpus = engine.devices_of_kind(topology::NodeKind::kGpu);
    if (from_card && (cards.empty() || gpus.empty())) {
        throw std::invalid_argument("frames via " + f.via + " need a capture card: platform radar-switch or radar-rootports");
    }
    if (f.count < 1 || f.count > core::limits::kMaxFrames) {
        throw std::invalid_argument(engine.label() + ": " + std::to_string(f.count) + " frames; 1.." +
                                    std::to_string(core::limits::kMaxFrames));
    }
    const bool cached = spec.bytes <= params.cpu.llc_size.value;
    // Warm-up frames, then the first `count` frames, and for each of those the op whose end the
    // frame's latency runs to: its processing's end, or with `covers: transfer` its data's
    // arrival. As in dmaprobe, warm-up frames run on the same schedule and are not counted, so
    // the first counted frame finds the GPU as every later one does (idle since the frame
    // before: runtime.idle_wake), not as a program's start leaves it. A frame's wake depends on
    // the frame before it (0.23 % of that frame's change on the H100), so after two warm-up
    // frames the counted ones repeat to well under a picosecond.
    constexpr std::int64_t kWarmupFrames = 2;
    const auto frames = [&](std::int64_t count, std::vector<std::size_t>& copy_index) {
        Program prog;
        for (std::int64_t i = -kWarmupFrames; i < count; ++i) {
            prog.ops.push_back(simple_op(Op::Kind::kReleaseAt, core::Duration{(i + kWarmupFrames) * f.period.ps}));
            if (f.via == "pageable") {
                prog.ops.push_back(staged_op(CopyDirection::kHostToDevice, spec.bytes, cached));
            } else if (f.via == "zero_copy") {
                Op op = mapped_kernel_op({CopyDirection::kHostToDevice}, spec.bytes, spec.options.zero_copy, params.gpu, params.cpu.cache_line);
                op.blocking = true;
                prog.ops.push_back(op);
            } else if (from_card) {
                // The card writes the frame into GPU memory, or into pinned host memory and the
                // GPU copies it in.
                Op card = copy_op(CopyDirection::kDeviceToHost, spec.bytes, 0, true);
                card.gpu = cards.front();
                if (f.via == "fpga_direct") card.peer_gpu = gpus.front();
                prog.ops.push_back(card);
                if (f.via == "fpga_via_host") {
                    Op in = copy_op(CopyDirection::kHostToDevice, spec.bytes, 0, true);
                    in.gpu = gpus.front();
                    prog.ops.push_back(in);
                }
            } else {
                // With processing, the copy is queued (cudaMemcpyAsync) and the kernel behind it.
                prog.ops.push_back(copy_op(CopyDirection::kHostToDevice, spec.bytes, 0, f.kernel.ps == 0));
            }
            // The frame's data is in GPU memory when the op before its processing ends.
            const std::size_t arrived = prog.ops.size() - 1;
            // Processing: the kernel runs after the frame's copy on the same stream and the
            // application waits for it, as dmaprobe does, so the frame is done when it ends and
            // a frame that overruns delays the next one's start (a backlog).
            if (f.kernel.ps > 0) {
                prog.ops.push_back(kernel_op(f.kernel, 0));
                prog.ops.push_back(simple_op(Op::Kind::kSynchronize));
            }
            if (i >= 0) copy_index.push_back(f.covers == "transfer" ? arrived : prog.ops.size() - 1);
        }
        return prog;
    };
    // Counted frame i is released after the warm-up frames' periods.
    const auto latencies = [&](const ProgramOutcome& out, const std::vector<std::size_t>& copy_index) {
        std::vector<double> l;
        for (std::size_t i = 0; i < copy_index.size(); ++i) {
            l.push_back(out.timings[copy_index[i]].end_ps -
                        static_cast<double>((static_cast<std::int64_t>(i) + kWarmupFrames) * f.period.ps));
        }
        return l;
    };
    // The stream's frames as simulated with `p`: the outcome, and each counted frame's latency.
    const auto simulate = [&](const config::ModelParams& p) {
        std::optional<ProgramOutcome> reused;
        std::vector<double> latency;
        // Frame reuse: runs of n, n + 1 and n + 2 frames (after the warm-up frames). When each
        // frame arrives before the next release (the model at rest in between) and the last three
        // took the same time, every later frame is the last one again: its latency repeats and
        // every count grows by the same step per frame (checked over the three runs). A frame
        // that depends on the one before (the GPU's wake, the CPU's caches cooling for as long
        // as that one left it idle) settles geometrically, by 1 % a frame or less on the lent
        // machines: n = 2 is enough for the wake, n = 8 for a pageable frame's cold share.
        for (const std::int64_t first : {std::int64_t{2}, std::int64_t{8}}) {
            if (reused || engine.fidelity() != sim::Fidelity::kFast || sim::Tracer::active() != nullptr ||
                f.count <= 3 * (first + 1)) {
                break;
            }
            std::array<ProgramOutcome, 3> at;
            std::vector<std::size_t> index;
            for (std::int64_t k = 0; k < 3; ++k) {
                index.clear();
                at[static_cast<std::size_t>(k)] = engine.execute(p, frames(first + k, index));
            }
            const std::vector<double> seen = latencies(at[2], index);
            bool steady = true;
            for (std::size_t i = 0; i < seen.size(); ++i) {
                if (!(seen[i] < static_cast<double>(f.period.ps))) steady = false;
                if (i + 2 >= seen.size() && i >= 1 && std::fabs(seen[i] - seen[i - 1]) > sim::kFastForwardTolerance.absolute_ps) steady = false;
            }
            sim::Levels levels;
            levels.first = first;
            levels.step = 1;
            levels.target = static_cast<std::uint64_t>(f.count);
            sim::Extrapolation x = sim::extrapolate(at, levels, sim::kFastForwardTolerance);
            if (steady && x.outcome) {
                reused = std::move(x.outcome);
                latency = seen;
                latency.resize(static_cast<std::size_t>(f.count), seen.back());
                reused->fast_forward = "fast-forwarded: frames " + std::to_string(seen.size() + 1) + " to " +
                                       std::to_string(f.count) + " reuse frame " + std::to_string(seen.size()) +
                                       "'s result (the model is at rest before each frame)";
            }
        }
        ProgramOutcome o;
        if (reused) {
            o = std::move(*reused);
        } else {
            std::vector<std::size_t> index;
            o = engine.execute(p, frames(f.count, index));
            latency = latencies(o, index);
        }
        return std::make_pair(std::move(o), std::move(latency));
    };
    auto [o, latency] = simulate(params);
    c.take_main(o);
    // The rate kept up is the GPU's and the link's: the host's lateness moves single frames, not
    // the spacing of a stream (with few frames one late last frame would move it a lot).
    const std::vector<double> simulated = latency;
    // A pageable frame's excess over a warm copy (what cooled since the CPU's last copy), which
    // frame_jitter.cold_sigma draws anew for every frame: the frames again with caches that
    // never cool.
    std::vector<double> cold;
    if (f.via == "pageable" && params.frame_jitter.cold_sigma > 0.0 && params.cpu.cache_cooling_time.ps > 0) {
        config::ModelParams warm = params;
        warm.cpu.cache_cooling_time = core::Duration{0};
        const std::vector<double> warm_latency = simulate(warm).second;
        for (std::size_t i = 0; i < simulated.size(); ++i) cold.push_back(std::max(0.0, simulated[i] - warm_latency[i]));
    }
    const double deadline = static_cast<double>((f.deadline.ps > 0 ? f.deadline : f.period).ps);
    const double period_ps = static_cast<double>(f.period.ps);
    // One run of the stream's frames, as dmaprobe reports it (backlog as dmaprobe defines it: the
    // last quarter's median latency against the first quarter's).
    struct Run {
        Spread all, last;
        double p99, misses, first_p50, late_starts;
    };
    const auto run_of = [&](const std::vector<double>& l) {
        const std::size_t quarter = std::max<std::size_t>(1, l.size() / 4);
        Run r{};
        r.all = spread_of(l);
        r.last = spread_of(std::vector<double>(l.end() - static_cast<std::ptrdiff_t>(quarter), l.end()));
        r.first_p50 = core::percentile(std::vector<double>(l.begin(), l.begin() + static_cast<std::ptrdiff_t>(quarter)), 0.5);
        r.p99 = core::percentile(l, 0.99);
        r.misses = static_cast<double>(std::count_if(l.begin(), l.end(), [&](double x) { return x > deadline; }));
        // Frames released while the one before was still in flight: where a backlog starts.
        r.late_starts = static_cast<double>(std::count_if(l.begin(), l.end() - 1, [&](double x) { return x > period_ps; }));
        return r;
    };
    // With the host's lateness drawn, the stream runs frame_jitter.runs times, each with draws of
    // its own, and each statistic is the median over those runs, as compare takes the median over
    // leases of each lease's: one run's p99 of 1000 frames is the 10th latest frame, which a few
    // slow frames more or less move by tens of microseconds.
    std::vector<Run> runs;
    std::int64_t noisy_runs = 0;
    if (!params.frame_jitter.active() && !params.noisy_host.active()) {
        runs.push_back(run_of(simulated));
    } else {
        const std::uint64_t seed =
            static_cast<std::uint64_t>(params.frame_jitter.seed) ^
            core::fnv1a(spec.label + "|" + spec.strategy + "|" + f.via + "|" + std::to_string(spec.bytes) + "|" +
                        std::to_string(f.period.ps) + "|" + std::to_string(f.count));
        for (std::int64_t k = 0; k < params.frame_jitter.runs; ++k) {
            const std::uint64_t run_seed = core::fnv1a(std::to_string(seed) + "/" + std::to_string(k));
            NoisyHost host(params.noisy_host, run_seed ^ 0x57A11ULL);
            noisy_runs += host.noisy() ? 1 : 0;
            jitter_frames(simulated, cold, latency, params.frame_jitter, period_ps, static_cast<double>(params.runtime.idle_wake_time.ps),
                          run_seed, host, f.via == "pageable");
            runs.push_back(run_of(latency));
        }
    }
    // Each statistic over the runs: its median, or its whole spread.
    const auto over_runs = [&](auto field) {
        std::vector<double> v;
        for (const Run& r : runs) v.push_back(field(r));
        return spread_of(std::move(v));
    };
    const auto median = [&](auto field) { return over_runs(field).p50; };
    // The row's time and spread from the frames' spread of each run, each the median over runs.
    const auto set_frames = [&](RowResult& row, Spread Run::*part) {
        row.p10_ps = median([&](const Run& r) { return (r.*part).p10; });
        row.p90_ps = median([&](const Run& r) { return (r.*part).p90; });
        row.min_ps = median([&](const Run& r) { return (r.*part).min; });
        row.max_ps = median([&](const Run& r) { return (r.*part).max; });
    };
    std::string over = runs.size() > 1 ? "; the median over " + std::to_string(runs.size()) + " runs of the stream" : "";
    if (params.noisy_host.active()) {
        over += " (" + std::to_string(noisy_runs) + " on noisy machines, noisy_host.noisy_share " + fmt_ratio(params.noisy_host.noisy_share) + ")";
    }
    RowResult main = sim_row("", median([](const Run& r) { return r.all.p50; }), 1,
                             std::to_string(f.count) + " frames via " + f.via + ", per-frame latency from release" + over, o);
    set_frames(main, &Run::all);
    result.rows.push_back(main);
    // A lease's p99 is one run's: where the stream ran more than once, the row's band is how that
    // one run's p99 spreads over the runs (p10-p90 and extremes), which the frames' own rare
    // lateness makes wide.
    const Spread p99s = over_runs([](const Run& r) { return r.p99; });
    RowResult p99 = sim_row("p99", p99s.p50, 1, "99th percentile frame latency" + over, o);
    if (runs.size() > 1) {
        p99.p10_ps = p99s.p10;
        p99.p90_ps = p99s.p90;
        p99.min_ps = p99s.min;
        p99.max_ps = p99s.max;
        p99.note += "; p10/p90 over the runs";
    }
    result.rows.push_back(p99);
    const auto misses = std::llround(median([](const Run& r) { return r.misses; }));
    result.rows.push_back(sim_row("misses", deadline, 1,
                                  std::to_string(misses) + " of " + std::to_string(f.count) + " frames missed the deadline" + over,
                                  o));
    // Sustained: the spacing of the frames' completions, first to last (as simulated, before the
    // host's lateness), so gbps is the rate the GPU kept up whatever the frame count. (The whole
    // run's time over the frames was below the period for a few frames: 3 frames of a 2.1 GB/s
    // stream came out at 3.08 GB/s.)
    const std::size_t n = simulated.size();
    const double spacing_ps = n < 2 ? simulated.front()
                                    : period_ps + (simulated.back() - simulated.front()) / static_cast<double>(n - 1);
    result.rows.push_back(sim_row("sustained", spacing_ps, 1,
                                  n < 2 ? "one frame: its latency" : "spacing of the frames' completions, first to last: gbps is the rate kept up",
                                  o));
    RowResult backlog = make_row("backlog", median([](const Run& r) { return r.last.p50; }), 1, "");
    set_frames(backlog, &Run::last);
    const double first_ps = median([](const Run& r) { return r.first_p50; });
    const double growth_ps = backlog.time_ps - first_ps;
    char buf[200];
    std::snprintf(buf, sizeof buf,
                  "last quarter of frames; first_quarter_us=%.4g growth_us=%.4g backlog=%s; %lld of %lld frames "
                  "released before the previous one finished",
                  first_ps * 1e-6, growth_ps * 1e-6, growth_ps > period_ps ? "yes" : "no",
                  static_cast<long long>(std::llround(median([](const Run& r) { return r.late_starts; }))), static_cast<long long>(f.count));
    backlog.note = with_note(buf + over, o.fast_forward);
    result.rows.push_back(backlog);
    // A frame row's time is one frame's, the program's host traffic that of every frame it
    // simulated: no per-row count to give (results.csv leaves it empty).
    for (RowResult& r : result.rows) r.host_bytes = false;
}

}  // namespace dmasim::strategies
