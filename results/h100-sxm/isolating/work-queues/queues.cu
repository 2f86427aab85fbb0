// Hardware work queues (CUDA_DEVICE_MAX_CONNECTIONS): which work of one stream holds up work of
// another. The CUDA runtime maps streams onto a bounded number of connections (default 8,
// 1..32); work in one queue starts in the order it was issued, so an operation waiting for its
// own stream's earlier work holds every later operation of its queue (a false dependency).
// What is a queue: one per connection for every engine, or one per connection and engine? And
// which streams share one?
//
// Per case: a stream A whose second operation waits for its first (a spin kernel of kHoldUs, or
// a 64 MiB copy into the GPU), then a stream B with one short operation issued after A's; the
// interval is from a start event every stream waits for to an event behind B's operation. B held
// by A shows as about kHoldUs (or the 64 MiB copy's time). Every stream is created at startup,
// in index order, before any work; the start is held by a gate kernel until every call is issued.
// Cases (A's two operations / B's one):
//   d2h-d2h   A: spin, D2H 64 KiB          B: D2H 64 KiB     (the same copy engine)
//   d2h-h2d   A: spin, D2H 64 KiB          B: H2D 64 KiB     (another copy engine)
//   h2d-kern  A: H2D 64 MiB, kernel 10 us  B: kernel 10 us   (the compute engine)
//   kern-d2h  A: H2D 64 MiB, D2H 64 KiB    B: kernel 10 us   (compute behind a copy engine's wait)
// each for stream pairs (0,1), (0,2), (0,3), (1,3), (0,4), (0,8); and alone (B without A).
// 3 warm-ups, 20 timed repetitions; medians, min, max. Run it under each
// CUDA_DEVICE_MAX_CONNECTIONS value (run.sh does 1, 2, 4, 8).
//
// Build: nvcc -O3 -arch=sm_90 queues.cu -o queues
// Run:   CUDA_DEVICE_MAX_CONNECTIONS=1 ./queues > queues-c1.csv
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

constexpr int kStreams = 9;
constexpr int kWarm = 3;
constexpr int kReps = 20;
constexpr unsigned long long kHoldNs = 500'000;   // A's spin kernel
constexpr unsigned long long kShortNs = 10'000;   // the short kernels
constexpr unsigned long long kGateNs = 2'000'000; // holds the start until every call is issued
constexpr std::size_t kSmall = 64 * 1024;
constexpr std::size_t kBig = 64u << 20;

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

struct Bufs {
    unsigned char* dev_big;
    unsigned char* dev_a;
    unsigned char* dev_b;
    unsigned char* host_big;
    unsigned char* host_a;
    unsigned char* host_b;
};

}  // namespace

int main() {
    const char* env = std::getenv("CUDA_DEVICE_MAX_CONNECTIONS");
    const std::string connections = env ? env : "unset";
    cudaStream_t s[kStreams];
    for (auto& st : s) CHECK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
    cudaStream_t gate;
    CHECK(cudaStreamCreateWithFlags(&gate, cudaStreamNonBlocking));
    Bufs b{};
    CHECK(cudaMalloc(&b.dev_big, kBig));
    CHECK(cudaMalloc(&b.dev_a, kSmall));
    CHECK(cudaMalloc(&b.dev_b, kSmall));
    CHECK(cudaMallocHost(&b.host_big, kBig));
    CHECK(cudaMallocHost(&b.host_a, kSmall));
    CHECK(cudaMallocHost(&b.host_b, kSmall));
    std::memset(b.host_big, 0x5a, kBig);
    std::memset(b.host_a, 0x3c, kSmall);
    std::memset(b.host_b, 0x66, kSmall);
    CHECK(cudaMemset(b.dev_a, 0x11, kSmall));
    CHECK(cudaMemset(b.dev_b, 0x22, kSmall));
    cudaEvent_t start, end_b, end_a;
    CHECK(cudaEventCreate(&start));
    CHECK(cudaEventCreate(&end_b));
    CHECK(cudaEventCreate(&end_a));
    CHECK(cudaDeviceSynchronize());

    struct Case {
        const char* name;
        int a_first;   // 0: spin kHoldNs, 1: H2D 64 MiB
        int a_second;  // 0: D2H 64 KiB, 1: kernel 10 us
        int b_op;      // 0: D2H 64 KiB, 1: H2D 64 KiB, 2: kernel 10 us
    };
    const Case cases[] = {{"d2h-d2h", 0, 0, 0}, {"d2h-h2d", 0, 0, 1}, {"h2d-kern", 1, 1, 2}, {"kern-d2h", 1, 0, 2}};
    const int pairs[][2] = {{0, 1}, {0, 2}, {0, 3}, {1, 3}, {0, 4}, {0, 8}, {-1, 1}};
    std::printf("connections,case,stream_a,stream_b,b_end_us_median,min,max,a_end_us_median\n");
    for (const Case& c : cases) {
        for (const auto& p : pairs) {
            const int ia = p[0], ib = p[1];
            std::vector<double> tb, ta;
            for (int rep = 0; rep < kWarm + kReps; ++rep) {
                spin_kernel<<<1, 1, 0, gate>>>(kGateNs);
                CHECK(cudaGetLastError());
                CHECK(cudaEventRecord(start, gate));
                for (int i = 0; i < kStreams; ++i) CHECK(cudaStreamWaitEvent(s[i], start, 0));
                if (ia >= 0) {
                    cudaStream_t sa = s[ia];
                    if (c.a_first == 0) {
                        spin_kernel<<<1, 1, 0, sa>>>(kHoldNs);
                        CHECK(cudaGetLastError());
                    } else {
                        CHECK(cudaMemcpyAsync(b.dev_big, b.host_big, kBig, cudaMemcpyHostToDevice, sa));
                    }
                    if (c.a_second == 0) {
                        CHECK(cudaMemcpyAsync(b.host_a, b.dev_a, kSmall, cudaMemcpyDeviceToHost, sa));
                    } else {
                        spin_kernel<<<1, 1, 0, sa>>>(kShortNs);
                        CHECK(cudaGetLastError());
                    }
                    CHECK(cudaEventRecord(end_a, sa));
                }
                cudaStream_t sb = s[ib];
                if (c.b_op == 0) {
                    CHECK(cudaMemcpyAsync(b.host_b, b.dev_b, kSmall, cudaMemcpyDeviceToHost, sb));
                } else if (c.b_op == 1) {
                    CHECK(cudaMemcpyAsync(b.dev_b, b.host_b, kSmall, cudaMemcpyHostToDevice, sb));
                } else {
                    spin_kernel<<<1, 1, 0, sb>>>(kShortNs);
                    CHECK(cudaGetLastError());
                }
                CHECK(cudaEventRecord(end_b, sb));
                CHECK(cudaDeviceSynchronize());
                float ms_b = 0.0f, ms_a = 0.0f;
                CHECK(cudaEventElapsedTime(&ms_b, start, end_b));
                if (ia >= 0) CHECK(cudaEventElapsedTime(&ms_a, start, end_a));
                if (rep >= kWarm) {
                    tb.push_back(1000.0 * ms_b);
                    ta.push_back(1000.0 * ms_a);
                }
            }
            std::printf("%s,%s,%d,%d,%.3f,%.3f,%.3f,%.3f\n", connections.c_str(), c.name, ia, ib, median(tb),
                        *std::min_element(tb.begin(), tb.end()), *std::max_element(tb.begin(), tb.end()), median(ta));
            std::fflush(stdout);
        }
    }
    // The data went where it was sent: B's copies out of the GPU left dev_b's bytes in host_b,
    // its copies into the GPU host_b's in dev_b, A's copies dev_a's in host_a.
    std::vector<unsigned char> check(kSmall);
    CHECK(cudaMemcpy(check.data(), b.dev_b, kSmall, cudaMemcpyDeviceToHost));
    if (std::memcmp(check.data(), b.host_b, kSmall) != 0 || check[0] != 0x22) {
        std::fprintf(stderr, "verification failed: dev_b and host_b differ or are not 0x22\n");
        return 1;
    }
    for (std::size_t i = 0; i < kSmall; ++i) {
        if (b.host_a[i] != 0x11) {
            std::fprintf(stderr, "verification failed at byte %zu of host_a\n", i);
            return 1;
        }
    }
    return 0;
}
