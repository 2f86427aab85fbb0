#include "affinity.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <dirent.h>
#include <memory>
#include <sched.h>
#include <set>
#include <sys/types.h>

#include "sysinfo.h"

namespace dmaprobe {

namespace {

// CPU numbers above this are not real machines; a bound keeps a corrupt file from asking for
// a gigantic CPU set.
constexpr int kMaxCpu = 65535;

// A dynamically sized cpu_set_t: machines with more than CPU_SETSIZE (1024) CPUs exist.
class CpuSet {
public:
    explicit CpuSet(int ncpus) : ncpus_(std::max(ncpus, 1)), set_(CPU_ALLOC(ncpus_)) {
        if (set_ != nullptr) CPU_ZERO_S(size(), set_);
    }
    ~CpuSet() {
        if (set_ != nullptr) CPU_FREE(set_);
    }
    CpuSet(const CpuSet&) = delete;
    CpuSet& operator=(const CpuSet&) = delete;
    bool ok() const { return set_ != nullptr; }
    std::size_t size() const { return CPU_ALLOC_SIZE(ncpus_); }
    cpu_set_t* get() { return set_; }
    void add(int cpu) { CPU_SET_S(static_cast<std::size_t>(cpu), size(), set_); }
    std::vector<int> list() const {
        std::vector<int> out;
        for (int c = 0; c < ncpus_; ++c) {
            if (CPU_ISSET_S(static_cast<std::size_t>(c), size(), set_)) out.push_back(c);
        }
        return out;
    }

private:
    int ncpus_;
    cpu_set_t* set_;
};

bool parse_cpu_number(const std::string& s, int* out) {
    if (s.empty() || s.size() > 6 ||
        !std::all_of(s.begin(), s.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); })) {
        return false;
    }
    const long v = std::strtol(s.c_str(), nullptr, 10);
    if (v > kMaxCpu) return false;
    *out = static_cast<int>(v);
    return true;
}

}  // namespace

std::optional<std::vector<int>> parse_cpulist(const std::string& text, std::string* error) {
    auto fail = [&](const std::string& why) -> std::optional<std::vector<int>> {
        if (error != nullptr) *error = why;
        return std::nullopt;
    };
    std::string t = text;
    while (!t.empty() && std::isspace(static_cast<unsigned char>(t.back()))) t.pop_back();
    if (t.empty()) return fail("empty CPU list");
    std::set<int> cpus;
    std::size_t pos = 0;
    while (pos <= t.size()) {
        const std::size_t comma = std::min(t.find(',', pos), t.size());
        const std::string item = t.substr(pos, comma - pos);
        const std::size_t dash = item.find('-');
        int lo = 0;
        int hi = 0;
        if (dash == std::string::npos) {
            if (!parse_cpu_number(item, &lo)) return fail("'" + item + "' is not a CPU number");
            hi = lo;
        } else {
            if (!parse_cpu_number(item.substr(0, dash), &lo) || !parse_cpu_number(item.substr(dash + 1), &hi)) {
                return fail("'" + item + "' is not a CPU range");
            }
            if (hi < lo) return fail("range '" + item + "' runs backwards");
        }
        for (int c = lo; c <= hi; ++c) cpus.insert(c);
        pos = comma + 1;
    }
    return std::vector<int>(cpus.begin(), cpus.end());
}

std::string format_cpulist(std::vector<int> cpus) {
    std::sort(cpus.begin(), cpus.end());
    cpus.erase(std::unique(cpus.begin(), cpus.end()), cpus.end());
    std::string out;
    for (std::size_t i = 0; i < cpus.size();) {
        std::size_t j = i;
        while (j + 1 < cpus.size() && cpus[j + 1] == cpus[j] + 1) ++j;
        if (!out.empty()) out += ',';
        out += std::to_string(cpus[i]);
        if (j > i) out += '-' + std::to_string(cpus[j]);
        i = j + 1;
    }
    return out;
}

CpuAffinity read_gpu_cpu_affinity(const std::string& sysfs_root, const std::string& bus_id) {
    CpuAffinity a;
    a.bus_id = normalize_bus_id(bus_id);
    if (a.bus_id.empty()) {
        a.reason = "GPU PCI bus id '" + bus_id + "' does not parse";
        return a;
    }
    a.numa_node = read_numa_node(sysfs_root, a.bus_id);
    const std::string path = sysfs_root + "/" + a.bus_id + "/local_cpulist";
    a.local_cpulist = read_text_file(path);
    if (a.local_cpulist.empty()) {
        a.reason = path + " is missing or empty";
        return a;
    }
    std::string why;
    const auto cpus = parse_cpulist(a.local_cpulist, &why);
    if (!cpus) {
        a.reason = path + " '" + a.local_cpulist + "': " + why;
        return a;
    }
    a.cpus = *cpus;
    return a;
}

std::vector<int> current_cpu_affinity() {
    // The kernel refuses a mask smaller than its own CPU count: grow until it fits.
    for (int n = 1024; n <= 1 << 20; n *= 4) {
        CpuSet set(n);
        if (!set.ok()) return {};
        if (::sched_getaffinity(0, set.size(), set.get()) == 0) return set.list();
        if (errno != EINVAL) return {};
    }
    return {};
}

int pin_all_threads(const std::vector<int>& cpus, const std::string& task_dir, std::string* error) {
    auto fail = [&](const std::string& why) {
        if (error != nullptr) *error = why;
        return -1;
    };
    if (cpus.empty()) return fail("no CPUs to pin to");
    const int top = *std::max_element(cpus.begin(), cpus.end());
    if (top > kMaxCpu || *std::min_element(cpus.begin(), cpus.end()) < 0) return fail("CPU number out of range");
    CpuSet set(top + 1);
    if (!set.ok()) return fail("cannot allocate a CPU set");
    for (int c : cpus) set.add(c);

    std::set<long> pinned;
    // A thread started during a pass may have copied its creator's old mask: go over the list
    // again until a pass finds nobody new. Bounded, in case something keeps spawning threads.
    for (int pass = 0; pass < 10; ++pass) {
        std::unique_ptr<DIR, int (*)(DIR*)> dir(::opendir(task_dir.c_str()), ::closedir);
        if (!dir) return fail(task_dir + ": cannot list threads (" + std::strerror(errno) + ")");
        bool found_new = false;
        while (const dirent* e = ::readdir(dir.get())) {
            char* end = nullptr;
            const long tid = std::strtol(e->d_name, &end, 10);
            if (end == e->d_name || *end != '\0' || tid <= 0 || pinned.count(tid) != 0) continue;
            if (::sched_setaffinity(static_cast<pid_t>(tid), set.size(), set.get()) != 0) {
                if (errno == ESRCH) continue;  // exited meanwhile
                return fail("sched_setaffinity(thread " + std::to_string(tid) + ", CPUs " + format_cpulist(cpus) +
                            "): " + std::strerror(errno));
            }
            pinned.insert(tid);
            found_new = true;
        }
        if (!found_new) break;
    }
    if (pinned.empty()) return fail(task_dir + ": no threads found");
    return static_cast<int>(pinned.size());
}

CpuAffinity pin_to_gpu_numa_node(const std::string& sysfs_root, const std::string& bus_id, bool enabled,
                                 const std::string& task_dir) {
    CpuAffinity a = read_gpu_cpu_affinity(sysfs_root, bus_id);
    a.requested = enabled;
    const std::vector<int> allowed = current_cpu_affinity();
    a.allowed_before = allowed.empty() ? std::string("unknown") : format_cpulist(allowed);
    if (!enabled) {
        a.cpus.clear();
        a.reason = "not requested (--no-pin)";
        return a;
    }
    if (a.cpus.empty()) return a;  // reason set by the reader

    // A cpuset (container, batch scheduler) may forbid some of the node's CPUs; the kernel
    // would drop them silently, so record what is really applied.
    std::vector<int> use;
    if (allowed.empty()) {
        use = a.cpus;
    } else {
        std::set_intersection(a.cpus.begin(), a.cpus.end(), allowed.begin(), allowed.end(),
                              std::back_inserter(use));
    }
    if (use.empty()) {
        a.reason = "none of the GPU's local CPUs (" + a.local_cpulist + ") is allowed to this process (" +
                   a.allowed_before + ")";
        a.cpus.clear();
        return a;
    }
    std::string remark;
    if (!allowed.empty() && use == allowed) {
        remark = "the GPU's local CPUs include every CPU this process may use, so pinning changes nothing";
    } else if (use.size() < a.cpus.size()) {
        remark = std::to_string(a.cpus.size() - use.size()) + " of the GPU's " + std::to_string(a.cpus.size()) +
                 " local CPUs are not allowed to this process and were left out";
    }
    a.cpus = use;
    std::string why;
    const int n = pin_all_threads(use, task_dir, &why);
    if (n < 0) {
        a.reason = why;
        return a;
    }
    a.applied = true;
    a.threads_pinned = n;
    a.reason = remark;
    return a;
}

}  // namespace dmaprobe
