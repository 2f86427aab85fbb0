// The dmasim command line, in-process: exit codes, error messages, and files written.
#include "cli_helpers.h"
#include "dmasim/app/commands.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <sys/stat.h>
#include <unistd.h>

#include "dmasim/core/plan.h"
#include "dmasim/core/results.h"

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
    ASSERT_EQ(rows.size(), 2U * 2U * 2U + 2U);  // pinned rows come with a cudaMallocHost row each
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

TEST(Cli, PlatformNodeSettingsShowInTopologyConfigAndNotes) {
    const Outcome topo = cli({"topo", "show", "a100-gen4"});
    ASSERT_EQ(topo.code, 0) << topo.err;
    EXPECT_NE(topo.out.find("rc0      root complex: read completions up to 64B"), std::string::npos) << topo.out;

    const std::string dir = temp_dir() + "/res";
    const Outcome r = cli({"run", kScenarios + "whatif/host-eras.yaml", "--set", "sizes=4MiB", "--out", dir, "--quiet"});
    ASSERT_EQ(r.code, 0) << r.err;
    std::ifstream csv(dir + "/results.csv");
    const auto rows = core::read_results_csv(csv, "results.csv");
    ASSERT_FALSE(rows.empty());
    for (const auto& row : rows) {
        // The note names each host's own link, not the scenario's (default Gen5) link section.
        const char* gen = row.scenario == "v100-gen3-host" ? "Gen3 x16" : row.scenario == "a100-gen4-host" ? "Gen4 x16" : "Gen5 x16";
        EXPECT_EQ(row.note.rfind(gen, 0), 0U) << row.scenario << ": " << row.note;
    }
    std::stringstream cfg;
    cfg << std::ifstream(dir + "/config.json").rdbuf();
    EXPECT_NE(cfg.str().find("\"name\": \"a100-gen4\""), std::string::npos);
    EXPECT_NE(cfg.str().find("\"platform_effective\": {"), std::string::npos);
    EXPECT_NE(cfg.str().find("\"completion_size\": \"64B\""), std::string::npos);
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
