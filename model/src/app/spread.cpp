// dmasim spread: how far the leases (separately started machines of one kind) agree, row by row.
// A model can only be held to what repeats across machines; this says which rows do.
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <sstream>

#include "dmasim/app/commands.h"
#include "dmasim/app/leases.h"
#include "dmasim/core/error.h"
#include "dmasim/core/results.h"

namespace dmasim::app {

namespace {

std::string csv_field(const std::string& s) {
    if (s.find_first_of(",\"\n\r") == std::string::npos) return s;
    std::string out = "\"";
    for (const char c : s) {
        if (c == '"') out += '"';
        out += c;
    }
    return out + "\"";
}

const std::vector<std::string>& fixed_columns() {
    static const std::vector<std::string> cols{
        "scenario", "strategy",  "direction", "size_bytes", "variant", "leases",   "median_us",
        "min_us",   "max_us",    "spread_pct", "within_p10_p90_pct", "flagged", "category", "status",
        "note"};
    return cols;
}

struct CategoryAcc {
    std::size_t rows = 0;
    std::size_t multi = 0;  // rows measured in two leases or more: the only ones with a spread
    std::size_t stable = 0;
    std::vector<double> spreads;
    std::vector<double> widths;
};

// Empty when there is nothing to summarise (e.g. no row in two leases yet).
std::string pct_of(const std::vector<double>& v, bool worst) {
    if (v.empty()) return "";
    return fmt::format("{:.2f}", worst ? *std::max_element(v.begin(), v.end()) : core::percentile(v, 0.5));
}

std::string shown(const std::string& pct) { return pct.empty() ? std::string("-") : pct + "%"; }

}  // namespace

int cmd_spread(const SpreadOptions& o, std::ostream& out, std::ostream& err) {
    // Refused before a machine's leases are read, as every command refuses an unwritable output.
    core::OutputFiles planned(o.out_dir);
    planned.add("spread.csv", {});
    planned.add("spread_summary.csv", {});
    planned.check();
    const MeasuredSet set = read_measured_set(o.measured);
    for (const auto& l : set.leases) {
        if (std::find(fixed_columns().begin(), fixed_columns().end(), l.name) != fixed_columns().end()) {
            throw core::InputError(l.path, "", "lease name '" + l.name + "' is also a spread.csv column; rename the folder");
        }
    }
    if (!o.quiet) {
        std::string names;
        for (const auto& l : set.leases) {
            names += fmt::format("{}{} ({} run{}{})", names.empty() ? "" : ", ", l.name, l.runs.size(),
                                 l.runs.size() == 1 ? "" : "s", l.info.legacy ? ", legacy" : "");
        }
        err << fmt::format("{}: {} lease{}: {}\n", o.measured, set.leases.size(), set.leases.size() == 1 ? "" : "s", names);
    }
    const std::vector<CrossLeaseRow> rows = cross_lease(set.leases);

    std::ostringstream csv;
    for (std::size_t i = 0; i < fixed_columns().size(); ++i) csv << (i ? "," : "") << fixed_columns()[i];
    for (const auto& l : set.leases) csv << ',' << csv_field(l.name);
    csv << '\n';
    std::map<std::string, CategoryAcc> cats;
    CategoryAcc all;
    std::size_t skipped = 0;
    std::vector<const CrossLeaseRow*> flagged;
    for (const auto& c : rows) {
        // time_us of a misses row is the deadline the harness was given, not a measurement.
        if (c.row.variant == "misses") continue;
        const core::ResultRow& r = c.row;
        const std::string category = spread_category(r);
        csv << csv_field(r.scenario) << ',' << csv_field(r.strategy) << ',' << r.direction << ',' << r.size_bytes << ','
            << csv_field(r.variant) << ',' << c.per_lease.size() << ',';
        if (c.ok()) {
            csv << fmt::format("{:.4f},{:.4f},{:.4f},{:.2f},{:.2f},{}", c.median_us, c.min_us, c.max_us, c.spread_pct,
                               c.within_p10_p90_pct, c.flagged ? 1 : 0);
        } else {
            csv << ",,,,,0";
        }
        csv << ',' << csv_field(category) << ',' << (c.ok() ? std::string("ok") : r.status) << ','
            << csv_field(c.ok() ? std::string() : r.note);
        for (const auto& l : set.leases) {
            const auto it = std::find_if(c.per_lease.begin(), c.per_lease.end(),
                                         [&](const LeaseValue& v) { return v.lease == l.name; });
            csv << ',' << (it == c.per_lease.end() ? std::string() : fmt::format("{:.4f}", it->time_us));
        }
        csv << '\n';
        if (!c.ok()) {
            ++skipped;
            continue;
        }
        for (CategoryAcc* a : {&cats[category], &all}) {
            ++a->rows;
            a->widths.push_back(c.within_p10_p90_pct);
            if (c.per_lease.size() < 2) continue;
            ++a->multi;
            a->spreads.push_back(c.spread_pct);
            if (!c.flagged) ++a->stable;
        }
        if (c.flagged) flagged.push_back(&c);
    }

    std::ostringstream summary;
    summary << "category,rows,rows_in_2plus_leases,stable_rows,median_spread_pct,max_spread_pct,"
               "median_within_p10_p90_pct\n";
    out << fmt::format("{:<24} {:>5} {:>10} {:>11} {:>14} {:>11} {:>15}\n", "category", "rows", ">=2 leases",
                       fmt::format("<={:.0f}% apart", kSpreadFlagPct), "median spread", "max spread", "median p10-p90");
    auto line = [&](const std::string& name, const CategoryAcc& a) {
        const std::string med = pct_of(a.spreads, false);
        const std::string worst = pct_of(a.spreads, true);
        const std::string width = pct_of(a.widths, false);
        summary << csv_field(name) << ',' << a.rows << ',' << a.multi << ',' << a.stable << ',' << med << ',' << worst
                << ',' << width << '\n';
        out << fmt::format("{:<24} {:>5} {:>10} {:>11} {:>14} {:>11} {:>15}\n", name, a.rows, a.multi, a.stable,
                           shown(med), shown(worst), shown(width));
    };
    for (const auto& [name, a] : cats) line(name, a);
    line("all", all);

    out << fmt::format("\n{} lease{}, {} rows measured ({} in two leases or more, {} of those within {:.0f} %), "
                       "{} skipped in every lease\n",
                       set.leases.size(), set.leases.size() == 1 ? "" : "s", all.rows, all.multi, all.stable,
                       kSpreadFlagPct, skipped);
    if (set.leases.size() < 2) out << "one lease only: spreads across leases are not defined yet\n";
    if (!flagged.empty()) {
        std::sort(flagged.begin(), flagged.end(),
                  [](const CrossLeaseRow* a, const CrossLeaseRow* b) { return a->spread_pct > b->spread_pct; });
        out << fmt::format("widest of the {} flagged rows:\n", flagged.size());
        for (std::size_t i = 0; i < std::min<std::size_t>(flagged.size(), 8); ++i) {
            out << fmt::format("  {:<60} {:>8.1f} %  (median {:.3f} us, {} leases)\n", flagged[i]->key,
                               flagged[i]->spread_pct, flagged[i]->median_us, flagged[i]->per_lease.size());
        }
    }

    core::OutputFiles files(o.out_dir);
    files.add("spread.csv", csv.str());
    files.add("spread_summary.csv", summary.str());
    files.commit();
    out << "wrote " << o.out_dir << "/spread.csv, spread_summary.csv\n";
    return 0;
}

}  // namespace dmasim::app
