// dmasim calibrate recovers known parameters from data the model itself generated; and, since
// this suite runs the real binary, a command's processes end with it.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>
#include <tuple>
#include <cerrno>
#include <csignal>
#include <fcntl.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli_helpers.h"
#include "dmasim/core/results.h"
#include "dmasim/core/units.h"

namespace dmasim::app {
namespace {

using testing::cli;
using testing::Outcome;

const std::string kScenarios = std::string(DMASIM_SOURCE_DIR) + "/tests/app/fixtures/calibrate/scenarios";

std::string slurp(const std::string& path) {
    std::stringstream ss;
    ss << std::ifstream(path).rdbuf();
    return ss.str();
}

double fitted_ps(const std::string& yaml, const std::string& key) {
    const std::regex re("\n  " + std::regex_replace(key, std::regex("\\."), "\\.") + ": ([0-9]+)ps");
    std::smatch m;
    if (!std::regex_search(yaml, m, re)) return -1;
    return std::stod(m[1]);
}

TEST(Calibrate, RecoversKnownParametersFromModelGeneratedData) {
    char tmpl[] = "/tmp/dmasim-calibrate-test-XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    const std::string dir = tmpl;
    // The "truth": four parameters away from their defaults (calibrate fits from the defaults). The model is run as a separate
    // process (SystemC elaborates once per process, and calibration forks its own).
    const std::string run = std::string(DMASIM_BINARY) + " run " + kScenarios +
                            "/synthetic.yaml --quiet --calibration none --out " + dir + "/truth --set runtime.call_overhead=4us" +
                            " --set cpu.register_per_page=180ns --set cpu.alloc_pinned_per_page=300ns" +
                            " --set cpu.alloc_pinned_cold_per_page=600ns > /dev/null";
    ASSERT_EQ(std::system(run.c_str()), 0);
    // Present the model's rows as measurements.
    std::string csv = slurp(dir + "/truth/results.csv");
    csv = std::regex_replace(csv, std::regex(",sim,"), ",hw,");
    std::ofstream(dir + "/measured.csv") << csv;

    const Outcome r = cli({"calibrate", "--measured", dir + "/measured.csv", "--scenarios", kScenarios, "--out",
                           dir + "/calibration.yaml", "--free", "runtime.call_overhead", "--free",
                           "cpu.register_per_page", "--free", "cpu.alloc_pinned_per_page", "--free",
                           "cpu.alloc_pinned_cold_per_page", "--max-evaluations", "300", "--quiet"});
    ASSERT_EQ(r.code, 0) << r.err;
    const std::string yaml = slurp(dir + "/calibration.yaml");
    EXPECT_NEAR(fitted_ps(yaml, "runtime.call_overhead") / 4e6, 1.0, 0.02) << yaml.substr(0, 600);
    EXPECT_NEAR(fitted_ps(yaml, "cpu.register_per_page") / 180e3, 1.0, 0.02);
    EXPECT_NEAR(fitted_ps(yaml, "cpu.alloc_pinned_per_page") / 300e3, 1.0, 0.02);
    // Only allocations past the pages' cache show their cost out of it, and those are larger than
    // --max-size (4 MiB): rows of a cost measured alone are fitted at every size.
    EXPECT_NEAR(fitted_ps(yaml, "cpu.alloc_pinned_cold_per_page") / 600e3, 1.0, 0.02);
    // Past --max-size an allocation alone is fitted, a copy (and the allocation beside it) is not.
    EXPECT_NE(yaml.find("{ row: \"syn-alloc|pinned|h2d|268435456|setup=mallochost\""), std::string::npos);
    for (const char* row : {"syn-pinned|pinned|h2d|8388608|", "syn-pinned|pinned|h2d|8388608|setup=mallochost"}) {
        EXPECT_EQ(yaml.find(std::string("{ row: \"") + row + "\""), std::string::npos) << row;
    }
    // The file records what it was fitted on and how well it does on rows it did not see.
    for (const char* key : {"bounds:", "fnv1a64:", "held_out:", "residuals:", "set: held_out"}) {
        EXPECT_NE(yaml.find(key), std::string::npos) << key;
    }
    // One CSV is one lease: nothing to leave out.
    EXPECT_NE(yaml.find("leave_one_lease_out: { skipped: \"needs at least two leases\" }"), std::string::npos);
    // compare reads the calibration back.
    const Outcome c = cli({"compare", "--measured", dir + "/measured.csv", "--scenarios", kScenarios, "--calibration",
                           dir + "/calibration.yaml", "--out", dir + "/compare"});
    EXPECT_EQ(c.code, 0) << c.err;
}

// The compare fixture's measured rows with every time scaled by `f`, written to `file`: a lease
// (or a lease's run) of a tiny synthetic machine.
void write_scaled_fixture(const std::filesystem::path& file, double f) {
    std::ifstream in(std::string(DMASIM_SOURCE_DIR) + "/tests/app/fixtures/compare/measured.csv");
    auto rows = core::read_results_csv(in, "measured.csv");
    for (auto& r : rows) r.time_us *= f;
    std::filesystem::create_directories(file.parent_path());
    std::ofstream out(file);
    core::write_results_csv(out, rows);
}

// Four leases of a tiny synthetic set (4 rows, one free parameter, few steps: seconds).
// Leave-one-lease-out fits once per lease, to the other three, and reports each lease's error.
TEST(Calibrate, LeaveOneLeaseOutReportsEveryLease) {
    namespace fs = std::filesystem;
    char tmpl[] = "/tmp/dmasim-calibrate-lolo-XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    const fs::path dir = tmpl;
    const std::string fixtures = std::string(DMASIM_SOURCE_DIR) + "/tests/app/fixtures/compare";
    const auto scaled = write_scaled_fixture;
    const fs::path machine = dir / "measured";
    scaled(machine / "l1" / "run1" / "measured.csv", 1.0);
    scaled(machine / "l1" / "run2" / "measured.csv", 1.04);
    std::ofstream(machine / "l1" / "lease.json") << "{\"legacy\": true}\n";
    scaled(machine / "l2" / "measured.csv", 0.97);
    scaled(machine / "l3" / "measured.csv", 1.0);
    // An outlier: the median of the other three (about 1.0) misses it by a third.
    scaled(machine / "l4" / "measured.csv", 1.5);

    const Outcome r = cli({"calibrate", "--measured", machine.string(), "--scenarios", fixtures + "/scenarios", "--out",
                           (dir / "cal.yaml").string(), "--free", "runtime.call_overhead", "--max-evaluations", "6",
                           "--quiet"});
    ASSERT_EQ(r.code, 0) << r.err;
    const std::string yaml = slurp((dir / "cal.yaml").string());
    EXPECT_NE(yaml.find("    - { lease: \"l1\", runs: 2, legacy: true }"), std::string::npos) << yaml;
    EXPECT_NE(yaml.find("    - { lease: \"l3\", runs: 1, legacy: false }"), std::string::npos) << yaml;
    const auto lolo = yaml.find("  leave_one_lease_out:\n    leases: [\"l1\", \"l2\", \"l3\", \"l4\"]\n    per_lease:\n");
    ASSERT_NE(lolo, std::string::npos) << yaml;
    const std::regex entry(
        "      - \\{ lease: \"(l[1-4])\", train_rows: 4, rows: 4, median_abs_error_pct: ([0-9.]+), worst_abs_error_pct: ([0-9.]+) \\}\n");
    std::vector<double> medians;
    std::vector<std::string> names;
    const std::string tail = yaml.substr(lolo);
    for (auto it = std::sregex_iterator(tail.begin(), tail.end(), entry); it != std::sregex_iterator(); ++it) {
        names.push_back((*it)[1]);
        medians.push_back(std::stod((*it)[2]));
        EXPECT_GE(std::stod((*it)[3]), medians.back());
    }
    ASSERT_EQ(names, (std::vector<std::string>{"l1", "l2", "l3", "l4"})) << tail.substr(0, 600);
    // The outlying lease is the one a calibration from the others misses most.
    EXPECT_GT(medians[3], 2 * std::max({medians[0], medians[1], medians[2]})) << tail.substr(0, 600);
    std::sort(medians.begin(), medians.end());
    std::smatch m;
    ASSERT_TRUE(std::regex_search(tail, m, std::regex("\n    median_abs_error_pct: ([0-9.]+)\n")));
    EXPECT_NEAR(std::stod(m[1]), (medians[1] + medians[2]) / 2, 0.006);
    EXPECT_NE(r.out.find("leave-one-lease-out over 4 leases"), std::string::npos) << r.out;
}

// runtime.kernel_launch_latency is measured where the leases ran dmaprobe's empty kernel
// (metadata.json kernel_calibration.overhead_us): the median over those leases is written, not
// fitted; --free of it fits it again.
TEST(Calibrate, TheKernelLaunchIsTheLeasesEmptyKernel) {
    namespace fs = std::filesystem;
    char tmpl[] = "/tmp/dmasim-calibrate-kernel-XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    const fs::path dir = tmpl;
    const std::string fixtures = std::string(DMASIM_SOURCE_DIR) + "/tests/app/fixtures/compare";
    const fs::path machine = dir / "measured";
    const double overheads[] = {4.0, 5.0, 4.6};
    for (int i = 0; i < 4; ++i) {
        const fs::path lease = machine / ("l" + std::to_string(i + 1));
        write_scaled_fixture(lease / "measured.csv", 1.0);
        // The fourth lease ran no synthetic kernel.
        std::ofstream(lease / "metadata.json")
            << (i < 3 ? "{\"gpu\": {\"name\": \"H100\"}, \"kernel_calibration\": {\"timer\": \"x\", \"overhead_us\": " +
                            std::to_string(overheads[i]) + ", \"points\": [{\"requested_us\": 0}]}}\n"
                      : std::string("{\"kernel_calibration\": null}\n"));
    }
    const auto fit = [&](const std::string& name, std::vector<std::string> extra) {
        std::vector<std::string> args{"calibrate", "--measured", machine.string(), "--scenarios", fixtures + "/scenarios",
                                      "--out", (dir / name).string(), "--max-evaluations", "4", "--no-lolo", "--no-band", "--quiet"};
        args.insert(args.end(), extra.begin(), extra.end());
        const Outcome r = cli(args);
        EXPECT_EQ(r.code, 0) << r.err;
        return slurp((dir / name).string());
    };
    const std::string measured = fit("measured.yaml", {"--free", "runtime.call_overhead"});
    EXPECT_NE(measured.find("\n  runtime.kernel_launch_latency: 4600000ps  # measured, not fitted: the harness's empty "
                            "kernel, median over 3 of 4 leases"),
              std::string::npos)
        << measured.substr(0, 800);
    EXPECT_EQ(measured.find("  runtime.kernel_launch_latency: ["), std::string::npos) << "not among the bounds of free ones";
    // Named free, it is fitted from its default, within its bounds.
    const std::string freed = fit("freed.yaml", {"--free", "runtime.kernel_launch_latency"});
    EXPECT_EQ(freed.find("# measured"), std::string::npos) << freed.substr(0, 800);
    EXPECT_NE(freed.find("  runtime.kernel_launch_latency: ["), std::string::npos) << freed.substr(0, 800);
}

// A parameter --set gives is given, not fitted, whatever else is free: the fit keeps it and the
// file marks it so; naming it in --free too is refused.
TEST(Calibrate, AParameterTheSetGivesIsNotFitted) {
    namespace fs = std::filesystem;
    char tmpl[] = "/tmp/dmasim-calibrate-given-XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    const fs::path dir = tmpl;
    const std::string fixtures = std::string(DMASIM_SOURCE_DIR) + "/tests/app/fixtures/compare";
    write_scaled_fixture(dir / "measured" / "measured.csv", 1.0);
    const auto run = [&](const std::string& name, std::vector<std::string> extra) {
        std::vector<std::string> args{"calibrate", "--measured", (dir / "measured" / "measured.csv").string(),
                                      "--scenarios", fixtures + "/scenarios", "--out", (dir / name).string(),
                                      "--max-evaluations", "2", "--no-lolo", "--no-band", "--quiet"};
        args.insert(args.end(), extra.begin(), extra.end());
        return cli(args);
    };
    // Every free parameter at once is more than the fixture's four rows hold: the refusal counts
    // them, one fewer where --set gives one.
    const auto count = [](const Outcome& o) {
        std::smatch m;
        const std::regex re("for ([0-9]+) free parameters");
        return std::regex_search(o.err, m, re) ? std::stoi(m[1]) : -1;
    };
    const int all = count(run("all.yaml", {}));
    ASSERT_GT(all, 2);
    EXPECT_EQ(count(run("all-but-one.yaml", {"--set", "runtime.call_overhead=7us"})), all - 1);
    // With a few free, the given one is written as given, with no bounds of a fitted one.
    const Outcome r = run("given.yaml", {"--free", "runtime.sync_latency", "dma.launch_latency", "--set",
                                          "runtime.call_overhead=7us"});
    ASSERT_EQ(r.code, 0) << r.err;
    const std::string yaml = slurp((dir / "given.yaml").string());
    EXPECT_NE(yaml.find("\n  runtime.call_overhead: 7us  # given (--set), not fitted\n"), std::string::npos) << yaml.substr(0, 1200);
    EXPECT_EQ(yaml.find("\n  runtime.call_overhead: ["), std::string::npos) << "not among the fitted parameters' bounds";
    EXPECT_NE(yaml.find("\n  runtime.sync_latency: ["), std::string::npos) << "the others are fitted as before";
    // Fitted and given at once: one error naming the key, exit status 2, no file.
    const Outcome e = run("both.yaml", {"--set", "runtime.call_overhead=7us", "--free", "runtime.call_overhead"});
    EXPECT_EQ(e.code, 2);
    EXPECT_NE(e.err.find("runtime.call_overhead"), std::string::npos) << e.err;
    EXPECT_NE(e.err.find("--set"), std::string::npos) << e.err;
    EXPECT_FALSE(fs::exists(dir / "both.yaml"));
}

// The sensitivity: each fitted parameter scaled by 1.25 up and down, the others as fitted. Pinned
// copies hold the call overhead (every row pays it) and not the registration's per-page cost
// (no row registers memory): the file marks that one flat and the summary names it.
TEST(Calibrate, SensitivityMarksTheParametersTheRowsDoNotHold) {
    namespace fs = std::filesystem;
    char tmpl[] = "/tmp/dmasim-calibrate-sensitivity-XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    const fs::path dir = tmpl;
    const std::string fixtures = std::string(DMASIM_SOURCE_DIR) + "/tests/app/fixtures/compare";
    write_scaled_fixture(dir / "measured" / "measured.csv", 1.0);
    const Outcome r = cli({"calibrate", "--measured", (dir / "measured" / "measured.csv").string(), "--scenarios",
                           fixtures + "/scenarios", "--out", (dir / "cal.yaml").string(), "--free", "runtime.call_overhead",
                           "cpu.register_per_page", "--max-evaluations", "8", "--no-lolo", "--no-band"});
    ASSERT_EQ(r.code, 0) << r.err;
    const std::string yaml = slurp((dir / "cal.yaml").string());
    const std::regex line("    - \\{ key: \"([a-z_.]+)\", up_pct: (-?[0-9.]+), down_pct: (-?[0-9.]+), flat: (true|false) \\}\n");
    std::map<std::string, std::tuple<double, double, bool>> got;
    for (auto it = std::sregex_iterator(yaml.begin(), yaml.end(), line); it != std::sregex_iterator(); ++it) {
        got[(*it)[1]] = {std::stod((*it)[2]), std::stod((*it)[3]), (*it)[4] == "true"};
    }
    ASSERT_EQ(got.size(), 2U) << yaml.substr(0, 1500);
    const auto [call_up, call_down, call_flat] = got.at("runtime.call_overhead");
    EXPECT_FALSE(call_flat);
    EXPECT_GT(std::max(call_up, call_down), 0.5);
    const auto [reg_up, reg_down, reg_flat] = got.at("cpu.register_per_page");
    EXPECT_TRUE(reg_flat);
    EXPECT_LT(std::fabs(reg_up), 0.5);
    EXPECT_LT(std::fabs(reg_down), 0.5);
    EXPECT_NE(r.out.find("barely held by the rows"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("cpu.register_per_page"), std::string::npos) << r.out;
}

// The band: the calibration fits model_error from the leases it is given (--leases: a training
// split of machines) and compare, on a lease held out, reads it back as a wider band.
TEST(Calibrate, TheBandIsFittedOnTheLeasesNamedAndReadBackByCompare) {
    namespace fs = std::filesystem;
    char tmpl[] = "/tmp/dmasim-calibrate-band-XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    const fs::path dir = tmpl;
    const std::string fixtures = std::string(DMASIM_SOURCE_DIR) + "/tests/app/fixtures/compare";
    const fs::path machine = dir / "measured";
    for (const auto& [name, f] : std::vector<std::pair<std::string, double>>{{"l1", 1.0}, {"l2", 0.97}, {"l3", 1.0}, {"l4", 1.5}}) {
        write_scaled_fixture(machine / name / "measured.csv", f);
    }
    const std::vector<std::string> common{"--measured", machine.string(), "--scenarios", fixtures + "/scenarios",
                                          "--free", "runtime.call_overhead", "--max-evaluations", "6", "--no-lolo", "--quiet"};
    std::vector<std::string> args{"calibrate", "--out", (dir / "cal.yaml").string(), "--leases", "l2,l3,l4"};
    args.insert(args.end(), common.begin(), common.end());
    const Outcome r = cli(args);
    ASSERT_EQ(r.code, 0) << r.err;
    const std::string yaml = slurp((dir / "cal.yaml").string());
    EXPECT_EQ(yaml.find("lease: \"l1\""), std::string::npos) << "l1 was not named";
    EXPECT_NE(yaml.find("lease: \"l4\""), std::string::npos);
    EXPECT_NE(yaml.find("band:\n  target_pct: 80.0\n"), std::string::npos) << yaml;
    // Three leases, one of them 50 % slow: eight in ten of their medians inside takes every one,
    // so the band must reach ln 1.5 above the fit, far beyond what three machines' host costs give.
    std::smatch m;
    ASSERT_TRUE(std::regex_search(yaml, m, std::regex("\n  model_error\\.pinned: ([0-9.]+)\n"))) << yaml;
    EXPECT_GT(std::stod(m[1]), 0.1);
    // The fixed split holds out both 4 KiB rows: with no row to fit on, no sigma is claimed.
    EXPECT_EQ(yaml.find("model_error.pinned_small:"), std::string::npos) << yaml;
    EXPECT_NE(yaml.find("kind: pinned_small, train_rows: 0, held_out_rows: 2, sigma: null"), std::string::npos) << yaml;
    EXPECT_NE(r.out.find("the band (p10-p90) holds"), std::string::npos) << r.out;

    // The lease held out, against that band.
    const Outcome c = cli({"compare", "--measured", machine.string(), "--leases", "l1", "--scenarios",
                           fixtures + "/scenarios", "--calibration", (dir / "cal.yaml").string(), "--out",
                           (dir / "compare").string()});
    ASSERT_EQ(c.code, 0) << c.err;
    std::ifstream cmp(dir / "compare" / "compare.csv");
    std::string header, line;
    std::getline(cmp, header);
    int rows = 0;
    while (std::getline(cmp, line)) {
        std::vector<std::string> f;
        std::stringstream ss(line);
        for (std::string x; std::getline(ss, x, ',');) f.push_back(x);
        ++rows;
        const double predicted = std::stod(f.at(8)), p10 = std::stod(f.at(15)), p90 = std::stod(f.at(16));
        if (std::stoull(f.at(3)) < 65536) continue;
        EXPECT_LT(p10, predicted / 1.1) << line;
        EXPECT_GT(p90, predicted * 1.1) << line;
    }
    EXPECT_GT(rows, 0);
    EXPECT_NE(slurp((dir / "compare" / "meta.json").string()).find("\"leases\": 1"), std::string::npos);

    // --no-band: no model_error, and the file says why.
    std::vector<std::string> plain{"calibrate", "--out", (dir / "plain.yaml").string(), "--no-band"};
    plain.insert(plain.end(), common.begin(), common.end());
    ASSERT_EQ(cli(plain).code, 0);
    const std::string p = slurp((dir / "plain.yaml").string());
    EXPECT_EQ(p.find("model_error."), std::string::npos);
    EXPECT_NE(p.find("band: { skipped: \"--no-band\" }"), std::string::npos);
    // A lease named that is not there.
    std::vector<std::string> wrong{"calibrate", "--out", (dir / "wrong.yaml").string(), "--leases", "l9"};
    wrong.insert(wrong.end(), common.begin(), common.end());
    const Outcome w = cli(wrong);
    EXPECT_EQ(w.code, 2);
    EXPECT_NE(w.err.find("l9"), std::string::npos) << w.err;
    EXPECT_FALSE(fs::exists(dir / "wrong.yaml"));
}

// --set puts the leases' scenarios on the machine they ran on (a 2xH200 machine's leases on
// h200x2-nvlink): the fit runs there, and the file says so. Measured on a Gen3 link, fitted as
// if on the scenarios' own Gen5 one, the call overhead would take the slower link's time.
TEST(Calibrate, SetPutsTheMeasuredScenariosOnTheMachineTheyRanOn) {
    char tmpl[] = "/tmp/dmasim-calibrate-set-XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    const std::string dir = tmpl;
    const std::string run = std::string(DMASIM_BINARY) + " run " + kScenarios +
                            "/synthetic.yaml --quiet --calibration none --out " + dir +
                            "/truth --set runtime.call_overhead=4us --set link.generation=3 > /dev/null";
    ASSERT_EQ(std::system(run.c_str()), 0);
    std::string csv = slurp(dir + "/truth/results.csv");
    csv = std::regex_replace(csv, std::regex(",sim,"), ",hw,");
    std::ofstream(dir + "/measured.csv") << csv;
    const auto fit = [&](const std::string& name, std::vector<std::string> extra) {
        std::vector<std::string> args{"calibrate", "--measured", dir + "/measured.csv", "--scenarios", kScenarios,
                                      "--out", dir + "/" + name, "--free", "runtime.call_overhead",
                                      "--max-evaluations", "60", "--no-lolo", "--quiet"};
        args.insert(args.end(), extra.begin(), extra.end());
        const Outcome r = cli(args);
        EXPECT_EQ(r.code, 0) << r.err;
        return slurp(dir + "/" + name);
    };
    const std::string on_gen3 = fit("gen3.yaml", {"--set", "link.generation=3"});
    EXPECT_NEAR(fitted_ps(on_gen3, "runtime.call_overhead") / 4e6, 1.0, 0.02) << on_gen3.substr(0, 600);
    EXPECT_NE(on_gen3.find("\n  set:\n    - \"link.generation=3\"\n"), std::string::npos) << on_gen3;
    const std::string as_named = fit("gen5.yaml", {});
    EXPECT_GT(std::abs(fitted_ps(as_named, "runtime.call_overhead") / 4e6 - 1.0), 0.05) << as_named.substr(0, 600);
    EXPECT_EQ(as_named.find("\n  set:\n"), std::string::npos);
}

TEST(Calibrate, RefusesAnUnknownFreeParameter) {
    const Outcome r = cli({"calibrate", "--measured", std::string(DMASIM_SOURCE_DIR) + "/tests/app/fixtures/compare/measured.csv",
                           "--scenarios", kScenarios, "--out", "/tmp/never.yaml", "--free", "link.generation"});
    EXPECT_EQ(r.code, 2);
    EXPECT_NE(r.err.find("--free: key 'link.generation': not a free parameter"), std::string::npos) << r.err;
}

// A command's child processes and temporary files end with it. These run the real binary (this
// suite is the one that has its path): a signal must reach a separate process tree.
namespace fs = std::filesystem;

class Processes : public ::testing::Test {
protected:
    void SetUp() override {
        char tmpl[] = "/tmp/dmasim-signals-XXXXXX";
        ASSERT_NE(::mkdtemp(tmpl), nullptr);
        dir_ = tmpl;
        tmp_ = dir_ + "/tmp";
        fs::create_directories(tmp_);
        // Orphans are re-parented to this process, which can then see whether they end.
        ::prctl(PR_SET_CHILD_SUBREAPER, 1);
    }
    void TearDown() override {
        if (pid_ > 0) {
            ::kill(-pid_, SIGKILL);  // anything a failed test left running
            while (::waitpid(-pid_, nullptr, 0) > 0) {
            }
        }
        ::prctl(PR_SET_CHILD_SUBREAPER, 0);
    }

    // Starts dmasim in a process group of its own, temporary files in tmp_.
    void start(const std::vector<std::string>& args) {
        pid_ = ::fork();
        ASSERT_GE(pid_, 0);
        if (pid_ == 0) {
            ::setpgid(0, 0);
            ::setenv("TMPDIR", tmp_.c_str(), 1);
            const int null = ::open("/dev/null", O_WRONLY);
            ::dup2(null, 1);
            ::dup2(null, 2);
            std::vector<char*> argv{const_cast<char*>(DMASIM_BINARY)};
            for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
            argv.push_back(nullptr);
            ::execv(DMASIM_BINARY, argv.data());
            ::_exit(127);
        }
        ::setpgid(pid_, pid_);
    }

    // Waits until dmasim has forked a child (a process of its group other than itself): the
    // workers talk to it through sockets, so there is no file to watch for.
    bool wait_for_child(double seconds) const {
        for (double t = 0; t < seconds; t += 0.002) {
            for (const auto& e : fs::directory_iterator("/proc")) {
                const std::string name = e.path().filename().string();
                if (name.find_first_not_of("0123456789") != std::string::npos || std::stol(name) == pid_) continue;
                std::ifstream stat(e.path() / "stat");
                std::string line;
                if (!std::getline(stat, line)) continue;
                // pid (comm) state ppid pgrp ...: comm may hold spaces, so count from its ')'.
                std::istringstream rest(line.substr(line.rfind(')') + 1));
                std::string state;
                long ppid = 0, pgrp = 0;
                if (rest >> state >> ppid >> pgrp && pgrp == pid_ && state != "Z") return true;
            }
            ::usleep(2000);
        }
        return false;
    }

    // The parent's wait status, once it has ended (-1 if it did not within `seconds`).
    int wait_parent(double seconds) const {
        int status = 0;
        for (double t = 0; t < seconds; t += 0.01) {
            if (::waitpid(pid_, &status, WNOHANG) == pid_) return status;
            ::usleep(10000);
        }
        return -1;
    }

    // Whether every process of the group has ended within `seconds` (each is reaped here).
    bool group_ended(double seconds) const {
        for (double t = 0; t < seconds; t += 0.01) {
            while (::waitpid(-pid_, nullptr, WNOHANG) > 0) {
            }
            if (::kill(-pid_, 0) != 0 && errno == ESRCH) return true;
            ::usleep(10000);
        }
        return false;
    }

    std::vector<std::string> temp_files() const {
        std::vector<std::string> out;
        for (const auto& e : fs::directory_iterator(tmp_)) out.push_back(e.path().filename().string());
        return out;
    }

    // Two platforms: with one job the first is simulated in a child, the last here; with more,
    // each in a worker. The first is 32 copies of 1 to 32 GiB at TLP level: minutes of work
    // however fast the simulator gets. Fast-forward (the default) computes all of it in 0.2 s,
    // which let the run end before the signal arrived.
    std::vector<std::string> two_platform_run(const std::string& jobs = "1") const {
        std::ofstream(dir_ + "/slow.yaml") << "name: slow\nplatform: 2gpu-rootports\nstrategy: pinned\n"
                                              "direction: h2d\nsizes: {from: 1GiB, to: 32GiB, step: 1GiB}\n"
                                              "repetitions: 1\n";
        std::ofstream(dir_ + "/fast.yaml") << "name: fast\nstrategy: pinned\ndirection: h2d\nsizes: [4KiB]\n";
        return {"run", dir_ + "/slow.yaml", dir_ + "/fast.yaml", "--quiet", "--out", dir_ + "/out", "--jobs", jobs, "--fidelity", "tlp"};
    }

    std::string dir_;
    std::string tmp_;
    pid_t pid_ = -1;
};

TEST_F(Processes, SigtermEndsTheChildrenRemovesTemporaryFilesAndExits143) {
    start(two_platform_run());
    ASSERT_TRUE(wait_for_child(60)) << "the run never forked its child";
    ::usleep(300000);  // the child is simulating
    ASSERT_EQ(::kill(pid_, SIGTERM), 0);
    const int status = wait_parent(20);
    ASSERT_NE(status, -1) << "dmasim did not end on SIGTERM";
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 128 + SIGTERM) << status;
    EXPECT_TRUE(group_ended(5)) << "a child outlived its parent";
    EXPECT_EQ(temp_files(), std::vector<std::string>{});
    EXPECT_FALSE(fs::exists(dir_ + "/out"));
}

TEST_F(Processes, SigtermEndsEveryWorkerOfAParallelRun) {
    start(two_platform_run("2"));
    ASSERT_TRUE(wait_for_child(60)) << "the run never forked a worker";
    ::usleep(300000);  // the workers are simulating
    ASSERT_EQ(::kill(pid_, SIGTERM), 0);
    const int status = wait_parent(20);
    ASSERT_NE(status, -1) << "dmasim did not end on SIGTERM";
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 128 + SIGTERM) << status;
    EXPECT_TRUE(group_ended(5)) << "a worker outlived its parent";
    EXPECT_EQ(temp_files(), std::vector<std::string>{});
    EXPECT_FALSE(fs::exists(dir_ + "/out"));
}

TEST_F(Processes, AChildEndsWhenItsParentIsKilled) {
    start(two_platform_run());
    ASSERT_TRUE(wait_for_child(60)) << "the run never forked its child";
    ::usleep(300000);
    ASSERT_EQ(::kill(pid_, SIGKILL), 0);  // no handler runs: the child must notice by itself
    const int status = wait_parent(20);
    ASSERT_NE(status, -1);
    EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) << status;
    EXPECT_TRUE(group_ended(3)) << "the child kept simulating after its parent died";
    // Nothing is left in the temporary folder.
    EXPECT_EQ(temp_files(), std::vector<std::string>{});
}

TEST_F(Processes, SigtermDuringACalibrationEndsItsStepAndRemovesItsFile) {
    const std::string fixtures = std::string(DMASIM_SOURCE_DIR) + "/tests/app/fixtures/compare";
    start({"calibrate", "--measured", fixtures + "/measured.csv", "--scenarios", fixtures + "/scenarios", "--out",
           dir_ + "/cal.yaml", "--free", "runtime.call_overhead", "--max-evaluations", "100000", "--folds", "4", "--quiet"});
    ASSERT_TRUE(wait_for_child(60)) << "calibrate never forked a step";
    ASSERT_EQ(::kill(pid_, SIGTERM), 0);
    const int status = wait_parent(20);
    ASSERT_NE(status, -1);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 128 + SIGTERM) << status;
    EXPECT_TRUE(group_ended(5));
    EXPECT_EQ(temp_files(), std::vector<std::string>{});
    EXPECT_FALSE(fs::exists(dir_ + "/cal.yaml"));
}

}  // namespace
}  // namespace dmasim::app

namespace dmasim::app {
namespace {

// --start: the fit begins at a calibration file's values of the free parameters instead of the
// defaults (one step evaluates that point alone, so it is what comes out). A start file that
// cannot be read is refused before any fitting, with no file written. With every free parameter
// given there is nothing to fit: the given values are evaluated once.
TEST(Calibrate, StartsFromTheValuesOfAGivenCalibration) {
    namespace fs = std::filesystem;
    char tmpl[] = "/tmp/dmasim-calibrate-start-XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    const fs::path dir = tmpl;
    const std::string fixtures = std::string(DMASIM_SOURCE_DIR) + "/tests/app/fixtures/compare";
    write_scaled_fixture(dir / "measured" / "measured.csv", 1.0);
    const auto run = [&](const std::string& name, std::vector<std::string> extra) {
        std::vector<std::string> args{"calibrate", "--measured", (dir / "measured" / "measured.csv").string(),
                                      "--scenarios", fixtures + "/scenarios", "--out", (dir / name).string(),
                                      "--max-evaluations", "1", "--no-lolo", "--no-band", "--quiet"};
        args.insert(args.end(), extra.begin(), extra.end());
        return cli(args);
    };
    std::ofstream(dir / "start.yaml") << "parameters:\n  runtime.sync_latency: 3210000ps\n  dma.launch_latency: 1234000ps\n";
    const std::vector<std::string> two{"--free", "runtime.sync_latency", "dma.launch_latency"};
    std::vector<std::string> from_start = two;
    from_start.insert(from_start.end(), {"--start", (dir / "start.yaml").string()});
    const Outcome s = run("from-start.yaml", from_start);
    ASSERT_EQ(s.code, 0) << s.err;
    const std::string started = slurp((dir / "from-start.yaml").string());
    EXPECT_NEAR(fitted_ps(started, "runtime.sync_latency"), 3210000.0, 1.0) << started.substr(0, 800);
    EXPECT_NEAR(fitted_ps(started, "dma.launch_latency"), 1234000.0, 1.0);
    const Outcome d = run("from-defaults.yaml", two);
    ASSERT_EQ(d.code, 0) << d.err;
    EXPECT_NE(fitted_ps(slurp((dir / "from-defaults.yaml").string()), "runtime.sync_latency"), fitted_ps(started, "runtime.sync_latency"));
    // A start that is not there: exit status 2, the file named, nothing written.
    std::vector<std::string> missing = two;
    missing.insert(missing.end(), {"--start", (dir / "nothing.yaml").string()});
    const Outcome m = run("missing.yaml", missing);
    EXPECT_EQ(m.code, 2);
    EXPECT_NE(m.err.find("nothing.yaml"), std::string::npos) << m.err;
    EXPECT_FALSE(fs::exists(dir / "missing.yaml"));
    // Every free parameter given by --set (docs/calibration.md lists them): nothing to fit, the
    // given values evaluated once and written as given.
    std::vector<std::string> all_given;
    for (const char* kv : {"runtime.call_overhead=3us", "runtime.sync_latency=2us", "runtime.kernel_launch_latency=3us",
                           "runtime.stream_wait_latency=1us", "dma.launch_latency=1us", "root_complex.forward_latency=300ns",
                           "host_memory.latency=80ns", "cpu.memcpy_bandwidth=10GB/s", "cpu.memcpy_bandwidth_cached=20GB/s",
                           "cpu.memcpy_bandwidth_cold=8GB/s", "cpu.register_fixed=20us", "cpu.register_per_page=250ns",
                           "cpu.unregister_fixed=10us", "cpu.unregister_per_page=100ns", "cpu.register_first_copy=3us",
                           "cpu.alloc_pinned_pool_fixed=3us", "cpu.alloc_pinned_fixed=100us", "cpu.alloc_pinned_per_page=1700ns"}) {
        all_given.insert(all_given.end(), {"--set", kv});
    }
    const Outcome g = run("all-given.yaml", all_given);
    ASSERT_EQ(g.code, 0) << g.err;
    const std::string given = slurp((dir / "all-given.yaml").string());
    EXPECT_NE(given.find("\n  runtime.sync_latency: 2us  # given (--set), not fitted\n"), std::string::npos) << given.substr(0, 1200);
    EXPECT_NE(given.find("evaluations: 1\n"), std::string::npos) << given.substr(0, 2000);
}

}  // namespace
}  // namespace dmasim::app
