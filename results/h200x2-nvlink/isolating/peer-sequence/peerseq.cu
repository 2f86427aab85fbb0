// Does dmaprobe's both-ways peer row (peer access on) end where the isolating sweeps of
// ../peer-phase say, without their two extra events? The main plan's 2xH200 leases sit 1.5 us
// below the model's phases at 1 MiB where the sweeps, with an event behind GPU 1's wait (start1)
// and one behind GPU 0's copy (end0), agree with it within 2.8 %. Here the sequences run on the
// same machine, interleaved, with the CPU spinning D us right before GPU 0's copy call:
//   main     dmaprobe's measure_peer exactly: both sources refilled by a kernel and a device
//            synchronisation before each repetition (GPU 0's, then GPU 1's), then the start event
//            on GPU 0; GPU 1's stream waits for it, copies 1 -> 0, records other_done; GPU 0
//            copies 0 -> 1, waits for other_done, records the stop;
//   bare     the same without the refills (both GPUs synchronised instead, as peerphase.cu);
//   events   bare with start1 and end0 (peerphase.cu's sequence);
//   start1   bare with start1 only;   end0   bare with end0 only;
//   mainev   main with start1 and end0.
// Every repetition is printed: bytes,case,delay_us,rep,row_us,call0_us,wait_call_us (the CPU's
// time from the start event's call to GPU 0's copy call and to its wait's call). 1 and 16 MiB,
// D = 0 to 16 us by 1; 3 warm-ups and 20 repetitions a cell, the cases of one D one after the
// other; the data of each cell verified; every CUDA call checked.
//
// Build: nvcc -O3 -arch=sm_90 peerseq.cu -o peerseq
// Run:   ./peerseq > peerseq.csv
#include <cuda_runtime.h>

#include <chrono>
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

constexpr int kWarmup = 3;
constexpr int kReps = 20;
constexpr double kMaxDelayUs = 16.0;
constexpr double kDelayStepUs = 1.0;

using Clock = std::chrono::steady_clock;

// dmaprobe's refill of a source before each repetition: a kernel writing every byte.
__global__ void refill(unsigned char* p, std::size_t n, unsigned seed) {
    for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < n;
         i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
        p[i] = static_cast<unsigned char>((i * 131u + seed * 17u + 7u) % 251u + 1u);
    }
}

float elapsed_us(cudaEvent_t a, cudaEvent_t b) {
    float ms = 0;
    CHECK(cudaEventElapsedTime(&ms, a, b));
    return ms * 1000.0f;
}

void spin_us(double us) {
    const auto until = Clock::now() + std::chrono::duration<double, std::micro>(us);
    while (Clock::now() < until) {
    }
}

void fill(unsigned char* d, std::size_t n, unsigned seed, int dev) {
    std::vector<unsigned char> h(n);
    for (std::size_t i = 0; i < n; ++i) h[i] = static_cast<unsigned char>((i * 131u + seed * 17u + 7u) % 251u + 1u);
    CHECK(cudaSetDevice(dev));
    CHECK(cudaMemcpy(d, h.data(), n, cudaMemcpyHostToDevice));
}

// Whether device buffer p on dev holds `want`.
bool holds(const unsigned char* p, int dev, const std::vector<unsigned char>& want) {
    std::vector<unsigned char> h(want.size());
    CHECK(cudaSetDevice(dev));
    CHECK(cudaMemcpy(h.data(), p, want.size(), cudaMemcpyDeviceToHost));
    return std::memcmp(h.data(), want.data(), want.size()) == 0;
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
        const cudaError_t e = cudaDeviceEnablePeerAccess(1 - a, 0);
        if (e == cudaErrorPeerAccessAlreadyEnabled) {
            (void)cudaGetLastError();
        } else {
            CHECK(e);
        }
    }
    const std::size_t max = std::size_t{16} << 20;
    unsigned char *src0 = nullptr, *dst0 = nullptr, *src1 = nullptr, *dst1 = nullptr;
    cudaStream_t s0, s1;
    cudaEvent_t start0, end0, stop0, start1, end1;
    CHECK(cudaSetDevice(0));
    CHECK(cudaMalloc(&src0, max));
    CHECK(cudaMalloc(&dst0, max));
    CHECK(cudaStreamCreateWithFlags(&s0, cudaStreamNonBlocking));
    for (cudaEvent_t* e : {&start0, &end0, &stop0}) CHECK(cudaEventCreate(e));
    CHECK(cudaSetDevice(1));
    CHECK(cudaMalloc(&src1, max));
    CHECK(cudaMalloc(&dst1, max));
    CHECK(cudaStreamCreateWithFlags(&s1, cudaStreamNonBlocking));
    for (cudaEvent_t* e : {&start1, &end1}) CHECK(cudaEventCreate(e));
    fill(src0, max, 1, 0);
    fill(src1, max, 2, 1);
    std::printf("bytes,case,delay_us,rep,row_us,call0_us,wait_call_us\n");
    const char* cases[] = {"main", "bare", "events", "start1", "end0", "mainev"};
    for (const std::size_t n : {std::size_t{1} << 20, max}) {
        for (double d = 0.0; d <= kMaxDelayUs + 1e-9; d += kDelayStepUs) {
            for (const char* which : cases) {
                const std::string c = which;
                const bool fills = c == "main" || c == "mainev";
                const bool with_start1 = c == "events" || c == "start1" || c == "mainev";
                const bool with_end0 = c == "events" || c == "end0" || c == "mainev";
                // Each cell starts from the first fill's sources (a refilling case changes them).
                CHECK(cudaSetDevice(0));
                refill<<<264, 256>>>(src0, n, 1u);
                CHECK(cudaGetLastError());
                CHECK(cudaMemset(dst0, 0, n));
                CHECK(cudaDeviceSynchronize());
                CHECK(cudaSetDevice(1));
                refill<<<264, 256>>>(src1, n, 2u);
                CHECK(cudaGetLastError());
                CHECK(cudaMemset(dst1, 0, n));
                CHECK(cudaDeviceSynchronize());
                for (int r = 0; r < kWarmup + kReps; ++r) {
                    if (fills) {
                        const unsigned seed = static_cast<unsigned>(r);
                        CHECK(cudaSetDevice(0));
                        refill<<<264, 256>>>(src0, n, 1u + seed);
                        CHECK(cudaGetLastError());
                        CHECK(cudaDeviceSynchronize());
                        CHECK(cudaSetDevice(1));
                        refill<<<264, 256>>>(src1, n, 2u + seed);
                        CHECK(cudaGetLastError());
                        CHECK(cudaDeviceSynchronize());
                    } else {
                        CHECK(cudaSetDevice(1));
                        CHECK(cudaDeviceSynchronize());
                        CHECK(cudaSetDevice(0));
                        CHECK(cudaDeviceSynchronize());
                    }
                    CHECK(cudaSetDevice(0));
                    const auto t_start = Clock::now();
                    CHECK(cudaEventRecord(start0, s0));
                    CHECK(cudaSetDevice(1));
                    CHECK(cudaStreamWaitEvent(s1, start0, 0));
                    if (with_start1) CHECK(cudaEventRecord(start1, s1));
                    CHECK(cudaMemcpyPeerAsync(dst0, 0, src1, 1, n, s1));
                    CHECK(cudaEventRecord(end1, s1));
                    CHECK(cudaSetDevice(0));
                    spin_us(d);
                    const double call0 = std::chrono::duration<double, std::micro>(Clock::now() - t_start).count();
                    CHECK(cudaMemcpyPeerAsync(dst1, 1, src0, 0, n, s0));
                    if (with_end0) CHECK(cudaEventRecord(end0, s0));
                    const double wait_call = std::chrono::duration<double, std::micro>(Clock::now() - t_start).count();
                    CHECK(cudaStreamWaitEvent(s0, end1, 0));
                    CHECK(cudaEventRecord(stop0, s0));
                    CHECK(cudaEventSynchronize(stop0));
                    CHECK(cudaSetDevice(1));
                    CHECK(cudaDeviceSynchronize());
                    CHECK(cudaSetDevice(0));
                    if (r < kWarmup) continue;
                    std::printf("%zu,%s,%.1f,%d,%.3f,%.3f,%.3f\n", n, which, d, r - kWarmup, elapsed_us(start0, stop0), call0, wait_call);
                }
                // The last repetition's sources: refilled with its seed, or the first fill's.
                const unsigned last = fills ? static_cast<unsigned>(kWarmup + kReps - 1) : 0u;
                std::vector<unsigned char> want0(n), want1(n);
                for (std::size_t i = 0; i < n; ++i) {
                    want0[i] = static_cast<unsigned char>((i * 131u + (1u + last) * 17u + 7u) % 251u + 1u);
                    want1[i] = static_cast<unsigned char>((i * 131u + (2u + last) * 17u + 7u) % 251u + 1u);
                }
                if (!holds(dst1, 1, want0) || !holds(dst0, 0, want1)) {
                    std::fprintf(stderr, "verification failed: %s, %zu bytes, delay %.1f\n", which, n, d);
                    return 1;
                }
                CHECK(cudaSetDevice(0));
            }
        }
        std::fflush(stdout);
    }
    return 0;
}
