#include "runner.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <ostream>
#include <random>
#include <stdexcept>

#include "stats.h"

namespace dmaprobe {

using dmasim::core::ResultRow;

namespace {

std::string fmt(const char* f, double v) {
    char buf[64];
    std::snprintf(buf, sizeof buf, f, v);
    return buf;
}

std::string describe_rows(const std::vector<ResultRow>& rows) {
    std::string out;
    for (std::size_t i = 0; i < rows.size(); ++i) {
        const ResultRow& r = rows[i];
        if (i > 0) out += "; ";
        if (!r.variant.empty()) out += r.variant + " ";
        out += fmt("%.2f us", r.time_us);
        if (i == 0 || r.variant.find("setup=") == std::string::npos) out += fmt(" (%.2f GB/s)", r.gbps());
        if (i == 0 && r.repetitions > 1) out += fmt(" cv %.1f%%", r.cv * 100.0);
    }
    return out;
}

// "case 12 pinned/d2h 64MiB (smoke-pinned)": the plan's case number (1-based, as --list and
// error messages give it), whatever position the case runs at.
std::string case_tag(const CaseDecision& d) {
    return "case " + std::to_string(d.spec.index + 1) + " " + d.spec.label() + " (" + d.spec.scenario + ")";
}

// Bounded draw in [0, bound) without modulo bias: reject the few low values that would make
// some results more likely (the OpenBSD arc4random_uniform method).
std::uint64_t draw_below(std::mt19937_64& gen, std::uint64_t bound) {
    const std::uint64_t reject_below = (0 - bound) % bound;  // 2^64 mod bound
    std::uint64_t r = 0;
    do {
        r = gen();
    } while (r < reject_below);
    return r % bound;
}

}  // namespace

std::vector<std::size_t> shuffled_indices(std::size_t n, std::uint64_t seed) {
    std::vector<std::size_t> out(n);
    for (std::size_t i = 0; i < n; ++i) out[i] = i;
    std::mt19937_64 gen(seed);
    for (std::size_t i = n; i > 1; --i) {
        const auto j = static_cast<std::size_t>(draw_below(gen, i));
        std::swap(out[i - 1], out[j]);
    }
    return out;
}

std::uint64_t random_seed() {
    std::uint64_t s = static_cast<std::uint64_t>(std::chrono::system_clock::now().time_since_epoch().count());
    try {
        std::random_device rd;
        s ^= (static_cast<std::uint64_t>(rd()) << 32) ^ rd();
    } catch (const std::exception&) {
        // No entropy source: the clock alone still differs from run to run.
    }
    // One splitmix64 step spreads the clock's low-entropy high bits over the whole word.
    s += 0x9E3779B97F4A7C15ULL;
    s = (s ^ (s >> 30)) * 0xBF58476D1CE4E5B9ULL;
    s = (s ^ (s >> 27)) * 0x94D049BB133111EBULL;
    s ^= s >> 31;
    return s & ((std::uint64_t{1} << 53) - 1);
}

RunSummary run_plan(const std::vector<CaseDecision>& decisions, Backend& backend, const Options& opt,
                    std::ostream& log) {
    const auto start = std::chrono::steady_clock::now();
    RunSummary out;
    out.order = opt.order;
    out.seed = opt.seed ? *opt.seed : random_seed();
    const MachineInfo machine = backend.machine_info();

    // Rows per decision, so that they can be put back in plan order after a shuffled run.
    std::vector<std::vector<ResultRow>> rows_of(decisions.size());
    std::vector<std::size_t> runnable;  // positions in `decisions`
    for (std::size_t k = 0; k < decisions.size(); ++k) {
        const CaseDecision& d = decisions[k];
        if (d.action == CaseAction::filter) {
            ++out.filtered;
            continue;
        }
        const std::string reason = d.action == CaseAction::skip ? d.reason : machine_skip_reason(d.spec, machine);
        if (reason.empty()) {
            runnable.push_back(k);
            continue;
        }
        ++out.skipped;
        rows_of[k].push_back(skipped_row(d.spec, reason));
        if (!opt.quiet) log << "[skip] " << case_tag(d) << ": skipped: " << reason << std::endl;
    }

    if (opt.order == CaseOrder::shuffle) {
        const std::vector<std::size_t> perm = shuffled_indices(runnable.size(), out.seed);
        std::vector<std::size_t> shuffled(runnable.size());
        for (std::size_t i = 0; i < perm.size(); ++i) shuffled[i] = runnable[perm[i]];
        runnable.swap(shuffled);
    }
    if (!opt.quiet) {
        log << "dmaprobe: measuring " << runnable.size() << " cases in "
            << (opt.order == CaseOrder::shuffle
                    ? "shuffled order (seed " + std::to_string(out.seed) + "; --seed " + std::to_string(out.seed) +
                          " repeats it)"
                    : std::string("plan order"))
            << std::endl;
    }

    for (std::size_t pos = 0; pos < runnable.size(); ++pos) {
        const CaseDecision& d = decisions[runnable[pos]];
        std::vector<ResultRow> rows;
        try {
            rows = backend.measure(d.spec);
        } catch (const std::exception& e) {
            throw std::runtime_error("case " + std::to_string(d.spec.index + 1) + " (scenario " + d.spec.scenario +
                                     ", " + d.spec.label() + "): " + e.what());
        }
        ++out.run;
        out.run_order.push_back(d.spec.index);
        if (!opt.quiet) {
            const double t = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
            char n[48];
            std::snprintf(n, sizeof n, "[%zu/%zu] ", pos + 1, runnable.size());
            log << n << case_tag(d) << ": " << describe_rows(rows) << fmt("  [%.1f s]", t) << std::endl;
        }
        rows_of[runnable[pos]] = std::move(rows);
    }

    // Plan order: by case index (decisions normally are in that order already).
    std::vector<std::size_t> by_index(decisions.size());
    for (std::size_t k = 0; k < by_index.size(); ++k) by_index[k] = k;
    std::stable_sort(by_index.begin(), by_index.end(),
                     [&](std::size_t a, std::size_t b) { return decisions[a].spec.index < decisions[b].spec.index; });
    for (std::size_t k : by_index) {
        for (auto& r : rows_of[k]) {
            out.rows.push_back(std::move(r));
            out.row_case.push_back(decisions[k].spec.index);
        }
    }
    out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return out;
}

void list_plan(const std::vector<CaseDecision>& decisions, const std::string& plan_path, std::ostream& out) {
    std::size_t run = 0, skip = 0, filter = 0;
    for (const auto& d : decisions) {
        if (d.action == CaseAction::run) ++run;
        if (d.action == CaseAction::skip) ++skip;
        if (d.action == CaseAction::filter) ++filter;
    }
    out << "plan " << plan_path << ": " << decisions.size() << " cases: " << run << " to run, " << skip
        << " skipped, " << filter << " filtered out\n";
    for (const auto& d : decisions) {
        char num[16];
        std::snprintf(num, sizeof num, "%5zu", d.spec.index + 1);
        out << num << "  ";
        const MeasurementSpec& s = d.spec;
        switch (d.action) {
            case CaseAction::run: {
                out << "run     " << s.label() << "  scenario=" << s.scenario;
                if (!s.variant.empty()) out << " variant=" << s.variant;
                if (s.strategy == Strategy::periodic) {
                    out << "  frames=" << s.frames << " warmup=" << s.warmup;
                } else {
                    out << (s.repetitions_fixed ? "  reps=" : "  reps<=") << s.repetitions << " warmup=" << s.warmup;
                }
                const std::string cond = machine_conditions(s);
                if (!cond.empty()) out << "  [" << cond << "]";
                break;
            }
            case CaseAction::skip:
                out << "skip    " << s.label() << "  scenario=" << s.scenario << "  -- " << d.reason;
                break;
            case CaseAction::filter:
                out << "filter  " << s.label() << "  scenario=" << s.scenario << "  -- " << d.reason;
                break;
        }
        out << '\n';
    }
}

}  // namespace dmaprobe
