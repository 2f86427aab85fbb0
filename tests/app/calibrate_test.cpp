// dmasim calibrate recovers known parameters from data the model itself generated.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <regex>
#include <sstream>
#include <unistd.h>

#include "cli_helpers.h"
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
    // The "truth": three parameters away from their defaults. The model is run as a separate
    // process (SystemC elaborates once per process, and calibration forks its own).
    const std::string run = std::string(DMASIM_BINARY) + " run " + kScenarios +
                            "/synthetic.yaml --quiet --out " + dir + "/truth --set runtime.call_overhead=4us" +
                            " --set cpu.register_per_page=180ns --set cpu.alloc_pinned_per_page=300ns > /dev/null";
    ASSERT_EQ(std::system(run.c_str()), 0);
    // Present the model's rows as measurements.
    std::string csv = slurp(dir + "/truth/results.csv");
    csv = std::regex_replace(csv, std::regex(",sim,"), ",hw,");
    std::ofstream(dir + "/measured.csv") << csv;

    const Outcome r = cli({"calibrate", "--measured", dir + "/measured.csv", "--scenarios", kScenarios, "--out",
                           dir + "/calibration.yaml", "--free", "runtime.call_overhead", "--free",
                           "cpu.register_per_page", "--free", "cpu.alloc_pinned_per_page", "--max-evaluations", "300",
                           "--quiet"});
    ASSERT_EQ(r.code, 0) << r.err;
    const std::string yaml = slurp(dir + "/calibration.yaml");
    EXPECT_NEAR(fitted_ps(yaml, "runtime.call_overhead") / 4e6, 1.0, 0.02) << yaml.substr(0, 600);
    EXPECT_NEAR(fitted_ps(yaml, "cpu.register_per_page") / 180e3, 1.0, 0.02);
    EXPECT_NEAR(fitted_ps(yaml, "cpu.alloc_pinned_per_page") / 300e3, 1.0, 0.02);
    // The file records what it was fitted on and how well it does on rows it did not see.
    for (const char* key : {"bounds:", "fnv1a64:", "held_out:", "residuals:", "set: held_out"}) {
        EXPECT_NE(yaml.find(key), std::string::npos) << key;
    }
    // compare reads the calibration back.
    const Outcome c = cli({"compare", "--measured", dir + "/measured.csv", "--scenarios", kScenarios, "--calibration",
                           dir + "/calibration.yaml", "--out", dir + "/compare"});
    EXPECT_EQ(c.code, 0) << c.err;
}

TEST(Calibrate, RefusesAnUnknownFreeParameter) {
    const Outcome r = cli({"calibrate", "--measured", std::string(DMASIM_SOURCE_DIR) + "/tests/app/fixtures/compare/measured.csv",
                           "--scenarios", kScenarios, "--out", "/tmp/never.yaml", "--free", "link.generation"});
    EXPECT_EQ(r.code, 2);
    EXPECT_NE(r.err.find("--free: key 'link.generation': not a free parameter"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace dmasim::app
