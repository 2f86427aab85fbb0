// CPU pinning to the NUMA node of the measured GPU. Pageable copies are staged by the CPU
// (by the calling thread and by the CUDA driver's own threads) through pinned bounce buffers;
// when those threads run on the far socket, every staged byte crosses the CPU interconnect
// and the result depends on where the scheduler happened to put them. nvbandwidth pins for the
// same reason. Plain C++ (Linux): unit-tested against a fake sysfs tree.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace dmaprobe {

// What was read and what was done; recorded in metadata.json as "cpu_affinity".
struct CpuAffinity {
    bool requested = true;         // false with --no-pin
    bool applied = false;          // every thread of the process now runs on `cpus`
    std::string bus_id;            // the GPU whose node was used (sysfs form)
    int numa_node = -1;            // <bus>/numa_node; -1 unknown or "-1" (no NUMA information)
    std::string local_cpulist;     // <bus>/local_cpulist as read ("" if absent)
    std::string allowed_before;    // the CPUs this process could run on before pinning (cpulist)
    std::vector<int> cpus;         // the CPUs applied: local_cpulist within allowed_before
    int threads_pinned = 0;        // threads whose affinity was set
    std::string reason;            // why not applied, or a remark (e.g. the list covers every CPU)
};

// Parses the kernel's cpulist format ("0-7,16-23", "3", "0,2,4", a trailing newline allowed)
// into sorted, distinct CPU numbers. Returns nothing, and the reason in *error, for anything
// else (empty text, a range that runs backwards, stray characters, numbers over 65535).
std::optional<std::vector<int>> parse_cpulist(const std::string& text, std::string* error = nullptr);

// The inverse: "0-7,16-23" from a list of CPU numbers (any order, duplicates ignored).
std::string format_cpulist(std::vector<int> cpus);

// Reads <sysfs_root>/<bus id>/numa_node and local_cpulist into a CpuAffinity (nothing is
// pinned; `cpus` is the parsed list, or empty with `reason` set when it cannot be used).
CpuAffinity read_gpu_cpu_affinity(const std::string& sysfs_root, const std::string& bus_id);

// The CPUs the calling thread may run on (sched_getaffinity); empty if that fails.
std::vector<int> current_cpu_affinity();

// Sets the affinity of every thread listed in `task_dir` (/proc/self/task) to `cpus`, going
// over the list again until a pass finds no thread it has not pinned, so that threads started
// meanwhile are caught too. Threads that exit meanwhile are not errors. Returns the number of
// threads pinned; on failure returns -1 with the reason in *error.
int pin_all_threads(const std::vector<int>& cpus, const std::string& task_dir = "/proc/self/task",
                    std::string* error = nullptr);

// The whole step: reads the GPU's local CPUs, keeps those this process may use, and pins every
// thread of the process to them (threads created later inherit it from their creator). Never
// throws: when something is missing, nothing is pinned and `reason` says why. With `enabled`
// false (--no-pin) it only reads and records.
//
// Call it once the CUDA context of the measuring GPU exists (the driver's helper threads are
// started with the context) and before the first measurement.
CpuAffinity pin_to_gpu_numa_node(const std::string& sysfs_root, const std::string& bus_id, bool enabled,
                                 const std::string& task_dir = "/proc/self/task");

}  // namespace dmaprobe
