// Which call sets the phase of dmaprobe's gated duplex pair against the channels' polls? In
// stream-handoffs/duplexphase.cu a host delay D before the gate opens moves each copy's end as a
// sawtooth of period ~8.1 us, and the main plan (no delay) sits early in it. A wait polls from
// some first try; a delay inserted right after call C moves the gate later against every call up
// to C and not against those after it, so a copy's sawtooth shifts with the delay only when its
// poll is anchored at C or before. This issues the pair call for call as duplexphase.cu does and
// inserts a delay X (0 to 8 us by 0.5) at one of nine places: after the gate kernel's launch, the
// start event, the second stream's wait, the H2D call, the D2H call, the H2D's event, the D2H's
// event, the first stream's wait, or the last call (before the gate opens, duplexphase's D). The
// first two leases ran a version with the first five places and the last only. 4 KiB; 5 warm-ups and 60 timed repetitions per cell, medians;
// the copies' data verified per cell; every CUDA call checked; the gate gives up after 1 s.
//
// Build: nvcc -O3 -arch=sm_90 phaseanchor.cu -o phaseanchor
// Run:   ./phaseanchor > phaseanchor.csv
#include <cuda_runtime.h>
#include <immintrin.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
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

constexpr int kWarmup = 5;
constexpr int kReps = 60;
constexpr unsigned long long kGateTimeoutNs = 1'000'000'000;

__global__ void gate_kernel(volatile int* flag, int* timed_out) {
    unsigned long long t0;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
    while (*flag == 0) {
        unsigned long long t;
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
        if (t - t0 > kGateTimeoutNs) {
            *timed_out = 1;
            return;
        }
    }
}

using Clock = std::chrono::steady_clock;

void busy_wait_us(double us) {
    const auto t0 = Clock::now();
    while (std::chrono::duration<double, std::micro>(Clock::now() - t0).count() < us) {
    }
}

float elapsed_us(cudaEvent_t a, cudaEvent_t b) {
    float ms = 0;
    CHECK(cudaEventElapsedTime(&ms, a, b));
    return ms * 1000.0f;
}

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

}  // namespace

int main() {
    CHECK(cudaSetDevice(0));
    const std::size_t max = 1 << 20;
    unsigned char *hsrc = nullptr, *hdst = nullptr, *dsrc = nullptr, *ddst = nullptr, *back = nullptr;
    int *flag = nullptr, *timed_out = nullptr;
    CHECK(cudaMallocHost(&hsrc, max));
    CHECK(cudaMallocHost(&hdst, max));
    CHECK(cudaMallocHost(&back, max));
    CHECK(cudaMalloc(&dsrc, max));
    CHECK(cudaMalloc(&ddst, max));
    CHECK(cudaHostAlloc(&flag, sizeof(int), cudaHostAllocMapped));
    CHECK(cudaHostAlloc(&timed_out, sizeof(int), cudaHostAllocMapped));
    int *dflag = nullptr, *dtimed_out = nullptr;
    CHECK(cudaHostGetDevicePointer(&dflag, flag, 0));
    CHECK(cudaHostGetDevicePointer(&dtimed_out, timed_out, 0));
    *timed_out = 0;
    for (std::size_t i = 0; i < max; ++i) {
        hsrc[i] = static_cast<unsigned char>((i * 131u + 7u) % 251u + 1u);
        back[i] = static_cast<unsigned char>((i * 17u + 3u) % 253u + 1u);
    }
    for (std::size_t i = 0; i < max; i += 64) _mm_clflush(hsrc + i);
    _mm_mfence();
    CHECK(cudaMemcpy(dsrc, back, max, cudaMemcpyHostToDevice));
    cudaStream_t s1, s2;
    CHECK(cudaStreamCreateWithFlags(&s1, cudaStreamNonBlocking));
    CHECK(cudaStreamCreateWithFlags(&s2, cudaStreamNonBlocking));
    cudaEvent_t start, stop, e1, e2;
    for (cudaEvent_t* e : {&start, &stop, &e1, &e2}) CHECK(cudaEventCreate(e));
    std::map<std::string, std::vector<double>> calls;  // CPU time of each call, all cells
    std::printf("after,bytes,delay_us,interval_us,h2d_us,d2h_us,interval_p10_us,interval_p90_us\n");
    const char* places[] = {"gate_launch", "start_record", "wait", "h2d", "d2h", "h2d_event", "d2h_event", "first_stream_wait",
                            "last_call"};
    const std::size_t n = 4096;
    for (int place = 0; place < 9; ++place) {
        for (double d = 0.0; d <= 8.0 + 1e-9; d += 0.5) {
            std::vector<double> all, up, down;
            // The D2H destination is cleared once per cell and flushed from the CPU's caches: a
            // DMA write into lines the CPU has just written is several times slower.
            std::memset(hdst, 0, n);
            for (std::size_t i = 0; i < n; i += 64) _mm_clflush(hdst + i);
            _mm_mfence();
            for (int r = 0; r < kWarmup + kReps; ++r) {
                CHECK(cudaMemset(ddst, 0, n));
                CHECK(cudaDeviceSynchronize());
                *reinterpret_cast<volatile int*>(flag) = 0;
                const auto timed = [&](const char* what, auto&& f) {
                    const auto t0 = Clock::now();
                    f();
                    if (r >= kWarmup) calls[what].push_back(std::chrono::duration<double, std::micro>(Clock::now() - t0).count());
                };
                // The delay goes right after the call named by `place` (0-8).
                const auto delay_after = [&](int here) {
                    if (here == place) busy_wait_us(d);
                };
                timed("gate_launch", [&] {
                    gate_kernel<<<1, 1, 0, s1>>>(dflag, dtimed_out);
                    CHECK(cudaGetLastError());
                });
                delay_after(0);
                timed("event_record", [&] { CHECK(cudaEventRecord(start, s1)); });
                delay_after(1);
                timed("stream_wait_event", [&] { CHECK(cudaStreamWaitEvent(s2, start, 0)); });
                delay_after(2);
                timed("memcpy_async_h2d", [&] { CHECK(cudaMemcpyAsync(ddst, hsrc, n, cudaMemcpyHostToDevice, s1)); });
                delay_after(3);
                timed("memcpy_async_d2h", [&] { CHECK(cudaMemcpyAsync(hdst, dsrc, n, cudaMemcpyDeviceToHost, s2)); });
                delay_after(4);
                timed("event_record", [&] { CHECK(cudaEventRecord(e1, s1)); });
                delay_after(5);
                timed("event_record", [&] { CHECK(cudaEventRecord(e2, s2)); });
                delay_after(6);
                timed("stream_wait_event", [&] { CHECK(cudaStreamWaitEvent(s1, e2, 0)); });
                delay_after(7);
                timed("event_record", [&] { CHECK(cudaEventRecord(stop, s1)); });
                delay_after(8);
                *reinterpret_cast<volatile int*>(flag) = 1;
                CHECK(cudaEventSynchronize(stop));
                if (*timed_out != 0) {
                    std::fprintf(stderr, "the gate timed out\n");
                    return 1;
                }
                if (r >= kWarmup) {
                    all.push_back(elapsed_us(start, stop));
                    up.push_back(elapsed_us(start, e1));
                    down.push_back(elapsed_us(start, e2));
                }
            }
            CHECK(cudaMemcpy(back, ddst, n, cudaMemcpyDeviceToHost));
            if (std::memcmp(back, hsrc, n) != 0) {
                std::fprintf(stderr, "verification failed: H2D of %zu bytes\n", n);
                return 1;
            }
            std::vector<unsigned char> want(n);
            CHECK(cudaMemcpy(want.data(), dsrc, n, cudaMemcpyDeviceToHost));
            if (std::memcmp(hdst, want.data(), n) != 0) {
                std::fprintf(stderr, "verification failed: D2H of %zu bytes\n", n);
                return 1;
            }
            std::vector<double> sorted = all;
            std::sort(sorted.begin(), sorted.end());
            std::printf("%s,%zu,%.1f,%.4f,%.4f,%.4f,%.4f,%.4f\n", places[place], n, d, median(all), median(up), median(down),
                        sorted[sorted.size() / 10], sorted[sorted.size() * 9 / 10]);
            std::fflush(stdout);
        }
    }
    std::fprintf(stderr, "call,median_us,p10_us,p90_us,n\n");
    for (auto& [what, v] : calls) {
        std::sort(v.begin(), v.end());
        std::fprintf(stderr, "%s,%.4f,%.4f,%.4f,%zu\n", what.c_str(), v[v.size() / 2], v[v.size() / 10], v[v.size() * 9 / 10], v.size());
    }
    for (cudaEvent_t e : {start, stop, e1, e2}) CHECK(cudaEventDestroy(e));
    CHECK(cudaStreamDestroy(s1));
    CHECK(cudaStreamDestroy(s2));
    CHECK(cudaFree(dsrc));
    CHECK(cudaFree(ddst));
    CHECK(cudaFreeHost(hsrc));
    CHECK(cudaFreeHost(hdst));
    CHECK(cudaFreeHost(back));
    CHECK(cudaFreeHost(flag));
    CHECK(cudaFreeHost(timed_out));
    return 0;
}
