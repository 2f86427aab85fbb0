#include "dmasim/app/band_fit.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <stdexcept>

#include "dmasim/core/draws.h"
#include "dmasim/core/results.h"

namespace dmasim::app {

namespace {

constexpr double kZ90 = 1.2815515655446004;  // N(0, 1)'s 90th percentile
constexpr double kMaxSigma = 2.0;            // model_error's upper bound
constexpr double kTolerance = 1e-4;

// Lease medians inside / counted, over the rows `take` accepts and the leases `use` accepts.
struct Count {
    std::size_t inside = 0, n = 0;
    double share() const { return n == 0 ? -1.0 : static_cast<double>(inside) / static_cast<double>(n); }
};

template <class RowPred, class LeasePred>
Count count(const std::vector<const BandFitRow*>& rows, double sigma, RowPred take, LeasePred use) {
    Count c;
    for (const BandFitRow* r : rows) {
        if (!take(*r)) continue;
        const auto [lo, hi] = widened(*r, sigma);
        for (const auto& [lease, v] : r->leases) {
            if (!use(lease)) continue;
            ++c.n;
            if (v >= lo && v <= hi) ++c.inside;
        }
    }
    return c;
}

// The least sigma whose band holds `target` of what `count_at(sigma)` counts: coverage only grows
// with sigma, so bisection finds it.
template <class CountAt>
double least_sigma(CountAt count_at, double target) {
    if (count_at(0.0).n == 0) return 0.0;
    if (count_at(0.0).share() >= target) return 0.0;
    if (count_at(kMaxSigma).share() < target) return kMaxSigma;
    double lo = 0.0, hi = kMaxSigma;
    while (hi - lo > kTolerance) {
        const double mid = 0.5 * (lo + hi);
        (count_at(mid).share() >= target ? hi : lo) = mid;
    }
    return hi;
}

double spread_of(const BandFitRow& r) {
    if (r.leases.size() < 2) return -1.0;
    std::vector<double> v;
    for (const auto& lv : r.leases) v.push_back(lv.second);
    const double med = core::percentile(v, 0.5);
    return med > 0.0 ? (core::percentile(v, 0.9) - core::percentile(v, 0.1)) / med * 100.0 : -1.0;
}

double median_or_zero(std::vector<double> v) { return v.empty() ? 0.0 : core::percentile(std::move(v), 0.5); }

// A row's spread as the machines' own p10-p90 would be: a sample of n leases has a p10-p90 of
// expected_p10_p90_width(n) / 2.5631 of the population's on average (0.80 for eight), and the
// band is a population's p10-p90.
double population_spread_of(const BandFitRow& r) {
    const double sp = spread_of(r);
    const double w = expected_p10_p90_width(r.leases.size());
    return sp >= 0.0 && w > 0.0 ? sp * (2.0 * kZ90) / w : -1.0;
}

}  // namespace

std::pair<double, double> widened(const BandFitRow& r, double sigma) {
    const double t = r.time_us;
    const double below = r.p10_us > 0.0 && r.p10_us < t ? std::log(t / r.p10_us) : 0.0;
    const double above = r.p90_us > t ? std::log(r.p90_us / t) : 0.0;
    const double s = kZ90 * sigma;
    return {t * std::exp(-std::hypot(below, s)), t * std::exp(std::hypot(above, s))};
}

BandFit fit_band(const std::vector<BandFitRow>& rows, double target) {
    if (!(target >= 0.5 && target <= 0.99)) throw std::invalid_argument("fit_band: target must be 0.5..0.99");
    BandFit out;
    out.target = target;
    std::map<std::string, std::vector<const BandFitRow*>> by_kind;
    for (const auto& r : rows) {
        if (!(r.time_us > 0.0) || r.leases.empty()) continue;
        by_kind[r.kind].push_back(&r);
    }
    const auto any_lease = [](const std::string&) { return true; };
    const auto is_train = [](const BandFitRow& r) { return r.train; };
    const auto is_held = [](const BandFitRow& r) { return !r.train; };
    const auto every = [](const BandFitRow&) { return true; };
    Count all_machines, all_train, all_held, all_lolo;
    std::vector<double> widths, spreads, population;
    for (const auto& [kind, kr] : by_kind) {
        BandKindFit k;
        k.kind = kind;
        for (const BandFitRow* r : kr) {
            (r->train ? k.train_rows : k.held_rows) += 1;
            k.values += r->leases.size();
        }
        k.sigma = k.train_rows == 0 ? -1.0 : least_sigma([&](double s) { return count(kr, s, is_train, any_lease); }, target);
        const double used = std::max(k.sigma, 0.0);
        const Count machines = count(kr, 0.0, is_train, any_lease);
        const Count train = count(kr, used, is_train, any_lease);
        const Count held = count(kr, used, is_held, any_lease);
        // Each lease left out: the sigma its band would have had without it, then its own medians.
        std::set<std::string> leases;
        for (const BandFitRow* r : kr) {
            for (const auto& lv : r->leases) leases.insert(lv.first);
        }
        Count lolo;
        if (leases.size() >= 2) {
            for (const auto& l : leases) {
                const auto others = [&](const std::string& x) { return x != l; };
                const double s =
                    k.train_rows == 0 ? 0.0 : least_sigma([&](double v) { return count(kr, v, is_train, others); }, target);
                const Count own = count(kr, s, every, [&](const std::string& x) { return x == l; });
                lolo.inside += own.inside;
                lolo.n += own.n;
            }
        }
        k.machines_only = machines.share();
        k.train = train.share();
        k.held_out_rows = held.share();
        k.held_out_leases = lolo.share();
        std::vector<double> w, m, mp;
        for (const BandFitRow* r : kr) {
            const auto [lo, hi] = widened(*r, used);
            w.push_back((hi - lo) / r->time_us * 100.0);
            if (const double sp = spread_of(*r); sp >= 0.0) m.push_back(sp);
            if (const double sp = population_spread_of(*r); sp >= 0.0) mp.push_back(sp);
        }
        k.band_width_pct = median_or_zero(w);
        k.measured_spread_pct = median_or_zero(m);
        k.population_spread_pct = median_or_zero(mp);
        widths.insert(widths.end(), w.begin(), w.end());
        spreads.insert(spreads.end(), m.begin(), m.end());
        population.insert(population.end(), mp.begin(), mp.end());
        const auto add = [](Count& sum, const Count& part) {
            sum.inside += part.inside;
            sum.n += part.n;
        };
        add(all_machines, machines);
        add(all_train, train);
        add(all_held, held);
        add(all_lolo, lolo);
        out.kinds.push_back(std::move(k));
    }
    out.machines_only = all_machines.share();
    out.train = all_train.share();
    out.held_out_rows = all_held.share();
    out.held_out_leases = all_lolo.share();
    out.band_width_pct = median_or_zero(widths);
    out.measured_spread_pct = median_or_zero(spreads);
    out.population_spread_pct = median_or_zero(population);
    return out;
}

double expected_p10_p90_width(std::size_t n) {
    if (n < 2) return 0.0;
    // Blom's approximation of the expected order statistics of N(0, 1): (i - 3/8) / (n + 1/4).
    std::vector<double> scores(n);
    for (std::size_t i = 0; i < n; ++i) {
        scores[i] = core::normal_quantile((static_cast<double>(i + 1) - 0.375) / (static_cast<double>(n) + 0.25));
    }
    return core::percentile_sorted(scores, 0.9) - core::percentile_sorted(scores, 0.1);
}

std::vector<HostSpreadGroup> fit_host_spread(const std::vector<SpreadRow>& rows) {
    constexpr std::size_t kMinLeases = 4;
    std::map<std::string, std::vector<double>> by_kind;
    for (const auto& r : rows) {
        std::string kind;
        if (r.variant.rfind("setup=", 0) == 0) {
            kind = r.variant;
        } else if (r.strategy == "pinned" && r.variant.empty() && r.size_bytes < 65536) {
            kind = "pinned <64KiB";
        } else if (r.strategy == "pageable" && r.variant.empty() && r.size_bytes >= 65536) {
            kind = "pageable >=64KiB";
        } else {
            continue;
        }
        std::vector<double> v;
        for (const double x : r.leases) {
            if (x > 0.0 && std::isfinite(x)) v.push_back(x);
        }
        if (v.size() < kMinLeases) continue;
        const double med = core::percentile(v, 0.5);
        std::vector<double> logs;
        for (const double x : v) logs.push_back(std::log(x / med));
        std::sort(logs.begin(), logs.end());
        by_kind[kind].push_back((core::percentile_sorted(logs, 0.9) - core::percentile_sorted(logs, 0.1)) / expected_p10_p90_width(logs.size()));
    }
    const std::vector<std::pair<std::string, std::vector<std::string>>> groups{
        {"calls", {"pinned <64KiB"}},
        {"cpu_copies", {"pageable >=64KiB"}},
        {"setup", {"setup=mallochost", "setup=freehost", "setup=register", "setup=unregister"}},
    };
    std::vector<HostSpreadGroup> out;
    for (const auto& [name, kinds] : groups) {
        HostSpreadGroup g;
        g.group = name;
        std::vector<double> sigmas;
        for (const auto& k : kinds) {
            const auto it = by_kind.find(k);
            if (it == by_kind.end()) continue;
            g.rows += it->second.size();
            const double s = core::percentile(it->second, 0.5);
            g.kinds.emplace_back(k, s);
            sigmas.push_back(s);
        }
        if (!sigmas.empty()) g.sigma = core::percentile(sigmas, 0.5);
        out.push_back(std::move(g));
    }
    return out;
}

namespace {

constexpr int kFitLeases = 300;
constexpr std::array<double, 4> kWeights{1.0, 1.0, 4.0, 0.25};  // p10, p90, p99, max

// The weighted squared log error of a stream's four statistics, the model's against the leases'.
double weighted_log_error(const std::array<double, 4>& model, const std::array<double, 4>& measured) {
    double total = 0.0;
    for (std::size_t k = 0; k < 4; ++k) total += kWeights[k] * std::pow(std::log(std::max(model[k], 1e-3) / measured[k]), 2);
    return total;
}

// The rms log error per weighted statistic of a loss summed over `streams` streams.
double rms_log_error(double loss, std::size_t streams) {
    double weights = 0.0;
    for (const double w : kWeights) weights += w;
    return std::sqrt(loss / (weights * static_cast<double>(streams)));
}

// Coordinate descent on a log scale: from `x`, each value scaled up and down in turn within
// [lo, hi], the step halved when none helps, until it is under 1 %. Returns the least loss.
template <std::size_t N, class Loss>
double descend(std::array<double, N>& x, const std::array<double, N>& lo, const std::array<double, N>& hi, const Loss& loss) {
    double best = loss(x);
    for (double step = 1.0; step > 0.01;) {
        bool improved = false;
        for (std::size_t i = 0; i < N; ++i) {
            for (const double f : {std::exp(step), std::exp(-step)}) {
                std::array<double, N> y = x;
                y[i] = std::clamp(y[i] * f, lo[i], hi[i]);
                const double v = loss(y);
                if (v < best) {
                    best = v;
                    x = y;
                    improved = true;
                }
            }
        }
        if (!improved) step /= 2.0;
    }
    return best;
}

// The model's statistics of one stream over kFitLeases simulated leases, from draws made once.
struct StreamDraws {
    const FrameStream* stream = nullptr;
    std::vector<double> e, u, x;  // kFitLeases x frames
    std::vector<double> z;        // the cold share's draws (pageable frames only)
    // A noisy machine's: the wake mode's uniform and normal, the copy stalls' count's uniform and
    // their lengths' normals (noisy streams only).
    std::vector<double> uw, zw, ub, zb1, zb2;
};

// A noisy machine's additions to a frame (NoisyHostFit's first six values), or none.
struct NoisyDraw {
    double wake_probability = 0.0, wake_us = 0.0, wake_sigma = 0.0, busy_interval_us = 0.0, busy_us = 0.0, busy_sigma = 0.0;
};

// The copy stalls of a frame whose CPU copy takes busy_us: Poisson(busy / interval) of them by
// inverse transform of `u`, their lengths from two normals (a third and later reuse the second:
// at the rates that fit, under one frame in ten thousand has three).
double busy_stalls(const NoisyDraw& n, double busy_us, double u, double z1, double z2) {
    if (!(n.busy_interval_us > 0.0) || !(n.busy_us > 0.0)) return 0.0;
    const double lambda = busy_us / n.busy_interval_us;
    double p = std::exp(-lambda), cdf = p, added = 0.0;
    for (int k = 0; u > cdf && k < 64; ++k) {
        added += n.busy_us * std::exp(n.busy_sigma * (k == 0 ? z1 : z2));
        p *= lambda / (k + 1);
        cdf += p;
    }
    return added;
}

// cold_us and cold_sigma: a pageable frame's excess over a warm copy, and how it is drawn.
std::array<double, 4> model_excess(const StreamDraws& d, const std::array<double, 5>& x, double idle_time_us,
                                   double p50_us, double cold_us = 0.0, double cold_sigma = 0.0,
                                   const NoisyDraw* noisy = nullptr, bool copies = false) {
    const auto frames = static_cast<std::size_t>(d.stream->frames);
    const double idle = std::max(0.0, d.stream->period_us - p50_us);
    const double idle_share = idle_time_us > 0.0 ? -std::expm1(-idle / idle_time_us) : 1.0;
    const double chance = x[2] * idle_share;
    std::array<std::vector<double>, 4> per_lease;
    std::vector<double> late(frames);
    for (int l = 0; l < kFitLeases; ++l) {
        const std::size_t at = static_cast<std::size_t>(l) * frames;
        for (std::size_t i = 0; i < frames; ++i) {
            late[i] = x[0] * std::expm1(x[1] * d.e[at + i]) + (d.u[at + i] < chance ? x[3] * std::exp(x[4] * d.x[at + i]) : 0.0);
            if (!d.z.empty()) late[i] += cold_us * std::expm1(cold_sigma * d.z[at + i]);
            if (noisy != nullptr && !d.uw.empty()) {
                if (d.uw[at + i] < noisy->wake_probability * idle_share) late[i] += noisy->wake_us * std::exp(noisy->wake_sigma * d.zw[at + i]);
                if (copies) late[i] += busy_stalls(*noisy, p50_us, d.ub[at + i], d.zb1[at + i], d.zb2[at + i]);
            }
        }
        std::sort(late.begin(), late.end());
        const double p50 = core::percentile_sorted(late, 0.5);
        per_lease[0].push_back(p50 - core::percentile_sorted(late, 0.1));
        per_lease[1].push_back(core::percentile_sorted(late, 0.9) - p50);
        per_lease[2].push_back(core::percentile_sorted(late, 0.99) - p50);
        per_lease[3].push_back(late.back() - p50);
    }
    std::array<double, 4> out{};
    for (std::size_t k = 0; k < 4; ++k) out[k] = core::percentile(per_lease[k], 0.5);
    return out;
}

// The median over a stream's leases of each lease's p50 - p10, p90 - p50, p99 - p50 and max - p50,
// and of its p50; false where one of them is not above zero.
bool stream_excess(const FrameStream& s, std::array<double, 4>& m, double& p50_us) {
    std::array<std::vector<double>, 4> ex;
    std::vector<double> p50;
    for (const auto& l : s.leases) {
        p50.push_back(l[1]);
        ex[0].push_back(l[1] - l[0]);
        ex[1].push_back(l[2] - l[1]);
        ex[2].push_back(l[3] - l[1]);
        ex[3].push_back(l[4] - l[1]);
    }
    bool usable = !p50.empty();
    for (std::size_t k = 0; k < 4 && usable; ++k) {
        m[k] = core::percentile(ex[k], 0.5);
        usable = m[k] > 0.0;
    }
    if (usable) p50_us = core::percentile(p50, 0.5);
    return usable;
}

// A stream's draws for kFitLeases simulated leases of its frame count; `cold`: the cold share's
// too, from draws of their own, as periodic frames draw them.
StreamDraws make_draws(const FrameStream& s, bool cold, bool noisy = false) {
    StreamDraws d;
    d.stream = &s;
    core::Draws rng(core::fnv1a(s.name) ^ 20261126ULL);
    const std::size_t n = static_cast<std::size_t>(kFitLeases) * static_cast<std::size_t>(s.frames);
    d.e.resize(n);
    d.u.resize(n);
    d.x.resize(n);
    for (std::size_t i = 0; i < n; ++i) {
        d.e[i] = rng.normal();
        d.u[i] = rng.uniform();
        d.x[i] = rng.normal();
    }
    if (cold) {
        core::Draws cold_rng(core::fnv1a(s.name) ^ 0xC01DC0DEULL);
        d.z.resize(n);
        for (auto& z : d.z) z = cold_rng.normal();
    }
    if (noisy) {
        core::Draws noisy_rng(core::fnv1a(s.name) ^ 0x57A11ULL);
        for (auto* v : {&d.uw, &d.zw, &d.ub, &d.zb1, &d.zb2}) v->resize(n);
        for (std::size_t i = 0; i < n; ++i) {
            d.uw[i] = noisy_rng.uniform();
            d.zw[i] = noisy_rng.normal();
            d.ub[i] = noisy_rng.uniform();
            d.zb1[i] = noisy_rng.normal();
            d.zb2[i] = noisy_rng.normal();
        }
    }
    return d;
}

}  // namespace

FrameJitterFit fit_frame_jitter(const std::vector<FrameStream>& streams, double idle_time_us) {
    std::vector<StreamDraws> draws;
    std::vector<std::array<double, 4>> measured;
    std::vector<double> p50s;
    for (const auto& s : streams) {
        if (s.leases.size() < 2 || s.frames < 10 || !(s.period_us > 0.0)) continue;
        std::array<double, 4> m{};
        double p50 = 0.0;
        if (!stream_excess(s, m, p50)) continue;
        StreamDraws d = make_draws(s, false);
        draws.push_back(std::move(d));
        measured.push_back(m);
        p50s.push_back(p50);
    }
    if (draws.empty()) throw std::invalid_argument("fit_frame_jitter: no stream of frames measured on two leases or more");
    const auto loss = [&](const std::array<double, 5>& x) {
        double total = 0.0;
        for (std::size_t s = 0; s < draws.size(); ++s) {
            const auto got = model_excess(draws[s], x, idle_time_us, p50s[s]);
            total += weighted_log_error(got, measured[s]);
        }
        return total;
    };
    // body (us), body_sigma, slow_probability, slow_time (us), slow_sigma: from a middling start.
    std::array<double, 5> x{15.0, 0.4, 0.03, 100.0, 1.0};
    const std::array<double, 5> lo{0.5, 0.01, 1e-4, 1.0, 0.05};
    // A slow mode wider than sigma 1.5 would be fitting single frames: the quiet machines' max frame
    // (one in 500) is now and then milliseconds late (a third, rarer mode the max alone shows),
    // and a sigma that reaches it puts a tenth of the runs' p99 there too.
    const std::array<double, 5> hi{200.0, 2.0, 1.0, 5000.0, 1.5};
    const double best = descend(x, lo, hi, loss);
    FrameJitterFit out;
    out.body_us = x[0];
    out.body_sigma = x[1];
    out.slow_probability = x[2];
    out.slow_us = x[3];
    out.slow_sigma = x[4];
    out.rms_log_error = rms_log_error(best, draws.size());
    for (std::size_t s = 0; s < draws.size(); ++s) {
        out.lines.push_back({draws[s].stream->name, measured[s], model_excess(draws[s], x, idle_time_us, p50s[s])});
    }
    return out;
}


double fit_cold_sigma(const FrameStream& s, const FrameJitterFit& jitter, double idle_time_us, double cold_us,
                      FrameJitterFit::Line& line) {
    std::array<double, 4> measured{};
    double p50_us = 0.0;
    if (s.leases.size() < 2 || s.frames < 10 || !(s.period_us > 0.0) || !stream_excess(s, measured, p50_us)) {
        throw std::invalid_argument("fit_cold_sigma: " + s.name + " is not measured on two leases or more");
    }
    if (!(cold_us > 0.0)) throw std::invalid_argument("fit_cold_sigma: " + s.name + " has no cold excess to draw");
    const StreamDraws d = make_draws(s, true);
    const std::array<double, 5> x{jitter.body_us, jitter.body_sigma, jitter.slow_probability, jitter.slow_us, jitter.slow_sigma};
    const auto loss = [&](double sigma) {
        const auto got = model_excess(d, x, idle_time_us, p50_us, cold_us, sigma);
        return weighted_log_error(got, measured);
    };
    // A grid on a log scale, then golden-section search around its best point.
    constexpr int kGrid = 40;
    const double lo = std::log(0.01), hi = std::log(3.0);
    int best = 0;
    double best_loss = loss(std::exp(lo));
    for (int i = 1; i <= kGrid; ++i) {
        const double v = loss(std::exp(lo + (hi - lo) * i / kGrid));
        if (v < best_loss) {
            best_loss = v;
            best = i;
        }
    }
    double a = lo + (hi - lo) * std::max(0, best - 1) / kGrid, b = lo + (hi - lo) * std::min(kGrid, best + 1) / kGrid;
    const double g = (std::sqrt(5.0) - 1.0) / 2.0;
    for (int it = 0; it < 40; ++it) {
        const double c = b - g * (b - a), e = a + g * (b - a);
        if (loss(std::exp(c)) < loss(std::exp(e))) {
            b = e;
        } else {
            a = c;
        }
    }
    const double sigma = std::exp((a + b) / 2.0);
    line = {s.name, measured, model_excess(d, x, idle_time_us, p50_us, cold_us, sigma)};
    return sigma;
}

std::vector<bool> noisy_leases(const std::vector<FrameStream>& pageable, std::size_t leases) {
    std::vector<bool> noisy(leases, false);
    std::vector<double> sum(leases, 0.0);
    std::vector<int> count(leases, 0);
    for (const auto& s : pageable) {
        for (std::size_t k = 0; k < s.leases.size() && k < s.lease.size(); ++k) {
            const auto& l = s.leases[k];
            if (s.lease[k] >= leases || !(l[1] > 0.0) || !(l[3] > 0.0)) continue;
            sum[s.lease[k]] += std::log(l[3] / l[1]);
            ++count[s.lease[k]];
        }
    }
    std::vector<std::pair<double, std::size_t>> scores;
    for (std::size_t i = 0; i < leases; ++i) {
        if (count[i] > 0) scores.emplace_back(sum[i] / count[i], i);
    }
    constexpr std::size_t kMinLeases = 4;
    if (scores.size() < kMinLeases) return noisy;
    std::sort(scores.begin(), scores.end());
    std::size_t cut = 0;
    double widest = 0.0;
    for (std::size_t i = 1; i < scores.size(); ++i) {
        if (scores[i].first - scores[i - 1].first > widest) {
            widest = scores[i].first - scores[i - 1].first;
            cut = i;
        }
    }
    if (widest < std::log(kNoisyGap)) return noisy;
    for (std::size_t i = cut; i < scores.size(); ++i) noisy[scores[i].second] = true;
    return noisy;
}

FrameStream leases_of_kind(const FrameStream& s, const std::vector<bool>& noisy, bool which) {
    FrameStream out{s.name, s.period_us, s.frames, {}, {}};
    for (std::size_t k = 0; k < s.leases.size(); ++k) {
        const bool is_noisy = k < s.lease.size() && s.lease[k] < noisy.size() && noisy[s.lease[k]];
        if (is_noisy != which) continue;
        out.leases.push_back(s.leases[k]);
        if (k < s.lease.size()) out.lease.push_back(s.lease[k]);
    }
    return out;
}

NoisyHostFit fit_noisy_host(const std::vector<FrameStream>& pinned, const std::vector<FrameStream>& pageable,
                            const std::vector<std::tuple<std::string, double, double>>& cold, const FrameJitterFit& quiet,
                            double idle_time_us) {
    struct Fitted {
        StreamDraws draws;
        std::array<double, 4> measured{};
        double p50 = 0.0, cold_us = 0.0, cold_sigma = 0.0;
        bool copies = false;
    };
    std::vector<Fitted> fitted;
    const auto add = [&](const FrameStream& s, bool copies) {
        if (s.leases.size() < 2 || s.frames < 10 || !(s.period_us > 0.0)) return;
        Fitted f;
        if (!stream_excess(s, f.measured, f.p50)) return;
        f.copies = copies;
        if (copies) {
            for (const auto& [name, cold_us, sigma] : cold) {
                if (name == s.name) {
                    f.cold_us = cold_us;
                    f.cold_sigma = sigma;
                }
            }
        }
        f.draws = make_draws(s, copies, true);
        fitted.push_back(std::move(f));
    };
    // The draws point at their streams: keep copies that outlive this function's loop.
    std::vector<FrameStream> streams(pinned.begin(), pinned.end());
    streams.insert(streams.end(), pageable.begin(), pageable.end());
    fitted.reserve(streams.size());
    for (std::size_t i = 0; i < streams.size(); ++i) add(streams[i], i >= pinned.size());
    if (fitted.empty()) throw std::invalid_argument("fit_noisy_host: no stream of frames measured on two noisy leases or more");
    const std::array<double, 5> q{quiet.body_us, quiet.body_sigma, quiet.slow_probability, quiet.slow_us, quiet.slow_sigma};
    const auto as_draw = [](const std::array<double, 6>& y) { return NoisyDraw{y[0], y[1], y[2], y[3], y[4], y[5]}; };
    const auto excess = [&](const Fitted& f, const std::array<double, 6>& y) {
        const NoisyDraw n = as_draw(y);
        return model_excess(f.draws, q, idle_time_us, f.p50, f.cold_us, f.cold_sigma, &n, f.copies);
    };
    const auto loss = [&](const std::array<double, 6>& y) {
        double total = 0.0;
        for (const auto& f : fitted) {
            const auto got = excess(f, y);
            total += weighted_log_error(got, f.measured);
        }
        return total;
    };
    // wake_probability, wake (us), wake_sigma, busy_interval (us), busy (us), busy_sigma.
    std::array<double, 6> y{0.02, 300.0, 0.5, 30000.0, 1500.0, 0.4};
    const std::array<double, 6> lo{1e-4, 5.0, 0.05, 100.0, 5.0, 0.05};
    const std::array<double, 6> hi{0.5, 20000.0, 3.0, 1e7, 50000.0, 3.0};
    const double best = descend(y, lo, hi, loss);
    NoisyHostFit out;
    out.wake_probability = y[0];
    out.wake_us = y[1];
    out.wake_sigma = y[2];
    out.busy_interval_us = y[3];
    out.busy_us = y[4];
    out.busy_sigma = y[5];
    out.rms_log_error = rms_log_error(best, fitted.size());
    for (const auto& f : fitted) out.lines.push_back({f.draws.stream->name, f.measured, excess(f, y)});
    return out;
}

}  // namespace dmasim::app
