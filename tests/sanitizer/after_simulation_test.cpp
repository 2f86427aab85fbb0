// The sanitizer configuration itself (docs/testing.md#addresssanitizer-and-systemc). After a
// SystemC simulation, in the same process: an error path prints its one-line message (with
// SystemC's coroutines unannounced to ASan, the first exception used to end in a false report),
// and ASan still reports a real heap overflow. The second test means something only in a
// DMASIM_SANITIZE build; elsewhere it skips.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "../app/cli_helpers.h"
#include "dmasim/core/error.h"

namespace {

using dmasim::app::testing::cli;
using dmasim::app::testing::Outcome;

const std::string kScenarios = std::string(DMASIM_SOURCE_DIR) + "/scenarios/";

std::string fresh_dir(const char* name) {
    const auto dir = std::filesystem::temp_directory_path() / (std::string("dmasim-sanitizer-") + name + "-" +
                                                               std::to_string(::testing::UnitTest::GetInstance()->random_seed()));
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir);
    return dir.string();
}

// One simulation (pinned copies of two sizes), as `dmasim run` does it. SystemC elaborates once
// per process: one simulation per test (CTest runs each test in its own process). --jobs 1
// keeps it in this process (more jobs would simulate in worker processes).
void simulate(const std::string& dir) {
    const Outcome r = cli({"run", kScenarios + "pinned.yaml", "--set", "sizes=4KiB,1MiB", "--out", dir + "/res", "--quiet",
                           "--jobs", "1"});
    ASSERT_EQ(r.code, 0) << r.err;
}

__attribute__((noinline)) void throw_from_deep(int depth) {
    char frame[64];
    frame[0] = static_cast<char>(depth);
    if (depth == 0) throw dmasim::core::InputError("deep.yaml", "key", std::string("thrown ") + frame[0]);
    throw_from_deep(depth - 1);
}

TEST(SanitizerSetup, ErrorPathsAfterASimulationPrintTheirMessage) {
    const std::string dir = fresh_dir("errors");
    simulate(dir);
    for (int i = 0; i < 3; ++i) {
        EXPECT_THROW(throw_from_deep(8), dmasim::core::InputError);
        const Outcome missing = cli({"run", dir + "/missing.yaml", "--out", dir + "/none"});
        EXPECT_EQ(missing.code, 2);
        EXPECT_NE(missing.err.find("missing.yaml"), std::string::npos) << missing.err;
        EXPECT_EQ(std::count(missing.err.begin(), missing.err.end(), '\n'), 1) << missing.err;
        const Outcome bad = cli({"run", kScenarios + "pinned.yaml", "--set", "link.lanes=3", "--out", dir + "/none"});
        EXPECT_EQ(bad.code, 2);
        EXPECT_NE(bad.err.find("link.lanes"), std::string::npos) << bad.err;
    }
    // Validation and planning still work after the errors.
    const Outcome plan = cli({"plan", kScenarios + "pinned.yaml", "-o", dir + "/plan.txt"});
    EXPECT_EQ(plan.code, 0) << plan.err;
    std::filesystem::remove_all(dir);
}

TEST(SanitizerSetup, AHeapOverflowAfterASimulationIsReported) {
#ifndef DMASIM_SANITIZE
    GTEST_SKIP() << "not a sanitizer build (-DDMASIM_SANITIZE=ON)";
#else
    const std::string dir = fresh_dir("overflow");
    simulate(dir);
    // The death test forks here: the child overflows a heap block after the simulation above.
    GTEST_FLAG_SET(death_test_style, "fast");
    EXPECT_DEATH(
        {
            std::vector<int> v(4);
            volatile std::size_t i = v.size();
            v.data()[i] = 1;
        },
        "heap-buffer-overflow");
    std::filesystem::remove_all(dir);
#endif
}

}  // namespace
