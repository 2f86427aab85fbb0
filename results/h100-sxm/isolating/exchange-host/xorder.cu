// exchange-host (README.md): what holds an exchange's stores at a full grid, where every warp makes
// one access. dmaprobe's exchange stores only after its load of host memory is back; here the same
// 16-byte loads and stores of mapped host memory in other orders, each timed with CUDA events around
// the kernel (median of 30 repetitions after 3 warm-ups):
//   load        dev_out[e] = host_in[e]                     (loads alone)
//   store       host_out[e] = dev_in[e]                     (stores alone)
//   xchg        load, then the store (dmaprobe's order: the store waits for the load's data)
//   storefirst  the store, then the load: no store waits for a load, every load is queued behind
//               its own warp's store
//   split       even warps load, odd warps store (each warp one direction, half the warps each)
// at a full grid (blocks = size / 16 B / 256 threads) of 256 KiB and 1 MiB and at 33 blocks of
// 1 MiB. Host buffers are written and flushed from the CPU's caches once, before the first case;
// every kernel writes the same values, which are checked after the last case.
//
// Build: nvcc -O3 -arch=sm_90 -Xcompiler -mclflushopt xorder.cu -o xorder
#include <cuda_runtime.h>
#include <immintrin.h>

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

constexpr std::size_t kMaxBytes = 1u << 20;
constexpr int kThreads = 256;
constexpr int kWarm = 3;
constexpr int kReps = 30;

enum Shape { kLoad, kStore, kXchg, kStoreFirst, kSplit };

__global__ void order_kernel(int shape, const uint4* __restrict__ host_in, uint4* __restrict__ dev_out,
                             const uint4* __restrict__ dev_in, uint4* __restrict__ host_out, std::size_t elems) {
    const std::size_t step = static_cast<std::size_t>(gridDim.x) * blockDim.x;
    const std::size_t first = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (shape == kSplit) {
        // Warp w does one direction over the elements of the warps of its parity.
        const std::size_t warp = first / 32, lane = first % 32, warps = step / 32;
        for (std::size_t k = (warp / 2) * 32 + lane; k < elems; k += (warps / 2) * 32) {
            if (warp % 2 == 0) {
                dev_out[k] = host_in[k];
            } else {
                host_out[k] = dev_in[k];
            }
        }
        return;
    }
    for (std::size_t k = first; k < elems; k += step) {
        switch (shape) {
            case kLoad: dev_out[k] = host_in[k]; break;
            case kStore: host_out[k] = dev_in[k]; break;
            case kXchg:
                dev_out[k] = host_in[k];
                host_out[k] = dev_in[k];
                break;
            case kStoreFirst: {
                const uint4 v = dev_in[k];
                host_out[k] = v;
                dev_out[k] = host_in[k];
                break;
            }
            default: break;
        }
    }
}

void flush(const void* p, std::size_t n) {
    auto* b = static_cast<char*>(const_cast<void*>(p));
    for (std::size_t i = 0; i < n; i += 64) _mm_clflushopt(b + i);
    _mm_sfence();
}

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    const std::size_t n = v.size();
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

}  // namespace

int main() {
    CHECK(cudaSetDeviceFlags(cudaDeviceMapHost));
    unsigned char *host_in = nullptr, *host_out = nullptr, *dev_out = nullptr, *dev_in = nullptr;
    CHECK(cudaHostAlloc(&host_in, kMaxBytes, cudaHostAllocMapped));
    CHECK(cudaHostAlloc(&host_out, kMaxBytes, cudaHostAllocMapped));
    CHECK(cudaMalloc(&dev_out, kMaxBytes));
    CHECK(cudaMalloc(&dev_in, kMaxBytes));
    std::vector<unsigned char> pattern(kMaxBytes);
    for (std::size_t i = 0; i < kMaxBytes; ++i) {
        host_in[i] = static_cast<unsigned char>(i * 131u + 7u);
        pattern[i] = static_cast<unsigned char>(i * 29u + 3u);
        host_out[i] = 0;
    }
    CHECK(cudaMemcpy(dev_in, pattern.data(), kMaxBytes, cudaMemcpyHostToDevice));
    flush(host_in, kMaxBytes);
    flush(host_out, kMaxBytes);
    void *hin = nullptr, *hout = nullptr;
    CHECK(cudaHostGetDevicePointer(&hin, host_in, 0));
    CHECK(cudaHostGetDevicePointer(&hout, host_out, 0));
    cudaEvent_t a, b;
    CHECK(cudaEventCreate(&a));
    CHECK(cudaEventCreate(&b));
    struct Size {
        std::size_t bytes;
        int blocks;  // 0: a full grid, one access per thread
    };
    const Size sizes[] = {{256u << 10, 0}, {1u << 20, 0}, {1u << 20, 33}};
    const char* names[] = {"load", "store", "xchg", "storefirst", "split"};
    std::printf("shape,bytes,blocks,us_median,min,max\n");
    for (const Size& s : sizes) {
        const std::size_t elems = s.bytes / 16;
        const int blocks = s.blocks > 0 ? s.blocks : static_cast<int>(elems / kThreads);
        for (int shape = kLoad; shape <= kSplit; ++shape) {
            std::vector<double> t;
            for (int rep = 0; rep < kWarm + kReps; ++rep) {
                CHECK(cudaEventRecord(a));
                order_kernel<<<blocks, kThreads>>>(shape, static_cast<const uint4*>(hin), reinterpret_cast<uint4*>(dev_out),
                                                   reinterpret_cast<const uint4*>(dev_in), static_cast<uint4*>(hout), elems);
                CHECK(cudaGetLastError());
                CHECK(cudaEventRecord(b));
                CHECK(cudaEventSynchronize(b));
                float ms = 0.0f;
                CHECK(cudaEventElapsedTime(&ms, a, b));
                if (rep >= kWarm) t.push_back(1000.0 * ms);
            }
            std::printf("%s,%zu,%d,%.2f,%.2f,%.2f\n", names[shape], s.bytes, blocks, median(t), *std::min_element(t.begin(), t.end()),
                        *std::max_element(t.begin(), t.end()));
            std::fflush(stdout);
        }
    }
    // Every shape that stores wrote dev_in's pattern, every one that loads copied host_in.
    std::vector<unsigned char> got(kMaxBytes);
    CHECK(cudaMemcpy(got.data(), dev_out, kMaxBytes, cudaMemcpyDeviceToHost));
    for (std::size_t i = 0; i < kMaxBytes; ++i) {
        if (got[i] != host_in[i] || host_out[i] != pattern[i]) {
            std::fprintf(stderr, "verification failed at byte %zu\n", i);
            return 1;
        }
    }
    std::fprintf(stderr, "verified %zu bytes each way\n", kMaxBytes);
    return 0;
}
