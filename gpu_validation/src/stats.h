// Statistics over timed repetitions, the repetition loop with its time budget, and the
// construction of result rows (dmasim's results schema, source=hw). Plain C++: unit-tested
// without a GPU.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "dmasim/core/results.h"
#include "spec.h"

namespace dmaprobe {

// Repetitions are never reduced below this (nor below the plan's own number when smaller).
inline constexpr int kMinRepetitions = 5;

struct Summary {
    int n = 0;
    double median = 0, p10 = 0, p90 = 0, min = 0, max = 0;  // microseconds
    double cv = 0;  // coefficient of variation: sample standard deviation / mean (0 for n < 2)
    std::vector<double> samples;  // the repetitions as given, in the order they ran
};

// Median, p10/p90 (linear interpolation, dmasim::core::percentile), min, max and the
// coefficient of variation. Throws std::logic_error on an empty sample: a row is never
// written without measurements.
Summary summarize(const std::vector<double>& samples_us);

// How many timed repetitions to run after the first one took `first_rep_s` seconds (its whole
// cost: data preparation, transfer, bookkeeping). With `fixed` or `budget_s` <= 0, `requested`.
// Otherwise reduced to what fits in the budget, but not below min(requested, kMinRepetitions).
int reduced_repetitions(int requested, double first_rep_s, double budget_s, bool fixed);

// Runs spec.warmup untimed and then the timed repetitions: rep(rep_number, timed) where
// rep_number counts from 0 over warm-ups and timed ones (use it for data seeds). The number of
// timed repetitions may be reduced after the first one (reduced_repetitions); `note` then gets
// a sentence saying so. Returns the number of timed repetitions run.
int run_repetitions(const MeasurementSpec& spec, double budget_s, std::string* note,
                    const std::function<void(int rep_number, bool timed)>& rep);

// "a;b" from the plan's variant and the harness's sub-row label; either may be empty.
std::string join_variant(const std::string& plan_variant, const std::string& harness_variant);

// A measured row: scenario/strategy/direction/size from the spec, times from the summary,
// source=hw, status=ok.
dmasim::core::ResultRow make_row(const MeasurementSpec& spec, const std::string& harness_variant,
                                 const Summary& s, const std::string& note = {});

// A row for a case that was not measured: status=skipped, times 0, repetitions 0, reason in note.
dmasim::core::ResultRow skipped_row(const MeasurementSpec& spec, const std::string& reason);

// Periodic (real-time stream) results: per-frame latency from release to completion.
struct PeriodicStats {
    Summary latency;
    double p99 = 0;
    int frames = 0;
    int misses = 0;  // frames whose latency exceeded the deadline
    double deadline_us = 0;
};
PeriodicStats periodic_stats(const std::vector<double>& latencies_us, double deadline_us);
// The three rows: "" (p50 and spread), "p99" and "misses" (docs/harness.md).
std::vector<dmasim::core::ResultRow> periodic_rows(const MeasurementSpec& spec, const PeriodicStats& st,
                                                   const std::string& note = {});

// Sample standard deviation (n - 1) over the mean; 0 for fewer than two samples or a mean
// that is not positive (no spread can be stated relative to it).
double coefficient_of_variation(const std::vector<double>& samples);

// "%.3g"-style short number for notes.
std::string short_number(double v);

}  // namespace dmaprobe
