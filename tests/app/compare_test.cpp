// dmasim compare on a small committed data set (tests/app/fixtures/compare).
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <sstream>
#include <unistd.h>

#include "cli_helpers.h"
#include "dmasim/app/commands.h"

namespace dmasim::app {
namespace {

const std::string kFixtures = std::string(DMASIM_SOURCE_DIR) + "/tests/app/fixtures/compare";

using testing::cli;
using testing::Outcome;

std::vector<std::vector<std::string>> read_csv(const std::string& path) {
    std::ifstream in(path);
    std::vector<std::vector<std::string>> rows;
    std::string line;
    while (std::getline(in, line)) {
        std::vector<std::string> cells;
        std::stringstream ss(line);
        std::string c;
        while (std::getline(ss, c, ',')) cells.push_back(c);
        rows.push_back(cells);
    }
    return rows;
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

}  // namespace
}  // namespace dmasim::app
