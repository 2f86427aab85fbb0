// zcmix.cu found that one load of host memory waits 20.8 us behind a full grid of stores to host
// memory (1.2 us alone), and that a load kernel and a store kernel run at once starve each other.
// This program measures the shape of that queue and the steady shares:
//   1. `chase`: the dependent-load chase (one 8-byte load per 128-byte line of 64 MiB, random
//      order) beside a store kernel of 8 to 1024 blocks (16-byte and 4-byte stores, i.e. 4 lines
//      or 1 line per warp store) and beside a load kernel of 16 to 1024 blocks. If the SMs' loads
//      and stores leave the GPU through one queue in the order they were issued, the wait is the
//      bytes queued ahead over the link's rate; how those bytes grow with the grid says what
//      bounds the queue (the warps' stores of one iteration each, or a buffer of fixed size).
//   2. `window`: a load kernel and a store kernel (grids LB and SB) at once, and each alone, and
//      the exchange kernel; each warp counts the bytes it moved, and a timer kernel reads the
//      counts 300 us after the start and again 3 ms later: the rates while both run.
//
// Build: nvcc -O3 -arch=sm_90 zcscan.cu -o zcscan
// Run:   ./zcscan > zcscan.csv     (progress on stderr)
//
// One warm-up and 5 timed repetitions per case, medians; loads, stores and the chain verified.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
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

constexpr std::size_t kMiB = std::size_t{1} << 20;
constexpr std::size_t kBytes = 256 * kMiB;
constexpr std::size_t kChain = 64 * kMiB;
constexpr std::size_t kLine = 128;
constexpr long long kHops = 1000;
constexpr unsigned long long kSettleNs = 300'000;
constexpr unsigned long long kWindowNs = 3'000'000;
constexpr int kThreads = 256;
constexpr int kMaxBlocks = 1024;
constexpr int kReps = 5;
constexpr int kMaxPasses = 1000;  // every kernel here runs until told to stop

__device__ unsigned long long now_ns() {
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}

// mode 1: load host -> device; 2: store device -> host; 3: both in one loop. Lane 0 of each warp
// adds the warp's bytes to its block's counter after every access.
template <class T>
__global__ void stream_kernel(const T* __restrict__ host_in, T* __restrict__ dev_out, const T* __restrict__ dev_in,
                              T* __restrict__ host_out, std::size_t n, int mode, const volatile int* stop,
                              unsigned long long* count) {
    const std::size_t step = static_cast<std::size_t>(gridDim.x) * blockDim.x;
    const unsigned per_access = 32u * sizeof(T) * (mode == 3 ? 2u : 1u);
    for (int p = 0; p < kMaxPasses; ++p) {
        for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += step) {
            if (mode & 1) dev_out[i] = host_in[i];
            if (mode & 2) host_out[i] = dev_in[i];
            if ((threadIdx.x & 31) == 0) atomicAdd(&count[blockIdx.x], per_access);
        }
        if (*stop) break;
    }
}

__global__ void chase_kernel(const unsigned char* base, long long hops, unsigned long long* out, int* stop) {
    const unsigned long long settle_end = now_ns() + kSettleNs;
    while (now_ns() < settle_end) {
    }
    unsigned long long off = 0;
    const unsigned long long t0 = now_ns();
    for (long long h = 0; h < hops; ++h) off = __ldcv(reinterpret_cast<const unsigned long long*>(base + off));
    const unsigned long long t1 = now_ns();
    out[0] = off;
    out[1] = t1 - t0;
    __threadfence_system();
    *stop = 1;
}

// One block of kMaxBlocks threads: sums both kernels' counters at t0 and t1.
__global__ void timer_kernel(const volatile unsigned long long* count_a, const volatile unsigned long long* count_b,
                             unsigned long long* out, int* stop) {
    __shared__ unsigned long long sa[kMaxBlocks], sb[kMaxBlocks];
    __shared__ unsigned long long t[2], a[2], b[2];
    for (int k = 0; k < 2; ++k) {
        if (threadIdx.x == 0) {
            const unsigned long long until = (k == 0 ? now_ns() + kSettleNs : t[0] + kWindowNs);
            while (now_ns() < until) {
            }
            t[k] = now_ns();
        }
        __syncthreads();
        sa[threadIdx.x] = count_a[threadIdx.x];
        sb[threadIdx.x] = count_b[threadIdx.x];
        __syncthreads();
        for (int s = kMaxBlocks / 2; s > 0; s /= 2) {
            if (static_cast<int>(threadIdx.x) < s) {
                sa[threadIdx.x] += sa[threadIdx.x + s];
                sb[threadIdx.x] += sb[threadIdx.x + s];
            }
            __syncthreads();
        }
        if (threadIdx.x == 0) {
            a[k] = sa[0];
            b[k] = sb[0];
        }
        __syncthreads();
    }
    if (threadIdx.x == 0) {
        out[0] = a[1] - a[0];
        out[1] = b[1] - b[0];
        out[2] = t[1] - t[0];
        __threadfence_system();
        *stop = 1;
    }
}

__global__ void gate(long long cycles) {
    const long long start = clock64();
    while (clock64() - start < cycles) {
    }
}

struct Bufs {
    unsigned char *h_in = nullptr, *h_out = nullptr, *h_chain = nullptr;
    unsigned char *dh_in = nullptr, *dh_out = nullptr, *dh_chain = nullptr;
    unsigned char *d_out = nullptr, *d_in = nullptr;
    int* stop = nullptr;
    unsigned long long *out = nullptr, *count = nullptr;  // count: two kernels' kMaxBlocks counters
    cudaStream_t s[3]{};
};

struct Kernel {
    int mode = 0;  // 0: none
    int blocks = 0;
    int width = 16;  // bytes per thread access: 16 or 4
};

void launch(Bufs& b, const Kernel& k, int slot, cudaStream_t s) {
    unsigned long long* count = b.count + slot * kMaxBlocks;
    if (k.mode == 0) return;
    if (k.width == 16) {
        stream_kernel<uint4><<<k.blocks, kThreads, 0, s>>>(
            reinterpret_cast<const uint4*>(b.dh_in), reinterpret_cast<uint4*>(b.d_out), reinterpret_cast<const uint4*>(b.d_in),
            reinterpret_cast<uint4*>(b.dh_out), kBytes / 16, k.mode, b.stop, count);
    } else {
        stream_kernel<unsigned><<<k.blocks, kThreads, 0, s>>>(
            reinterpret_cast<const unsigned*>(b.dh_in), reinterpret_cast<unsigned*>(b.d_out),
            reinterpret_cast<const unsigned*>(b.d_in), reinterpret_cast<unsigned*>(b.dh_out), kBytes / 4, k.mode, b.stop,
            count);
    }
    CHECK(cudaGetLastError());
}

// chase: the chase beside kernel a. Otherwise the timer beside kernels a and c.
std::vector<double> once(Bufs& b, const Kernel& a, const Kernel& c, bool chase) {
    CHECK(cudaMemset(b.stop, 0, sizeof(int)));
    CHECK(cudaMemset(b.count, 0, 2 * kMaxBlocks * sizeof(unsigned long long)));
    cudaEvent_t open;
    CHECK(cudaEventCreate(&open));
    gate<<<1, 1, 0, b.s[0]>>>(400'000);
    CHECK(cudaGetLastError());
    CHECK(cudaEventRecord(open, b.s[0]));
    for (int k = 1; k < 3; ++k) CHECK(cudaStreamWaitEvent(b.s[k], open, 0));
    // The chase or the timer first, so that it has an SM whatever the grids beside it.
    if (chase) {
        chase_kernel<<<1, 1, 0, b.s[1]>>>(b.dh_chain, kHops, b.out, b.stop);
    } else {
        timer_kernel<<<1, kMaxBlocks, 0, b.s[1]>>>(b.count, b.count + kMaxBlocks, b.out, b.stop);
    }
    CHECK(cudaGetLastError());
    launch(b, a, 0, b.s[0]);
    if (!chase) launch(b, c, 1, b.s[2]);
    CHECK(cudaDeviceSynchronize());
    CHECK(cudaEventDestroy(open));
    unsigned long long out[3];
    CHECK(cudaMemcpy(out, b.out, sizeof out, cudaMemcpyDeviceToHost));
    if (chase) return {static_cast<double>(out[1]) / kHops};
    const double ns = static_cast<double>(out[2]);
    return {static_cast<double>(out[0]) / ns, static_cast<double>(out[1]) / ns};  // GB/s
}

std::vector<double> median(Bufs& b, const Kernel& a, const Kernel& c, bool chase) {
    once(b, a, c, chase);
    std::vector<std::vector<double>> runs;
    for (int r = 0; r < kReps; ++r) runs.push_back(once(b, a, c, chase));
    std::vector<double> m;
    for (std::size_t j = 0; j < runs[0].size(); ++j) {
        std::vector<double> v;
        for (const auto& x : runs) v.push_back(x[j]);
        std::sort(v.begin(), v.end());
        m.push_back(v[v.size() / 2]);
    }
    return m;
}

const char* mode_name(int m) {
    static const char* names[] = {"none", "load", "store", "exchange"};
    return names[m];
}

}  // namespace

int main() {
    Bufs b;
    CHECK(cudaSetDevice(0));
    CHECK(cudaSetDeviceFlags(cudaDeviceMapHost));
    CHECK(cudaHostAlloc(&b.h_in, kBytes, cudaHostAllocMapped));
    CHECK(cudaHostAlloc(&b.h_out, kBytes, cudaHostAllocMapped));
    CHECK(cudaHostAlloc(&b.h_chain, kChain, cudaHostAllocMapped));
    CHECK(cudaHostGetDevicePointer(reinterpret_cast<void**>(&b.dh_in), b.h_in, 0));
    CHECK(cudaHostGetDevicePointer(reinterpret_cast<void**>(&b.dh_out), b.h_out, 0));
    CHECK(cudaHostGetDevicePointer(reinterpret_cast<void**>(&b.dh_chain), b.h_chain, 0));
    CHECK(cudaMalloc(&b.d_out, kBytes));
    CHECK(cudaMalloc(&b.d_in, kBytes));
    CHECK(cudaMalloc(&b.stop, sizeof(int)));
    CHECK(cudaMalloc(&b.out, 3 * sizeof(unsigned long long)));
    CHECK(cudaMalloc(&b.count, 2 * kMaxBlocks * sizeof(unsigned long long)));
    for (auto& s : b.s) CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));

    for (std::size_t i = 0; i < kBytes; ++i) b.h_in[i] = static_cast<unsigned char>((i * 2654435761u) >> 13 | 1);
    std::vector<unsigned char> pattern(kBytes);
    for (std::size_t i = 0; i < kBytes; ++i) pattern[i] = static_cast<unsigned char>((i * 40503u) >> 7 | 1);
    CHECK(cudaMemcpy(b.d_in, pattern.data(), kBytes, cudaMemcpyHostToDevice));
    const std::size_t lines = kChain / kLine;
    std::vector<std::size_t> order(lines);
    for (std::size_t i = 0; i < lines; ++i) order[i] = i;
    std::mt19937_64 rng(12345);
    std::shuffle(order.begin() + 1, order.end(), rng);
    for (std::size_t i = 0; i < lines; ++i) {
        const unsigned long long next = order[(i + 1) % lines] * kLine;
        std::memcpy(b.h_chain + order[i] * kLine, &next, sizeof next);
    }
    unsigned long long chain_end = 0;
    for (long long h = 0; h < kHops; ++h) std::memcpy(&chain_end, b.h_chain + chain_end, sizeof chain_end);

    std::printf("kind,a,a_blocks,a_width,c,c_blocks,c_width,chase_ns,a_gbps,c_gbps\n");
    const Kernel none{};
    auto row = [](const char* kind, const Kernel& a, const Kernel& c, const std::vector<double>& m) {
        std::printf("%s,%s,%d,%d,%s,%d,%d,%.1f,%.3f,%.3f\n", kind, mode_name(a.mode), a.blocks, a.width, mode_name(c.mode),
                    c.blocks, c.width, m.size() == 1 ? m[0] : 0.0, m.size() == 2 ? m[0] : 0.0, m.size() == 2 ? m[1] : 0.0);
        std::fflush(stdout);
    };
    row("chase", none, none, median(b, none, none, true));
    for (const int blocks : {8, 16, 33, 66, 132, 264, 528, 1024}) {
        const Kernel a{2, blocks, 16};
        row("chase", a, none, median(b, a, none, true));
    }
    for (const int blocks : {16, 66, 264, 1024}) {
        const Kernel a{2, blocks, 4};
        row("chase", a, none, median(b, a, none, true));
    }
    for (const int blocks : {16, 33, 66, 132, 264, 1024}) {
        const Kernel a{1, blocks, 16};
        row("chase", a, none, median(b, a, none, true));
    }
    for (const int blocks : {33, 264}) {
        const Kernel a{3, blocks, 16};
        row("chase", a, none, median(b, a, none, true));
    }
    unsigned long long got[2];
    CHECK(cudaMemcpy(got, b.out, sizeof got, cudaMemcpyDeviceToHost));
    if (got[0] != chain_end) {
        std::fprintf(stderr, "chase ended at %llu, not %llu\n", got[0], chain_end);
        return 1;
    }
    std::fprintf(stderr, "chase done\n");
    for (const auto& p : {std::pair<int, int>{264, 264}, {132, 132}, {66, 66}, {33, 33}, {16, 16}, {8, 8}, {4, 4},
                          {16, 264}, {264, 16}, {33, 264}, {264, 33}}) {
        const Kernel a{1, p.first, 16}, c{2, p.second, 16};
        row("window", a, none, median(b, a, none, false));
        row("window", none, c, median(b, none, c, false));
        row("window", a, c, median(b, a, c, false));
    }
    for (const int blocks : {33, 264, 1024}) {
        const Kernel a{3, blocks, 16};
        row("window", a, none, median(b, a, none, false));
    }
    std::fprintf(stderr, "windows done\n");
    // Every kernel ran whole passes before its stop: the last pass of each left its buffer whole.
    std::vector<unsigned char> dev(kBytes);
    CHECK(cudaMemcpy(dev.data(), b.d_out, kBytes, cudaMemcpyDeviceToHost));
    if (std::memcmp(dev.data(), b.h_in, kBytes) != 0) {
        std::fprintf(stderr, "loads copied wrong\n");
        return 1;
    }
    if (std::memcmp(pattern.data(), b.h_out, kBytes) != 0) {
        std::fprintf(stderr, "stores copied wrong\n");
        return 1;
    }
    std::fprintf(stderr, "verified\n");
    return 0;
}
