// reps.cu: every repetition of dmaprobe's gated pair as the main plan runs it (no host delay),
// both copies, 4 KiB, 64 KiB, 256 KiB and 1 MiB, 500 repetitions each after 10 warm-ups: the
// distribution within one machine that the main plan's medians summarise (a copy's end falls on
// one side of a poll or the other, so the median of a size is a mixture's). One line a
// repetition: the two copies' ends and the stop event's, after the start event, and the CPU's
// time from the end of the call of each copy, and from the start and the end of the stop event's
// call, to its store to the gate's flag (where each copy's tries count from: ../submit-point);
// data verified per size. (Lease bad95ebe ran the first version, without the CPU's columns.)
//
// (overlap.cu's description follows.)
// Does the copy into the GPU slow the copy out of it in dmaprobe's gated duplex pair? In the main
// plan the pair's copy out of the GPU grows by 2-3 us more from 16 to 256 KiB than the same copy
// alone (stream-handoffs/duplexphase.cu: its floor over a host delay grows at 18 GB/s from 4 to
// 64 KiB, where a blocking copy out of the GPU grows at 53). This issues the pair call for call
// as dmaprobe does (gate kernel on s1, start event, s2 waits for it, the copies, an event behind
// each, s1 waits for s2's event, the stop event), then a host delay D (0 to 8.5 us by 0.5), then
// the gate opens; in three shapes: both copies, the copy out of the GPU alone (no call for the
// copy into it, every other call kept), the copy into the GPU alone; 4 KiB, 64 KiB, 256 KiB and
// 1 MiB. Each copy's end after the start event, and the stop event's: medians, and p10/p90 of
// the copy out of the GPU, over 60 repetitions after 5 warm-ups; data verified per cell; every
// CUDA call checked; the gate gives up after 1 s.
//
// Build: nvcc -O3 -arch=sm_90 reps.cu -o reps
// Run:   ./reps > reps.csv 2> reps-calls.csv
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

constexpr int kWarmup = 10;
constexpr int kReps = 500;
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
    std::printf("bytes,rep,interval_us,h2d_us,d2h_us,h2d_call_to_gate_us,d2h_call_to_gate_us,stop_start_to_gate_us,stop_end_to_gate_us\n");
    for (const std::size_t n : {std::size_t{4096}, std::size_t{65536}, std::size_t{262144}, std::size_t{1} << 20}) {
        {
            const bool up = true, down = true;
            for (double d = 0.0; d <= 0.0; d += 1.0) {
                std::vector<double> all, ups, downs;
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
                    gate_kernel<<<1, 1, 0, s1>>>(dflag, dtimed_out);
                    CHECK(cudaGetLastError());
                    timed("event_record", [&] { CHECK(cudaEventRecord(start, s1)); });
                    timed("stream_wait_event", [&] { CHECK(cudaStreamWaitEvent(s2, start, 0)); });
                    if (up) timed("memcpy_async_h2d", [&] { CHECK(cudaMemcpyAsync(ddst, hsrc, n, cudaMemcpyHostToDevice, s1)); });
                    const auto h2d_end = Clock::now();
                    if (down) timed("memcpy_async_d2h", [&] { CHECK(cudaMemcpyAsync(hdst, dsrc, n, cudaMemcpyDeviceToHost, s2)); });
                    const auto d2h_end = Clock::now();
                    timed("event_record", [&] { CHECK(cudaEventRecord(e1, s1)); });
                    timed("event_record", [&] { CHECK(cudaEventRecord(e2, s2)); });
                    timed("stream_wait_event", [&] { CHECK(cudaStreamWaitEvent(s1, e2, 0)); });
                    const auto stop_start = Clock::now();
                    timed("event_record", [&] { CHECK(cudaEventRecord(stop, s1)); });
                    const auto stop_end = Clock::now();
                    busy_wait_us(d);
                    const auto gate = Clock::now();
                    *reinterpret_cast<volatile int*>(flag) = 1;
                    const auto us_to_gate = [&](Clock::time_point t) { return std::chrono::duration<double, std::micro>(gate - t).count(); };
                    CHECK(cudaEventSynchronize(stop));
                    if (*timed_out != 0) {
                        std::fprintf(stderr, "the gate timed out\n");
                        return 1;
                    }
                    if (r >= kWarmup) {
                        all.push_back(elapsed_us(start, stop));
                        ups.push_back(elapsed_us(start, e1));
                        downs.push_back(elapsed_us(start, e2));
                        std::printf("%zu,%d,%.4f,%.4f,%.4f,%.4f,%.4f,%.4f,%.4f\n", n, r - kWarmup, all.back(), ups.back(), downs.back(),
                                    us_to_gate(h2d_end), us_to_gate(d2h_end), us_to_gate(stop_start), us_to_gate(stop_end));
                    }
                }
                if (up) {
                    CHECK(cudaMemcpy(back, ddst, n, cudaMemcpyDeviceToHost));
                    if (std::memcmp(back, hsrc, n) != 0) {
                        std::fprintf(stderr, "verification failed: H2D of %zu bytes\n", n);
                        return 1;
                    }
                }
                if (down) {
                    std::vector<unsigned char> want(n);
                    CHECK(cudaMemcpy(want.data(), dsrc, n, cudaMemcpyDeviceToHost));
                    if (std::memcmp(hdst, want.data(), n) != 0) {
                        std::fprintf(stderr, "verification failed: D2H of %zu bytes\n", n);
                        return 1;
                    }
                }
                std::fflush(stdout);
            }
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
