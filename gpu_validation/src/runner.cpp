#include "runner.h"

#include <chrono>
#include <cstdio>
#include <ostream>
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
    }
    return out;
}

std::string case_tag(const CaseDecision& d, std::size_t total) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "[%zu/%zu] ", d.spec.index + 1, total);
    return buf + d.spec.label() + " (" + d.spec.scenario + ")";
}

}  // namespace

RunSummary run_plan(const std::vector<CaseDecision>& decisions, Backend& backend, const Options& opt,
                    std::ostream& log) {
    const auto start = std::chrono::steady_clock::now();
    RunSummary out;
    const MachineInfo machine = backend.machine_info();
    const std::size_t total = decisions.size();
    for (const CaseDecision& d : decisions) {
        if (d.action == CaseAction::filter) {
            ++out.filtered;
            continue;
        }
        std::string reason = d.action == CaseAction::skip ? d.reason : machine_skip_reason(d.spec, machine);
        if (!reason.empty()) {
            ++out.skipped;
            out.rows.push_back(skipped_row(d.spec, reason));
            if (!opt.quiet) log << case_tag(d, total) << ": skipped: " << reason << std::endl;
            continue;
        }
        std::vector<ResultRow> rows;
        try {
            rows = backend.measure(d.spec);
        } catch (const std::exception& e) {
            throw std::runtime_error("case " + std::to_string(d.spec.index + 1) + " (scenario " + d.spec.scenario +
                                     ", " + d.spec.label() + "): " + e.what());
        }
        ++out.run;
        if (!opt.quiet) {
            const double t = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
            log << case_tag(d, total) << ": " << describe_rows(rows) << fmt("  [%.1f s]", t) << std::endl;
        }
        out.rows.insert(out.rows.end(), rows.begin(), rows.end());
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
