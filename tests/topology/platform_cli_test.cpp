// A bad platform file stops `dmasim validate`, `dmasim topo show` and `dmasim run` the same way a
// bad scenario does: one line naming the platform file and the key, exit status 2, nothing
// simulated and no output written. Before issue 11 these inputs hung (`lanes: 0`), deadlocked
// (`credits_posted_data: 1` on a D2H copy), or exited 1 with a SystemC or generic message.
#include <sys/types.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>

#include <gtest/gtest.h>

#include "../app/cli_helpers.h"

namespace dmasim::app {
namespace {

using testing::cli;
using testing::Outcome;

namespace fs = std::filesystem;

class PlatformCli : public ::testing::Test {
protected:
    void SetUp() override {
        dir_ = fs::temp_directory_path() /
               ("dmasim-platform-cli-" + std::to_string(::getpid()) + "-" +
                ::testing::UnitTest::GetInstance()->current_test_info()->name());
        fs::remove_all(dir_);
        fs::create_directories(dir_);
    }
    void TearDown() override { fs::remove_all(dir_); }

    // A one-GPU platform whose PCIe link to the GPU takes `link_keys`, and a scenario that uses it.
    std::string write(const std::string& link_keys, const std::string& direction = "h2d",
                      const std::string& extra_nodes = "") {
        std::ofstream(dir_ / "bad.yaml") << "name: bad\nnodes:\n  - {name: cpu0, kind: cpu}\n"
                                            "  - {name: rc0, kind: root_complex}\n  - {name: gpu0, kind: gpu}\n"
                                         << extra_nodes
                                         << "links:\n  - {a: cpu0, b: rc0, kind: internal}\n"
                                            "  - {a: rc0, b: gpu0, kind: pcie"
                                         << link_keys << "}\n";
        std::ofstream(dir_ / "s.yaml") << "platform: bad.yaml\nstrategy: pinned\ndirection: " << direction
                                       << "\nsizes: 64KiB\n";
        return (dir_ / "s.yaml").string();
    }

    // Exit 2, one line on stderr naming the platform file and the key, nothing on stdout.
    void expect_bad_input(const Outcome& r, const std::string& key) const {
        EXPECT_EQ(r.code, 2) << r.err;
        EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
        EXPECT_NE(r.err.find((dir_ / "bad.yaml").string() + ": key '" + key + "'"), std::string::npos) << r.err;
        EXPECT_EQ(r.out, "") << r.out;
    }

    fs::path dir_;
};

TEST_F(PlatformCli, ValidateTopoShowAndRunStopOnABadLinkValue) {
    const std::string scenario = write(", generation: 5, lanes: 3");
    expect_bad_input(cli({"validate", scenario}), "links[1].lanes");
    expect_bad_input(cli({"topo", "show", (dir_ / "bad.yaml").string()}), "links[1].lanes");
    const fs::path out = dir_ / "out";
    expect_bad_input(cli({"run", scenario, "--quiet", "--out", out.string()}), "links[1].lanes");
    EXPECT_FALSE(fs::exists(out / "results.csv"));
}

TEST_F(PlatformCli, InputsThatUsedToHangOrDeadlockAreBadInputBeforeAnySimulation) {
    const fs::path out = dir_ / "out";
    expect_bad_input(cli({"run", write(", lanes: 0"), "--quiet", "--out", out.string()}), "links[1].lanes");
    expect_bad_input(cli({"run", write(", credits_posted_data: 1", "d2h"), "--quiet", "--out", out.string()}),
                     "links[1].credits_posted_data");
    expect_bad_input(cli({"run", write(", generation: 7"), "--quiet", "--out", out.string()}), "links[1].generation");
    EXPECT_FALSE(fs::exists(out / "results.csv"));
}

TEST_F(PlatformCli, AGpuWithoutALinkIsBadInputNamingTheNode) {
    const std::string scenario = write("", "h2d", "  - {name: gpu1, kind: gpu}\n");
    expect_bad_input(cli({"validate", scenario}), "nodes[3]");
    expect_bad_input(cli({"topo", "show", (dir_ / "bad.yaml").string()}), "nodes[3]");
}

TEST_F(PlatformCli, AGoodPlatformFileStillValidatesAndShows) {
    const std::string scenario = write(", generation: 4, lanes: 8");
    const Outcome v = cli({"validate", scenario});
    EXPECT_EQ(v.code, 0) << v.err;
    const Outcome t = cli({"topo", "show", (dir_ / "bad.yaml").string()});
    EXPECT_EQ(t.code, 0) << t.err;
    EXPECT_NE(t.out.find("gpu0"), std::string::npos) << t.out;
}

// Issue 15: one pair hop by hop with its peer-to-peer policy; refused and bounced pairs and each
// bridge's policy in the full listing.
TEST_F(PlatformCli, TopoShowGivesOnePairAndMarksPairsThatAreNotForwardedStraight) {
    const Outcome pair = cli({"topo", "show", "dgx-h100", "--from", "gpu0", "--to", "nic4"});
    EXPECT_EQ(pair.code, 0) << pair.err;
    EXPECT_NE(pair.out.find("gpu0 -> nic4: SYS"), std::string::npos) << pair.out;
    EXPECT_NE(pair.out.find("rc0        -> rc2"), std::string::npos) << pair.out;
    EXPECT_NE(pair.out.find("peer-to-peer 22GB/s"), std::string::npos) << pair.out;
    EXPECT_NE(pair.out.find("peer-to-peer: direct"), std::string::npos) << pair.out;
    EXPECT_EQ(pair.out.find("route bottlenecks"), std::string::npos) << "one pair only:\n" << pair.out;

    std::ofstream(dir_ / "shut.yaml") << "name: shut\nnodes:\n  - {name: cpu0, kind: cpu}\n"
                                         "  - {name: rc0, kind: root_complex, p2p: refused}\n"
                                         "  - {name: sw0, kind: switch, p2p: via_cpu}\n"
                                         "  - {name: gpu0, kind: gpu}\n  - {name: gpu1, kind: gpu}\n  - {name: gpu2, kind: gpu}\n"
                                         "links:\n  - {a: cpu0, b: rc0, kind: internal}\n  - {a: rc0, b: sw0}\n"
                                         "  - {a: sw0, b: gpu0}\n  - {a: sw0, b: gpu1}\n  - {a: rc0, b: gpu2}\n";
    const Outcome all = cli({"topo", "show", (dir_ / "shut.yaml").string()});
    EXPECT_EQ(all.code, 0) << all.err;
    EXPECT_NE(all.out.find("gpu0     -- gpu1     bounced through host memory at sw0"), std::string::npos) << all.out;
    EXPECT_NE(all.out.find("gpu0     -- gpu2     refused: rc0 refuses peer-to-peer traffic"), std::string::npos) << all.out;
    EXPECT_NE(all.out.find("root complex: read completions up to 128B, 150ns to memory, p2p refused"), std::string::npos)
        << all.out;
    EXPECT_NE(all.out.find("p2p via_cpu"), std::string::npos) << all.out;

    // One end without the other, or an end that is not a device or CPU: bad input, exit 2.
    const Outcome half = cli({"topo", "show", "dgx-h100", "--from", "gpu0"});
    EXPECT_EQ(half.code, 2);
    EXPECT_NE(half.err.find("key '--to'"), std::string::npos) << half.err;
    const Outcome bridge = cli({"topo", "show", "dgx-h100", "--from", "gpu0", "--to", "rc0"});
    EXPECT_EQ(bridge.code, 2);
    EXPECT_NE(bridge.err.find("'rc0' is not a device or CPU of platform dgx-h100"), std::string::npos) << bridge.err;
    EXPECT_EQ(bridge.out, "");
}

}  // namespace
}  // namespace dmasim::app
