#include "affinity.h"

#include <gtest/gtest.h>

#include <condition_variable>
#include <mutex>
#include <pthread.h>
#include <sched.h>
#include <thread>

#include "test_util.h"

namespace dmaprobe {
namespace {

using test::TempDir;

std::vector<int> cpus(const std::string& text) {
    std::string why;
    const auto v = parse_cpulist(text, &why);
    EXPECT_TRUE(v.has_value()) << text << ": " << why;
    return v.value_or(std::vector<int>{});
}

std::string parse_error(const std::string& text) {
    std::string why;
    EXPECT_FALSE(parse_cpulist(text, &why).has_value()) << text;
    return why;
}

TEST(DmaprobeAffinity, ParsesTheKernelCpulistFormat) {
    EXPECT_EQ(cpus("3"), (std::vector<int>{3}));
    EXPECT_EQ(cpus("0-3\n"), (std::vector<int>{0, 1, 2, 3}));
    EXPECT_EQ(cpus("0-1,4,6-7"), (std::vector<int>{0, 1, 4, 6, 7}));
    EXPECT_EQ(cpus("5,1,1-2"), (std::vector<int>{1, 2, 5}));  // sorted, distinct
    const auto two_nodes = cpus("0-7,16-23");
    ASSERT_EQ(two_nodes.size(), 16U);
    EXPECT_EQ(two_nodes.front(), 0);
    EXPECT_EQ(two_nodes[8], 16);
    EXPECT_EQ(two_nodes.back(), 23);

    EXPECT_EQ(parse_error(""), "empty CPU list");
    EXPECT_EQ(parse_error("\n"), "empty CPU list");
    EXPECT_NE(parse_error("7-3").find("runs backwards"), std::string::npos);
    EXPECT_NE(parse_error("0-").find("'0-' is not a CPU range"), std::string::npos);
    EXPECT_NE(parse_error("1,,2").find("'' is not a CPU number"), std::string::npos);
    EXPECT_NE(parse_error("0-3,").find("is not a CPU number"), std::string::npos);
    EXPECT_NE(parse_error("abc").find("'abc'"), std::string::npos);
    EXPECT_NE(parse_error("0-7:2").find("not a CPU range"), std::string::npos);
    EXPECT_NE(parse_error(" 1").find("not a CPU number"), std::string::npos);
    EXPECT_NE(parse_error("70000").find("not a CPU number"), std::string::npos);
}

TEST(DmaprobeAffinity, FormatsCpuLists) {
    EXPECT_EQ(format_cpulist({0, 1, 2, 3, 5, 7, 8}), "0-3,5,7-8");
    EXPECT_EQ(format_cpulist({8, 7, 7, 1}), "1,7-8");
    EXPECT_EQ(format_cpulist({4}), "4");
    EXPECT_EQ(format_cpulist({}), "");
    EXPECT_EQ(format_cpulist(cpus("0-7,16-23")), "0-7,16-23");
}

TEST(DmaprobeAffinity, ReadsTheGpuNodeFromAFakeSysfsTree) {
    TempDir dir;
    dir.write("0000:1b:00.0/numa_node", "1\n");
    dir.write("0000:1b:00.0/local_cpulist", "0-7,16-23\n");
    const CpuAffinity a = read_gpu_cpu_affinity(dir.path(), "00000000:1B:00.0");
    EXPECT_EQ(a.bus_id, "0000:1b:00.0");
    EXPECT_EQ(a.numa_node, 1);
    EXPECT_EQ(a.local_cpulist, "0-7,16-23");
    EXPECT_EQ(a.cpus.size(), 16U);
    EXPECT_TRUE(a.reason.empty()) << a.reason;
    EXPECT_FALSE(a.applied);

    const CpuAffinity missing = read_gpu_cpu_affinity(dir.path(), "0000:3b:00.0");
    EXPECT_TRUE(missing.cpus.empty());
    EXPECT_NE(missing.reason.find("local_cpulist is missing or empty"), std::string::npos) << missing.reason;
    EXPECT_EQ(missing.numa_node, -1);

    dir.write("0000:5e:00.0/local_cpulist", "ff,00\n");  // a cpumap, not a cpulist
    const CpuAffinity bad = read_gpu_cpu_affinity(dir.path(), "0000:5e:00.0");
    EXPECT_TRUE(bad.cpus.empty());
    EXPECT_NE(bad.reason.find("'ff,00'"), std::string::npos) << bad.reason;

    EXPECT_NE(read_gpu_cpu_affinity(dir.path(), "gpu0").reason.find("does not parse"), std::string::npos);
}

// The CPUs a given thread may run on.
std::vector<int> thread_cpus(pthread_t t) {
    cpu_set_t set;
    CPU_ZERO(&set);
    if (::pthread_getaffinity_np(t, sizeof set, &set) != 0) return {};
    std::vector<int> out;
    for (int c = 0; c < CPU_SETSIZE; ++c) {
        if (CPU_ISSET(c, &set)) out.push_back(c);
    }
    return out;
}

// A thread that waits until told to finish, so that pinning finds it alive.
class Sleeper {
public:
    Sleeper() : t_([this] {
        std::unique_lock<std::mutex> lock(m_);
        cv_.wait(lock, [this] { return done_; });
    }) {}
    ~Sleeper() {
        {
            std::lock_guard<std::mutex> lock(m_);
            done_ = true;
        }
        cv_.notify_all();
        t_.join();
    }
    pthread_t handle() { return t_.native_handle(); }

private:
    std::mutex m_;
    std::condition_variable cv_;
    bool done_ = false;
    std::thread t_;
};

TEST(DmaprobeAffinity, PinsEveryThreadOfTheProcessAndNewThreadsInherit) {
    const std::vector<int> before = current_cpu_affinity();
    ASSERT_FALSE(before.empty());
    const int first = before.front();
    TempDir dir;
    dir.write("0000:1b:00.0/numa_node", "0\n");
    // The second CPU does not exist: left out, and said so.
    dir.write("0000:1b:00.0/local_cpulist", std::to_string(first) + "," + std::to_string(before.back() + 1000) + "\n");
    {
        Sleeper other;  // started before pinning: must be pinned too
        const CpuAffinity a = pin_to_gpu_numa_node(dir.path(), "0000:1b:00.0", true);
        EXPECT_TRUE(a.applied) << a.reason;
        if (before.size() > 1) {
            EXPECT_NE(a.reason.find("1 of the GPU's 2 local CPUs are not allowed"), std::string::npos) << a.reason;
        }
        EXPECT_EQ(a.cpus, (std::vector<int>{first}));
        EXPECT_GE(a.threads_pinned, 2);
        EXPECT_EQ(a.allowed_before, format_cpulist(before));
        EXPECT_EQ(current_cpu_affinity(), (std::vector<int>{first}));
        EXPECT_EQ(thread_cpus(other.handle()), (std::vector<int>{first}));
        std::vector<int> inherited;
        std::thread later([&] { inherited = current_cpu_affinity(); });
        later.join();
        EXPECT_EQ(inherited, (std::vector<int>{first}));
    }
    // Undo, for the tests that follow in this process.
    std::string why;
    EXPECT_GE(pin_all_threads(before, "/proc/self/task", &why), 1) << why;
    EXPECT_EQ(current_cpu_affinity(), before);
}

TEST(DmaprobeAffinity, ANodeCoveringEveryCpuIsStillApplied) {
    const std::vector<int> before = current_cpu_affinity();
    ASSERT_FALSE(before.empty());
    TempDir dir;
    dir.write("0000:1b:00.0/local_cpulist", "0-" + std::to_string(before.back() + 64) + "\n");
    const CpuAffinity a = pin_to_gpu_numa_node(dir.path(), "0000:1b:00.0", true);
    EXPECT_TRUE(a.applied) << a.reason;
    EXPECT_EQ(a.cpus, before);  // only the CPUs this process may use
    EXPECT_NE(a.reason.find("pinning changes nothing"), std::string::npos) << a.reason;
    EXPECT_EQ(current_cpu_affinity(), before);
}

TEST(DmaprobeAffinity, NothingIsPinnedWhenOffMissingOrForbidden) {
    const std::vector<int> before = current_cpu_affinity();
    ASSERT_FALSE(before.empty());
    TempDir dir;
    dir.write("0000:1b:00.0/local_cpulist", std::to_string(before.front()) + "\n");

    const CpuAffinity off = pin_to_gpu_numa_node(dir.path(), "0000:1b:00.0", false);
    EXPECT_FALSE(off.requested);
    EXPECT_FALSE(off.applied);
    EXPECT_EQ(off.reason, "not requested (--no-pin)");
    EXPECT_EQ(off.local_cpulist, std::to_string(before.front()));  // still recorded
    EXPECT_EQ(off.threads_pinned, 0);

    const CpuAffinity missing = pin_to_gpu_numa_node(dir.path(), "0000:99:00.0", true);
    EXPECT_FALSE(missing.applied);
    EXPECT_NE(missing.reason.find("missing"), std::string::npos) << missing.reason;

    dir.write("0000:2b:00.0/local_cpulist", std::to_string(before.back() + 1000) + "\n");
    const CpuAffinity forbidden = pin_to_gpu_numa_node(dir.path(), "0000:2b:00.0", true);
    EXPECT_FALSE(forbidden.applied);
    EXPECT_NE(forbidden.reason.find("is allowed to this process"), std::string::npos) << forbidden.reason;
    EXPECT_TRUE(forbidden.cpus.empty());

    EXPECT_EQ(current_cpu_affinity(), before);  // none of these touched the process

    std::string why;
    EXPECT_EQ(pin_all_threads(before, dir.path() + "/no-such-task-dir", &why), -1);
    EXPECT_NE(why.find("cannot list threads"), std::string::npos) << why;
    EXPECT_EQ(pin_all_threads({}, "/proc/self/task", &why), -1);
}

}  // namespace
}  // namespace dmaprobe
