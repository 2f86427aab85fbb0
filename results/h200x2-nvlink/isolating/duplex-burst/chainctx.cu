// What sets a chain's cost a copy: the program around it? (duplex-burst: dmaprobe's burst of 256
// copies of 4 KiB out of the GPU alone takes 1.88-1.92 us a copy on the one-GPU H200 and 2.15-2.18
// on the 2xH200, where chainpair's chain of 64 such copies alone takes 1.61 and 2.40; into the GPU
// the two agree, 2.55 against 2.51-2.63. The model gives both programs one cost.)
//
// On GPU 0, behind a kernel spinning on a flag in mapped host memory (dmaprobe's gate) on stream a,
// a start event on a, then a chain of N copies of S bytes one way (4 or 16 KiB), an event after its
// first copy and one after its last; the CPU makes every call, then sets the flag. Its cost a copy
// is the two events' interval over N - 1. Cells, each one change from `base` but the last three:
//   base        N = 64, the chain on stream a, every copy the same host and GPU addresses, nothing
//               before the repetition (chainpair's chain alone)
//   n256        N = 256 (dmaprobe's burst: 1 MiB of 4 KiB copies)
//   waiter      the chain on stream b, which waits for the start event (dmaprobe's second stream)
//   large       the host buffer a part of a 1 GiB pinned allocation (dmaprobe's are of the plan's
//               largest size)
//   fill        before each repetition the GPU's buffer rewritten and the GPU synchronised
//               (dmaprobe: device_fill before a copy out of the GPU, a memset before one into it)
//   distinct    copy k at offset k * S on both sides, as chains.cu (../../../h100-sxm/isolating/
//               copy-chains) does
//   dmaprobe    n256 + waiter + fill: dmaprobe's burst of the copies one way alone
//   dmaprobe-a  the same on stream a
//   prior       dmaprobe, after what dmaprobe runs before it in a repetition: the burst both ways
//               (N copies each way, a and b), and before one out of the GPU the burst into it alone
// Every cell verifies its data once more after its last timed repetition (the destination
// overwritten first, the source new: its data are that repetition's).
// With `profile`, `base` chains of 512 copies (4, 16 and 64 KiB out of the GPU, 4 KiB into it) with
// an event after copy 0, 8, 16, 32, ... 448 and 511: the chain's pace along its length, one row a
// stretch between two events (µs a copy, medians).
// With `window`, `base` chains out of the GPU of N = 16 ... 256 copies of 4 KiB (and of 64 and 128
// of 16 KiB), and `records`: 64 copies with 448 event records queued behind them on their stream
// (nothing timed after the last copy): where along a chain its pace changes, and whether what is
// queued behind a copy has to be copies.
// With `source`, chains of 64 copies into the GPU (4 and 16 KiB) as `base`, their host source left in
// the CPU's caches (`base`: the CPU wrote it last), flushed from them once before the cell's
// repetitions (`flush-once`) or before each (`flush-each`, as chains.cu), the GPU's destination
// rewritten before each by a memset (`memset-dst`, dmaprobe's poison) or a kernel (`kernel-dst`),
// and dmaprobe's way (`dmaprobe`: flushed once, the destination memset before each): what sets the
// pace of a chain into the GPU.
//   chainctx [ITERATIONS >= 5 [profile|window|source]]   -> CSV on stdout
#include <cuda_runtime.h>
#include <emmintrin.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#define CHECK(call)                                                                                    \
    do {                                                                                               \
        const cudaError_t e_ = (call);                                                                 \
        if (e_ != cudaSuccess) {                                                                       \
            std::fprintf(stderr, "chainctx: %s failed at %s:%d: %s\n", #call, __FILE__, __LINE__,      \
                         cudaGetErrorString(e_));                                                      \
            std::exit(1);                                                                              \
        }                                                                                              \
    } while (0)

namespace {

constexpr int kWarmup = 5;
constexpr std::size_t kKiB = 1024;
constexpr int kMaxChain = 512;
constexpr std::size_t kMaxSize = 64 * kKiB;
// profile: the copies an event follows.
constexpr int kMarks[] = {0, 8, 16, 24, 32, 48, 64, 80, 96, 128, 160, 192, 256, 320, 384, 448, 511};
constexpr int kNumMarks = sizeof(kMarks) / sizeof(kMarks[0]);
constexpr std::size_t kSpan = kMaxChain * kMaxSize;  // what distinct addresses cover
constexpr std::size_t kLarge = std::size_t{1} << 30;
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

// Non-zero bytes that differ from one seed to the next.
__device__ __host__ unsigned char pattern(std::size_t i, std::uint32_t seed) {
    return static_cast<unsigned char>((i * 131 + seed * 29 + 7) | 1);
}

__global__ void fill(unsigned char* p, std::size_t n, std::uint32_t seed) {
    for (std::size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) p[i] = pattern(i, seed);
}

double quantile(std::vector<double> v, double q) {
    if (v.empty()) return 0.0;
    std::sort(v.begin(), v.end());
    return v[static_cast<std::size_t>(q * static_cast<double>(v.size() - 1) + 0.5)];
}

struct Cell {
    bool h2d;
    std::size_t size;
    std::string name;
    int n;
    bool waiter, large, fill, distinct, prior;
    int records_after = 0;  // window: event records queued behind the chain on its stream
    std::vector<double> copy, total, first;
    std::vector<std::vector<double>> stretch;  // profile: µs a copy between two marks
    // source: 1 flushes the host side from the CPU's caches once before the cell, 2 before each
    // repetition; a kernel, not a memset, rewrites the GPU's side first.
    int flush = 0;
    bool kernel_first = false;
    bool flushed = false;
};

}  // namespace

int main(int argc, char** argv) {
    const int iterations = argc > 1 ? std::atoi(argv[1]) : 30;
    const bool profile = argc > 2 && std::string(argv[2]) == "profile";
    const bool window = argc > 2 && std::string(argv[2]) == "window";
    const bool source = argc > 2 && std::string(argv[2]) == "source";
    if (iterations < 5 || argc > 3 || (argc > 2 && !profile && !window && !source)) {
        std::fprintf(stderr, "usage: chainctx [ITERATIONS >= 5 [profile|window|source]]\n");
        return 2;
    }
    CHECK(cudaSetDevice(0));
    unsigned char *d_a = nullptr, *d_b = nullptr, *h_a = nullptr, *h_b = nullptr, *h_large = nullptr;
    CHECK(cudaMalloc(&d_a, kSpan));
    CHECK(cudaMalloc(&d_b, kSpan));
    CHECK(cudaMallocHost(&h_a, kSpan));
    CHECK(cudaMallocHost(&h_b, kSpan));
    CHECK(cudaMallocHost(&h_large, kLarge));
    // Every host byte touched once, by the CPU, before anything is timed.
    for (std::size_t i = 0; i < kSpan; ++i) h_a[i] = h_b[i] = pattern(i, 1);
    std::memset(h_large, 0x5A, kLarge);
    for (std::size_t i = 0; i < kSpan; ++i) h_large[i] = pattern(i, 1);
    fill<<<264, 256>>>(d_a, kSpan, 2);
    fill<<<264, 256>>>(d_b, kSpan, 3);
    CHECK(cudaGetLastError());
    CHECK(cudaDeviceSynchronize());
    int* flag = nullptr;
    int* flag_dev = nullptr;
    CHECK(cudaHostAlloc(&flag, 2 * sizeof(int), cudaHostAllocMapped));
    CHECK(cudaHostGetDevicePointer(reinterpret_cast<void**>(&flag_dev), flag, 0));
    cudaStream_t a = nullptr, b = nullptr;
    CHECK(cudaStreamCreateWithFlags(&a, cudaStreamNonBlocking));
    CHECK(cudaStreamCreateWithFlags(&b, cudaStreamNonBlocking));
    cudaEvent_t start = nullptr, first = nullptr, last = nullptr, other = nullptr;
    CHECK(cudaEventCreate(&start));
    CHECK(cudaEventCreate(&first));
    CHECK(cudaEventCreate(&last));
    CHECK(cudaEventCreate(&other));
    cudaEvent_t marks[kNumMarks];
    for (cudaEvent_t& e : marks) CHECK(cudaEventCreate(&e));

    std::vector<Cell> cells;
    if (profile) {
        const auto add = [&](bool h2d, std::size_t size) {
            cells.push_back({h2d, size, "profile", kMaxChain, false, false, false, false, false, 0, {}, {}, {},
                             std::vector<std::vector<double>>(kNumMarks - 1)});
        };
        add(false, 4 * kKiB);
        add(false, 16 * kKiB);
        add(false, 64 * kKiB);
        add(true, 4 * kKiB);
    }
    if (window) {
        const auto add = [&](std::size_t size, int n, int records) {
            cells.push_back({false, size, records > 0 ? "records" : "base", n, false, false, false, false, false, records, {}, {}, {}, {}});
        };
        for (const int n : {16, 32, 48, 56, 64, 72, 80, 96, 128, 192, 256}) add(4 * kKiB, n, 0);
        add(4 * kKiB, 64, 448);
        add(16 * kKiB, 64, 0);
        add(16 * kKiB, 128, 0);
    }
    if (source) {
        for (const std::size_t size : {4 * kKiB, 16 * kKiB}) {
            const auto add = [&](const char* name, int flush, bool fill_first, bool kernel_first) {
                Cell c{true, size, name, 64, false, false, fill_first, false, false, 0, {}, {}, {}, {}};
                c.flush = flush;
                c.kernel_first = kernel_first;
                cells.push_back(c);
            };
            add("base", 0, false, false);
            add("flush-once", 1, false, false);
            add("flush-each", 2, false, false);
            add("memset-dst", 0, true, false);
            add("kernel-dst", 0, true, true);
            add("dmaprobe", 1, true, false);
        }
    }
    for (const bool h2d : {true, false}) {
        if (profile || window || source) break;
        for (const std::size_t size : {4 * kKiB, 16 * kKiB}) {
            const auto add = [&](const char* name, int n, bool waiter, bool large, bool fill_first, bool distinct, bool prior) {
                cells.push_back({h2d, size, name, n, waiter, large, fill_first, distinct, prior, 0, {}, {}, {}, {}});
            };
            add("base", 64, false, false, false, false, false);
            add("n256", 256, false, false, false, false, false);
            add("waiter", 64, true, false, false, false, false);
            add("large", 64, false, true, false, false, false);
            add("fill", 64, false, false, true, false, false);
            add("distinct", 64, false, false, false, true, false);
            add("dmaprobe", 256, true, false, true, false, false);
            add("dmaprobe-a", 256, false, false, true, false, false);
            add("prior", 256, true, false, true, false, true);
        }
    }

    std::uint32_t seed = 10;
    // dmaprobe's gate: a kernel on a spinning until the CPU sets the flag, then the start event.
    const auto close_gate = [&]() {
        flag[0] = 0;
        flag[1] = 0;
        __sync_synchronize();
        gate<<<1, 1, 0, a>>>(flag_dev, kGateTimeoutNs);
        CHECK(cudaGetLastError());
        CHECK(cudaEventRecord(start, a));
    };
    // One gated burst: `up` copies into the GPU on a, `down` out of it on b (0: none), as dmaprobe
    // runs its pair and its bursts; returns when it is done.
    const auto gated_burst = [&](std::size_t size, int up, int down) {
        close_gate();
        CHECK(cudaStreamWaitEvent(b, start, 0));
        for (int k = 0; k < up; ++k) CHECK(cudaMemcpyAsync(d_a, h_a, size, cudaMemcpyHostToDevice, a));
        for (int k = 0; k < down; ++k) CHECK(cudaMemcpyAsync(h_b, d_b, size, cudaMemcpyDeviceToHost, b));
        CHECK(cudaEventRecord(other, b));
        CHECK(cudaStreamWaitEvent(a, other, 0));
        __sync_synchronize();
        flag[0] = 1;
        CHECK(cudaStreamSynchronize(a));
        if (flag[1] != 0) {
            std::fprintf(stderr, "chainctx: the gate timed out (prior burst)\n");
            std::exit(1);
        }
    };
    // One repetition of a cell; the GPU idle on return.
    const auto run = [&](Cell& c, bool keep) {
        unsigned char* host = c.large ? h_large : (c.h2d ? h_a : h_b);
        unsigned char* dev = c.h2d ? d_a : d_b;
        if (c.prior) {
            gated_burst(c.size, c.n, c.n);
            if (!c.h2d) gated_burst(c.size, c.n, 0);
        }
        if (c.flush == 2 || (c.flush == 1 && !c.flushed)) {
            const std::size_t bytes = c.distinct ? c.n * c.size : c.size;
            for (std::size_t off = 0; off < bytes; off += 64) _mm_clflush(host + off);
            _mm_mfence();
            c.flushed = true;
        }
        if (c.fill) {
            // dmaprobe overwrites the GPU's side before each repetition: a memset of a copy's
            // destination, a kernel writing a copy's source.
            if (c.h2d && !c.kernel_first) {
                CHECK(cudaMemset(dev, 0, c.distinct ? c.n * c.size : c.size));
            } else {
                fill<<<264, 256>>>(dev, c.distinct ? c.n * c.size : c.size, ++seed);
                CHECK(cudaGetLastError());
            }
            CHECK(cudaDeviceSynchronize());
        }
        cudaStream_t s = c.waiter ? b : a;
        close_gate();
        if (c.waiter) CHECK(cudaStreamWaitEvent(b, start, 0));
        for (int k = 0; k < c.n; ++k) {
            const std::size_t off = c.distinct ? static_cast<std::size_t>(k) * c.size : 0;
            if (c.h2d) {
                CHECK(cudaMemcpyAsync(dev + off, host + off, c.size, cudaMemcpyHostToDevice, s));
            } else {
                CHECK(cudaMemcpyAsync(host + off, dev + off, c.size, cudaMemcpyDeviceToHost, s));
            }
            if (k == 0) CHECK(cudaEventRecord(first, s));
            if (!c.stretch.empty()) {
                for (int m = 0; m < kNumMarks; ++m) {
                    if (kMarks[m] == k) CHECK(cudaEventRecord(marks[m], s));
                }
            }
        }
        CHECK(cudaEventRecord(last, s));
        for (int k = 0; k < c.records_after; ++k) CHECK(cudaEventRecord(other, s));
        __sync_synchronize();
        flag[0] = 1;
        CHECK(cudaDeviceSynchronize());
        if (flag[1] != 0) {
            std::fprintf(stderr, "chainctx: the gate timed out (%s)\n", c.name.c_str());
            std::exit(1);
        }
        if (!keep) return;
        float ms = 0;
        CHECK(cudaEventElapsedTime(&ms, first, last));
        c.copy.push_back(ms * 1000.0 / (c.n - 1));
        CHECK(cudaEventElapsedTime(&ms, start, last));
        c.total.push_back(ms * 1000.0 / c.n);
        CHECK(cudaEventElapsedTime(&ms, start, first));
        c.first.push_back(ms * 1000.0);
        for (std::size_t m = 0; m < c.stretch.size(); ++m) {
            CHECK(cudaEventElapsedTime(&ms, marks[m], marks[m + 1]));
            c.stretch[m].push_back(ms * 1000.0 / (kMarks[m + 1] - kMarks[m]));
        }
    };
    // The cell's chain once more on new data, its destination overwritten first: every copy's bytes
    // are where they belong.
    const auto verify = [&](Cell& c) {
        unsigned char* host = c.large ? h_large : (c.h2d ? h_a : h_b);
        unsigned char* dev = c.h2d ? d_a : d_b;
        const std::size_t bytes = c.distinct ? c.n * c.size : c.size;
        const std::uint32_t s = ++seed;
        std::vector<unsigned char> got(bytes);
        if (c.h2d) {
            for (std::size_t i = 0; i < bytes; ++i) host[i] = pattern(i, s);
            CHECK(cudaMemset(dev, 0, bytes));
        } else {
            fill<<<264, 256>>>(dev, bytes, s);
            CHECK(cudaGetLastError());
            std::memset(host, 0, bytes);
        }
        CHECK(cudaDeviceSynchronize());
        const bool fill_was = c.fill;
        c.fill = false;  // keep the new data
        run(c, false);
        c.fill = fill_was;
        if (c.h2d) {
            CHECK(cudaMemcpy(got.data(), dev, bytes, cudaMemcpyDeviceToHost));
        } else {
            std::memcpy(got.data(), host, bytes);
        }
        for (std::size_t i = 0; i < bytes; ++i) {
            if (got[i] != pattern(i, s)) {
                std::fprintf(stderr, "chainctx: %s %s %zu: byte %zu is %u, not %u\n", c.h2d ? "h2d" : "d2h", c.name.c_str(), c.size, i,
                             got[i], pattern(i, s));
                std::exit(1);
            }
        }
        // The h2d source back as the timed repetitions had it.
        if (c.h2d) {
            for (std::size_t i = 0; i < bytes; ++i) host[i] = pattern(i, 1);
        }
    };
    // Cell by cell, all of its repetitions together (as dmaprobe runs a case), in the order above.
    for (Cell& c : cells) {
        for (int it = 0; it < kWarmup + iterations; ++it) run(c, it >= kWarmup);
        verify(c);
    }
    if (profile) {
        std::printf("dir,size,from,to,reps,copy_us,copy_p10_us,copy_p90_us\n");
        for (const Cell& c : cells) {
            for (int m = 0; m + 1 < kNumMarks; ++m) {
                const auto& v = c.stretch[static_cast<std::size_t>(m)];
                std::printf("%s,%zu,%d,%d,%zu,%.4f,%.4f,%.4f\n", c.h2d ? "h2d" : "d2h", c.size, kMarks[m], kMarks[m + 1], v.size(),
                            quantile(v, 0.5), quantile(v, 0.1), quantile(v, 0.9));
            }
        }
        return 0;
    }
    std::printf("dir,size,cell,n,reps,copy_us,copy_p10_us,copy_p90_us,total_us,first_us\n");
    for (const Cell& c : cells) {
        std::printf("%s,%zu,%s,%d,%zu,%.4f,%.4f,%.4f,%.4f,%.4f\n", c.h2d ? "h2d" : "d2h", c.size, c.name.c_str(), c.n, c.copy.size(),
                    quantile(c.copy, 0.5), quantile(c.copy, 0.1), quantile(c.copy, 0.9), quantile(c.total, 0.5), quantile(c.first, 0.5));
    }
    return 0;
}
