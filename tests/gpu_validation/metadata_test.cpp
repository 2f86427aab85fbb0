#include "metadata.h"

#include <gtest/gtest.h>

namespace dmaprobe {
namespace {

Metadata sample() {
    Metadata m;
    m.date_utc = "2026-11-20T10:00:00Z";
    m.hostname = "gpu-host";
    m.commit = "0123456789ab";
    m.command_line = "dmaprobe --plan p.txt --out o";
    m.plan_path = "p.txt";
    m.plan_cases = 30;
    m.cases_run = 27;
    m.cases_skipped = 3;
    m.rows = 45;
    m.driver_version = 13000;
    m.runtime_version = 12090;
    m.cpu_model = "AMD EPYC \"Genoa\"";
    m.cpu_logical_cores = 16;
    m.host_memory_bytes = 1ULL << 37;
    m.device = 0;
    m.gpu_count = 2;
    GpuInfo g;
    g.index = 0;
    g.name = "NVIDIA H100 80GB HBM3";
    g.pci_bus_id = "0000:3b:00.0";
    g.uuid = "GPU-00000000-0000-0000-0000-000000000000";
    g.cc_major = 9;
    g.sm_count = 132;
    g.memory_bytes = 85520809984ULL;
    g.clock_khz = 1980000;
    g.async_engine_count = 3;
    g.numa_node = 0;
    g.link_under_load.source = "sysfs";
    g.link_under_load.gen_current = 5;
    g.link_under_load.width_current = 16;
    g.link_under_load.gen_max = 5;
    g.link_under_load.width_max = 16;
    GpuInfo g1 = g;
    g1.index = 1;
    g1.numa_node = -1;
    g1.link_under_load = PcieLink{};
    m.gpus = {g, g1};
    m.peer_access = {{false, true}, {true, false}};
    return m;
}

bool has(const std::string& json, const std::string& s) { return json.find(s) != std::string::npos; }

TEST(DmaprobeMetadata, HasEveryRequiredKey) {
    Options opt;
    opt.plan = "p.txt";
    opt.out = "o";
    const std::string j = metadata_json(sample(), opt);
    for (const char* key : {"\"tool\"", "\"tool_version\"", "\"source\": \"hw\"", "\"date_utc\"", "\"hostname\"",
                            "\"commit\"", "\"command_line\"", "\"plan\"", "\"path\"", "\"cases\": 30",
                            "\"cuda\"", "\"driver_version\": \"13.0\"", "\"runtime_version\": \"12.9\"",
                            "\"host\"", "\"cpu_model\"", "\"cpu_logical_cores\": 16", "\"gpu_count\": 2",
                            "\"gpu\"", "\"gpus\"", "\"name\": \"NVIDIA H100 80GB HBM3\"", "\"pci_bus_id\"",
                            "\"compute_capability\": \"9.0\"", "\"sm_count\": 132", "\"memory_bytes\"",
                            "\"clock_khz\"", "\"async_engine_count\": 3", "\"numa_node\": 0", "\"pcie\"",
                            "\"gen_current\": 5", "\"width_current\": 16", "\"gen_max\": 5", "\"width_max\": 16",
                            "\"idle\"", "\"peer_access\"", "\"options\"", "\"method\"", "\"notes\"",
                            "\"kernel_calibration\": null", "\"fresh_host_data\": false",
                            "written by the CPU once per case"}) {
        EXPECT_TRUE(has(j, key)) << key << "\n" << j;
    }
    EXPECT_TRUE(has(j, "AMD EPYC \\\"Genoa\\\"")) << "strings are escaped";
}

TEST(DmaprobeMetadata, UnknownValuesAreSaidSo) {
    Options opt;
    Metadata m = sample();
    m.device = 1;  // the GPU whose link and NUMA node are unknown
    const std::string j = metadata_json(m, opt);
    EXPECT_TRUE(has(j, "\"gen_current\": \"unknown\""));
    EXPECT_TRUE(has(j, "\"numa_node\": \"unknown\""));
    EXPECT_TRUE(has(j, "\"source\": \"unknown\""));
}

TEST(DmaprobeMetadata, CalibrationAndOptionsWhenSet) {
    Options opt;
    opt.repetitions = 7;
    opt.only = "pinned";
    Metadata m = sample();
    m.calibration.done = true;
    m.calibration.overhead_us = 3.5;
    m.calibration.points = {{0.0, 3.5}, {100.0, 103.4}};
    const std::string j = metadata_json(m, opt);
    EXPECT_TRUE(has(j, "\"overhead_us\": 3.5"));
    EXPECT_TRUE(has(j, "\"requested_us\": 100"));
    EXPECT_TRUE(has(j, "\"repetitions\": 7"));
    EXPECT_TRUE(has(j, "\"only\": \"pinned\""));
}

TEST(DmaprobeMetadata, VersionStrings) {
    EXPECT_EQ(cuda_version_string(13000), "13.0");
    EXPECT_EQ(cuda_version_string(12040), "12.4");
    EXPECT_EQ(cuda_version_string(0), "unknown");
}

TEST(DmaprobeMetadata, HostFactsFilled) {
    Metadata m;
    fill_host_metadata(m);
    EXPECT_FALSE(m.hostname.empty());
    EXPECT_EQ(m.date_utc.size(), 20U);
    EXPECT_GT(m.cpu_logical_cores, 0);
}

}  // namespace
}  // namespace dmaprobe
