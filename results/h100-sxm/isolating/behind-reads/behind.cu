// Does work on one stream wait behind the read completions a copy into the GPU on another stream
// still has coming? (../duplex-overlap: in dmaprobe's gated pair the copy out of the GPU takes
// 1.8-5 us longer beside a copy into it of 64 KiB-1 MiB, and a 4 KiB copy out of the GPU beside a
// 1 MiB copy into it up to 12 us.) No gate: the GPU is idle, the CPU issues a copy into the GPU of
// X bytes on s1 (X = 0: none) with an event before and after it, then on s2 an event, a second
// copy and an event; then it synchronises. The second copy: 4 KiB out of the GPU, 256 KiB out of
// it, or 4 KiB into it. A copy engine reads up to 256 x 4 KiB ahead, so a copy into the GPU of
// 1 MiB has all its reads out at once; if a read that the second copy's channel or engine makes
// (its work, a flush before its release, its data) comes back behind those completions, its time
// grows with X up to about 1 MiB's worth (20 us at the link's rate). X: 0, 64 KiB, 256 KiB,
// 1 MiB, 4 MiB. 5 warm-ups and 100 timed repetitions a cell; medians and p10/p90; data verified per
// cell; every CUDA call checked.
//
// Build: nvcc -O3 -arch=sm_90 behind.cu -o behind
// Run:   ./behind > behind.csv
#include <cuda_runtime.h>

#include <algorithm>
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

constexpr int kWarmup = 5;
constexpr int kReps = 100;

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
    const std::size_t big = std::size_t{4} << 20, small_max = 256 << 10;
    unsigned char *hsrc = nullptr, *hsrc2 = nullptr, *hdst = nullptr, *dbig = nullptr, *dsrc = nullptr, *ddst2 = nullptr;
    CHECK(cudaMallocHost(&hsrc, big));
    CHECK(cudaMallocHost(&hsrc2, small_max));
    CHECK(cudaMallocHost(&hdst, small_max));
    CHECK(cudaMalloc(&dbig, big));
    CHECK(cudaMalloc(&dsrc, small_max));
    CHECK(cudaMalloc(&ddst2, small_max));
    for (std::size_t i = 0; i < big; ++i) hsrc[i] = static_cast<unsigned char>((i * 131u + 7u) % 251u + 1u);
    for (std::size_t i = 0; i < small_max; ++i) hsrc2[i] = static_cast<unsigned char>((i * 29u + 5u) % 241u + 1u);
    std::vector<unsigned char> dev_pattern(small_max);
    for (std::size_t i = 0; i < small_max; ++i) dev_pattern[i] = static_cast<unsigned char>((i * 17u + 3u) % 253u + 1u);
    CHECK(cudaMemcpy(dsrc, dev_pattern.data(), small_max, cudaMemcpyHostToDevice));
    cudaStream_t s1, s2;
    CHECK(cudaStreamCreateWithFlags(&s1, cudaStreamNonBlocking));
    CHECK(cudaStreamCreateWithFlags(&s2, cudaStreamNonBlocking));
    cudaEvent_t e0, e1, ea, eb;
    for (cudaEvent_t* e : {&e0, &e1, &ea, &eb}) CHECK(cudaEventCreate(e));
    std::printf("first_h2d_bytes,second,second_bytes,second_median_us,second_p10_us,second_p90_us,first_median_us,second_end_after_first_start_us\n");
    const std::size_t xs[] = {0, 64 << 10, 256 << 10, 1 << 20, big};
    struct Second {
        const char* name;
        bool down;
        std::size_t bytes;
    };
    const Second seconds[] = {{"d2h", true, 4096}, {"d2h", true, 256 << 10}, {"h2d", false, 4096}};
    std::vector<unsigned char> check(small_max);
    for (const Second& sec : seconds) {
        for (const std::size_t x : xs) {
            std::vector<double> second, first, total;
            for (int r = 0; r < kWarmup + kReps; ++r) {
                std::memset(hdst, 0, sec.bytes);
                CHECK(cudaMemset(ddst2, 0, sec.bytes));
                CHECK(cudaDeviceSynchronize());
                CHECK(cudaEventRecord(e0, s1));
                if (x > 0) CHECK(cudaMemcpyAsync(dbig, hsrc, x, cudaMemcpyHostToDevice, s1));
                CHECK(cudaEventRecord(e1, s1));
                CHECK(cudaEventRecord(ea, s2));
                if (sec.down) {
                    CHECK(cudaMemcpyAsync(hdst, dsrc, sec.bytes, cudaMemcpyDeviceToHost, s2));
                } else {
                    CHECK(cudaMemcpyAsync(ddst2, hsrc2, sec.bytes, cudaMemcpyHostToDevice, s2));
                }
                CHECK(cudaEventRecord(eb, s2));
                CHECK(cudaDeviceSynchronize());
                if (r >= kWarmup) {
                    second.push_back(elapsed_us(ea, eb));
                    first.push_back(elapsed_us(e0, e1));
                    total.push_back(elapsed_us(e0, eb));
                }
            }
            if (sec.down) {
                if (std::memcmp(hdst, dev_pattern.data(), sec.bytes) != 0) {
                    std::fprintf(stderr, "verification failed: second copy out of the GPU, %zu bytes\n", sec.bytes);
                    return 1;
                }
            } else {
                CHECK(cudaMemcpy(check.data(), ddst2, sec.bytes, cudaMemcpyDeviceToHost));
                if (std::memcmp(check.data(), hsrc2, sec.bytes) != 0) {
                    std::fprintf(stderr, "verification failed: second copy into the GPU, %zu bytes\n", sec.bytes);
                    return 1;
                }
            }
            if (x > 0) {
                std::vector<unsigned char> got(x);
                CHECK(cudaMemcpy(got.data(), dbig, x, cudaMemcpyDeviceToHost));
                if (std::memcmp(got.data(), hsrc, x) != 0) {
                    std::fprintf(stderr, "verification failed: first copy, %zu bytes\n", x);
                    return 1;
                }
            }
            std::printf("%zu,%s,%zu,%.4f,%.4f,%.4f,%.4f,%.4f\n", x, sec.name, sec.bytes, quantile(second, 0.5), quantile(second, 0.1),
                        quantile(second, 0.9), quantile(first, 0.5), quantile(total, 0.5));
            std::fflush(stdout);
        }
    }
    for (cudaEvent_t e : {e0, e1, ea, eb}) CHECK(cudaEventDestroy(e));
    CHECK(cudaStreamDestroy(s1));
    CHECK(cudaStreamDestroy(s2));
    CHECK(cudaFree(dbig));
    CHECK(cudaFree(dsrc));
    CHECK(cudaFree(ddst2));
    CHECK(cudaFreeHost(hsrc));
    CHECK(cudaFreeHost(hsrc2));
    CHECK(cudaFreeHost(hdst));
    return 0;
}
