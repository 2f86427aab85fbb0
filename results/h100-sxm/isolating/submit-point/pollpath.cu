// Is the offset between dmaprobe's two gated copies' poll phases (../duplex-phase-anchor: the
// copy into the GPU behind the gate kernel on its own stream tries ~1.6-1.9 us earlier against
// its last submission than the copy out of the GPU behind a wait for the start event on another
// stream) a matter of the copy's direction or of what it waits for? One gated 4 KiB copy in four
// shapes: into or out of the GPU, on the gate kernel's stream s1 (behind the kernel and the start
// event) or on s2 behind cudaStreamWaitEvent(s2, start); its end event right behind it (which
// submits nothing); a host delay D (0 to 8.5 us by 0.25) after the copy's event, then the gate
// opens. The copy's end after the start event is a sawtooth in D: its jump gives where the
// copy's tries fall against its call, its floor what follows the try. 5 warm-ups and 100 timed
// repetitions a cell; data verified per cell; every CUDA call checked; the gate gives up after 1 s.
//
// Build: nvcc -O3 -arch=sm_90 pollpath.cu -o pollpath
// Run:   ./pollpath > pollpath.csv 2> pollpath-calls.csv
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
    unsigned char *hsrc = nullptr, *hdst = nullptr, *back = nullptr, *ddst = nullptr, *dsrc = nullptr;
    int *flag = nullptr, *timed_out = nullptr;
    CHECK(cudaMallocHost(&hsrc, n));
    CHECK(cudaMallocHost(&hdst, n));
    CHECK(cudaMallocHost(&back, n));
    CHECK(cudaMalloc(&ddst, n));
    CHECK(cudaMalloc(&dsrc, n));
    CHECK(cudaHostAlloc(&flag, sizeof(int), cudaHostAllocMapped));
    CHECK(cudaHostAlloc(&timed_out, sizeof(int), cudaHostAllocMapped));
    int *dflag = nullptr, *dtimed_out = nullptr;
    CHECK(cudaHostGetDevicePointer(&dflag, flag, 0));
    CHECK(cudaHostGetDevicePointer(&dtimed_out, timed_out, 0));
    *timed_out = 0;
    for (std::size_t i = 0; i < n; ++i) {
        hsrc[i] = static_cast<unsigned char>((i * 131u + 7u) % 251u + 1u);
        back[i] = static_cast<unsigned char>((i * 17u + 3u) % 253u + 1u);
    }
    CHECK(cudaMemcpy(dsrc, back, n, cudaMemcpyHostToDevice));
    cudaStream_t s1, s2;
    CHECK(cudaStreamCreateWithFlags(&s1, cudaStreamNonBlocking));
    CHECK(cudaStreamCreateWithFlags(&s2, cudaStreamNonBlocking));
    cudaEvent_t start, e1;
    for (cudaEvent_t* e : {&start, &e1}) CHECK(cudaEventCreate(e));
    std::map<std::string, std::vector<double>> calls;  // CPU time of each call, all cells
    std::printf("shape,bytes,delay_us,median_us,mean_us,p25_us,p75_us\n");
    const char* shapes[] = {"h2d_gate_stream", "d2h_gate_stream", "h2d_after_wait", "d2h_after_wait"};
    for (int shape = 0; shape < 4; ++shape) {
        const bool up = shape % 2 == 0;
        const bool after_wait = shape >= 2;
        for (double d = 0.0; d <= 8.5 + 1e-9; d += 0.25) {
            std::vector<double> ends;
            std::memset(hdst, 0, n);
            for (std::size_t i = 0; i < n; i += 64) _mm_clflush(hdst + i);
            _mm_mfence();
            for (int r = 0; r < kWarmup + kReps; ++r) {
                CHECK(cudaMemset(ddst, 0, n));
                CHECK(cudaDeviceSynchronize());
                *reinterpret_cast<volatile int*>(flag) = 0;
                const bool keep = r >= kWarmup;
                const auto timed = [&](const char* what, auto&& f) {
                    const auto t0 = Clock::now();
                    f();
                    if (keep) calls[what].push_back(std::chrono::duration<double, std::micro>(Clock::now() - t0).count());
                };
                gate_kernel<<<1, 1, 0, s1>>>(dflag, dtimed_out);
                CHECK(cudaGetLastError());
                CHECK(cudaEventRecord(start, s1));
                cudaStream_t s = s1;
                if (after_wait) {
                    s = s2;
                    timed("stream_wait_event", [&] { CHECK(cudaStreamWaitEvent(s2, start, 0)); });
                }
                if (up) {
                    timed("memcpy_async_h2d", [&] { CHECK(cudaMemcpyAsync(ddst, hsrc, n, cudaMemcpyHostToDevice, s)); });
                } else {
                    timed("memcpy_async_d2h", [&] { CHECK(cudaMemcpyAsync(hdst, dsrc, n, cudaMemcpyDeviceToHost, s)); });
                }
                timed("event_record_behind_copy", [&] { CHECK(cudaEventRecord(e1, s)); });
                busy_wait_us(d);
                *reinterpret_cast<volatile int*>(flag) = 1;
                CHECK(cudaDeviceSynchronize());
                if (*timed_out != 0) {
                    std::fprintf(stderr, "the gate timed out\n");
                    return 1;
                }
                if (keep) ends.push_back(elapsed_us(start, e1));
            }
            if (up) {
                CHECK(cudaMemcpy(back, ddst, n, cudaMemcpyDeviceToHost));
                if (std::memcmp(back, hsrc, n) != 0) {
                    std::fprintf(stderr, "verification failed: %s, delay %.2f\n", shapes[shape], d);
                    return 1;
                }
            } else {
                std::vector<unsigned char> want(n);
                CHECK(cudaMemcpy(want.data(), dsrc, n, cudaMemcpyDeviceToHost));
                if (std::memcmp(hdst, want.data(), n) != 0) {
                    std::fprintf(stderr, "verification failed: %s, delay %.2f\n", shapes[shape], d);
                    return 1;
                }
            }
            double mean = 0.0;
            for (const double v : ends) mean += v;
            mean /= static_cast<double>(ends.size());
            std::printf("%s,%zu,%.2f,%.4f,%.4f,%.4f,%.4f\n", shapes[shape], n, d, quantile(ends, 0.5), mean, quantile(ends, 0.25),
                        quantile(ends, 0.75));
            std::fflush(stdout);
        }
    }
    std::fprintf(stderr, "call,median_us,p10_us,p90_us,n\n");
    for (auto& [what, v] : calls) {
        std::fprintf(stderr, "%s,%.4f,%.4f,%.4f,%zu\n", what.c_str(), quantile(v, 0.5), quantile(v, 0.1), quantile(v, 0.9), v.size());
    }
    for (cudaEvent_t e : {start, e1}) CHECK(cudaEventDestroy(e));
    CHECK(cudaStreamDestroy(s1));
    CHECK(cudaStreamDestroy(s2));
    CHECK(cudaFree(ddst));
    CHECK(cudaFree(dsrc));
    CHECK(cudaFreeHost(hsrc));
    CHECK(cudaFreeHost(hdst));
    CHECK(cudaFreeHost(back));
    CHECK(cudaFreeHost(flag));
    CHECK(cudaFreeHost(timed_out));
    return 0;
}
