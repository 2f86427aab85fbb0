// What holds the zero-copy exchange at about 83 GB/s together when the link would carry about 90
// (../README.md)? Loads and stores of mapped host memory in one kernel, in shapes that change
// what each direction's link carries per warp iteration and whether a store waits for a load:
//   load16       dev_out[e] = host_in[e]                      (16-byte loads alone: 4 lines a warp)
//   store16      host_out[e] = dev_in[e]                      (16-byte stores alone)
//   xchg16       both, as dmaprobe's exchange: the host store is issued after the store of the
//                host load's data, so it waits for that load
//   xchg-s8      16-byte loads, 8-byte stores (2 lines a warp): half the upstream write bytes
//   xchg-l8      8-byte loads (2 lines a warp), 16-byte stores: half the read requests
//   xchg-storefirst  the host store first, then the load: no store waits for a load
//   split-warps  even warps load, odd warps store (one kernel, each warp one direction)
// Each on 256 MiB (the 16-byte cases; the 8-byte side moves half as much), 264 blocks of 256
// threads, and xchg16 with 33 and 1056 blocks; timed with events around the kernel, 10
// repetitions after 2 warm-ups; medians, min and max, and each direction's GB/s.
//
// Build: nvcc -O3 -arch=sm_90 xmix.cu -o xmix
#include <cuda_runtime.h>

#include <algorithm>
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

constexpr std::size_t kBytes = 256u << 20;
constexpr std::size_t kElems = kBytes / 16;
constexpr int kWarm = 2;
constexpr int kReps = 10;

enum Shape { kLoad16, kStore16, kXchg16, kXchgS8, kXchgL8, kStoreFirst, kSplitWarps };

__global__ void mix_kernel(int shape, const uint4* __restrict__ host_in, uint4* __restrict__ dev_out, const uint4* __restrict__ dev_in,
                           uint4* __restrict__ host_out, std::size_t elems) {
    const std::size_t step = static_cast<std::size_t>(gridDim.x) * blockDim.x;
    const std::size_t first = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    const auto* host_in8 = reinterpret_cast<const unsigned long long*>(host_in);
    auto* dev_out8 = reinterpret_cast<unsigned long long*>(dev_out);
    const auto* dev_in8 = reinterpret_cast<const unsigned long long*>(dev_in);
    auto* host_out8 = reinterpret_cast<unsigned long long*>(host_out);
    if (shape == kSplitWarps) {
        // Warp w of the grid does one direction: even warps load, odd warps store, each over its
        // half of the warps' share of the elements.
        const std::size_t warp = first / 32, lane = first % 32, warps = step / 32;
        const bool loads = warp % 2 == 0;
        for (std::size_t k = (warp / 2) * 32 + lane; k < elems; k += (warps / 2) * 32) {
            if (loads) {
                dev_out[k] = host_in[k];
            } else {
                host_out[k] = dev_in[k];
            }
        }
        return;
    }
    for (std::size_t k = first; k < elems; k += step) {
        switch (shape) {
            case kLoad16: dev_out[k] = host_in[k]; break;
            case kStore16: host_out[k] = dev_in[k]; break;
            case kXchg16:
                dev_out[k] = host_in[k];
                host_out[k] = dev_in[k];
                break;
            case kXchgS8:
                dev_out[k] = host_in[k];
                host_out8[k] = dev_in8[k];
                break;
            case kXchgL8:
                dev_out8[k] = host_in8[k];
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

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    const std::size_t n = v.size();
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

}  // namespace

int main() {
    CHECK(cudaSetDeviceFlags(cudaDeviceMapHost));
    unsigned char *host_in = nullptr, *host_out = nullptr, *dev_out = nullptr, *dev_in = nullptr;
    CHECK(cudaHostAlloc(&host_in, kBytes, cudaHostAllocMapped));
    CHECK(cudaHostAlloc(&host_out, kBytes, cudaHostAllocMapped));
    CHECK(cudaMalloc(&dev_out, kBytes));
    CHECK(cudaMalloc(&dev_in, kBytes));
    for (std::size_t i = 0; i < kBytes; ++i) host_in[i] = static_cast<unsigned char>(i * 131u + 7u);
    std::vector<unsigned char> pattern(kBytes);
    for (std::size_t i = 0; i < kBytes; ++i) pattern[i] = static_cast<unsigned char>(i * 29u + 3u);
    CHECK(cudaMemcpy(dev_in, pattern.data(), kBytes, cudaMemcpyHostToDevice));
    void *hin = nullptr, *hout = nullptr;
    CHECK(cudaHostGetDevicePointer(&hin, host_in, 0));
    CHECK(cudaHostGetDevicePointer(&hout, host_out, 0));
    cudaEvent_t a, b;
    CHECK(cudaEventCreate(&a));
    CHECK(cudaEventCreate(&b));
    struct Case {
        const char* name;
        Shape shape;
        int blocks;
        double load_share, store_share;  // of kBytes each direction moves
    };
    const Case cases[] = {{"load16", kLoad16, 264, 1.0, 0.0},        {"store16", kStore16, 264, 0.0, 1.0},
                          {"xchg16", kXchg16, 264, 1.0, 1.0},        {"xchg16-b33", kXchg16, 33, 1.0, 1.0},
                          {"xchg16-b1056", kXchg16, 1056, 1.0, 1.0}, {"xchg-s8", kXchgS8, 264, 1.0, 0.5},
                          {"xchg-l8", kXchgL8, 264, 0.5, 1.0},       {"xchg-storefirst", kStoreFirst, 264, 1.0, 1.0},
                          {"split-warps", kSplitWarps, 264, 1.0, 1.0}};
    std::printf("case,blocks,us_median,min,max,load_gbps,store_gbps,together_gbps\n");
    for (const Case& c : cases) {
        std::vector<double> t;
        for (int rep = 0; rep < kWarm + kReps; ++rep) {
            std::memset(host_out, 0, kBytes);
            CHECK(cudaMemset(dev_out, 0, kBytes));
            CHECK(cudaEventRecord(a));
            mix_kernel<<<c.blocks, 256>>>(c.shape, static_cast<const uint4*>(hin), reinterpret_cast<uint4*>(dev_out),
                                          reinterpret_cast<const uint4*>(dev_in), static_cast<uint4*>(hout), kElems);
            CHECK(cudaGetLastError());
            CHECK(cudaEventRecord(b));
            CHECK(cudaEventSynchronize(b));
            float ms = 0.0f;
            CHECK(cudaEventElapsedTime(&ms, a, b));
            if (rep >= kWarm) t.push_back(1000.0 * ms);
        }
        // What this shape moved, byte for byte.
        std::vector<unsigned char> got(kBytes);
        CHECK(cudaMemcpy(got.data(), dev_out, kBytes, cudaMemcpyDeviceToHost));
        const std::size_t loaded = static_cast<std::size_t>(c.load_share * kBytes), stored = static_cast<std::size_t>(c.store_share * kBytes);
        // 8-byte accesses cover the first half of the buffer's 8-byte words: its first half.
        if (std::memcmp(got.data(), host_in, loaded) != 0 || std::memcmp(host_out, pattern.data(), stored) != 0) {
            std::fprintf(stderr, "%s: verification failed\n", c.name);
            return 1;
        }
        const double us = median(t);
        const double lg = c.load_share * kBytes / (us * 1e3), sg = c.store_share * kBytes / (us * 1e3);
        std::printf("%s,%d,%.1f,%.1f,%.1f,%.2f,%.2f,%.2f\n", c.name, c.blocks, us, *std::min_element(t.begin(), t.end()),
                    *std::max_element(t.begin(), t.end()), lg, sg, lg + sg);
        std::fflush(stdout);
    }
    return 0;
}
