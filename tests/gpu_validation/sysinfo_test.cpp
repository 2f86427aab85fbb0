#include "sysinfo.h"

#include <gtest/gtest.h>

#include "test_util.h"

namespace dmaprobe {
namespace {

using test::TempDir;

TEST(DmaprobeSysinfo, BusIdNormalisation) {
    EXPECT_EQ(normalize_bus_id("00000000:3B:00.0"), "0000:3b:00.0");
    EXPECT_EQ(normalize_bus_id("0000:3B:00.0"), "0000:3b:00.0");
    EXPECT_EQ(normalize_bus_id("0001:c1:1f.7"), "0001:c1:1f.7");
    EXPECT_EQ(normalize_bus_id("0:3b:0.0"), "0000:3b:00.0");
    EXPECT_EQ(normalize_bus_id(" 0000:18:00.0\n"), "0000:18:00.0");
    EXPECT_EQ(normalize_bus_id("not a bus id"), "");
    EXPECT_EQ(normalize_bus_id("0000:3g:00.0"), "");
    EXPECT_EQ(normalize_bus_id(""), "");
}

TEST(DmaprobeSysinfo, GenerationFromSysfsSpeed) {
    EXPECT_EQ(pcie_generation_from_speed("2.5 GT/s PCIe"), 1);
    EXPECT_EQ(pcie_generation_from_speed("5.0 GT/s PCIe"), 2);
    EXPECT_EQ(pcie_generation_from_speed("8.0 GT/s PCIe"), 3);
    EXPECT_EQ(pcie_generation_from_speed("16.0 GT/s PCIe"), 4);
    EXPECT_EQ(pcie_generation_from_speed("32.0 GT/s PCIe"), 5);
    EXPECT_EQ(pcie_generation_from_speed("64.0 GT/s PCIe"), 6);
    EXPECT_EQ(pcie_generation_from_speed("8 GT/s"), 3);         // older kernels
    EXPECT_EQ(pcie_generation_from_speed("2.5 GT/s"), 1);
    EXPECT_EQ(pcie_generation_from_speed("Unknown"), -1);
    EXPECT_EQ(pcie_generation_from_speed("Unknown speed"), -1);
    EXPECT_EQ(pcie_generation_from_speed(""), -1);
    EXPECT_EQ(pcie_generation_from_speed("12 GT/s"), -1);
    EXPECT_EQ(pcie_generation_from_speed("32 MB/s"), -1);
    EXPECT_DOUBLE_EQ(pcie_gts_of_generation(5), 32.0);
}

TEST(DmaprobeSysinfo, ReadsLinkAndNumaFromAFakeSysfsTree) {
    TempDir dir;
    dir.write("0000:3b:00.0/current_link_speed", "32.0 GT/s PCIe\n");
    dir.write("0000:3b:00.0/current_link_width", "16\n");
    dir.write("0000:3b:00.0/max_link_speed", "32.0 GT/s PCIe\n");
    dir.write("0000:3b:00.0/max_link_width", "16\n");
    dir.write("0000:3b:00.0/numa_node", "1\n");
    const PcieLink l = read_sysfs_link(dir.path(), "00000000:3B:00.0");
    EXPECT_EQ(l.source, "sysfs");
    EXPECT_EQ(l.gen_current, 5);
    EXPECT_EQ(l.width_current, 16);
    EXPECT_EQ(l.gen_max, 5);
    EXPECT_EQ(l.width_max, 16);
    EXPECT_EQ(l.speed_current, "32.0 GT/s PCIe");
    EXPECT_TRUE(l.known());
    EXPECT_EQ(read_numa_node(dir.path(), "0000:3B:00.0"), 1);

    // A link trained down while idle.
    dir.write("0000:5e:00.0/current_link_speed", "2.5 GT/s PCIe\n");
    dir.write("0000:5e:00.0/current_link_width", "8\n");
    dir.write("0000:5e:00.0/max_link_speed", "16.0 GT/s PCIe\n");
    dir.write("0000:5e:00.0/max_link_width", "16\n");
    dir.write("0000:5e:00.0/numa_node", "-1\n");
    const PcieLink d = read_sysfs_link(dir.path(), "0000:5e:00.0");
    EXPECT_EQ(d.gen_current, 1);
    EXPECT_EQ(d.width_current, 8);
    EXPECT_EQ(d.gen_max, 4);
    EXPECT_EQ(read_numa_node(dir.path(), "0000:5e:00.0"), -1);
}

TEST(DmaprobeSysinfo, MissingSysfsFallsBackToNvidiaSmiThenUnknown) {
    TempDir dir;
    int calls = 0;
    auto smi = [&calls](const std::string& bus) {
        ++calls;
        return parse_nvidia_smi_links("00000000:3B:00.0, 4, 5, 16, 16\n", bus);
    };
    const PcieLink l = read_link(dir.path(), "0000:3b:00.0", smi);
    EXPECT_EQ(calls, 1);
    EXPECT_EQ(l.source, "nvidia-smi");
    EXPECT_EQ(l.gen_current, 4);
    EXPECT_EQ(l.gen_max, 5);

    auto no_smi = [](const std::string&) { return PcieLink{}; };
    const PcieLink u = read_link(dir.path(), "0000:3b:00.0", no_smi);
    EXPECT_EQ(u.source, "unknown");
    EXPECT_FALSE(u.known());
    EXPECT_EQ(read_numa_node(dir.path(), "0000:3b:00.0"), -1);

    // sysfs present: nvidia-smi is not asked.
    dir.write("0000:3b:00.0/current_link_speed", "16.0 GT/s PCIe");
    dir.write("0000:3b:00.0/current_link_width", "16");
    calls = 0;
    EXPECT_EQ(read_link(dir.path(), "0000:3b:00.0", smi).source, "sysfs");
    EXPECT_EQ(calls, 0);
}

TEST(DmaprobeSysinfo, ParsesNvidiaSmiOutputForTheRightGpu) {
    const std::string out =
        "00000000:18:00.0, 5, 5, 16, 16\n"
        "00000000:3B:00.0, 3, 5, 8, 16\n"
        "00000000:5E:00.0, [N/A], [N/A], [N/A], [N/A]\n";
    const PcieLink a = parse_nvidia_smi_links(out, "0000:3b:00.0");
    EXPECT_EQ(a.gen_current, 3);
    EXPECT_EQ(a.width_current, 8);
    EXPECT_EQ(a.gen_max, 5);
    EXPECT_EQ(a.width_max, 16);
    EXPECT_EQ(a.source, "nvidia-smi");
    EXPECT_EQ(parse_nvidia_smi_links(out, "0000:5e:00.0").source, "unknown");
    EXPECT_EQ(parse_nvidia_smi_links(out, "0000:99:00.0").source, "unknown");
    EXPECT_EQ(parse_nvidia_smi_links("", "0000:18:00.0").source, "unknown");
}

TEST(DmaprobeSysinfo, HostFacts) {
    TempDir dir;
    const std::string x86 = dir.write("cpuinfo_x86", "processor\t: 0\nvendor_id\t: AuthenticAMD\nmodel name\t: AMD EPYC 9654 96-Core Processor\n");
    EXPECT_EQ(read_cpu_model(x86), "AMD EPYC 9654 96-Core Processor");
    const std::string arm = dir.write("cpuinfo_arm", "processor\t: 0\nBogoMIPS\t: 2000.00\nCPU part\t: 0xd4f\nModel\t: NVIDIA Grace\n");
    EXPECT_EQ(read_cpu_model(arm), "NVIDIA Grace");
    EXPECT_EQ(read_cpu_model(dir.path() + "/absent"), "unknown");
    const std::string mem = dir.write("meminfo", "MemTotal:       131072 kB\nMemFree:        1 kB\n");
    EXPECT_EQ(read_mem_total(mem), 131072ULL * 1024);
    EXPECT_EQ(read_mem_total(dir.path() + "/absent"), 0U);
    EXPECT_GT(logical_cpu_count(), 0);
    EXPECT_FALSE(host_name().empty());
    const std::string now = utc_now_iso8601();
    ASSERT_EQ(now.size(), 20U) << now;
    EXPECT_EQ(now[4], '-');
    EXPECT_EQ(now[10], 'T');
    EXPECT_EQ(now.back(), 'Z');
}

}  // namespace
}  // namespace dmaprobe
