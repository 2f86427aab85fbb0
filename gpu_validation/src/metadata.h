// metadata.json: the machine, software and run behind a measured.csv. Assembled from plain
// structs so that it is unit-tested without a GPU; the CUDA backend fills the GPU part.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "affinity.h"
#include "host_stalls.h"
#include "options.h"
#include "sysinfo.h"

namespace dmaprobe {

struct GpuInfo {
    int index = 0;
    std::string name;
    std::string pci_bus_id;   // as sysfs names it (0000:xx:yy.z)
    std::string uuid;         // GPU-xxxxxxxx-...
    int cc_major = 0;
    int cc_minor = 0;
    int sm_count = 0;
    std::uint64_t memory_bytes = 0;
    int clock_khz = 0;
    int memory_clock_khz = 0;
    int memory_bus_width_bits = 0;
    int l2_bytes = 0;
    int async_engine_count = 0;
    bool can_map_host_memory = false;
    bool unified_addressing = false;
    int numa_node = -1;        // -1 unknown
    PcieLink link_idle;        // read before any transfer
    PcieLink link_under_load;  // read while copies were running (the one skips compare with)
};

// The synthetic kernel of async_overlap/periodic: requested spin vs. measured duration.
struct KernelCalibration {
    bool done = false;
    double overhead_us = 0;  // measured duration of a kernel asked to spin 0
    double slope = 1;        // d(measured)/d(requested)
    std::vector<std::pair<double, double>> points;  // (requested us, measured median us)
};

struct Metadata {
    std::string tool_version = kVersion;
    std::string date_utc;
    double run_seconds = 0;
    std::string hostname;
    std::string commit = "unknown";
    std::string command_line;
    std::string plan_path;
    std::size_t plan_cases = 0;
    std::size_t cases_run = 0;
    std::size_t cases_skipped = 0;
    std::size_t cases_filtered = 0;
    std::size_t rows = 0;
    int driver_version = 0;   // cudaDriverGetVersion, e.g. 13000
    int runtime_version = 0;  // cudaRuntimeGetVersion
    // CUDA_DEVICE_MAX_CONNECTIONS as this process saw it (empty: unset, the driver's 8): how many
    // hardware work queues the streams share, which decides their false dependencies.
    std::string max_connections;
    std::string cpu_model = "unknown";
    int cpu_logical_cores = 0;
    std::uint64_t host_memory_bytes = 0;
    int device = 0;           // the measuring GPU
    int gpu_count = 0;
    std::vector<GpuInfo> gpus;                    // every GPU, by CUDA index
    std::vector<std::vector<bool>> peer_access;   // cudaDeviceCanAccessPeer(i, j)
    KernelCalibration calibration;
    std::vector<std::string> notes;

    SystemFacts system;                  // kernel, THP, IOMMU, NVIDIA driver, boot id
    std::optional<CpuAffinity> cpu_affinity;  // absent: pinning was not attempted
    std::uint64_t seed = 0;              // the shuffle's seed as used (RunSummary::seed)
    bool seed_given = false;             // from --seed (else drawn at start)
    std::vector<std::size_t> run_order;  // plan indices (0-based) of measured cases, as run
    std::optional<StallReport> host_stalls;  // --host-stalls (its stalls go to host-stalls.csv)
};

// 13000 → "13.0", 12040 → "12.4"; "unknown" for 0.
std::string cuda_version_string(int v);

// The JSON document (keys listed in docs/harness.md). Unknown numbers are the string "unknown".
std::string metadata_json(const Metadata& m, const Options& opt);

// Host facts (CPU, memory, hostname, date) that need no GPU.
void fill_host_metadata(Metadata& m);

// The measured GPU of m.gpus (index m.device), or nullptr before the backend described it.
const GpuInfo* measured_gpu(const Metadata& m);

}  // namespace dmaprobe
