// Runs dmaprobe on a tiny plan on a real GPU. Skips when CUDA reports no device (CI, and any
// machine without a driver).
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <fstream>
#include <string>

#include "dmasim/core/results.h"
#include "test_util.h"

namespace dmaprobe {
namespace {

using test::run_command;
using test::TempDir;

TEST(DmaprobeGpu, TinyPlanOnARealGpu) {
    int count = 0;
    const cudaError_t e = cudaGetDeviceCount(&count);
    if (e != cudaSuccess || count == 0) {
        GTEST_SKIP() << "no CUDA device here (" << (e != cudaSuccess ? cudaGetErrorString(e) : "0 devices")
                     << "); this test runs dmaprobe on a GPU machine";
    }
    TempDir dir;
    const std::string plan = dir.write(
        "tiny.txt",
        "dmasim-plan 1\n"
        "case scenario=t strategy=pinned direction=h2d size_bytes=1048576 repetitions=5 warmup=1\n"
        "case scenario=t strategy=pageable direction=d2h size_bytes=4099 repetitions=5 warmup=1\n"
        "case scenario=t strategy=registered direction=h2d size_bytes=65536 reuses=4 repetitions=5 warmup=1\n"
        "case scenario=t strategy=duplex direction=both size_bytes=1048576 host_memory=pinned repetitions=5 warmup=1\n"
        "case scenario=t strategy=async_overlap direction=both size_bytes=1048576 streams=2 kernel_ns=100000 repetitions=5 warmup=1\n"
        "case scenario=t strategy=zero_copy direction=both size_bytes=1048576 access_bytes=16 stride=1 blocks=64 threads=256 repetitions=5 warmup=1\n"
        "case scenario=t strategy=periodic direction=h2d size_bytes=65536 period_ns=1000000 frames=10 via=pinned repetitions=10 warmup=1\n"
        "case scenario=t strategy=cpu_mapped direction=h2d size_bytes=64\n");
    // Default data handling, and host sources rewritten before every repetition.
    // Default data handling (shuffled, pinned), and host sources rewritten before every
    // repetition (plan order, not pinned).
    for (const std::string extra : {"", " --fresh-host-data --order plan --no-pin"}) {
        SCOPED_TRACE("dmaprobe" + extra);
        const std::string out = dir.path() + "/out" + (extra.empty() ? "" : "_fresh");
        const auto r = run_command("'" + std::string(DMAPROBE_EXE) + "' --quiet" + extra + " --plan '" + plan +
                                   "' --out '" + out + "' --json '" + out + "/nvb.json'");
        ASSERT_EQ(r.status, 0) << r.output;
        std::ifstream csv(out + "/measured.csv");
        const auto rows = dmasim::core::read_results_csv(csv, "measured.csv");
        ASSERT_FALSE(rows.empty());
        int ok = 0;
        for (const auto& row : rows) {
            EXPECT_EQ(row.source, "hw");
            if (row.status == "ok") {
                ++ok;
                EXPECT_GT(row.time_us, 0.0) << row.strategy << " " << row.variant;
            }
        }
        EXPECT_GE(ok, 15);
        EXPECT_EQ(rows.back().status, "skipped");
        const std::string meta = test::read_file(out + "/metadata.json");
        EXPECT_NE(meta.find("\"driver_version\""), std::string::npos);
        EXPECT_NE(meta.find("\"gpu_count\""), std::string::npos);
        const test::Json m = test::parse_json(meta);
        EXPECT_EQ(m["run_order"].array.size(), 7U);  // every case but cpu_mapped
        EXPECT_EQ(m["cpu_affinity"]["requested"].boolean, extra.empty());
        const test::Json nvb = test::parse_json(test::read_file(out + "/nvb.json"));
        EXPECT_EQ(nvb["nvbandwidth"]["testcases"].array.size(), rows.size());
        EXPECT_EQ(nvb["nvbandwidth"]["testcases"][0]["status"].string, "Passed");
    }
}

}  // namespace
}  // namespace dmaprobe
