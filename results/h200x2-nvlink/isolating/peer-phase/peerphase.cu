// Where does a peer copy's both-ways row end, against when GPU 0's own copy is issued? (2 GPUs,
// peer access on.) dmaprobe's both-ways sequence (start event on GPU 0; cudaSetDevice(1), GPU 1's
// stream waits for the start event, records start1, copies 1 -> 0, records end1; cudaSetDevice(0),
// GPU 0 copies 0 -> 1, records end0, waits for end1, records stop) with the CPU spinning D us right
// before GPU 0's copy call, D = 0 to 16 us by 0.5 us. If the wait for GPU 1's copy behind GPU 0's
// copy passes a fixed time after the later of the two ends, the row grows with D only once GPU 0's
// copy ends last, then one for one; if that wait is tried at the polls of GPU 0's channel, counted
// from a submission, the row is a staircase in D with the poll's period.
// Cases: "both" as above; "alone1" the same calls without GPU 0's copy (its wait is reached before
// GPU 1's copy ends), so the row is GPU 1's end plus a wait that was waiting already.
// Every repetition is printed: bytes,case,delay_us,rep,row_us,gpu0_us,gpu1_us,call0_us (the CPU's
// time from the start event's call to GPU 0's copy call). 1 and 16 MiB; 3 warm-ups, 20 repetitions
// a cell; the data of each cell verified; every CUDA call checked.
//
// Build: nvcc -O3 -arch=sm_90 peerphase.cu -o peerphase
// Run:   ./peerphase > peerphase.csv
#include <cuda_runtime.h>

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
constexpr int kReps = 20;
constexpr double kMaxDelayUs = 16.0;
constexpr double kDelayStepUs = 0.5;

using Clock = std::chrono::steady_clock;

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

bool same(const unsigned char* a, int dev_a, const unsigned char* b, int dev_b, std::size_t n) {
    std::vector<unsigned char> ha(n), hb(n);
    CHECK(cudaSetDevice(dev_a));
    CHECK(cudaMemcpy(ha.data(), a, n, cudaMemcpyDeviceToHost));
    CHECK(cudaSetDevice(dev_b));
    CHECK(cudaMemcpy(hb.data(), b, n, cudaMemcpyDeviceToHost));
    return std::memcmp(ha.data(), hb.data(), n) == 0;
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
    std::printf("bytes,case,delay_us,rep,row_us,gpu0_us,gpu1_us,call0_us\n");
    for (const std::size_t n : {std::size_t{1} << 20, max}) {
        for (const char* which : {"both", "alone1"}) {
            const bool both = std::strcmp(which, "both") == 0;
            for (double d = 0.0; d <= kMaxDelayUs + 1e-9; d += kDelayStepUs) {
                CHECK(cudaMemset(dst0, 0, n));
                CHECK(cudaSetDevice(1));
                CHECK(cudaMemset(dst1, 0, n));
                for (int r = 0; r < kWarmup + kReps; ++r) {
                    CHECK(cudaSetDevice(1));
                    CHECK(cudaDeviceSynchronize());
                    CHECK(cudaSetDevice(0));
                    CHECK(cudaDeviceSynchronize());
                    const auto t_start = Clock::now();
                    CHECK(cudaEventRecord(start0, s0));
                    CHECK(cudaSetDevice(1));
                    CHECK(cudaStreamWaitEvent(s1, start0, 0));
                    CHECK(cudaEventRecord(start1, s1));
                    CHECK(cudaMemcpyPeerAsync(dst0, 0, src1, 1, n, s1));
                    CHECK(cudaEventRecord(end1, s1));
                    CHECK(cudaSetDevice(0));
                    spin_us(d);
                    const double call0 = std::chrono::duration<double, std::micro>(Clock::now() - t_start).count();
                    if (both) CHECK(cudaMemcpyPeerAsync(dst1, 1, src0, 0, n, s0));
                    CHECK(cudaEventRecord(end0, s0));
                    CHECK(cudaStreamWaitEvent(s0, end1, 0));
                    CHECK(cudaEventRecord(stop0, s0));
                    CHECK(cudaEventSynchronize(stop0));
                    CHECK(cudaSetDevice(1));
                    CHECK(cudaDeviceSynchronize());
                    CHECK(cudaSetDevice(0));
                    if (r < kWarmup) continue;
                    std::printf("%zu,%s,%.1f,%d,%.3f,%.3f,%.3f,%.3f\n", n, which, d, r - kWarmup, elapsed_us(start0, stop0),
                                elapsed_us(start0, end0), elapsed_us(start1, end1), call0);
                }
                if (both && !same(src0, 0, dst1, 1, n)) {
                    std::fprintf(stderr, "verification failed: 0 -> 1, %zu bytes, delay %.1f\n", n, d);
                    return 1;
                }
                if (!same(src1, 1, dst0, 0, n)) {
                    std::fprintf(stderr, "verification failed: 1 -> 0, %zu bytes, delay %.1f\n", n, d);
                    return 1;
                }
                CHECK(cudaSetDevice(0));
            }
            std::fflush(stdout);
        }
    }
    return 0;
}
