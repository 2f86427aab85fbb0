// Does a zero-copy exchange kernel wait for SMs that a compute kernel holds? dmaprobe's
// compute_beside cases start the exchange first (its stream follows the gate at once, the compute
// kernel's stream after a poll), so the compute kernel fits in what the exchange leaves and the
// exchange runs as alone. Here the compute kernel (dmaprobe's: each thread streams 16 bytes at a
// time over 1 GiB of GPU memory until its block's time is up) is resident first: launched, then the
// CPU waits 200 us, then the exchange (dmaprobe's zero_copy_kernel, 16-byte accesses, both ways,
// 264 blocks of 256 threads, 64 MiB each way) is launched on another stream between two events.
// Grids of the compute kernel: 132x512, 132x1024, 264x1024, 528x512 (each SM's 2048 threads half
// or wholly taken, as the occupancy calculator says for its registers), 2 ms; and the exchange
// first, then the compute kernel, as dmaprobe does. Printed: each kernel's registers and blocks
// per SM (cudaOccupancyMaxActiveBlocksPerMultiprocessor), then per case the exchange's interval
// and the compute kernel's end from the same start event (medians of 20 after 3 warm-ups).
//
// Build: nvcc -O3 -arch=sm_90 smshare.cu -o smshare
#include <cuda_runtime.h>

#include <algorithm>
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

constexpr int kWarm = 3;
constexpr int kReps = 20;
constexpr std::size_t kExchange = 64u << 20;
constexpr std::size_t kComputeBytes = std::size_t{1} << 30;
constexpr long long kComputeNs = 2'000'000;
constexpr int kExchangeBlocks = 264;
constexpr int kExchangeThreads = 256;

__device__ unsigned long long global_timer_ns() {
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}

__global__ void compute_kernel(uint4* buf, std::size_t elems, long long duration_ns) {
    __shared__ unsigned long long until;
    if (threadIdx.x == 0) until = global_timer_ns() + static_cast<unsigned long long>(duration_ns);
    __syncthreads();
    const std::size_t step = static_cast<std::size_t>(gridDim.x) * blockDim.x;
    std::size_t i = (static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x) % elems;
    for (;;) {
        for (int k = 0; k < 16; ++k) {
            uint4 v = buf[i];
            v.x = v.x * 1664525u + 1013904223u;
            v.y ^= v.x;
            v.z += v.y;
            v.w ^= v.z;
            buf[i] = v;
            i += step;
            if (i >= elems) i %= elems;
        }
        if (global_timer_ns() >= until) break;
    }
}

__global__ void exchange_kernel(const uint4* __restrict__ host_in, uint4* __restrict__ dev_out, const uint4* __restrict__ dev_in,
                                uint4* __restrict__ host_out, std::size_t elems) {
    const std::size_t step = static_cast<std::size_t>(gridDim.x) * blockDim.x;
    for (std::size_t k = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; k < elems; k += step) {
        dev_out[k] = host_in[k];
        host_out[k] = dev_in[k];
    }
}

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    const std::size_t n = v.size();
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

void spin_host_us(double us) {
    const auto t0 = std::chrono::steady_clock::now();
    while (std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count() < us) {
    }
}

}  // namespace

int main() {
    CHECK(cudaSetDeviceFlags(cudaDeviceMapHost));
    cudaFuncAttributes fa{};
    CHECK(cudaFuncGetAttributes(&fa, compute_kernel));
    cudaFuncAttributes xa{};
    CHECK(cudaFuncGetAttributes(&xa, exchange_kernel));
    int per_sm_512 = 0, per_sm_1024 = 0, per_sm_x = 0, sms = 0;
    CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm_512, compute_kernel, 512, 0));
    CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm_1024, compute_kernel, 1024, 0));
    CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm_x, exchange_kernel, kExchangeThreads, 0));
    CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
    std::printf("# sms %d; compute_kernel %d registers/thread, blocks per SM alone: %d of 512 threads, %d of 1024; "
                "exchange_kernel %d registers/thread, %d blocks of %d threads per SM\n",
                sms, fa.numRegs, per_sm_512, per_sm_1024, xa.numRegs, per_sm_x, kExchangeThreads);

    unsigned char *host_in = nullptr, *host_out = nullptr, *dev_out = nullptr, *dev_in = nullptr, *work = nullptr;
    CHECK(cudaHostAlloc(&host_in, kExchange, cudaHostAllocMapped));
    CHECK(cudaHostAlloc(&host_out, kExchange, cudaHostAllocMapped));
    CHECK(cudaMalloc(&dev_out, kExchange));
    CHECK(cudaMalloc(&dev_in, kExchange));
    CHECK(cudaMalloc(&work, kComputeBytes));
    std::memset(host_in, 0x37, kExchange);
    CHECK(cudaMemset(dev_in, 0x59, kExchange));
    CHECK(cudaMemset(work, 1, kComputeBytes));
    void *hin = nullptr, *hout = nullptr;
    CHECK(cudaHostGetDevicePointer(&hin, host_in, 0));
    CHECK(cudaHostGetDevicePointer(&hout, host_out, 0));
    cudaStream_t xs, cs;
    CHECK(cudaStreamCreateWithFlags(&xs, cudaStreamNonBlocking));
    CHECK(cudaStreamCreateWithFlags(&cs, cudaStreamNonBlocking));
    cudaEvent_t start, xend, cend;
    CHECK(cudaEventCreate(&start));
    CHECK(cudaEventCreate(&xend));
    CHECK(cudaEventCreate(&cend));
    CHECK(cudaDeviceSynchronize());

    struct Case {
        const char* name;
        int blocks, threads;  // compute grid (0: none)
        bool compute_first;
    };
    const Case cases[] = {{"alone", 0, 0, false},           {"first-132x512", 132, 512, true}, {"first-132x1024", 132, 1024, true},
                          {"first-264x1024", 264, 1024, true}, {"first-528x512", 528, 512, true}, {"after-264x1024", 264, 1024, false},
                          {"after-528x512", 528, 512, false}};
    std::printf("case,compute_blocks,compute_threads,exchange_us_median,min,max,compute_end_us_median\n");
    for (const Case& c : cases) {
        std::vector<double> tx, tc;
        for (int rep = 0; rep < kWarm + kReps; ++rep) {
            CHECK(cudaMemset(dev_out, 0, kExchange));
            std::memset(host_out, 0, kExchange);
            CHECK(cudaDeviceSynchronize());
            const auto exchange = [&] {
                CHECK(cudaEventRecord(start, xs));
                exchange_kernel<<<kExchangeBlocks, kExchangeThreads, 0, xs>>>(static_cast<const uint4*>(hin), reinterpret_cast<uint4*>(dev_out),
                                                                            reinterpret_cast<const uint4*>(dev_in), static_cast<uint4*>(hout),
                                                                            kExchange / sizeof(uint4));
                CHECK(cudaGetLastError());
                CHECK(cudaEventRecord(xend, xs));
            };
            const auto compute = [&] {
                compute_kernel<<<c.blocks, c.threads, 0, cs>>>(reinterpret_cast<uint4*>(work), kComputeBytes / sizeof(uint4), kComputeNs);
                CHECK(cudaGetLastError());
                CHECK(cudaEventRecord(cend, cs));
            };
            if (c.blocks > 0 && c.compute_first) {
                compute();
                spin_host_us(200.0);
                exchange();
            } else {
                exchange();
                if (c.blocks > 0) compute();
            }
            CHECK(cudaDeviceSynchronize());
            float ms = 0.0f, cms = 0.0f;
            CHECK(cudaEventElapsedTime(&ms, start, xend));
            if (c.blocks > 0) CHECK(cudaEventElapsedTime(&cms, start, cend));
            if (rep >= kWarm) {
                tx.push_back(1000.0 * ms);
                tc.push_back(1000.0 * cms);
            }
        }
        std::printf("%s,%d,%d,%.1f,%.1f,%.1f,%.1f\n", c.name, c.blocks, c.threads, median(tx), *std::min_element(tx.begin(), tx.end()),
                    *std::max_element(tx.begin(), tx.end()), median(tc));
        std::fflush(stdout);
    }
    // The last repetition moved what it was given both ways.
    std::vector<unsigned char> check(kExchange);
    CHECK(cudaMemcpy(check.data(), dev_out, kExchange, cudaMemcpyDeviceToHost));
    for (std::size_t i = 0; i < kExchange; ++i) {
        if (check[i] != 0x37 || host_out[i] != 0x59) {
            std::fprintf(stderr, "verification failed at byte %zu\n", i);
            return 1;
        }
    }
    return 0;
}
