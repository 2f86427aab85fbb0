// Where in a call does a stream's submission restart its channel's count of tries? A copy into
// the GPU behind the gate kernel on stream s1 waits for the kernel by retrying a semaphore every
// ~8.1 us, counted from the latest submission to s1 (../duplex-phase-anchor: dmaprobe's copy into
// the GPU counts from the stop event's call, four calls after its own). Here the copy is followed
// by its event (e1, which submits nothing: it takes the copy's release) and then by a tail of
// calls; a host delay D (0 to 8.5 us by 0.25) follows the tail, then the gate opens. The copy's
// end after the start event is a sawtooth in D whose jump falls where the time from the
// restarting submission to the gate is a whole number of periods: a tail whose submission
// restarts the count at its end moves the jump by nothing against the bare copy, one that
// restarts it at its start by the call's own time, one that does not restart it by the whole
// tail's time. Tails: none; cudaStreamWaitEvent(s1, e2) on an event of s2 still behind the gate;
// that wait and then the stop event on s1 (dmaprobe's duplex pair ends so); an event on s2 (a
// call that submits to another stream only); an empty kernel on s1; a 4-byte copy into the GPU
// on s1; a busy-wait of 1.5 us (no call). 4 KiB; 5 warm-ups and 100 timed repetitions a cell; the
// copy's data verified per cell; every CUDA call checked; the gate gives up after 1 s.
//
// Build: nvcc -O3 -arch=sm_90 submitpoint.cu -o submitpoint
// Run:   ./submitpoint > submitpoint.csv 2> calls.csv
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
constexpr int kReps = 100;
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

__global__ void empty_kernel() {}

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

double quantile(std::vector<double> v, double q) {
    std::sort(v.begin(), v.end());
    return v[static_cast<std::size_t>(q * static_cast<double>(v.size() - 1) + 0.5)];
}

}  // namespace

int main() {
    CHECK(cudaSetDevice(0));
    const std::size_t n = 4096;
    unsigned char *hsrc = nullptr, *back = nullptr, *ddst = nullptr, *dsmall = nullptr;
    int *flag = nullptr, *timed_out = nullptr;
    CHECK(cudaMallocHost(&hsrc, n));
    CHECK(cudaMallocHost(&back, n));
    CHECK(cudaMalloc(&ddst, n));
    CHECK(cudaMalloc(&dsmall, 64));
    CHECK(cudaHostAlloc(&flag, sizeof(int), cudaHostAllocMapped));
    CHECK(cudaHostAlloc(&timed_out, sizeof(int), cudaHostAllocMapped));
    int *dflag = nullptr, *dtimed_out = nullptr;
    CHECK(cudaHostGetDevicePointer(&dflag, flag, 0));
    CHECK(cudaHostGetDevicePointer(&dtimed_out, timed_out, 0));
    *timed_out = 0;
    for (std::size_t i = 0; i < n; ++i) hsrc[i] = static_cast<unsigned char>((i * 131u + 7u) % 251u + 1u);
    cudaStream_t s1, s2;
    CHECK(cudaStreamCreateWithFlags(&s1, cudaStreamNonBlocking));
    CHECK(cudaStreamCreateWithFlags(&s2, cudaStreamNonBlocking));
    cudaEvent_t start, stop, e1, e2, e3;
    for (cudaEvent_t* e : {&start, &stop, &e1, &e2, &e3}) CHECK(cudaEventCreate(e));
    std::map<std::string, std::vector<double>> calls;  // CPU time of each call, all cells
    std::printf("tail,bytes,delay_us,median_us,mean_us,p25_us,p75_us,tail_call_us\n");
    const char* tails[] = {"none", "wait", "wait_record", "record_other_stream", "kernel", "copy_4B", "cpu_1.5us"};
    for (int tail = 0; tail < 7; ++tail) {
        for (double d = 0.0; d <= 8.5 + 1e-9; d += 0.25) {
            std::vector<double> up, tail_us;
            for (int r = 0; r < kWarmup + kReps; ++r) {
                CHECK(cudaMemset(ddst, 0, n));
                CHECK(cudaDeviceSynchronize());
                *reinterpret_cast<volatile int*>(flag) = 0;
                const bool keep = r >= kWarmup;
                const auto timed = [&](const char* what, auto&& f) {
                    const auto t0 = Clock::now();
                    f();
                    const double us = std::chrono::duration<double, std::micro>(Clock::now() - t0).count();
                    if (keep) calls[what].push_back(us);
                    return us;
                };
                gate_kernel<<<1, 1, 0, s1>>>(dflag, dtimed_out);
                CHECK(cudaGetLastError());
                CHECK(cudaEventRecord(start, s1));
                // s2's event e2 stays behind the gate: s2 waits for the start event first.
                CHECK(cudaStreamWaitEvent(s2, start, 0));
                CHECK(cudaEventRecord(e2, s2));
                timed("memcpy_async_h2d", [&] { CHECK(cudaMemcpyAsync(ddst, hsrc, n, cudaMemcpyHostToDevice, s1)); });
                timed("event_record_behind_copy", [&] { CHECK(cudaEventRecord(e1, s1)); });
                double t = 0.0;
                switch (tail) {
                    case 1: t = timed("stream_wait_event", [&] { CHECK(cudaStreamWaitEvent(s1, e2, 0)); }); break;
                    case 2:
                        t = timed("stream_wait_event", [&] { CHECK(cudaStreamWaitEvent(s1, e2, 0)); });
                        t += timed("event_record_behind_wait", [&] { CHECK(cudaEventRecord(stop, s1)); });
                        break;
                    case 3: t = timed("event_record_other_stream", [&] { CHECK(cudaEventRecord(e3, s2)); }); break;
                    case 4:
                        t = timed("kernel_launch", [&] {
                            empty_kernel<<<1, 1, 0, s1>>>();
                            CHECK(cudaGetLastError());
                        });
                        break;
                    case 5:
                        t = timed("memcpy_async_h2d_4B", [&] { CHECK(cudaMemcpyAsync(dsmall, hsrc, 4, cudaMemcpyHostToDevice, s1)); });
                        break;
                    case 6: t = timed("busy_wait_1.5us", [&] { busy_wait_us(1.5); }); break;
                    default: break;
                }
                busy_wait_us(d);
                *reinterpret_cast<volatile int*>(flag) = 1;
                CHECK(cudaDeviceSynchronize());
                if (*timed_out != 0) {
                    std::fprintf(stderr, "the gate timed out\n");
                    return 1;
                }
                if (keep) {
                    up.push_back(elapsed_us(start, e1));
                    tail_us.push_back(t);
                }
            }
            CHECK(cudaMemcpy(back, ddst, n, cudaMemcpyDeviceToHost));
            if (std::memcmp(back, hsrc, n) != 0) {
                std::fprintf(stderr, "verification failed: %s, delay %.2f\n", tails[tail], d);
                return 1;
            }
            double mean = 0.0;
            for (const double v : up) mean += v;
            mean /= static_cast<double>(up.size());
            std::printf("%s,%zu,%.2f,%.4f,%.4f,%.4f,%.4f,%.4f\n", tails[tail], n, d, quantile(up, 0.5), mean, quantile(up, 0.25),
                        quantile(up, 0.75), quantile(tail_us, 0.5));
            std::fflush(stdout);
        }
    }
    std::fprintf(stderr, "call,median_us,p10_us,p90_us,n\n");
    for (auto& [what, v] : calls) {
        std::fprintf(stderr, "%s,%.4f,%.4f,%.4f,%zu\n", what.c_str(), quantile(v, 0.5), quantile(v, 0.1), quantile(v, 0.9), v.size());
    }
    for (cudaEvent_t e : {start, stop, e1, e2, e3}) CHECK(cudaEventDestroy(e));
    CHECK(cudaStreamDestroy(s1));
    CHECK(cudaStreamDestroy(s2));
    CHECK(cudaFree(ddst));
    CHECK(cudaFree(dsmall));
    CHECK(cudaFreeHost(hsrc));
    CHECK(cudaFreeHost(back));
    CHECK(cudaFreeHost(flag));
    CHECK(cudaFreeHost(timed_out));
    return 0;
}
