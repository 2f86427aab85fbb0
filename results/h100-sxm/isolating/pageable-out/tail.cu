// Is the copy into the GPU's extra time a cost per staged piece, or a slower copy? The runtime stages
// a pageable copy into the GPU in pieces of 64 KiB; a copy of k pieces and a few KiB more has one more
// piece, so it costs one piece's queuing more than its bytes' copy (watch.cu gives the copy-out's rate
// on the same machine). Per size: a pageable cudaMemcpy into the GPU and a synchronisation, as
// dmaprobe times it, back to back in a loop of 10 warm-ups and 300 repetitions, the source written and
// flushed once per size; the sizes interleaved over 3 rounds (each round every size once, a different
// order each round) so that a drift of the host over the run lands on all of them; medians.
//
// Build: nvcc -O3 -arch=sm_90 tail.cu -o tail
// Run:   ./tail > tail.csv   (round,bytes,p50_us,p10_us,p90_us)
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

constexpr int kWarm = 10;
constexpr int kReps = 300;
constexpr int kRounds = 3;

using Clock = std::chrono::steady_clock;
double us(Clock::time_point a, Clock::time_point b) { return std::chrono::duration<double, std::micro>(b - a).count(); }
std::uint32_t value(std::size_t i, std::uint32_t seed) { return static_cast<std::uint32_t>(i) * 2654435761u ^ seed; }

double quantile(std::vector<double> v, double q) {
    std::sort(v.begin(), v.end());
    return v[static_cast<std::size_t>(q * static_cast<double>(v.size() - 1) + 0.5)];
}

}  // namespace

int main() {
    constexpr std::size_t K = 1024;
    const std::vector<std::size_t> sizes = {256 * K, 260 * K, 272 * K, 288 * K, 320 * K, 1024 * K, 1028 * K, 1040 * K, 1088 * K};
    const std::size_t max = *std::max_element(sizes.begin(), sizes.end());
    CHECK(cudaSetDevice(0));
    CHECK(cudaFree(nullptr));
    std::uint32_t* dev = nullptr;
    CHECK(cudaMalloc(&dev, max));
    void* raw = nullptr;
    if (posix_memalign(&raw, 4096, max) != 0) return 1;
    auto* src = static_cast<std::uint32_t*>(raw);
    std::vector<std::uint32_t> check(max / 4);
    std::printf("round,bytes,p50_us,p10_us,p90_us\n");
    for (int round = 0; round < kRounds; ++round) {
        std::vector<std::size_t> order = sizes;
        std::rotate(order.begin(), order.begin() + (round * 4) % order.size(), order.end());
        if (round % 2) std::reverse(order.begin(), order.end());
        for (const std::size_t n : order) {
            const std::uint32_t seed = 0x1234567u + static_cast<std::uint32_t>(n) + static_cast<std::uint32_t>(round);
            for (std::size_t i = 0; i < n / 4; ++i) src[i] = value(i, seed);
            for (std::size_t i = 0; i < n; i += 64) _mm_clflush(reinterpret_cast<char*>(src) + i);
            _mm_mfence();
            std::vector<double> t;
            for (int rep = 0; rep < kWarm + kReps; ++rep) {
                const Clock::time_point t0 = Clock::now();
                CHECK(cudaMemcpy(dev, src, n, cudaMemcpyHostToDevice));
                CHECK(cudaDeviceSynchronize());
                const Clock::time_point t1 = Clock::now();
                if (rep >= kWarm) t.push_back(us(t0, t1));
            }
            CHECK(cudaMemcpy(check.data(), dev, n, cudaMemcpyDeviceToHost));
            for (std::size_t i = 0; i < n / 4; ++i) {
                if (check[i] != value(i, seed)) {
                    std::fprintf(stderr, "verification failed: %zu B word %zu\n", n, i);
                    return 1;
                }
            }
            std::printf("%d,%zu,%.3f,%.3f,%.3f\n", round, n, quantile(t, 0.5), quantile(t, 0.1), quantile(t, 0.9));
            std::fflush(stdout);
        }
    }
    std::free(raw);
    CHECK(cudaFree(dev));
    return 0;
}
