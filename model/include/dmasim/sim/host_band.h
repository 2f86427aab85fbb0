// The band a case's rows fall in across machines of one kind: the host's costs differ from
// machine to machine (config::HostSpreadParams), the link's physics does not. A machine is a
// host-speed quantile z; its host-side costs are the nominal ones times exp(sigma * z) of their
// group. The nominal machine (z = 0) is the median one, so a row's time stays what a
// deterministic run gives, and its p10/p90/min/max become those of `draws` machines at the
// quantiles (i + 0.5) / draws. docs/model.md, "Host variation between machines".
#pragma once

#include <cstdint>
#include <vector>

#include "dmasim/config/params.h"
#include "dmasim/sim/simulator.h"

namespace dmasim::sim {

// `nominal` on the machine at host-speed quantile z: each host-side cost times exp(sigma * z)
// of its group (rates divided by it). Everything else is left as it is.
config::ModelParams host_draw(const config::ModelParams& nominal, double z);

// The standard normal quantiles of `draws` machines, (i + 0.5) / draws for i = 0..draws-1:
// ascending, symmetric, and 0 in the middle when `draws` is odd.
std::vector<double> host_quantiles(std::int64_t draws);

// The q-quantile of values taken on the machines host_quantiles(values.size()), sorted: linear in
// z between the two machines around Phi^-1(q), the extreme ones beyond them.
double band_quantile(std::vector<double> values, double q);

// How a case's band was found.
enum class BandMethod : std::uint8_t {
    kNone,        // deterministic (every sigma 0), or no row without a spread of its own
    kScreened,    // link-bound: from the slowest draw alone (host_spread.screen)
    kInterpolated,// host-bound but large (more than host_spread.full_draw_tlps): from the fastest and slowest draws
    kDrawn,       // every draw simulated
    kAnalytic,    // setup rows alone: their band is their setup costs' (no run)
    kBounded,     // link-bound by a bound on its host calls (strategies::Strategy::host_calls; no run)
};
const char* to_string(BandMethod m);

struct BandedCase {
    CaseResult result;  // the nominal machine's, with its rows' band
    BandMethod method = BandMethod::kNone;
    int runs = 1;       // simulations it took, the nominal one included
    int machines = 1;   // machines the band is taken over (1: none)
    std::vector<bool> banded;  // per row of `result`: its p10/p90/min/max are the machines' band
    std::vector<double> model_error;  // per row: the model_error sigma its band was widened by (0: none)
};

// Runs `spec` on the nominal machine and, unless p.host_spread is all zero, on drawn ones. Rows
// with a spread of their own (periodic frames: p10 < p90) and rows that are not "ok" keep theirs.
// Setup rows (variant "setup=...") are their setup costs alone: on the machine at z, their time
// times exp(host_spread.setup z), with no run; the rest of the case is banded as follows.
//   - Bounded: a strategy that declares its host calls (strategies::Strategy::host_calls), whose
//     rows their nominal cost times exp(sigma_calls z) - 1 moves by less than host_spread.screen
//     on the slowest machine: the band is that bound (an upper one), with no run.
//   - Screened: when no row moves by host_spread.screen on the slowest machine, the host's part
//     of each row is small, and the band follows that one run, linear in z.
//   - Interpolated: a case of more TLPs than host_spread.full_draw_tlps runs on the fastest and
//     the slowest machines too, and each row's band is the curve t0 + a (exp(s z) - 1) through
//     the three (one group's costs on an unchanged critical path follow it exactly).
//   - Drawn: otherwise every machine is simulated (small cases are cheap; this is also what a
//     polled interval, whose time is not monotone in the host's speed, needs).
// Then each row's p.model_error sigma (by its kind) widens its band: in log space, below and above
// the row's time, sqrt(machines^2 + (z sigma)^2) with z the quantile's (1.28 for p10/p90, the
// extreme machine's for min/max). The row's time never moves.
BandedCase run_with_host_band(Simulator& sim, const config::ModelParams& p, const CaseSpec& spec);

}  // namespace dmasim::sim
