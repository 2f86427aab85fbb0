// dmasim compare on a small committed data set (tests/app/fixtures/compare).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <unistd.h>

#include "cli_helpers.h"
#include "dmasim/app/commands.h"
#include "dmasim/core/results.h"

namespace dmasim::app {
namespace {

const std::string kFixtures = std::string(DMASIM_SOURCE_DIR) + "/tests/app/fixtures/compare";

using testing::cli;
using testing::Outcome;
using testing::read_csv;


// Each row carries the model's band of machines and how many leases' medians it holds; with
// --deterministic the band is the prediction itself.
TEST(Compare, RowsCarryTheBandOfMachinesAndTheLeasesInIt) {
    char tmpl[] = "/tmp/dmasim-compare-XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    const std::string dir = tmpl;
    for (const bool deterministic : {false, true}) {
        const std::string out = dir + (deterministic ? "/det" : "/band");
        std::vector<std::string> args{"compare", "--measured", kFixtures + "/measured.csv", "--scenarios",
                                      kFixtures + "/scenarios", "--out", out};
        if (deterministic) args.push_back("--deterministic");
        const Outcome r = cli(args);
        ASSERT_EQ(r.code, 0) << r.err;
        const auto rows = read_csv(out + "/compare.csv");
        ASSERT_GE(rows.size(), 2U);
        const auto col = [&](const std::string& name) {
            const auto it = std::find(rows[0].begin(), rows[0].end(), name);
            EXPECT_NE(it, rows[0].end()) << name;
            return static_cast<std::size_t>(it - rows[0].begin());
        };
        const std::size_t measured = col("measured_us"), predicted = col("predicted_us"), lo = col("predicted_p10_us"),
                          hi = col("predicted_p90_us"), in = col("leases_in_band"), leases = col("leases"),
                          outside = col("outside_band_pct");
        for (std::size_t i = 1; i < rows.size(); ++i) {
            const double p = std::stod(rows[i][predicted]), a = std::stod(rows[i][lo]), b = std::stod(rows[i][hi]);
            const double m = std::stod(rows[i][measured]);
            if (deterministic) {
                EXPECT_NEAR(a, p, 1e-4);
                EXPECT_NEAR(b, p, 1e-4);
            } else {
                // Small copies: their calls and waits differ between machines.
                EXPECT_LT(a, p);
                EXPECT_GT(b, p);
            }
            EXPECT_LE(std::stoul(rows[i][in]), std::stoul(rows[i][leases]));
            const double beyond = std::stod(rows[i][outside]);
            if (m >= a && m <= b) {
                EXPECT_EQ(beyond, 0.0);
                EXPECT_EQ(rows[i][in], rows[i][leases]) << "one lease: its median is the row's";
            } else {
                EXPECT_NEAR(beyond, m > b ? (m / b - 1) * 100 : (m / a - 1) * 100, 0.01);
                EXPECT_EQ(rows[i][in], "0");
            }
        }
        const auto summary = read_csv(out + "/summary.csv");
        EXPECT_EQ(summary[0].back(), "leases_in_band_pct");
    }
}

TEST(Compare, JoinsMeasuredRowsWithPredictionsAndSummarises) {
    char tmpl[] = "/tmp/dmasim-compare-XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    const std::string dir = tmpl;
    // A calibration that adds 100 us to every call: the predictions must move by that much.
    const std::string calibration = dir + "/calibration.yaml";
    std::ofstream(calibration) << "parameters:\n  runtime.call_overhead: 102500ns\n";
    const Outcome r = cli({"compare", "--measured", kFixtures + "/measured.csv", "--scenarios", kFixtures + "/scenarios",
                           "--calibration", calibration, "--out", dir + "/out"});
    ASSERT_EQ(r.code, 0) << r.err;
    const auto rows = read_csv(dir + "/out/compare.csv");
    ASSERT_EQ(rows.size(), 1U + 4U) << "header + the four rows that have a prediction";
    for (std::size_t i = 1; i < rows.size(); ++i) {
        const double measured = std::stod(rows[i][5]);
        const double predicted = std::stod(rows[i][8]);
        EXPECT_NEAR(std::stod(rows[i][9]), (predicted / measured - 1.0) * 100.0, 0.01);
        EXPECT_GT(predicted, 100.0) << "the calibration's call overhead applies";
        EXPECT_LT(predicted, 200.0);
    }
    EXPECT_NE(r.out.find("pinned <64KiB"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("pinned >=64KiB"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("4 measured rows matched"), std::string::npos) << r.out;
    const auto summary = read_csv(dir + "/out/summary.csv");
    ASSERT_GE(summary.size(), 3U);
    EXPECT_EQ(summary[0][0], "group");

    // A calibration naming a parameter that does not exist is refused, naming file and key.
    std::ofstream(calibration) << "parameters:\n  runtime.call_overheat: 3us\n";
    const Outcome bad = cli({"compare", "--measured", kFixtures + "/measured.csv", "--scenarios",
                             kFixtures + "/scenarios", "--calibration", calibration, "--out", dir + "/bad"});
    EXPECT_EQ(bad.code, 2);
    EXPECT_NE(bad.err.find("calibration.yaml: key 'parameters.runtime.call_overheat'"), std::string::npos) << bad.err;
    EXPECT_NE(::access((dir + "/bad").c_str(), F_OK), 0) << "nothing written";
}


// A machine folder of two leases, from the fixture's times t: l1 has two runs (t and 1.02 t),
// l2 one (1.1 t). Returns the machine folder.
std::string two_lease_machine(const std::vector<core::ResultRow>& base) {
    namespace fs = std::filesystem;
    char tmpl[] = "/tmp/dmasim-compare-leases-XXXXXX";
    EXPECT_NE(::mkdtemp(tmpl), nullptr);
    auto scaled = [&](const fs::path& file, double f) {
        auto rows = base;
        for (auto& r : rows) {
            r.time_us *= f;
            r.p10_us *= f;
            r.p90_us *= f;
        }
        fs::create_directories(file.parent_path());
        std::ofstream out(file);
        core::write_results_csv(out, rows);
    };
    const fs::path machine = fs::path(tmpl) / "measured";
    scaled(machine / "l1" / "run1" / "measured.csv", 1.0);
    scaled(machine / "l1" / "run2" / "measured.csv", 1.02);
    std::ofstream(machine / "l1" / "lease.json") << "{\"legacy\": true, \"note\": \"older method\"}\n";
    scaled(machine / "l2" / "measured.csv", 1.1);
    return machine.string();
}

std::vector<core::ResultRow> fixture_rows() {
    std::ifstream in(kFixtures + "/measured.csv");
    return core::read_results_csv(in, "measured.csv");
}

// Measured values are the medians across leases (each lease's value the median over its runs),
// and every row says how far the leases agree. (SystemC elaborates once per process: one
// compare per test.)
// --set changes the scenarios the leases measured and leaves the others alone: a 2xH200
// machine's leases are compared on its own platform (--set platform=h200x2-nvlink) although
// scenarios it never ran cannot run there (a capture card's flows).
TEST(Compare, SetAppliesToTheMeasuredScenariosOnly) {
    char tmpl[] = "/tmp/dmasim-compare-set-XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    const std::string dir = tmpl;
    const std::string scenarios = dir + "/scenarios";
    std::filesystem::create_directories(scenarios);
    std::filesystem::copy_file(kFixtures + "/scenarios/small.yaml", scenarios + "/small.yaml");
    std::ofstream(scenarios + "/card.yaml") << "name: card-frames\nplatform: radar-switch\nflows:\n"
                                               "  - { name: in, strategy: third_party_dma, device: 0, size: 4MiB }\n";
    const std::vector<std::string> base{"compare", "--measured", kFixtures + "/measured.csv", "--scenarios", scenarios,
                                        "--set", "platform=h200x2-nvlink", "--set", "runtime.call_overhead=102500ns"};
    auto args = base;
    args.insert(args.end(), {"--out", dir + "/out"});
    const Outcome r = cli(args);
    ASSERT_EQ(r.code, 0) << r.err;
    const auto rows = read_csv(dir + "/out/compare.csv");
    ASSERT_EQ(rows.size(), 1U + 4U);
    for (std::size_t i = 1; i < rows.size(); ++i) {
        EXPECT_GT(std::stod(rows[i][8]), 100.0) << "the set applies to the measured scenario";
    }
    std::stringstream meta;
    meta << std::ifstream(dir + "/out/meta.json").rdbuf();
    EXPECT_NE(meta.str().find("--set platform=h200x2-nvlink"), std::string::npos) << "the run records its sets";

    // A set the measured scenario cannot take is still refused, naming it.
    auto bad = base;
    bad.insert(bad.end(), {"--set", "link.lanes=3", "--out", dir + "/bad"});
    const Outcome b = cli(bad);
    EXPECT_EQ(b.code, 2);
    EXPECT_NE(b.err.find("link.lanes"), std::string::npos) << b.err;
    EXPECT_NE(::access((dir + "/bad").c_str(), F_OK), 0) << "nothing written";
}

TEST(Compare, UsesCrossLeaseMediansOfAMachineFolder) {
    const auto base = fixture_rows();
    const std::string machine = two_lease_machine(base);
    const std::string out = machine + "/../out";
    const Outcome r = cli({"compare", "--measured", machine, "--scenarios", kFixtures + "/scenarios", "--out", out});
    ASSERT_EQ(r.code, 0) << r.err;
    const auto rows = read_csv(out + "/compare.csv");
    ASSERT_EQ(rows.size(), 1U + 4U);
    ASSERT_EQ(rows[0].size(), 19U);
    EXPECT_EQ(rows[0][12], "leases");
    EXPECT_EQ(rows[0][13], "spread_pct");
    EXPECT_EQ(rows[0][14], "flagged");
    EXPECT_EQ(rows[0][17], "leases_in_band");
    for (std::size_t i = 1; i < rows.size(); ++i) {
        ASSERT_EQ(rows[i].size(), 19U);
        double t = 0;
        for (const auto& b : base) {
            if (b.scenario == rows[i][0] && b.direction == rows[i][2] && std::to_string(b.size_bytes) == rows[i][3] &&
                b.variant.empty()) {
                t = b.time_us;
            }
        }
        ASSERT_GT(t, 0.0) << rows[i][0];
        // l1 = median(t, 1.02 t) = 1.01 t, l2 = 1.1 t: the median of the two is their mean.
        EXPECT_NEAR(std::stod(rows[i][5]), t * (1.01 + 1.1) / 2, 1e-3);
        EXPECT_EQ(rows[i][12], "2");
        EXPECT_NEAR(std::stod(rows[i][13]), (1.1 / 1.01 - 1) * 100, 0.01);
        EXPECT_EQ(rows[i][14], "1") << "8.9 % apart is above 5 %";
    }
    EXPECT_NE(r.out.find("median over 2 leases: l1 (legacy), l2;"), std::string::npos) << r.out;
    std::stringstream meta;
    meta << std::ifstream(out + "/meta.json").rdbuf();
    EXPECT_NE(meta.str().find("\"leases\": 2"), std::string::npos) << meta.str();
}

TEST(Compare, ALeaseFolderIsOneLease) {
    const auto base = fixture_rows();
    const std::string machine = two_lease_machine(base);
    const std::string out = machine + "/../one";
    const Outcome r = cli({"compare", "--measured", machine + "/l1", "--scenarios", kFixtures + "/scenarios", "--out", out});
    ASSERT_EQ(r.code, 0) << r.err;
    const auto rows = read_csv(out + "/compare.csv");
    ASSERT_EQ(rows.size(), 5U);
    EXPECT_EQ(rows[1][12], "1");
    EXPECT_EQ(rows[1][13], "0.00");
    EXPECT_EQ(rows[1][14], "0");
    EXPECT_NE(r.out.find("median over 1 lease: l1 (legacy);"), std::string::npos) << r.out;
}

// A measured value out of range is refused where it is read, naming the file, the line and the
// column, before anything is simulated or written. (These once hung compare, or reached
// compare.csv as nan or a negative GB/s.)
TEST(Compare, MeasuredValuesOutOfRangeAreRefusedNamingFileLineAndColumn) {
    namespace fs = std::filesystem;
    char tmpl[] = "/tmp/dmasim-compare-bad-XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    const std::vector<std::string> header = read_csv(kFixtures + "/measured.csv").front();
    const std::pair<const char*, const char*> cases[] = {
        {"size_bytes", "-4096"}, {"size_bytes", "0"},     {"size_bytes", "1e400"}, {"time_us", "nan"},
        {"time_us", "-3"},       {"time_us", "inf"},      {"directions", "1e20"},  {"directions", "0"},
        {"repetitions", "-1"},   {"p90_us", "nan"},
    };
    for (const auto& [column, value] : cases) {
        auto rows = read_csv(kFixtures + "/measured.csv");
        const auto col = std::find(header.begin(), header.end(), column) - header.begin();
        ASSERT_LT(static_cast<std::size_t>(col), header.size()) << column;
        rows[2][static_cast<std::size_t>(col)] = value;
        // The bad file is one run of a lease of a machine folder, as compare mostly reads them.
        const fs::path csv = fs::path(tmpl) / "measured" / "l1" / "run1" / "measured.csv";
        fs::create_directories(csv.parent_path());
        std::ofstream f(csv);
        for (const auto& row : rows) {
            for (std::size_t i = 0; i < row.size(); ++i) f << (i ? "," : "") << row[i];
            f << "\n";
        }
        f.close();
        const std::string out = std::string(tmpl) + "/out";
        const Outcome r = cli({"compare", "--measured", std::string(tmpl) + "/measured", "--scenarios",
                               kFixtures + "/scenarios", "--out", out});
        EXPECT_EQ(r.code, 2) << column << "=" << value;
        EXPECT_NE(r.err.find("l1/run1/measured.csv:3: key '" + std::string(column) + "'"), std::string::npos) << r.err;
        EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
        EXPECT_FALSE(fs::exists(out)) << column << "=" << value;
    }
}

}  // namespace
}  // namespace dmasim::app
