// Does a staged peer copy's piece into the destination GPU pay for that GPU's copies out to host
// memory, as a chain of copies into a GPU does beside a chain out of it (chainpair.cu)? (Two GPUs.)
//
// Peer access off: cudaMemcpyPeerAsync from GPU 0 to GPU 1 of 16 MiB, which the runtime stages
// through host memory in pieces (out of GPU 0, into GPU 1), timed by events on GPU 0's stream from
// before the call to after it. Alone, and beside a chain of 4 KiB copies on another stream that
// starts with it (held by a spin kernel on each GPU until the peer call is made):
//   d2h_dst   out of GPU 1 (the destination) into host memory: GPU 1's pieces into it would flush
//   h2d_dst   into GPU 1 from host memory
//   d2h_src   out of GPU 0 (the source) into host memory
//   h2d_src   into GPU 0
// 512 copies of 4 KiB (about 1.2 ms, past the staged copy's 0.47 ms). Every cell once an iteration,
// in turn; 3 warm-up iterations, then ITER (default 30). The staged copy's data checked at the end.
//
// Output (stdout, CSV): beside,median_us,p10_us,p90_us,reps
// Build: nvcc -O3 -arch=sm_90 stagedbeside.cu -o stagedbeside   (CUDA toolkit only)
#include <cuda_runtime.h>

#include <algorithm>
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
constexpr std::size_t kStaged = 16 << 20;
constexpr std::size_t kSmall = 4096;
constexpr int kChain = 512;
constexpr long long kGateTimeoutNs = 5000000000LL;

__global__ void gate(volatile int* flag, long long timeout_ns) {
    long long t0 = 0;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
    while (flag[0] == 0) {
        long long t = 0;
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
        if (t - t0 > timeout_ns) {
            flag[1] = 1;
            return;
        }
    }
}

double quantile(std::vector<double> v, double q) {
    std::sort(v.begin(), v.end());
    return v[static_cast<std::size_t>(q * static_cast<double>(v.size() - 1) + 0.5)];
}

}  // namespace

int main(int argc, char** argv) {
    const int iterations = argc > 1 ? std::atoi(argv[1]) : 30;
    int gpus = 0;
    CHECK(cudaGetDeviceCount(&gpus));
    if (gpus < 2 || iterations < 5) {
        std::fprintf(stderr, "usage: stagedbeside [ITERATIONS >= 5] on a machine of two GPUs\n");
        return 2;
    }
    unsigned char *src = nullptr, *dst = nullptr, *side[2] = {nullptr, nullptr}, *host_side[2] = {nullptr, nullptr};
    cudaStream_t s[2] = {nullptr, nullptr}, chain[2] = {nullptr, nullptr};
    int* flag = nullptr;
    int* flag_dev[2] = {nullptr, nullptr};
    CHECK(cudaHostAlloc(&flag, 2 * sizeof(int), cudaHostAllocMapped | cudaHostAllocPortable));
    for (int g = 0; g < 2; ++g) {
        CHECK(cudaSetDevice(g));
        CHECK(cudaStreamCreateWithFlags(&s[g], cudaStreamNonBlocking));
        CHECK(cudaStreamCreateWithFlags(&chain[g], cudaStreamNonBlocking));
        CHECK(cudaMalloc(&side[g], kSmall));
        CHECK(cudaMallocHost(&host_side[g], kSmall));
        std::memset(host_side[g], 0x3c, kSmall);
        CHECK(cudaMemset(side[g], 0x4d, kSmall));
        CHECK(cudaHostGetDevicePointer(reinterpret_cast<void**>(&flag_dev[g]), flag, 0));
    }
    CHECK(cudaSetDevice(0));
    CHECK(cudaMalloc(&src, kStaged));
    std::vector<unsigned char> pattern(kStaged);
    for (std::size_t i = 0; i < kStaged; ++i) pattern[i] = static_cast<unsigned char>(i * 37 + 5) | 1;
    CHECK(cudaMemcpy(src, pattern.data(), kStaged, cudaMemcpyHostToDevice));
    CHECK(cudaSetDevice(1));
    CHECK(cudaMalloc(&dst, kStaged));
    CHECK(cudaSetDevice(0));
    int access = 0;
    CHECK(cudaDeviceCanAccessPeer(&access, 0, 1));  // never enabled: the copy is staged
    cudaEvent_t start = nullptr, stop = nullptr;
    CHECK(cudaEventCreate(&start));
    CHECK(cudaEventCreate(&stop));
    const char* const names[] = {"alone", "d2h_dst", "h2d_dst", "d2h_src", "h2d_src"};
    std::vector<std::vector<double>> us(5);
    for (int it = 0; it < kWarmup + iterations; ++it) {
        for (int m = 0; m < 5; ++m) {
            flag[0] = 0;
            flag[1] = 0;
            __sync_synchronize();
            const int g = m == 1 || m == 2 ? 1 : 0;  // the GPU of the chain beside
            const bool down = m == 1 || m == 3;
            if (m > 0) {
                CHECK(cudaSetDevice(g));
                gate<<<1, 1, 0, chain[g]>>>(flag_dev[g], kGateTimeoutNs);
                CHECK(cudaGetLastError());
                for (int k = 0; k < kChain; ++k) {
                    if (down) {
                        CHECK(cudaMemcpyAsync(host_side[g], side[g], kSmall, cudaMemcpyDeviceToHost, chain[g]));
                    } else {
                        CHECK(cudaMemcpyAsync(side[g], host_side[g], kSmall, cudaMemcpyHostToDevice, chain[g]));
                    }
                }
            }
            CHECK(cudaSetDevice(0));
            gate<<<1, 1, 0, s[0]>>>(flag_dev[0], kGateTimeoutNs);
            CHECK(cudaGetLastError());
            CHECK(cudaEventRecord(start, s[0]));
            CHECK(cudaMemcpyPeerAsync(dst, 1, src, 0, kStaged, s[0]));
            CHECK(cudaEventRecord(stop, s[0]));
            __sync_synchronize();
            flag[0] = 1;
            CHECK(cudaEventSynchronize(stop));
            for (int d = 0; d < 2; ++d) {
                CHECK(cudaSetDevice(d));
                CHECK(cudaDeviceSynchronize());
            }
            CHECK(cudaSetDevice(0));
            if (flag[1] != 0) {
                std::fprintf(stderr, "stagedbeside: a gate timed out (%s)\n", names[m]);
                return 1;
            }
            float ms = 0;
            CHECK(cudaEventElapsedTime(&ms, start, stop));
            if (it >= kWarmup) us[m].push_back(1000.0 * ms);
        }
    }
    std::vector<unsigned char> got(kStaged);
    CHECK(cudaSetDevice(1));
    CHECK(cudaMemcpy(got.data(), dst, kStaged, cudaMemcpyDeviceToHost));
    if (std::memcmp(got.data(), pattern.data(), kStaged) != 0) {
        std::fprintf(stderr, "stagedbeside: the staged copy delivered wrong data\n");
        return 1;
    }
    std::printf("beside,median_us,p10_us,p90_us,reps\n");
    for (int m = 0; m < 5; ++m) {
        std::printf("%s,%.3f,%.3f,%.3f,%zu\n", names[m], quantile(us[m], 0.5), quantile(us[m], 0.1), quantile(us[m], 0.9),
                    us[m].size());
    }
    return 0;
}
