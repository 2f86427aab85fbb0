#include "dmasim/app/commands.h"
#include "dmasim/app/leases.h"
#include "dmasim/app/mpi.h"
#include "dmasim/app/parallel.h"
#include "dmasim/app/processes.h"

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <chrono>
#include <exception>
#include <numeric>
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
#include "dmasim/config/shipped_platforms.h"
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

std::uint64_t fnv1a64(const std::string& text) {
    std::uint64_t h = 1469598103934665603ULL;
    for (const unsigned char c : text) {
        h ^= c;
        h *= 1099511628211ULL;
    }
    return h;
}

namespace {

constexpr int kExitOk = 0;
constexpr int kExitFailure = 1;
constexpr int kExitBadInput = 2;

struct Options {
    std::vector<std::string> files;
    std::vector<std::string> sets;
    std::vector<std::string> only;  // scenario names to keep (empty: all)
    // Not results/: the committed predictions are replaced only when asked for by name.
    std::string out_dir = "out/sim";
    std::string plan_out;
    bool explain = false;
    bool quiet = false;
    bool deterministic = false;  // --deterministic: no band across machines (host_spread all 0)
    std::string trace_file;
    std::string trace_resolution = "1us";
    std::string measured;
    std::vector<std::string> leases;  // compare --leases: only these leases of --measured
    std::string calibration;
    std::string scenarios_dir = "scenarios";
    int jobs = 1;       // worker processes (--jobs; the number of CPUs when not given)
    std::string shard;  // --shard I/N
};

std::size_t case_count(const config::Scenario& s) {
    if (!s.flows.empty()) return s.flows.size();
    std::size_t n = 0;
    for (const auto& st : s.strategies) n += s.directions.size() * (st == "periodic" ? 1 : s.sizes.size());
    return n;
}

std::vector<config::Scenario> load_all(const Options& o) {
    std::vector<config::SetOverride> sets;
    for (const auto& s : o.sets) sets.push_back(config::parse_set(s));
    // Each scenario starts from its platform's calibration unless --calibration names one (or
    // none); --set wins over either.
    const config::CalibrationChoice calibration = config::calibration_choice(o.calibration);
    std::vector<config::Scenario> all;
    for (const auto& f : o.files) {
        auto v = config::load_scenarios(f, sets, calibration);
        for (auto& s : v) {
            for (const auto& existing : all) {
                if (existing.name == s.name) {
                    throw core::InputError(f, "name", "scenario '" + s.name + "' is also defined in " + existing.file);
                }
            }
            // The platform must exist and carry what the strategies need.
            topology::check_scenario_platform(s, topology::load_platform(s));
            // After --set: --deterministic wins over a --set of the spread.
            if (o.deterministic) s.params = s.params.without_spread();
            all.push_back(std::move(s));
        }
    }
    const auto named = [&](const std::string& name) {
        return std::any_of(all.begin(), all.end(), [&](const config::Scenario& s) { return s.name == name; });
    };
    const auto names = [&] {
        std::string list;
        for (const auto& s : all) list += (list.empty() ? "" : ", ") + s.name;
        return list;
    };
    for (const auto& set : sets) {
        if (!set.scenario.empty() && !named(set.scenario)) {
            throw core::InputError("--set", set.scenario + ":" + set.path,
                                   "no scenario named '" + set.scenario + "' in the files given (" + names() + ")");
        }
    }
    if (o.only.empty()) return all;
    for (const auto& name : o.only) {
        if (!named(name)) {
            throw core::InputError("--only", name, "no scenario of that name in the files given (" + names() + ")");
        }
    }
    std::vector<config::Scenario> kept;
    for (auto& s : all) {
        if (std::find(o.only.begin(), o.only.end(), s.name) != o.only.end()) kept.push_back(std::move(s));
    }
    return kept;
}

std::string utc_now() {
    const std::time_t t = std::time(nullptr);
    char buf[32];
    std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&t));
    return buf;
}

std::string human_size(std::uint64_t b) { return core::to_string(core::Bytes{b}); }

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

// Which calibration produced which scenarios' numbers, by calibration in first-seen order.
std::vector<std::pair<std::string, std::vector<std::string>>> calibrations_of(const std::vector<config::Scenario>& all) {
    std::vector<std::pair<std::string, std::vector<std::string>>> by;
    for (const auto& s : all) {
        auto it = std::find_if(by.begin(), by.end(), [&](const auto& e) { return e.first == s.calibration; });
        if (it == by.end()) it = by.insert(by.end(), {s.calibration, {}});
        it->second.push_back(s.name);
    }
    return by;
}

std::string calibration_label(const std::string& label) {
    // "h100-sxm, host of platforms/v100-gen3.yaml": the calibration as named, then the host part.
    if (const auto at = label.find(config::kHostOf); at != std::string::npos) {
        return calibration_label(label.substr(0, at)) + " with the host parameters of " +
               label.substr(at + std::string(config::kHostOf).size());
    }
    if (label == "none") return "none (default parameters)";
    if (config::shipped_calibrations().count(label)) return label + " (results/" + label + "/calibration.yaml, built in)";
    return label;
}

// One line for meta.json: "h100-sxm (...): pinned, duplex; h200x2-nvlink (...): peer".
std::string calibration_summary(const std::vector<config::Scenario>& all) {
    std::string text;
    for (const auto& [label, names] : calibrations_of(all)) {
        text += (text.empty() ? "" : "; ") + calibration_label(label) + ": ";
        for (std::size_t i = 0; i < names.size(); ++i) text += (i ? ", " : "") + names[i];
    }
    return text;
}

// Below every table: the parameters behind its numbers. The largest group is named as the rest,
// so that a sweep of a hundred scenarios gets a line or two, not a list.
std::string calibration_lines(const std::vector<config::Scenario>& all) {
    auto by = calibrations_of(all);
    if (by.size() == 1) return "calibration: " + calibration_label(by.front().first) + "\n";
    std::stable_sort(by.begin(), by.end(), [](const auto& a, const auto& b) { return a.second.size() > b.second.size(); });
    std::string text = "calibration: " + calibration_label(by.front().first) + ", but\n";
    for (std::size_t i = 1; i < by.size(); ++i) {
        text += "  " + calibration_label(by[i].first) + " for";
        for (const auto& n : by[i].second) text += " " + n;
        text += "\n";
    }
    return text;
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
        const std::string rate = r.time_only() ? std::string("-") : fmt::format("{:.2f}", r.gbps());
        const std::string status = r.variant == "misses" ? r.note
                                   : r.speedup > 0    ? fmt::format("ok, {:.2f}x one stream", r.speedup)
                                                      : std::string("ok");
        out << fmt::format("{:<22} {:<14} {:<5} {:>9} {:<18} {:>13} {:>10}  {}\n", r.scenario, r.strategy, r.direction,
                           human_size(r.size_bytes), r.variant, human_time(r.time_us), rate, status);
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

// What dmaprobe checks against the machine it runs on (docs/plan.md): the scenario's platform,
// the measuring GPU's own PCIe link on it (link_from=platform unless the scenario set the
// generation or width itself), and for a copy between two GPUs the route class between them, as
// `nvidia-smi topo -m` names it. A Gen3 what-if is then skipped on a Gen5 GPU, not measured there.
void add_platform_keys(core::Plan& plan, const std::vector<config::Scenario>& all) {
    std::map<std::string, const config::Scenario*> by_name;
    for (const auto& s : all) by_name[s.name] = &s;
    std::map<std::string, topology::Platform> platforms;  // by scenario: --set may change a link
    for (auto& c : plan.cases) {
        const config::Scenario& s = *by_name.at(c.str("scenario"));
        auto it = platforms.find(s.name);
        if (it == platforms.end()) it = platforms.emplace(s.name, topology::load_platform(s)).first;
        const topology::Platform& p = it->second;
        c.set("platform", p.name());
        const auto gpus = topology::gpus(p);
        const bool peer = c.str("strategy") == "peer";
        const std::int64_t device = peer ? c.integer("src_device") : 0;
        if (device < 0 || static_cast<std::size_t>(device) >= gpus.size()) continue;
        const topology::NodeId gpu = gpus[static_cast<std::size_t>(device)];
        // The GPU's link as the platform has it once the scenario's own link keys are applied:
        // a scenario that sets only link.mps keeps its platform's Gen3.
        const auto set_by_scenario = [&](const char* key) {
            return std::find(s.explicit_keys.begin(), s.explicit_keys.end(), key) != s.explicit_keys.end();
        };
        if (const config::LinkParams* link = topology::device_pcie_link(p, gpu)) {
            c.set("link_generation", link->generation);
            c.set("link_lanes", link->lanes);
            if (!set_by_scenario("link.generation") && !set_by_scenario("link.lanes")) {
                c.set("link_from", std::string("platform"));
            }
        }
        if (peer && c.has("dst_device")) {
            const std::int64_t dst = c.integer("dst_device");
            if (dst != device && dst >= 0 && static_cast<std::size_t>(dst) < gpus.size()) {
                c.set("peer_route", topology::route_class(p, gpu, gpus[static_cast<std::size_t>(dst)]));
            }
        }
    }
}

int cmd_plan(const Options& o, std::ostream& out) {
    const auto all = load_all(o);
    core::Plan plan = config::expand_plan(all);
    add_platform_keys(plan, all);
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

// Every case of `all`, in sweep order (compare, calibrate and the tests' simulate_quietly).
// One job: the last platform in this process, as dmasim always did.
std::vector<CaseOutput> simulate(const std::vector<config::Scenario>& all, int jobs, Progress* progress = nullptr) {
    const Workload w = make_workload(all);
    std::vector<std::size_t> selected(w.cases.size());
    std::iota(selected.begin(), selected.end(), std::size_t{0});
    RunSettings rs;
    rs.jobs = jobs;
    rs.in_process_last = jobs <= 1;
    rs.progress = progress;
    return run_cases(w, selected, rs);
}

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
    MeasuredSet set = read_measured_set(o.measured);
    keep_leases(set, o.leases);
    // Rows measured between GPUs joined otherwise than the scenario's own platform joins them
    // are not compared, whatever --set makes of the platform.
    const std::vector<config::Scenario> as_named = load_scenario_dir(o.scenarios_dir, {}, o.calibration);
    const std::size_t other_paths = exclude_other_gpu_paths(set, as_named);
    const std::vector<CrossLeaseRow> across = cross_lease(set.leases);
    const std::vector<core::ResultRow> hw = cross_lease_rows(across);
    // --set applies to the scenarios the leases measured: "platform=h200x2-nvlink" puts what a
    // 2xH200 machine measured on its own platform, leaving alone the scenarios it did not measure
    // (some of which that platform cannot run).
    const std::vector<config::SetOverride> sets = sets_for_measured(o.sets, as_named, hw);
    std::vector<config::Scenario> scenarios = load_scenario_dir(o.scenarios_dir, sets, o.calibration);
    // --deterministic: the nominal machine only, every band a point.
    if (o.deterministic) {
        for (auto& sc : scenarios) sc.params = sc.params.without_spread();
    }
    const std::string csv_path = set.files().size() == 1 ? set.files().front() : o.measured;
    const std::vector<config::Scenario> selected = restrict_to_measured(scenarios, hw);
    if (selected.empty()) throw core::InputError(csv_path, "scenario", "no measured row names a scenario in " + o.scenarios_dir);
    // Where the files go is checked before the simulation.
    core::OutputFiles planned(o.out_dir);
    for (const char* name : kCompareFiles) planned.add(name, {});
    planned.check();
    Progress progress(err, !o.quiet, stderr_is_terminal(err), "simulating");
    const std::vector<core::ResultRow> sim = rows_of(simulate(selected, o.jobs, &progress));

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
           "error_pct,measured_gbps,predicted_gbps,leases,spread_pct,flagged,predicted_p10_us,predicted_p90_us,"
           "leases_in_band,outside_band_pct\n";
    struct Acc {
        std::vector<double> err;
        std::size_t lease_values = 0;  // every lease's median of the group's rows
        std::size_t in_band = 0;       // of those, inside the model's p10-p90 band
    };
    std::map<std::string, Acc> groups;
    Acc band_all;
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
        // The band of machines (docs/model.md): how many leases' medians it holds, and how far
        // the cross-lease median lies beyond its nearer edge (0 inside; + above it, - below).
        std::size_t in_band = 0;
        for (const auto& l : c.per_lease) in_band += l.time_us >= p.p10_us && l.time_us <= p.p90_us ? 1 : 0;
        const double outside = m.time_us > p.p90_us   ? (m.time_us / p.p90_us - 1.0) * 100.0
                               : m.time_us < p.p10_us ? (m.time_us / p.p10_us - 1.0) * 100.0
                                                      : 0.0;
        csv << m.scenario << ',' << m.strategy << ',' << m.direction << ',' << m.size_bytes << ',' << m.variant << ','
            << fmt::format("{:.4f},{:.4f},{:.4f},{:.4f},{:.2f},{:.4f},{:.4f},{},{:.2f},{},{:.4f},{:.4f},{},{:.2f}",
                           m.time_us, m.p10_us, m.p90_us, p.time_us, e, m.gbps(), p.gbps(), c.per_lease.size(),
                           c.spread_pct, c.flagged ? 1 : 0, p.p10_us, p.p90_us, in_band, outside)
            << '\n';
        const bool setup = m.variant.rfind("setup=", 0) == 0;
        const std::string kind = setup ? "setup" : m.size_bytes >= 65536 ? ">=64KiB" : "<64KiB";
        Acc& g = groups[m.strategy + " " + kind];
        g.err.push_back(std::fabs(e));
        g.lease_values += c.per_lease.size();
        g.in_band += in_band;
        band_all.lease_values += c.per_lease.size();
        band_all.in_band += in_band;
        if (!setup) (m.size_bytes >= 65536 ? all_big : all_small).push_back(std::fabs(e));
    }
    std::ostringstream summary;
    summary << "group,rows,median_abs_error_pct,worst_abs_error_pct,leases_in_band_pct\n";
    out << fmt::format("{:<30} {:>5} {:>12} {:>12} {:>8}\n", "strategy / sizes", "rows", "median |err|", "worst |err|",
                       "in band");
    // in band: the share of the leases' medians inside the model's p10-p90 band of machines.
    auto line = [&](const std::string& name, const std::vector<double>& v, const Acc* band) {
        if (v.empty()) return;
        const double med = core::percentile(v, 0.5);
        const double worst = *std::max_element(v.begin(), v.end());
        const bool counted = band != nullptr && band->lease_values > 0;
        const double in = counted ? 100.0 * static_cast<double>(band->in_band) / static_cast<double>(band->lease_values) : 0.0;
        out << fmt::format("{:<30} {:>5} {:>11.1f}% {:>11.1f}% {:>8}\n", name, v.size(), med, worst,
                           counted ? fmt::format("{:.0f}%", in) : std::string());
        summary << name << ',' << v.size() << ',' << fmt::format("{:.2f},{:.2f},", med, worst)
                << (counted ? fmt::format("{:.1f}", in) : std::string()) << '\n';
    };
    for (const auto& [name, acc] : groups) line(name, acc.err, &acc);
    line("all transfers >=64KiB", all_big, nullptr);
    line("all transfers <64KiB", all_small, nullptr);
    if (band_all.lease_values > 0) {
        std::vector<double> every;
        for (const auto& [name, acc] : groups) every.insert(every.end(), acc.err.begin(), acc.err.end());
        line("all rows", every, &band_all);
    }
    out << fmt::format("\n{} measured rows matched a prediction ({} measured, {} predicted, {} not modelled yet)\n",
                       joined, hw.size(), sim.size() - not_modelled, not_modelled);
    out << calibration_lines(selected);
    out << fmt::format("measured values: median over {} lease{}: {}; {} matched rows spread more than {:.0f} % across leases\n",
                       set.leases.size(), set.leases.size() == 1 ? "" : "s", lease_names(set), flagged, kSpreadFlagPct);
    if (other_paths > 0) {
        out << fmt::format("{} lease row{} not compared: measured between GPUs joined otherwise than the scenario's platform "
                           "joins them (nvidia-smi topo -m in the lease's machine.txt)\n",
                           other_paths, other_paths == 1 ? "" : "s");
    }

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
    meta.value("calibration", calibration_summary(selected));
    meta.value("command", command_line(argc, argv));
    meta.value("rows_matched", static_cast<std::uint64_t>(joined));
    meta.value("rows_not_modelled", static_cast<std::uint64_t>(not_modelled));
    meta.value("leases", static_cast<std::uint64_t>(set.leases.size()));
    meta.begin_array("lease_names");
    for (const auto& l : set.leases) meta.value("", l.name);
    meta.end_array();
    meta.value("rows_flagged", static_cast<std::uint64_t>(flagged));
    meta.value("lease_rows_other_gpu_path", static_cast<std::uint64_t>(other_paths));
    meta.end_object();
    files.add(kCompareFiles[2], meta.str());
    files.commit();
    out << "wrote " << o.out_dir << "/compare.csv, summary.csv, meta.json\n";
    return kExitOk;
}

namespace {
// What peer-to-peer traffic between two devices does on this platform, in a few words.
std::string peer_words(const topology::Platform& p, topology::NodeId a, topology::NodeId b) {
    const topology::PeerPath path = topology::peer_path(p, a, b);
    if (!path.refusal.empty()) return "refused: " + path.refusal;
    if (!path.via_cpu.empty()) return "bounced through host memory at " + path.via_cpu;
    return "direct";
}

const char* policy_name(topology::P2pPolicy v) {
    switch (v) {
        case topology::P2pPolicy::kAllowed: return "allowed";
        case topology::P2pPolicy::kViaCpu: return "via_cpu";
        case topology::P2pPolicy::kRefused: return "refused";
    }
    return "?";
}

// One pair: its class, each hop with its link and rate, the bottleneck and the peer policy.
int show_pair(const topology::Platform& p, const std::string& from, const std::string& to, std::ostream& out) {
    const auto name_of = [&](const std::string& n, const char* key) {
        const auto id = p.find(n);
        if (!id || p.node(*id).kind == topology::NodeKind::kRootComplex || p.node(*id).kind == topology::NodeKind::kSwitch ||
            p.node(*id).kind == topology::NodeKind::kNvSwitch) {
            std::string names;
            auto devs = topology::devices(p);
            for (const auto c : p.nodes_of(topology::NodeKind::kCpu)) devs.push_back(c);
            for (const auto d : devs) names += (names.empty() ? "" : ", ") + p.node(d).name;
            throw core::InputError(p.origin().empty() ? p.name() : p.origin(), key,
                                   "'" + n + "' is not a device or CPU of platform " + p.name() + " (" + names + ")");
        }
        return *id;
    };
    const auto a = name_of(from, "--from");
    const auto b = name_of(to, "--to");
    out << fmt::format("{} -> {}: {}\n", from, to, topology::route_class(p, a, b));
    for (const auto& h : p.route(a, b)) {
        out << fmt::format("  {:<10} -> {:<10} {:>8.1f} GB/s  {}\n", p.node(h.from).name, p.node(h.to).name,
                           topology::link_gbps(p.link(h.edge)), topology::describe(p, h.edge));
    }
    const auto bn = topology::bottleneck(p, a, b);
    if (!bn.link.empty()) out << fmt::format("bottleneck: {:.1f} GB/s, {}\n", bn.gbps, bn.link);
    const bool devices = p.node(a).kind != topology::NodeKind::kCpu && p.node(b).kind != topology::NodeKind::kCpu;
    if (devices && a != b) out << "peer-to-peer: " << peer_words(p, a, b) << "\n";
    return kExitOk;
}
}  // namespace

int cmd_topo_show(const std::string& ref, const std::string& from, const std::string& to, std::ostream& out) {
    const topology::Platform p = topology::load_platform(config::resolve_platform(ref, ""), config::ModelParams{});
    if (from.empty() != to.empty()) {
        throw core::InputError(ref, from.empty() ? "--from" : "--to", "give --from and --to together (one pair), or neither");
    }
    if (!from.empty()) return show_pair(p, from, to, out);
    auto devs = topology::devices(p);
    for (const auto n : p.nodes_of(topology::NodeKind::kCpu)) devs.push_back(n);
    out << p.name() << (p.description().empty() ? "" : ": " + p.description()) << "\n";
    // What `run` starts its scenarios from, checked as run would check it.
    const std::string calibration = config::platform_calibration(ref, "");
    config::load_calibration(calibration, p.origin(), "calibration", p.origin());
    out << "calibration: " << calibration_label(calibration) << "\n";
    // The platform's own host values, which go over that calibration (checked as run checks them).
    const config::PlatformHost host = config::platform_host(ref, "");
    if (!host.parameters.empty()) {
        std::string values;
        for (const auto& h : host.parameters) values += (values.empty() ? "" : ", ") + h.path + " " + h.value;
        out << "host: " << values << "\n";
    }
    out << "\n";
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
    // Device pairs whose peer-to-peer traffic is not forwarded straight (GPUs, cards, NICs).
    std::vector<std::string> marked;
    const auto endpoints = topology::devices(p);
    for (std::size_t i = 0; i < endpoints.size(); ++i) {
        for (std::size_t j = i + 1; j < endpoints.size(); ++j) {
            const std::string w = peer_words(p, endpoints[i], endpoints[j]);
            if (w != "direct") {
                marked.push_back(fmt::format("  {:<8} -- {:<8} {}", p.node(endpoints[i]).name, p.node(endpoints[j]).name, w));
            }
        }
    }
    out << "\npeer-to-peer: " << (marked.empty() ? "every device pair direct\n" : "pairs not forwarded straight:\n");
    for (const auto& m : marked) out << m << "\n";
    out << "\nbridges:\n";
    for (const auto n : p.nodes_of(topology::NodeKind::kRootComplex)) {
        const auto& b = p.node(n).bridge;
        out << fmt::format("  {:<8} root complex: read completions up to {}, {} to memory, p2p {}{}\n", p.node(n).name,
                           core::to_string(b.completion_size), core::to_string(b.forward_latency), policy_name(p.node(n).p2p),
                           p.node(n).peer_reads ? "" : " (writes only: peer reads refused)");
    }
    for (const auto kind : {topology::NodeKind::kSwitch, topology::NodeKind::kNvSwitch}) {
        for (const auto n : p.nodes_of(kind)) {
            out << fmt::format("  {:<8} {}: {} port to port, p2p {}\n", p.node(n).name, topology::to_string(kind),
                               core::to_string(p.node(n).bridge.switch_latency), policy_name(p.node(n).p2p));
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
// A shard's folder has one more file: which cases its results.csv and links.csv hold.
const char* const kShardFile = "shard.txt";

std::string config_json(const std::vector<config::Scenario>& all) {
    core::JsonWriter cfg;
    cfg.begin_array();
    for (const auto& s : all) config::write_config_json(cfg, s, topology::effective_json(topology::load_platform(s)),
                                                    sim::to_string(sim::default_fidelity()));
    cfg.end_array();
    return cfg.str();
}


// What makes two runs' cases the same cases: the code, the effective configuration of every
// scenario and the list of cases. Shards are merged only when this agrees.
std::string run_fingerprint(const std::string& config, const Workload& w) {
    std::string text = std::string(DMASIM_GIT_COMMIT) + "\n" + config + "\n";
    for (const auto& c : w.cases) text += c.label + "\n";
    return fmt::format("{:016x}", fnv1a64(text));
}

// shard.txt: the format line, the shard, the run's case count and fingerprint, then one line
// per case of the shard: its index in the sweep and the bytes of its lines in results.csv and
// links.csv (bytes, not lines: a quoted note could hold a line break).
std::string shard_manifest(const Shard& sh, std::size_t total, const std::string& fingerprint,
                           const std::vector<std::size_t>& cases, const std::vector<CaseOutput>& outputs) {
    std::string m = "dmasim-shard 1\n";
    m += fmt::format("shard {}/{}\ncases {}\nfingerprint {}\ncommit {}\n", sh.index, sh.count, total, fingerprint,
                     DMASIM_GIT_COMMIT);
    for (std::size_t i = 0; i < cases.size(); ++i) {
        m += fmt::format("case {} {} {}\n", cases[i], outputs[i].rows_csv.size(), outputs[i].links_csv.size());
    }
    return m;
}

// What every meta.json begins with: which dmasim wrote the folder, where, when, and how called.
void begin_meta(core::JsonWriter& j, const std::string& cmdline, std::size_t rows) {
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
}

void write_run_meta(core::JsonWriter& j, const std::string& cmdline, std::size_t rows, double wall_s, int jobs,
                    const std::string& shard, int ranks, const std::string& calibration = "") {
    begin_meta(j, cmdline, rows);
    j.value("wall_seconds", wall_s);
    j.value("systemc", sc_core::sc_version());
    // How it ran, which changes nothing in the other files (docs/scaling.md).
    j.value("jobs", jobs);
    if (!calibration.empty()) j.value("calibration", calibration);
    if (!shard.empty()) j.value("shard", shard);
    if (ranks > 1) j.value("mpi_ranks", ranks);
    j.end_object();
}

int cmd_run(const Options& o, int argc, char** argv, std::ostream& out, std::ostream& err) {
    const bool distributed = mpi::size() > 1;
    const bool sharded = !o.shard.empty();
    const Shard shard = sharded ? parse_shard(o.shard) : Shard{};
    if (distributed && sharded) {
        throw core::InputError("--shard", o.shard, "not under mpirun with several ranks: the ranks share the cases");
    }
    // A timeline shows one machine's run: the drawn machines' runs of the band would pile onto it.
    Options own = o;
    if (!o.trace_file.empty()) own.deterministic = true;
    const auto all = load_all(own);  // every file checked before anything runs
    const auto wall0 = std::chrono::steady_clock::now();
    const Workload w = make_workload(all);
    std::unique_ptr<sim::Tracer> tracer;
    if (!o.trace_file.empty()) {
        if (w.platforms.size() > 1) {
            throw core::InputError("--trace", o.trace_file,
                                   "a timeline covers one platform; these scenarios use " +
                                       std::to_string(w.platforms.size()) + " (run them separately)");
        }
        if (sharded || distributed) {
            throw core::InputError("--trace", o.trace_file, "a timeline is written by one process: not with --shard or mpirun");
        }
        tracer = std::make_unique<sim::Tracer>(static_cast<double>(trace_resolution(o.trace_resolution).ps));
    }
    // Where the files go is checked before the simulation, which can take minutes; by rank 0
    // alone, which writes them, and the ranks agree before any simulates.
    std::exception_ptr refused;
    if (mpi::rank() == 0) {
        try {
            core::OutputFiles planned(o.out_dir);
            for (const char* name : kRunFiles) planned.add(name, {});
            if (sharded) planned.add(kShardFile, {});
            if (tracer) planned.add_path(o.trace_file, {});
            planned.check();
        } catch (const core::InputError&) {
            refused = std::current_exception();
        }
    }
    if (distributed && mpi::allreduce_min(refused ? 0 : 1) == 0 && !refused) return kExitBadInput;
    if (refused) std::rethrow_exception(refused);

    // The cases this process runs: all, its shard's, or its rank's (the same round robin).
    std::vector<std::size_t> selected;
    if (sharded) {
        selected = shard_cases(w.cases.size(), shard.index, shard.count);
    } else if (distributed) {
        selected = shard_cases(w.cases.size(), static_cast<std::size_t>(mpi::rank()), static_cast<std::size_t>(mpi::size()));
    } else {
        selected = shard_cases(w.cases.size(), 0, 1);
    }
    const ActiveTracer active(tracer.get());
    Progress progress(err, !o.quiet, stderr_is_terminal(err),
                      distributed ? fmt::format("rank 0 of {}:", mpi::size()) : std::string("simulating"));
    RunSettings rs;
    rs.jobs = o.jobs;
    rs.explain = o.explain;
    // A timeline records this process's simulation.
    rs.in_process_last = tracer != nullptr || o.jobs == 1;
    rs.progress = &progress;
    std::vector<CaseOutput> outputs;
    if (!distributed) {
        outputs = run_cases(w, selected, rs);
    } else {
        // Every rank reports to rank 0, a failure too: no rank may wait for one that gave up.
        std::string failure;
        try {
            outputs = run_cases(w, selected, rs);
        } catch (const std::exception& e) {
            failure = fmt::format("rank {}: {}", mpi::rank(), e.what());
            outputs.clear();
        }
        const std::string mine = ByteWriter{}.str(failure).str(encode_outputs(failure.empty() ? selected : std::vector<std::size_t>{}, outputs)).bytes();
        const std::vector<std::string> all_ranks = mpi::gather(mine);
        if (mpi::rank() != 0) {
            if (!failure.empty()) throw std::runtime_error(failure);
            return kExitOk;
        }
        std::vector<CaseOutput> by_case(w.cases.size());
        std::vector<bool> seen(w.cases.size(), false);
        for (std::size_t r = 0; r < all_ranks.size(); ++r) {
            ByteReader in(all_ranks[r], fmt::format("rank {}'s results", r));
            const std::string f = in.str();
            if (!f.empty()) throw std::runtime_error(f);
            std::vector<std::size_t> cases;
            std::vector<CaseOutput> outs;
            decode_outputs(in.str(), cases, outs, fmt::format("rank {}'s results", r));
            for (std::size_t i = 0; i < cases.size(); ++i) {
                by_case.at(cases[i]) = std::move(outs[i]);
                seen[cases[i]] = true;
            }
        }
        if (std::find(seen.begin(), seen.end(), false) != seen.end()) throw std::runtime_error("a rank's cases are missing");
        outputs = std::move(by_case);
        selected = shard_cases(w.cases.size(), 0, 1);
    }
    const double wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();

    std::string results_csv = core::results_csv_header() + '\n';
    std::string links_csv = links_csv_header();
    for (const auto& c : outputs) {
        results_csv += c.rows_csv;
        links_csv += c.links_csv;
    }
    const std::vector<core::ResultRow> rows = rows_of(outputs);
    core::OutputFiles files(o.out_dir);
    files.add(kRunFiles[0], results_csv);
    files.add(kRunFiles[1], links_csv);
    const std::string config = config_json(all);
    files.add(kRunFiles[2], config);
    core::JsonWriter meta;
    write_run_meta(meta, command_line(argc, argv), rows.size(), wall_s, o.jobs, o.shard, mpi::size(),
                   calibration_summary(all));
    files.add(kRunFiles[3], meta.str());
    if (sharded) files.add(kShardFile, shard_manifest(shard, w.cases.size(), run_fingerprint(config, w), selected, outputs));
    const bool truncated = tracer && tracer->truncated();
    if (tracer) files.add_path(o.trace_file, tracer->json());
    files.commit();  // the timeline with the results: both or neither
    for (const auto& c : outputs) out << c.explain;
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
    out << calibration_lines(all);
    if (sharded) {
        out << fmt::format("\nwrote shard {}/{} ({} of {} cases, {} rows) to {} (dmasim merge puts the shards together)\n",
                           shard.index, shard.count, selected.size(), w.cases.size(), rows.size(), o.out_dir);
    } else {
        out << fmt::format("\nwrote {} rows to {}/results.csv (configuration in config.json, per-link breakdown in links.csv)\n",
                           rows.size(), o.out_dir);
    }
    return kExitOk;
}

// One shard folder, read for merge.
struct ShardDir {
    std::string dir;
    Shard shard;
    std::size_t total = 0;
    std::string fingerprint;
    std::string commit;
    std::vector<std::size_t> cases;
    std::vector<std::pair<std::size_t, std::size_t>> bytes;  // results.csv, links.csv per case
    std::string results_body;
    std::string links_body;
    std::string config;
};

constexpr std::uint64_t kMaxShardFileBytes = std::uint64_t{4} << 30;

ShardDir read_shard_dir(const std::string& dir) {
    ShardDir d;
    d.dir = dir;
    const std::string manifest_path = dir + "/" + kShardFile;
    if (!core::is_regular_file(manifest_path)) {
        throw core::InputError(dir, "", std::string("not a shard of dmasim run --shard (no ") + kShardFile + ")");
    }
    std::istringstream m(core::read_input_file(manifest_path, "shard manifest", kMaxShardFileBytes));
    std::string line;
    int lineno = 0;
    auto bad = [&](const std::string& why) {
        return core::InputError(manifest_path + ":" + std::to_string(lineno), "", why);
    };
    bool have_shard = false;
    while (std::getline(m, line)) {
        ++lineno;
        std::istringstream ls(line);
        std::string key;
        ls >> key;
        if (lineno == 1) {
            if (line != "dmasim-shard 1") throw bad("not a dmasim shard manifest (first line: dmasim-shard 1)");
            continue;
        }
        if (key == "shard") {
            std::string text;
            ls >> text;
            try {
                d.shard = parse_shard(text);
            } catch (const core::InputError&) {
                throw bad("shard '" + text + "' is not I/N");
            }
            have_shard = true;
        } else if (key == "cases") {
            if (!(ls >> d.total)) throw bad("cases: not a count");
        } else if (key == "fingerprint") {
            ls >> d.fingerprint;
        } else if (key == "commit") {
            ls >> d.commit;
        } else if (key == "case") {
            std::size_t index = 0, rb = 0, lb = 0;
            if (!(ls >> index >> rb >> lb)) throw bad("case: needs an index and two byte counts");
            d.cases.push_back(index);
            d.bytes.emplace_back(rb, lb);
        } else {
            throw bad("unknown line '" + key + "'");
        }
    }
    if (!have_shard || d.fingerprint.empty() || lineno == 0) throw bad("incomplete manifest");
    if (d.cases != shard_cases(d.total, d.shard.index, d.shard.count)) {
        throw core::InputError(manifest_path, "case", "the cases are not those of shard " + std::to_string(d.shard.index) +
                                                          "/" + std::to_string(d.shard.count));
    }
    auto body = [&](const char* name, const std::string& header, std::size_t expected) {
        const std::string path = dir + "/" + name;
        std::string text = core::read_input_file(path, "shard results", kMaxShardFileBytes);
        if (text.compare(0, header.size(), header) != 0) throw core::InputError(path, "", "not a dmasim results file of this version");
        text.erase(0, header.size());
        if (text.size() != expected) {
            throw core::InputError(path, "", "holds " + std::to_string(text.size()) + " bytes of rows, the manifest says " +
                                                 std::to_string(expected) + " (a changed or partial file)");
        }
        return text;
    };
    std::size_t rb = 0, lb = 0;
    for (const auto& [r, l] : d.bytes) {
        rb += r;
        lb += l;
    }
    d.results_body = body(kRunFiles[0], core::results_csv_header() + "\n", rb);
    d.links_body = body(kRunFiles[1], links_csv_header(), lb);
    d.config = core::read_input_file(dir + "/" + kRunFiles[2], "configuration", kMaxShardFileBytes);
    return d;
}

}  // namespace

int cmd_merge(const std::vector<std::string>& dirs, const std::string& out_dir, int argc, char** argv, std::ostream& out) {
    core::OutputFiles planned(out_dir);
    for (const char* name : kRunFiles) planned.add(name, {});
    planned.check();
    std::vector<ShardDir> shards;
    for (const auto& d : dirs) shards.push_back(read_shard_dir(d));
    const ShardDir& first = shards.front();
    std::vector<const ShardDir*> by_index(first.shard.count, nullptr);
    for (const auto& s : shards) {
        const std::string which = std::to_string(s.shard.index) + "/" + std::to_string(s.shard.count);
        if (s.shard.count != first.shard.count || s.total != first.total || s.fingerprint != first.fingerprint ||
            s.commit != first.commit || s.config != first.config) {
            throw core::InputError(s.dir, "fingerprint",
                                   "shard " + which + " is not of the same run as shard " + std::to_string(first.shard.index) +
                                       "/" + std::to_string(first.shard.count) + " in " + first.dir +
                                       " (other scenarios, --set, calibration, shard count or dmasim version)");
        }
        if (by_index[s.shard.index] != nullptr) {
            throw core::InputError(s.dir, "shard", "shard " + which + " is given twice (also " + by_index[s.shard.index]->dir + ")");
        }
        by_index[s.shard.index] = &s;
    }
    std::string missing;
    for (std::size_t i = 0; i < by_index.size(); ++i) {
        if (by_index[i] == nullptr) missing += (missing.empty() ? "" : ", ") + std::to_string(i) + "/" + std::to_string(by_index.size());
    }
    if (!missing.empty()) throw core::InputError(first.dir, "shard", "shards missing: " + missing);

    // Case i is case i / N of shard i % N (round robin).
    const std::size_t n = first.shard.count;
    std::vector<std::size_t> roff(n, 0), loff(n, 0);
    std::string results_csv = core::results_csv_header() + '\n';
    std::string links_csv = links_csv_header();
    for (std::size_t c = 0; c < first.total; ++c) {
        const ShardDir& s = *by_index[c % n];
        const auto [rb, lb] = s.bytes[c / n];
        results_csv.append(s.results_body, roff[c % n], rb);
        links_csv.append(s.links_body, loff[c % n], lb);
        roff[c % n] += rb;
        loff[c % n] += lb;
    }
    std::istringstream rows_in(results_csv);
    const std::size_t rows = core::read_results_csv(rows_in, "the merged rows").size();
    core::OutputFiles files(out_dir);
    files.add(kRunFiles[0], results_csv);
    files.add(kRunFiles[1], links_csv);
    files.add(kRunFiles[2], first.config);
    // The shards' own meta.json say where and how long each ran; this one says what was merged.
    core::JsonWriter meta;
    begin_meta(meta, command_line(argc, argv), rows);
    meta.value("systemc", sc_core::sc_version());
    meta.value("shards", static_cast<std::uint64_t>(n));
    meta.begin_array("shard_dirs");
    for (std::size_t i = 0; i < n; ++i) meta.value("", by_index[i]->dir);
    meta.end_array();
    meta.end_object();
    files.add(kRunFiles[3], meta.str());
    files.commit();
    out << fmt::format("merged {} shards ({} cases, {} rows) into {}/results.csv, links.csv, config.json, meta.json\n", n,
                       first.total, rows, out_dir);
    return kExitOk;
}

std::string result_key(const core::ResultRow& r) { return row_key(r); }

std::vector<core::ResultRow> read_measured(const std::string& path, std::string* resolved) {
    const MeasuredSet set = read_measured_set(path);
    if (resolved != nullptr) *resolved = set.files().size() == 1 ? set.files().front() : path;
    return cross_lease_rows(cross_lease(set.leases));
}

std::vector<config::Scenario> load_scenario_dir(const std::string& dir, const std::vector<config::SetOverride>& sets,
                                               const std::string& calibration) {
    namespace fs = std::filesystem;
    if (!fs::is_directory(dir)) throw core::InputError(dir, "", "not a folder of scenario files");
    Options o;
    o.calibration = calibration;
    for (const auto& e : fs::recursive_directory_iterator(dir)) {
        if (e.is_regular_file() && e.path().extension() == ".yaml") o.files.push_back(e.path().string());
    }
    std::sort(o.files.begin(), o.files.end());
    for (const auto& set : sets) o.sets.push_back((set.scenario.empty() ? "" : set.scenario + ":") + set.path + "=" + set.value);
    return load_all(o);
}

std::vector<config::SetOverride> sets_for_measured(const std::vector<std::string>& texts,
                                                   const std::vector<config::Scenario>& scenarios,
                                                   const std::vector<core::ResultRow>& hw) {
    std::vector<config::SetOverride> sets;
    if (texts.empty()) return sets;
    const std::vector<config::Scenario> measured = restrict_to_measured(scenarios, hw);
    for (const auto& text : texts) {
        const config::SetOverride s = config::parse_set(text);
        if (!s.scenario.empty()) {
            sets.push_back(s);
            continue;
        }
        for (const auto& m : measured) sets.push_back(config::SetOverride{s.path, s.value, m.name});
    }
    return sets;
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

std::vector<core::ResultRow> simulate_quietly(const std::vector<config::Scenario>& scenarios, int jobs) {
    return rows_of(simulate(scenarios, jobs));
}

int run_cli(int argc, char** argv, std::ostream& out, std::ostream& err) {
    CLI::App app{"dmasim: predicts how fast data moves between CPUs, GPUs and PCIe devices, strategy by strategy.\n"
                 "A SystemC model of PCIe links, root complex, copy engines and memories, driven by YAML scenarios.",
                 "dmasim"};
    app.require_subcommand(1);
    app.set_version_flag("--version", std::string(DMASIM_VERSION) + " (" + DMASIM_GIT_COMMIT + ")");
    Options o;
    // docs/fast-forward.md; set for the whole process before anything forks.
    std::string fidelity = "fast";
    const auto add_fidelity = [&fidelity](CLI::App* command) {
        command
            ->add_option("--fidelity", fidelity,
                         "fast: long transfers are simulated at a few smaller sizes and extrapolated where that is "
                         "exact, frames at rest reuse the last frame's result; tlp: every TLP (--trace forces it)")
            ->check(CLI::IsMember({"fast", "tlp"}))
            ->capture_default_str();
    };

    auto* run = app.add_subcommand("run", "simulate scenarios and write results (CSV + config.json + meta.json)");
    add_fidelity(run);
    run->add_option("files", o.files, "scenario files (YAML)")->required();
    run->add_option("--out,-o", o.out_dir,
                    "directory for results.csv, links.csv, config.json, meta.json (the committed predictions: "
                    "--out results/sim)")
        ->capture_default_str();
    run->add_option("--set", o.sets,
                    "override a scenario key by dotted path, e.g. --set link.generation=4 --set sizes=4KiB,1GiB "
                    "(repeatable; applies to every scenario, or with NAME: to one, e.g. --set pinned:link.lanes=8)");
    const std::string only_help = "keep only these scenarios (names, comma-separated or repeated), e.g. --only pinned,duplex";
    run->add_option("--only", o.only, only_help)->delimiter(',');
    const std::string calibration_help =
        "parameters to start from: a calibration file (dmasim calibrate), a built-in one (" +
        [] {
            std::string n;
            for (const auto& c : config::calibration_names()) n += (n.empty() ? "" : ", ") + c;
            return n;
        }() +
        ") or none (the defaults); --set wins over it. Default: the one each scenario's platform names "
        "(dmasim topo show PLATFORM)";
    run->add_option("--calibration", o.calibration, calibration_help);
    run->add_flag("--explain", o.explain, "print what every link carried in each case (TLPs, DLLPs, busy time)");
    run->add_flag("--deterministic", o.deterministic,
                  "one number a row: no band of machines (host_spread.calls, cpu_copies and setup 0); by default "
                  "each row's p10/p90/min/max are those of machines whose host costs differ as host_spread says "
                  "(docs/model.md, Host variation between machines)");
    run->add_flag("--quiet,-q", o.quiet, "no progress on stderr (a bar on a terminal, else a line every few seconds)");
    // --jobs 0 is refused rather than read as "all CPUs": the default already is.
    const auto jobs_check = CLI::Range(1, kMaxJobs);
    const std::string jobs_help = "worker processes that simulate at once (default: the CPUs this process may use, " +
                                  std::to_string(default_jobs()) + " here); results do not depend on it";
    auto* run_jobs = run->add_option("--jobs,-j", o.jobs, jobs_help)->check(jobs_check);
    run->add_option("--shard", o.shard,
                    "run only shard I of N (I from 0): the cases whose position in the sweep is I modulo N; "
                    "dmasim merge puts the shards' folders together (docs/scaling.md)");
    run->add_option("--trace", o.trace_file,
                    "write a timeline of the simulated run (Chrome trace JSON: CPU calls, streams, copy engines, "
                    "kernels, CPU copies, link occupancy) for ui.perfetto.dev");
    run->add_option("--trace-resolution", o.trace_resolution,
                    "window of the link-occupancy counters in the timeline, 1ns to 1s")
        ->capture_default_str();

    auto* validate = app.add_subcommand("validate", "check scenario files without running them");
    validate->add_option("files", o.files, "scenario files (YAML)")->required();
    validate->add_option("--set", o.sets, "override a key, as for run");
    validate->add_option("--only", o.only, only_help)->delimiter(',');

    auto* plan = app.add_subcommand("plan", "expand scenarios into the flat plan the CUDA harness (dmaprobe) runs");
    plan->add_option("files", o.files, "scenario files (YAML)")->required();
    plan->add_option("--out,-o", o.plan_out, "plan file to write ('-' or nothing: standard output)");
    plan->add_option("--set", o.sets, "override a key, as for run");
    plan->add_option("--only", o.only, only_help)->delimiter(',');

    auto* compare = app.add_subcommand("compare", "simulate what was measured and compare, row by row and per strategy");
    add_fidelity(compare);
    compare->add_option("--measured", o.measured,
                        "a machine's measured folder (one sub-folder per lease), a lease folder, or a measured.csv; "
                        "measured values are medians across leases")
        ->required();
    compare->add_option("--leases", o.leases,
                        "only these leases of --measured, by folder name or boot id (e.g. 3a6bb19d): the machines a "
                        "calibration did not see")
        ->delimiter(',');
    compare->add_option("--calibration", o.calibration, calibration_help);
    compare->add_option("--scenarios", o.scenarios_dir, "folder of scenario files the measured rows name")->capture_default_str();
    compare->add_flag("--deterministic", o.deterministic,
                      "compare the nominal machine only: no band of machines (predicted_p10_us = predicted_p90_us)");
    compare->add_option("--set", o.sets,
                        "override a key, as for run, in the scenarios the leases measured (e.g. --set platform=h200x2-nvlink "
                        "for a 2xH200 machine's leases)");
    auto* compare_jobs = compare->add_option("--jobs,-j", o.jobs, jobs_help)->check(jobs_check);
    // Not results/: a committed comparison is replaced only when asked for by name.
    std::string compare_out = "out/compare";
    compare->add_option("--out,-o", compare_out,
                        "folder for compare.csv, summary.csv, meta.json (the committed ones: --out "
                        "results/<machine>/compare)")
        ->capture_default_str();

    CalibrateOptions co;
    auto* calibrate = app.add_subcommand("calibrate", "fit the model's free parameters to measured rows (NLopt BOBYQA), with held-out error");
    add_fidelity(calibrate);
    calibrate->add_option("--measured", co.measured,
                          "a machine's measured folder (one sub-folder per lease), a lease folder, or a measured.csv; "
                          "the fit is to medians across leases")
        ->required();
    calibrate->add_option("--out,-o", co.out_file, "calibration file to write")->required();
    calibrate->add_option("--leases", co.leases,
                          "only these leases of --measured, by folder name or boot id (e.g. 220b65eb): a training "
                          "split of machines, the rest held out for compare --leases")
        ->delimiter(',');
    calibrate->add_option("--scenarios", co.scenarios_dir, "folder of scenario files the measured rows name")->capture_default_str();
    calibrate->add_option("--free", co.free, "fit only these free parameters (docs/calibration.md lists them); runtime.kernel_launch_latency is taken from the leases' metadata.json (their empty kernel) unless named here or in --set");
    calibrate->add_option("--set", co.sets,
                          "override a key, as for run, in the scenarios the leases measured (e.g. --set "
                          "platform=h200x2-nvlink for a 2xH200 machine's leases); the file records it. A free parameter it names is "
                          "given, not fitted");
    std::string max_size = "4MiB";
    calibrate->add_option("--max-size", max_size,
                          "fit rows up to this size: larger rows are link-bound, so say little about the free "
                          "parameters, and are slow to simulate (up to 16MiB a step takes about 2.5 s, up to 4MiB 0.1 s); "
                          "allocations and registrations measured alone (setup_only scenarios) are fitted at every size")
        ->capture_default_str();
    calibrate->add_option("--start", co.start_file,
                          "start the fit from this calibration file's values of the free parameters (default: the "
                          "model's defaults), e.g. the calibration a refit after a change to the model replaces; "
                          "a free parameter it lacks starts from its default");
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
    calibrate->add_option("--band-coverage", co.band_coverage,
                          "the share of the leases' medians the p10-p90 band is to hold: each kind of row's "
                          "model_error sigma is the least that does on its training rows (0.5 to 0.99)")
        ->check(CLI::Range(0.5, 0.99))
        ->capture_default_str();
    bool no_band = false;
    calibrate->add_flag("--no-band", no_band,
                        "fit no model_error (the band then is the machines' alone); saves simulating every measured "
                        "row of every size once on the band's machines");
    calibrate->add_flag("--quiet,-q", co.quiet, "no progress on stderr");
    auto* calibrate_jobs = calibrate->add_option("--jobs,-j", co.jobs,
                                                 "processes that simulate at once: independent fits (main, folds, "
                                                 "leave-one-lease-out) side by side, else a step's cases split "
                                                 "(default: the CPUs, " + std::to_string(default_jobs()) +
                                                     " here); the fit does not depend on it")
                               ->check(jobs_check);

    std::vector<std::string> merge_dirs;
    std::string merge_out;
    auto* merge = app.add_subcommand("merge", "put the folders of dmasim run --shard I/N together: the files one run writes");
    merge->add_option("dirs", merge_dirs, "the shards' output folders, every shard of one run, any order")->required();
    merge->add_option("--out,-o", merge_out, "folder for results.csv, links.csv, config.json, meta.json")->required();

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
    std::string topo_from;
    std::string topo_to;
    topo_show->add_option("--from", topo_from, "with --to: only the route between these two devices or CPUs (e.g. gpu0), hop by hop, and its peer-to-peer policy");
    topo_show->add_option("--to", topo_to, "the other end of --from");
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

    const int jobs = default_jobs();
    if (run_jobs->count() == 0 && compare_jobs->count() == 0) o.jobs = jobs;
    if (calibrate_jobs->count() == 0) co.jobs = jobs;

    // A timeline needs every TLP-level event: --trace simulates at TLP level.
    sim::set_default_fidelity(o.trace_file.empty() ? sim::parse_fidelity(fidelity) : sim::Fidelity::kTlp);

    // Children and temporary files end with the command, however it ends.
    const TerminationHandler handler;
    try {
        // Under mpirun the ranks share run's and calibrate's work; any other command runs on
        // rank 0 alone (the others would write the same files).
        if (mpi::rank() != 0 && !*run && !*calibrate) return kExitOk;
        if (*merge) return cmd_merge(merge_dirs, merge_out, argc, argv, out);
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
            co.band = !no_band;
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
        if (*topo_show) return cmd_topo_show(topo_platform, topo_from, topo_to, out);
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
// At most --jobs workers (or fits) at a time; a few temporary files besides.
constexpr std::size_t kSlots = kMaxJobs + 16;
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
