#include "metadata.h"

#include <gtest/gtest.h>

#include "test_util.h"

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
                            "\"kernel_calibration\": null", "\"fresh_host_data\": false", "\"flush_host_data\": false",
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

TEST(DmaprobeMetadata, IsWellFormedJson) {
    Options opt;
    opt.only = "pinned";
    Metadata m = sample();
    m.calibration.done = true;
    m.calibration.points = {{0.0, 3.5}};
    m.notes = {"a \"quoted\" note"};
    const test::Json j = test::parse_json(metadata_json(m, opt));
    EXPECT_EQ(j["tool"].string, "dmaprobe");
    EXPECT_EQ(j["gpus"].array.size(), 2U);
    EXPECT_EQ(j["notes"][0].string, "a \"quoted\" note");
    EXPECT_EQ(j["peer_access"][0][1].boolean, true);
}

TEST(DmaprobeMetadata, OrderSeedPinningAndSystemFacts) {
    Options opt;
    opt.order = CaseOrder::shuffle;
    opt.json = "r.json";
    Metadata m = sample();
    m.seed = 1234567;
    m.seed_given = false;
    m.run_order = {4, 0, 2};
    m.system.boot_id = "6f1c2a8e-1111";
    m.system.kernel_release = "6.1.0-28-amd64";
    m.system.nvidia_driver = "580.159.04";
    m.system.thp_enabled = "madvise";
    m.system.thp_defrag = "never";
    m.system.iommu.devices = {"dmar0"};
    m.system.iommu.groups = 40;
    m.system.iommu.gpu_group = "17";
    m.system.iommu.gpu_group_type = "DMA-FQ";
    m.system.iommu.mode = "translated";
    m.system.iommu.cmdline = {"intel_iommu=on"};
    CpuAffinity a;
    a.applied = true;
    a.bus_id = "0000:3b:00.0";
    a.numa_node = 0;
    a.local_cpulist = "0-7,16-23";
    a.allowed_before = "0-31";
    a.cpus = {0, 1, 2, 3, 4, 5, 6, 7, 16, 17, 18, 19, 20, 21, 22, 23};
    a.threads_pinned = 5;
    m.cpu_affinity = a;
    const test::Json j = test::parse_json(metadata_json(m, opt));

    EXPECT_EQ(j["options"]["order"].string, "shuffle");
    EXPECT_EQ(j["options"]["frame_wait"].string, "sleep");
    EXPECT_EQ(j["options"]["seed"].number, 1234567.0);
    EXPECT_EQ(j["options"]["seed_from"].string, "drawn at start");
    EXPECT_EQ(j["options"]["pin_cpus"].boolean, true);
    EXPECT_EQ(j["options"]["json"].string, "r.json");
    ASSERT_EQ(j["run_order"].array.size(), 3U);
    EXPECT_EQ(j["run_order"][0].number, 5.0);  // case numbers, 1-based
    EXPECT_EQ(j["run_order"][1].number, 1.0);
    EXPECT_NE(j["method"]["case_order"].string.find("shuffled"), std::string::npos);
    EXPECT_NE(j["method"]["statistic"].string.find("cv"), std::string::npos);

    const test::Json& pin = j["cpu_affinity"];
    EXPECT_TRUE(pin["requested"].boolean);
    EXPECT_TRUE(pin["applied"].boolean);
    EXPECT_EQ(pin["numa_node"].number, 0.0);
    EXPECT_EQ(pin["local_cpulist"].string, "0-7,16-23");
    EXPECT_EQ(pin["cpus"].string, "0-7,16-23");
    EXPECT_EQ(pin["cpu_count"].number, 16.0);
    EXPECT_EQ(pin["threads_pinned"].number, 5.0);
    EXPECT_EQ(pin["allowed_before"].string, "0-31");

    const test::Json& host = j["host"];
    EXPECT_EQ(host["cpu_model"].string, "AMD EPYC \"Genoa\"");  // kept
    EXPECT_EQ(host["boot_id"].string, "6f1c2a8e-1111");
    EXPECT_EQ(host["kernel_release"].string, "6.1.0-28-amd64");
    EXPECT_EQ(host["nvidia_driver"].string, "580.159.04");
    EXPECT_EQ(host["transparent_hugepage"]["enabled"].string, "madvise");
    EXPECT_EQ(host["transparent_hugepage"]["defrag"].string, "never");
    EXPECT_EQ(host["iommu"]["mode"].string, "translated");
    EXPECT_EQ(host["iommu"]["groups"].number, 40.0);
    EXPECT_EQ(host["iommu"]["gpu_group_type"].string, "DMA-FQ");
    EXPECT_EQ(host["iommu"]["devices"][0].string, "dmar0");
    EXPECT_EQ(host["iommu"]["cmdline"][0].string, "intel_iommu=on");
    EXPECT_EQ(j["gpu"]["uuid"].string, "GPU-00000000-0000-0000-0000-000000000000");  // kept

    // Defaults: nothing known, pinning not attempted; still the same keys.
    opt.order = CaseOrder::plan;
    opt.pin_cpus = false;
    opt.json.reset();
    const test::Json d = test::parse_json(metadata_json(sample(), opt));
    EXPECT_EQ(d["options"]["order"].string, "plan");
    EXPECT_FALSE(d["options"]["pin_cpus"].boolean);
    EXPECT_EQ(d["options"]["json"].type, test::Json::Type::null);
    EXPECT_FALSE(d["cpu_affinity"]["applied"].boolean);
    EXPECT_EQ(d["cpu_affinity"]["reason"].string, "not attempted");
    EXPECT_EQ(d["host"]["boot_id"].string, "unknown");
    EXPECT_EQ(d["host"]["iommu"]["groups"].string, "unknown");
    EXPECT_EQ(d["host"]["iommu"]["mode"].string, "unknown");
    EXPECT_TRUE(d["run_order"].array.empty());

    // Pinning asked for but impossible: the reason is there.
    CpuAffinity failed;
    failed.reason = "/sys/bus/pci/devices/0000:3b:00.0/local_cpulist is missing or empty";
    m.cpu_affinity = failed;
    const test::Json f = test::parse_json(metadata_json(m, opt));
    EXPECT_FALSE(f["cpu_affinity"]["applied"].boolean);
    EXPECT_EQ(f["cpu_affinity"]["numa_node"].string, "unknown");
    EXPECT_EQ(f["cpu_affinity"]["cpus"].string, "");
    EXPECT_NE(f["cpu_affinity"]["reason"].string.find("missing"), std::string::npos);
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
