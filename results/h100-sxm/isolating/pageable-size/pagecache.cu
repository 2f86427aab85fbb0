// Is the 48-64 MiB step of pageable host-to-device copies the CPU's, not the driver's?
// (../README.md: H100 hosts 12-14 GB/s up to 48 MiB, 8-9 from 64 MiB on; device-to-host has no
// step; pagestep.cu found the driver staging through its buffers with a CPU copy at every size.)
// If the step is where the copying thread's source stops staying in the cache it can use from one
// repetition to the next, the same thread copying the same source into a small reused buffer,
// with no GPU at all, steps at the same size; and with the source flushed from the caches before
// every repetition there is no step, only the DRAM rate, at every size.
//
// For each size (8-128 MiB in steps of 8): one thread copies the source, written once, in 2 MiB
// pieces into a 4 MiB pinned ring (cudaMallocHost, as the runtime's staging buffers are):
//   `cpu_warm`: 2 warm-ups, then 10 timed repetitions of the same source (left in the caches);
//   `cpu_flushed`: the same, the source flushed (clflush, line by line) before each repetition;
//   `pageable_h2d`, `pageable_d2h`: cudaMemcpy of that source to (from) the GPU, 2 warm-ups and
//   10 timed repetitions, the source written once before (as dmaprobe's written-once mode; the
//   destination of the D2H is checked against what the H2D put on the GPU).
// Medians, GB/s; one row per size and case. The sizes run in a shuffled order (fixed seed) so
// that a slow stretch of the machine does not make a step.
//
// Build: nvcc -O3 -arch=sm_90 pagecache.cu -o pagecache
// Run:   ./pagecache > pagecache.csv
#include <cuda_runtime.h>
#include <immintrin.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
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

constexpr int kWarmup = 2;
constexpr int kReps = 10;
constexpr std::size_t kMiB = std::size_t{1} << 20;
constexpr std::size_t kMax = 128 * kMiB;
constexpr std::size_t kPiece = 2 * kMiB;  // the runtime's staging pieces are of this order
constexpr std::size_t kRing = 2 * kPiece;
constexpr std::size_t kLine = 64;

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

double now_s() {
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

void flush(const unsigned char* p, std::size_t n) {
    for (std::size_t i = 0; i < n; i += kLine) _mm_clflush(p + i);
    _mm_mfence();
}

// The staging copy as one thread does it: the source piece by piece into a reused ring.
void stage(unsigned char* ring, const unsigned char* src, std::size_t n) {
    std::size_t at = 0;
    for (std::size_t done = 0; done < n; done += kPiece) {
        const std::size_t k = std::min(kPiece, n - done);
        std::memcpy(ring + at, src + done, k);
        at = (at + kPiece) % kRing;
    }
}

}  // namespace

int main() {
    auto* src = static_cast<unsigned char*>(std::aligned_alloc(2 * kMiB, kMax));
    auto* back = static_cast<unsigned char*>(std::aligned_alloc(2 * kMiB, kMax));
    if (src == nullptr || back == nullptr) {
        std::fprintf(stderr, "cannot allocate %zu bytes twice\n", kMax);
        return 1;
    }
    unsigned char* ring = nullptr;
    CHECK(cudaMallocHost(&ring, kRing));
    unsigned char* dev = nullptr;
    CHECK(cudaMalloc(&dev, kMax));
    // Non-zero data that differs from byte to byte; written once, so every page is present.
    for (std::size_t i = 0; i < kMax; ++i) src[i] = static_cast<unsigned char>((i * 131 + 7) % 251 + 1);
    std::memset(back, 0, kMax);
    std::memset(ring, 0, kRing);

    std::vector<std::size_t> sizes;
    for (std::size_t s = 8 * kMiB; s <= kMax; s += 8 * kMiB) sizes.push_back(s);
    std::mt19937 rng(20261128);
    std::shuffle(sizes.begin(), sizes.end(), rng);

    std::printf("case,size_bytes,gbps,p10_gbps,p90_gbps\n");
    const auto report = [](const char* what, std::size_t n, std::vector<double> seconds) {
        std::vector<double> rates;
        for (const double s : seconds) rates.push_back(static_cast<double>(n) / s * 1e-9);
        std::sort(rates.begin(), rates.end());
        std::printf("%s,%zu,%.3f,%.3f,%.3f\n", what, n, median(rates), rates[rates.size() / 10],
                    rates[rates.size() - 1 - rates.size() / 10]);
        std::fflush(stdout);
    };
    for (const std::size_t n : sizes) {
        std::vector<double> warm, cold, h2d, d2h;
        for (int r = 0; r < kWarmup + kReps; ++r) {
            const double t0 = now_s();
            stage(ring, src, n);
            if (r >= kWarmup) warm.push_back(now_s() - t0);
        }
        for (int r = 0; r < kWarmup + kReps; ++r) {
            flush(src, n);
            const double t0 = now_s();
            stage(ring, src, n);
            if (r >= kWarmup) cold.push_back(now_s() - t0);
        }
        for (int r = 0; r < kWarmup + kReps; ++r) {
            const double t0 = now_s();
            CHECK(cudaMemcpy(dev, src, n, cudaMemcpyHostToDevice));
            if (r >= kWarmup) h2d.push_back(now_s() - t0);
        }
        for (int r = 0; r < kWarmup + kReps; ++r) {
            const double t0 = now_s();
            CHECK(cudaMemcpy(back, dev, n, cudaMemcpyDeviceToHost));
            if (r >= kWarmup) d2h.push_back(now_s() - t0);
        }
        if (std::memcmp(back, src, n) != 0) {
            std::fprintf(stderr, "size %zu: what came back differs from what was sent\n", n);
            return 1;
        }
        std::memset(back, 0, n);
        report("cpu_warm", n, warm);
        report("cpu_flushed", n, cold);
        report("pageable_h2d", n, h2d);
        report("pageable_d2h", n, d2h);
    }
    CHECK(cudaFree(dev));
    CHECK(cudaFreeHost(ring));
    std::free(src);
    std::free(back);
    return 0;
}
