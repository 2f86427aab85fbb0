// Where do a one-piece staged peer copy's extra 3 us go? Its event interval less its call's CPU
// time is 21.5-22.2 us on four leases, where its two copies and two cross-GPU handoffs come to
// about 18.5 (summary.csv). If the runtime's own stream on the source GPU waits for the
// application's stream, or the application's stream for the runtime's, on the same GPU, such a
// wait is polled by a copy channel (runtime.poll_period, results/h100-sxm/isolating/
// stream-handoffs): behind a spin kernel, the time from the event after the spin to the copy's
// end would then be a sawtooth in the spin's length of period about 8 us. This program sweeps
// the spin from 100 to 124 us in steps of 0.5 us:
//   staged   spin, start event, cudaMemcpyPeerAsync of 64 KiB with peer access off, stop event
//   local    the same with a device-to-host copy of 64 KiB on the application's stream (a
//            same-channel control: no wait between streams)
// on the application's stream of GPU 0; the calls are queued long before the spin ends.
//
// Build: nvcc -O3 -arch=sm_90 stagedsweep.cu -o stagedsweep
// Run:   ./stagedsweep > stagedsweep.csv     (needs two GPUs)
// One warm-up and 9 timed repetitions per spin length; medians; the copied data verified once.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
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

constexpr std::size_t kBytes = 64 * 1024;
constexpr int kReps = 9;

__global__ void spin_kernel(unsigned long long ns) {
    unsigned long long t0;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
    for (;;) {
        unsigned long long t;
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
        if (t - t0 >= ns) break;
    }
}

__global__ void fill_kernel(std::uint32_t* p, std::size_t words, std::uint32_t seed) {
    for (std::size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < words; i += std::size_t{gridDim.x} * blockDim.x) {
        p[i] = static_cast<std::uint32_t>(i) * 2654435761u ^ seed;
    }
}

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    const std::size_t n = v.size();
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

}  // namespace

int main() {
    int n = 0;
    CHECK(cudaGetDeviceCount(&n));
    std::printf("variant,spin_us,median_us,min_us,max_us\n");
    if (n < 2) {
        std::fprintf(stderr, "stagedsweep needs two GPUs; this machine has %d\n", n);
        return 1;
    }
    for (int a = 0; a < 2; ++a) {
        CHECK(cudaSetDevice(a));
        const cudaError_t e = cudaDeviceDisablePeerAccess(1 - a);
        if (e == cudaErrorPeerAccessNotEnabled) {
            (void)cudaGetLastError();
        } else {
            CHECK(e);
        }
    }
    std::uint32_t *src = nullptr, *dst = nullptr, *host = nullptr;
    CHECK(cudaSetDevice(1));
    CHECK(cudaMalloc(&dst, kBytes));
    CHECK(cudaSetDevice(0));
    CHECK(cudaMalloc(&src, kBytes));
    CHECK(cudaMallocHost(&host, kBytes));
    fill_kernel<<<64, 256>>>(src, kBytes / 4, 0x1234567u);
    CHECK(cudaGetLastError());
    CHECK(cudaDeviceSynchronize());
    cudaStream_t s;
    CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    cudaEvent_t start, stop;
    CHECK(cudaEventCreate(&start));
    CHECK(cudaEventCreate(&stop));
    for (const bool staged : {true, false}) {
        for (int step = 0; step <= 48; ++step) {
            const double spin_us = 100.0 + 0.5 * step;
            std::vector<double> t;
            for (int rep = 0; rep <= kReps; ++rep) {
                spin_kernel<<<1, 1, 0, s>>>(static_cast<unsigned long long>(spin_us * 1000.0));
                CHECK(cudaGetLastError());
                CHECK(cudaEventRecord(start, s));
                if (staged) {
                    CHECK(cudaMemcpyPeerAsync(dst, 1, src, 0, kBytes, s));
                } else {
                    CHECK(cudaMemcpyAsync(host, src, kBytes, cudaMemcpyDeviceToHost, s));
                }
                CHECK(cudaEventRecord(stop, s));
                CHECK(cudaEventSynchronize(stop));
                float ms = 0;
                CHECK(cudaEventElapsedTime(&ms, start, stop));
                if (rep > 0) t.push_back(ms * 1000.0);
            }
            std::printf("%s,%.1f,%.4f,%.4f,%.4f\n", staged ? "staged" : "local", spin_us, median(t),
                        *std::min_element(t.begin(), t.end()), *std::max_element(t.begin(), t.end()));
            std::fflush(stdout);
        }
    }
    // The staged copy's data arrived.
    std::vector<std::uint32_t> back(kBytes / 4);
    CHECK(cudaSetDevice(1));
    CHECK(cudaMemcpy(back.data(), dst, kBytes, cudaMemcpyDeviceToHost));
    for (std::size_t i = 0; i < back.size(); ++i) {
        if (back[i] != (static_cast<std::uint32_t>(i) * 2654435761u ^ 0x1234567u)) {
            std::fprintf(stderr, "verification failed: word %zu\n", i);
            return 1;
        }
    }
    return 0;
}
