// Runs the dmaprobe binary itself in the ways that need no GPU.
#include <gtest/gtest.h>

#include <string>

#include "test_util.h"

namespace dmaprobe {
namespace {

using test::run_command;
using test::TempDir;

const std::string kExe = DMAPROBE_EXE;

TEST(DmaprobeCli, HelpExitsZeroAndListsOptions) {
    const auto r = run_command("'" + kExe + "' --help");
    EXPECT_EQ(r.status, 0) << r.output;
    EXPECT_NE(r.output.find("--plan FILE"), std::string::npos);
    EXPECT_NE(r.output.find("--peer-device"), std::string::npos);
    EXPECT_NE(r.output.find("--order ORDER"), std::string::npos);
    EXPECT_NE(r.output.find("--json FILE"), std::string::npos);
}

TEST(DmaprobeCli, BadCommandLineExitsTwoWithOneMessage) {
    const auto r = run_command("'" + kExe + "' --plan x.txt --out o --bogus");
    EXPECT_EQ(r.status, 2);
    EXPECT_NE(r.output.find("unknown option '--bogus'"), std::string::npos) << r.output;
}

TEST(DmaprobeCli, ListWorksWithoutAGpu) {
    const auto r = run_command("'" + kExe + "' --list --plan '" + std::string(DMASIM_SOURCE_DIR) +
                               "/gpu_validation/plans/smoke.txt'");
    EXPECT_EQ(r.status, 0) << r.output;
    EXPECT_NE(r.output.find("to run"), std::string::npos) << r.output;
    EXPECT_NE(r.output.find("skip    third_party_dma"), std::string::npos) << r.output;
    EXPECT_NE(r.output.find("skip    cpu_mapped"), std::string::npos) << r.output;
}

TEST(DmaprobeCli, BadPlanFailsAndWritesNothing) {
    TempDir dir;
    const std::string plan = dir.write("bad.txt", "dmasim-plan 1\ncase scenario=s strategy=registered direction=h2d "
                                                  "size_bytes=64 repetitions=3 warmup=1\n");
    const std::string out = dir.path() + "/out";
    const auto r = run_command("'" + kExe + "' --plan '" + plan + "' --out '" + out + "'");
    EXPECT_EQ(r.status, 1) << r.output;
    EXPECT_NE(r.output.find("key 'reuses'"), std::string::npos) << r.output;
    EXPECT_FALSE(test::file_exists(out + "/measured.csv"));
    EXPECT_FALSE(test::file_exists(out + "/metadata.json"));
    const auto with_json = run_command("'" + kExe + "' --plan '" + plan + "' --out '" + out + "' --json '" + dir.path() +
                                       "/r.json'");
    EXPECT_EQ(with_json.status, 1) << with_json.output;
    EXPECT_FALSE(test::file_exists(dir.path() + "/r.json"));

    const auto missing = run_command("'" + kExe + "' --list --plan '" + dir.path() + "/absent.txt'");
    EXPECT_EQ(missing.status, 1);
    EXPECT_NE(missing.output.find("cannot open plan file"), std::string::npos) << missing.output;

    const std::string wrong = dir.write("wrong.txt", "hello\n");
    const auto header = run_command("'" + kExe + "' --list --plan '" + wrong + "'");
    EXPECT_EQ(header.status, 1);
    EXPECT_NE(header.output.find("not a plan file"), std::string::npos) << header.output;
}

}  // namespace
}  // namespace dmaprobe
