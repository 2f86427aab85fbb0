// What a copy costs the GPU once a chain of copies runs, by size and direction: the engine's own
// fixed cost per copy, apart from the CPU's call, the work fetch and the synchronisation. The
// model has a copy into the GPU about 1 us dearer per copy than one out of it beyond their data
// (a 512 KiB chain: 12.75 against 10.98 us, measured 12.11 against 11.25, ../copy-records); this
// program measures the difference from 4 B to 1 MiB, through the sizes the call copies into the
// command stream (up to 24 KiB into the GPU, ../small-copies) and those a copy engine reads.
//
// Per cell: kCopies copies of one size back to back on one stream, each to its own offset, held
// behind a spin kernel until every call is queued; an event after the first copy and one after
// the last: (last - first) / (kCopies - 1) is a copy's share of the running chain. Host sources
// are rewritten and flushed from the CPU's caches before each repetition; 3 warm-ups, 30 timed
// repetitions; medians, min and max; the last repetition's data verified.
//
// Build: nvcc -O3 -arch=sm_90 chains.cu -o chains
// Run:   ./chains > chains.csv
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

constexpr int kCopies = 32;
constexpr std::size_t kMaxBytes = std::size_t{1} << 20;
constexpr std::size_t kTotal = kMaxBytes * kCopies;
constexpr int kWarm = 3;
constexpr int kReps = 30;
constexpr unsigned long long kHoldNs = 2'000'000;

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

}  // namespace

int main() {
    const std::size_t sizes[] = {4, 256, 1024, 2048, 4096, 8192, 16384, 24576, 28672, 32768, 65536, 262144, 524288, 1048576};
    std::printf("direction,bytes,copies,us_per_copy_median,min,max,first_copy_us_median\n");
    unsigned char* dev = nullptr;
    unsigned char* host = nullptr;
    unsigned char* back = nullptr;
    CHECK(cudaMalloc(&dev, kTotal));
    CHECK(cudaMallocHost(&host, kTotal));
    CHECK(cudaMallocHost(&back, kTotal));
    cudaStream_t s;
    CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    cudaEvent_t start, first, stop;
    CHECK(cudaEventCreate(&start));
    CHECK(cudaEventCreate(&first));
    CHECK(cudaEventCreate(&stop));
    for (const bool h2d : {true, false}) {
        for (const std::size_t n : sizes) {
            // Copies land kStride apart: each has its own destination and source lines.
            const std::size_t stride = std::max<std::size_t>(n, 4096);
            const std::size_t span = stride * kCopies;
            std::vector<double> t, t_first;
            std::uint32_t seed = 0;
            for (int rep = 0; rep < kWarm + kReps; ++rep) {
                seed = 0x9e3779b9u * static_cast<std::uint32_t>(rep + 1) + static_cast<std::uint32_t>(n) + (h2d ? 7u : 0u);
                if (h2d) {
                    for (std::size_t i = 0; i < span; ++i) host[i] = pattern(i, seed);
                    for (std::size_t off = 0; off < span; off += 64) _mm_clflush(host + off);
                    _mm_mfence();
                } else {
                    fill_kernel<<<264, 256, 0, s>>>(dev, span, seed);
                    CHECK(cudaGetLastError());
                }
                CHECK(cudaStreamSynchronize(s));
                spin_kernel<<<1, 1, 0, s>>>(kHoldNs);
                CHECK(cudaGetLastError());
                CHECK(cudaEventRecord(start, s));
                for (int k = 0; k < kCopies; ++k) {
                    const std::size_t off = static_cast<std::size_t>(k) * stride;
                    if (h2d) {
                        CHECK(cudaMemcpyAsync(dev + off, host + off, n, cudaMemcpyHostToDevice, s));
                    } else {
                        CHECK(cudaMemcpyAsync(host + off, dev + off, n, cudaMemcpyDeviceToHost, s));
                    }
                    if (k == 0) CHECK(cudaEventRecord(first, s));
                }
                CHECK(cudaEventRecord(stop, s));
                CHECK(cudaEventSynchronize(stop));
                float ms = 0, ms_first = 0;
                CHECK(cudaEventElapsedTime(&ms, first, stop));
                CHECK(cudaEventElapsedTime(&ms_first, start, first));
                if (rep >= kWarm) {
                    t.push_back(ms * 1000.0 / (kCopies - 1));
                    t_first.push_back(ms_first * 1000.0);
                }
            }
            const unsigned char* got = host;
            if (h2d) {
                CHECK(cudaMemcpy(back, dev, span, cudaMemcpyDeviceToHost));
                got = back;
            }
            for (int k = 0; k < kCopies; ++k) {
                const std::size_t off = static_cast<std::size_t>(k) * stride;
                for (std::size_t i = off; i < off + n; ++i) {
                    if (got[i] != pattern(i, seed)) {
                        std::fprintf(stderr, "verification failed: %s %zu B copy %d byte %zu\n", h2d ? "h2d" : "d2h", n, k, i - off);
                        return 1;
                    }
                }
            }
            std::printf("%s,%zu,%d,%.4f,%.4f,%.4f,%.4f\n", h2d ? "h2d" : "d2h", n, kCopies, median(t),
                        *std::min_element(t.begin(), t.end()), *std::max_element(t.begin(), t.end()), median(t_first));
            std::fflush(stdout);
        }
    }
    return 0;
}
