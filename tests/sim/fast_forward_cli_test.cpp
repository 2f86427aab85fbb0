// --fidelity on the command line (docs/fast-forward.md): the default fast-forwards and says so in
// the rows' notes, --fidelity tlp and --trace do not, config.json records which, and the two
// agree. Through `dmasim run` in-process (it forks its workers as usual).
#include <gtest/gtest.h>

#include <stdlib.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "../app/cli_helpers.h"

namespace {

namespace fs = std::filesystem;
using dmasim::app::testing::cli;
using dmasim::app::testing::read_csv;
using dmasim::app::testing::TempDir;

const std::string kPinned = std::string(DMASIM_SOURCE_DIR) + "/scenarios/pinned.yaml";

std::string slurp(const std::string& file) {
    std::stringstream ss;
    ss << std::ifstream(file).rdbuf();
    return ss.str();
}

// The main rows (no setup=) of results.csv: time_us and note by column name.
struct Main {
    double time_us = 0.0;
    std::string note;
};
std::vector<Main> main_rows(const std::string& dir) {
    const auto rows = read_csv(dir + "/results.csv");
    std::vector<Main> out;
    if (rows.empty()) return out;
    const auto& h = rows.front();
    auto col = [&](const char* name) { return static_cast<std::size_t>(std::find(h.begin(), h.end(), name) - h.begin()); };
    const std::size_t time = col("time_us"), note = col("note"), variant = col("variant");
    for (std::size_t i = 1; i < rows.size(); ++i) {
        if (rows[i].at(variant).rfind("setup=", 0) == 0) continue;
        out.push_back(Main{std::stod(rows[i].at(time)), rows[i].at(note)});
    }
    return out;
}

std::vector<std::string> run_args(const std::string& dir, std::vector<std::string> more) {
    std::vector<std::string> a{"run", kPinned, "--set", "sizes=64MiB", "--set", "direction=h2d", "-q", "--out", dir};
    a.insert(a.end(), more.begin(), more.end());
    return a;
}

TEST(FidelityCli, DefaultFastForwardsTlpDoesNotAndTheyAgree) {
    const TempDir fast, tlp;
    const auto f = cli(run_args(fast.path, {}));
    ASSERT_EQ(f.code, 0) << f.err;
    const auto t = cli(run_args(tlp.path, {"--fidelity", "tlp"}));
    ASSERT_EQ(t.code, 0) << t.err;
    EXPECT_NE(slurp(fast.path + "/config.json").find("\"fidelity\": \"fast\""), std::string::npos);
    EXPECT_NE(slurp(tlp.path + "/config.json").find("\"fidelity\": \"tlp\""), std::string::npos);
    const auto fr = main_rows(fast.path);
    const auto tr = main_rows(tlp.path);
    ASSERT_EQ(fr.size(), 1U);
    ASSERT_EQ(tr.size(), 1U);
    EXPECT_NE(fr[0].note.find("fast-forwarded from"), std::string::npos) << fr[0].note;
    EXPECT_EQ(tr[0].note.find("fast-forwarded"), std::string::npos) << tr[0].note;
    EXPECT_NEAR(fr[0].time_us, tr[0].time_us, 1e-3 * tr[0].time_us);
}

TEST(FidelityCli, ATraceSimulatesAtTlpLevel) {
    const TempDir dir;
    const std::string trace = dir.path + "/t.json";
    const auto r = cli(run_args(dir.path + "/out", {"--trace", trace}));
    ASSERT_EQ(r.code, 0) << r.err;
    EXPECT_NE(slurp(dir.path + "/out/config.json").find("\"fidelity\": \"tlp\""), std::string::npos);
    const auto rows = main_rows(dir.path + "/out");
    ASSERT_EQ(rows.size(), 1U);
    EXPECT_EQ(rows[0].note.find("fast-forwarded"), std::string::npos) << rows[0].note;
}

TEST(FidelityCli, AnUnknownFidelityIsAUsageError) {
    const TempDir dir;
    const auto r = cli(run_args(dir.path, {"--fidelity", "approximate"}));
    EXPECT_EQ(r.code, 2);
    EXPECT_NE(r.err.find("--fidelity"), std::string::npos) << r.err;
}

}  // namespace
