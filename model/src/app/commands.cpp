#include "dmasim/app/commands.h"
#include "dmasim/app/leases.h"
#include "dmasim/app/processes.h"

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <map>
#include <ctime>
#include <fstream>
#include <iostream>
#include <memory>
#include <sstream>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <pthread.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <iterator>

#include "dmasim/config/param_io.h"
#include "dmasim/config/plan_expand.h"
#include "dmasim/config/scenario.h"
#include "dmasim/core/error.h"
#include "dmasim/core/input_file.h"
#include "dmasim/core/plan.h"
#include "dmasim/core/results.h"
#include "dmasim/pcie/wire.h"
#include "dmasim/sim/simulator.h"
#include "dmasim/sim/trace.h"
#include "dmasim/topology/platform.h"
#include "dmasim/topology/import.h"
#include "dmasim/topology/platform_file.h"

namespace dmasim::app {

namespace {

constexpr int kExitOk = 0;
constexpr int kExitFailure = 1;
constexpr int kExitBadInput = 2;

struct Options {
    std::vector<std::string> files;
    std::vector<std::string> sets;
    // Not results/: the committed predictions are replaced only when asked for by name.
    std::string out_dir = "out/sim";
    std::string plan_out;
    bool explain = false;
    bool quiet = false;
    std::string trace_file;
    std::string trace_resolution = "1us";
    std::string measured;
    std::string calibration;
    std::string scenarios_dir = "scenarios";
};

std::size_t case_count(const config::Scenario& s) {
    if (!s.flows.empty()) return s.flows.size();
    std::size_t n = 0;
    for (const auto& st : s.strategies) n += s.directions.size() * (st == "periodic" ? 1 : s.sizes.size());
    return n;
}

std::vector<config::Scenario> load_all(const Options& o) {
    std::vector<config::SetOverride> sets;
    // A calibration's parameters first, so that --set can still override them.
    if (!o.calibration.empty()) sets = config::read_calibration(o.calibration);
    for (const auto& s : o.sets) sets.push_back(config::parse_set(s));
    std::vector<config::Scenario> all;
    for (const auto& f : o.files) {
        auto v = config::load_scenarios(f, sets);
        for (auto& s : v) {
            for (const auto& existing : all) {
                if (existing.name == s.name) {
                    throw core::InputError(f, "name", "scenario '" + s.name + "' is also defined in " + existing.file);
                }
            }
            // The platform must exist and carry what the strategies need.
            topology::check_scenario_platform(s, topology::load_platform(s));
            all.push_back(std::move(s));
        }
    }
    return all;
}

std::string utc_now() {
    const std::time_t t = std::time(nullptr);
    char buf[32];
    std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&t));
    return buf;
}

std::string human_size(std::uint64_t b) { return core::to_string(core::Bytes{b}); }

// The PCIe link of the platform's first GPU, as the rows' note names it: on a platform file it
// can differ from the scenario's `link` section.
std::string gpu_link_description(const topology::Platform& p, const config::LinkParams& fallback) {
    const auto gpus = topology::gpus(p);
    if (!gpus.empty()) {
        const topology::Graph& g = p.graph();
        for (auto [e, end] = boost::out_edges(gpus.front(), g); e != end; ++e) {
            if (g[*e].kind == topology::LinkKind::kPcie) return pcie::describe_link(g[*e].pcie);
        }
    }
    return pcie::describe_link(fallback);
}

std::string human_time(double us) {
    if (us >= 1e6) return fmt::format("{:.3f} s", us * 1e-6);
    if (us >= 1e3) return fmt::format("{:.3f} ms", us * 1e-3);
    return fmt::format("{:.3f} us", us);
}

std::string command_line(int argc, char** argv) {
    std::string s;
    for (int i = 0; i < argc; ++i) {
        if (i) s += ' ';
        s += argv[i];
    }
    return s;
}

void write_meta(core::JsonWriter& j, const std::string& cmdline, std::size_t rows, double wall_s) {
    char host[256] = {0};
    ::gethostname(host, sizeof host - 1);
    j.begin_object();
    j.value("tool", "dmasim");
    j.value("version", DMASIM_VERSION);
    j.value("commit", DMASIM_GIT_COMMIT);
    j.value("source", "sim");
    j.value("date", utc_now());
    j.value("host", std::string(host));
    j.value("command", cmdline);
    j.value("rows", static_cast<std::uint64_t>(rows));
    j.value("wall_seconds", wall_s);
    j.value("systemc", sc_core::sc_version());
    j.end_object();
}

// What each link carried during one case: the "why" behind a throughput.
struct Breakdown {
    std::string key;  // scenario/strategy/direction/size
    sim::LinkReport link;
    double time_ps;
};

std::string links_csv_header() {
    return "scenario_row,link,tlps,mem_writes,mem_reads,completions,payload_bytes,tlp_overhead_bytes,dllps,"
           "ack_dllps,updatefc_dllps,dllp_bytes,busy_fraction,credit_stall_fraction,raw_gbps\n";
}

std::string links_csv_body(const std::vector<Breakdown>& rows) {
    std::ostringstream os;
    for (const auto& b : rows) {
        const auto& s = b.link.stats;
        os << b.key << ',' << b.link.label << ',' << s.tlps << ',' << s.tlps_by_kind[0] << ',' << s.tlps_by_kind[1]
           << ',' << s.tlps_by_kind[2] << ',' << s.payload_bytes << ',' << s.tlp_overhead_bytes << ',' << s.dllps
           << ',' << s.ack_dllps << ',' << s.updatefc_dllps << ',' << s.dllp_bytes << ','
           << fmt::format("{:.4f}", b.time_ps > 0 ? s.busy_ps / b.time_ps : 0.0) << ','
           << fmt::format("{:.4f}", b.time_ps > 0 ? s.credit_stall_ps / b.time_ps : 0.0) << ','
           << fmt::format("{:.3f}", b.link.gbps_raw) << '\n';
    }
    return os.str();
}

void explain(std::ostream& out, const std::vector<Breakdown>& rows, std::size_t first) {
    for (std::size_t i = first; i < rows.size(); ++i) {
        const auto& b = rows[i];
        const auto& s = b.link.stats;
        const double busy = b.time_ps > 0 ? s.busy_ps / b.time_ps : 0.0;
        const double wire = static_cast<double>(s.payload_bytes + s.tlp_overhead_bytes + s.dllp_bytes);
        out << fmt::format(
            "    {:<10} {:5.1f}% busy: {:>9} writes, {:>8} read requests, {:>9} completions; wire bytes: "
            "{:5.1f}% payload, {:4.1f}% TLP overhead, {:4.1f}% DLLPs ({} Ack, {} UpdateFC)\n",
            b.link.label, busy * 100, s.tlps_by_kind[0], s.tlps_by_kind[1], s.tlps_by_kind[2],
            wire > 0 ? 100.0 * s.payload_bytes / wire : 0.0, wire > 0 ? 100.0 * s.tlp_overhead_bytes / wire : 0.0,
            wire > 0 ? 100.0 * s.dllp_bytes / wire : 0.0, s.ack_dllps, s.updatefc_dllps);
    }
}

void print_table(std::ostream& out, const std::vector<core::ResultRow>& rows) {
    out << fmt::format("{:<22} {:<14} {:<5} {:>9} {:<18} {:>13} {:>10}  {}\n", "scenario", "strategy", "dir", "size",
                       "variant", "time", "GB/s", "status");
    for (const auto& r : rows) {
        if (r.status != "ok") {
            out << fmt::format("{:<22} {:<14} {:<5} {:>9} {:<18} {:>13} {:>10}  {}: {}\n", r.scenario, r.strategy,
                               r.direction, human_size(r.size_bytes), r.variant, "-", "-", r.status, r.note);
            continue;
        }
        const bool is_time_only = r.variant.rfind("setup=", 0) == 0 || r.variant == "misses";
        const std::string rate = is_time_only ? std::string("-") : fmt::format("{:.2f}", r.gbps());
        out << fmt::format("{:<22} {:<14} {:<5} {:>9} {:<18} {:>13} {:>10}  {}\n", r.scenario, r.strategy, r.direction,
                           human_size(r.size_bytes), r.variant, human_time(r.time_us), rate,
                           r.variant == "misses" ? r.note : std::string("ok"));
    }
}

int cmd_validate(const Options& o, std::ostream& out) {
    const auto all = load_all(o);
    for (const auto& s : all) {
        out << fmt::format("{}: scenario '{}' ok ({} strategies, {} cases)\n", s.file, s.name, s.strategies.size(),
                           case_count(s));
    }
    return kExitOk;
}

int cmd_plan(const Options& o, std::ostream& out) {
    const auto all = load_all(o);
    const core::Plan plan = config::expand_plan(all);
    std::ostringstream text;
    core::write_plan(text, plan);
    if (o.plan_out.empty() || o.plan_out == "-") {
        out << text.str();
        return kExitOk;
    }
    core::OutputFiles files;
    files.add_path(o.plan_out, text.str());
    files.commit();
    out << fmt::format("wrote {} cases to {}\n", plan.cases.size(), o.plan_out);
    return kExitOk;
}

int cmd_params(std::ostream& out, bool markdown) {
    const auto docs = config::describe(config::ModelParams{}, config::StrategyOptions{});
    if (markdown) {
        out << "| key | default | unit | meaning |\n|---|---|---|---|\n";
        for (const auto& d : docs) out << fmt::format("| `{}` | `{}` | {} | {} |\n", d.path, d.value, d.unit, d.doc);
        return kExitOk;
    }
    out << fmt::format("{:<36} {:>12}  {:<9} {}\n", "key", "default", "unit", "meaning");
    for (const auto& d : docs) out << fmt::format("{:<36} {:>12}  {:<9} {}\n", d.path, d.value, d.unit, d.doc);
    return kExitOk;
}

// Simulates scenarios that share one platform (one SystemC elaboration).
void simulate_group(const std::vector<const config::Scenario*>& group, const Options& o, std::size_t& done,
                    std::size_t total, std::vector<core::ResultRow>& rows, std::vector<Breakdown>& breakdown,
                    std::ostream& out, std::ostream& err) {
    sim::Simulator simulator(topology::load_platform(*group.front()), group.front()->params);
    for (const config::Scenario* sp : group) {
        const config::Scenario& s = *sp;
        const topology::Platform links = topology::load_platform(s);  // this scenario's link settings
        if (!s.flows.empty()) {
            // Contention: all flows in one simulation, a row each.
            const sim::CaseResult res = simulator.run_flows(s.params, s.flows, &links, s.name + ": flows", s.file);
            done += s.flows.size();
            for (std::size_t i = 0; i < s.flows.size(); ++i) {
                core::ResultRow r;
                r.scenario = s.name;
                r.strategy = s.flows[i].strategy;
                r.direction = s.flows[i].direction;
                r.size_bytes = s.flows[i].size;
                r.source = "sim";
                r.variant = res.rows[i].variant;
                r.time_us = r.p10_us = r.p90_us = r.min_us = r.max_us = res.rows[i].time_ps * 1e-6;
                r.note = res.rows[i].note;
                rows.push_back(r);
                if (!o.quiet) {
                    err << fmt::format("[{}/{}] {} {}: {} = {:.2f} GB/s\n", done, total, s.name, r.variant,
                                       human_time(r.time_us), r.gbps());
                }
            }
            const std::string key = s.name + "/flows";
            for (const auto& l : res.links) breakdown.push_back(Breakdown{key, l, res.time_ps});
            continue;
        }
        const std::string link_note = gpu_link_description(links, s.params.link);
        for (const auto& strategy : s.strategies) {
            for (const auto& direction : s.directions) {
                const std::vector<std::uint64_t> sizes =
                    strategy == "periodic" ? std::vector<std::uint64_t>{s.options.periodic.size.value} : s.sizes;
                for (const auto size : sizes) {
                    ++done;
                    core::ResultRow base;
                    base.scenario = s.name;
                    base.strategy = strategy;
                    base.direction = direction;
                    base.directions = direction == "both" ? 2 : 1;
                    base.size_bytes = size;
                    base.source = "sim";
                    if (!sim::strategy_modelled(strategy)) {
                        base.status = "skipped";
                        base.note = std::string("strategy not modelled in this version (modelled: ") +
                                    sim::modelled_strategies() + ")";
                        rows.push_back(base);
                        continue;
                    }
                    const std::size_t first = breakdown.size();
                    const auto t0 = std::chrono::steady_clock::now();
                    const sim::CaseResult res = simulator.run(
                        s.params, sim::CaseSpec{strategy, direction, size, s.options,
                                                s.name + ": " + strategy + " " + direction + " " + human_size(size),
                                                &links, s.file});
                    const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
                    for (const auto& rr : res.rows) {
                        core::ResultRow r = base;
                        r.variant = rr.variant;
                        r.directions = rr.directions;
                        r.time_us = rr.time_ps * 1e-6;
                        r.p10_us = rr.p10_ps * 1e-6;
                        r.p90_us = rr.p90_ps * 1e-6;
                        r.min_us = rr.min_ps * 1e-6;
                        r.max_us = rr.max_ps * 1e-6;
                        r.status = rr.status;
                        r.note = rr.status == "ok" ? link_note + (rr.note.empty() ? "" : "; " + rr.note) : rr.note;
                        rows.push_back(r);
                    }
                    const core::ResultRow& r = rows[rows.size() - res.rows.size()];
                    const std::string key = s.name + "/" + strategy + "/" + direction + "/" + std::to_string(size);
                    for (const auto& l : res.links) breakdown.push_back(Breakdown{key, l, res.time_ps});
                    if (!o.quiet && r.status != "ok") {
                        err << fmt::format("[{}/{}] {} {} {} {}: {}: {}\n", done, total, s.name, strategy, direction,
                                           human_size(size), r.status, r.note);
                    } else if (!o.quiet) {
                        err << fmt::format("[{}/{}] {} {} {} {}: {} = {:.2f} GB/s ({} TLPs, {:.2f} s)\n", done, total,
                                           s.name, strategy, direction, human_size(size), human_time(r.time_us),
                                           r.gbps(), res.tlps(), wall);
                    }
                    if (o.explain) {
                        out << fmt::format("{} {} {} {}: {} = {:.2f} GB/s\n", s.name, strategy, direction,
                                           human_size(size), human_time(r.time_us), r.gbps());
                        explain(out, breakdown, first);
                    }
                }
            }
        }
    }
}

std::string slurp(const std::string& path) {
    std::ifstream in(path);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

void simulate_all(const std::vector<config::Scenario>& all, const Options& o, std::ostream& out, std::ostream& err,
                  std::vector<core::ResultRow>& rows, std::string& links_body);

// The key a measured and a simulated row share.
std::string row_key(const core::ResultRow& r) {
    std::string variant = r.variant;
    // Measurements from before peer cases carried a variant: the note says which mode it was.
    if (r.strategy == "peer" && variant.empty()) variant = r.note.find("disabled") != std::string::npos ? "peer=off" : "peer=on";
    return r.scenario + "|" + r.strategy + "|" + r.direction + "|" + std::to_string(r.size_bytes) + "|" + variant;
}

std::string lease_names(const MeasuredSet& set) {
    std::string names;
    for (const auto& l : set.leases) names += (names.empty() ? "" : ", ") + l.name + (l.info.legacy ? " (legacy)" : "");
    return names;
}

const char* const kCompareFiles[] = {"compare.csv", "summary.csv", "meta.json"};

int cmd_compare(const Options& o, int argc, char** argv, std::ostream& out, std::ostream& err) {
    // A machine's leases, or one lease, or one CSV: measured values are cross-lease medians.
    const MeasuredSet set = read_measured_set(o.measured);
    const std::vector<CrossLeaseRow> across = cross_lease(set.leases);
    const std::vector<core::ResultRow> hw = cross_lease_rows(across);
    const std::string csv_path = set.files().size() == 1 ? set.files().front() : o.measured;
    std::vector<config::SetOverride> sets;
    if (!o.calibration.empty()) sets = config::read_calibration(o.calibration);
    for (const auto& s : o.sets) sets.push_back(config::parse_set(s));
    const std::vector<config::Scenario> selected = restrict_to_measured(load_scenario_dir(o.scenarios_dir, sets), hw);
    if (selected.empty()) throw core::InputError(csv_path, "scenario", "no measured row names a scenario in " + o.scenarios_dir);
    // Where the files go is checked before the simulation.
    core::OutputFiles planned(o.out_dir);
    for (const char* name : kCompareFiles) planned.add(name, {});
    planned.check();
    Options quiet = o;
    quiet.quiet = true;
    std::vector<core::ResultRow> sim;
    std::string links_body;
    simulate_all(selected, quiet, out, err, sim, links_body);

    std::map<std::string, const core::ResultRow*> predicted;
    // Rows the model answers not_modelled are counted, not compared.
    std::size_t not_modelled = 0;
    for (const auto& r : sim) {
        if (r.status == "ok") {
            predicted[row_key(r)] = &r;
        } else if (r.status == "not_modelled") {
            ++not_modelled;
        }
    }
    std::ostringstream csv;
    csv << "scenario,strategy,direction,size_bytes,variant,measured_us,measured_p10_us,measured_p90_us,predicted_us,"
           "error_pct,measured_gbps,predicted_gbps,leases,spread_pct,flagged\n";
    struct Acc {
        std::vector<double> err;
    };
    std::map<std::string, Acc> groups;
    std::vector<double> all_big;
    std::vector<double> all_small;
    std::size_t joined = 0;
    std::size_t flagged = 0;
    for (const auto& c : across) {
        const core::ResultRow& m = c.row;
        if (m.status != "ok" || m.variant == "misses" || m.time_us <= 0) continue;
        const auto it = predicted.find(row_key(m));
        if (it == predicted.end()) continue;
        const core::ResultRow& p = *it->second;
        const double e = (p.time_us / m.time_us - 1.0) * 100.0;
        ++joined;
        if (c.flagged) ++flagged;
        csv << m.scenario << ',' << m.strategy << ',' << m.direction << ',' << m.size_bytes << ',' << m.variant << ','
            << fmt::format("{:.4f},{:.4f},{:.4f},{:.4f},{:.2f},{:.4f},{:.4f},{},{:.2f},{}", m.time_us, m.p10_us, m.p90_us,
                           p.time_us, e, m.gbps(), p.gbps(), c.per_lease.size(), c.spread_pct, c.flagged ? 1 : 0)
            << '\n';
        const bool setup = m.variant.rfind("setup=", 0) == 0;
        const std::string kind = setup ? "setup" : m.size_bytes >= 65536 ? ">=64KiB" : "<64KiB";
        groups[m.strategy + " " + kind].err.push_back(std::fabs(e));
        if (!setup) (m.size_bytes >= 65536 ? all_big : all_small).push_back(std::fabs(e));
    }
    std::ostringstream summary;
    summary << "group,rows,median_abs_error_pct,worst_abs_error_pct\n";
    out << fmt::format("{:<30} {:>5} {:>12} {:>12}\n", "strategy / sizes", "rows", "median |err|", "worst |err|");
    auto line = [&](const std::string& name, const std::vector<double>& v) {
        if (v.empty()) return;
        const double med = core::percentile(v, 0.5);
        const double worst = *std::max_element(v.begin(), v.end());
        out << fmt::format("{:<30} {:>5} {:>11.1f}% {:>11.1f}%\n", name, v.size(), med, worst);
        summary << name << ',' << v.size() << ',' << fmt::format("{:.2f},{:.2f}", med, worst) << '\n';
    };
    for (const auto& [name, acc] : groups) line(name, acc.err);
    line("all transfers >=64KiB", all_big);
    line("all transfers <64KiB", all_small);
    out << fmt::format("\n{} measured rows matched a prediction ({} measured, {} predicted, {} not modelled yet){}\n",
                       joined, hw.size(), sim.size() - not_modelled, not_modelled,
                       o.calibration.empty() ? ", default parameters" : ", calibration " + o.calibration);
    out << fmt::format("measured values: median over {} lease{}: {}; {} matched rows spread more than {:.0f} % across leases\n",
                       set.leases.size(), set.leases.size() == 1 ? "" : "s", lease_names(set), flagged, kSpreadFlagPct);

    core::OutputFiles files(o.out_dir);
    files.add(kCompareFiles[0], csv.str());
    files.add(kCompareFiles[1], summary.str());
    core::JsonWriter meta;
    meta.begin_object();
    meta.value("tool", "dmasim compare");
    meta.value("version", DMASIM_VERSION);
    meta.value("commit", DMASIM_GIT_COMMIT);
    meta.value("date", utc_now());
    meta.value("measured", csv_path);
    meta.value("calibration", o.calibration.empty() ? std::string("none (default parameters)") : o.calibration);
    meta.value("command", command_line(argc, argv));
    meta.value("rows_matched", static_cast<std::uint64_t>(joined));
    meta.value("rows_not_modelled", static_cast<std::uint64_t>(not_modelled));
    meta.value("leases", static_cast<std::uint64_t>(set.leases.size()));
    meta.begin_array("lease_names");
    for (const auto& l : set.leases) meta.value("", l.name);
    meta.end_array();
    meta.value("rows_flagged", static_cast<std::uint64_t>(flagged));
    meta.end_object();
    files.add(kCompareFiles[2], meta.str());
    files.commit();
    out << "wrote " << o.out_dir << "/compare.csv, summary.csv, meta.json\n";
    return kExitOk;
}

int cmd_topo_show(const std::string& ref, std::ostream& out) {
    const topology::Platform p = topology::load_platform(config::resolve_platform(ref, ""), config::ModelParams{});
    auto devs = topology::devices(p);
    for (const auto n : p.nodes_of(topology::NodeKind::kCpu)) devs.push_back(n);
    out << p.name() << (p.description().empty() ? "" : ": " + p.description()) << "\n\n";
    out << fmt::format("{:<10}", "");
    for (const auto n : devs) out << fmt::format("{:>8}", p.node(n).name);
    out << "\n";
    for (const auto a : devs) {
        out << fmt::format("{:<10}", p.node(a).name);
        for (const auto b : devs) out << fmt::format("{:>8}", topology::route_class(p, a, b));
        out << "\n";
    }
    out << "\nroute bottlenecks (data rate per direction):\n";
    for (std::size_t i = 0; i < devs.size(); ++i) {
        for (std::size_t j = i + 1; j < devs.size(); ++j) {
            const auto b = topology::bottleneck(p, devs[i], devs[j]);
            out << fmt::format("  {:<8} -> {:<8} {:<5} {:>8.1f} GB/s  {}\n", p.node(devs[i]).name, p.node(devs[j]).name,
                               topology::route_class(p, devs[i], devs[j]), b.gbps, b.link);
        }
    }
    out << "\nbridges:\n";
    for (const auto n : p.nodes_of(topology::NodeKind::kRootComplex)) {
        const auto& b = p.node(n).bridge;
        out << fmt::format("  {:<8} root complex: read completions up to {}, {} to memory\n", p.node(n).name,
                           core::to_string(b.completion_size), core::to_string(b.forward_latency));
    }
    for (const auto kind : {topology::NodeKind::kSwitch, topology::NodeKind::kNvSwitch}) {
        for (const auto n : p.nodes_of(kind)) {
            out << fmt::format("  {:<8} {}: {} port to port\n", p.node(n).name, topology::to_string(kind),
                               core::to_string(p.node(n).bridge.switch_latency));
        }
    }
    if (p.peer_same_switch_only()) out << "\npeer rule: peer copies only between devices under one PCIe switch\n";
    return kExitOk;
}

int cmd_topo_import(const std::string& sysfs_root, bool use_sysfs, const std::string& smi_file, const std::string& name,
                    const std::string& file, std::ostream& out) {
    if (use_sysfs == !smi_file.empty()) {
        throw core::InputError("topo import", "", "give exactly one of --sysfs [ROOT] and --nvidia-smi FILE");
    }
    std::string yaml;
    if (use_sysfs) {
        yaml = topology::import_sysfs(sysfs_root.empty() ? std::string("/") : sysfs_root, name);
    } else {
        yaml = topology::import_nvidia_smi_topo(core::read_input_file(smi_file, "nvidia-smi output"), smi_file, name);
    }
    // The result must load as a platform before anything is written.
    (void)topology::parse_platform(yaml, "imported platform", config::ModelParams{});
    if (file.empty() || file == "-") {
        out << yaml;
        return kExitOk;
    }
    core::OutputFiles files;
    files.add_path(file, yaml);
    files.commit();
    out << "wrote " << file << "\n";
    return kExitOk;
}

int cmd_topo_dot(const std::string& ref, const std::string& file, std::ostream& out) {
    const topology::Platform p = topology::load_platform(config::resolve_platform(ref, ""), config::ModelParams{});
    if (file.empty() || file == "-") {
        out << topology::to_dot(p);
        return kExitOk;
    }
    core::OutputFiles files;
    files.add_path(file, topology::to_dot(p));
    files.commit();
    out << "wrote " << file << " (render: dot -Tpdf " << file << ")\n";
    return kExitOk;
}

std::string platform_of(const config::Scenario& s) { return config::resolve_platform(s.platform, s.file); }

std::vector<std::string> platforms_of(const std::vector<config::Scenario>& all) {
    std::vector<std::string> platforms;
    for (const auto& s : all) {
        if (std::find(platforms.begin(), platforms.end(), platform_of(s)) == platforms.end()) {
            platforms.push_back(platform_of(s));
        }
    }
    return platforms;
}

// Simulates every scenario. SystemC elaborates one platform per process: the last platform runs
// here, every other one in a child process that hands its rows back through temporary files.
void simulate_all(const std::vector<config::Scenario>& all, const Options& o, std::ostream& out, std::ostream& err,
                  std::vector<core::ResultRow>& rows, std::string& links_body) {
    const std::vector<std::string> platforms = platforms_of(all);
    std::size_t total = 0;
    for (const auto& s : all) total += case_count(s);
    std::size_t done = 0;
    for (std::size_t gi = 0; gi < platforms.size(); ++gi) {
        std::vector<const config::Scenario*> group;
        std::size_t group_cases = 0;
        for (const auto& s : all) {
            if (platform_of(s) != platforms[gi]) continue;
            group.push_back(&s);
            group_cases += case_count(s);
        }
        std::vector<core::ResultRow> group_rows;
        std::vector<Breakdown> group_breakdown;
        if (gi + 1 == platforms.size()) {
            simulate_group(group, o, done, total, group_rows, group_breakdown, out, err);
            links_body += links_csv_body(group_breakdown);
        } else {
            const TempFile rows_file("dmasim-rows-");
            const TempFile links_file("dmasim-links-");
            out.flush();
            err.flush();
            const pid_t pid = fork_child({rows_file.path(), links_file.path()});
            if (pid == 0) {
                int status = 0;
                try {
                    simulate_group(group, o, done, total, group_rows, group_breakdown, out, err);
                    std::ofstream r(rows_file.path());
                    core::write_results_csv(r, group_rows);
                    std::ofstream l(links_file.path());
                    l << links_csv_body(group_breakdown);
                    r.close();
                    l.close();
                    // A short file would read back as fewer rows, not as a failure.
                    if (!r || !l) throw std::runtime_error("cannot write temporary files in " + rows_file.path());
                } catch (const std::exception& e) {
                    err << "dmasim: failed: " << e.what() << "\n";
                    status = 1;
                } catch (...) {
                    // Unwinding further would run the parent's code in this process.
                    status = 1;
                }
                out.flush();
                err.flush();
                std::_Exit(status);
            }
            const int status = wait_child(pid);
            if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
                throw std::runtime_error("simulating platform " + platforms[gi] + " failed");
            }
            std::ifstream r(rows_file.path());
            group_rows = core::read_results_csv(r, rows_file.path());
            links_body += slurp(links_file.path());
            done += group_cases;
        }
        rows.insert(rows.end(), group_rows.begin(), group_rows.end());
    }
}

// Windows of the link-occupancy counters. Below 1 ns a window is shorter than any TLP on any
// link and adds only events; above 1 s one window covers any run.
core::Duration trace_resolution(const std::string& text) {
    core::Duration res{};
    try {
        res = core::parse_duration(text);
    } catch (const core::UnitError& e) {
        throw core::InputError("--trace-resolution", text, e.what());
    }
    if (res.ps < 1'000 || res.ps > 1'000'000'000'000) {
        throw core::InputError("--trace-resolution", text, "must be from 1ns to 1s");
    }
    return res;
}

// Tracer::active() must not outlive the tracer, whichever way cmd_run leaves.
struct ActiveTracer {
    explicit ActiveTracer(sim::Tracer* t) { sim::Tracer::set_active(t); }
    ~ActiveTracer() { sim::Tracer::set_active(nullptr); }
    ActiveTracer(const ActiveTracer&) = delete;
    ActiveTracer& operator=(const ActiveTracer&) = delete;
};

const char* const kRunFiles[] = {"results.csv", "links.csv", "config.json", "meta.json"};

int cmd_run(const Options& o, int argc, char** argv, std::ostream& out, std::ostream& err) {
    const auto all = load_all(o);  // every file checked before anything runs
    const auto wall0 = std::chrono::steady_clock::now();
    const std::vector<std::string> platforms = platforms_of(all);
    std::unique_ptr<sim::Tracer> tracer;
    if (!o.trace_file.empty()) {
        if (platforms.size() > 1) {
            throw core::InputError("--trace", o.trace_file,
                                   "a timeline covers one platform; these scenarios use " +
                                       std::to_string(platforms.size()) + " (run them separately)");
        }
        tracer = std::make_unique<sim::Tracer>(static_cast<double>(trace_resolution(o.trace_resolution).ps));
    }
    // Where the files go is checked before the simulation, which can take minutes.
    core::OutputFiles planned(o.out_dir);
    for (const char* name : kRunFiles) planned.add(name, {});
    if (tracer) planned.add_path(o.trace_file, {});
    planned.check();

    const ActiveTracer active(tracer.get());
    std::vector<core::ResultRow> rows;
    std::string links_body;
    simulate_all(all, o, out, err, rows, links_body);
    const double wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();

    core::OutputFiles files(o.out_dir);
    std::ostringstream csv;
    core::write_results_csv(csv, rows);
    files.add(kRunFiles[0], csv.str());
    files.add(kRunFiles[1], links_csv_header() + links_body);
    core::JsonWriter cfg;
    cfg.begin_array();
    for (const auto& s : all) config::write_config_json(cfg, s, topology::effective_json(topology::load_platform(s)));
    cfg.end_array();
    files.add(kRunFiles[2], cfg.str());
    core::JsonWriter meta;
    write_meta(meta, command_line(argc, argv), rows.size(), wall_s);
    files.add(kRunFiles[3], meta.str());
    const bool truncated = tracer && tracer->truncated();
    if (tracer) files.add_path(o.trace_file, tracer->json());
    files.commit();  // the timeline with the results: both or neither
    if (tracer) {
        out << fmt::format("wrote a timeline of {} events to {} (open it in ui.perfetto.dev or chrome://tracing)\n",
                           tracer->events(), o.trace_file);
        if (truncated) {
            err << fmt::format("dmasim: warning: {}: too many events at --trace-resolution {}; link counters stop "
                               "part-way (a coarser resolution keeps them all)\n",
                               o.trace_file, o.trace_resolution);
        }
    }

    print_table(out, rows);
    out << fmt::format("\nwrote {} rows to {}/results.csv (configuration in config.json, per-link breakdown in links.csv)\n",
                       rows.size(), o.out_dir);
    return kExitOk;
}

}  // namespace

std::string result_key(const core::ResultRow& r) { return row_key(r); }

std::vector<core::ResultRow> read_measured(const std::string& path, std::string* resolved) {
    const MeasuredSet set = read_measured_set(path);
    if (resolved != nullptr) *resolved = set.files().size() == 1 ? set.files().front() : path;
    return cross_lease_rows(cross_lease(set.leases));
}

std::vector<config::Scenario> load_scenario_dir(const std::string& dir, const std::vector<config::SetOverride>& sets) {
    namespace fs = std::filesystem;
    if (!fs::is_directory(dir)) throw core::InputError(dir, "", "not a folder of scenario files");
    Options o;
    for (const auto& e : fs::recursive_directory_iterator(dir)) {
        if (e.is_regular_file() && e.path().extension() == ".yaml") o.files.push_back(e.path().string());
    }
    std::sort(o.files.begin(), o.files.end());
    for (const auto& set : sets) o.sets.push_back(set.path + "=" + set.value);
    return load_all(o);
}

std::vector<config::Scenario> restrict_to_measured(const std::vector<config::Scenario>& scenarios,
                                                   const std::vector<core::ResultRow>& hw) {
    std::vector<config::Scenario> selected;
    for (const auto& s : scenarios) {
        std::vector<std::uint64_t> sizes;
        std::vector<std::string> dirs;
        for (const auto& r : hw) {
            if (r.scenario != s.name || r.status != "ok" || r.source != "hw") continue;
            if (std::find(sizes.begin(), sizes.end(), r.size_bytes) == sizes.end()) sizes.push_back(r.size_bytes);
            if (std::find(dirs.begin(), dirs.end(), r.direction) == dirs.end()) dirs.push_back(r.direction);
        }
        if (sizes.empty() || !s.flows.empty()) continue;
        config::Scenario c = s;
        std::sort(sizes.begin(), sizes.end());
        c.sizes = sizes;
        std::vector<std::string> keep;
        for (const auto& d : c.directions) {
            if (std::find(dirs.begin(), dirs.end(), d) != dirs.end()) keep.push_back(d);
        }
        c.directions = keep;
        if (!c.directions.empty()) selected.push_back(std::move(c));
    }
    return selected;
}

std::vector<core::ResultRow> simulate_quietly(const std::vector<config::Scenario>& scenarios) {
    Options o;
    o.quiet = true;
    std::ostringstream out, err;
    std::vector<core::ResultRow> rows;
    std::string links;
    simulate_all(scenarios, o, out, err, rows, links);
    return rows;
}

int run_cli(int argc, char** argv, std::ostream& out, std::ostream& err) {
    CLI::App app{"dmasim: predicts how fast data moves between CPUs, GPUs and PCIe devices, strategy by strategy.\n"
                 "A SystemC model of PCIe links, root complex, copy engines and memories, driven by YAML scenarios.",
                 "dmasim"};
    app.require_subcommand(1);
    app.set_version_flag("--version", std::string(DMASIM_VERSION) + " (" + DMASIM_GIT_COMMIT + ")");
    Options o;

    auto* run = app.add_subcommand("run", "simulate scenarios and write results (CSV + config.json + meta.json)");
    run->add_option("files", o.files, "scenario files (YAML)")->required();
    run->add_option("--out,-o", o.out_dir,
                    "directory for results.csv, links.csv, config.json, meta.json (the committed predictions: "
                    "--out results/sim)")
        ->capture_default_str();
    run->add_option("--set", o.sets,
                    "override a scenario key by dotted path, e.g. --set link.generation=4 --set sizes=4KiB,1GiB "
                    "(repeatable; applies to every scenario)");
    run->add_option("--calibration", o.calibration, "a calibration file (dmasim calibrate): its parameters replace the defaults");
    run->add_flag("--explain", o.explain, "print what every link carried in each case (TLPs, DLLPs, busy time)");
    run->add_flag("--quiet,-q", o.quiet, "no progress lines on stderr");
    run->add_option("--trace", o.trace_file,
                    "write a timeline of the simulated run (Chrome trace JSON: CPU calls, streams, copy engines, "
                    "kernels, CPU copies, link occupancy) for ui.perfetto.dev");
    run->add_option("--trace-resolution", o.trace_resolution,
                    "window of the link-occupancy counters in the timeline, 1ns to 1s")
        ->capture_default_str();

    auto* validate = app.add_subcommand("validate", "check scenario files without running them");
    validate->add_option("files", o.files, "scenario files (YAML)")->required();
    validate->add_option("--set", o.sets, "override a key, as for run");

    auto* plan = app.add_subcommand("plan", "expand scenarios into the flat plan the CUDA harness (dmaprobe) runs");
    plan->add_option("files", o.files, "scenario files (YAML)")->required();
    plan->add_option("--out,-o", o.plan_out, "plan file to write ('-' or nothing: standard output)");
    plan->add_option("--set", o.sets, "override a key, as for run");

    auto* compare = app.add_subcommand("compare", "simulate what was measured and compare, row by row and per strategy");
    compare->add_option("--measured", o.measured,
                        "a machine's measured folder (one sub-folder per lease), a lease folder, or a measured.csv; "
                        "measured values are medians across leases")
        ->required();
    compare->add_option("--calibration", o.calibration, "a calibration file: its `parameters` override the defaults");
    compare->add_option("--scenarios", o.scenarios_dir, "folder of scenario files the measured rows name")->capture_default_str();
    compare->add_option("--set", o.sets, "override a key, as for run");
    // Not results/: a committed comparison is replaced only when asked for by name.
    std::string compare_out = "out/compare";
    compare->add_option("--out,-o", compare_out,
                        "folder for compare.csv, summary.csv, meta.json (the committed ones: --out "
                        "results/<machine>/compare)")
        ->capture_default_str();

    CalibrateOptions co;
    auto* calibrate = app.add_subcommand("calibrate", "fit the model's free parameters to measured rows (NLopt BOBYQA), with held-out error");
    calibrate->add_option("--measured", co.measured,
                          "a machine's measured folder (one sub-folder per lease), a lease folder, or a measured.csv; "
                          "the fit is to medians across leases")
        ->required();
    calibrate->add_option("--out,-o", co.out_file, "calibration file to write")->required();
    calibrate->add_option("--scenarios", co.scenarios_dir, "folder of scenario files the measured rows name")->capture_default_str();
    calibrate->add_option("--free", co.free, "fit only these free parameters (docs/calibration.md lists them)");
    std::string max_size = "16MiB";
    calibrate->add_option("--max-size", max_size, "fit rows up to this size (bigger ones are slow to simulate)")->capture_default_str();
    calibrate->add_option("--max-evaluations", co.max_evaluations, "optimiser steps at most, per fit (1 to 100000)")
        ->check(CLI::Range(1, 100000))
        ->capture_default_str();
    calibrate->add_option("--folds", co.folds, "also report K-fold held-out error (K more fits; 0: none, else 2 to 100)")
        ->check(CLI::Validator(
            [](std::string& v) -> std::string {
                // One fold would hold every row out of its own fit.
                int k = -1;
                return CLI::detail::lexical_cast(v, k) && (k == 0 || (k >= 2 && k <= 100))
                           ? std::string()
                           : "must be 0 (none) or from 2 to 100, not " + v;
            },
            "0 or 2..100"))
        ->capture_default_str();
    bool no_lolo = false;
    calibrate->add_flag("--no-lolo", no_lolo, "skip the leave-one-lease-out error (it costs one more fit per lease)");
    calibrate->add_flag("--quiet,-q", co.quiet, "no progress on stderr");

    SpreadOptions so;
    auto* spread = app.add_subcommand("spread", "how far a machine's leases agree, row by row (spread.csv, spread_summary.csv)");
    spread->add_option("--measured", so.measured, "a machine's measured folder (one sub-folder per lease), or a lease folder")
        ->required();
    spread->add_option("--out,-o", so.out_dir,
                       "folder for spread.csv and spread_summary.csv (the committed ones: --out results/<machine>)")
        ->capture_default_str();
    spread->add_flag("--quiet,-q", so.quiet, "no lease listing on stderr");

    auto* topo = app.add_subcommand("topo", "platforms: route classes, bottlenecks, Graphviz (docs/platforms.md)");
    topo->require_subcommand(1);
    std::string topo_platform;
    std::string topo_out;
    auto* topo_show = topo->add_subcommand("show", "print the matrix of route classes (as nvidia-smi topo -m) and each route's bottleneck link");
    topo_show->add_option("platform", topo_platform, "a shipped platform name or a platform file")->required();
    auto* topo_dot = topo->add_subcommand("dot", "write the platform graph in Graphviz format");
    topo_dot->add_option("platform", topo_platform, "a shipped platform name or a platform file")->required();
    topo_dot->add_option("--out,-o", topo_out, "file to write ('-' or nothing: standard output)");
    auto* topo_import = topo->add_subcommand("import", "write a platform file from this machine's sysfs PCI tree or from nvidia-smi topo -m");
    std::string import_root;
    std::string import_smi;
    std::string import_name = "imported";
    auto* sysfs_opt = topo_import->add_option("--sysfs", import_root, "import the PCI tree under ROOT/sys (default ROOT: /)")
                          ->expected(0, 1);
    topo_import->add_option("--nvidia-smi", import_smi, "import the text of `nvidia-smi topo -m` saved in FILE");
    topo_import->add_option("--name", import_name, "name of the platform")->capture_default_str();
    topo_import->add_option("--out,-o", topo_out, "platform file to write ('-' or nothing: standard output)");

    auto* params = app.add_subcommand("params", "list every model parameter with its unit, default and meaning");
    bool markdown = false;
    params->add_flag("--markdown", markdown, "as a Markdown table (docs/scenarios.md includes it)");

    // A usage error is one line, as every other error is.
    app.failure_message([](const CLI::App*, const CLI::Error& e) {
        return std::string("dmasim: error: ") + e.what() + " (--help lists the options)\n";
    });
    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
        // Help and --version exit 0; anything else is a usage error.
        return app.exit(e, out, err) == 0 ? kExitOk : kExitBadInput;
    }

    // Children and temporary files end with the command, however it ends.
    const TerminationHandler handler;
    try {
        if (*run) {
            (void)trace_resolution(o.trace_resolution);  // checked with or without --trace
            return cmd_run(o, argc, argv, out, err);
        }
        if (*calibrate) {
            try {
                co.max_size = core::parse_bytes(max_size).value;
            } catch (const core::UnitError& e) {
                throw core::InputError("--max-size", max_size, e.what());
            }
            if (co.max_size == 0 || co.max_size > core::kMaxResultSize) {
                throw core::InputError("--max-size", max_size,
                                       "must be from 1B to " + core::to_string(core::Bytes{core::kMaxResultSize}));
            }
            co.leave_one_lease_out = !no_lolo;
            return cmd_calibrate(co, argc, argv, out, err);
        }
        if (*spread) return cmd_spread(so, out, err);
        if (*compare) {
            o.out_dir = compare_out;
            return cmd_compare(o, argc, argv, out, err);
        }
        if (*validate) return cmd_validate(o, out);
        if (*plan) return cmd_plan(o, out);
        if (*params) return cmd_params(out, markdown);
        if (*topo_show) return cmd_topo_show(topo_platform, out);
        if (*topo_dot) return cmd_topo_dot(topo_platform, topo_out, out);
        if (*topo_import) return cmd_topo_import(import_root, sysfs_opt->count() > 0, import_smi, import_name, topo_out, out);
    } catch (const core::InputError& e) {
        err << "dmasim: error: " << e.what() << "\n";
        return kExitBadInput;
    } catch (const std::exception& e) {
        err << "dmasim: failed: " << e.what() << "\n";
        return kExitFailure;
    }
    return kExitFailure;
}

// Children and temporary files (dmasim/app/processes.h). The termination handler reads these
// tables, so they are plain arrays, changed only while the termination signals are held back.
namespace {

constexpr int kTerminationSignals[] = {SIGINT, SIGTERM, SIGHUP};
constexpr std::size_t kSlots = 64;  // children run one at a time; temporary files two per child
pid_t g_children[kSlots];
char g_temps[kSlots][4096];
struct sigaction g_previous[std::size(kTerminationSignals)];
int g_handlers = 0;

class HoldSignals {
public:
    HoldSignals() {
        sigset_t set;
        sigemptyset(&set);
        for (const int sig : kTerminationSignals) sigaddset(&set, sig);
        ::pthread_sigmask(SIG_BLOCK, &set, &old_);
    }
    ~HoldSignals() { ::pthread_sigmask(SIG_SETMASK, &old_, nullptr); }
    HoldSignals(const HoldSignals&) = delete;
    HoldSignals& operator=(const HoldSignals&) = delete;

private:
    sigset_t old_;
};

void pause_ms(long ms) {
    timespec ts{0, ms * 1'000'000L};
    while (::nanosleep(&ts, &ts) != 0 && errno == EINTR) {
    }
}

// Async-signal-safe only: kill, waitpid, nanosleep, unlink, _exit.
void on_termination(int sig) {
    for (const pid_t p : g_children) {
        if (p > 0) ::kill(p, SIGTERM);
    }
    for (const pid_t p : g_children) {
        if (p <= 0) continue;
        // A child ends within milliseconds (its own handler removes its files); one that does not
        // is not left running.
        pid_t r = 0;
        for (int i = 0; i < 300 && (r = ::waitpid(p, nullptr, WNOHANG)) == 0; ++i) pause_ms(10);
        if (r == 0) {
            ::kill(p, SIGKILL);
            ::waitpid(p, nullptr, 0);
        }
    }
    for (const auto& t : g_temps) {
        if (t[0] != '\0') ::unlink(t);
    }
    ::_exit(128 + sig);
}

int register_temp(const std::string& path) {
    if (path.size() >= sizeof g_temps[0]) throw std::runtime_error("temporary file path too long: " + path);
    for (std::size_t i = 0; i < kSlots; ++i) {
        if (g_temps[i][0] != '\0') continue;
        std::memcpy(g_temps[i], path.c_str(), path.size() + 1);
        return static_cast<int>(i);
    }
    throw std::runtime_error("too many temporary files");
}

}  // namespace

TerminationHandler::TerminationHandler() {
    if (g_handlers++ > 0) return;
    struct sigaction sa {};
    sa.sa_handler = on_termination;
    sigemptyset(&sa.sa_mask);
    for (const int sig : kTerminationSignals) sigaddset(&sa.sa_mask, sig);
    for (std::size_t i = 0; i < std::size(kTerminationSignals); ++i) {
        ::sigaction(kTerminationSignals[i], nullptr, &g_previous[i]);
        // A signal ignored by whoever started us (nohup, a background job) stays ignored.
        if (g_previous[i].sa_handler != SIG_IGN) ::sigaction(kTerminationSignals[i], &sa, nullptr);
    }
}

TerminationHandler::~TerminationHandler() {
    if (--g_handlers > 0) return;
    for (std::size_t i = 0; i < std::size(kTerminationSignals); ++i) ::sigaction(kTerminationSignals[i], &g_previous[i], nullptr);
}

TempFile::TempFile(const std::string& prefix) : owner_(::getpid()) {
    const char* env = std::getenv("TMPDIR");
    const std::string dir = env != nullptr && *env != '\0' ? env : "/tmp";
    std::string tmpl = dir + "/" + prefix + "XXXXXX";
    // Created and registered in one step: a signal in between would leave it behind.
    const HoldSignals hold;
    const int fd = ::mkstemp(tmpl.data());
    if (fd < 0) throw std::runtime_error("cannot create a temporary file in " + dir + ": " + std::strerror(errno));
    ::close(fd);
    try {
        register_temp(tmpl);
    } catch (...) {
        ::unlink(tmpl.c_str());
        throw;
    }
    path_ = tmpl;
}

TempFile::~TempFile() {
    if (::getpid() != owner_) return;
    const HoldSignals hold;
    ::unlink(path_.c_str());
    for (auto& t : g_temps) {
        if (path_ == t) t[0] = '\0';
    }
}

pid_t fork_child(const std::vector<std::string>& own) {
    const pid_t parent = ::getpid();
    // Forked and registered in one step, so that the handler never misses a child.
    const HoldSignals hold;
    const auto slot = std::find(std::begin(g_children), std::end(g_children), 0);
    if (slot == std::end(g_children)) throw std::runtime_error("too many child processes");
    const pid_t pid = ::fork();
    if (pid < 0) throw std::runtime_error(std::string("cannot start a child process: ") + std::strerror(errno));
    if (pid > 0) {
        *slot = pid;
        return pid;
    }
    // The parent's children and files are the parent's to end and remove.
    std::fill(std::begin(g_children), std::end(g_children), 0);
    for (auto& t : g_temps) t[0] = '\0';
    for (const auto& path : own) register_temp(path);
    ::prctl(PR_SET_PDEATHSIG, SIGTERM);
    // The parent may have died before prctl: then nothing would ever signal this process.
    if (::getppid() != parent) std::_Exit(128 + SIGTERM);
    return 0;
}

int wait_child(pid_t pid) {
    // Waited for without reaping: until it is unregistered, the pid cannot go to another process
    // that the handler would then signal.
    siginfo_t info{};
    while (::waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOWAIT) != 0 && errno == EINTR) {
    }
    const HoldSignals hold;
    std::replace(std::begin(g_children), std::end(g_children), pid, 0);
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0) {
        if (errno != EINTR) return -1;
    }
    return status;
}

}  // namespace dmasim::app
