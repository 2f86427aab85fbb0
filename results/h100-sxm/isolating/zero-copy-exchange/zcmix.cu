// What holds the zero-copy exchange at 82 GB/s together (README.md), where loads alone move 50 and
// stores alone 52? Two candidates:
//   - a rate: some stage both directions share (the link, the root port) runs out;
//   - a latency: the GPU keeps a bounded number of host lines in flight (the model: 810), so its
//     loads move (lines x 128 B) / round trip, and the round trip grows when the loads wait behind
//     stores (a read request must not pass a posted write from the same requester, PCIe 6.0 base
//     spec. section 2.4.1, table 2-40 row B column 2) -- the exchange's stores then hold its loads.
// Three kinds of case tell them apart:
//   1. `chase`: one thread follows a random chain of 8-byte pointers through 64 MiB of mapped host
//      memory (one per 128-byte line, each load dependent on the last: one round trip each), alone
//      and beside a kernel that loads, stores or exchanges host memory, or a copy engine's copy.
//   2. `pair`: a load kernel and a store kernel, each over its own 256 MiB with its own grid, run
//      at once on two streams (not coupled through one loop as in the exchange kernel).
//   3. `alone`: each of those kernels, and the exchange kernel, by itself.
//
// Build: nvcc -O3 -arch=sm_90 zcmix.cu -o zcmix
// Run:   ./zcmix > zcmix.csv     (progress on stderr)
//
// Timing: a gate kernel holds stream 0; the other streams wait for an event behind it, so that
// every kernel and copy of a case starts together; events give each one's end. The chase times
// itself on the GPU's global timer after waiting 300 us for the kernel beside it to settle, and
// then tells that kernel to stop at the end of its pass. One warm-up, 5 timed repetitions,
// medians. Loads, stores and the chain's end are verified.
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
constexpr std::size_t kBytes = 256 * kMiB;     // each load / store buffer
constexpr std::size_t kCopy = 1024 * kMiB;     // the copy engine's copy beside the chase
constexpr std::size_t kChain = 64 * kMiB;      // the chase's host memory
constexpr std::size_t kLine = 128;
constexpr long long kHops = 2000;
constexpr unsigned long long kSettleNs = 300'000;
constexpr int kThreads = 256;
constexpr int kReps = 5;
constexpr int kMaxPasses = 64;  // a kernel beside the chase stops sooner, when told

__device__ unsigned long long now_ns() {
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}

// mode 1: load host -> device; 2: store device -> host; 3: both in one loop (dmaprobe's exchange).
__global__ void stream_kernel(const uint4* __restrict__ host_in, uint4* __restrict__ dev_out,
                              const uint4* __restrict__ dev_in, uint4* __restrict__ host_out, std::size_t n,
                              int mode, int passes, const volatile int* stop) {
    const std::size_t step = static_cast<std::size_t>(gridDim.x) * blockDim.x;
    for (int p = 0; p < passes; ++p) {
        for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += step) {
            if (mode & 1) dev_out[i] = host_in[i];
            if (mode & 2) host_out[i] = dev_in[i];
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

__global__ void gate(long long cycles) {
    const long long start = clock64();
    while (clock64() - start < cycles) {
    }
}

struct Bufs {
    uint4 *h_in = nullptr, *h_out = nullptr, *d_out = nullptr, *d_in = nullptr;
    unsigned char *h_chain = nullptr, *h_copy = nullptr, *d_copy = nullptr;
    uint4 *dh_in = nullptr, *dh_out = nullptr;  // device pointers of the mapped buffers
    unsigned char* dh_chain = nullptr;
    int* stop = nullptr;
    unsigned long long* chase_out = nullptr;
    cudaStream_t s[3]{};
    cudaEvent_t open = nullptr, end[3]{};
};

struct Side {
    int mode = 0;    // 0: none, 1-3 as stream_kernel, 4: copy engine D2H, 5: copy engine H2D
    int blocks = 0;  // for a kernel
};

struct Result {
    double a_us = 0, b_us = 0, chase_ns = 0;
    bool overlap = true;
};

const char* mode_name(int m) {
    static const char* names[] = {"none", "load", "store", "exchange", "copy_d2h", "copy_h2d"};
    return names[m];
}

void launch(Bufs& b, const Side& side, cudaStream_t s, int passes) {
    if (side.mode >= 1 && side.mode <= 3) {
        stream_kernel<<<side.blocks, kThreads, 0, s>>>(b.dh_in, b.d_out, b.d_in, b.dh_out, kBytes / sizeof(uint4),
                                                       side.mode, passes, b.stop);
        CHECK(cudaGetLastError());
    } else if (side.mode == 4) {
        CHECK(cudaMemcpyAsync(b.h_copy, b.d_copy, kCopy, cudaMemcpyDeviceToHost, s));
    } else if (side.mode == 5) {
        CHECK(cudaMemcpyAsync(b.d_copy, b.h_copy, kCopy, cudaMemcpyHostToDevice, s));
    }
}

// One repetition: sides a and b start together (b may be none); with `chase`, the chase runs
// beside a, which then makes passes until the chase is done.
Result once(Bufs& b, const Side& a, const Side& second, bool chase) {
    CHECK(cudaMemset(b.stop, 0, sizeof(int)));
    gate<<<1, 1, 0, b.s[0]>>>(400'000);
    CHECK(cudaGetLastError());
    CHECK(cudaEventRecord(b.open, b.s[0]));
    for (int k = 1; k < 3; ++k) CHECK(cudaStreamWaitEvent(b.s[k], b.open, 0));
    launch(b, a, b.s[0], chase ? kMaxPasses : 1);
    CHECK(cudaEventRecord(b.end[0], b.s[0]));
    if (chase) {
        chase_kernel<<<1, 1, 0, b.s[1]>>>(b.dh_chain, kHops, b.chase_out, b.stop);
        CHECK(cudaGetLastError());
    } else {
        launch(b, second, b.s[1], 1);
    }
    CHECK(cudaEventRecord(b.end[1], b.s[1]));
    CHECK(cudaDeviceSynchronize());
    Result r;
    float ms = 0;
    CHECK(cudaEventElapsedTime(&ms, b.open, b.end[0]));
    r.a_us = ms * 1e3;
    CHECK(cudaEventElapsedTime(&ms, b.open, b.end[1]));
    r.b_us = ms * 1e3;
    if (chase) {
        unsigned long long out[2];
        CHECK(cudaMemcpy(out, b.chase_out, sizeof out, cudaMemcpyDeviceToHost));
        r.chase_ns = static_cast<double>(out[1]) / kHops;
        r.overlap = a.mode == 0 || r.a_us >= r.b_us;  // the side outlasted the chase
    }
    return r;
}

double med(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

Result median(Bufs& b, const Side& a, const Side& second, bool chase) {
    once(b, a, second, chase);
    std::vector<double> x, y, c;
    bool overlap = true;
    for (int r = 0; r < kReps; ++r) {
        const Result t = once(b, a, second, chase);
        x.push_back(t.a_us);
        y.push_back(t.b_us);
        c.push_back(t.chase_ns);
        overlap = overlap && t.overlap;
    }
    return Result{med(x), med(y), med(c), overlap};
}

void verify(Bufs& b, unsigned long long chain_end) {
    std::vector<unsigned char> got(kBytes);
    CHECK(cudaMemcpy(got.data(), b.d_out, kBytes, cudaMemcpyDeviceToHost));
    if (std::memcmp(got.data(), b.h_in, kBytes) != 0) {
        std::fprintf(stderr, "loads copied wrong\n");
        std::exit(1);
    }
    CHECK(cudaMemcpy(got.data(), b.d_in, kBytes, cudaMemcpyDeviceToHost));
    if (std::memcmp(got.data(), b.h_out, kBytes) != 0) {
        std::fprintf(stderr, "stores copied wrong\n");
        std::exit(1);
    }
    unsigned long long out[2];
    CHECK(cudaMemcpy(out, b.chase_out, sizeof out, cudaMemcpyDeviceToHost));
    if (out[0] != chain_end) {
        std::fprintf(stderr, "chase ended at %llu, not %llu\n", out[0], chain_end);
        std::exit(1);
    }
}

}  // namespace

int main() {
    Bufs b;
    CHECK(cudaSetDevice(0));
    CHECK(cudaSetDeviceFlags(cudaDeviceMapHost));
    CHECK(cudaHostAlloc(&b.h_in, kBytes, cudaHostAllocMapped));
    CHECK(cudaHostAlloc(&b.h_out, kBytes, cudaHostAllocMapped));
    CHECK(cudaHostAlloc(&b.h_chain, kChain, cudaHostAllocMapped));
    CHECK(cudaHostAlloc(&b.h_copy, kCopy, cudaHostAllocDefault));
    CHECK(cudaHostGetDevicePointer(reinterpret_cast<void**>(&b.dh_in), b.h_in, 0));
    CHECK(cudaHostGetDevicePointer(reinterpret_cast<void**>(&b.dh_out), b.h_out, 0));
    CHECK(cudaHostGetDevicePointer(reinterpret_cast<void**>(&b.dh_chain), b.h_chain, 0));
    CHECK(cudaMalloc(&b.d_out, kBytes));
    CHECK(cudaMalloc(&b.d_in, kBytes));
    CHECK(cudaMalloc(&b.d_copy, kCopy));
    CHECK(cudaMalloc(&b.stop, sizeof(int)));
    CHECK(cudaMalloc(&b.chase_out, 2 * sizeof(unsigned long long)));
    for (auto& s : b.s) CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    CHECK(cudaEventCreate(&b.open));
    for (auto& e : b.end) CHECK(cudaEventCreate(&e));

    // Non-zero data everywhere; the chain visits every line once, in random order.
    auto* in = reinterpret_cast<unsigned char*>(b.h_in);
    for (std::size_t i = 0; i < kBytes; ++i) in[i] = static_cast<unsigned char>((i * 2654435761u) >> 13 | 1);
    std::vector<unsigned char> pattern(kBytes);
    for (std::size_t i = 0; i < kBytes; ++i) pattern[i] = static_cast<unsigned char>((i * 40503u) >> 7 | 1);
    CHECK(cudaMemcpy(b.d_in, pattern.data(), kBytes, cudaMemcpyHostToDevice));
    std::memset(b.h_copy, 0x5a, kCopy);
    CHECK(cudaMemset(b.d_copy, 0xa5, kCopy));
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

    std::printf("kind,a,a_blocks,b,b_blocks,a_us,b_us,a_gbps,b_gbps,chase_ns,overlap\n");
    auto row = [&](const char* kind, const Side& a, const Side& second, const Result& r) {
        const double bytes_a = a.mode == 3 ? 2.0 * kBytes : static_cast<double>(kBytes);
        const bool timed = std::string(kind) != "chase";
        std::printf("%s,%s,%d,%s,%d,%.3f,%.3f,%.3f,%.3f,%.1f,%d\n", kind, mode_name(a.mode), a.blocks,
                    mode_name(second.mode), second.blocks, r.a_us, r.b_us, timed ? bytes_a / r.a_us / 1e3 : 0.0,
                    timed && second.mode ? kBytes / r.b_us / 1e3 : 0.0, r.chase_ns, r.overlap ? 1 : 0);
        std::fflush(stdout);
    };
    const Side none{};
    // 3. alone, at the grids the pairs use.
    for (const int mode : {1, 2, 3}) {
        for (const int blocks : {4, 16, 33, 132, 264}) {
            const Side a{mode, blocks};
            row("alone", a, none, median(b, a, none, false));
        }
    }
    std::fprintf(stderr, "alone done\n");
    // 1. the chase, alone and beside each load.
    row("chase", none, none, median(b, none, none, true));
    for (const Side a : {Side{1, 264}, Side{1, 16}, Side{2, 264}, Side{2, 16}, Side{2, 4}, Side{2, 1}, Side{3, 264},
                         Side{3, 33}, Side{4, 0}, Side{5, 0}}) {
        row("chase", a, none, median(b, a, none, true));
    }
    std::fprintf(stderr, "chase done\n");
    // 2. a load kernel and a store kernel at once.
    for (const auto& p : {std::pair<int, int>{264, 264}, {132, 132}, {33, 33}, {16, 264}, {4, 264}, {264, 16},
                          {264, 4}}) {
        const Side a{1, p.first}, second{2, p.second};
        row("pair", a, second, median(b, a, second, false));
    }
    std::fprintf(stderr, "pairs done\n");
    verify(b, chain_end);
    std::fprintf(stderr, "verified\n");
    return 0;
}
