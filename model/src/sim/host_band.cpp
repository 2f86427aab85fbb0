#include "dmasim/sim/host_band.h"

#include "dmasim/core/results.h"
#include "dmasim/strategies/registry.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace dmasim::sim {

namespace {

core::Duration scaled(core::Duration d, double f) {
    return core::Duration{static_cast<std::int64_t>(std::llround(static_cast<double>(d.ps) * f))};
}

// A row that takes the machines' band: the case gave it no spread of its own.
bool takes_band(const RowResult& r) {
    return r.status == "ok" && r.p10_ps == r.time_ps && r.p90_ps == r.time_ps && r.min_ps == r.time_ps &&
           r.max_ps == r.time_ps;
}

// Through (z_lo, lo), (0, t0), (z_hi, hi) with z_lo = -z_hi: t0 + a (exp(s z) - 1), which the
// three fix when the row grows with z on both sides (e^(s z_hi) = (hi - t0) / (t0 - lo)); else
// the two straight pieces.
double through_three(double z, double z_hi, double lo, double t0, double hi) {
    const double up = hi - t0, down = t0 - lo;
    if (up > 0.0 && down > 0.0) {
        const double s = std::log(up / down) / z_hi;
        if (std::abs(s * z_hi) < 1e-9) return t0 + up * z / z_hi;
        return t0 + up * std::expm1(s * z) / std::expm1(s * z_hi);
    }
    return z >= 0.0 ? t0 + up * z / z_hi : t0 + down * z / z_hi;
}

}  // namespace

config::ModelParams host_draw(const config::ModelParams& nominal, double z) {
    config::ModelParams p = nominal;
    const config::HostSpreadParams& s = nominal.host_spread;
    const double calls = std::exp(s.calls * z);
    for (core::Duration* d : {&p.runtime.call_overhead, &p.runtime.sync_latency, &p.runtime.kernel_launch_latency,
                              &p.runtime.peer_call, &p.runtime.peer_gpu_call, &p.runtime.peer_staged_call,
                              &p.runtime.peer_staged_piece_call, &p.runtime.record_call, &p.runtime.stream_wait_call,
                              &p.runtime.cross_device_wait_call, &p.runtime.set_device_call, &p.cpu.register_first_copy}) {
        *d = scaled(*d, calls);
    }
    const double copies = std::exp(s.cpu_copies * z);
    p.cpu.memcpy_bandwidth.bytes_per_s /= copies;
    p.cpu.memcpy_bandwidth_cached.bytes_per_s /= copies;
    p.cpu.memcpy_bandwidth_cold.bytes_per_s /= copies;
    p.cpu.copy_out_bandwidth.bytes_per_s /= copies;  // 0 (memcpy_bandwidth_cached's) stays 0
    p.cpu.zero_page_bandwidth.bytes_per_s /= copies;  // 0 (an old source's rates) stays 0
    p.pageable.unaligned_pass_bandwidth.bytes_per_s /= copies;  // the CPU's pass over an unaligned destination
    // The kernel's work on a page, whether it pins one or faults one in (first touch): the leases
    // whose page faults cost more are those whose pinning and allocation do (docs/model.md).
    const double setup = std::exp(s.setup * z);
    for (core::Duration* d : {&p.cpu.register_fixed, &p.cpu.register_per_page, &p.cpu.unregister_fixed,
                              &p.cpu.unregister_per_page, &p.cpu.alloc_pinned_pool_fixed, &p.cpu.alloc_pinned_fixed,
                              &p.cpu.alloc_pinned_per_page, &p.cpu.alloc_pinned_cold_per_page, &p.cpu.first_touch_read,
                              &p.cpu.first_touch_write}) {
        *d = scaled(*d, setup);
    }
    return p;
}

std::vector<double> host_quantiles(std::int64_t draws) {
    if (draws < 1) throw std::invalid_argument("host_quantiles: draws must be at least 1");
    std::vector<double> z(static_cast<std::size_t>(draws));
    for (std::int64_t i = 0; i < draws; ++i) {
        z[static_cast<std::size_t>(i)] = core::normal_quantile((static_cast<double>(i) + 0.5) / static_cast<double>(draws));
    }
    // Exactly symmetric, so that the middle one of an odd count is the nominal machine.
    for (std::size_t i = 0; i < z.size() / 2; ++i) {
        z[i] = -z[z.size() - 1 - i];
    }
    if (z.size() % 2 == 1) z[z.size() / 2] = 0.0;
    return z;
}

double band_quantile(std::vector<double> values, double q) {
    if (values.empty()) throw std::invalid_argument("band_quantile: no values");
    std::sort(values.begin(), values.end());
    const std::vector<double> z = host_quantiles(static_cast<std::int64_t>(values.size()));
    // Linear in z between the machines around Phi^-1(q): a row whose time is linear in the
    // host's speed gets exactly the normal's quantile, which interpolating in rank would not.
    const double at = core::normal_quantile(q);
    if (at <= z.front()) return values.front();
    if (at >= z.back()) return values.back();
    const auto hi = static_cast<std::size_t>(std::upper_bound(z.begin(), z.end(), at) - z.begin());
    const std::size_t lo = hi - 1;
    return values[lo] + (values[hi] - values[lo]) * (at - z[lo]) / (z[hi] - z[lo]);
}

const char* to_string(BandMethod m) {
    switch (m) {
        case BandMethod::kNone: return "none";
        case BandMethod::kScreened: return "screened";
        case BandMethod::kInterpolated: return "interpolated";
        case BandMethod::kDrawn: return "drawn";
        case BandMethod::kAnalytic: return "analytic";
        case BandMethod::kBounded: return "bounded";
    }
    return "?";
}

namespace {

// A setup row (cudaMallocHost, cudaHostRegister, cudaHostUnregister) is the sum of setup costs
// alone, every one of them scaled by exp(host_spread.setup z) on a machine: its band is known
// without simulating the machine, and it says nothing of how the case's other rows move.
bool setup_row(const RowResult& r) { return r.variant.rfind("setup=", 0) == 0; }

// The band of machines alone (host_spread).
BandedCase machines_band(Simulator& sim, const config::ModelParams& p, const CaseSpec& spec) {
    BandedCase out;
    out.result = sim.run(p, spec);
    if (p.host_spread.deterministic()) return out;
    std::vector<std::size_t> banded, setup;
    for (std::size_t i = 0; i < out.result.rows.size(); ++i) {
        if (!takes_band(out.result.rows[i])) continue;
        (setup_row(out.result.rows[i]) ? setup : banded).push_back(i);
    }
    if (banded.empty() && setup.empty()) return out;
    out.banded.assign(out.result.rows.size(), false);
    for (const std::size_t i : banded) out.banded[i] = true;
    for (const std::size_t i : setup) out.banded[i] = true;

    // With fewer than three draws there is no slowest machine apart from the nominal one.
    const std::vector<double> z = host_quantiles(std::max<std::int64_t>(p.host_spread.draws, 3));
    out.machines = static_cast<int>(z.size());
    const double z_hi = z.back();
    const auto set_band = [&](RowResult& r, const std::vector<double>& on_machines) {
        r.p10_ps = band_quantile(on_machines, 0.1);
        r.p90_ps = band_quantile(on_machines, 0.9);
        r.min_ps = *std::min_element(on_machines.begin(), on_machines.end());
        r.max_ps = *std::max_element(on_machines.begin(), on_machines.end());
    };
    for (const std::size_t i : setup) {
        RowResult& r = out.result.rows[i];
        std::vector<double> on_machines;
        for (const double zd : z) on_machines.push_back(r.time_ps * std::exp(p.host_spread.setup * zd));
        set_band(r, on_machines);
    }
    if (banded.empty()) {
        out.method = BandMethod::kAnalytic;
        return out;
    }

    // times[d][k]: row banded[k] on machine d.
    std::vector<std::vector<double>> times(z.size());
    const auto take = [&](std::size_t d, const CaseResult& r) {
        if (r.rows.size() != out.result.rows.size()) {
            throw SimulationError(spec.origin + ": " + spec.strategy + " gave " + std::to_string(r.rows.size()) +
                                  " rows on a drawn machine and " + std::to_string(out.result.rows.size()) +
                                  " on the nominal one");
        }
        for (const std::size_t i : banded) times[d].push_back(r.rows[i].time_ps);
        ++out.runs;
    };
    const auto on_machine = [&](std::size_t d) { take(d, sim.run(host_draw(p, z[d]), spec)); };
    std::vector<double> nominal;
    for (const std::size_t i : banded) nominal.push_back(out.result.rows[i].time_ps);

    // A strategy whose rows have at most host_calls calls, waits and launches on their critical
    // path, and no other host cost: on the machine at z its row is at most their nominal sum times
    // exp(sigma_calls z) - 1 slower. Where that is under the screen on the slowest machine for
    // every row, the band is that bound, and no machine is simulated.
    const strategies::Strategy* strategy = strategies::find(spec.strategy);
    if (strategy != nullptr && strategy->host_calls > 0) {
        const config::RuntimeParams& rt = p.runtime;
        const double per_call = static_cast<double>(std::max({rt.call_overhead.ps, rt.sync_latency.ps, rt.kernel_launch_latency.ps}));
        const double host_ps = strategy->host_calls * per_call;
        const auto extra = [&](double zd) { return host_ps * std::expm1(p.host_spread.calls * zd); };
        const bool bounded = std::all_of(nominal.begin(), nominal.end(),
                                         [&](double t) { return t > 0.0 && extra(z_hi) < p.host_spread.screen * t; });
        if (bounded) {
            out.method = BandMethod::kBounded;
            for (std::size_t k = 0; k < banded.size(); ++k) {
                std::vector<double> on_machines;
                for (const double zd : z) on_machines.push_back(nominal[k] + extra(zd));
                set_band(out.result.rows[banded[k]], on_machines);
            }
            return out;
        }
    }

    on_machine(z.size() - 1);
    double moved = 0.0;
    for (std::size_t k = 0; k < banded.size(); ++k) {
        if (nominal[k] > 0.0) moved = std::max(moved, std::abs(times.back()[k] - nominal[k]) / nominal[k]);
    }
    std::vector<std::vector<double>> per_row(banded.size(), std::vector<double>(z.size()));
    if (moved < p.host_spread.screen) {
        out.method = BandMethod::kScreened;
        for (std::size_t k = 0; k < banded.size(); ++k) {
            for (std::size_t d = 0; d < z.size(); ++d) {
                per_row[k][d] = nominal[k] + (times.back()[k] - nominal[k]) * z[d] / z_hi;
            }
        }
    } else if (out.result.tlps() > static_cast<std::uint64_t>(p.host_spread.full_draw_tlps)) {
        out.method = BandMethod::kInterpolated;
        on_machine(0);
        for (std::size_t k = 0; k < banded.size(); ++k) {
            for (std::size_t d = 0; d < z.size(); ++d) {
                per_row[k][d] = through_three(z[d], z_hi, times.front()[k], nominal[k], times.back()[k]);
            }
        }
    } else {
        out.method = BandMethod::kDrawn;
        for (std::size_t d = 0; d + 1 < z.size(); ++d) {
            if (z[d] == 0.0) {
                times[d] = nominal;
            } else {
                on_machine(d);
            }
        }
        for (std::size_t k = 0; k < banded.size(); ++k) {
            for (std::size_t d = 0; d < z.size(); ++d) per_row[k][d] = times[d][k];
        }
    }
    for (std::size_t k = 0; k < banded.size(); ++k) set_band(out.result.rows[banded[k]], per_row[k]);
    return out;
}

// The model's own error (config::ModelErrorParams) on top of the machines' band: independent of
// the machine, so the two add in log space, side by side below and above the row's time. min/max
// take it at the extreme machines' quantile, so they stay outside p10/p90.
void widen_by_model_error(BandedCase& out, const config::ModelParams& p, const CaseSpec& spec) {
    out.model_error.assign(out.result.rows.size(), 0.0);
    if (out.banded.empty()) out.banded.assign(out.result.rows.size(), false);
    const double z90 = core::normal_quantile(0.9);
    const double z_end = host_quantiles(std::max<std::int64_t>(p.host_spread.draws, 3)).back();
    for (std::size_t i = 0; i < out.result.rows.size(); ++i) {
        RowResult& r = out.result.rows[i];
        const double sigma = p.model_error.of(spec.strategy, r.variant, spec.bytes);
        if (sigma <= 0.0 || r.status != "ok" || !(r.time_ps > 0.0)) continue;
        // Periodic frames keep their spread as it is: their jitter is fitted with the band
        // (frame_jitter), no model_error kind is fitted to them. A duplex pair's spread over the
        // gate's phases is the machines' (their calls set the phase), and the model's error adds
        // to it as to theirs, as the calibration's band fit assumes.
        if (!out.banded[i] && !takes_band(r) && spec.strategy == "periodic") continue;
        const double t = r.time_ps;
        const auto below = [&](double v, double z) {
            const double l = v > 0.0 && v < t ? std::log(t / v) : 0.0;
            return t * std::exp(-std::hypot(l, z * sigma));
        };
        const auto above = [&](double v, double z) {
            const double u = v > t ? std::log(v / t) : 0.0;
            return t * std::exp(std::hypot(u, z * sigma));
        };
        r.p10_ps = below(r.p10_ps, z90);
        r.p90_ps = above(r.p90_ps, z90);
        r.min_ps = below(r.min_ps, z_end);
        r.max_ps = above(r.max_ps, z_end);
        out.banded[i] = true;
        out.model_error[i] = sigma;
    }
}

}  // namespace

BandedCase run_with_host_band(Simulator& sim, const config::ModelParams& p, const CaseSpec& spec) {
    BandedCase out = machines_band(sim, p, spec);
    widen_by_model_error(out, p, spec);
    return out;
}

}  // namespace dmasim::sim
