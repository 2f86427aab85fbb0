// Is a stream operation that waits for another engine's work polled? A 4 B device-to-host copy
// (a copy engine's work) behind a spin kernel on the same stream (the gated interval), and the
// same copy on a second stream that waits for an event behind the spin (dmaprobe's duplex), are
// timed while the spin's hold grows in steps of 0.5 us. If the waiting channel retries its
// semaphore every P us from when it first blocked, the time after the spin is a sawtooth in the
// hold with period P; if it is woken by the release, it stays flat. A host delay before the
// copy's call shifts the sawtooth's phase by as much if the first blocked attempt sets it. An
// empty kernel behind the spin (same engine) is the reference.
//
// Build: nvcc -O3 -arch=sm_90 pollsweep.cu -o pollsweep
// Run:   ./pollsweep > pollsweep.csv
//
// Cases (elapsed(eMid, eB) unless said): same_stream: spin; eMid; copy; eB. cross: stream 1
// spin; eMid; stream 2 waits eMid; copy; eC; stream 1 waits eC; eB. kernel: spin; eMid; empty
// kernel; eB. Hold 100-124 us by 0.5 us; host delay 0, 2, 4 us before the copy's call
// (same_stream); 5 warm-ups and 40 timed repetitions per cell; every CUDA call checked; the
// copied 4 bytes verified per cell.
#include <cuda_runtime.h>

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

constexpr int kWarmup = 5;
constexpr int kReps = 40;

__global__ void spin_kernel(unsigned long long ns) {
    unsigned long long t0;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
    for (;;) {
        unsigned long long t;
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
        if (t - t0 >= ns) break;
    }
}

__global__ void empty_kernel() {}

void host_delay(double us) {
    const auto t0 = std::chrono::steady_clock::now();
    while (std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count() < us) {
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
    unsigned int *dsrc = nullptr, *hdst = nullptr;
    CHECK(cudaMalloc(&dsrc, sizeof(unsigned int)));
    CHECK(cudaMallocHost(&hdst, sizeof(unsigned int)));
    const unsigned int pattern = 0x5a17c3e9u;
    CHECK(cudaMemcpy(dsrc, &pattern, sizeof pattern, cudaMemcpyHostToDevice));
    cudaStream_t s1, s2;
    CHECK(cudaStreamCreateWithFlags(&s1, cudaStreamNonBlocking));
    CHECK(cudaStreamCreateWithFlags(&s2, cudaStreamNonBlocking));
    cudaEvent_t eMid, eB, eC;
    CHECK(cudaEventCreate(&eMid));
    CHECK(cudaEventCreate(&eB));
    CHECK(cudaEventCreate(&eC));
    const auto spin = [&](cudaStream_t s, double hold_us) {
        spin_kernel<<<1, 1, 0, s>>>(static_cast<unsigned long long>(hold_us * 1000.0));
        CHECK(cudaGetLastError());
    };
    std::printf("case,hold_us,delay_us,p10_us,median_us,p90_us\n");
    struct Cell {
        const char* name;
        double delay;
    };
    const Cell cells[] = {{"same_stream", 0.0}, {"same_stream", 2.0}, {"same_stream", 4.0}, {"cross", 0.0}, {"kernel", 0.0}};
    for (const Cell& cell : cells) {
        for (double hold = 100.0; hold <= 124.0; hold += 0.5) {
            std::vector<double> t;
            *hdst = 0;
            for (int r = 0; r < kWarmup + kReps; ++r) {
                spin(s1, hold);
                CHECK(cudaEventRecord(eMid, s1));
                if (std::strcmp(cell.name, "cross") == 0) {
                    CHECK(cudaStreamWaitEvent(s2, eMid, 0));
                    CHECK(cudaMemcpyAsync(hdst, dsrc, sizeof(unsigned int), cudaMemcpyDeviceToHost, s2));
                    CHECK(cudaEventRecord(eC, s2));
                    CHECK(cudaStreamWaitEvent(s1, eC, 0));
                } else if (std::strcmp(cell.name, "kernel") == 0) {
                    empty_kernel<<<1, 1, 0, s1>>>();
                    CHECK(cudaGetLastError());
                } else {
                    host_delay(cell.delay);
                    CHECK(cudaMemcpyAsync(hdst, dsrc, sizeof(unsigned int), cudaMemcpyDeviceToHost, s1));
                }
                CHECK(cudaEventRecord(eB, s1));
                CHECK(cudaEventSynchronize(eB));
                if (r >= kWarmup) t.push_back(elapsed_us(eMid, eB));
            }
            CHECK(cudaDeviceSynchronize());
            if (std::strcmp(cell.name, "kernel") != 0 && *hdst != pattern) {
                std::fprintf(stderr, "verification failed: %s hold %.1f\n", cell.name, hold);
                return 1;
            }
            std::sort(t.begin(), t.end());
            const auto at = [&](double q) { return t[static_cast<std::size_t>(q * static_cast<double>(t.size() - 1) + 0.5)]; };
            std::printf("%s,%.1f,%.1f,%.4f,%.4f,%.4f\n", cell.name, hold, cell.delay, at(0.1), at(0.5), at(0.9));
            std::fflush(stdout);
        }
    }
    CHECK(cudaEventDestroy(eMid));
    CHECK(cudaEventDestroy(eB));
    CHECK(cudaEventDestroy(eC));
    CHECK(cudaStreamDestroy(s1));
    CHECK(cudaStreamDestroy(s2));
    CHECK(cudaFree(dsrc));
    CHECK(cudaFreeHost(hdst));
    return 0;
}
