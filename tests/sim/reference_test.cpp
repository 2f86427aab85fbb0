// The model against its committed reference numbers (tests/sim/fixtures/reference): a fixed set
// of small cases over every strategy and platform kind, run through `dmasim run`, must give
// results.csv and links.csv exactly as committed. Work that makes the simulator faster must pass
// this unchanged; a change of mechanism regenerates the files (scripts/update-reference.sh) and
// says in its commit which numbers moved and why.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "../app/cli_helpers.h"

namespace {

namespace fs = std::filesystem;
using dmasim::app::testing::cli;
using dmasim::app::testing::read_csv;
using dmasim::app::testing::TempDir;

const fs::path kReference = fs::path(DMASIM_SOURCE_DIR) / "tests/sim/fixtures/reference";

// Each differing line, with the columns that differ by name, so that a failure says what moved.
std::string differences(const fs::path& expected_file, const fs::path& actual_file) {
    const auto expected = read_csv(expected_file.string());
    const auto actual = read_csv(actual_file.string());
    std::string out;
    if (expected.size() != actual.size()) {
        out += "  " + std::to_string(expected.size()) + " lines expected, " + std::to_string(actual.size()) + " written\n";
    }
    const std::vector<std::string> header = expected.empty() ? std::vector<std::string>{} : expected.front();
    int shown = 0;
    for (std::size_t i = 0; i < std::min(expected.size(), actual.size()) && shown < 20; ++i) {
        if (expected[i] == actual[i]) continue;
        ++shown;
        std::string line = "  line " + std::to_string(i + 1) + " (" + (expected[i].empty() ? "" : expected[i][0]) + "):";
        for (std::size_t c = 0; c < std::max(expected[i].size(), actual[i].size()); ++c) {
            const std::string e = c < expected[i].size() ? expected[i][c] : "<none>";
            const std::string a = c < actual[i].size() ? actual[i][c] : "<none>";
            if (e != a) line += " " + (c < header.size() ? header[c] : std::to_string(c)) + " " + e + " -> " + a + ";";
        }
        out += line + "\n";
    }
    return out;
}

TEST(Reference, EveryCaseGivesItsCommittedNumbers) {
    const TempDir tmp("dmasim-reference-");
    ASSERT_FALSE(tmp.path.empty());
    const fs::path dir = tmp.path;
    // TLP level always: these numbers pin the simulator itself, not the fast-forward.
    // The default parameters: a mechanism changed shows here, a calibration refitted does not.
    const auto r = cli({"run", (kReference / "cases.yaml").string(), "--out", dir.string(), "--quiet", "--fidelity", "tlp",
                        "--calibration", "none"});
    ASSERT_EQ(r.code, 0) << r.err;
    for (const char* file : {"results.csv", "links.csv"}) {
        const std::string diff = differences(kReference / file, dir / file);
        EXPECT_TRUE(diff.empty()) << file << " differs from " << (kReference / file).string()
                                  << " (if a mechanism changed on purpose: scripts/update-reference.sh)\n"
                                  << diff;
    }
}

// The check itself must notice a change: one digit of one committed time altered.
TEST(Reference, ADifferenceIsReportedWithItsColumn) {
    const TempDir tmp("dmasim-reference-");
    ASSERT_FALSE(tmp.path.empty());
    const fs::path dir = tmp.path;
    const auto rows = read_csv((kReference / "results.csv").string());
    ASSERT_GT(rows.size(), 2U);
    fs::copy_file(kReference / "results.csv", dir / "expected.csv");
    std::string text;
    {
        std::ifstream in(dir / "expected.csv");
        text.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
    }
    const std::string time = rows[1][5];
    const auto at = text.find("," + time + ",");
    ASSERT_NE(at, std::string::npos);
    text.replace(at + 1, time.size(), time + "1");
    std::ofstream(dir / "changed.csv") << text;
    const std::string diff = differences(dir / "expected.csv", dir / "changed.csv");
    EXPECT_NE(diff.find("time_us " + time + " -> " + time + "1"), std::string::npos) << diff;
}

}  // namespace
