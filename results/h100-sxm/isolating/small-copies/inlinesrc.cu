// Does the GPU read a small host-to-device copy's source at all? smallcopy.cu found that the
// call's CPU time grows with the size up to 24 KiB and drops at 28 KiB: the runtime copies the
// data into its command stream, and a copy engine reads larger copies from where they are. If
// so, a source the CPU has just written (its lines modified in the CPU's caches, which a GPU
// read finds slower: results/h100-sxm/isolating/host-cache-and-store-size) slows copies from
// 28 KiB on, where the GPU reads it, and not those up to 24 KiB, which the CPU reads from its
// own cache. Blocking cudaMemcpy host to device of pinned memory, with the source:
//   `dirty`:   rewritten by the CPU just before each copy;
//   `flushed`: rewritten, then written back and evicted (clflush each line, then mfence).
//
// Build: nvcc -O3 -arch=sm_90 inlinesrc.cu -o inlinesrc
// Run:   ./inlinesrc > inlinesrc.csv
//
// 20 warm-ups and 300 timed repetitions per cell, median, p10 and p90; the last copy verified.
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

constexpr std::size_t kKiB = 1024;
constexpr std::size_t kLine = 64;
constexpr int kWarmup = 20;
constexpr int kReps = 300;

void write_source(unsigned char* p, std::size_t n, unsigned seed) {
    for (std::size_t i = 0; i < n; ++i) p[i] = static_cast<unsigned char>((i * 131u + seed * 7u + 1u) & 0xff);
}

void flush(const unsigned char* p, std::size_t n) {
    for (std::size_t i = 0; i < n; i += kLine) _mm_clflush(p + i);
    _mm_mfence();
}

}  // namespace

int main() {
    CHECK(cudaSetDevice(0));
    const std::size_t sizes[] = {4 * kKiB, 16 * kKiB, 24 * kKiB, 28 * kKiB, 32 * kKiB, 64 * kKiB, 256 * kKiB, 1024 * kKiB};
    const std::size_t max = 1024 * kKiB;
    unsigned char* host = nullptr;
    unsigned char* back = nullptr;
    unsigned char* dev = nullptr;
    CHECK(cudaMallocHost(&host, max));
    CHECK(cudaMallocHost(&back, max));
    CHECK(cudaMalloc(&dev, max));
    std::printf("bytes,source,p10_us,median_us,p90_us\n");
    unsigned seed = 1;
    for (const std::size_t n : sizes) {
        for (const bool flushed : {false, true}) {
            std::vector<double> t;
            for (int rep = 0; rep < kWarmup + kReps; ++rep) {
                write_source(host, n, ++seed);
                if (flushed) flush(host, n);
                const auto t0 = std::chrono::steady_clock::now();
                CHECK(cudaMemcpy(dev, host, n, cudaMemcpyHostToDevice));
                const auto t1 = std::chrono::steady_clock::now();
                if (rep >= kWarmup) t.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count());
            }
            CHECK(cudaMemcpy(back, dev, n, cudaMemcpyDeviceToHost));
            if (std::memcmp(back, host, n) != 0) {
                std::fprintf(stderr, "verification failed: %zu bytes\n", n);
                return 1;
            }
            std::sort(t.begin(), t.end());
            const auto at = [&](double q) { return t[static_cast<std::size_t>(q * static_cast<double>(t.size() - 1) + 0.5)]; };
            std::printf("%zu,%s,%.4f,%.4f,%.4f\n", n, flushed ? "flushed" : "dirty", at(0.1), at(0.5), at(0.9));
            std::fflush(stdout);
        }
    }
    CHECK(cudaFree(dev));
    CHECK(cudaFreeHost(host));
    CHECK(cudaFreeHost(back));
    return 0;
}
