// How does the CUDA runtime stage a pageable copy: one piece after another (the CPU copies a
// piece into a pinned buffer, then an engine moves it), or the CPU's copy of one piece beside the
// engine's move of the one before? The model stages through `pageable.bounce_size` (2 MiB, no
// source) buffers, so up to 2 MiB it adds the CPU's copy and the DMA one after the other; the main
// plan's pageable copies into the GPU of 256 KiB and 1 MiB come out 20-22 % slower in the model on
// the H100, and those out of it of 4 MiB-1 GiB 9-12 %.
//
// Per direction and size, three kinds of blocking transfer of the same buffers, each kind in its
// own loop of repetitions:
//   `pageable`: cudaMemcpy between a pageable (malloc'd, touched) buffer and GPU memory;
//   `cpu`:      memcpy between that pageable buffer and a pinned one of the same size (the CPU's
//               part alone: into the GPU from the pageable source, out of it into the pageable
//               destination);
//   `pinned`:   cudaMemcpy between the pinned buffer and GPU memory (the engine's part alone).
// With one piece after another, pageable ~ cpu + pinned; with the two overlapped in pieces of P,
// pageable ~ max(cpu, pinned) + the other's share of one piece.
// The pageable source into the GPU is written and flushed from the CPU's caches once per size, as
// dmaprobe does (--flush-host-data); the copies bring it back into the caches as they read it.
//
// Build: nvcc -O3 -arch=sm_90 pieces.cu -o pieces
// Run:   ./pieces > pieces.csv
// 3 warm-ups and 20 repetitions per cell, medians and p10/p90; the last copy of each cell verified.
#include <cuda_runtime.h>
#include <immintrin.h>

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

constexpr int kWarm = 3;
constexpr int kReps = 20;

using Clock = std::chrono::steady_clock;
double us(Clock::time_point a, Clock::time_point b) { return std::chrono::duration<double, std::micro>(b - a).count(); }

std::uint32_t value(std::size_t i, std::uint32_t seed) { return static_cast<std::uint32_t>(i) * 2654435761u ^ seed; }

__global__ void fill_kernel(std::uint32_t* p, std::size_t words, std::uint32_t seed) {
    for (std::size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < words; i += std::size_t{gridDim.x} * blockDim.x) {
        p[i] = static_cast<std::uint32_t>(i) * 2654435761u ^ seed;
    }
}

void flush(const void* p, std::size_t n) {
    const char* c = static_cast<const char*>(p);
    for (std::size_t i = 0; i < n; i += 64) _mm_clflush(c + i);
    _mm_mfence();
}

struct Stats {
    double p10, p50, p90;
};
Stats stats(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    const std::size_t n = v.size();
    return {v[n / 10], n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]), v[n * 9 / 10]};
}

}  // namespace

int main() {
    const std::size_t sizes[] = {4u << 10, 8u << 10, 16u << 10, 32u << 10, 64u << 10, 96u << 10, 128u << 10, 192u << 10, 256u << 10, 384u << 10, 512u << 10,
                                 768u << 10, 1u << 20,  3u << 19,   2u << 20,   3u << 20,   4u << 20,   6u << 20,   8u << 20, 16u << 20};
    constexpr std::size_t kMax = 16u << 20;
    CHECK(cudaSetDevice(0));
    CHECK(cudaFree(nullptr));
    std::uint32_t* dev = nullptr;
    std::uint32_t* pinned = nullptr;
    CHECK(cudaMalloc(&dev, kMax));
    CHECK(cudaHostAlloc(reinterpret_cast<void**>(&pinned), kMax, cudaHostAllocDefault));
    void* raw = nullptr;
    if (posix_memalign(&raw, 4096, kMax) != 0) {
        std::fprintf(stderr, "posix_memalign failed\n");
        return 1;
    }
    auto* pageable = static_cast<std::uint32_t*>(raw);
    std::memset(pageable, 0, kMax);  // touched: no first-touch faults in the timed copies
    std::printf("direction,bytes,pageable_us,cpu_us,pinned_us,pageable_p10,pageable_p90,cpu_p10,cpu_p90,pinned_p10,pinned_p90\n");
    for (const bool into_gpu : {true, false}) {
        for (const std::size_t n : sizes) {
            const std::size_t words = n / 4;
            const std::uint32_t seed = 0x5bd1e995u + static_cast<std::uint32_t>(n) + (into_gpu ? 0u : 0x9e3779b9u);
            if (into_gpu) {
                for (std::size_t i = 0; i < words; ++i) pageable[i] = value(i, seed);
                flush(pageable, n);
            } else {
                fill_kernel<<<264, 256>>>(dev, words, seed);
                CHECK(cudaGetLastError());
                CHECK(cudaDeviceSynchronize());
            }
            // Each kind in a loop of its own, as dmaprobe runs a case: the buffers' state in the
            // CPU's caches is what that kind's repetitions leave, not what another kind's do.
            std::vector<double> tp, tc, tn;
            const auto timed = [&](std::vector<double>& into, auto&& transfer) {
                for (int rep = 0; rep < kWarm + kReps; ++rep) {
                    const Clock::time_point t0 = Clock::now();
                    transfer();
                    const Clock::time_point t1 = Clock::now();
                    if (rep >= kWarm) into.push_back(us(t0, t1));
                }
            };
            if (into_gpu) {
                timed(tp, [&] { CHECK(cudaMemcpy(dev, pageable, n, cudaMemcpyHostToDevice)); });
                flush(pageable, n);
                timed(tc, [&] { std::memcpy(pinned, pageable, n); });
                flush(pinned, n);  // written by the CPU just now: clean it, as a pinned source is
                timed(tn, [&] { CHECK(cudaMemcpy(dev, pinned, n, cudaMemcpyHostToDevice)); });
            } else {
                timed(tp, [&] { CHECK(cudaMemcpy(pageable, dev, n, cudaMemcpyDeviceToHost)); });
                CHECK(cudaMemcpy(pinned, dev, n, cudaMemcpyDeviceToHost));
                timed(tc, [&] { std::memcpy(pageable, pinned, n); });
                flush(pageable, n);
                timed(tn, [&] { CHECK(cudaMemcpy(pinned, dev, n, cudaMemcpyDeviceToHost)); });
            }
            // Into the GPU the device holds the source; out of it a last pageable copy brings it.
            std::vector<std::uint32_t> check(words);
            if (into_gpu) {
                CHECK(cudaMemcpy(check.data(), dev, n, cudaMemcpyDeviceToHost));
            } else {
                CHECK(cudaMemcpy(pageable, dev, n, cudaMemcpyDeviceToHost));
                std::memcpy(check.data(), pageable, n);
            }
            for (std::size_t i = 0; i < words; ++i) {
                if (check[i] != value(i, seed)) {
                    std::fprintf(stderr, "verification failed: %s %zu B word %zu\n", into_gpu ? "h2d" : "d2h", n, i);
                    return 1;
                }
            }
            const Stats p = stats(tp), c = stats(tc), q = stats(tn);
            std::printf("%s,%zu,%.3f,%.3f,%.3f,%.3f,%.3f,%.3f,%.3f,%.3f,%.3f\n", into_gpu ? "h2d" : "d2h", n, p.p50, c.p50, q.p50,
                        p.p10, p.p90, c.p10, c.p90, q.p10, q.p90);
            std::fflush(stdout);
        }
    }
    std::free(raw);
    return 0;
}
