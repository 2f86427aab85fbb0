#include "stats.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <stdexcept>

namespace dmaprobe {

using dmasim::core::ResultRow;

Summary summarize(const std::vector<double>& samples) {
    if (samples.empty()) throw std::logic_error("summarize: no samples");
    Summary s;
    s.n = static_cast<int>(samples.size());
    s.median = dmasim::core::percentile(samples, 0.5);
    s.p10 = dmasim::core::percentile(samples, 0.1);
    s.p90 = dmasim::core::percentile(samples, 0.9);
    const auto [lo, hi] = std::minmax_element(samples.begin(), samples.end());
    s.min = *lo;
    s.max = *hi;
    s.cv = coefficient_of_variation(samples);
    s.samples = samples;
    return s;
}

double coefficient_of_variation(const std::vector<double>& samples) {
    if (samples.size() < 2) return 0.0;
    const double n = static_cast<double>(samples.size());
    double mean = 0.0;
    for (double v : samples) mean += v;
    mean /= n;
    if (!(mean > 0.0)) return 0.0;
    // Two passes: the one-pass sum of squares loses the spread of microsecond samples that
    // sit far from zero.
    double ss = 0.0;
    for (double v : samples) ss += (v - mean) * (v - mean);
    return std::sqrt(ss / (n - 1.0)) / mean;
}

int reduced_repetitions(int requested, double first_rep_s, double budget_s, bool fixed) {
    if (fixed || budget_s <= 0.0 || requested <= kMinRepetitions) return requested;
    if (first_rep_s <= 0.0 || first_rep_s * requested <= budget_s) return requested;
    const int fit = static_cast<int>(std::floor(budget_s / first_rep_s));
    return std::max(kMinRepetitions, std::min(requested, fit));
}

int run_repetitions(const MeasurementSpec& spec, double budget_s, std::string* note,
                    const std::function<void(int, bool)>& rep) {
    int number = 0;
    for (int w = 0; w < spec.warmup; ++w) rep(number++, false);
    int total = spec.repetitions;
    for (int i = 0; i < total; ++i) {
        const auto t0 = std::chrono::steady_clock::now();
        rep(number++, true);
        if (i == 0) {
            const double first = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
            const int reduced = reduced_repetitions(spec.repetitions, first, budget_s, spec.repetitions_fixed);
            if (reduced != total && note != nullptr) {
                if (!note->empty()) *note += "; ";
                *note += "repetitions reduced from " + std::to_string(spec.repetitions) + " to " +
                         std::to_string(reduced) + " (one took " + short_number(first * 1e3) +
                         " ms; budget " + short_number(budget_s * 1e3) + " ms per row)";
            }
            total = reduced;
        }
    }
    return total;
}

std::string join_variant(const std::string& plan_variant, const std::string& harness_variant) {
    if (plan_variant.empty()) return harness_variant;
    if (harness_variant.empty()) return plan_variant;
    return plan_variant + ";" + harness_variant;
}

ResultRow make_row(const MeasurementSpec& spec, const std::string& harness_variant, const Summary& s,
                   const std::string& note) {
    ResultRow r;
    r.scenario = spec.scenario;
    r.strategy = to_string(spec.strategy);
    r.direction = to_string(spec.direction);
    r.directions = spec.directions();
    r.size_bytes = spec.size_bytes;
    r.time_us = s.median;
    r.source = "hw";
    r.repetitions = s.n;
    r.p10_us = s.p10;
    r.p90_us = s.p90;
    r.min_us = s.min;
    r.max_us = s.max;
    r.cv = s.cv;
    r.samples_us = s.samples;
    r.variant = join_variant(spec.variant, harness_variant);
    r.status = "ok";
    r.note = note;
    return r;
}

ResultRow skipped_row(const MeasurementSpec& spec, const std::string& reason) {
    ResultRow r;
    r.scenario = spec.scenario;
    r.strategy = to_string(spec.strategy);
    r.direction = to_string(spec.direction);
    r.directions = spec.directions();
    r.size_bytes = spec.size_bytes;
    r.source = "hw";
    r.repetitions = 0;
    r.variant = spec.variant;
    r.status = "skipped";
    r.note = reason;
    return r;
}

PeriodicStats periodic_stats(const std::vector<double>& latencies_us, double deadline_us) {
    PeriodicStats st;
    st.latency = summarize(latencies_us);
    st.p99 = dmasim::core::percentile(latencies_us, 0.99);
    st.frames = static_cast<int>(latencies_us.size());
    st.deadline_us = deadline_us;
    st.misses = static_cast<int>(
        std::count_if(latencies_us.begin(), latencies_us.end(), [&](double v) { return v > deadline_us; }));
    return st;
}

std::vector<ResultRow> periodic_rows(const MeasurementSpec& spec, const PeriodicStats& st,
                                     const std::string& note) {
    const std::string misses = "misses=" + std::to_string(st.misses) + " frames=" + std::to_string(st.frames) +
                               " deadline_us=" + short_number(st.deadline_us);
    auto with = [&](const std::string& first) { return note.empty() ? first : first + "; " + note; };
    std::vector<ResultRow> rows;
    rows.push_back(make_row(spec, "", st.latency, with("latency from release to completion, p50; " + misses)));
    ResultRow p99 = make_row(spec, "p99", st.latency, "latency from release to completion, p99");
    p99.time_us = st.p99;
    p99.samples_us.clear();  // the same frames as the p50 row, which keeps them
    rows.push_back(p99);
    ResultRow miss = make_row(spec, "misses", st.latency,
                              misses + "; time_us is the deadline, spread columns are the latency's");
    miss.time_us = st.deadline_us;
    miss.samples_us.clear();
    rows.push_back(miss);
    return rows;
}

std::string short_number(double v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.4g", v);
    return buf;
}

}  // namespace dmaprobe
