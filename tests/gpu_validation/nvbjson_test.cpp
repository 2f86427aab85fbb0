#include "nvbjson.h"

#include <gtest/gtest.h>

#include <sstream>

#include "stats.h"
#include "test_util.h"

namespace dmaprobe {
namespace {

using test::Json;

std::vector<CaseDecision> decisions(const std::string& plan_text) {
    std::istringstream in(plan_text);
    return decide_all(dmasim::core::read_plan(in, "p.txt"), "p.txt", Options{});
}

Metadata two_gpus() {
    Metadata m;
    m.commit = "0123456789ab";
    m.hostname = "gpu-host";
    m.date_utc = "2026-11-20T10:00:00Z";
    m.runtime_version = 13000;
    m.driver_version = 13000;
    m.system.nvidia_driver = "580.159.04";
    m.device = 0;
    m.gpu_count = 2;
    for (int i = 0; i < 2; ++i) {
        GpuInfo g;
        g.index = i;
        g.name = "NVIDIA H200";
        g.pci_bus_id = i == 0 ? "0000:1b:00.0" : "0000:3b:00.0";
        m.gpus.push_back(g);
    }
    m.notes = {"timing gate off"};
    return m;
}

const char* kPlan =
    "dmasim-plan 1\n"
    "case scenario=a strategy=pinned direction=d2h size_bytes=67108864 repetitions=5 warmup=1\n"
    "case scenario=b strategy=peer direction=h2d size_bytes=1048576 peer_access=1 repetitions=5 warmup=1\n"
    "case scenario=c strategy=cpu_mapped direction=h2d size_bytes=64\n";

TEST(DmaprobeNvbJson, TestcaseNamesAndKinds) {
    dmasim::core::ResultRow r;
    r.scenario = "smoke-pinned";
    r.strategy = "pinned";
    r.direction = "h2d";
    r.size_bytes = 67108864;
    EXPECT_EQ(testcase_name(r), "smoke-pinned/pinned/h2d/67108864");
    EXPECT_FALSE(is_latency_row(r));
    r.variant = "setup=mallochost";
    EXPECT_EQ(testcase_name(r), "smoke-pinned/pinned/h2d/67108864/setup=mallochost");
    EXPECT_TRUE(is_latency_row(r));
    r.variant = "streams=4;serial";
    EXPECT_FALSE(is_latency_row(r));
    r.strategy = "async_overlap";
    r.variant = "streams=4;kernel";
    EXPECT_TRUE(is_latency_row(r));
    r.strategy = "periodic";
    r.variant = "";
    EXPECT_TRUE(is_latency_row(r));
}

TEST(DmaprobeNvbJson, DocumentHasNvbandwidthShape) {
    const auto ds = decisions(kPlan);
    std::vector<dmasim::core::ResultRow> rows;
    rows.push_back(make_row(ds[0].spec, "", summarize({1200.0, 1220.0, 1240.0})));
    rows.push_back(make_row(ds[0].spec, "setup=mallochost", summarize({14000.0, 15000.0})));
    rows.push_back(make_row(ds[1].spec, "", summarize({40.0, 41.0, 42.0})));
    rows.push_back(skipped_row(ds[2].spec, "needs GPU memory mapped through the BAR"));
    const std::vector<std::size_t> row_case = {0, 0, 1, 2};

    const std::string text = nvbandwidth_json(rows, row_case, ds, two_gpus());
    const Json doc = test::parse_json(text);
    ASSERT_EQ(doc.object.size(), 1U);
    const Json& nvb = doc["nvbandwidth"];
    EXPECT_EQ(nvb["tool"].string, "dmaprobe");
    EXPECT_EQ(nvb["version"].string, kVersion);
    EXPECT_EQ(nvb["git_version"].string, "0123456789ab");
    EXPECT_EQ(nvb["Hostname"].string, "gpu-host");
    EXPECT_EQ(nvb["CUDA Runtime Version"].number, 13000.0);
    EXPECT_EQ(nvb["Driver Version"].string, "580.159.04");
    ASSERT_EQ(nvb["GPU Device list"].array.size(), 2U);
    EXPECT_EQ(nvb["GPU Device list"][1].string, "1: NVIDIA H200 (0000:3b:00.0): (gpu-host)");
    EXPECT_EQ(nvb["warning"].string, "timing gate off");
    const Json& tc = nvb["testcases"];
    ASSERT_EQ(tc.array.size(), 4U);

    // A copy: GB/s in a CPU(row) x GPU(column) matrix, the GPU's cell filled.
    const Json& d2h = tc[0];
    EXPECT_EQ(d2h["name"].string, "a/pinned/d2h/67108864");
    EXPECT_EQ(d2h["status"].string, "Passed");
    EXPECT_NE(d2h["bandwidth_description"].string.find("CPU(row) <- GPU(column) bandwidth (GB/s)"), std::string::npos)
        << d2h["bandwidth_description"].string;
    const Json& m = d2h["bandwidth_matrix"];
    ASSERT_EQ(m.array.size(), 1U);
    ASSERT_EQ(m[0].array.size(), 2U);
    EXPECT_NEAR(std::stod(m[0][0].string), rows[0].gbps(), 1e-3);
    EXPECT_EQ(m[0][1].string, "N/A");
    EXPECT_NEAR(d2h["sum"].number, rows[0].gbps(), 1e-9);
    EXPECT_NEAR(d2h["average"].number, rows[0].gbps(), 1e-9);
    EXPECT_EQ(d2h["time_us"]["median"].number, 1220.0);
    EXPECT_EQ(d2h["time_us"]["min"].number, 1200.0);
    EXPECT_NEAR(d2h["time_us"]["cv"].number, rows[0].cv, 1e-12);
    EXPECT_GT(d2h["time_us"]["cv"].number, 0.0);
    EXPECT_EQ(d2h["repetitions"].number, 3.0);
    // Every repetition, in the order it ran.
    const Json& samples = d2h["time_us"]["samples"];
    ASSERT_EQ(samples.array.size(), 3U);
    EXPECT_EQ(samples[0].number, 1200.0);
    EXPECT_EQ(samples[2].number, 1240.0);
    EXPECT_EQ(d2h["units"]["time"].string, "us");
    EXPECT_EQ(d2h["devices"][0].string, "CPU");
    EXPECT_EQ(d2h["devices"][1].string, "GPU 0: NVIDIA H200 (0000:1b:00.0)");
    EXPECT_FALSE(d2h.has("latency_matrix"));

    // A setup row is a duration: latency keys, microseconds.
    const Json& setup = tc[1];
    EXPECT_EQ(setup["name"].string, "a/pinned/d2h/67108864/setup=mallochost");
    EXPECT_TRUE(setup.has("latency_description"));
    EXPECT_FALSE(setup.has("bandwidth_matrix"));
    EXPECT_EQ(std::stod(setup["latency_matrix"][0][0].string), 14500.0);

    // A peer copy: GPU(row) x GPU(column), source 0 to destination 1.
    const Json& peer = tc[2];
    const Json& pm = peer["bandwidth_matrix"];
    ASSERT_EQ(pm.array.size(), 2U);
    EXPECT_EQ(pm[0][0].string, "N/A");
    EXPECT_NE(pm[0][1].string, "N/A");
    EXPECT_EQ(pm[1][0].string, "N/A");
    EXPECT_EQ(peer["devices"].array.size(), 2U);
    EXPECT_EQ(peer["devices"][1].string, "GPU 1: NVIDIA H200 (0000:3b:00.0)");

    // Skipped: the status and the reason, no values.
    const Json& skipped = tc[3];
    EXPECT_EQ(skipped["status"].string, "Skipped");
    EXPECT_EQ(skipped["reason"].string, "needs GPU memory mapped through the BAR");
    EXPECT_FALSE(skipped.has("bandwidth_matrix"));
    EXPECT_FALSE(skipped.has("sum"));
    EXPECT_FALSE(skipped["time_us"].has("samples"));
}

TEST(DmaprobeNvbJson, EmptyRunAndUnknownFactsStillWellFormed) {
    Metadata m;  // nothing described: no GPUs, unknown driver
    const Json doc = test::parse_json(nvbandwidth_json({}, {}, {}, m));
    EXPECT_TRUE(doc["nvbandwidth"]["testcases"].array.empty());
    EXPECT_EQ(doc["nvbandwidth"]["Driver Version"].string, "unknown");
    EXPECT_FALSE(doc["nvbandwidth"].has("warning"));
}

}  // namespace
}  // namespace dmaprobe
