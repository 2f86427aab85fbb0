#include "sysinfo.h"

#include <gtest/gtest.h>

#include <sys/stat.h>
#include <unistd.h>

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

TEST(DmaprobeSysinfo, ParsesTheGpuMatrixOfNvidiaSmiTopo) {
    // As the 2xH200 machine printed it (results/h200x2-nvlink/measured*/*/machine.txt): an
    // underlined header, columns after the GPUs, a legend below.
    const std::string two = "\t\x1b[4mGPU0\tGPU1\tCPU Affinity\tNUMA Affinity\tGPU NUMA ID\x1b[0m\n"
                            "GPU0\t X \tNV18\t0-31\t0\t\tN/A\n"
                            "GPU1\tNV18\t X \t0-31\t0\t\tN/A\n\nLegend:\n\n  X    = Self\n";
    const auto routes = parse_nvidia_smi_topo(two);
    ASSERT_EQ(routes.size(), 2U);
    EXPECT_EQ(routes[0], (std::vector<std::string>{"X", "NV18"}));
    EXPECT_EQ(routes[1], (std::vector<std::string>{"NV18", "X"}));
    const std::string nic = "\tGPU0\tGPU1\tNIC0\tCPU Affinity\nGPU0\t X \tPIX\tSYS\t0-7\nGPU1\tPIX\t X \tSYS\t0-7\n"
                            "NIC0\tSYS\tSYS\t X \n";
    EXPECT_EQ(parse_nvidia_smi_topo(nic)[0][1], "PIX");
    EXPECT_TRUE(parse_nvidia_smi_topo("").empty());
    EXPECT_TRUE(parse_nvidia_smi_topo("No devices were found\n").empty());
    // A row missing: no matrix rather than a wrong one.
    EXPECT_TRUE(parse_nvidia_smi_topo("\tGPU0\tGPU1\nGPU0\t X \tNV4\n").empty());
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

TEST(DmaprobeSysinfo, SmallParsers) {
    EXPECT_EQ(bracketed_choice("always [madvise] never"), "madvise");
    EXPECT_EQ(bracketed_choice("[always] defer defer+madvise madvise never\n"), "always");
    EXPECT_EQ(bracketed_choice("always madvise never"), "unknown");
    EXPECT_EQ(bracketed_choice(""), "unknown");
    EXPECT_EQ(iommu_cmdline_options("BOOT_IMAGE=/vmlinuz root=/dev/sda1 intel_iommu=on iommu=pt quiet "
                                    "amd_iommu=off iommu.strict=0 noiommu=1"),
              (std::vector<std::string>{"intel_iommu=on", "iommu=pt", "amd_iommu=off", "iommu.strict=0"}));
    EXPECT_TRUE(iommu_cmdline_options("root=/dev/vda console=ttyS0").empty());
    EXPECT_EQ(nvidia_driver_from_proc("NVRM version: NVIDIA UNIX x86_64 Kernel Module  580.159.04  Thu Oct 30 "
                                      "2025\nGCC version:  gcc version 12.2.0"),
              "580.159.04");
    EXPECT_EQ(nvidia_driver_from_proc("NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  575.57.08  Release "
                                      "Build"),
              "575.57.08");
    EXPECT_EQ(nvidia_driver_from_proc(""), "unknown");
}

TEST(DmaprobeSysinfo, SystemFactsFromAFakeTree) {
    TempDir dir;
    dir.write("proc/sys/kernel/random/boot_id", "6f1c2a8e-1111-2222-3333-444455556666\n");
    dir.write("proc/sys/kernel/osrelease", "6.1.0-28-amd64\n");
    dir.write("proc/cmdline", "BOOT_IMAGE=/vmlinuz root=/dev/sda1 intel_iommu=on iommu=pt\n");
    dir.write("sys/kernel/mm/transparent_hugepage/enabled", "always [madvise] never\n");
    dir.write("sys/kernel/mm/transparent_hugepage/defrag", "always defer defer+madvise [madvise] never\n");
    dir.write("sys/module/nvidia/version", "580.159.04\n");
    dir.write("sys/class/iommu/dmar0/x", "");
    dir.write("sys/class/iommu/dmar1/x", "");
    dir.write("sys/kernel/iommu_groups/0/type", "DMA\n");
    dir.write("sys/kernel/iommu_groups/17/type", "identity\n");
    dir.write("sys/bus/pci/devices/0000:1b:00.0/numa_node", "0\n");
    ASSERT_EQ(::symlink("../../../../kernel/iommu_groups/17",
                        (dir.path() + "/sys/bus/pci/devices/0000:1b:00.0/iommu_group").c_str()),
              0);
    const SystemFacts f = read_system_facts(dir.path(), "00000000:1B:00.0");
    EXPECT_EQ(f.boot_id, "6f1c2a8e-1111-2222-3333-444455556666");
    EXPECT_EQ(f.kernel_release, "6.1.0-28-amd64");
    EXPECT_EQ(f.nvidia_driver, "580.159.04");
    EXPECT_EQ(f.thp_enabled, "madvise");
    EXPECT_EQ(f.thp_defrag, "madvise");
    EXPECT_EQ(f.iommu.devices, (std::vector<std::string>{"dmar0", "dmar1"}));
    EXPECT_EQ(f.iommu.groups, 2);
    EXPECT_EQ(f.iommu.gpu_group, "17");
    EXPECT_EQ(f.iommu.gpu_group_type, "identity");
    EXPECT_EQ(f.iommu.mode, "passthrough");
    EXPECT_EQ(f.iommu.cmdline, (std::vector<std::string>{"intel_iommu=on", "iommu=pt"}));

    // Translated DMA for another GPU's group, and the driver version from /proc.
    dir.write("sys/bus/pci/devices/0000:3b:00.0/numa_node", "1\n");
    ASSERT_EQ(::symlink("../../../../kernel/iommu_groups/0",
                        (dir.path() + "/sys/bus/pci/devices/0000:3b:00.0/iommu_group").c_str()),
              0);
    EXPECT_EQ(read_system_facts(dir.path(), "0000:3b:00.0").iommu.mode, "translated");
}

TEST(DmaprobeSysinfo, SystemFactsUnknownOrOffWhenAbsent) {
    TempDir dir;
    const SystemFacts none = read_system_facts(dir.path(), "0000:1b:00.0");
    EXPECT_EQ(none.boot_id, "unknown");
    EXPECT_EQ(none.kernel_release, "unknown");
    EXPECT_EQ(none.nvidia_driver, "unknown");
    EXPECT_EQ(none.thp_enabled, "unknown");
    EXPECT_EQ(none.iommu.groups, -1);
    EXPECT_EQ(none.iommu.gpu_group, "unknown");
    EXPECT_EQ(none.iommu.mode, "unknown");  // sysfs not readable at all: say nothing
    EXPECT_TRUE(none.iommu.devices.empty());

    // A VM without an IOMMU: sysfs is there, the groups directory is empty.
    dir.write("sys/kernel/mm/transparent_hugepage/enabled", "[always] madvise never\n");
    ::mkdir((dir.path() + "/sys/kernel/iommu_groups").c_str(), 0755);
    dir.write("proc/driver/nvidia/version", "NVRM version: NVIDIA UNIX x86_64 Kernel Module  570.1.2  Mon\n");
    const SystemFacts vm = read_system_facts(dir.path(), "0000:1b:00.0");
    EXPECT_EQ(vm.iommu.groups, 0);
    EXPECT_EQ(vm.iommu.mode, "off");
    EXPECT_EQ(vm.thp_enabled, "always");
    EXPECT_EQ(vm.nvidia_driver, "570.1.2");

    // The real machine: never throws, fills what it can.
    const SystemFacts here = read_system_facts("", "");
    EXPECT_NE(here.kernel_release, "unknown");
    EXPECT_EQ(here.iommu.gpu_group, "unknown");
}

}  // namespace
}  // namespace dmaprobe
