// Staged peer copies of one direction at once: do they share what the runtime stages through?
// (`stagedboth.cu`: a staged copy whose call follows the other way's within about 20 us loses
// 7-14 us, one 40 us later nothing.) Peer access off; GPU 0 -> GPU 1 only, each copy on its own
// stream of GPU 0, from and into its own part of the buffers, timed from a start event recorded
// right before its call to an end event after it:
//   multi   K copies (K = 1, 2, 3, 4, 6) issued back to back: each one's time by its place;
//   delay   two copies, the second issued D us (0, 10, 20, 40, 80) after the first's call
//           returns (the CPU spinning): the second's time, against one alone.
// Sizes 512 KiB (one piece of the runtime's staging) and 1 MiB (two). 3 warm-ups, 20
// repetitions, medians; every copy verified (nonzero patterns, compared on the host).
//
// Build: nvcc -O3 -arch=sm_90 stagedpool.cu -o stagedpool
// Run:   ./stagedpool > stagedpool.csv
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

constexpr int kWarmup = 3;
constexpr int kReps = 20;
constexpr int kMaxCopies = 6;
constexpr std::size_t kMaxSize = std::size_t{1} << 20;
using Clock = std::chrono::steady_clock;

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v.empty() ? 0.0 : v[v.size() / 2];
}

float elapsed_us(cudaEvent_t a, cudaEvent_t b) {
    float ms = 0;
    CHECK(cudaEventElapsedTime(&ms, a, b));
    return ms * 1000.0f;
}

}  // namespace

int main() {
    int count = 0;
    CHECK(cudaGetDeviceCount(&count));
    if (count < 2) {
        std::fprintf(stderr, "needs two GPUs, found %d\n", count);
        return 1;
    }
    for (int a = 0; a < 2; ++a) {
        CHECK(cudaSetDevice(a));
        const cudaError_t e = cudaDeviceDisablePeerAccess(1 - a);
        if (e == cudaErrorPeerAccessNotEnabled) {
            (void)cudaGetLastError();
        } else {
            CHECK(e);
        }
    }
    const std::size_t total = kMaxSize * kMaxCopies;
    unsigned char *src = nullptr, *dst = nullptr;
    CHECK(cudaSetDevice(1));
    CHECK(cudaMalloc(&dst, total));
    CHECK(cudaSetDevice(0));
    CHECK(cudaMalloc(&src, total));
    std::vector<unsigned char> h(total), back(total);
    for (std::size_t i = 0; i < total; ++i) h[i] = static_cast<unsigned char>((i * 131u + 7u) % 251u + 1u);
    CHECK(cudaMemcpy(src, h.data(), total, cudaMemcpyHostToDevice));
    cudaStream_t s[kMaxCopies];
    cudaEvent_t start[kMaxCopies], end[kMaxCopies];
    for (int i = 0; i < kMaxCopies; ++i) {
        CHECK(cudaStreamCreateWithFlags(&s[i], cudaStreamNonBlocking));
        CHECK(cudaEventCreate(&start[i]));
        CHECK(cudaEventCreate(&end[i]));
    }
    const auto verify = [&](int copies, std::size_t n) {
        CHECK(cudaSetDevice(1));
        CHECK(cudaMemcpy(back.data(), dst, total, cudaMemcpyDeviceToHost));
        CHECK(cudaMemset(dst, 0, total));
        CHECK(cudaDeviceSynchronize());
        CHECK(cudaSetDevice(0));
        for (int i = 0; i < copies; ++i) {
            if (std::memcmp(back.data() + i * kMaxSize, h.data() + i * kMaxSize, n) != 0) {
                std::fprintf(stderr, "verification failed: copy %d of %d, %zu bytes\n", i, copies, n);
                std::exit(1);
            }
        }
    };
    const auto issue = [&](int i, std::size_t n) {
        CHECK(cudaEventRecord(start[i], s[i]));
        CHECK(cudaMemcpyPeerAsync(dst + i * kMaxSize, 1, src + i * kMaxSize, 0, n, s[i]));
        CHECK(cudaEventRecord(end[i], s[i]));
    };
    std::printf("mode,bytes,copies_or_delay_us,index,median_us,reps\n");
    for (const std::size_t n : {kMaxSize / 2, kMaxSize}) {
        for (const int k : {1, 2, 3, 4, 6}) {
            std::vector<std::vector<double>> t(static_cast<std::size_t>(k));
            for (int r = 0; r < kWarmup + kReps; ++r) {
                CHECK(cudaDeviceSynchronize());
                for (int i = 0; i < k; ++i) issue(i, n);
                CHECK(cudaDeviceSynchronize());
                if (r < kWarmup) continue;
                for (int i = 0; i < k; ++i) t[static_cast<std::size_t>(i)].push_back(elapsed_us(start[i], end[i]));
            }
            verify(k, n);
            for (int i = 0; i < k; ++i) std::printf("multi,%zu,%d,%d,%.3f,%d\n", n, k, i, median(t[static_cast<std::size_t>(i)]), kReps);
            std::fflush(stdout);
        }
        for (const int d : {0, 10, 20, 40, 80}) {
            std::vector<double> first, second;
            for (int r = 0; r < kWarmup + kReps; ++r) {
                CHECK(cudaDeviceSynchronize());
                issue(0, n);
                const Clock::time_point until = Clock::now() + std::chrono::microseconds(d);
                while (Clock::now() < until) {
                }
                issue(1, n);
                CHECK(cudaDeviceSynchronize());
                if (r < kWarmup) continue;
                first.push_back(elapsed_us(start[0], end[0]));
                second.push_back(elapsed_us(start[1], end[1]));
            }
            verify(2, n);
            std::printf("delay-first,%zu,%d,0,%.3f,%d\n", n, d, median(first), kReps);
            std::printf("delay-second,%zu,%d,1,%.3f,%d\n", n, d, median(second), kReps);
            std::fflush(stdout);
        }
    }
    return 0;
}
