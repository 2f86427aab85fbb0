// The dmasim command line, in-process: exit codes, error messages, and files written.
#include "cli_helpers.h"
#include "dmasim/app/commands.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <map>
#include <sstream>
#include <set>
#include <sys/stat.h>
#include <unistd.h>

#include "dmasim/core/plan.h"
#include "dmasim/core/results.h"
#include "dmasim/sim/trace.h"

namespace dmasim::app {
namespace {

using testing::cli;
using testing::Outcome;

std::string temp_dir() {
    char tmpl[] = "/tmp/dmasim-cli-XXXXXX";
    EXPECT_NE(::mkdtemp(tmpl), nullptr);
    return tmpl;
}

std::string write_file(const std::string& dir, const std::string& name, const std::string& text) {
    const std::string path = dir + "/" + name;
    std::ofstream(path) << text;
    return path;
}

bool exists(const std::string& path) {
    struct stat st {};
    return ::stat(path.c_str(), &st) == 0;
}

const std::string kScenarios = std::string(DMASIM_SOURCE_DIR) + "/scenarios/";

TEST(Cli, HelpExplainsCommandsAndOptions) {
    const Outcome top = cli({"--help"});
    EXPECT_EQ(top.code, 0);
    for (const char* word : {"run", "validate", "plan", "params"}) EXPECT_NE(top.out.find(word), std::string::npos);
    const Outcome run = cli({"run", "--help"});
    EXPECT_EQ(run.code, 0);
    for (const char* word : {"--set", "--out", "--explain"}) EXPECT_NE(run.out.find(word), std::string::npos);
    EXPECT_EQ(cli({}).code, 2);
    EXPECT_EQ(cli({"fly"}).code, 2);
}

TEST(Cli, BadInputGivesOneErrorNamingFileAndKeyAndWritesNothing) {
    const std::string dir = temp_dir();
    const std::string out = dir + "/out";
    struct Case {
        std::vector<std::string> args;
        std::string expect;
    };
    const Case cases[] = {
        {{write_file(dir, "malformed.yaml", "strategy: pinned\nsizes: [4KiB\n")}, "malformed.yaml: malformed YAML"},
        {{write_file(dir, "unknown.yaml", "strategy: pinned\nsizes: 4KiB\nlink: {lanez: 4}\n")},
         "unknown.yaml: key 'link.lanez'"},
        {{write_file(dir, "lanes.yaml", "strategy: pinned\nsizes: 4KiB\nlink: {lanes: 3}\n")}, "key 'link.lanes'"},
        {{write_file(dir, "mps.yaml", "strategy: pinned\nsizes: 4KiB\nlink: {mps: 100B}\n")}, "key 'link.mps'"},
        {{write_file(dir, "neg.yaml", "strategy: pinned\nsizes: -4KiB\n")}, "neg.yaml: key 'sizes'"},
        {{dir + "/missing.yaml"}, "missing.yaml: cannot open"},
        {{kScenarios + "pinned.yaml", "--set", "link.lanes=3"}, "pinned.yaml: key 'link.lanes'"},
        {{kScenarios + "pinned.yaml", "--set", "nonsense"}, "--set"},
        {{kScenarios + "pinned.yaml", "--only", "duplex"}, "--only: key 'duplex': no scenario of that name"},
        {{kScenarios + "pinned.yaml", "--set", "duplex:link.lanes=8"}, "--set: key 'duplex:link.lanes': no scenario named"},
        {{kScenarios + "pinned.yaml", "--set", ":link.lanes=8"}, "expected NAME:KEY=VALUE"},
        {{kScenarios + "pinned.yaml", "--set", "pinned:link.lanes=3"}, "pinned.yaml: key 'link.lanes'"},
        {{kScenarios + "pinned.yaml", "--calibration", dir + "/nowhere.yaml"}, "--calibration: key '"},
        {{kScenarios + "pinned.yaml", "--calibration", write_file(dir, "badcal.yaml", "parameters: {cpu.x: 1}\n")},
         "badcal.yaml: key 'parameters.cpu.x'"},
    };
    for (const auto& c : cases) {
        std::vector<std::string> args{"run"};
        args.insert(args.end(), c.args.begin(), c.args.end());
        args.insert(args.end(), {"--out", out});
        const Outcome r = cli(args);
        EXPECT_EQ(r.code, 2) << c.expect;
        EXPECT_NE(r.err.find(c.expect), std::string::npos) << r.err;
        EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
        EXPECT_FALSE(exists(out)) << "output written despite the error: " << c.expect;
        const Outcome v = cli({"validate", c.args.front()});
        if (c.args.size() == 1) {
            EXPECT_EQ(v.code, 2) << c.expect;
        }
    }
}

TEST(Cli, ValidateAndPlanTheShippedScenarios) {
    const Outcome v = cli({"validate", kScenarios + "pinned.yaml", kScenarios + "duplex.yaml"});
    EXPECT_EQ(v.code, 0) << v.err;
    EXPECT_NE(v.out.find("scenario 'duplex' ok"), std::string::npos);
    const std::string dir = temp_dir();
    const Outcome p = cli({"plan", kScenarios + "pinned.yaml", "--set", "sizes=4KiB,1MiB", "-o", dir + "/plan.txt"});
    EXPECT_EQ(p.code, 0) << p.err;
    const core::Plan plan = core::read_plan_file(dir + "/plan.txt");
    ASSERT_EQ(plan.cases.size(), 4U);  // 2 directions x 2 sizes
    EXPECT_EQ(plan.cases[1].integer("size_bytes"), 1 << 20);
    const Outcome params = cli({"params"});
    EXPECT_NE(params.out.find("link.mrrs"), std::string::npos);
}

TEST(Cli, OnlyKeepsTheNamedScenariosAndAScopedSetChangesOneOfThem) {
    const std::string dir = temp_dir() + "/res";
    // Two files, three scenarios kept of many; the link of one of them narrowed.
    const Outcome r = cli({"run", kScenarios + "pinned.yaml", kScenarios + "duplex.yaml", kScenarios + "latency.yaml",
                           "--only", "pinned,duplex", "--only", "duplex", "--set", "sizes=64MiB", "--set",
                           "duplex:link.lanes=4", "--out", dir, "--quiet"});
    ASSERT_EQ(r.code, 0) << r.err;
    std::ifstream csv(dir + "/results.csv");
    const auto rows = core::read_results_csv(csv, "results.csv");
    std::set<std::string> scenarios;
    double pinned_gbps = 0.0;
    double duplex_gbps = 0.0;
    for (const auto& row : rows) {
        scenarios.insert(row.scenario);
        if (row.variant != "") continue;
        if (row.scenario == "pinned" && row.direction == "h2d") pinned_gbps = row.gbps();
        if (row.scenario == "duplex") duplex_gbps = row.gbps();
    }
    EXPECT_EQ(scenarios, (std::set<std::string>{"pinned", "duplex"}));
    // Gen5 x16 one way against Gen5 x4 both ways: the narrowed link is a quarter as wide.
    EXPECT_GT(pinned_gbps, 50.0);
    EXPECT_LT(duplex_gbps, 2 * 16.0);
    EXPECT_GT(duplex_gbps, 16.0);
    // The same selection for the harness.
    const Outcome p = cli({"plan", kScenarios + "pinned.yaml", kScenarios + "duplex.yaml", "--only", "duplex", "-o",
                           dir + "/plan.txt"});
    ASSERT_EQ(p.code, 0) << p.err;
    for (const auto& c : core::read_plan_file(dir + "/plan.txt").cases) EXPECT_EQ(c.str("scenario"), "duplex");
}

// The harness skips a case whose platform differs from its GPU: the plan says which platform,
// which link it gives the measuring GPU, and for a copy between GPUs the route between them.
TEST(Cli, PlanCarriesEachCasesPlatformLinkAndPeerRoute) {
    const std::string dir = temp_dir();
    const Outcome p = cli({"plan", kScenarios + "whatif/host-eras.yaml", kScenarios + "peer.yaml", kScenarios + "pinned.yaml",
                           "--set", "sizes=1MiB", "--set", "pinned:link.generation=4", "-o", dir + "/plan.txt"});
    ASSERT_EQ(p.code, 0) << p.err;
    std::map<std::string, const core::PlanCase*> first;
    const core::Plan plan = core::read_plan_file(dir + "/plan.txt");
    for (const auto& c : plan.cases) first.emplace(c.str("scenario"), &c);
    const core::PlanCase& v100 = *first.at("v100-gen3-host");
    EXPECT_EQ(v100.str("platform"), "v100-gen3");
    EXPECT_EQ(v100.integer("link_generation"), 3);
    EXPECT_EQ(v100.integer("link_lanes"), 16);
    EXPECT_EQ(v100.str("link_from"), "platform");
    EXPECT_EQ(first.at("h100-gen5-host")->integer("link_generation"), 5);
    // A scenario that sets another link key (MPS) keeps its platform's generation: measured on a
    // Gen5 GPU it would be another link (a device run found this).
    EXPECT_EQ(first.at("v100-gen3-host-mps128")->integer("link_generation"), 3);
    EXPECT_EQ(first.at("v100-gen3-host-mps128")->str("link_from"), "platform");
    EXPECT_EQ(first.at("peer-switch")->str("peer_route"), "PIX");
    EXPECT_EQ(first.at("peer")->str("peer_route"), "NV18");
    // A link the scenario set is carried as set, and must be confirmed on the GPU.
    const core::PlanCase& pinned = *first.at("pinned");
    EXPECT_EQ(pinned.integer("link_generation"), 4);
    EXPECT_FALSE(pinned.has("link_from"));
    EXPECT_EQ(pinned.str("platform"), "h100-sxm");
}

TEST(Cli, RunWritesResultsConfigAndMetadata) {
    const std::string base = temp_dir();
    const std::string dir = base + "/res";
    // A calibration's parameters replace the defaults and land in the recorded configuration.
    std::ofstream(base + "/cal.yaml") << "parameters:\n  runtime.call_overhead: 7us\n";
    const Outcome r = cli({"run", kScenarios + "pinned.yaml", kScenarios + "duplex.yaml", "--set", "sizes=4KiB,4MiB",
                           "--set", "link.generation=4", "--calibration", base + "/cal.yaml", "--out", dir, "--quiet"});
    ASSERT_EQ(r.code, 0) << r.err;
    std::ifstream csv(dir + "/results.csv");
    const auto rows = core::read_results_csv(csv, "results.csv");
    // Pinned rows come with a cudaMallocHost row each; duplex gives the pair and each direction.
    ASSERT_EQ(rows.size(), 2U * 2U * 2U + 2U * 3U);
    for (const auto& row : rows) {
        EXPECT_EQ(row.source, "sim");
        if (row.variant == "setup=mallochost") continue;
        EXPECT_EQ(row.status, "ok");
        EXPECT_GT(row.time_us, 0.0);
        EXPECT_NEAR(row.gbps(), static_cast<double>(row.size_bytes) * row.directions / row.time_us / 1e3, 1e-9);
        EXPECT_NE(row.note.find("Gen4"), std::string::npos);
    }
    std::stringstream cfg;
    cfg << std::ifstream(dir + "/config.json").rdbuf();
    for (const char* key : {"\"generation\": 4", "\"mrrs\"", "\"call_overhead\": \"7us\"", "\"credits_posted_data\""}) {
        EXPECT_NE(cfg.str().find(key), std::string::npos) << key;
    }
    std::stringstream meta;
    meta << std::ifstream(dir + "/meta.json").rdbuf();
    EXPECT_NE(meta.str().find("\"commit\""), std::string::npos);
    EXPECT_TRUE(exists(dir + "/links.csv"));
    EXPECT_NE(r.out.find("duplex"), std::string::npos);  // the summary table
}

// No --calibration: each scenario's numbers come from its platform's committed calibration, and
// every output says which; --calibration none gives the defaults.
// links.csv's busy fraction is over the time its counts cover: the whole program. Over a
// periodic case's frame latency it came out at 453 (45,300 %).
TEST(Cli, LinkBusyFractionsNeverExceedOne) {
    const std::string dir = temp_dir() + "/res";
    const Outcome r = cli({"run", kScenarios + "periodic.yaml", kScenarios + "zero_copy_latency.yaml", "--only",
                           "radar-8ms,zc-chase-host", "--set", "radar-8ms:frame.count=5", "--out", dir, "--quiet"});
    ASSERT_EQ(r.code, 0) << r.err;
    std::ifstream links(dir + "/links.csv");
    std::string line;
    std::getline(links, line);
    const std::string header = line;
    std::size_t busy_col = 0;
    {
        std::stringstream h(header);
        std::string name;
        for (std::size_t i = 0; std::getline(h, name, ','); ++i) if (name == "busy_fraction") busy_col = i;
    }
    ASSERT_GT(busy_col, 0U) << header;
    int rows = 0, busy_rows = 0;
    while (std::getline(links, line)) {
        std::stringstream cells(line);
        std::string cell;
        for (std::size_t i = 0; i <= busy_col; ++i) std::getline(cells, cell, ',');
        const double busy = std::stod(cell);
        EXPECT_LE(busy, 1.0) << line;
        if (busy > 0.0) ++busy_rows;
        ++rows;
    }
    EXPECT_GT(rows, 0);
    EXPECT_GT(busy_rows, 0) << "the frames and hops did move data";
}

// Overlap rows are judged by their speed-up over one stream, not by a rate; setup rows have no
// rate. Worker processes (--jobs 2) hand the rows to the table whole.
TEST(Cli, OverlapRowsCarryTheirSpeedupAndTimeOnlyRowsNoRate) {
    const std::string dir = temp_dir() + "/res";
    const Outcome r = cli({"run", kScenarios + "async_overlap.yaml", kScenarios + "pinned.yaml", "--only",
                           "async-overlap-s2,pinned", "--set", "pinned:sizes=1MiB", "--jobs", "2", "--out", dir, "--quiet"});
    ASSERT_EQ(r.code, 0) << r.err;
    std::ifstream csv(dir + "/results.csv");
    const auto rows = core::read_results_csv(csv, "results.csv");
    const auto serial = std::find_if(rows.begin(), rows.end(), [](const core::ResultRow& x) { return x.variant == "serial"; });
    ASSERT_NE(serial, rows.end());
    int overlapped = 0, setups = 0;
    for (const auto& row : rows) {
        if (row.strategy == "async_overlap" && row.variant.empty()) {
            ++overlapped;
            EXPECT_NEAR(row.speedup, serial->time_us / row.time_us, 1e-4);
            EXPECT_GT(row.speedup, 1.0);
        } else {
            EXPECT_EQ(row.speedup, 0.0) << row.strategy << " " << row.variant;
        }
        if (row.variant.rfind("setup=", 0) == 0) ++setups;
    }
    EXPECT_EQ(overlapped, 1);
    EXPECT_GT(setups, 0);
    // In the file: a setup row's gbps field (the 7th) is empty, a copy's is not.
    std::ifstream text(dir + "/results.csv");
    std::string line;
    int checked = 0;
    while (std::getline(text, line)) {
        std::stringstream fields(line);
        std::string f;
        for (int i = 0; i < 7; ++i) std::getline(fields, f, ',');
        if (line.find(",setup=") != std::string::npos) {
            EXPECT_EQ(f, "") << line;
            ++checked;
        } else if (line.rfind("pinned,pinned,", 0) == 0) {
            EXPECT_NE(f, "") << line;
        }
    }
    EXPECT_EQ(checked, setups);
    const auto overlap = std::find_if(rows.begin(), rows.end(),
                                      [](const core::ResultRow& x) { return x.strategy == "async_overlap" && x.variant.empty(); });
    char shown[64];
    std::snprintf(shown, sizeof shown, "ok, %.2fx one stream", overlap->speedup);
    EXPECT_NE(r.out.find(shown), std::string::npos) << r.out;
}

TEST(Cli, RunIsCalibratedByDefaultAndSaysWithWhat) {
    const std::string base = temp_dir();
    const auto run = [&](const std::string& out, std::vector<std::string> extra) {
        std::vector<std::string> args{"run", kScenarios + "pinned.yaml", kScenarios + "peer.yaml", "--set", "sizes=1MiB",
                                      "--out", base + "/" + out, "--quiet"};
        args.insert(args.end(), extra.begin(), extra.end());
        return cli(args);
    };
    const Outcome cal = run("cal", {});
    ASSERT_EQ(cal.code, 0) << cal.err;
    EXPECT_NE(cal.out.find("calibration: h100-sxm (results/h100-sxm/calibration.yaml, built in), but\n"
                           "  h200x2-nvlink (results/h200x2-nvlink/calibration.yaml, built in) for peer"),
              std::string::npos)
        << cal.out;
    const Outcome none = run("none", {"--calibration", "none"});
    ASSERT_EQ(none.code, 0) << none.err;
    EXPECT_NE(none.out.find("calibration: none (default parameters)"), std::string::npos) << none.out;
    const auto rows = [&](const std::string& out) {
        std::ifstream csv(base + "/" + out + "/results.csv");
        return core::read_results_csv(csv, out);
    };
    const auto calibrated = rows("cal");
    const auto plain = rows("none");
    ASSERT_EQ(calibrated.size(), plain.size());
    std::size_t moved = 0;
    for (std::size_t i = 0; i < calibrated.size(); ++i) {
        EXPECT_EQ(calibrated[i].calibration, calibrated[i].scenario == "peer" ? "h200x2-nvlink" : "h100-sxm");
        EXPECT_EQ(plain[i].calibration, "none");
        if (calibrated[i].time_us != plain[i].time_us) ++moved;
    }
    EXPECT_GT(moved, calibrated.size() / 2) << "the calibration changes the numbers";
    std::stringstream cfg, meta;
    cfg << std::ifstream(base + "/cal/config.json").rdbuf();
    meta << std::ifstream(base + "/cal/meta.json").rdbuf();
    EXPECT_NE(cfg.str().find("\"calibration\": \"h200x2-nvlink\""), std::string::npos);
    EXPECT_NE(meta.str().find("\"calibration\": \"h100-sxm (results/h100-sxm/calibration.yaml, built in): pinned, "),
              std::string::npos)
        << meta.str();
}

TEST(Cli, PlatformNodeSettingsShowInTopologyConfigAndNotes) {
    const Outcome topo = cli({"topo", "show", "a100-gen4"});
    ASSERT_EQ(topo.code, 0) << topo.err;
    EXPECT_NE(topo.out.find("rc0      root complex: read completions up to 64B"), std::string::npos) << topo.out;
    // The era host's own CPU and DRAM, which its scenarios run with over the calibration.
    EXPECT_NE(topo.out.find("host: cpu.memcpy_bandwidth 10GB/s, cpu.memcpy_bandwidth_cached 10.8GB/s"), std::string::npos)
        << topo.out;
    const Outcome lent = cli({"topo", "show", "h100-sxm"});
    ASSERT_EQ(lent.code, 0) << lent.err;
    EXPECT_EQ(lent.out.find("host: "), std::string::npos) << lent.out;

    const std::string dir = temp_dir() + "/res";
    const Outcome r = cli({"run", kScenarios + "whatif/host-eras.yaml", "--set", "sizes=4MiB", "--out", dir, "--quiet"});
    ASSERT_EQ(r.code, 0) << r.err;
    std::ifstream csv(dir + "/results.csv");
    const auto rows = core::read_results_csv(csv, "results.csv");
    ASSERT_FALSE(rows.empty());
    for (const auto& row : rows) {
        // The note names each host's own link, not the scenario's (default Gen5) link section.
        const auto is = [&](const char* host) { return row.scenario.rfind(host, 0) == 0; };  // its -mps128 and -pageable too
        const char* gen = is("v100-gen3") ? "Gen3 x16" : is("a100-gen4") ? "Gen4 x16" : "Gen5 x16";
        EXPECT_EQ(row.note.rfind(gen, 0), 0U) << row.scenario << ": " << row.note;
    }
    std::stringstream cfg;
    cfg << std::ifstream(dir + "/config.json").rdbuf();
    EXPECT_NE(cfg.str().find("\"name\": \"a100-gen4\""), std::string::npos);
    EXPECT_NE(cfg.str().find("\"platform_effective\": {"), std::string::npos);
    EXPECT_NE(cfg.str().find("\"completion_size\": \"64B\""), std::string::npos);
}

std::string slurp(const std::string& path) {
    std::stringstream ss;
    ss << std::ifstream(path).rdbuf();
    return ss.str();
}

std::size_t lines(const std::string& text) { return static_cast<std::size_t>(std::count(text.begin(), text.end(), '\n')); }

// A bad output path is refused before the simulation: one line, exit 2, no progress line (so no
// case was simulated), and nothing written anywhere.
TEST(Cli, OutputThatCannotBeWrittenIsRefusedBeforeSimulating) {
    const std::string dir = temp_dir();
    const std::string file = write_file(dir, "afile", "x");
    const std::string scenario = kScenarios + "pinned.yaml";
    ASSERT_EQ(::mkdir((dir + "/tdir").c_str(), 0755), 0);
    // A first run, to be left whole by the failing ones.
    const std::string out = dir + "/out";
    ASSERT_EQ(cli({"run", scenario, "--set", "sizes=4KiB", "--out", out, "--quiet"}).code, 0);
    const std::string results = slurp(out + "/results.csv");
    ASSERT_EQ(::unlink((out + "/links.csv").c_str()), 0);
    ASSERT_EQ(::mkdir((out + "/links.csv").c_str(), 0755), 0);
    struct Case {
        std::vector<std::string> args;
        std::string expect;
    };
    const Case cases[] = {
        {{"run", scenario, "--out", file}, "afile: is a file, not a directory"},
        {{"run", scenario, "--out", file + "/sub"}, "afile/sub: cannot create it"},
        {{"run", scenario, "--out", out}, "out/links.csv: is a directory"},
        {{"run", scenario, "--out", dir + "/new", "--trace", dir + "/tdir"}, "tdir: is a directory"},
        {{"run", scenario, "--out", dir + "/new", "--trace", dir + "/new/results.csv"}, "results.csv: is named for two outputs"},
        {{"run", scenario, "--out", dir + "/new", "--trace", file + "/t.json"}, "afile/t.json: cannot write it"},
        {{"compare", "--measured", std::string(DMASIM_SOURCE_DIR) + "/tests/app/fixtures/compare/measured.csv",
          "--scenarios", std::string(DMASIM_SOURCE_DIR) + "/tests/app/fixtures/compare/scenarios", "--out", file},
         "afile: is a file"},
        {{"calibrate", "--measured", std::string(DMASIM_SOURCE_DIR) + "/tests/app/fixtures/compare/measured.csv",
          "--out", dir + "/tdir"},
         "tdir: is a directory"},
        {{"spread", "--measured", std::string(DMASIM_SOURCE_DIR) + "/tests/app/fixtures/compare/measured.csv", "--out",
          file},
         "afile: is a file"},
        {{"plan", scenario, "--out", dir + "/tdir"}, "tdir: is a directory"},
    };
    for (const auto& c : cases) {
        const Outcome r = cli(c.args);
        EXPECT_EQ(r.code, 2) << c.expect << "\n" << r.err;
        EXPECT_NE(r.err.find(c.expect), std::string::npos) << r.err;
        EXPECT_EQ(lines(r.err), 1U) << r.err;
    }
    EXPECT_EQ(slurp(out + "/results.csv"), results);
    EXPECT_EQ(slurp(file), "x");
    EXPECT_FALSE(exists(dir + "/new"));
}

// The results and the timeline are one output: both or neither.
TEST(Cli, TimelineIsWrittenWithTheResults) {
    const std::string dir = temp_dir();
    const Outcome r = cli({"run", kScenarios + "pinned.yaml", "--set", "sizes=64KiB", "--set", "direction=h2d", "--out",
                           dir + "/out", "--trace", dir + "/tl/t.json", "--trace-resolution", "1ns", "--quiet"});
    ASSERT_EQ(r.code, 0) << r.err;
    EXPECT_NE(slurp(dir + "/tl/t.json").find("\"traceEvents\""), std::string::npos);
    EXPECT_TRUE(exists(dir + "/out/results.csv"));
    EXPECT_EQ(r.err, "");  // a few thousand events: no truncation warning
}

TEST(Cli, TraceResolutionIsBoundedWithOrWithoutATrace) {
    const std::string dir = temp_dir();
    for (const char* res : {"1ps", "999ps", "-1us", "2s", "10parsecs"}) {
        for (const bool trace : {false, true}) {
            std::vector<std::string> args{"run", kScenarios + "pinned.yaml", "--out", dir + "/out", "--trace-resolution", res};
            if (trace) args.insert(args.end(), {"--trace", dir + "/t.json"});
            const Outcome r = cli(args);
            EXPECT_EQ(r.code, 2) << res;
            EXPECT_NE(r.err.find("--trace-resolution: key '" + std::string(res) + "'"), std::string::npos) << r.err;
            EXPECT_EQ(lines(r.err), 1U) << r.err;
        }
    }
    EXPECT_FALSE(exists(dir + "/out"));
    EXPECT_FALSE(exists(dir + "/t.json"));
}

// The timeline stops recording link counters at a bound (the events of a 1 GiB copy at 1 ns
// windows would take gigabytes), says so, and keeps every span.
TEST(Cli, TimelineCountersStopAtABound) {
    sim::Tracer tracer(1000.0);
    const int track = tracer.track("cpu", "thread");
    std::size_t before = 0;
    double t = 0;
    for (int i = 0; i < 50'000'000 && (i == 0 || tracer.events() > before); ++i) {
        before = tracer.events();
        tracer.counter("link", "busy", t += 1000.0, 50.0);
    }
    const std::size_t bound = tracer.events();
    EXPECT_LT(bound, 10'000'000U) << "counters never stopped";
    tracer.span(track, "late call", t, t + 1000.0);
    EXPECT_EQ(tracer.events(), bound + 1) << "a span after the bound is still recorded";
    const std::string json = tracer.json();
    EXPECT_LT(json.find("timeline truncated"), 65536U);  // where dmasim run looks for it
    EXPECT_NE(json.find("\"late call\""), std::string::npos);
}

TEST(Cli, NumericFlagsAreRangeChecked) {
    const std::string dir = temp_dir();
    const std::string measured = std::string(DMASIM_SOURCE_DIR) + "/tests/app/fixtures/compare/measured.csv";
    const std::vector<std::vector<std::string>> cases = {
        {"--max-evaluations", "-1"}, {"--max-evaluations", "0"}, {"--max-evaluations", "1e3x"},
        {"--max-evaluations", "100001"}, {"--folds", "1"}, {"--folds", "-3"}, {"--folds", "101"},
        {"--folds", "two"}, {"--max-size", "-1MiB"}, {"--max-size", "0B"}, {"--max-size", "65GiB"},
    };
    for (const auto& flag : cases) {
        std::vector<std::string> args{"calibrate", "--measured", measured, "--out", dir + "/cal.yaml"};
        args.insert(args.end(), flag.begin(), flag.end());
        const Outcome r = cli(args);
        EXPECT_EQ(r.code, 2) << flag[0] << " " << flag[1];
        EXPECT_EQ(r.err.rfind("dmasim: error: " + flag[0] + ":", 0), 0U) << r.err;
        EXPECT_EQ(lines(r.err), 1U) << r.err;
    }
    // More folds than usable rows (the fixture has four) cannot each hold a row out.
    const Outcome folds = cli({"calibrate", "--measured", measured, "--scenarios",
                               std::string(DMASIM_SOURCE_DIR) + "/tests/app/fixtures/compare/scenarios", "--out",
                               dir + "/cal.yaml", "--free", "runtime.call_overhead", "--folds", "5", "--quiet"});
    EXPECT_EQ(folds.code, 2);
    EXPECT_NE(folds.err.find("--folds: key '5': more folds than the 4 usable rows"), std::string::npos) << folds.err;
    EXPECT_FALSE(exists(dir + "/cal.yaml"));
    // A usage error is one line too.
    const Outcome usage = cli({"run"});
    EXPECT_EQ(usage.code, 2);
    EXPECT_EQ(lines(usage.err), 1U) << usage.err;
}

// No command writes into results/ (committed files) unless told to by name, and no example in
// the README or docs tells it to: a reader who runs them as written must not rewrite the
// committed results.
TEST(Docs, NoDefaultAndNoExampleOverwritesCommittedFiles) {
    for (const char* sub : {"run", "compare", "spread"}) {
        const Outcome help = cli({sub, "--help"});
        ASSERT_EQ(help.code, 0);
        const auto at = help.out.find("--out");
        ASSERT_NE(at, std::string::npos) << sub;
        const std::string line = help.out.substr(at, help.out.find('\n', at) - at);
        EXPECT_NE(line.find("=out/"), std::string::npos) << sub << ": " << line;
    }
    std::vector<std::string> docs{"README.md"};
    for (const char* d : {"calibration", "figures", "harness", "model", "plan", "platforms", "results", "scenarios", "timeline"}) {
        docs.push_back("docs/" + std::string(d) + ".md");
    }
    int examples = 0;
    for (const auto& doc : docs) {
        std::istringstream text(slurp(std::string(DMASIM_SOURCE_DIR) + "/" + doc));
        ASSERT_TRUE(text.rdbuf()->in_avail() > 0) << doc;
        bool fenced = false;
        int lineno = 0;
        for (std::string line; std::getline(text, line);) {
            ++lineno;
            if (line.rfind("```", 0) == 0) fenced = !fenced;
            // Commands in code blocks, and `dmasim ...` or `./scripts/...` in running text.
            std::vector<std::string> commands;
            if (fenced) commands.push_back(line);
            for (std::size_t a = line.find('`'); a != std::string::npos; a = line.find('`', a + 1)) {
                const std::size_t b = line.find('`', a + 1);
                if (b == std::string::npos) break;
                commands.push_back(line.substr(a + 1, b - a - 1));
                a = b;
            }
            for (std::string c : commands) {
                c = c.substr(0, c.find('#'));
                if (c.find("dmasim ") == std::string::npos && c.find("run-main.sh") == std::string::npos) continue;
                ++examples;
                const std::string where = doc + ":" + std::to_string(lineno) + ": " + c;
                for (const char* flag : {"-o ", "--out ", "--trace ", "--out=", "--trace="}) {
                    const auto f = c.find(flag);
                    if (f == std::string::npos) continue;
                    const std::string path = c.substr(f + std::strlen(flag));
                    EXPECT_NE(path.rfind("results/", 0), 0U) << where;
                    EXPECT_NE(path.rfind("docs/", 0), 0U) << where;
                }
                EXPECT_EQ(c.find("--regenerate"), std::string::npos) << where;
            }
        }
    }
    EXPECT_GT(examples, 20);
    // The quick start's script writes out/ unless asked for the committed files.
    const std::string script = slurp(std::string(DMASIM_SOURCE_DIR) + "/scripts/run-main.sh");
    EXPECT_NE(script.find("out=${OUT:-out/sim}"), std::string::npos);
    EXPECT_NE(script.find("--regenerate"), std::string::npos);
}

}  // namespace
}  // namespace dmasim::app

namespace dmasim::app {
namespace {

TEST(Docs, ScenarioReferenceListsEveryParameter) {
    std::stringstream doc;
    doc << std::ifstream(std::string(DMASIM_SOURCE_DIR) + "/docs/scenarios.md").rdbuf();
    ASSERT_FALSE(doc.str().empty());
    const Outcome md = cli({"params", "--markdown"});
    std::istringstream lines(md.out);
    std::string line;
    int rows = 0;
    while (std::getline(lines, line)) {
        if (line.rfind("| `", 0) != 0) continue;
        ++rows;
        EXPECT_NE(doc.str().find(line), std::string::npos)
            << "docs/scenarios.md is stale (run scripts/update-docs.sh): " << line;
    }
    EXPECT_GT(rows, 30);
}

}  // namespace
}  // namespace dmasim::app
