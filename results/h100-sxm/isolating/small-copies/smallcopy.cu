// Where does a small pinned copy spend its time? The main plan's blocking host-to-device copies
// take longer at 16 KiB than at 64 KiB on both lent machines, and grow by about 3.4 us from 4 B
// to 16 KiB (about 5 GB/s), where device-to-host copies grow by 0.3 us. If the runtime carries
// small host-to-device copies in its command stream (the CPU writing the data there, the GPU's
// front end reading it back), the CPU's time in an asynchronous call grows with the size up to
// some threshold and then drops; if the copy engine's path is slower for small sizes, the
// GPU-side time grows instead. For each size and direction this measures:
//   `blocking`: cudaMemcpy, from the call to its return (what dmaprobe's pinned rows time);
//   `call`:     the CPU's time inside cudaMemcpyAsync on an idle stream;
//   `gpu`:      the copy on the GPU: events around cudaMemcpyAsync on a stream held by a spin
//               kernel until the calls are queued (the CPU's calls fall outside).
//
// Build: nvcc -O3 -arch=sm_90 smallcopy.cu -o smallcopy
// Run:   ./smallcopy > smallcopy.csv
//
// 20 warm-ups and 200 timed repetitions per cell, median, p10 and p90; every copy's data
// verified at the end of its cell.
#include <cuda_runtime.h>

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

constexpr std::size_t kKiB = 1024;
constexpr std::size_t kMax = 256 * kKiB;
constexpr int kWarmup = 20;
constexpr int kReps = 200;
constexpr unsigned long long kHoldNs = 50'000;

__global__ void spin_kernel(unsigned long long ns) {
    unsigned long long t0;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
    for (;;) {
        unsigned long long t;
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
        if (t - t0 >= ns) break;
    }
}

using Clock = std::chrono::steady_clock;

struct Stats {
    double p10, median, p90;
};

Stats stats(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    const auto at = [&](double q) { return v[static_cast<std::size_t>(q * static_cast<double>(v.size() - 1) + 0.5)]; };
    return {at(0.1), at(0.5), at(0.9)};
}

void fill(unsigned char* p, std::size_t n, unsigned seed) {
    for (std::size_t i = 0; i < n; ++i) p[i] = static_cast<unsigned char>((i * 131u + seed * 7u + 1u) & 0xff);
}

}  // namespace

int main() {
    CHECK(cudaSetDevice(0));
    unsigned char* host = nullptr;
    unsigned char* back = nullptr;
    unsigned char* dev = nullptr;
    CHECK(cudaMallocHost(&host, kMax));
    CHECK(cudaMallocHost(&back, kMax));
    CHECK(cudaMalloc(&dev, kMax));
    cudaStream_t s;
    CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    cudaEvent_t a, b;
    CHECK(cudaEventCreate(&a));
    CHECK(cudaEventCreate(&b));
    const std::size_t sizes[] = {4, 64, 256, 1 * kKiB, 2 * kKiB, 4 * kKiB, 6 * kKiB, 8 * kKiB, 12 * kKiB,
                                 16 * kKiB, 20 * kKiB, 24 * kKiB, 28 * kKiB, 32 * kKiB, 36 * kKiB, 40 * kKiB,
                                 48 * kKiB, 56 * kKiB, 60 * kKiB, 64 * kKiB, 68 * kKiB, 80 * kKiB, 96 * kKiB,
                                 128 * kKiB, 192 * kKiB, 256 * kKiB};
    std::printf("dir,bytes,what,p10_us,median_us,p90_us\n");
    unsigned seed = 1;
    for (const int h2d : {1, 0}) {
        const cudaMemcpyKind kind = h2d ? cudaMemcpyHostToDevice : cudaMemcpyDeviceToHost;
        for (const std::size_t n : sizes) {
            void* dst = h2d ? static_cast<void*>(dev) : static_cast<void*>(back);
            const void* src = h2d ? static_cast<const void*>(host) : static_cast<const void*>(dev);
            ++seed;
            if (h2d) {
                fill(host, n, seed);
            } else {
                fill(host, n, seed);
                CHECK(cudaMemcpy(dev, host, n, cudaMemcpyHostToDevice));
            }
            std::vector<double> blocking, call, gpu;
            for (int rep = 0; rep < kWarmup + kReps; ++rep) {
                const bool timed = rep >= kWarmup;
                const auto t0 = Clock::now();
                CHECK(cudaMemcpy(dst, src, n, kind));
                const auto t1 = Clock::now();
                if (timed) blocking.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count());
            }
            for (int rep = 0; rep < kWarmup + kReps; ++rep) {
                const bool timed = rep >= kWarmup;
                const auto t0 = Clock::now();
                CHECK(cudaMemcpyAsync(dst, src, n, kind, s));
                const auto t1 = Clock::now();
                CHECK(cudaStreamSynchronize(s));
                if (timed) call.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count());
            }
            for (int rep = 0; rep < kWarmup + kReps; ++rep) {
                const bool timed = rep >= kWarmup;
                spin_kernel<<<1, 1, 0, s>>>(kHoldNs);
                CHECK(cudaGetLastError());
                CHECK(cudaEventRecord(a, s));
                CHECK(cudaMemcpyAsync(dst, src, n, kind, s));
                CHECK(cudaEventRecord(b, s));
                CHECK(cudaEventSynchronize(b));
                float ms = 0;
                CHECK(cudaEventElapsedTime(&ms, a, b));
                if (timed) gpu.push_back(ms * 1000.0);
            }
            // What was copied last is what the source holds.
            if (h2d) {
                CHECK(cudaMemcpy(back, dev, n, cudaMemcpyDeviceToHost));
            }
            if (std::memcmp(back, host, n) != 0) {
                std::fprintf(stderr, "verification failed: %s %zu bytes\n", h2d ? "h2d" : "d2h", n);
                return 1;
            }
            const char* dir = h2d ? "h2d" : "d2h";
            for (const auto& [what, v] : {std::pair<const char*, std::vector<double>*>{"blocking", &blocking},
                                          {"call", &call}, {"gpu", &gpu}}) {
                const Stats st = stats(*v);
                std::printf("%s,%zu,%s,%.4f,%.4f,%.4f\n", dir, n, what, st.p10, st.median, st.p90);
            }
            std::fflush(stdout);
        }
    }
    CHECK(cudaEventDestroy(a));
    CHECK(cudaEventDestroy(b));
    CHECK(cudaStreamDestroy(s));
    CHECK(cudaFree(dev));
    CHECK(cudaFreeHost(host));
    CHECK(cudaFreeHost(back));
    return 0;
}
