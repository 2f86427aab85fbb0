// zero-page (README.md): what a pageable cudaMemcpy from never-touched memory pays, split into the
// read faults and the reading. A read fault of a private anonymous page maps the kernel's shared
// zero page, so every page of such a source is one physical page: the runtime's staging copy then
// reads one cached page whatever the size, where an old source past the CPU's cache comes from DRAM.
//   into the GPU (h2d), the source in one of four states:
//     fresh    a new mapping, never touched (dmaprobe's pageable-fresh)
//     zero     a new mapping whose every page the CPU read once first, untimed: every page maps the
//              zero page, so the copy takes no fault but reads what a fresh source reads
//     touched  a new mapping whose pages the CPU wrote one byte of each first, untimed: real pages
//     warm     one mapping, written once (non-zero), copied every repetition (dmaprobe's pageable)
//   out of the GPU (d2h), the destination fresh, touched or warm;
//   the CPU alone: memcpy from a zero-mapped or a warm source into a warm buffer.
// 64 KiB-256 MiB, 10 repetitions after 2 warm-ups, timed on the CPU around cudaMemcpy and a
// synchronisation (as dmaprobe), medians; every copy's data checked (first and last byte of each page).
//
// Build: nvcc -O3 -arch=sm_90 zeropage.cu -o zeropage
#include <cuda_runtime.h>
#include <sys/mman.h>

#include <algorithm>
#include <chrono>
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
constexpr int kWarm = 2;
constexpr int kReps = 10;
constexpr std::size_t kPage = 4096;
constexpr std::size_t kMaxBytes = std::size_t{256} << 20;
constexpr unsigned char kDeviceValue = 0x3C;
constexpr unsigned char kWarmValue = 0x11;

enum State { kFresh, kZero, kTouched, kWarmState };
const char* const kStateNames[] = {"fresh", "zero", "touched", "warm"};

unsigned char* map(std::size_t n) {
    void* m = ::mmap(nullptr, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED) {
        std::perror("mmap");
        std::exit(1);
    }
    return static_cast<unsigned char*>(m);
}

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    const std::size_t n = v.size();
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

// Reads every page once, so that each maps the zero page; the sum keeps the loads.
unsigned read_pages(const unsigned char* h, std::size_t n) {
    unsigned sum = 0;
    for (std::size_t p = 0; p < n; p += kPage) sum += *static_cast<const volatile unsigned char*>(h + p);
    return sum;
}

void write_pages(unsigned char* h, std::size_t n) {
    for (std::size_t p = 0; p < n; p += kPage) h[p] = kWarmValue;
}

// The first and last byte of every page of the device buffer hold `value` (copied back in pieces).
bool device_holds(const unsigned char* dev, std::size_t n, unsigned char value, std::vector<unsigned char>& probe) {
    probe.resize(n / kPage * 2);
    CHECK(cudaMemcpy2D(probe.data(), 1, dev, kPage, 1, n / kPage, cudaMemcpyDeviceToHost));
    CHECK(cudaMemcpy2D(probe.data() + n / kPage, 1, dev + kPage - 1, kPage, 1, n / kPage, cudaMemcpyDeviceToHost));
    return std::all_of(probe.begin(), probe.end(), [&](unsigned char b) { return b == value; });
}

bool host_holds(const unsigned char* h, std::size_t n, unsigned char value) {
    for (std::size_t p = 0; p < n; p += kPage) {
        if (h[p] != value || h[p + kPage - 1] != value) return false;
    }
    return true;
}

void print(const char* what, std::size_t n, const char* state, const std::vector<double>& t) {
    std::printf("%s,%zu,%s,%.2f,%.2f,%.2f\n", what, n, state, median(t), *std::min_element(t.begin(), t.end()),
                *std::max_element(t.begin(), t.end()));
    std::fflush(stdout);
}

}  // namespace

int main() {
    const std::size_t sizes[] = {64u << 10, 256u << 10, 1u << 20, 4u << 20, 16u << 20, 64u << 20, kMaxBytes};
    unsigned char* dev = nullptr;
    CHECK(cudaMalloc(&dev, kMaxBytes));
    std::vector<unsigned char> probe;
    unsigned sink = 0;
    std::printf("what,bytes,state,us_median,us_min,us_max\n");
    for (const std::size_t n : sizes) {
        for (int state = kFresh; state <= kWarmState; ++state) {
            unsigned char* warm = state == kWarmState ? map(n) : nullptr;
            if (warm != nullptr) std::memset(warm, kWarmValue, n);
            const unsigned char expect = state == kWarmState ? kWarmValue : 0;  // new pages read as zero
            std::vector<double> t;
            for (int rep = 0; rep < kWarm + kReps; ++rep) {
                unsigned char* h = warm != nullptr ? warm : map(n);
                if (state == kZero) sink += read_pages(h, n);
                if (state == kTouched) {
                    for (std::size_t p = 0; p < n; p += kPage) h[p] = 0;  // faults in a real page, value 0
                }
                CHECK(cudaMemset(dev, 0xA5, n));
                CHECK(cudaDeviceSynchronize());
                const auto t0 = Clock::now();
                CHECK(cudaMemcpy(dev, h, n, cudaMemcpyHostToDevice));
                CHECK(cudaDeviceSynchronize());
                const double us = std::chrono::duration<double, std::micro>(Clock::now() - t0).count();
                if (!device_holds(dev, n, expect, probe)) {
                    std::fprintf(stderr, "h2d %zu %s: wrong data\n", n, kStateNames[state]);
                    return 1;
                }
                if (warm == nullptr) ::munmap(h, n);
                if (rep >= kWarm) t.push_back(us);
            }
            if (warm != nullptr) ::munmap(warm, n);
            print("h2d", n, kStateNames[state], t);
        }
    }
    CHECK(cudaMemset(dev, kDeviceValue, kMaxBytes));
    CHECK(cudaDeviceSynchronize());
    for (const std::size_t n : sizes) {
        for (const int state : {kFresh, kTouched, kWarmState}) {
            unsigned char* warm = state == kWarmState ? map(n) : nullptr;
            if (warm != nullptr) std::memset(warm, kWarmValue, n);
            std::vector<double> t;
            for (int rep = 0; rep < kWarm + kReps; ++rep) {
                unsigned char* h = warm != nullptr ? warm : map(n);
                if (state == kTouched) write_pages(h, n);
                const auto t0 = Clock::now();
                CHECK(cudaMemcpy(h, dev, n, cudaMemcpyDeviceToHost));
                CHECK(cudaDeviceSynchronize());
                const double us = std::chrono::duration<double, std::micro>(Clock::now() - t0).count();
                if (!host_holds(h, n, kDeviceValue)) {
                    std::fprintf(stderr, "d2h %zu %s: wrong data\n", n, kStateNames[state]);
                    return 1;
                }
                if (warm == nullptr) ::munmap(h, n);
                if (rep >= kWarm) t.push_back(us);
            }
            if (warm != nullptr) ::munmap(warm, n);
            print("d2h", n, kStateNames[state], t);
        }
    }
    // The CPU alone: one thread's memcpy from a zero-mapped source (mapped once, read once) and
    // from a warm one, into a warm destination.
    unsigned char* dst = map(kMaxBytes);
    std::memset(dst, 0x22, kMaxBytes);
    for (const std::size_t n : sizes) {
        for (const int state : {kZero, kWarmState}) {
            unsigned char* src = map(n);
            if (state == kZero) {
                sink += read_pages(src, n);
            } else {
                std::memset(src, kWarmValue, n);
            }
            std::vector<double> t;
            for (int rep = 0; rep < kWarm + kReps; ++rep) {
                const auto t0 = Clock::now();
                std::memcpy(dst, src, n);
                const double us = std::chrono::duration<double, std::micro>(Clock::now() - t0).count();
                if (dst[0] != (state == kZero ? 0 : kWarmValue) || dst[n - 1] != dst[0]) {
                    std::fprintf(stderr, "memcpy %zu %s: wrong data\n", n, kStateNames[state]);
                    return 1;
                }
                if (rep >= kWarm) t.push_back(us);
            }
            ::munmap(src, n);
            print("memcpy", n, kStateNames[state], t);
        }
    }
    std::fprintf(stderr, "done (%u)\n", sink);
    return 0;
}
