// dmasim calibrate: fits the model's free parameters to measured rows with NLopt (BOBYQA),
// minimising the mean squared log of predicted / measured time, and reports the error on rows
// it was not fitted to. Link physics from the specification is never among the free
// parameters.
#include <fmt/format.h>
#include <nlopt.hpp>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>

#include "dmasim/app/commands.h"
#include "dmasim/app/leases.h"
#include "dmasim/app/processes.h"
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
};

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
        {"cpu.register_fixed", 1e6, 1e9, false},
        {"cpu.register_per_page", 5e3, 5e6, false},
        {"cpu.unregister_fixed", 1e6, 1e9, false},
        {"cpu.unregister_per_page", 5e3, 5e6, false},
        {"cpu.alloc_pinned_fixed", 0.5e6, 1e9, false},
        {"cpu.alloc_pinned_per_page", 5e3, 5e6, false},
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

double current_value(const FreeParam& p) {
    for (const auto& d : config::describe(config::ModelParams{}, config::StrategyOptions{})) {
        if (d.path != p.key) continue;
        return p.bandwidth ? core::parse_bandwidth(d.value).bytes_per_s
                           : static_cast<double>(d.value == "0s" ? 0 : core::parse_duration(d.value).ps);
    }
    throw std::logic_error(std::string("free parameter ") + p.key + " is not a model parameter");
}

std::uint64_t fnv1a(const std::string& text) {
    std::uint64_t h = 1469598103934665603ULL;
    for (const unsigned char c : text) {
        h ^= c;
        h *= 1099511628211ULL;
    }
    return h;
}

struct Row {
    std::string key;
    core::ResultRow measured;
    int fold = 0;  // FNV-1a of the key modulo 5 (fixed split) or K (k-fold)
};

// One evaluation: simulate in a child process (SystemC elaborates once per process) and read
// its predictions back.
std::map<std::string, double> predict(const std::string& scenarios_dir, const std::vector<Row>& rows,
                                      const std::vector<config::SetOverride>& sets) {
    std::vector<core::ResultRow> measured;
    for (const auto& r : rows) measured.push_back(r.measured);
    const auto scenarios = restrict_to_measured(load_scenario_dir(scenarios_dir, sets), measured);
    const TempFile rows_file("dmasim-calibrate-");
    const pid_t pid = fork_child({rows_file.path()});
    if (pid == 0) {
        int status = 0;
        try {
            std::ofstream f(rows_file.path());
            core::write_results_csv(f, simulate_quietly(scenarios));
            f.close();
            if (!f) throw std::runtime_error("cannot write " + rows_file.path());
        } catch (const std::exception& e) {
            std::fprintf(stderr, "dmasim calibrate: simulation failed: %s\n", e.what());
            status = 1;
        } catch (...) {
            // Unwinding further would run the parent's code in this process.
            status = 1;
        }
        std::_Exit(status);
    }
    const int status = wait_child(pid);
    std::map<std::string, double> out;
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0) {
        std::ifstream in(rows_file.path());
        // A not_modelled row has no time to fit to.
        for (const auto& r : core::read_results_csv(in, rows_file.path())) {
            if (r.status == "ok" && r.time_us > 0.0) out[result_key(r)] = r.time_us;
        }
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

struct Fit {
    std::vector<double> x;
    double objective = 0.0;
    int evaluations = 0;
};

Fit fit(const std::vector<FreeParam>& free, const std::vector<Row>& rows, const std::vector<bool>& train,
        const CalibrateOptions& o, std::ostream& err) {
    Fit best;
    best.x.resize(free.size());
    for (std::size_t i = 0; i < free.size(); ++i) best.x[i] = to_unit(free[i], current_value(free[i]));
    struct Context {
        const std::vector<FreeParam>* free;
        const std::vector<Row>* rows;
        const std::vector<bool>* train;
        const CalibrateOptions* o;
        std::ostream* err;
        int evaluations = 0;
    } ctx{&free, &rows, &train, &o, &err};
    auto objective = [](const std::vector<double>& x, std::vector<double>&, void* data) -> double {
        auto& c = *static_cast<Context*>(data);
        std::vector<config::SetOverride> sets;
        for (std::size_t i = 0; i < c.free->size(); ++i) {
            sets.push_back({(*c.free)[i].key, format_value((*c.free)[i], to_value((*c.free)[i], x[i]))});
        }
        const auto predicted = predict(c.o->scenarios_dir, *c.rows, sets);
        double sum = 0.0;
        std::size_t n = 0;
        for (std::size_t i = 0; i < c.rows->size(); ++i) {
            if (!(*c.train)[i]) continue;
            const auto it = predicted.find((*c.rows)[i].key);
            if (it == predicted.end()) continue;
            const double e = log_error(it->second, (*c.rows)[i].measured.time_us);
            sum += e * e;
            ++n;
        }
        ++c.evaluations;
        const double value = n ? sum / static_cast<double>(n) : 1e9;
        if (!c.o->quiet) *c.err << fmt::format("\r  step {:4d}: rms log error {:.4f}", c.evaluations, std::sqrt(value));
        return value;
    };
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
    for (std::size_t i = 0; i < free.size(); ++i) sets.push_back({free[i].key, format_value(free[i], to_value(free[i], x[i]))});
    return sets;
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

// For each lease: fit to the cross-lease medians of the other leases, then measure the error
// against this lease's own values. That is the error to expect on a machine the calibration has
// not seen, which neither the fixed split nor k-fold (both over rows of the same machines) shows.
LeaveOneLeaseOut leave_one_lease_out(const std::vector<FreeParam>& free, const std::vector<Row>& rows,
                                     const std::vector<Lease>& leases, const std::vector<CrossLeaseRow>& across,
                                     const CalibrateOptions& o, std::ostream& err) {
    LeaveOneLeaseOut res;
    if (leases.size() < 2) {
        res.skipped = "needs at least two leases";
        return res;
    }
    std::map<std::string, const CrossLeaseRow*> by_key;
    for (const auto& c : across) by_key[c.key] = &c;
    std::vector<std::string> not_evaluated;
    for (std::size_t li = 0; li < leases.size(); ++li) {
        const std::string& name = leases[li].name;
        // This lease's own values of the usable rows.
        std::map<std::string, double> own;
        for (const auto& r : rows) {
            const auto it = by_key.find(r.key);
            if (it == by_key.end()) continue;
            for (const auto& v : it->second->per_lease) {
                if (v.lease == name) own[r.key] = v.time_us;
            }
        }
        if (own.empty()) {
            not_evaluated.push_back(name + " (no usable row)");
            continue;
        }
        std::vector<Lease> others;
        for (std::size_t k = 0; k < leases.size(); ++k) {
            if (k != li) others.push_back(leases[k]);
        }
        std::map<std::string, double> other_median;
        for (const auto& c : cross_lease(others)) {
            if (c.ok()) other_median[c.key] = c.median_us;
        }
        std::vector<Row> train_rows;
        for (const auto& r : rows) {
            const auto it = other_median.find(r.key);
            if (it == other_median.end()) continue;
            Row t = r;
            t.measured.time_us = it->second;
            train_rows.push_back(std::move(t));
        }
        if (train_rows.size() < free.size() + 1) {
            not_evaluated.push_back(name + " (the other leases have too few rows)");
            continue;
        }
        if (!o.quiet) err << fmt::format("lease {}: fitting to the other {} leases ({} rows)\n", name, others.size(), train_rows.size());
        const Fit f = fit(free, train_rows, std::vector<bool>(train_rows.size(), true), o, err);
        const auto p = predict(o.scenarios_dir, rows, sets_of(free, f.x));
        std::vector<double> e;
        for (const auto& [key, value] : own) {
            const auto it = p.find(key);
            if (it != p.end()) e.push_back(std::fabs((it->second / value - 1.0) * 100.0));
        }
        res.per_lease.push_back(LeaseError{name, train_rows.size(), stats_of(e)});
    }
    for (const auto& n : not_evaluated) res.skipped += (res.skipped.empty() ? "" : "; ") + n;
    return res;
}

}  // namespace

int cmd_calibrate(const CalibrateOptions& o, int argc, char** argv, std::ostream& out, std::ostream& err) {
    // The fit is to cross-lease medians: what repeats across machines of the kind, not one
    // machine's luck.
    // The fit takes minutes: a file that could not be written is refused first.
    core::OutputFiles planned;
    planned.add_path(o.out_file, {});
    planned.check();
    const MeasuredSet set = read_measured_set(o.measured);
    const std::vector<CrossLeaseRow> across = cross_lease(set.leases);
    const std::vector<core::ResultRow> measured = cross_lease_rows(across);
    const std::string csv_path = set.files().size() == 1 ? set.files().front() : o.measured;
    std::string raw_text;  // every file read, in order: the data's fingerprint
    for (const auto& f : set.files()) {
        std::ifstream raw(f);
        std::stringstream ss;
        ss << raw.rdbuf();
        raw_text += ss.str();
    }

    std::vector<FreeParam> free;
    for (const auto& p : free_params()) {
        if (o.free.empty() || std::find(o.free.begin(), o.free.end(), p.key) != o.free.end()) free.push_back(p);
    }
    for (const auto& k : o.free) {
        if (std::none_of(free.begin(), free.end(), [&](const FreeParam& p) { return k == p.key; })) {
            throw core::InputError("--free", k, "not a free parameter; see docs/calibration.md");
        }
    }

    // The rows to fit: timed transfers and setup costs up to max_size; not periodic streams
    // (their many frames make a step slow) and not harness-only rows.
    std::vector<Row> rows;
    for (const auto& m : measured) {
        if (m.status != "ok" || m.source != "hw" || m.time_us <= 0 || m.size_bytes > o.max_size) continue;
        if (m.strategy == "periodic" || m.variant == "kernel" || m.variant == "setup=freehost" || m.variant == "misses") {
            continue;
        }
        rows.push_back(Row{result_key(m), m, 0});
    }
    // Keep the rows the model predicts.
    const auto baseline = predict(o.scenarios_dir, rows, {});
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
    constexpr int kSplit = 5;
    std::vector<bool> train(rows.size());
    for (std::size_t i = 0; i < rows.size(); ++i) {
        rows[i].fold = static_cast<int>(fnv1a(rows[i].key) % kSplit);
        train[i] = rows[i].fold != 0;
    }
    if (!o.quiet) err << fmt::format("calibrating {} free parameters on {} rows ({} held out)\n", free.size(), rows.size(),
                                     std::count(train.begin(), train.end(), false));
    const Fit main = fit(free, rows, train, o, err);

    std::vector<config::SetOverride> fitted;
    for (std::size_t i = 0; i < free.size(); ++i) fitted.push_back({free[i].key, format_value(free[i], to_value(free[i], main.x[i]))});
    const auto predicted = predict(o.scenarios_dir, rows, fitted);
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
        std::vector<bool> t(rows.size());
        for (std::size_t i = 0; i < rows.size(); ++i) t[i] = static_cast<int>(fnv1a(rows[i].key) % o.folds) != k;
        if (!o.quiet) err << fmt::format("fold {}/{}\n", k + 1, o.folds);
        const Fit f = fit(free, rows, t, o, err);
        std::vector<config::SetOverride> sets;
        for (std::size_t i = 0; i < free.size(); ++i) sets.push_back({free[i].key, format_value(free[i], to_value(free[i], f.x[i]))});
        const auto p = predict(o.scenarios_dir, rows, sets);
        std::vector<double> e;
        for (std::size_t i = 0; i < rows.size(); ++i) {
            if (!t[i]) e.push_back(std::fabs((p.at(rows[i].key) / rows[i].measured.time_us - 1.0) * 100.0));
        }
        kfold_medians.push_back(stats_of(e).median);
    }

    const LeaveOneLeaseOut lolo = o.leave_one_lease_out ? leave_one_lease_out(free, rows, set.leases, across, o, err)
                                                        : LeaveOneLeaseOut{{}, "--no-lolo"};

    const Stats tr = stats_of(train_err);
    const Stats ho = stats_of(held_err);
    const Stats hb = stats_of(held_err_big);
    const Stats hs = stats_of(held_err_small);
    std::ostringstream y;
    y << "# dmasim calibration (docs/calibration.md). `dmasim compare --calibration` reads `parameters`.\n";
    y << "# " << command_line_text(argc, argv) << "\n";
    y << "parameters:\n";
    for (const auto& s : fitted) y << "  " << s.path << ": " << s.value << "\n";
    y << "bounds:\n";
    for (const auto& p : free) {
        y << "  " << p.key << ": [" << format_value(p, p.lower) << ", " << format_value(p, p.upper) << "]  # default "
          << format_value(p, current_value(p)) << "\n";
    }
    y << "data:\n  measured: " << csv_path << "\n" << fmt::format("  fnv1a64: \"{:016x}\"\n", fnv1a(raw_text));
    y << "  values: \"median over leases of each lease's median over its runs\"\n  leases:\n";
    for (const auto& l : set.leases) {
        y << fmt::format("    - {{ lease: {}, runs: {}, legacy: {} }}\n", yaml_quote(l.name), l.runs.size(),
                         l.info.legacy ? "true" : "false");
    }
    y << "  scenarios: " << o.scenarios_dir << "\n" << fmt::format("  max_size_bytes: {}\n", o.max_size);
    y << fmt::format("  rows: {}\n  split: \"held out: FNV-1a(row key) % {} == 0 ({} rows)\"\n", rows.size(), kSplit, ho.n);
    y << "summary:\n" << fmt::format("  evaluations: {}\n  objective_rms_log_error: {:.5f}\n", main.evaluations, std::sqrt(main.objective));
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
    y << "residuals:\n" << residuals.str();

    core::OutputFiles files;
    files.add_path(o.out_file, y.str());
    files.commit();

    out << fmt::format("{:<36} {:>16} {:>16}\n", "parameter", "default", "fitted");
    for (std::size_t i = 0; i < free.size(); ++i) {
        out << fmt::format("{:<36} {:>16} {:>16}\n", free[i].key, format_value(free[i], current_value(free[i])),
                           fitted[i].value);
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
    out << "wrote " << o.out_file << "\n";
    return 0;
}

}  // namespace dmasim::app
