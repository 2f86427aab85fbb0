// Whether the ~1 us by which every blocking copy and every cudaMallocHost/cudaFreeHost speeds up
// for stretches of a run (copy-levels, lease 2b833527) is the CPU's speed or a per-call cost.
// For `seconds` seconds, batch after batch, one thread times on the host clock:
//   - a fixed busy loop of pure CPU work (the CPU's speed);
//   - cudaStreamQuery on an idle stream, 64 times (a CUDA call that does no GPU work);
//   - a blocking cudaMemcpy of 64 KiB host-to-device from pinned memory, 16 times;
//   - cudaMallocHost + cudaFreeHost of 64 KiB, 16 times;
// and prints one line per batch: its start time and the median of each.
//
// Build: nvcc -O3 -arch=sm_90 callstate.cu -o callstate
// Run:   ./callstate [seconds] [cpu] > callstate.csv   (cpu: pin to this CPU; -1 or none: no pin)
#include <cuda_runtime.h>
#include <sched.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace {

#define CHECK(call)                                                                                      \
    do {                                                                                                 \
        const cudaError_t e_ = (call);                                                                   \
        if (e_ != cudaSuccess) {                                                                         \
            std::fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call, cudaGetErrorString(e_)); \
            std::exit(1);                                                                                \
        }                                                                                                \
    } while (0)

using Clock = std::chrono::steady_clock;

double ns_since(Clock::time_point t0) {
    return std::chrono::duration<double, std::nano>(Clock::now() - t0).count();
}

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    const std::size_t n = v.size();
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

constexpr std::size_t kCopyBytes = 64 * 1024;
constexpr int kQueries = 64;
constexpr int kCopies = 16;
constexpr int kAllocs = 16;
constexpr int kSpinIters = 20000;  // about 10 us of dependent arithmetic

volatile std::uint64_t sink;

double spin_ns() {
    const auto t0 = Clock::now();
    std::uint64_t x = 88172645463325252ull;
    for (int i = 0; i < kSpinIters; ++i) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
    }
    sink = x;
    return ns_since(t0);
}

}  // namespace

int main(int argc, char** argv) {
    const double seconds = argc > 1 ? std::atof(argv[1]) : 10.0;
    const int cpu = argc > 2 ? std::atoi(argv[2]) : -1;
    if (cpu >= 0) {
        cpu_set_t set;
        CPU_ZERO(&set);
        CPU_SET(cpu, &set);
        if (sched_setaffinity(0, sizeof(set), &set) != 0) {
            std::perror("sched_setaffinity");
            return 1;
        }
    }
    CHECK(cudaSetDevice(0));
    CHECK(cudaFree(nullptr));
    void* host = nullptr;
    void* dev = nullptr;
    CHECK(cudaMallocHost(&host, kCopyBytes));
    CHECK(cudaMalloc(&dev, kCopyBytes));
    std::memset(host, 0x5a, kCopyBytes);
    cudaStream_t idle;
    CHECK(cudaStreamCreateWithFlags(&idle, cudaStreamNonBlocking));
    std::printf("t_s,cpu,spin_ns,stream_query_ns,copy_h2d_64KiB_us,mallochost_us,freehost_us\n");
    const auto start = Clock::now();
    while (ns_since(start) < seconds * 1e9) {
        const double t = ns_since(start) / 1e9;
        std::vector<double> spin, query, copy, alloc, release;
        for (int i = 0; i < 8; ++i) spin.push_back(spin_ns());
        for (int i = 0; i < kQueries; ++i) {
            const auto t0 = Clock::now();
            CHECK(cudaStreamQuery(idle));
            query.push_back(ns_since(t0));
        }
        for (int i = 0; i < kCopies; ++i) {
            const auto t0 = Clock::now();
            CHECK(cudaMemcpy(dev, host, kCopyBytes, cudaMemcpyHostToDevice));
            copy.push_back(ns_since(t0) / 1e3);
        }
        for (int i = 0; i < kAllocs; ++i) {
            void* p = nullptr;
            const auto t0 = Clock::now();
            CHECK(cudaMallocHost(&p, kCopyBytes));
            alloc.push_back(ns_since(t0) / 1e3);
            const auto t1 = Clock::now();
            CHECK(cudaFreeHost(p));
            release.push_back(ns_since(t1) / 1e3);
        }
        std::printf("%.4f,%d,%.1f,%.1f,%.3f,%.3f,%.3f\n", t, sched_getcpu(), median(spin), median(query), median(copy),
                    median(alloc), median(release));
    }
    CHECK(cudaStreamDestroy(idle));
    CHECK(cudaFree(dev));
    CHECK(cudaFreeHost(host));
    return 0;
}
