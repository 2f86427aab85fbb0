// What an event record behind a copy costs a chain of copies, by the copy's size, direction and
// the event's kind. Earlier cases saw it without isolating it: records every 8 copies against
// every 64 cost a chain of 4 / 16 KiB copies out of the GPU 1.1 / 0.9 us a record on the one-GPU
// H200 and none at 64 KiB, and 2.7-4.1 us on the 2xH200 (../../../h200x2-nvlink/isolating/
// duplex-burst, chaincontext); a window fit of chains of 16-256 copies has 1.3 / 3.2 us once at
// their end, where an event ends them. The model stamps a record inline, for nothing. Is the cost
// a fixed time the record waits beside the copy before it (so that a copy whose data takes
// longer hides it), or one it adds after it, and does an event without timing (no timestamp to
// write) pay it?
//
// Per cell: kCopies copies of one size back to back on one stream behind a spin kernel, each to
// its own offset; an event after the first copy and one after the last (timing events); between
// them, after every copy, nothing (`none`), a record of a timing event (`timed`) or of an event
// created with cudaEventDisableTiming (`untimed`), each copy its own event. kCopies stays under
// the channel's fetch window with the records (gpu.fetch_window, 57 operations). What a record
// costs: (the cell - none) x (kCopies - 1) / (kCopies - 2), the interval holding kCopies - 1
// copies and kCopies - 2 records. Host sources
// rewritten and flushed from the CPU's caches before each repetition (into the GPU), GPU sources
// rewritten by a kernel (out of it); 3 warm-ups, 30 timed repetitions; median, min, max; the
// last repetition's data verified.
//
// Build: nvcc -O3 -arch=sm_90 recordcost.cu -o recordcost
// Run:   ./recordcost > recordcost.csv
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include <immintrin.h>

namespace {

#define CHECK(call)                                                                                      \
    do {                                                                                                 \
        const cudaError_t e_ = (call);                                                                   \
        if (e_ != cudaSuccess) {                                                                         \
            std::fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call, cudaGetErrorString(e_)); \
            std::exit(1);                                                                                \
        }                                                                                                \
    } while (0)

constexpr int kCopies = 24;
constexpr std::size_t kMaxBytes = 128 * 1024;
constexpr std::size_t kTotal = kMaxBytes * kCopies;
constexpr int kWarm = 3;
constexpr int kReps = 30;
constexpr unsigned long long kHoldNs = 2'000'000;

enum class Between { kNone, kTimed, kUntimed };

const char* name(Between b) { return b == Between::kNone ? "none" : b == Between::kTimed ? "timed" : "untimed"; }

__global__ void spin_kernel(unsigned long long ns) {
    unsigned long long t0;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
    for (;;) {
        unsigned long long t;
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
        if (t - t0 >= ns) break;
    }
}

__device__ __host__ inline unsigned char pattern(std::size_t i, std::uint32_t seed) {
    return static_cast<unsigned char>((static_cast<std::uint32_t>(i) * 2654435761u ^ seed) >> 7);
}

__global__ void fill_kernel(unsigned char* p, std::size_t n, std::uint32_t seed) {
    for (std::size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += std::size_t{gridDim.x} * blockDim.x) p[i] = pattern(i, seed);
}

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    const std::size_t n = v.size();
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

struct Buffers {
    unsigned char* dev = nullptr;
    unsigned char* host = nullptr;
    unsigned char* back = nullptr;
    std::vector<cudaEvent_t> timed, untimed;  // one per copy
    cudaEvent_t first = nullptr, stop = nullptr;
};

// A copy's share of the chain from the event after its first copy to the one after its last, us.
void cell(bool h2d, std::size_t n, Between between, Buffers& b, cudaStream_t s) {
    const std::size_t stride = std::max<std::size_t>(n, 4096);
    const std::size_t span = stride * kCopies;
    std::vector<double> t;
    std::uint32_t seed = 0;
    for (int rep = 0; rep < kWarm + kReps; ++rep) {
        seed = 0x9e3779b9u * static_cast<std::uint32_t>(rep + 1) + static_cast<std::uint32_t>(n) + (h2d ? 7u : 0u) +
               13u * static_cast<std::uint32_t>(between);
        if (h2d) {
            for (std::size_t i = 0; i < span; ++i) b.host[i] = pattern(i, seed);
            for (std::size_t off = 0; off < span; off += 64) _mm_clflush(b.host + off);
            _mm_mfence();
        } else {
            fill_kernel<<<264, 256, 0, s>>>(b.dev, span, seed);
            CHECK(cudaGetLastError());
        }
        CHECK(cudaStreamSynchronize(s));
        spin_kernel<<<1, 1, 0, s>>>(kHoldNs);
        CHECK(cudaGetLastError());
        for (int k = 0; k < kCopies; ++k) {
            const std::size_t off = static_cast<std::size_t>(k) * stride;
            if (h2d) {
                CHECK(cudaMemcpyAsync(b.dev + off, b.host + off, n, cudaMemcpyHostToDevice, s));
            } else {
                CHECK(cudaMemcpyAsync(b.host + off, b.dev + off, n, cudaMemcpyDeviceToHost, s));
            }
            if (k == 0) {
                CHECK(cudaEventRecord(b.first, s));
            } else if (k < kCopies - 1 && between != Between::kNone) {
                CHECK(cudaEventRecord(between == Between::kTimed ? b.timed[k] : b.untimed[k], s));
            }
        }
        CHECK(cudaEventRecord(b.stop, s));
        CHECK(cudaEventSynchronize(b.stop));
        float ms = 0;
        CHECK(cudaEventElapsedTime(&ms, b.first, b.stop));
        if (rep >= kWarm) t.push_back(ms * 1000.0 / (kCopies - 1));
    }
    const unsigned char* got = b.host;
    if (h2d) {
        CHECK(cudaMemcpy(b.back, b.dev, span, cudaMemcpyDeviceToHost));
        got = b.back;
    }
    for (int k = 0; k < kCopies; ++k) {
        const std::size_t off = static_cast<std::size_t>(k) * stride;
        for (std::size_t i = off; i < off + n; ++i) {
            if (got[i] != pattern(i, seed)) {
                std::fprintf(stderr, "verification failed: %s %zu B %s copy %d byte %zu\n", h2d ? "h2d" : "d2h", n, name(between), k,
                             i - off);
                std::exit(1);
            }
        }
    }
    std::printf("%s,%zu,%s,%d,%.4f,%.4f,%.4f\n", h2d ? "h2d" : "d2h", n, name(between), kCopies, median(t),
                *std::min_element(t.begin(), t.end()), *std::max_element(t.begin(), t.end()));
    std::fflush(stdout);
}

}  // namespace

int main() {
    std::printf("dir,bytes,between,copies,us_per_copy_median,min,max\n");
    cudaStream_t s;
    CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    Buffers b;
    CHECK(cudaMalloc(&b.dev, kTotal));
    CHECK(cudaMallocHost(&b.host, kTotal));
    CHECK(cudaMallocHost(&b.back, kTotal));
    CHECK(cudaEventCreate(&b.first));
    CHECK(cudaEventCreate(&b.stop));
    b.timed.resize(kCopies);
    b.untimed.resize(kCopies);
    for (int k = 0; k < kCopies; ++k) {
        CHECK(cudaEventCreate(&b.timed[k]));
        CHECK(cudaEventCreateWithFlags(&b.untimed[k], cudaEventDisableTiming));
    }
    const std::size_t sizes[] = {4096, 8192, 16384, 24576, 32768, 49152, 65536, 131072};
    for (const bool h2d : {false, true}) {
        for (const std::size_t n : sizes) {
            for (const Between between : {Between::kNone, Between::kTimed, Between::kUntimed}) cell(h2d, n, between, b, s);
        }
    }
    for (int k = 0; k < kCopies; ++k) {
        CHECK(cudaEventDestroy(b.timed[k]));
        CHECK(cudaEventDestroy(b.untimed[k]));
    }
    CHECK(cudaEventDestroy(b.first));
    CHECK(cudaEventDestroy(b.stop));
    CHECK(cudaFree(b.dev));
    CHECK(cudaFreeHost(b.host));
    CHECK(cudaFreeHost(b.back));
    return 0;
}
