// sweep.cu: behind.cu's question over a grid. A first copy of X bytes on s1, then, after the CPU
// has waited tau us (0, 10 or 30) past that call, a second copy of Y bytes the other way on s2; both
// orders (the first into the GPU and the second out of it, and the reverse). X: 0, 128 KiB,
// 512 KiB, 1, 2, 4 and 16 MiB; Y: 4 KiB, 64 KiB, 256 KiB, 1 MiB, 4 MiB. Events before and after
// each copy on its own stream; the GPU idle before each repetition; 3 warm-ups and 40 timed
// repetitions a cell; medians; data verified per cell; every CUDA call checked.
//
// Build: nvcc -O3 -arch=sm_90 sweep.cu -o sweep
// Run:   ./sweep > sweep.csv
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
constexpr int kReps = 40;

void busy_wait_us(double us) {
    const auto t0 = std::chrono::steady_clock::now();
    while (std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count() < us) {
    }
}

float elapsed_us(cudaEvent_t a, cudaEvent_t b) {
    float ms = 0;
    CHECK(cudaEventElapsedTime(&ms, a, b));
    return ms * 1000.0f;
}

double quantile(std::vector<double> v, double q) {
    std::sort(v.begin(), v.end());
    return v[static_cast<std::size_t>(q * static_cast<double>(v.size() - 1) + 0.5)];
}

}  // namespace

int main() {
    CHECK(cudaSetDevice(0));
    const std::size_t big = std::size_t{16} << 20;
    unsigned char *hsrc = nullptr, *hdst = nullptr, *dsrc = nullptr, *ddst = nullptr;
    CHECK(cudaMallocHost(&hsrc, big));
    CHECK(cudaMallocHost(&hdst, big));
    CHECK(cudaMalloc(&dsrc, big));
    CHECK(cudaMalloc(&ddst, big));
    for (std::size_t i = 0; i < big; ++i) hsrc[i] = static_cast<unsigned char>((i * 131u + 7u) % 251u + 1u);
    std::vector<unsigned char> pattern(big);
    for (std::size_t i = 0; i < big; ++i) pattern[i] = static_cast<unsigned char>((i * 17u + 3u) % 253u + 1u);
    CHECK(cudaMemcpy(dsrc, pattern.data(), big, cudaMemcpyHostToDevice));
    cudaStream_t s1, s2;
    CHECK(cudaStreamCreateWithFlags(&s1, cudaStreamNonBlocking));
    CHECK(cudaStreamCreateWithFlags(&s2, cudaStreamNonBlocking));
    cudaEvent_t e0, e1, ea, eb;
    for (cudaEvent_t* e : {&e0, &e1, &ea, &eb}) CHECK(cudaEventCreate(e));
    std::printf("first,first_bytes,second,second_bytes,tau_us,second_median_us,second_p10_us,second_p90_us,first_median_us,second_end_after_first_start_us\n");
    const std::size_t xs[] = {0, 128 << 10, 512 << 10, 1 << 20, 2 << 20, 4 << 20, 16 << 20};
    const std::size_t ys[] = {4096, 64 << 10, 256 << 10, 1 << 20, 4 << 20};
    std::vector<unsigned char> got(big);
    for (const bool first_up : {true, false}) {
        for (const double tau : {0.0, 10.0, 30.0}) {
            for (const std::size_t y : ys) {
                for (const std::size_t x : xs) {
                    std::vector<double> second, first, total;
                    for (int r = 0; r < kWarmup + kReps; ++r) {
                        CHECK(cudaDeviceSynchronize());
                        CHECK(cudaEventRecord(e0, s1));
                        // The first copy uses the buffers' first halves' ends apart from the second's.
                        if (x > 0) {
                            if (first_up) {
                                CHECK(cudaMemcpyAsync(ddst, hsrc, x, cudaMemcpyHostToDevice, s1));
                            } else {
                                CHECK(cudaMemcpyAsync(hdst, dsrc, x, cudaMemcpyDeviceToHost, s1));
                            }
                        }
                        CHECK(cudaEventRecord(e1, s1));
                        busy_wait_us(tau);
                        CHECK(cudaEventRecord(ea, s2));
                        if (first_up) {
                            CHECK(cudaMemcpyAsync(hdst + (big - y), dsrc + (big - y), y, cudaMemcpyDeviceToHost, s2));
                        } else {
                            CHECK(cudaMemcpyAsync(ddst + (big - y), hsrc + (big - y), y, cudaMemcpyHostToDevice, s2));
                        }
                        CHECK(cudaEventRecord(eb, s2));
                        CHECK(cudaDeviceSynchronize());
                        if (r >= kWarmup) {
                            second.push_back(elapsed_us(ea, eb));
                            first.push_back(elapsed_us(e0, e1));
                            total.push_back(elapsed_us(e0, eb));
                        }
                    }
                    // Verify the second copy's bytes (and the first's where it is small enough to be apart).
                    if (first_up) {
                        if (std::memcmp(hdst + (big - y), pattern.data() + (big - y), y) != 0) {
                            std::fprintf(stderr, "verification failed: out of the GPU, %zu bytes\n", y);
                            return 1;
                        }
                    } else {
                        CHECK(cudaMemcpy(got.data(), ddst + (big - y), y, cudaMemcpyDeviceToHost));
                        if (std::memcmp(got.data(), hsrc + (big - y), y) != 0) {
                            std::fprintf(stderr, "verification failed: into the GPU, %zu bytes\n", y);
                            return 1;
                        }
                    }
                    std::printf("%s,%zu,%s,%zu,%.0f,%.4f,%.4f,%.4f,%.4f,%.4f\n", first_up ? "h2d" : "d2h", x, first_up ? "d2h" : "h2d", y, tau,
                                quantile(second, 0.5), quantile(second, 0.1), quantile(second, 0.9), quantile(first, 0.5), quantile(total, 0.5));
                    std::fflush(stdout);
                }
            }
        }
    }
    for (cudaEvent_t e : {e0, e1, ea, eb}) CHECK(cudaEventDestroy(e));
    CHECK(cudaStreamDestroy(s1));
    CHECK(cudaStreamDestroy(s2));
    CHECK(cudaFree(dsrc));
    CHECK(cudaFree(ddst));
    CHECK(cudaFreeHost(hsrc));
    CHECK(cudaFreeHost(hdst));
    return 0;
}
