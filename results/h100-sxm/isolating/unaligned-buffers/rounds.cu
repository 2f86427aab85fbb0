// unaligned-buffers (README.md), rounds: a pageable copy out of the GPU into a destination OFF bytes
// past a page, OFF = 0, 1, 2, 4, 8, 16, 32, 64, every offset timed once a round right after an
// untimed copy of its own, the offsets' order rotated from round to round, 25 rounds after 2
// warm-up rounds, 1 MiB and 16 MiB; medians. Host time around cudaMemcpy and a synchronisation, as
// dmaprobe; what came back checked. A state of the host that lasts a few hundred milliseconds then
// falls on every offset alike, where timing one offset after another puts it on a few.
//
// Build: nvcc -O3 -arch=sm_90 rounds.cu -o rounds
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
constexpr int kWarmRounds = 2;
constexpr int kRounds = 25;
constexpr std::size_t kPage = 4096;
constexpr std::size_t kOffsets[] = {0, 1, 2, 4, 8, 16, 32, 64};
constexpr std::size_t kCount = sizeof(kOffsets) / sizeof(kOffsets[0]);

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    const std::size_t n = v.size();
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

}  // namespace

int main() {
    const std::size_t sizes[] = {std::size_t{1} << 20, std::size_t{16} << 20};
    const std::size_t max = sizes[1];
    void* m = ::mmap(nullptr, max + 2 * kPage, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED) {
        std::perror("mmap");
        return 1;
    }
    auto* base = static_cast<unsigned char*>(m);
    std::memset(base, 0x11, max + 2 * kPage);
    unsigned char* dev = nullptr;
    CHECK(cudaMalloc(&dev, max));
    CHECK(cudaMemset(dev, 0x3C, max));
    CHECK(cudaDeviceSynchronize());
    std::printf("bytes,offset,us_median,us_min,us_max,rounds\n");
    for (const std::size_t n : sizes) {
        std::vector<std::vector<double>> t(kCount);
        for (int round = 0; round < kWarmRounds + kRounds; ++round) {
            for (std::size_t j = 0; j < kCount; ++j) {
                const std::size_t k = (j + static_cast<std::size_t>(round)) % kCount;
                unsigned char* h = base + kOffsets[k];
                CHECK(cudaMemcpy(h, dev, n, cudaMemcpyDeviceToHost));  // untimed: the copy before is its own kind
                const auto t0 = Clock::now();
                CHECK(cudaMemcpy(h, dev, n, cudaMemcpyDeviceToHost));
                CHECK(cudaDeviceSynchronize());
                const double us = std::chrono::duration<double, std::micro>(Clock::now() - t0).count();
                if (h[0] != 0x3C || h[n - 1] != 0x3C) {
                    std::fprintf(stderr, "%zu +%zu: wrong data\n", n, kOffsets[k]);
                    return 1;
                }
                h[0] = 0x11;
                h[n - 1] = 0x11;
                if (round >= kWarmRounds) t[k].push_back(us);
            }
        }
        for (std::size_t k = 0; k < kCount; ++k) {
            std::printf("%zu,%zu,%.3f,%.3f,%.3f,%d\n", n, kOffsets[k], median(t[k]), *std::min_element(t[k].begin(), t[k].end()),
                        *std::max_element(t[k].begin(), t[k].end()), kRounds);
        }
        std::fflush(stdout);
    }
    std::fprintf(stderr, "done\n");
    return 0;
}
