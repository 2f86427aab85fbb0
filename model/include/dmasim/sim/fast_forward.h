// Fast-forward: a long transfer computed from short ones instead of simulated TLP by TLP.
//
// The model is deterministic and, once a transfer reaches steady state, periodic: every period
// of bytes (a multiple of MPS, MRRS, completion size, the engines' 64 KiB requests, bounce
// buffers, BAR windows...) adds the same TLPs, DLLPs, wire time and memory traffic. A case is
// therefore run as a family of programs P(m), m = 1, 2, ..., whose byte counts are affine in m
// and of which P(N) is the real one. Three members at m1, m1 + d, m1 + 2d (with m1 = N mod d)
// are simulated at TLP level; when every quantity they produce is affine in m (within a tight
// tolerance) and, for a program of fixed operations, the order of every operation's issue, start
// and end is the same at the three levels and at N, the outcome at N is the affine
// extrapolation. docs/fast-forward.md says why that is exact and when it falls back.
//
// This header holds the arithmetic (no simulation), so that it can be tested on its own;
// Simulator (simulator.cpp) builds the families and runs them.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "dmasim/sim/host_runtime.h"
#include "dmasim/sim/simulator.h"

namespace dmasim::sim {

// What one program's simulation produced.
struct ProgramOutcome {
    double elapsed_ps = 0.0;
    std::vector<OpTiming> timings;
    std::vector<LinkReport> links;
    std::uint64_t read_requests = 0;
    std::uint64_t writes = 0;
    std::uint32_t peak_outstanding_reads = 0;
    // The longest a copy's release waited for the reads its root port took in before it: behind
    // a copy into the GPU's reads it ends with that copy's last window, so it must be the same at
    // every level, not only affine (a release whose other copy ends sooner at the levels than at
    // the real size waits for all of it there, for a window's reads only at the real size).
    double longest_release_hold_ps = 0.0;
    std::uint64_t host_memory_bytes = 0;  // host_read_bytes + host_written_bytes
    // What the host's memory controllers served the program: bytes read and written (DMA, CPU
    // copies, write-backs); what the I/O cache absorbs is not here.
    std::uint64_t host_read_bytes = 0;
    std::uint64_t host_written_bytes = 0;
    // What reads waited, all together, for the root ports' ways to memory
    // (root_complex.memory_bandwidth). In steady state each read waits as long at every size, and
    // the sum is affine in it; a queue still filling makes each read wait longer than the one
    // before, which the copy engines' reads in flight may hide from every other quantity for a
    // while.
    double memory_wait_ps = 0.0;
    // Empty when simulated TLP by TLP; else how it was fast-forwarded, for the rows' notes.
    std::string fast_forward;
};

// The programs P(m) of one case. make(target) is the real program. A family that is not
// `scalable` (byte counts not affine in m, or no family at all) is always simulated at TLP level.
struct ProgramFamily {
    std::function<Program(std::uint64_t level)> make;
    std::uint64_t target = 0;
    bool scalable = false;
    std::uint64_t min_level = 1;  // the warm-up: levels below it may not be in steady state yet
    // Where the warm-up starts: levels below it have not filled a port's I/O cache yet
    // (root_complex.io_cache), and run differently from those above.
    std::uint64_t settle_level = 0;
    std::function<std::string(std::uint64_t level)> describe;  // a level as a note names it ("4MiB")
};

// Three levels m1 < m2 < m3, equally spaced, and the real level: target = m3 + jumps * step.
struct Levels {
    std::uint64_t first = 0;
    std::uint64_t step = 0;
    std::uint64_t target = 0;
    std::uint64_t at(int i) const { return first + static_cast<std::uint64_t>(i) * step; }
    std::uint64_t jumps() const { return (target - at(2)) / step; }
};

// Levels at least `min_level` (the warm-up) apart from zero, `step` apart, in the target's
// residue class, or none when simulating them would cost more than `max_cost_fraction` of the
// real program (sum of the three levels against the target).
std::optional<Levels> choose_levels(std::uint64_t target, std::uint64_t min_level, std::uint64_t step,
                                    double max_cost_fraction);

// How far from a straight line three equally spaced values may be: the second difference
// against the first ones. Counts must be exactly affine unless `relative` allows otherwise.
struct Tolerance {
    double relative = 1e-5;      // of the larger step
    double absolute_ps = 2.0;    // times: the clock's resolution, plus rounding
    double absolute_count = 0.0; // counters
    // Credit-stall time only (a diagnostic: the fraction links.csv prints to four decimals)
    // may wobble more, e.g. when SM requests queue behind a credit return at varying phases.
    double relative_stall = 1e-3;
    // A release's longest hold (ProgramOutcome::longest_release_hold_ps) may wobble by a packet's
    // time where the release meets the reads ahead of it at varying phases.
    double relative_hold = 1e-3;
};

// How affine the levels must be. Counts wobble only in runs whose steady state is not exactly
// periodic (two transfers at incommensurate rates, whose phase drifts); a wobble of 1e-4 of a
// step keeps the extrapolation's error near that, ten times below the 0.1 % promised (the
// agreement test and docs/fast-forward.md have the measured errors). Credit-stall time may
// wobble 5e-3 of a step: writes and completions that meet in a root port's shared data path
// (root_complex.port_bandwidth_total) take it in an order that repeats only nearly, and the
// writes' stalls on posted credits move by 0.1-0.4 % of a step (a duplex copy on h100-sxm).
inline constexpr Tolerance kFastForwardTolerance{1e-4, 2.0, 0.0, 5e-3};

struct Extrapolation {
    std::optional<ProgramOutcome> outcome;
    std::string why_not;  // empty when outcome is set: the first quantity that was not affine
};

// The outcome at `levels.target` from the outcomes at its three levels. Timings are
// extrapolated when the three programs have the same operations, else left empty.
Extrapolation extrapolate(const std::array<ProgramOutcome, 3>& at, const Levels& levels, const Tolerance& tol);

// True when the issue, start and end times of all operations are in the same order (ties
// included, within `tie_ps`) at each level and in `target`. Two affine functions of m that are
// in the same order at two levels are in that order between them, so the discrete structure of
// the run (which operation waits for which, what overlaps) is the same over the whole range.
bool same_event_order(const std::array<ProgramOutcome, 3>& at, const ProgramOutcome& target, double tie_ps = 1.0);

// Least common multiple, or 0 when it would exceed `cap` (an unusable period).
std::uint64_t lcm_capped(std::uint64_t a, std::uint64_t b, std::uint64_t cap);

}  // namespace dmasim::sim
