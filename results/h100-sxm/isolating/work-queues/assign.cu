// How the CUDA runtime spreads streams over its hardware work queues (CUDA_DEVICE_MAX_CONNECTIONS).
// queues.cu found that with 2 connections no pair of streams holds each other up, whichever
// indices they have, so streams are not fixed to queue (index mod connections). Here k streams
// each put a copy out of the GPU behind a 500 us spin kernel (each such copy waits at the head of
// the queue it went to), then stream B queues one 64 KiB copy out of the GPU: B is held up (about
// 500 us) when every queue of the copy engine has a waiting copy at its head. Cases:
//   waiters-k    k = 1..6 streams A, one waiting copy each, then B
//   same-stream  one stream A with j = 1..4 waiting copies one after the other, then B
//   kern-waiters k = 1..6 streams A, each a 10 us kernel behind a 4 MiB copy into the GPU, then B's
//                10 us kernel (the compute engine's queues)
// 3 warm-ups, 20 timed repetitions; medians, min, max; run under each CUDA_DEVICE_MAX_CONNECTIONS.
//
// Build: nvcc -O3 -arch=sm_90 assign.cu -o assign
// Run:   CUDA_DEVICE_MAX_CONNECTIONS=2 ./assign > assign-c2.csv
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
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

constexpr int kWarm = 3;
constexpr int kReps = 20;
constexpr unsigned long long kHoldNs = 500'000;   // A's spin kernel
constexpr unsigned long long kShortNs = 10'000;   // the short kernels
constexpr unsigned long long kGateNs = 2'000'000; // holds the start until every call is issued
constexpr std::size_t kSmall = 64 * 1024;

__global__ void spin_kernel(unsigned long long ns) {
    unsigned long long t0;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
    for (;;) {
        unsigned long long t;
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
        if (t - t0 >= ns) break;
    }
}

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    const std::size_t n = v.size();
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

}  // namespace

int main() {
    const char* env = std::getenv("CUDA_DEVICE_MAX_CONNECTIONS");
    const std::string connections = env ? env : "unset";
    constexpr int kMaxA = 6;
    constexpr std::size_t kMid = 4u << 20;
    cudaStream_t s[kMaxA + 1];
    for (auto& st : s) CHECK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
    cudaStream_t gate;
    CHECK(cudaStreamCreateWithFlags(&gate, cudaStreamNonBlocking));
    unsigned char *dev = nullptr, *host = nullptr, *dev_in = nullptr, *host_in = nullptr;
    CHECK(cudaMalloc(&dev, kSmall * (kMaxA + 2)));
    CHECK(cudaMallocHost(&host, kSmall * (kMaxA + 2)));
    CHECK(cudaMalloc(&dev_in, kMid * kMaxA));
    CHECK(cudaMallocHost(&host_in, kMid * kMaxA));
    CHECK(cudaMemset(dev, 0x2d, kSmall * (kMaxA + 2)));
    std::memset(host_in, 0x4b, kMid * kMaxA);
    cudaEvent_t start, end_b;
    CHECK(cudaEventCreate(&start));
    CHECK(cudaEventCreate(&end_b));
    CHECK(cudaDeviceSynchronize());
    std::printf("connections,case,k,b_end_us_median,min,max\n");
    auto measure = [&](const char* name, int k, auto&& issue_a, auto&& issue_b) {
        std::vector<double> t;
        for (int rep = 0; rep < kWarm + kReps; ++rep) {
            spin_kernel<<<1, 1, 0, gate>>>(kGateNs);
            CHECK(cudaGetLastError());
            CHECK(cudaEventRecord(start, gate));
            for (auto& st : s) CHECK(cudaStreamWaitEvent(st, start, 0));
            issue_a();
            issue_b();
            CHECK(cudaEventRecord(end_b, s[kMaxA]));
            CHECK(cudaDeviceSynchronize());
            float ms = 0.0f;
            CHECK(cudaEventElapsedTime(&ms, start, end_b));
            if (rep >= kWarm) t.push_back(1000.0 * ms);
        }
        std::printf("%s,%s,%d,%.3f,%.3f,%.3f\n", connections.c_str(), name, k, median(t), *std::min_element(t.begin(), t.end()),
                    *std::max_element(t.begin(), t.end()));
        std::fflush(stdout);
    };
    auto b_copy = [&] { CHECK(cudaMemcpyAsync(host + kSmall * kMaxA, dev + kSmall * kMaxA, kSmall, cudaMemcpyDeviceToHost, s[kMaxA])); };
    auto b_kernel = [&] {
        spin_kernel<<<1, 1, 0, s[kMaxA]>>>(kShortNs);
        CHECK(cudaGetLastError());
    };
    for (int k = 0; k <= kMaxA; ++k) {
        measure("waiters", k, [&] {
            for (int i = 0; i < k; ++i) {
                spin_kernel<<<1, 1, 0, s[i]>>>(kHoldNs);
                CHECK(cudaGetLastError());
                CHECK(cudaMemcpyAsync(host + kSmall * i, dev + kSmall * i, kSmall, cudaMemcpyDeviceToHost, s[i]));
            }
        }, b_copy);
    }
    for (int j = 1; j <= 4; ++j) {
        measure("same-stream", j, [&] {
            spin_kernel<<<1, 1, 0, s[0]>>>(kHoldNs);
            CHECK(cudaGetLastError());
            for (int i = 0; i < j; ++i) CHECK(cudaMemcpyAsync(host + kSmall * i, dev + kSmall * i, kSmall, cudaMemcpyDeviceToHost, s[0]));
        }, b_copy);
    }
    for (int k = 0; k <= kMaxA; ++k) {
        measure("kern-waiters", k, [&] {
            for (int i = 0; i < k; ++i) {
                CHECK(cudaMemcpyAsync(dev_in + kMid * i, host_in + kMid * i, kMid, cudaMemcpyHostToDevice, s[i]));
                spin_kernel<<<1, 1, 0, s[i]>>>(kShortNs);
                CHECK(cudaGetLastError());
            }
        }, b_kernel);
    }
    // What the copies moved: every copy out of the GPU brought 0x2d, every copy in 0x4b.
    std::vector<unsigned char> check(kMid * kMaxA);
    CHECK(cudaMemcpy(check.data(), dev_in, kMid * kMaxA, cudaMemcpyDeviceToHost));
    for (std::size_t i = 0; i < check.size(); ++i) {
        if (check[i] != 0x4b) {
            std::fprintf(stderr, "verification failed at byte %zu of dev_in\n", i);
            return 1;
        }
    }
    for (std::size_t i = 0; i < kSmall * (kMaxA + 1); ++i) {
        if (host[i] != 0x2d) {
            std::fprintf(stderr, "verification failed at byte %zu of host\n", i);
            return 1;
        }
    }
    return 0;
}
