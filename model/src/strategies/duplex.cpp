// duplex: host-to-device and device-to-host at once, of pinned buffers on two streams or of
// pageable ones (synchronous: one after the other).
#include "dmasim/strategies/programs.h"
#include "dmasim/strategies/registry.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace dmasim::strategies {

namespace {

// dmaprobe's duplex pair: every call is issued behind the gate kernel on stream 0, then the
// gate opens. The copy on stream 1 waits for the start event, recorded right behind the gate;
// stream 0 ends with a wait for stream 1's end event and the stop event.
struct GatedDuplex {
    Program prog;
    std::size_t h2d = 0, d2h = 0, stop = 0, gate = 0;
};

// With blocking copies beside the pair (duplex.one_way_beside), the pair follows the last
// repetition's blocking copy each way on the legacy stream (here stream 2): its engines turn to
// the pair's streams (dma.channel_turn), where a copy engine carried that copy.
// A burst (duplex.burst) queues `up` copies into the GPU on stream 0 and `down` out of it on
// stream 1, back to back; 0 leaves that direction's copies out and keeps every other call.
GatedDuplex gated_duplex_program(std::uint64_t bytes, const config::ComputeOptions& compute, core::Duration host_delay,
                                 bool after_blocking, std::uint64_t up = 1, std::uint64_t down = 1) {
    GatedDuplex g;
    Program& p = g.prog;
    if (after_blocking) {
        constexpr int kLegacy = 2;
        p.ops.push_back(copy_op(CopyDirection::kHostToDevice, bytes, kLegacy, true));
        p.ops.push_back(copy_op(CopyDirection::kDeviceToHost, bytes, kLegacy, true));
        p.gate_closes_at = p.ops.size();
    }
    const auto on = [&p](Op op, int stream) {
        op.stream = stream;
        p.ops.push_back(op);
        return p.ops.size() - 1;
    };
    const auto wait_for = [&on](std::size_t after, int stream) {
        Op w = simple_op(Op::Kind::kWaitFor);
        w.after = after;
        return on(w, stream);
    };
    // A compute kernel beside the pair (duplex-compute) comes first, on a stream of its own,
    // released with the gate; the indices below then need no shifting.
    add_compute(p, compute);
    const std::size_t start = on(simple_op(Op::Kind::kRecord), 0);
    wait_for(start, 1);
    for (std::uint64_t k = 0; k < up; ++k) on(copy_op(CopyDirection::kHostToDevice, bytes, 0, false), 0);
    for (std::uint64_t k = 0; k < down; ++k) on(copy_op(CopyDirection::kDeviceToHost, bytes, 1, false), 1);
    g.h2d = on(simple_op(Op::Kind::kRecord), 0);
    g.d2h = on(simple_op(Op::Kind::kRecord), 1);
    wait_for(g.d2h, 0);
    g.stop = on(simple_op(Op::Kind::kRecord), 0);
    if (host_delay.ps > 0) p.ops.push_back(simple_op(Op::Kind::kCpuWork, host_delay));
    g.gate = p.ops.size();
    p.ops.push_back(simple_op(Op::Kind::kOpenGate));
    p.ops.push_back(simple_op(Op::Kind::kSynchronize));
    return g;
}

void run_gated_duplex(Engine& engine, Case& c) {
    const config::ModelParams& params = c.params;
    const CaseSpec& spec = c.spec;
    const config::ComputeOptions& compute = spec.options.compute;
    const bool with_compute = compute.duration.ps > 0;
    const double period = static_cast<double>(params.runtime.poll_period.ps);
    const int phases = period > 0.0 ? kPollPhases : 1;
    std::vector<double> pair, up, down, burst_up, burst_down;
    const bool point = params.host_spread.deterministic();
    // duplex.burst: the copies each way; one pair without it.
    const std::uint64_t copies = std::max<std::uint64_t>(1, spec.options.duplex.burst_copies(spec.bytes));
    const bool burst = spec.options.duplex.burst.value > 0;
    ProgramOutcome first;
    for (int k = 0; k < phases; ++k) {
        const core::Duration delay{static_cast<std::int64_t>(std::llround(period * k / phases))};
        const bool beside = spec.options.duplex.one_way_beside;
        // From the gate's opening to the stop event, and each stream's end event.
        const auto run = [&](std::uint64_t n_up, std::uint64_t n_down) {
            const auto build = [&](std::uint64_t bytes) {
                return gated_duplex_program(bytes, compute, delay, beside, n_up, n_down).prog;
            };
            const GatedDuplex g = gated_duplex_program(spec.bytes, compute, delay, beside, n_up, n_down);
            ProgramOutcome o = engine.execute_sized(params, spec.bytes, 1, engine.default_warmup(params), build);
            const double gate = o.timings[g.gate].end_ps;
            const std::array<double, 3> t{o.timings[g.stop].end_ps - gate, o.timings[g.h2d].end_ps - gate,
                                          o.timings[g.d2h].end_ps - gate};
            return std::make_pair(t, std::move(o));
        };
        auto [t, o] = run(copies, copies);
        up.push_back(t[1]);
        down.push_back(t[2]);
        pair.push_back(with_compute ? std::max(t[1], t[2]) : t[0]);
        if (burst) {
            // dmaprobe's bursts one way, each the pair's calls with the other direction's copies left out.
            burst_up.push_back(run(copies, 0).first[0]);
            burst_down.push_back(run(0, copies).first[0]);
        }
        if (k == 0) first = std::move(o);
    }
    c.take_main(first);
    const std::string over = "; mean over " + std::to_string(phases) +
                             " phases of the gate against the channels' polls, their spread the band";
    if (burst) {
        const std::string n = std::to_string(copies) + " copies";
        c.result.rows.push_back(phase_row("", pair, c.ndirs(),
                                          "from the start event behind the gate to the stop event, " + n +
                                              " back to back each way" + over,
                                          first, point));
        c.result.rows.push_back(phase_row("h2d", up, 1, "the H2D burst of the pair: to its last copy's end" + over, first, point));
        c.result.rows.push_back(phase_row("d2h", down, 1, "the D2H burst of the pair: to its last copy's end" + over, first, point));
        c.result.rows.push_back(phase_row("burst_h2d", burst_up, 1,
                                          "the H2D burst alone (" + n + "), the pair's calls with the D2H copies left out" + over,
                                          first, point));
        c.result.rows.push_back(phase_row("burst_d2h", burst_down, 1,
                                          "the D2H burst alone (" + n + "), the pair's calls with the H2D copies left out" + over,
                                          first, point));
        return;
    }
    c.result.rows.push_back(phase_row("", pair, c.ndirs(),
                                      std::string("from the start event behind the gate to the stop event") +
                                          (with_compute ? " (the later copy's end: a compute kernel beside them, which takes SM room the copies do not need and turns at GPU memory, where they need little)" : "") + over,
                                      first, point));
    c.result.rows.push_back(phase_row("h2d", up, 1, "the H2D copy of the pair: to its end" + over, first, point));
    c.result.rows.push_back(phase_row("d2h", down, 1, "the D2H copy of the pair: to its end" + over, first, point));
    if (!spec.options.duplex.one_way_beside) return;
    // dmaprobe's blocking copies beside the pair (duplex.one_way_beside): each on a synchronised
    // GPU, as the pinned strategy's row, but on an engine whose last copy was the pair's of that
    // direction, another stream's (dma.channel_turn). The model's host does not drift between the
    // pair and them; the hardware's does, which is why dmaprobe takes them beside the pair.
    for (const CopyDirection dir : {CopyDirection::kHostToDevice, CopyDirection::kDeviceToHost}) {
        constexpr std::size_t kSynced = 1;  // the synchronisation before the blocking copy
        const auto build = [dir](std::uint64_t bytes) {
            Program p;
            p.ops.push_back(copy_op(dir, bytes, 1, false));
            p.ops.push_back(simple_op(Op::Kind::kSynchronize));
            p.ops.push_back(copy_op(dir, bytes, 0, true));
            return p;
        };
        const ProgramOutcome o = engine.execute_sized(params, spec.bytes, 1, engine.default_warmup(params), build);
        const bool up = dir == CopyDirection::kHostToDevice;
        c.result.rows.push_back(sim_row(up ? "blocking_h2d" : "blocking_d2h", o.elapsed_ps - o.timings[kSynced].end_ps, 1,
                                        std::string("a blocking cudaMemcpy ") + (up ? "H2D" : "D2H") +
                                            " right after the pair: call to return, its engine turning from the pair's stream",
                                        o));
    }
}

}  // namespace

void run_duplex(Engine& engine, Case& c) {
    if (c.ndirs() != 2) throw std::invalid_argument("duplex moves both directions");
    if (c.spec.options.duplex.host_memory == "pinned") {
        run_gated_duplex(engine, c);
    } else {
        run_pageable_copy(engine, c, "pageable copies are synchronous: one direction after the other");
    }
}

}  // namespace dmasim::strategies
