// offset-copy-out (README.md): why a pageable copy out of the GPU into a buffer 1 byte off a page
// is a quarter slower (the main plans' offset-1B rows) while 64 bytes off and every copy into the
// GPU are not. Against the destination's offset (0, 1, 64 and 4096 bytes into a page-aligned
// buffer), repetitions of the variants interleaved so that all see the same machine state:
//   d2h      cudaMemcpy out of the GPU into the pageable buffer (dmaprobe's pageable rows)
//   h2d      cudaMemcpy into the GPU from the pageable buffer at that offset
//   memcpy   the CPU's memcpy from a pinned buffer (as the runtime's staging buffer) into it
// 16 MiB and 1 MiB, 15 rounds after 2 warm-up rounds, each variant timed once a round right after an
// untimed copy of its own kind, the offsets' order rotated from round to round; CPU time around the
// call and a synchronisation (as dmaprobe); medians. Every copy's first and last bytes are checked.
//
// Build: nvcc -O3 -arch=sm_90 offsetcopy.cu -o offsetcopy
#include <cuda_runtime.h>

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
constexpr int kRounds = 15;

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    const std::size_t n = v.size();
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

}  // namespace

int main() {
    const std::size_t sizes[] = {1u << 20, 16u << 20};
    const std::size_t offsets[] = {0, 1, 64, 4096};
    const char* modes[] = {"d2h", "h2d", "memcpy"};
    constexpr std::size_t kMax = (16u << 20) + 8192;
    unsigned char* dev = nullptr;
    CHECK(cudaMalloc(&dev, kMax));
    CHECK(cudaMemset(dev, 0x3C, kMax));
    unsigned char* pinned = nullptr;
    CHECK(cudaMallocHost(&pinned, kMax));
    std::memset(pinned, 0x3C, kMax);
    void* raw = nullptr;
    if (posix_memalign(&raw, 4096, kMax) != 0) return 1;
    auto* host = static_cast<unsigned char*>(raw);
    std::memset(host, 0x11, kMax);
    const auto copy = [&](int mode, unsigned char* h, std::size_t n) {
        if (mode == 0) {
            CHECK(cudaMemcpy(h, dev, n, cudaMemcpyDeviceToHost));
            CHECK(cudaDeviceSynchronize());
        } else if (mode == 1) {
            CHECK(cudaMemcpy(dev, h, n, cudaMemcpyHostToDevice));
            CHECK(cudaDeviceSynchronize());
        } else {
            std::memcpy(h, pinned, n);
        }
    };
    std::printf("mode,bytes,offset,median_us,min_us,max_us\n");
    for (const std::size_t n : sizes) {
        // times[mode][offset]
        std::vector<std::vector<std::vector<double>>> t(3, std::vector<std::vector<double>>(4));
        for (int round = 0; round < kWarm + kRounds; ++round) {
            for (int mode = 0; mode < 3; ++mode) {
                for (std::size_t k = 0; k < 4; ++k) {
                    // Rotated from round to round, and each timed copy right after an untimed one of
                    // the same kind: a first run showed the first copies after a change of kind slow.
                    const std::size_t o = (k + static_cast<std::size_t>(round)) % 4;
                    unsigned char* h = host + offsets[o];
                    copy(mode, h, n);
                    const auto t0 = Clock::now();
                    copy(mode, h, n);
                    const double us = std::chrono::duration<double, std::micro>(Clock::now() - t0).count();
                    if (h[0] != 0x3C || h[n - 1] != 0x3C) {
                        std::fprintf(stderr, "%s %zu +%zu: wrong data\n", modes[mode], n, offsets[o]);
                        return 1;
                    }
                    if (round >= kWarm) t[mode][o].push_back(us);
                }
            }
        }
        for (int mode = 0; mode < 3; ++mode) {
            for (std::size_t o = 0; o < 4; ++o) {
                const auto& v = t[mode][o];
                std::printf("%s,%zu,%zu,%.2f,%.2f,%.2f\n", modes[mode], n, offsets[o], median(v),
                            *std::min_element(v.begin(), v.end()), *std::max_element(v.begin(), v.end()));
            }
        }
        std::fflush(stdout);
    }
    std::fprintf(stderr, "done\n");
    return 0;
}
