// What changes at 48-64 MiB in a pageable host-to-device copy? (H100: 12-14 GB/s up to 48 MiB,
// 8-9 from 64 MiB on, on every lease; device-to-host has no step; ../README.md.) If the driver
// stops staging the copy through its pinned buffers (a CPU memcpy, user time) and pins the
// user's pages to copy from them directly (the kernel's page pinning and IOMMU mapping, system
// time), the CPU's user and system time split differently across the step, and a source in
// 2 MiB pages (fewer pages to pin) moves the large copies and not the small ones.
// For each size (32-72 MiB in steps of 4, then 96 and 128) and each source (4 KiB pages:
// madvise MADV_NOHUGEPAGE; 2 MiB pages: MADV_HUGEPAGE, 2 MiB aligned), both directions: a
// blocking cudaMemcpy from (to) pageable memory, 2 warm-ups and 10 timed repetitions, wall time
// and the process's user and system CPU time per copy (getrusage), medians. The source is
// written once before the warm-ups (as dmaprobe's written-once mode); the device-to-host copies
// bring back what the host-to-device ones of the same size put there, compared with the source.
//
// Build: nvcc -O3 -arch=sm_90 pagestep.cu -o pagestep
// Run:   ./pagestep > pagestep.csv
#include <cuda_runtime.h>
#include <sys/mman.h>
#include <sys/resource.h>

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

constexpr int kWarmup = 2;
constexpr int kReps = 10;
constexpr std::size_t kMiB = std::size_t{1} << 20;
constexpr std::size_t kMax = 128 * kMiB;
constexpr std::size_t kHuge = 2 * kMiB;

double cpu_us(const rusage& a, const rusage& b, bool user) {
    const timeval& x = user ? a.ru_utime : a.ru_stime;
    const timeval& y = user ? b.ru_utime : b.ru_stime;
    return (static_cast<double>(y.tv_sec - x.tv_sec) * 1e6) + static_cast<double>(y.tv_usec - x.tv_usec);
}

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

unsigned char* host_buffer(bool huge) {
    void* p = std::aligned_alloc(kHuge, kMax);
    if (p == nullptr) {
        std::fprintf(stderr, "cannot allocate %zu bytes\n", kMax);
        std::exit(1);
    }
    if (madvise(p, kMax, huge ? MADV_HUGEPAGE : MADV_NOHUGEPAGE) != 0) {
        std::perror("madvise");
        std::exit(1);
    }
    return static_cast<unsigned char*>(p);
}

// How much of the buffer the kernel backs with huge pages (AnonHugePages of this process).
long anon_huge_kib() {
    FILE* f = std::fopen("/proc/self/smaps_rollup", "r");
    if (f == nullptr) return -1;
    char line[256];
    long kib = -1;
    while (std::fgets(line, sizeof line, f) != nullptr) {
        if (std::sscanf(line, "AnonHugePages: %ld kB", &kib) == 1) break;
    }
    std::fclose(f);
    return kib;
}

}  // namespace

int main() {
    CHECK(cudaSetDevice(0));
    unsigned char* dev = nullptr;
    CHECK(cudaMalloc(&dev, kMax));
    std::printf("pages,dir,bytes,wall_us,gbps,user_us,sys_us,anon_huge_kib,reps\n");
    for (const bool huge : {false, true}) {
        unsigned char* host = host_buffer(huge);
        unsigned char* back = host_buffer(huge);
        for (std::size_t i = 0; i < kMax; ++i) host[i] = static_cast<unsigned char>((i * 131u + 7u) % 251u + 1u);
        std::memset(back, 0, kMax);
        const long huge_kib = anon_huge_kib();
        std::vector<std::size_t> sizes;
        for (std::size_t m = 32; m <= 72; m += 4) sizes.push_back(m * kMiB);
        sizes.push_back(96 * kMiB);
        sizes.push_back(128 * kMiB);
        for (const std::size_t n : sizes) {
            for (const bool h2d : {true, false}) {
                std::vector<double> wall, user, sys;
                for (int r = 0; r < kWarmup + kReps; ++r) {
                    CHECK(cudaDeviceSynchronize());
                    rusage a{}, b{};
                    getrusage(RUSAGE_SELF, &a);
                    const auto t0 = std::chrono::steady_clock::now();
                    if (h2d) {
                        CHECK(cudaMemcpy(dev, host, n, cudaMemcpyHostToDevice));
                    } else {
                        CHECK(cudaMemcpy(back, dev, n, cudaMemcpyDeviceToHost));
                    }
                    const double us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count();
                    getrusage(RUSAGE_SELF, &b);
                    if (r < kWarmup) continue;
                    wall.push_back(us);
                    user.push_back(cpu_us(a, b, true));
                    sys.push_back(cpu_us(a, b, false));
                }
                if (!h2d && std::memcmp(host, back, n) != 0) {
                    std::fprintf(stderr, "verification failed: %s pages, %zu bytes\n", huge ? "2 MiB" : "4 KiB", n);
                    return 1;
                }
                const double w = median(wall);
                std::printf("%s,%s,%zu,%.1f,%.2f,%.1f,%.1f,%ld,%d\n", huge ? "2MiB" : "4KiB", h2d ? "h2d" : "d2h", n, w,
                            static_cast<double>(n) / (w * 1e3), median(user), median(sys), huge_kib, kReps);
                std::fflush(stdout);
            }
        }
        std::free(host);
        std::free(back);
    }
    CHECK(cudaFree(dev));
    return 0;
}
