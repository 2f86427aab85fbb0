// Why does cudaMallocHost cost more per page for large allocations than the calibration's
// per-page cost, fitted to allocations of up to 4 MiB, gives? On the 2xH200 main plan 16 MiB-1 GiB
// take 360-490 us a MiB where 2-4 MiB take 290-340 (the model 40-57 % fast there); on the H100
// 430 a MiB at 2-8 MiB and 445-540 from 16 MiB on. cudaHostRegister of memory already in place
// grows about linearly on both. So: is it the pages' first touch (fault and zeroing), which grows
// with the allocation against the caches, or the pinning and mapping?
//
// Per size (2 MiB to 1 GiB), each case in its own loop of repetitions, medians and p10/p90:
//   mallochost:  cudaMallocHost(size)              (then cudaFreeHost, timed as `freehost`)
//   fault:       mmap of anonymous memory in 4 KiB pages (MADV_NOHUGEPAGE), then one store to
//                each page: the kernel's fault and zeroing of every page
//   fault_thp:   the same with MADV_HUGEPAGE (2 MiB pages where the kernel has them)
//   populate:    mmap with MAP_POPULATE, 4 KiB pages: the zeroing without a trap per page
//   rewrite:     memset of the faulted region again: the CPU's store rate at that size
//   register:    cudaHostRegister of the faulted region (pin and map pages already in place)
//   unregister:  cudaHostUnregister of it
// Every allocation is verified: a pinned one by a copy into the GPU and back of its first and last
// page, each mmap'd one by reading back the stores.
//
// Build: nvcc -O3 -arch=sm_90 alloc.cu -o alloc
// Run:   ./alloc > alloc.csv
#include <cuda_runtime.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
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

constexpr std::size_t kPage = 4096;
using Clock = std::chrono::steady_clock;
double us(Clock::time_point a, Clock::time_point b) { return std::chrono::duration<double, std::micro>(b - a).count(); }

struct Stats {
    double median, p10, p90;
};
Stats stats(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    const auto at = [&](double q) { return v[static_cast<std::size_t>(q * static_cast<double>(v.size() - 1) + 0.5)]; };
    return {at(0.5), at(0.1), at(0.9)};
}

void fail(const char* what, std::size_t size) {
    std::fprintf(stderr, "verification failed: %s at %zu bytes\n", what, size);
    std::exit(1);
}

void* map(std::size_t size, int flags, int advice) {
    void* p = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | flags, -1, 0);
    if (p == MAP_FAILED) {
        std::perror("mmap");
        std::exit(1);
    }
    if (advice >= 0 && madvise(p, size, advice) != 0) {
        std::perror("madvise");
        std::exit(1);
    }
    return p;
}

void touch(void* p, std::size_t size, std::uint8_t v) {
    auto* c = static_cast<volatile std::uint8_t*>(p);
    for (std::size_t i = 0; i < size; i += kPage) c[i] = v;
}

void check_touched(const void* p, std::size_t size, std::uint8_t v) {
    const auto* c = static_cast<const std::uint8_t*>(p);
    for (std::size_t i = 0; i < size; i += kPage) {
        if (c[i] != v || (i + 1 < size && c[i + 1] != 0)) fail("touched page", size);
    }
}

// A pinned allocation works: its first and last page go into the GPU and back.
void check_pinned(void* p, std::size_t size, void* dev) {
    auto* c = static_cast<std::uint8_t*>(p);
    for (std::size_t off : {std::size_t{0}, size - kPage}) {
        for (std::size_t i = 0; i < kPage; ++i) c[off + i] = static_cast<std::uint8_t>(i * 7 + off / kPage + 1);
        CHECK(cudaMemcpy(dev, c + off, kPage, cudaMemcpyHostToDevice));
        std::memset(c + off, 0, kPage);
        CHECK(cudaMemcpy(c + off, dev, kPage, cudaMemcpyDeviceToHost));
        for (std::size_t i = 0; i < kPage; ++i) {
            if (c[off + i] != static_cast<std::uint8_t>(i * 7 + off / kPage + 1)) fail("pinned page round trip", size);
        }
    }
}

void row(const char* name, std::size_t size, const std::vector<double>& v) {
    const Stats s = stats(v);
    std::printf("%s,%zu,%.3f,%.3f,%.3f,%zu\n", name, size, s.median, s.p10, s.p90, v.size());
    std::fflush(stdout);
}

}  // namespace

int main() {
    CHECK(cudaSetDevice(0));
    CHECK(cudaFree(nullptr));
    void* dev = nullptr;
    CHECK(cudaMalloc(&dev, kPage));
    std::vector<std::size_t> sizes;
    for (std::size_t mib : {2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64, 96, 128, 256, 512, 1024}) sizes.push_back(mib << 20);
    std::printf("case,size_bytes,median_us,p10_us,p90_us,repetitions\n");
    for (const std::size_t size : sizes) {
        const int reps = size >= (std::size_t{128} << 20) ? 5 : 11;
        std::vector<double> malloc_t, free_t, fault_t, thp_t, pop_t, rewrite_t, reg_t, unreg_t;
        for (int r = 0; r <= reps; ++r) {  // r == 0 warms up
            void* p = nullptr;
            auto t0 = Clock::now();
            CHECK(cudaMallocHost(&p, size));
            auto t1 = Clock::now();
            check_pinned(p, size, dev);
            auto t2 = Clock::now();
            CHECK(cudaFreeHost(p));
            auto t3 = Clock::now();
            if (r > 0) malloc_t.push_back(us(t0, t1)), free_t.push_back(us(t2, t3));
        }
        for (int r = 0; r <= reps; ++r) {
            void* p = map(size, 0, MADV_NOHUGEPAGE);
            auto t0 = Clock::now();
            touch(p, size, static_cast<std::uint8_t>(r + 1));
            auto t1 = Clock::now();
            check_touched(p, size, static_cast<std::uint8_t>(r + 1));
            auto t2 = Clock::now();
            std::memset(p, r + 2, size);
            auto t3 = Clock::now();
            if (static_cast<const std::uint8_t*>(p)[size - 1] != static_cast<std::uint8_t>(r + 2)) fail("rewrite", size);
            auto t4 = Clock::now();
            CHECK(cudaHostRegister(p, size, cudaHostRegisterDefault));
            auto t5 = Clock::now();
            check_pinned(p, size, dev);
            auto t6 = Clock::now();
            CHECK(cudaHostUnregister(p));
            auto t7 = Clock::now();
            munmap(p, size);
            if (r > 0) {
                fault_t.push_back(us(t0, t1));
                rewrite_t.push_back(us(t2, t3));
                reg_t.push_back(us(t4, t5));
                unreg_t.push_back(us(t6, t7));
            }
        }
        for (int r = 0; r <= reps; ++r) {
            void* p = map(size, 0, MADV_HUGEPAGE);
            auto t0 = Clock::now();
            touch(p, size, static_cast<std::uint8_t>(r + 1));
            auto t1 = Clock::now();
            check_touched(p, size, static_cast<std::uint8_t>(r + 1));
            munmap(p, size);
            if (r > 0) thp_t.push_back(us(t0, t1));
        }
        for (int r = 0; r <= reps; ++r) {
            auto t0 = Clock::now();
            void* p = map(size, MAP_POPULATE, -1);
            auto t1 = Clock::now();
            check_touched(p, size, 0);
            munmap(p, size);
            if (r > 0) pop_t.push_back(us(t0, t1));
        }
        row("mallochost", size, malloc_t);
        row("freehost", size, free_t);
        row("fault", size, fault_t);
        row("fault_thp", size, thp_t);
        row("populate", size, pop_t);
        row("rewrite", size, rewrite_t);
        row("register", size, reg_t);
        row("unregister", size, unreg_t);
    }
    CHECK(cudaFree(dev));
    return 0;
}
