// --jobs, --shard and merge, calibrate in parallel, progress (docs/scaling.md): the files do not
// depend on how the work was spread, and bad values are refused the way every bad input is.
// The runs use the real binary: with one job, dmasim simulates its last platform in-process,
// and SystemC elaborates once per process.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <numeric>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <sys/wait.h>
#include <unistd.h>

#include "cli_helpers.h"
#include "dmasim/app/parallel.h"
#include "dmasim/config/scenario.h"
#include "dmasim/core/results.h"

namespace dmasim::app {
namespace {

namespace fs = std::filesystem;
using testing::cli;
using testing::Outcome;

std::string slurp(const std::string& path) {
    std::stringstream ss;
    ss << std::ifstream(path).rdbuf();
    return ss.str();
}

std::size_t lines(const std::string& s) { return static_cast<std::size_t>(std::count(s.begin(), s.end(), '\n')); }

std::string temp_dir() {
    char tmpl[] = "/tmp/dmasim-parallel-test-XXXXXX";
    if (::mkdtemp(tmpl) == nullptr) return {};
    return tmpl;
}

// Three platforms, flows, several strategies and sizes: enough cases that two or three workers
// each take some of every platform's.
std::vector<std::string> write_sweep(const std::string& dir) {
    std::ofstream(dir + "/a.yaml") << "name: a\nstrategy: [pinned, pageable, registered]\ndirection: [h2d, d2h, both]\n"
                                      "sizes: [4KiB, 64KiB, 1MiB]\n";
    std::ofstream(dir + "/b.yaml") << "name: b\nplatform: 2gpu-rootports\nstrategy: [pinned, peer]\ndirection: [h2d]\n"
                                      "sizes: [4KiB, 256KiB]\n---\nname: b2\nplatform: 2gpu-rootports\n"
                                      "strategy: zero_copy\ndirection: [h2d, d2h]\nsizes: [64KiB]\n";
    std::ofstream(dir + "/c.yaml") << "name: c\nplatform: workstation-2gpu-switch\nflows:\n"
                                      "  - { name: g0, strategy: pinned, device: 0, direction: h2d, size: 1MiB }\n"
                                      "  - { name: g1, strategy: pinned, device: 1, direction: h2d, size: 1MiB }\n";
    return {dir + "/a.yaml", dir + "/b.yaml", dir + "/c.yaml"};
}

// Runs the binary; returns its exit status, stdout in `out`.
int run_binary(const std::vector<std::string>& args, std::string* out = nullptr, const std::string& dir = "/tmp") {
    static int n = 0;
    const std::string capture = dir + "/stdout-" + std::to_string(::getpid()) + "-" + std::to_string(n++) + ".txt";
    std::string cmd = DMASIM_BINARY;
    for (const auto& a : args) cmd += " '" + a + "'";
    cmd += " > " + capture + " 2>/dev/null";
    const int status = std::system(cmd.c_str());
    if (out) *out = slurp(capture);
    fs::remove(capture);
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

std::vector<std::string> with(std::vector<std::string> a, const std::vector<std::string>& b) {
    a.insert(a.end(), b.begin(), b.end());
    return a;
}

// stdout without its last line (which names the output folder).
std::string but_last_line(const std::string& s) {
    const auto end = s.find_last_of('\n', s.size() >= 2 ? s.size() - 2 : 0);
    return s.substr(0, end == std::string::npos ? 0 : end);
}

TEST(Jobs, FilesAndOutputAreTheSameWhateverTheNumberOfWorkers) {
    const std::string dir = temp_dir();
    const auto files = write_sweep(dir);
    std::string one;
    ASSERT_EQ(run_binary(with(with({"run"}, files), {"--jobs", "1", "--quiet", "--explain", "--out", dir + "/j1"}), &one, dir), 0);
    const std::string results = slurp(dir + "/j1/results.csv");
    // The sweep really is several cases of several platforms: 27 + 4 + 2 cases and the flows.
    EXPECT_GT(lines(results), 30U);
    EXPECT_NE(results.find("\nb2,zero_copy,"), std::string::npos);
    EXPECT_NE(results.find("\nc,pinned,h2d,1,1048576,"), std::string::npos);
    for (const char* jobs : {"2", "3", "5"}) {
        const std::string out = dir + "/j" + jobs;
        std::string text;
        ASSERT_EQ(run_binary(with(with({"run"}, files), {"--jobs", jobs, "--quiet", "--explain", "--out", out}), &text, dir), 0)
            << jobs;
        EXPECT_EQ(slurp(out + "/results.csv"), results) << "--jobs " << jobs;
        EXPECT_EQ(slurp(out + "/links.csv"), slurp(dir + "/j1/links.csv")) << "--jobs " << jobs;
        EXPECT_EQ(slurp(out + "/config.json"), slurp(dir + "/j1/config.json")) << "--jobs " << jobs;
        // The table and --explain come out in the same order too.
        EXPECT_EQ(but_last_line(text), but_last_line(one)) << "--jobs " << jobs;
        // How it ran is in meta.json, not in the files compared above.
        EXPECT_NE(slurp(out + "/meta.json").find("\"jobs\": " + std::string(jobs)), std::string::npos) << slurp(out + "/meta.json");
    }
    fs::remove_all(dir);
}

TEST(Jobs, BadValuesAreRefusedInOneLineBeforeAnythingRuns) {
    const std::string dir = temp_dir();
    const std::string scenario = std::string(DMASIM_SOURCE_DIR) + "/scenarios/pinned.yaml";
    const std::vector<std::vector<std::string>> cases = {
        {"--jobs", "0"}, {"--jobs", "-1"}, {"--jobs", "x"}, {"--jobs", "257"}, {"--jobs", "1.5"},
        {"--shard", "3/2"}, {"--shard", "2/2"}, {"--shard", "x"}, {"--shard", "1/0"}, {"--shard", "-1/2"},
        {"--shard", "1/2/3"}, {"--shard", "/2"}, {"--shard", "1/"}, {"--shard", "0/100001"},
    };
    for (const auto& flag : cases) {
        const Outcome r = cli({"run", scenario, "--out", dir + "/out", flag[0], flag[1]});
        EXPECT_EQ(r.code, 2) << flag[0] << " " << flag[1];
        EXPECT_EQ(r.err.rfind("dmasim: error: " + flag[0] + ":", 0), 0U) << flag[0] << " " << flag[1] << ": " << r.err;
        EXPECT_EQ(lines(r.err), 1U) << r.err;
        EXPECT_FALSE(fs::exists(dir + "/out")) << flag[0] << " " << flag[1];
    }
    for (const char* sub : {"calibrate", "compare"}) {
        std::vector<std::string> args{sub, "--measured", dir + "/none.csv", "--jobs", "0"};
        if (std::string(sub) == "calibrate") args.insert(args.end(), {"--out", dir + "/cal.yaml"});
        const Outcome r = cli(args);
        EXPECT_EQ(r.code, 2) << sub;
        EXPECT_EQ(r.err.rfind("dmasim: error: --jobs:", 0), 0U) << r.err;
        EXPECT_EQ(lines(r.err), 1U) << r.err;
    }
    fs::remove_all(dir);
}

TEST(Shards, MergedShardsAreTheFilesOfOneRun) {
    const std::string dir = temp_dir();
    const auto files = write_sweep(dir);
    ASSERT_EQ(run_binary(with(with({"run"}, files), {"--jobs", "1", "--quiet", "--out", dir + "/whole"}), nullptr, dir), 0);
    std::vector<std::string> shards;
    for (int i = 0; i < 3; ++i) {
        const std::string out = dir + "/shard" + std::to_string(i);
        // The shards run with different numbers of workers: that changes nothing either.
        ASSERT_EQ(run_binary(with(with({"run"}, files), {"--shard", std::to_string(i) + "/3", "--jobs", std::to_string(i + 1),
                                                         "--quiet", "--out", out}),
                             nullptr, dir),
                  0);
        shards.push_back(out);
        // A shard holds its own cases only: fewer rows than the whole.
        EXPECT_LT(lines(slurp(out + "/results.csv")), lines(slurp(dir + "/whole/results.csv")));
    }
    // Given in any order.
    const Outcome m = cli({"merge", shards[2], shards[0], shards[1], "--out", dir + "/merged"});
    ASSERT_EQ(m.code, 0) << m.err;
    for (const char* f : {"results.csv", "links.csv", "config.json"}) {
        EXPECT_EQ(slurp(dir + "/merged/" + f), slurp(dir + "/whole/" + f)) << f;
    }
    EXPECT_TRUE(fs::exists(dir + "/merged/meta.json"));

    // A shard of another configuration, a missing shard, a shard given twice, a folder that is
    // not a shard: refused in one line, nothing written.
    const std::string other = dir + "/other";
    ASSERT_EQ(run_binary(with(with({"run"}, files), {"--shard", "1/3", "--set", "runtime.call_overhead=3us", "--quiet", "--out", other}),
                         nullptr, dir),
              0);
    const std::vector<std::pair<std::vector<std::string>, std::string>> refusals = {
        {{shards[0], other, shards[2]}, "key 'fingerprint': shard 1/3 is not of the same run as shard 0/3"},
        {{shards[0], shards[2]}, "key 'shard': shards missing: 1/3"},
        {{shards[0], shards[1], shards[1], shards[2]}, "key 'shard': shard 1/3 is given twice"},
        {{shards[0], dir + "/whole"}, "not a shard of dmasim run --shard"},
    };
    for (const auto& [dirs, expect] : refusals) {
        const Outcome r = cli(with(with({"merge"}, dirs), {"--out", dir + "/refused"}));
        EXPECT_EQ(r.code, 2) << expect;
        EXPECT_NE(r.err.find(expect), std::string::npos) << r.err;
        EXPECT_EQ(lines(r.err), 1U) << r.err;
        EXPECT_FALSE(fs::exists(dir + "/refused")) << expect;
    }
    // A shard whose results were changed after the run.
    std::ofstream(shards[1] + "/results.csv", std::ios::app) << "x\n";
    const Outcome changed = cli({"merge", shards[0], shards[1], shards[2], "--out", dir + "/refused"});
    EXPECT_EQ(changed.code, 2);
    EXPECT_NE(changed.err.find("a changed or partial file"), std::string::npos) << changed.err;
    fs::remove_all(dir);
}

TEST(Shards, CasesGoRoundRobin) {
    EXPECT_EQ(shard_cases(7, 1, 3), (std::vector<std::size_t>{1, 4}));
    EXPECT_EQ(shard_cases(2, 2, 3), std::vector<std::size_t>{});
    std::vector<std::size_t> all;
    for (std::size_t i = 0; i < 4; ++i) {
        for (const auto c : shard_cases(10, i, 4)) all.push_back(c);
    }
    std::sort(all.begin(), all.end());
    std::vector<std::size_t> expect(10);
    std::iota(expect.begin(), expect.end(), std::size_t{0});
    EXPECT_EQ(all, expect);  // every case in exactly one shard
}

// The fits of a calibration run side by side, or a step's cases are split among workers: the
// file is the same as one process's (but for the command line it records).
TEST(CalibrateJobs, TheFitDoesNotDependOnTheNumberOfProcesses) {
    const std::string dir = temp_dir();
    const std::string fixtures = std::string(DMASIM_SOURCE_DIR) + "/tests/app/fixtures/compare";
    std::ifstream in(fixtures + "/measured.csv");
    const auto base = core::read_results_csv(in, "measured.csv");
    const double factors[] = {1.0, 0.97, 1.05};
    for (int l = 0; l < 3; ++l) {
        auto rows = base;
        for (auto& r : rows) r.time_us *= factors[l];
        fs::create_directories(dir + "/measured/l" + std::to_string(l));
        std::ofstream out(dir + "/measured/l" + std::to_string(l) + "/measured.csv");
        core::write_results_csv(out, rows);
    }
    auto calibrate = [&](const std::string& jobs) {
        const std::string file = dir + "/cal-" + jobs + ".yaml";
        const Outcome r = cli({"calibrate", "--measured", dir + "/measured", "--scenarios", fixtures + "/scenarios", "--out",
                               file, "--free", "runtime.call_overhead", "--free", "dma.launch_latency",
                               "--max-evaluations", "8", "--folds", "2", "--jobs", jobs, "--quiet"});
        EXPECT_EQ(r.code, 0) << r.err;
        // The second line records the command.
        return std::regex_replace(slurp(file), std::regex("\n# [^\n]*\n"), "\n", std::regex_constants::format_first_only);
    };
    const std::string serial = calibrate("1");
    ASSERT_NE(serial.find("leave_one_lease_out:\n    leases: [\"l0\", \"l1\", \"l2\"]"), std::string::npos) << serial;
    ASSERT_NE(serial.find("kfold_held_out_median_abs_error_pct: ["), std::string::npos) << serial;
    EXPECT_EQ(calibrate("2"), serial);
    EXPECT_EQ(calibrate("4"), serial);
    fs::remove_all(dir);
}

// Workers kept from step to step (calibrate's): at every step, with that step's values, the
// outputs run_cases gives; a worker that kept an earlier step's scenarios would give those.
TEST(StepWorkers, EachStepGivesWhatRunCasesGivesWithThatStepsValues) {
    const std::string dir = temp_dir();
    std::vector<config::Scenario> loaded;
    for (const auto& f : write_sweep(dir)) {
        for (auto& sc : config::load_scenarios(f)) loaded.push_back(std::move(sc));
    }
    // A step is a value of the CPU's per-call cost, which every copy's time contains.
    struct Steps {
        const std::vector<config::Scenario>* loaded;
        std::vector<config::Scenario> scenarios;
        Workload workload;
        const Workload& build(const std::string& step) {
            scenarios = *loaded;
            for (auto& sc : scenarios) config::apply_parameter(sc, config::SetOverride{"runtime.call_overhead", step, ""});
            workload = make_workload(scenarios);
            return workload;
        }
    };
    Steps kept{&loaded, {}, {}};
    Steps fresh{&loaded, {}, {}};
    StepWorkers workers([&kept](const std::string& step) -> const Workload& { return kept.build(step); }, 4);
    std::vector<std::string> per_step;
    for (const std::string step : {"1us", "7us", "1us", "3us"}) {
        const Workload& w = fresh.build(step);
        std::vector<std::size_t> all(w.cases.size());
        std::iota(all.begin(), all.end(), std::size_t{0});
        std::reverse(all.begin(), all.end());  // any order: outputs come back in this one
        RunSettings rs;
        rs.jobs = 2;
        const auto expected = run_cases(w, all, rs);
        const auto got = workers.run(step, all);
        ASSERT_EQ(got.size(), expected.size());
        std::string text;
        for (std::size_t i = 0; i < got.size(); ++i) {
            EXPECT_EQ(got[i].rows_csv, expected[i].rows_csv) << step << " case " << all[i];
            EXPECT_EQ(got[i].links_csv, expected[i].links_csv) << step << " case " << all[i];
            text += got[i].rows_csv;
        }
        per_step.push_back(text);
    }
    EXPECT_NE(per_step[0], per_step[1]);  // the values took effect
    EXPECT_EQ(per_step[0], per_step[2]);
    fs::remove_all(dir);
}

TEST(ProgressLines, PlainLinesCarryCountsAndAnEtaAndTheBarIsRedrawnInPlace) {
    std::ostringstream plain;
    Progress p(plain, true, false, "simulating", std::chrono::seconds(0));
    p.start(4, 4.0);
    p.done(1.0, "x pinned h2d 4 KiB");
    p.done(1.0, "y");
    p.finish();
    const std::string text = plain.str();
    EXPECT_NE(text.find("dmasim: [1/4] simulating 25% after 0:00, ETA 0:00 (last: x pinned h2d 4 KiB)\n"), std::string::npos) << text;
    EXPECT_NE(text.find("dmasim: [2/4] simulating 50%"), std::string::npos) << text;
    EXPECT_EQ(text.find('\r'), std::string::npos);

    std::ostringstream bar;
    Progress b(bar, true, true, "simulating", std::chrono::seconds(0));
    b.start(2, 2.0);
    b.done(1.0, "x");
    b.done(1.0, "y");
    b.finish();
    const std::string drawn = bar.str();
    EXPECT_EQ(drawn.rfind("\r", 0), 0U) << drawn;
    EXPECT_NE(drawn.find("[##############################] 100% 2/2 cases"), std::string::npos) << drawn;
    EXPECT_EQ(drawn.back(), '\n');  // the bar's line is closed at the end

    std::ostringstream quiet;
    Progress q(quiet, false, true, "simulating", std::chrono::seconds(0));
    q.start(1, 1.0);
    q.done(1.0, "x");
    q.finish();
    EXPECT_EQ(quiet.str(), "");

    // A short run prints nothing in plain mode.
    std::ostringstream shortrun;
    Progress s(shortrun, true, false, "simulating", std::chrono::hours(1));
    s.start(1, 1.0);
    s.done(1.0, "x");
    s.finish();
    EXPECT_EQ(shortrun.str(), "");
}

}  // namespace
}  // namespace dmasim::app
