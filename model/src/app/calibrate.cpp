// dmasim calibrate: fits the model's free parameters to measured rows with NLopt (BOBYQA),
// minimising the mean squared log of predicted / measured time, and reports the error on rows
// it was not fitted to. Link physics from the specification is never among the free
// parameters.
#include <fmt/format.h>
#include <nlopt.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <numeric>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <string_view>

#include "dmasim/app/band_fit.h"
#include "dmasim/app/commands.h"
#include "dmasim/app/leases.h"
#include "dmasim/app/mpi.h"
#include "dmasim/app/parallel.h"
#include "dmasim/config/param_io.h"
#include "dmasim/core/error.h"
#include "dmasim/core/units.h"

namespace dmasim::app {

namespace {

// The free parameters and their bounds, in one place (docs/calibration.md lists them).
// Every one is a platform or software property; none is PCIe link physics.
struct FreeParam {
    const char* key;
    double lower;  // picoseconds for times, bytes/s for bandwidths
    double upper;
    bool bandwidth;
    // Fitted after the main fit, to the median frame of the streams of pageable frames
    // (fit_cold_rate), not by the optimiser.
    bool after_fit = false;
};

constexpr const char* kKernelLaunchKey = "runtime.kernel_launch_latency";

const std::vector<FreeParam>& free_params() {
    static const std::vector<FreeParam> params{
        {"runtime.call_overhead", 0.5e6, 20e6, false},
        {"runtime.sync_latency", 0.1e6, 10e6, false},
        {"runtime.kernel_launch_latency", 0.5e6, 20e6, false},
        {"runtime.stream_wait_latency", 0.1e6, 10e6, false},
        {"dma.launch_latency", 0.1e6, 10e6, false},
        {"root_complex.forward_latency", 20e3, 1e6, false},
        {"host_memory.latency", 50e3, 1e6, false},
        {"cpu.memcpy_bandwidth", 2e9, 60e9, true},
        {"cpu.memcpy_bandwidth_cached", 5e9, 100e9, true},
        {"cpu.copy_out_bandwidth", 5e9, 100e9, true},
        {"cpu.memcpy_bandwidth_cold", 1e9, 60e9, true, true},
        {"cpu.register_fixed", 1e6, 1e9, false},
        {"cpu.register_per_page", 5e3, 5e6, false},
        {"cpu.unregister_fixed", 1e6, 1e9, false},
        {"cpu.unregister_per_page", 5e3, 5e6, false},
        {"cpu.register_first_copy", 0.1e6, 20e6, false},
        {"cpu.alloc_pinned_pool_fixed", 0.5e6, 1e9, false},
        {"cpu.alloc_pinned_fixed", 0.5e6, 1e9, false},
        {"cpu.alloc_pinned_per_page", 5e3, 5e6, false},
        {"cpu.alloc_pinned_cold_per_page", 5e3, 5e6, false},
    };
    return params;
}

// Optimisation runs on x in [0, 1], log-scaled between the bounds.
double to_value(const FreeParam& p, double x) { return p.lower * std::pow(p.upper / p.lower, x); }
double to_unit(const FreeParam& p, double v) {
    return std::clamp(std::log(v / p.lower) / std::log(p.upper / p.lower), 0.0, 1.0);
}

std::string format_value(const FreeParam& p, double v) {
    if (p.bandwidth) return fmt::format("{:.0f}B/s", v);
    return fmt::format("{}ps", static_cast<long long>(std::llround(v)));
}

// A free parameter's value written as text ("2.5us", "10GB/s"), in its unit (ps or bytes/s).
double value_of(const FreeParam& p, const std::string& text) {
    return p.bandwidth ? core::parse_bandwidth(text).bytes_per_s : static_cast<double>(core::parse_duration(text).ps);
}

double current_value(const FreeParam& p) {
    for (const auto& d : config::describe(config::ModelParams{}, config::StrategyOptions{})) {
        if (d.path == p.key) return value_of(p, d.value);
    }
    throw std::logic_error(std::string("free parameter ") + p.key + " is not a model parameter");
}


// The fixed split: a row is held out when the FNV-1a hash of its key is 0 modulo this.
constexpr int kSplit = 5;

struct Row {
    std::string key;
    core::ResultRow measured;
    int fold = 0;  // FNV-1a of the key modulo 5 (fixed split) or K (k-fold)
};

// A step's values as one string (the description a step's workers rebuild it from) and back.
std::string encode_sets(const std::vector<config::SetOverride>& sets) {
    ByteWriter out;
    out.u64(sets.size());
    for (const auto& s : sets) out.str(s.path).str(s.value).str(s.scenario);
    return out.bytes();
}
std::vector<config::SetOverride> decode_sets(const std::string& bytes) {
    ByteReader in(bytes, "a calibration step's values");
    std::vector<config::SetOverride> sets(in.u64());
    for (auto& s : sets) {
        s.path = in.str();
        s.value = in.str();
        s.scenario = in.str();
    }
    return sets;
}

// The cases of the scenarios the rows name, with a step's values set. `loaded` is the scenario
// folder read once, with the defaults; the step's values are set on copies (reading the files at
// every step was a fifth of its time).
class StepBuilder {
public:
    StepBuilder(const std::vector<config::Scenario>& loaded, const std::vector<Row>& rows) {
        std::vector<core::ResultRow> measured;
        for (const auto& r : rows) measured.push_back(r.measured);
        restricted_ = restrict_to_measured(loaded, measured);
        // The fit compares the nominal machine's times with the measured medians: the band
        // around them (host_spread) would cost runs and change nothing it fits.
        for (auto& sc : restricted_) sc.params = sc.params.without_spread();
    }
    // The workload of the step `encode_sets` described; valid until the next call.
    const Workload& build(const std::string& step) {
        if (built_ && step == step_) return workload_;
        scenarios_ = restricted_;
        const auto sets = decode_sets(step);
        for (auto& sc : scenarios_) {
            for (const auto& set : sets) config::apply_parameter(sc, set);
        }
        workload_ = make_workload(scenarios_);
        step_ = step;
        built_ = true;
        return workload_;
    }

private:
    std::vector<config::Scenario> restricted_;
    std::vector<config::Scenario> scenarios_;
    Workload workload_;
    std::string step_;
    bool built_ = false;
};

// One evaluation: the cases of the scenarios the rows name, simulated in worker processes
// (SystemC elaborates once per process; this process never does), `jobs` at a time: by
// `workers`, kept from step to step, where given. Under mpirun the ranks share them and every
// rank gets every prediction, so that each runs the same optimisation step for step.
std::map<std::string, double> predict(StepBuilder& builder, StepWorkers* workers,
                                      const std::vector<config::SetOverride>& sets, int jobs) {
    const std::string step = encode_sets(sets);
    const Workload& w = builder.build(step);
    RunSettings rs;
    rs.jobs = jobs;
    auto simulate = [&](const std::vector<std::size_t>& selected) {
        return workers != nullptr ? workers->run(step, selected) : run_cases(w, selected, rs);
    };
    std::vector<CaseOutput> outputs;
    if (mpi::size() <= 1) {
        outputs = simulate(shard_cases(w.cases.size(), 0, 1));
    } else {
        const std::vector<std::size_t> mine =
            shard_cases(w.cases.size(), static_cast<std::size_t>(mpi::rank()), static_cast<std::size_t>(mpi::size()));
        std::string failure;
        try {
            outputs = simulate(mine);
        } catch (const std::exception& e) {
            failure = fmt::format("rank {}: {}", mpi::rank(), e.what());
            outputs.clear();
        }
        const auto all = mpi::allgather(
            ByteWriter{}.str(failure).str(encode_outputs(failure.empty() ? mine : std::vector<std::size_t>{}, outputs)).bytes());
        outputs.assign(w.cases.size(), CaseOutput{});
        for (std::size_t r = 0; r < all.size(); ++r) {
            ByteReader in(all[r], fmt::format("rank {}'s predictions", r));
            const std::string f = in.str();
            // Every rank sees the same failure and stops the same way.
            if (!f.empty()) throw std::runtime_error(f);
            std::vector<std::size_t> cases;
            std::vector<CaseOutput> outs;
            decode_outputs(in.str(), cases, outs, fmt::format("rank {}'s predictions", r));
            for (std::size_t k = 0; k < cases.size(); ++k) outputs.at(cases[k]) = std::move(outs[k]);
        }
    }
    std::map<std::string, double> out;
    // A not_modelled row has no time to fit to.
    for (const auto& r : parsed_rows_of(outputs, "a calibration step's rows")) {
        if (r.status == "ok" && r.time_us > 0.0) out[result_key(r)] = r.time_us;
    }
    if (out.empty()) throw std::runtime_error("a calibration step's simulation failed");
    return out;
}

double log_error(double predicted, double measured) { return std::log(predicted / measured); }

std::string command_line_text(int argc, char** argv) {
    std::string s;
    for (int i = 0; i < argc; ++i) s += (i ? " " : "") + std::string(argv[i]);
    return s;
}

// The mean over the training rows of (ln(predicted / measured))^2; rows the step did not
// predict are left out.
double training_objective(const std::map<std::string, double>& predicted, const std::vector<Row>& rows,
                          const std::vector<bool>& train) {
    double sum = 0.0;
    std::size_t n = 0;
    for (std::size_t i = 0; i < rows.size(); ++i) {
        if (!train[i]) continue;
        const auto it = predicted.find(rows[i].key);
        if (it == predicted.end()) continue;
        const double e = log_error(it->second, rows[i].measured.time_us);
        sum += e * e;
        ++n;
    }
    return n ? sum / static_cast<double>(n) : 1e9;
}

struct Fit {
    std::vector<double> x;
    double objective = 0.0;
    int evaluations = 0;
};

// Where the fit starts: a parameter's value in --start's calibration, else its default.
double start_value(const FreeParam& p, const std::vector<config::SetOverride>& start) {
    for (const auto& s : start) {
        if (s.path == p.key) return value_of(p, s.value);
    }
    return current_value(p);
}

Fit fit(const std::vector<FreeParam>& free, const std::vector<config::Scenario>& loaded, const std::vector<Row>& rows,
        const std::vector<bool>& train, const CalibrateOptions& o, const std::vector<config::SetOverride>& start,
        std::ostream& err) {
    Fit best;
    best.x.resize(free.size());
    for (std::size_t i = 0; i < free.size(); ++i) best.x[i] = to_unit(free[i], start_value(free[i], start));
    // Every step simulates the same cases with other values: its workers are kept from step to step.
    StepBuilder builder(loaded, rows);
    StepWorkers workers([&builder](const std::string& step) -> const Workload& { return builder.build(step); }, o.jobs);
    struct Context {
        const std::vector<FreeParam>* free;
        StepBuilder* builder;
        StepWorkers* workers;
        const std::vector<Row>* rows;
        const std::vector<bool>* train;
        const CalibrateOptions* o;
        std::ostream* err;
        int evaluations = 0;
    } ctx{&free, &builder, &workers, &rows, &train, &o, &err};
    auto objective = [](const std::vector<double>& x, std::vector<double>&, void* data) -> double {
        auto& c = *static_cast<Context*>(data);
        std::vector<config::SetOverride> sets;
        for (std::size_t i = 0; i < c.free->size(); ++i) {
            sets.push_back({(*c.free)[i].key, format_value((*c.free)[i], to_value((*c.free)[i], x[i])), ""});
        }
        const double value = training_objective(predict(*c.builder, c.workers, sets, c.o->jobs), *c.rows, *c.train);
        ++c.evaluations;
        if (!c.o->quiet) *c.err << fmt::format("\r  step {:4d}: rms log error {:.4f}", c.evaluations, std::sqrt(value));
        return value;
    };
    if (free.empty()) {
        // Every free parameter given (--set): nothing to fit, only the given values to evaluate
        // (the optimiser refuses an empty problem).
        std::vector<double> none;
        best.objective = objective(best.x, none, &ctx);
        if (!o.quiet) err << "\n";
        best.evaluations = ctx.evaluations;
        return best;
    }
    nlopt::opt opt(nlopt::LN_BOBYQA, static_cast<unsigned>(free.size()));
    opt.set_lower_bounds(std::vector<double>(free.size(), 0.0));
    opt.set_upper_bounds(std::vector<double>(free.size(), 1.0));
    opt.set_min_objective(objective, &ctx);
    opt.set_xtol_abs(1e-4);
    opt.set_ftol_rel(1e-6);
    opt.set_maxeval(o.max_evaluations);
    opt.set_initial_step(0.1);
    try {
        opt.optimize(best.x, best.objective);
    } catch (const nlopt::roundoff_limited&) {
        // Converged as far as floating point allows: the point is still the best found.
    }
    if (!o.quiet) err << "\n";
    best.evaluations = ctx.evaluations;
    return best;
}

struct Stats {
    std::size_t n = 0;
    double median = 0.0;
    double worst = 0.0;
};

Stats stats_of(std::vector<double> abs_pct) {
    Stats s;
    s.n = abs_pct.size();
    if (abs_pct.empty()) return s;
    s.median = core::percentile(abs_pct, 0.5);
    s.worst = *std::max_element(abs_pct.begin(), abs_pct.end());
    return s;
}

std::string yaml_quote(const std::string& text) {
    std::string out = "\"";
    for (const char c : text) {
        if (c == '"' || c == '\\') out += '\\';
        out += c;
    }
    return out + "\"";
}

std::vector<config::SetOverride> sets_of(const std::vector<FreeParam>& free, const std::vector<double>& x) {
    std::vector<config::SetOverride> sets;
    for (std::size_t i = 0; i < free.size(); ++i) sets.push_back({free[i].key, format_value(free[i], to_value(free[i], x[i])), ""});
    return sets;
}

// How firmly the training rows hold each fitted parameter: their rms log error with it scaled by
// kSensitivityFactor up and down, the others as fitted. One that moves it by less than kFlatPct
// either way is barely constrained by the rows, and another fit may well put it elsewhere
// (docs/calibration.md, "Sensitivity").
constexpr double kSensitivityFactor = 1.25;
constexpr double kFlatPct = 0.5;

struct Sensitivity {
    std::string key;
    double up_pct = 0.0;    // rms log error, % above the fit's, with the value times the factor
    double down_pct = 0.0;  // ... divided by it
    bool flat = false;
};

std::vector<Sensitivity> sensitivity(const std::vector<FreeParam>& free, const Fit& main,
                                     const std::vector<config::Scenario>& loaded, const std::vector<Row>& rows,
                                     const std::vector<bool>& train, int jobs) {
    // As in fit(): the steps simulate the same cases with other values, so their workers are kept.
    StepBuilder builder(loaded, rows);
    StepWorkers workers([&builder](const std::string& step) -> const Workload& { return builder.build(step); }, jobs);
    const auto rms = [&](const std::vector<double>& at) {
        return std::sqrt(training_objective(predict(builder, &workers, sets_of(free, at), jobs), rows, train));
    };
    const std::vector<double>& x = main.x;
    const double base = std::sqrt(main.objective);  // the fit's own value at x
    std::vector<Sensitivity> out;
    for (std::size_t i = 0; i < free.size(); ++i) {
        Sensitivity s;
        s.key = free[i].key;
        for (const double factor : {kSensitivityFactor, 1.0 / kSensitivityFactor}) {
            std::vector<double> moved = x;
            const double value = std::clamp(to_value(free[i], x[i]) * factor, free[i].lower, free[i].upper);
            moved[i] = to_unit(free[i], value);
            const double pct = base > 0.0 ? (rms(moved) / base - 1.0) * 100.0 : 0.0;
            (factor > 1.0 ? s.up_pct : s.down_pct) = pct;
        }
        s.flat = std::fabs(s.up_pct) < kFlatPct && std::fabs(s.down_pct) < kFlatPct;
        out.push_back(s);
    }
    return out;
}

struct LeaseError {
    std::string lease;
    std::size_t train_rows = 0;
    Stats stats;
};

struct LeaveOneLeaseOut {
    std::vector<LeaseError> per_lease;
    std::string skipped;  // why nothing (or not every lease) was evaluated
};

// One fit: to `rows` (those marked in `train`), then a prediction of every usable row with the
// fitted parameters. The main fit, each fold and each lease left out is one; they do not
// depend on each other, so they can run side by side.
struct FitTask {
    std::string name;  // for progress: "main", "fold 2/3", "lease x"
    std::vector<Row> rows;
    std::vector<bool> train;
};

struct FitOutcome {
    Fit fit;
    std::map<std::string, double> predicted;  // every row of cmd_calibrate's `rows`
};

std::string encode(const FitOutcome& f) {
    ByteWriter w;
    w.u64(f.fit.x.size());
    for (const double v : f.fit.x) w.f64(v);
    w.f64(f.fit.objective).u64(static_cast<std::uint64_t>(f.fit.evaluations)).u64(f.predicted.size());
    for (const auto& [k, v] : f.predicted) w.str(k).f64(v);
    return w.bytes();
}

FitOutcome decode(const std::string& bytes) {
    ByteReader r(bytes, "a fit's result");
    FitOutcome f;
    f.fit.x.resize(static_cast<std::size_t>(r.u64()));
    for (double& v : f.fit.x) v = r.f64();
    f.fit.objective = r.f64();
    f.fit.evaluations = static_cast<int>(r.u64());
    const std::uint64_t n = r.u64();
    for (std::uint64_t i = 0; i < n; ++i) {
        std::string k = r.str();
        f.predicted[k] = r.f64();
    }
    return f;
}

// A lease left out: its own values, and the rows fitted to (the other leases' medians).
struct LeasePlan {
    std::string name;
    std::map<std::string, double> own;
    std::vector<Row> train_rows;
    std::string skipped;  // why this lease is not evaluated
    std::size_t others = 0;
};

// For each lease: fit to the cross-lease medians of the other leases, then measure the error
// against this lease's own values. That is the error to expect on a machine the calibration has
// not seen, which neither the fixed split nor k-fold (both over rows of the same machines) shows.
std::vector<LeasePlan> plan_leave_one_lease_out(const std::vector<FreeParam>& free, const std::vector<Row>& rows,
                                                const std::vector<Lease>& leases, const std::vector<CrossLeaseRow>& across) {
    std::vector<LeasePlan> plans;
    if (leases.size() < 2) return plans;
    std::map<std::string, const CrossLeaseRow*> by_key;
    for (const auto& c : across) by_key[c.key] = &c;
    for (std::size_t li = 0; li < leases.size(); ++li) {
        LeasePlan plan;
        plan.name = leases[li].name;
        // This lease's own values of the usable rows.
        for (const auto& r : rows) {
            const auto it = by_key.find(r.key);
            if (it == by_key.end()) continue;
            for (const auto& v : it->second->per_lease) {
                if (v.lease == plan.name) plan.own[r.key] = v.time_us;
            }
        }
        if (plan.own.empty()) {
            plan.skipped = plan.name + " (no usable row)";
            plans.push_back(std::move(plan));
            continue;
        }
        std::vector<Lease> others;
        for (std::size_t k = 0; k < leases.size(); ++k) {
            if (k != li) others.push_back(leases[k]);
        }
        plan.others = others.size();
        std::map<std::string, double> other_median;
        for (const auto& c : cross_lease(others)) {
            if (c.ok()) other_median[c.key] = c.median_us;
        }
        for (const auto& r : rows) {
            const auto it = other_median.find(r.key);
            if (it == other_median.end()) continue;
            Row t = r;
            t.measured.time_us = it->second;
            plan.train_rows.push_back(std::move(t));
        }
        if (plan.train_rows.size() < free.size() + 1) plan.skipped = plan.name + " (the other leases have too few rows)";
        plans.push_back(std::move(plan));
    }
    return plans;
}

// Whether a scenario is a stream of frames `via` pinned or pageable memory without processing.
bool frames_via(const config::Scenario& sc, const std::string& via) {
    const config::FrameOptions& f = sc.options.periodic;
    return std::find(sc.strategies.begin(), sc.strategies.end(), "periodic") != sc.strategies.end() && f.via == via &&
           f.kernel.ps == 0;
}

// The streams of frames for frame_jitter: each periodic scenario of frames `via` (pinned or
// pageable) without processing, with every lease's p10, p50, p90, p99 and max frame latency (its
// first run).
std::vector<FrameStream> frame_streams(const std::vector<config::Scenario>& loaded, const MeasuredSet& set,
                                       const std::string& via) {
    std::vector<FrameStream> out;
    for (const auto& sc : loaded) {
        const config::FrameOptions& f = sc.options.periodic;
        if (!frames_via(sc, via)) continue;
        FrameStream stream{sc.name, static_cast<double>(f.period.ps) * 1e-6, f.count, {}, {}};
        for (std::size_t index = 0; index < set.leases.size(); ++index) {
            const auto& lease = set.leases[index];
            if (lease.runs.empty()) continue;
            const core::ResultRow* main = nullptr;
            const core::ResultRow* p99 = nullptr;
            for (const auto& r : lease.runs.front().rows) {
                if (r.scenario != sc.name || r.strategy != "periodic" || r.status != "ok") continue;
                if (r.variant.empty()) main = &r;
                if (r.variant == "p99") p99 = &r;
            }
            if (main != nullptr && p99 != nullptr) {
                stream.leases.push_back({main->p10_us, main->time_us, main->p90_us, p99->time_us, main->max_us});
                stream.lease.push_back(index);
            }
        }
        if (!stream.leases.empty()) out.push_back(std::move(stream));
    }
    return out;
}

// A stream's measured median frame (the cross-lease median), if its leases measured it.
const core::ResultRow* stream_row(const std::vector<CrossLeaseRow>& across, const std::string& stream) {
    for (const auto& c : across) {
        if (c.ok() && c.row.scenario == stream && c.row.strategy == "periodic" && c.row.variant.empty() && c.row.status == "ok") {
            return &c.row;
        }
    }
    return nullptr;
}

// The model's median frame of a stream with `sets` and no spread (us); `warm`: with caches that
// never cool (cpu.cache_cooling_time 0). Zero where the stream is not simulated.
double stream_p50_us(const std::vector<config::Scenario>& loaded, const core::ResultRow& measured,
                     const std::vector<config::SetOverride>& sets, bool warm, int jobs) {
    std::vector<config::Scenario> scenarios = restrict_to_measured(loaded, {measured});
    for (auto& sc : scenarios) {
        for (const auto& set : sets) config::apply_parameter(sc, set);
        sc.params = sc.params.without_spread();
        if (warm) sc.params.cpu.cache_cooling_time = core::Duration{0};
    }
    const Workload w = make_workload(scenarios);
    std::vector<std::size_t> selected(w.cases.size());
    std::iota(selected.begin(), selected.end(), std::size_t{0});
    RunSettings rs;
    rs.jobs = jobs;
    for (const auto& r : parsed_rows_of(run_cases(w, selected, rs), "a stream of frames")) {
        if (r.scenario == measured.scenario && r.variant.empty() && r.status == "ok") return r.time_us;
    }
    return 0.0;
}

// cpu.memcpy_bandwidth_cold, after the main fit: the rate at which the model's median frame of
// each stream of pageable frames is the leases' (bisection on a log scale between the bounds;
// the time falls as the rate grows), the median over the streams. Such a stream's median frame
// is the one row that says how fast the CPU copies what went cold, so it is fitted here, to the
// leases given, rather than by the row split, which may hold it out. None where no stream of
// pageable frames was measured.
struct ColdRateFit {
    double rate = 0.0;  // B/s
    struct Line {
        std::string stream;
        double measured_us, model_us;
    };
    std::vector<Line> lines;
};
std::optional<ColdRateFit> fit_cold_rate(const std::vector<config::Scenario>& loaded, const std::vector<CrossLeaseRow>& across,
                                         const std::vector<config::SetOverride>& fitted, const FreeParam& bounds, int jobs) {
    std::vector<double> rates;
    std::vector<const core::ResultRow*> measured;
    for (const auto& sc : loaded) {
        if (!frames_via(sc, "pageable")) continue;
        const core::ResultRow* m = stream_row(across, sc.name);
        if (m == nullptr || !(m->time_us > 0.0)) continue;
        const auto p50_at = [&](double rate) {
            std::vector<config::SetOverride> sets = fitted;
            sets.push_back({bounds.key, format_value(bounds, rate), ""});
            return stream_p50_us(loaded, *m, sets, false, jobs);
        };
        double lo = std::log(bounds.lower), hi = std::log(bounds.upper);
        if (!(p50_at(bounds.lower) > 0.0)) continue;
        for (int it = 0; it < 24; ++it) {
            const double mid = (lo + hi) / 2.0;
            (p50_at(std::exp(mid)) > m->time_us ? lo : hi) = mid;
        }
        rates.push_back(std::exp((lo + hi) / 2.0));
        measured.push_back(m);
    }
    if (rates.empty()) return std::nullopt;
    ColdRateFit out;
    out.rate = core::percentile(rates, 0.5);
    for (const auto* m : measured) {
        std::vector<config::SetOverride> sets = fitted;
        sets.push_back({bounds.key, format_value(bounds, out.rate), ""});
        out.lines.push_back({m->scenario, m->time_us, stream_p50_us(loaded, *m, sets, false, jobs)});
    }
    return out;
}

// A pageable stream's excess of its median frame over the same frame with caches that never cool:
// what frame_jitter.cold_sigma draws. Zero where the stream is not simulated.
double cold_excess_us(const std::vector<config::Scenario>& loaded, const std::vector<CrossLeaseRow>& across,
                      const std::string& stream, const std::vector<config::SetOverride>& sets, int jobs) {
    const core::ResultRow* m = stream_row(across, stream);
    if (m == nullptr) return 0.0;
    return std::max(0.0, stream_p50_us(loaded, *m, sets, false, jobs) - stream_p50_us(loaded, *m, sets, true, jobs));
}

// The band's rows: every measured row of a kind with a model_error sigma, of every size, simulated
// once with the fitted values on the machines of the kind (the band of host_spread), each with its
// leases' own medians. Periodic streams and harness-only rows are left out as for the fit.
std::vector<BandFitRow> band_rows(const std::vector<config::Scenario>& loaded, const std::vector<CrossLeaseRow>& across,
                                  const std::vector<config::SetOverride>& fitted, int jobs, bool quiet, std::ostream& err) {
    std::vector<core::ResultRow> measured;
    std::map<std::string, const CrossLeaseRow*> by_key;
    for (const auto& c : across) {
        const core::ResultRow& m = c.row;
        if (!c.ok() || m.status != "ok" || m.source != "hw" || m.time_us <= 0) continue;
        if (m.strategy == "periodic" || m.variant == "setup=freehost" || m.variant == "misses") continue;
        if (config::ModelErrorParams::kind(m.strategy, m.variant, m.size_bytes) == nullptr) continue;
        measured.push_back(m);
        by_key[c.key] = &c;
    }
    std::vector<BandFitRow> out;
    if (measured.empty()) return out;
    std::vector<config::Scenario> scenarios = restrict_to_measured(loaded, measured);
    for (auto& sc : scenarios) {
        for (const auto& set : fitted) config::apply_parameter(sc, set);
        sc.params.model_error = config::ModelErrorParams{};  // the machines' band alone
    }
    const Workload w = make_workload(scenarios);
    std::vector<std::size_t> selected(w.cases.size());
    std::iota(selected.begin(), selected.end(), std::size_t{0});
    Progress progress(err, !quiet, stderr_is_terminal(err), "the band's rows");
    RunSettings rs;
    rs.jobs = jobs;
    rs.progress = &progress;
    const std::vector<CaseOutput> outputs = run_cases(w, selected, rs);
    progress.finish();
    for (const auto& r : parsed_rows_of(outputs, "the band's rows")) {
        if (r.status != "ok" || !(r.time_us > 0.0)) continue;
        const auto it = by_key.find(result_key(r));
        if (it == by_key.end()) continue;
        const core::ResultRow& m = it->second->row;
        BandFitRow b;
        b.key = it->first;
        b.kind = config::ModelErrorParams::kind(m.strategy, m.variant, m.size_bytes);
        b.train = fnv1a64(b.key) % kSplit != 0;  // the fit's fixed split
        b.time_us = r.time_us;
        b.p10_us = r.p10_us;
        b.p90_us = r.p90_us;
        for (const auto& v : it->second->per_lease) b.leases.emplace_back(v.lease, v.time_us);
        out.push_back(std::move(b));
    }
    return out;
}

std::string share_text(double share) { return share < 0.0 ? std::string("null") : fmt::format("{:.1f}", share * 100.0); }

}  // namespace

int cmd_calibrate(const CalibrateOptions& o, int argc, char** argv, std::ostream& out, std::ostream& err) {
    // The fit is to cross-lease medians: what repeats across machines of the kind, not one
    // machine's luck.
    // The fit takes minutes: a file that could not be written is refused first.
    // Under mpirun rank 0 writes the file: it checks, and the ranks agree before any simulates.
    std::exception_ptr refused;
    if (mpi::rank() == 0) {
        try {
            core::OutputFiles planned;
            planned.add_path(o.out_file, {});
            planned.check();
        } catch (const core::InputError&) {
            refused = std::current_exception();
        }
    }
    if (mpi::size() > 1 && mpi::allreduce_min(refused ? 0 : 1) == 0 && !refused) return 2;
    if (refused) std::rethrow_exception(refused);
    // A bad --start is refused before minutes of fitting: unreadable, or a value that is no
    // value of its parameter.
    const std::vector<config::SetOverride> start = o.start_file.empty() ? std::vector<config::SetOverride>{}
                                                                         : config::read_calibration(o.start_file);
    MeasuredSet set = read_measured_set(o.measured);
    keep_leases(set, o.leases);
    const std::vector<config::Scenario> as_named = load_scenario_dir(o.scenarios_dir, {}, "none");
    exclude_other_gpu_paths(set, as_named);
    const std::vector<CrossLeaseRow> across = cross_lease(set.leases);
    const std::vector<core::ResultRow> measured = cross_lease_rows(across);
    // runtime.kernel_launch_latency is measured, not fitted, where the leases ran the harness's
    // empty kernel: the model's synthetic kernel of no length takes exactly that long, from its
    // stream letting it run to its end (docs/calibration.md). --set or --free of it wins.
    std::vector<std::string> sets = o.sets;
    const KernelOverhead kernel = median_kernel_overhead(set.leases);
    const bool kernel_named = std::any_of(o.sets.begin(), o.sets.end(), [](const std::string& t) {
        return config::parse_set(t).path == kKernelLaunchKey;
    }) || std::find(o.free.begin(), o.free.end(), kKernelLaunchKey) != o.free.end();
    const bool kernel_measured = kernel.leases > 0 && !kernel_named;
    const std::string kernel_value = fmt::format("{}ps", static_cast<long long>(std::llround(kernel.median_us * 1e6)));
    if (kernel_measured) sets.push_back(std::string(kKernelLaunchKey) + "=" + kernel_value);
    const std::vector<config::SetOverride> scenario_sets = sets_for_measured(sets, as_named, measured);
    const std::vector<config::Scenario> loaded =
        scenario_sets.empty() ? as_named : load_scenario_dir(o.scenarios_dir, scenario_sets, "none");
    const std::string csv_path = set.files().size() == 1 ? set.files().front() : o.measured;
    std::string raw_text;  // every file read, in order: the data's fingerprint
    for (const auto& f : set.files()) {
        std::ifstream raw(f);
        std::stringstream ss;
        ss << raw.rdbuf();
        raw_text += ss.str();
    }

    // A parameter --set gives is given, not fitted: the fit keeps it at that value (an isolating
    // measurement's, say) and the file says so. Naming it in --free as well is a contradiction.
    const auto given = [&o](std::string_view key) {
        return std::any_of(o.sets.begin(), o.sets.end(), [&](const std::string& t) {
            const config::SetOverride s = config::parse_set(t);
            return s.scenario.empty() && s.path == key;
        });
    };
    for (const auto& k : o.free) {
        if (given(k)) throw core::InputError("--free", k, "also given by --set: a parameter is fitted or given, not both");
    }
    std::vector<FreeParam> free;   // the optimiser's
    std::vector<FreeParam> after;  // fitted after it
    for (const auto& p : free_params()) {
        if (kernel_measured && p.key == std::string_view(kKernelLaunchKey)) continue;
        if (given(p.key)) continue;
        if (o.free.empty() || std::find(o.free.begin(), o.free.end(), p.key) != o.free.end()) (p.after_fit ? after : free).push_back(p);
    }
    for (const auto& k : o.free) {
        if (std::none_of(free.begin(), free.end(), [&](const FreeParam& p) { return k == p.key; }) &&
            std::none_of(after.begin(), after.end(), [&](const FreeParam& p) { return k == p.key; })) {
            throw core::InputError("--free", k, "not a free parameter; see docs/calibration.md");
        }
    }

    // The rows to fit: timed transfers and setup costs up to max_size, and setup costs measured
    // alone at every size (an allocation or a registration with no copy: nothing to simulate, and
    // what decides the per-page costs); not periodic streams (the median frame of pageable ones
    // sets cpu.memcpy_bandwidth_cold after the fit: fit_cold_rate; the tails are the band's,
    // frame_jitter) and not harness-only rows.
    std::set<std::string> setup_alone;
    for (const auto& sc : loaded) {
        if (sc.options.pinned.setup_only || sc.options.registered.setup_only) setup_alone.insert(sc.name);
    }
    std::vector<Row> rows;
    for (const auto& m : measured) {
        if (m.status != "ok" || m.source != "hw" || m.time_us <= 0) continue;
        if (m.size_bytes > o.max_size && setup_alone.count(m.scenario) == 0) continue;
        if (m.strategy == "periodic" || m.variant == "kernel" || m.variant == "setup=freehost" || m.variant == "misses") {
            continue;
        }
        rows.push_back(Row{result_key(m), m, 0});
    }
    // Keep the rows the model predicts.
    StepBuilder all_rows(loaded, rows);
    const auto baseline = predict(all_rows, nullptr, {}, o.jobs);
    rows.erase(std::remove_if(rows.begin(), rows.end(), [&](const Row& r) { return !baseline.count(r.key); }), rows.end());
    if (rows.size() < free.size() + 1) {
        throw core::InputError(csv_path, "", "only " + std::to_string(rows.size()) + " usable rows for " +
                                                 std::to_string(free.size()) + " free parameters");
    }
    if (o.folds > 0 && static_cast<std::size_t>(o.folds) > rows.size()) {
        throw core::InputError("--folds", std::to_string(o.folds),
                               "more folds than the " + std::to_string(rows.size()) + " usable rows");
    }
    // Fixed split: a fifth of the rows, chosen by a hash of their key, is held out.
    std::vector<bool> train(rows.size());
    for (std::size_t i = 0; i < rows.size(); ++i) {
        rows[i].fold = static_cast<int>(fnv1a64(rows[i].key) % kSplit);
        train[i] = rows[i].fold != 0;
    }
    if (!o.quiet) err << fmt::format("calibrating {} free parameters on {} rows ({} held out)\n", free.size(), rows.size(),
                                     std::count(train.begin(), train.end(), false));
    // The fits: the main one, one per fold, one per lease left out.
    std::vector<FitTask> tasks{FitTask{"main", rows, train}};
    for (int k = 0; k < o.folds; ++k) {
        std::vector<bool> t(rows.size());
        for (std::size_t i = 0; i < rows.size(); ++i) t[i] = static_cast<int>(fnv1a64(rows[i].key) % o.folds) != k;
        tasks.push_back(FitTask{fmt::format("fold {}/{}", k + 1, o.folds), rows, t});
    }
    const std::size_t first_lease_task = tasks.size();
    std::vector<LeasePlan> lease_plans;
    LeaveOneLeaseOut lolo;
    if (!o.leave_one_lease_out) {
        lolo.skipped = "--no-lolo";
    } else if (set.leases.size() < 2) {
        lolo.skipped = "needs at least two leases";
    } else {
        lease_plans = plan_leave_one_lease_out(free, rows, set.leases, across);
        for (const auto& plan : lease_plans) {
            if (plan.skipped.empty()) {
                tasks.push_back(FitTask{"lease " + plan.name, plan.train_rows, std::vector<bool>(plan.train_rows.size(), true)});
            }
        }
    }
    auto run_task = [&](std::size_t ti, const CalibrateOptions& opts, std::ostream& log) {
        const FitTask& t = tasks[ti];
        FitOutcome r;
        r.fit = fit(free, loaded, t.rows, t.train, opts, start, log);
        StepBuilder every_row(loaded, rows);
        r.predicted = predict(every_row, nullptr, sets_of(free, r.fit.x), opts.jobs);
        return r;
    };
    std::vector<FitOutcome> outcomes(tasks.size());
    // Fits side by side when there are CPUs for more than one, each simulating its own steps;
    // under mpirun the ranks instead share every step's cases and go through the fits together.
    const bool side_by_side = o.jobs > 1 && tasks.size() > 1 && mpi::size() <= 1;
    if (side_by_side) {
        const int at_once = static_cast<int>(std::min<std::size_t>(static_cast<std::size_t>(o.jobs), tasks.size()));
        CalibrateOptions child = o;
        child.quiet = true;
        child.jobs = std::max(1, o.jobs / at_once);
        Progress progress(err, !o.quiet, stderr_is_terminal(err), "fits");
        progress.start(tasks.size(), static_cast<double>(tasks.size()));
        if (!o.quiet) {
            err << fmt::format("{} fits (main{}{}), {} at a time\n", tasks.size(), o.folds > 0 ? ", folds" : "",
                               tasks.size() > first_lease_task ? ", leave-one-lease-out" : "", at_once);
        }
        std::vector<std::size_t> order(tasks.size());
        std::iota(order.begin(), order.end(), std::size_t{0});
        const auto results = run_tasks(
            order, tasks.size(), at_once,
            [&](std::size_t ti) {
                std::ostringstream ignored;
                return encode(run_task(ti, child, ignored));
            },
            [&](std::size_t ti, const std::string& bytes) {
                const FitOutcome f = decode(bytes);
                if (!o.quiet && !progress.tty()) {
                    err << fmt::format("  {}: {} steps, rms log error {:.4f}\n", tasks[ti].name, f.fit.evaluations,
                                       std::sqrt(f.fit.objective));
                }
                progress.done(1.0, tasks[ti].name);
            });
        progress.finish();
        for (std::size_t ti = 0; ti < tasks.size(); ++ti) outcomes[ti] = decode(results[ti]);
    } else {
        for (std::size_t ti = 0; ti < tasks.size(); ++ti) {
            if (!o.quiet && ti > 0 && ti < first_lease_task) err << tasks[ti].name << "\n";
            if (!o.quiet && ti >= first_lease_task) {
                const LeasePlan& plan = lease_plans[ti - first_lease_task];
                err << fmt::format("lease {}: fitting to the other {} leases ({} rows)\n", plan.name, plan.others,
                                   plan.train_rows.size());
            }
            outcomes[ti] = run_task(ti, o, err);
        }
    }

    const Fit& main = outcomes[0].fit;
    if (!o.quiet) err << fmt::format("sensitivity: each fitted parameter x{0} and /{0}\n", kSensitivityFactor);
    const std::vector<Sensitivity> held = sensitivity(free, main, loaded, rows, train, o.jobs);
    std::vector<config::SetOverride> fitted = sets_of(free, main.x);
    std::optional<ColdRateFit> cold_rate;
    for (const auto& p : after) {
        if (!o.quiet) err << "the cold copy rate: the pageable frames' median frame\n";
        cold_rate = fit_cold_rate(loaded, across, fitted, p, o.jobs);
        if (cold_rate) fitted.push_back({p.key, format_value(p, cold_rate->rate), ""});
    }
    const auto& predicted = outcomes[0].predicted;
    std::vector<double> train_err, held_err, held_err_big, held_err_small;
    std::ostringstream residuals;
    for (std::size_t i = 0; i < rows.size(); ++i) {
        const double pred = predicted.at(rows[i].key);
        const double pct = (pred / rows[i].measured.time_us - 1.0) * 100.0;
        (train[i] ? train_err : held_err).push_back(std::fabs(pct));
        if (!train[i]) (rows[i].measured.size_bytes >= 65536 ? held_err_big : held_err_small).push_back(std::fabs(pct));
        residuals << fmt::format("  - {{ row: \"{}\", set: {}, measured_us: {:.4f}, predicted_us: {:.4f}, error_pct: {:.2f} }}\n",
                                 rows[i].key, train[i] ? "train" : "held_out", rows[i].measured.time_us, pred, pct);
    }

    // k-fold: fit on all folds but one, measure on that one, for each.
    std::vector<double> kfold_medians;
    for (int k = 0; k < o.folds; ++k) {
        const FitTask& t = tasks[1 + static_cast<std::size_t>(k)];
        const auto& p = outcomes[1 + static_cast<std::size_t>(k)].predicted;
        std::vector<double> e;
        for (std::size_t i = 0; i < rows.size(); ++i) {
            if (!t.train[i]) e.push_back(std::fabs((p.at(rows[i].key) / rows[i].measured.time_us - 1.0) * 100.0));
        }
        kfold_medians.push_back(stats_of(e).median);
    }

    // Each lease left out: its own values against the fit to the others.
    std::vector<std::string> not_evaluated;
    std::size_t ti = first_lease_task;
    for (const auto& plan : lease_plans) {
        if (!plan.skipped.empty()) {
            not_evaluated.push_back(plan.skipped);
            continue;
        }
        const auto& p = outcomes[ti++].predicted;
        std::vector<double> e;
        for (const auto& [key, value] : plan.own) {
            const auto it = p.find(key);
            if (it != p.end()) e.push_back(std::fabs((it->second / value - 1.0) * 100.0));
        }
        lolo.per_lease.push_back(LeaseError{plan.name, plan.train_rows.size(), stats_of(e)});
    }
    for (const auto& n : not_evaluated) lolo.skipped += (lolo.skipped.empty() ? "" : "; ") + n;

    // The band (docs/calibration.md, "The band"): model_error by kind, from every measured row.
    // First the machines' spread (host_spread) from the leases' own medians, then model_error on
    // top of the band it gives.
    BandFit band;
    std::size_t band_row_count = 0;
    std::vector<HostSpreadGroup> spread;
    std::optional<FrameJitterFit> jitter;
    std::vector<bool> noisy;
    std::optional<NoisyHostFit> noisy_fit;
    std::vector<config::SetOverride> band_sets = fitted;
    if (o.band && mpi::rank() == 0) {
        std::vector<SpreadRow> spread_rows;
        for (const auto& c : across) {
            if (!c.ok() || c.row.source != "hw") continue;
            SpreadRow r{c.row.strategy, c.row.variant, c.row.size_bytes, {}};
            for (const auto& v : c.per_lease) r.leases.push_back(v.time_us);
            spread_rows.push_back(std::move(r));
        }
        spread = fit_host_spread(spread_rows);
        for (const auto& g : spread) {
            if (g.sigma >= 0.0) band_sets.push_back(config::SetOverride{"host_spread." + g.group, fmt::format("{:.4f}", g.sigma), ""});
        }
        // Quiet and noisy machines (config::NoisyHostParams), by their pageable frames' tails: the
        // quiet ones' frames give frame_jitter, the noisy ones' what a noisy host adds to it.
        const std::vector<FrameStream> pageable_all = frame_streams(loaded, set, "pageable");
        noisy = noisy_leases(pageable_all, set.leases.size());
        const auto of_kind = [&](const std::vector<FrameStream>& all, bool which) {
            std::vector<FrameStream> out;
            for (const auto& s : all) out.push_back(leases_of_kind(s, noisy, which));
            return out;
        };
        const std::vector<FrameStream> pinned_all = frame_streams(loaded, set, "pinned");
        // Frame jitter, from the quiet leases' streams of pinned frames without processing.
        const std::vector<FrameStream> streams = of_kind(pinned_all, false);
        if (std::any_of(streams.begin(), streams.end(), [](const FrameStream& f) { return f.leases.size() >= 2; })) {
            const double idle_time_us = static_cast<double>(config::ModelParams{}.runtime.idle_wake_time.ps) * 1e-6;
            jitter = fit_frame_jitter(streams, idle_time_us);
            for (const auto& [key, value] :
                 std::vector<std::pair<std::string, std::string>>{
                     {"body", fmt::format("{}ps", std::llround(jitter->body_us * 1e6))},
                     {"body_sigma", fmt::format("{:.4f}", jitter->body_sigma)},
                     {"slow_probability", fmt::format("{:.5f}", jitter->slow_probability)},
                     {"slow_time", fmt::format("{}ps", std::llround(jitter->slow_us * 1e6))},
                     {"slow_sigma", fmt::format("{:.4f}", jitter->slow_sigma)}}) {
                band_sets.push_back(config::SetOverride{"frame_jitter." + key, value, ""});
            }
            // How the cold share of pageable frames spreads, the rest of the jitter as fitted:
            // the median over the pageable streams measured on two leases or more.
            std::vector<double> sigmas;
            for (const auto& s : of_kind(pageable_all, false)) {
                if (s.leases.size() < 2) continue;
                const double cold_us = cold_excess_us(loaded, across, s.name, band_sets, o.jobs);
                if (!(cold_us > 0.0)) continue;
                FrameJitterFit::Line line;
                sigmas.push_back(fit_cold_sigma(s, *jitter, idle_time_us, cold_us, line));
                jitter->lines.push_back(line);
                jitter->cold.emplace_back(s.name, cold_us, sigmas.back());
            }
            if (!sigmas.empty()) {
                band_sets.push_back(config::SetOverride{"frame_jitter.cold_sigma", fmt::format("{:.4f}", core::percentile(sigmas, 0.5)), ""});
            }
            // What a noisy host adds, from the noisy leases' streams, pinned and pageable.
            const auto noisy_count = static_cast<std::size_t>(std::count(noisy.begin(), noisy.end(), true));
            // With fewer than two noisy leases the kind has none the fit can speak for: say so,
            // rather than leave whatever the defaults or another calibration say.
            if (noisy_count < 2) band_sets.push_back(config::SetOverride{"noisy_host.noisy_share", "0", ""});
            if (noisy_count >= 2) {
                const std::vector<FrameStream> noisy_pageable = of_kind(pageable_all, true);
                std::vector<std::tuple<std::string, double, double>> cold;
                for (const auto& s : noisy_pageable) {
                    const double cold_us = cold_excess_us(loaded, across, s.name, band_sets, o.jobs);
                    if (cold_us > 0.0) cold.emplace_back(s.name, cold_us, sigmas.empty() ? 0.0 : core::percentile(sigmas, 0.5));
                }
                noisy_fit = fit_noisy_host(of_kind(pinned_all, true), noisy_pageable, cold, *jitter, idle_time_us);
                const double share = static_cast<double>(noisy_count) / static_cast<double>(set.leases.size());
                for (const auto& [key, value] : std::vector<std::pair<std::string, std::string>>{
                         {"noisy_share", fmt::format("{:.4f}", share)},
                         {"wake_probability", fmt::format("{:.5f}", noisy_fit->wake_probability)},
                         {"wake_time", fmt::format("{}ps", std::llround(noisy_fit->wake_us * 1e6))},
                         {"wake_sigma", fmt::format("{:.4f}", noisy_fit->wake_sigma)},
                         {"busy_interval", fmt::format("{}ps", std::llround(noisy_fit->busy_interval_us * 1e6))},
                         {"busy_time", fmt::format("{}ps", std::llround(noisy_fit->busy_us * 1e6))},
                         {"busy_sigma", fmt::format("{:.4f}", noisy_fit->busy_sigma)}}) {
                    band_sets.push_back(config::SetOverride{"noisy_host." + key, value, ""});
                }
            }
        }
        if (!o.quiet) err << "the band: every measured row on the machines of the kind, with the fitted values\n";
        const std::vector<BandFitRow> br = band_rows(loaded, across, band_sets, o.jobs, o.quiet, err);
        band_row_count = br.size();
        band = fit_band(br, o.band_coverage);
    }

    const Stats tr = stats_of(train_err);
    const Stats ho = stats_of(held_err);
    const Stats hb = stats_of(held_err_big);
    const Stats hs = stats_of(held_err_small);
    std::ostringstream y;
    y << "# dmasim calibration (docs/calibration.md). `dmasim compare --calibration` reads `parameters`.\n";
    y << "# " << command_line_text(argc, argv) << "\n";
    y << "parameters:\n";
    for (const auto& s : fitted) y << "  " << s.path << ": " << s.value << "\n";
    if (kernel_measured) {
        y << "  " << kKernelLaunchKey << ": " << kernel_value
          << fmt::format("  # measured, not fitted: the harness's empty kernel, median over {} of {} leases "
                         "(metadata.json kernel_calibration.overhead_us)\n",
                         kernel.leases, set.leases.size());
    }
    // What --set gave the model, not fitted: the fit was made with it, so whatever runs with
    // this calibration must have it too (a value an isolating measurement gave, say).
    for (const auto& text : o.sets) {
        const config::SetOverride s = config::parse_set(text);
        if (!s.scenario.empty() || loaded.empty() || std::any_of(fitted.begin(), fitted.end(), [&](const auto& f) { return f.path == s.path; })) {
            continue;
        }
        config::Scenario probe = loaded.front();
        try {
            config::apply_parameter(probe, s);
        } catch (const core::InputError&) {
            continue;  // a scenario key (platform=...), not a model parameter
        }
        y << "  " << s.path << ": " << s.value << "  # given (--set), not fitted\n";
    }
    for (std::size_t i = fitted.size(); i < band_sets.size(); ++i) y << "  " << band_sets[i].path << ": " << band_sets[i].value << "\n";
    for (const auto& k : band.kinds) {
        if (k.sigma >= 0.0) y << fmt::format("  model_error.{}: {:.4f}\n", k.kind, k.sigma);
    }
    y << "bounds:\n";
    for (const auto& p : free) {
        y << "  " << p.key << ": [" << format_value(p, p.lower) << ", " << format_value(p, p.upper) << "]  # default "
          << format_value(p, current_value(p)) << "\n";
    }
    for (const auto& p : after) {
        y << "  " << p.key << ": [" << format_value(p, p.lower) << ", " << format_value(p, p.upper) << "]  # default "
          << format_value(p, current_value(p)) << "; fitted after the others, to the pageable frames' median frame\n";
    }
    y << "data:\n  measured: " << csv_path << "\n" << fmt::format("  fnv1a64: \"{:016x}\"\n", fnv1a64(raw_text));
    y << "  values: \"median over leases of each lease's median over its runs\"\n  leases:\n";
    for (const auto& l : set.leases) {
        y << fmt::format("    - {{ lease: {}, runs: {}, legacy: {} }}\n", yaml_quote(l.name), l.runs.size(),
                         l.info.legacy ? "true" : "false");
    }
    y << "  scenarios: " << o.scenarios_dir << "\n";
    if (!o.sets.empty()) {
        y << "  set:\n";
        for (const auto& s : o.sets) y << "    - " << yaml_quote(s) << "\n";
    }
    y << fmt::format("  max_size_bytes: {}\n", o.max_size);
    y << fmt::format("  rows: {}\n  split: \"held out: FNV-1a(row key) % {} == 0 ({} rows)\"\n", rows.size(), kSplit, ho.n);
    y << "summary:\n" << fmt::format("  evaluations: {}\n  objective_rms_log_error: {:.5f}\n", main.evaluations, std::sqrt(main.objective));
    if (cold_rate) {
        y << "  cold_rate:  # cpu.memcpy_bandwidth_cold, after the fit: each stream of pageable frames' median frame, measured (median over leases) and the model's\n";
        for (const auto& l : cold_rate->lines) {
            y << fmt::format("    - {{ stream: {}, measured_us: {:.4f}, predicted_us: {:.4f} }}\n", yaml_quote(l.stream), l.measured_us, l.model_us);
        }
    }
    y << fmt::format("  sensitivity:  # the training rows' rms log error, % above the fit's, with each fitted parameter times {} (up) "
                     "and divided by it (down), the others as fitted; flat: under {} % either way, the rows barely hold it\n",
                     kSensitivityFactor, kFlatPct);
    for (const auto& h : held) {
        y << fmt::format("    - {{ key: {}, up_pct: {:.2f}, down_pct: {:.2f}, flat: {} }}\n", yaml_quote(h.key), h.up_pct, h.down_pct,
                         h.flat ? "true" : "false");
    }
    y << fmt::format("  train: {{ rows: {}, median_abs_error_pct: {:.2f}, worst_abs_error_pct: {:.2f} }}\n", tr.n, tr.median, tr.worst);
    y << fmt::format("  held_out: {{ rows: {}, median_abs_error_pct: {:.2f}, worst_abs_error_pct: {:.2f} }}\n", ho.n, ho.median, ho.worst);
    y << fmt::format("  held_out_ge_64KiB: {{ rows: {}, median_abs_error_pct: {:.2f}, worst_abs_error_pct: {:.2f} }}\n", hb.n, hb.median, hb.worst);
    y << fmt::format("  held_out_lt_64KiB: {{ rows: {}, median_abs_error_pct: {:.2f}, worst_abs_error_pct: {:.2f} }}\n", hs.n, hs.median, hs.worst);
    if (!kfold_medians.empty()) {
        y << "  kfold_held_out_median_abs_error_pct: [";
        for (std::size_t i = 0; i < kfold_medians.size(); ++i) y << (i ? ", " : "") << fmt::format("{:.2f}", kfold_medians[i]);
        y << "]\n";
    }
    if (lolo.per_lease.empty()) {
        y << "  leave_one_lease_out: { skipped: " << yaml_quote(lolo.skipped) << " }\n";
    } else {
        y << "  leave_one_lease_out:\n    leases: [";
        for (std::size_t i = 0; i < lolo.per_lease.size(); ++i) y << (i ? ", " : "") << yaml_quote(lolo.per_lease[i].lease);
        y << "]\n    per_lease:\n";
        std::vector<double> medians;
        for (const auto& r : lolo.per_lease) {
            y << fmt::format("      - {{ lease: {}, train_rows: {}, rows: {}, median_abs_error_pct: {:.2f}, "
                             "worst_abs_error_pct: {:.2f} }}\n",
                             yaml_quote(r.lease), r.train_rows, r.stats.n, r.stats.median, r.stats.worst);
            medians.push_back(r.stats.median);
        }
        y << fmt::format("    median_abs_error_pct: {:.2f}\n", core::percentile(medians, 0.5));
        if (!lolo.skipped.empty()) y << "    not_evaluated: " << yaml_quote(lolo.skipped) << "\n";
    }
    if (!o.band) {
        y << "band: { skipped: \"--no-band\" }\n";
    } else if (band.kinds.empty()) {
        y << "band: { skipped: \"no measured row of a kind with a model_error sigma\" }\n";
    } else {
        // Shares in percent of the lease medians (each lease's median of a row) inside p10-p90.
        y << fmt::format("band:\n  target_pct: {:.1f}\n  rows: {}\n", band.target * 100.0, band_row_count);
        y << "  values: \"inside_*: percent of the leases' medians inside the model's p10-p90 band; machines_only: "
             "the band of host_spread alone, training rows; train: with sigma, training rows; held_out_rows: the "
             "fixed split's rows; held_out_leases: each lease against the sigma fitted without it, every row; "
             "band_width_pct: median (p90 - p10) / time; measured_spread_pct: median over the rows of the leases' "
             "(p90 - p10) / median; population_spread_pct: the same, each row's over the share of a population's "
             "p10-p90 that as many leases show on average (0.80 for eight)\"\n";
        y << "  host_spread:  # sigma of log(lease median / median over leases), per row over the p10-p90 width of as many normal draws, median over the rows\n";
        for (const auto& g : spread) {
            y << fmt::format("    - {{ group: {}, rows: {}, sigma: {}", g.group, g.rows,
                             g.sigma < 0.0 ? std::string("null") : fmt::format("{:.4f}", g.sigma));
            for (const auto& [k, v] : g.kinds) y << fmt::format(", {}: {:.4f}", yaml_quote(k), v);
            y << " }\n";
        }
        // A stream's excess over each lease's p50: the leases' median and the model's.
        const auto stream_line = [&](const char* indent, const FrameJitterFit::Line& l) {
            y << fmt::format("{}- {{ stream: {}, p50_minus_p10: [{:.1f}, {:.1f}], p90_minus_p50: [{:.1f}, {:.1f}], "
                             "p99_minus_p50: [{:.1f}, {:.1f}], max_minus_p50: [{:.1f}, {:.1f}] }}\n",
                             indent, yaml_quote(l.stream), l.measured[0], l.model[0], l.measured[1], l.model[1], l.measured[2],
                             l.model[2], l.measured[3], l.model[3]);
        };
        if (jitter) {
            y << fmt::format("  frame_jitter:  # excess over each lease's p50 (us): median over leases, and the model's; weighted rms log error {:.3f} (pinned streams)\n",
                             jitter->rms_log_error);
            for (const auto& [name, cold_us, sigma] : jitter->cold) {
                y << fmt::format("    # cold_sigma {:.4f} from {}: its frames {:.1f} us over a warm copy in the model\n", sigma, yaml_quote(name), cold_us);
            }
            for (const auto& l : jitter->lines) stream_line("    ", l);
        } else {
            y << "  frame_jitter: { skipped: \"no stream of pinned frames measured on two leases or more\" }\n";
        }
        // Which leases were noisy, and what the noisy host's fit gives their streams.
        std::string noisy_names;
        for (std::size_t i = 0; i < noisy.size() && i < set.leases.size(); ++i) {
            if (noisy[i]) noisy_names += (noisy_names.empty() ? "" : ", ") + yaml_quote(set.leases[i].name);
        }
        y << fmt::format("  noisy_host:  # leases whose pageable frames' p99 / p50 stands apart (docs/model.md, \"Noisy machines\"); the quiet ones fit frame_jitter\n");
        y << fmt::format("    noisy_leases: [{}]\n", noisy_names);
        if (noisy_fit) {
            y << fmt::format("    streams:  # their excess over each lease's p50 (us), median over them and the model's; weighted rms log error {:.3f}\n",
                             noisy_fit->rms_log_error);
            for (const auto& l : noisy_fit->lines) stream_line("      ", l);
        }
        y << "  kinds:\n";
        const auto line = [&](const std::string& name, std::size_t train_rows, std::size_t held_rows, const std::string& sigma,
                              double machines, double train, double held, double lolo, double width, double spread,
                              double population) {
            y << fmt::format("    - {{ kind: {}, train_rows: {}, held_out_rows: {}, {}inside_machines_only_pct: {}, "
                             "inside_train_pct: {}, inside_held_out_rows_pct: {}, inside_held_out_leases_pct: {}, "
                             "band_width_pct: {:.2f}, measured_spread_pct: {:.2f}, population_spread_pct: {:.2f} }}\n",
                             name, train_rows, held_rows, sigma, share_text(machines), share_text(train), share_text(held),
                             share_text(lolo), width, spread, population);
        };
        std::size_t all_train = 0, all_held = 0;
        for (const auto& k : band.kinds) {
            line(k.kind, k.train_rows, k.held_rows,
                 k.sigma < 0.0 ? std::string("sigma: null, ") : fmt::format("sigma: {:.4f}, ", k.sigma), k.machines_only, k.train,
                 k.held_out_rows, k.held_out_leases, k.band_width_pct, k.measured_spread_pct, k.population_spread_pct);
            all_train += k.train_rows;
            all_held += k.held_rows;
        }
        line("all", all_train, all_held, "", band.machines_only, band.train, band.held_out_rows, band.held_out_leases,
             band.band_width_pct, band.measured_spread_pct, band.population_spread_pct);
    }
    y << "residuals:\n" << residuals.str();

    if (mpi::rank() != 0) return 0;  // rank 0 writes
    core::OutputFiles files;
    files.add_path(o.out_file, y.str());
    files.commit();

    out << fmt::format("{:<36} {:>16} {:>16}\n", "parameter", "default", "fitted");
    for (std::size_t i = 0; i < free.size(); ++i) {
        out << fmt::format("{:<36} {:>16} {:>16}\n", free[i].key, format_value(free[i], current_value(free[i])),
                           fitted[i].value);
    }
    if (cold_rate) {
        out << fmt::format("{:<36} {:>16} {:>16}\n", after.front().key, format_value(after.front(), current_value(after.front())),
                           format_value(after.front(), cold_rate->rate));
        for (const auto& l : cold_rate->lines) {
            out << fmt::format("  {}: median frame {:.1f} us measured (median over leases), {:.1f} us model\n", l.stream, l.measured_us, l.model_us);
        }
    }
    std::string flat;
    for (const auto& h : held) {
        if (h.flat) flat += (flat.empty() ? "" : ", ") + h.key;
    }
    if (!flat.empty()) {
        out << fmt::format("\nbarely held by the rows (x{} or /{} moves their rms log error under {}%): {}\n", kSensitivityFactor,
                           kSensitivityFactor, kFlatPct, flat);
    }
    out << fmt::format("\ntrain    {:3d} rows: median |error| {:.1f}%, worst {:.1f}%\n", tr.n, tr.median, tr.worst);
    out << fmt::format("held out {:3d} rows: median |error| {:.1f}%, worst {:.1f}% (>=64KiB: {:.1f}% / {:.1f}%, <64KiB: {:.1f}% / {:.1f}%)\n",
                       ho.n, ho.median, ho.worst, hb.median, hb.worst, hs.median, hs.worst);
    if (lolo.per_lease.empty()) {
        out << "leave-one-lease-out: skipped (" << lolo.skipped << ")\n";
    } else {
        std::vector<double> medians;
        for (const auto& r : lolo.per_lease) {
            out << fmt::format("lease {:<24} {:3d} rows: median |error| {:.1f}%, worst {:.1f}% (fitted to the other leases)\n",
                               r.lease, r.stats.n, r.stats.median, r.stats.worst);
            medians.push_back(r.stats.median);
        }
        out << fmt::format("leave-one-lease-out over {} leases: median of the per-lease medians {:.1f}%\n",
                           lolo.per_lease.size(), core::percentile(medians, 0.5));
    }
    if (!band.kinds.empty()) {
        out << fmt::format("\nthe band (p10-p90) holds {}% of the lease medians on held-out rows, {}% on leases left out "
                           "(target {:.0f}%; the machines' band alone: {}%); median width {:.1f}% against the leases' "
                           "{:.1f}% ({:.1f}% as the machines' own p10-p90)\n",
                           share_text(band.held_out_rows), share_text(band.held_out_leases), band.target * 100.0,
                           share_text(band.machines_only), band.band_width_pct, band.measured_spread_pct,
                           band.population_spread_pct);
        for (const auto& g : spread) {
            if (g.sigma >= 0.0) out << fmt::format("  host_spread.{:<16} {:.4f}  from {} rows\n", g.group, g.sigma, g.rows);
        }
        if (jitter) {
            out << fmt::format("  frame_jitter: body {:.1f} us, sigma {:.3f}; slow mode {:.4f} after a long idle, {:.1f} us, sigma {:.3f}\n",
                               jitter->body_us, jitter->body_sigma, jitter->slow_probability, jitter->slow_us, jitter->slow_sigma);
            for (const auto& [name, cold_us, sigma] : jitter->cold) {
                out << fmt::format("  frame_jitter.cold_sigma {:.3f} from {} (its frames {:.1f} us over a warm copy)\n", sigma, name, cold_us);
            }
            for (const auto& l : jitter->lines) {
                out << fmt::format("    {:<24} p99 - p50: {:.1f} us measured (median over leases), {:.1f} us model\n", l.stream,
                                   l.measured[2], l.model[2]);
            }
        }
        for (const auto& k : band.kinds) {
            out << fmt::format("  model_error.{:<16} {:>6}  held-out rows {:>5}%, leases {:>5}%, width {:.1f}% / {:.1f}%\n",
                               k.kind, k.sigma < 0.0 ? std::string("none") : fmt::format("{:.4f}", k.sigma), share_text(k.held_out_rows), share_text(k.held_out_leases),
                               k.band_width_pct, k.measured_spread_pct);
        }
    }
    out << "wrote " << o.out_file << "\n";
    return 0;
}

}  // namespace dmasim::app
