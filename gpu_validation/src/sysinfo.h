// What dmaprobe reads about the machine without CUDA: the PCIe link of a GPU (sysfs, else
// nvidia-smi), its NUMA node, the host CPU, hostname and date. Every reader tolerates missing
// information (it returns "unknown" values); nothing here fails a run. Plain C++.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace dmaprobe {

inline constexpr const char* kSysfsPciDevices = "/sys/bus/pci/devices";

struct PcieLink {
    int gen_current = -1;    // -1: unknown
    int width_current = -1;
    int gen_max = -1;
    int width_max = -1;
    std::string speed_current;  // raw text, e.g. "32.0 GT/s PCIe" (sysfs only)
    std::string speed_max;
    std::string source = "unknown";  // sysfs, nvidia-smi or unknown

    bool known() const { return gen_current > 0 && width_current > 0; }
};

// cudaDeviceGetPCIBusId gives "0000:3B:00.0" or "00000000:3B:00.0"; sysfs names devices
// "0000:3b:00.0". Returns the sysfs form (4-digit domain, lower case); "" if it does not parse.
std::string normalize_bus_id(const std::string& bus_id);

// PCIe generation from a sysfs speed ("2.5 GT/s PCIe", "8 GT/s", "32.0 GT/s PCIe"); -1 if
// unknown ("Unknown", empty, unexpected rate).
int pcie_generation_from_speed(const std::string& speed);
// GT/s per lane of a generation (1 → 2.5 ... 7 → 128); 0 for an unknown generation.
double pcie_gts_of_generation(int gen);

// Reads current_link_speed|width and max_link_speed|width of <root>/<bus id>. Source "sysfs"
// when at least the current speed and width were read, else an unknown link.
PcieLink read_sysfs_link(const std::string& root, const std::string& bus_id);

// Parses the output of `nvidia-smi --query-gpu=pci.bus_id,pcie.link.gen.current,
// pcie.link.gen.max,pcie.link.width.current,pcie.link.width.max --format=csv,noheader` and
// returns the line of the GPU with this bus id (any domain width or case). Unknown if absent.
PcieLink parse_nvidia_smi_links(const std::string& output, const std::string& bus_id);
// Runs nvidia-smi through popen (stderr discarded); unknown if it is missing or fails.
PcieLink query_nvidia_smi_link(const std::string& bus_id);

// sysfs first, then nvidia-smi. `run_nvidia_smi` may be replaced in tests.
PcieLink read_link(const std::string& sysfs_root, const std::string& bus_id,
                   const std::function<PcieLink(const std::string&)>& run_nvidia_smi = query_nvidia_smi_link);

// The route class between every two GPUs as `nvidia-smi topo -m` prints it ("NV18", "PIX",
// "NODE", "SYS", ...): routes[i][j] for GPU i and GPU j, "X" on the diagonal. Escape sequences
// (the header is underlined on a terminal) and columns other than GPUs are ignored; empty when
// the output has no GPU matrix.
std::vector<std::vector<std::string>> parse_nvidia_smi_topo(const std::string& output);
// Runs `nvidia-smi topo -m` through popen; empty if it is missing or fails.
std::vector<std::vector<std::string>> query_nvidia_smi_topo();

// <root>/<bus id>/numa_node; -1 when absent or "-1".
int read_numa_node(const std::string& root, const std::string& bus_id);

// "model name" (x86) or "Model"/"Hardware" (Arm) of a cpuinfo file; "unknown" if absent.
std::string read_cpu_model(const std::string& cpuinfo_path = "/proc/cpuinfo");
// MemTotal of a meminfo file in bytes; 0 if absent.
std::uint64_t read_mem_total(const std::string& meminfo_path = "/proc/meminfo");
int logical_cpu_count();
std::string host_name();
// Current UTC time, ISO-8601 with seconds: 2026-11-20T14:03:07Z.
std::string utc_now_iso8601();

// Whole file as text ("" if it cannot be read), trailing whitespace removed.
std::string read_text_file(const std::string& path);

// What the kernel says about DMA address translation for the measured GPU. An IOMMU in
// translating mode adds IOTLB lookups (and, for pinned memory, mapping work) to every DMA, so
// runs on machines that differ here are not directly comparable.
struct IommuInfo {
    std::vector<std::string> devices;        // entries of /sys/class/iommu (dmar0, ivhd0, ...)
    int groups = -1;                         // entries of /sys/kernel/iommu_groups; -1 unreadable
    std::string gpu_group = "unknown";       // the GPU's group number (its iommu_group link)
    std::string gpu_group_type = "unknown";  // <bus>/iommu_group/type: identity, DMA, DMA-FQ, ...
    std::vector<std::string> cmdline;        // iommu=, intel_iommu=, amd_iommu=, iommu.* options
    // From the above: "passthrough" (identity domain), "translated" (DMA, DMA-FQ), "off" (no
    // IOMMU and no groups), the group type itself for other types, else "unknown".
    std::string mode = "unknown";
};

// Kernel and memory-management facts that change DMA results; each "unknown" if unreadable.
struct SystemFacts {
    std::string boot_id = "unknown";         // /proc/sys/kernel/random/boot_id: runs of one boot
    std::string kernel_release = "unknown";  // uname -r
    std::string nvidia_driver = "unknown";   // kernel module version, e.g. 580.159.04
    std::string thp_enabled = "unknown";     // transparent_hugepage/enabled: always, madvise, never
    std::string thp_defrag = "unknown";      // transparent_hugepage/defrag
    IommuInfo iommu;
};

// The selected word of a sysfs choice file ("always [madvise] never" → "madvise"); "unknown"
// without brackets.
std::string bracketed_choice(const std::string& text);
// The IOMMU options of a kernel command line, in order.
std::vector<std::string> iommu_cmdline_options(const std::string& cmdline);
// The version in /proc/driver/nvidia/version ("NVRM version: NVIDIA UNIX x86_64 Kernel Module
// 580.159.04  Thu ..."); "unknown" if absent.
std::string nvidia_driver_from_proc(const std::string& text);
// Reads everything in SystemFacts below `root` ("" for the real machine; tests pass a fake
// tree holding proc/... and sys/...). `gpu_bus_id` selects the IOMMU group; may be "".
SystemFacts read_system_facts(const std::string& root, const std::string& gpu_bus_id);

}  // namespace dmaprobe
