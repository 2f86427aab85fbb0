// page-faults (README.md), with CUDA: a pageable cudaMemcpy from or into memory in three states, to
// split what dmaprobe's `pageable-fresh` rows pay between the page faults inside the runtime's
// staging copy and anything else new pages cost it:
//   fresh      a new mapping, never touched (dmaprobe's pageable-fresh)
//   touched    a new mapping whose pages the CPU wrote one byte of each first, untimed (present,
//              never copied by the runtime before)
//   warm       the same mapping every repetition, copied before (dmaprobe's pageable rows)
// each into the GPU (h2d) and out of it (d2h), 64 KiB, 4 MiB and 64 MiB, 10 repetitions after 2
// warm-ups timed on the CPU around cudaMemcpy and a synchronisation (as dmaprobe), medians.
//
// Build: nvcc -O3 -arch=sm_90 freshcopy.cu -o freshcopy
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

}  // namespace

int main() {
    const std::size_t sizes[] = {64u << 10, 4u << 20, 64u << 20};
    const char* states[] = {"fresh", "touched", "warm"};
    unsigned char* dev = nullptr;
    CHECK(cudaMalloc(&dev, 64u << 20));
    CHECK(cudaMemset(dev, 0x3C, 64u << 20));
    CHECK(cudaDeviceSynchronize());
    std::printf("direction,bytes,state,us_median,us_min,us_max\n");
    for (const bool h2d : {true, false}) {
        // The copies into the GPU overwrote it: the value every copy out of it must bring back.
        CHECK(cudaMemset(dev, 0x3C, 64u << 20));
        CHECK(cudaDeviceSynchronize());
        for (const std::size_t n : sizes) {
            for (int state = 0; state < 3; ++state) {
                unsigned char* warm = state == 2 ? map(n) : nullptr;
                if (warm != nullptr) std::memset(warm, 0x11, n);
                std::vector<double> t;
                for (int rep = 0; rep < kWarm + kReps; ++rep) {
                    unsigned char* h = warm != nullptr ? warm : map(n);
                    if (state == 1) {
                        for (std::size_t p = 0; p < n; p += 4096) h[p] = 0x11;
                    }
                    const auto t0 = Clock::now();
                    if (h2d) {
                        CHECK(cudaMemcpy(dev, h, n, cudaMemcpyHostToDevice));
                    } else {
                        CHECK(cudaMemcpy(h, dev, n, cudaMemcpyDeviceToHost));
                    }
                    CHECK(cudaDeviceSynchronize());
                    const double us = std::chrono::duration<double, std::micro>(Clock::now() - t0).count();
                    if (!h2d && (h[0] != 0x3C || h[n - 1] != 0x3C)) {
                        std::fprintf(stderr, "d2h %zu %s: wrong data\n", n, states[state]);
                        return 1;
                    }
                    if (warm == nullptr) ::munmap(h, n);
                    if (rep >= kWarm) t.push_back(us);
                }
                if (warm != nullptr) ::munmap(warm, n);
                std::printf("%s,%zu,%s,%.2f,%.2f,%.2f\n", h2d ? "h2d" : "d2h", n, states[state], median(t),
                            *std::min_element(t.begin(), t.end()), *std::max_element(t.begin(), t.end()));
                std::fflush(stdout);
            }
        }
    }
    std::fprintf(stderr, "done\n");
    return 0;
}
