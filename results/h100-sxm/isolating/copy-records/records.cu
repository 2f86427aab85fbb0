// What an event record between copies costs a copy engine. The staged peer pipeline (and its
// copy by hand, results/h200x2-nvlink/isolating/cross-device-wait/pipeline.cu) records an event
// after every 512 KiB piece and paces at 14.1 us a piece through 3 to 6 buffers, where the same
// pieces back to back take 12.2-12.5 us, with or without a satisfied wait before each. This
// program times 64 pieces of 512 KiB back to back on one stream, each direction:
//   plain     copies only
//   record    an event recorded after each copy (nobody waits for it)
//   wait      a wait before each copy on an event of another stream that completed long before
//   both      the wait before and the record after each copy, as a pipeline's stream has them
// Per piece, from an event after a spin kernel that holds the stream until every call is queued.
//
// Build: nvcc -O3 -arch=sm_90 records.cu -o records
// Run:   ./records > records.csv
// Two warm-ups and 20 timed repetitions per cell; medians, min and max; the copies verified.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
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

constexpr std::size_t kPiece = 512 * 1024;
constexpr int kPieces = 64;
constexpr std::size_t kTotal = kPiece * kPieces;
constexpr int kWarm = 2;
constexpr int kReps = 20;
constexpr unsigned long long kHoldNs = 3'000'000;

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

std::uint32_t pattern(std::size_t i, std::uint32_t seed) { return static_cast<std::uint32_t>(i) * 2654435761u ^ seed; }

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    const std::size_t n = v.size();
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

}  // namespace

int main() {
    std::printf("direction,variant,us_per_piece_median,min,max\n");
    std::uint32_t* dev = nullptr;
    std::uint32_t* host = nullptr;
    std::uint32_t* back = nullptr;
    CHECK(cudaMalloc(&dev, kTotal));
    CHECK(cudaMallocHost(&host, kTotal));
    CHECK(cudaMallocHost(&back, kTotal));
    cudaStream_t s, side;
    CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    CHECK(cudaStreamCreateWithFlags(&side, cudaStreamNonBlocking));
    cudaEvent_t start, stop, ready;
    CHECK(cudaEventCreate(&start));
    CHECK(cudaEventCreate(&stop));
    CHECK(cudaEventCreateWithFlags(&ready, cudaEventDisableTiming));
    std::vector<cudaEvent_t> after(kPieces);
    for (auto& e : after) CHECK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
    CHECK(cudaEventRecord(ready, side));
    CHECK(cudaDeviceSynchronize());
    for (const bool h2d : {true, false}) {
        for (const char* v : {"plain", "record", "wait", "both"}) {
            const bool rec = v[0] == 'r' || v[0] == 'b';
            const bool wait = v[0] == 'w' || v[0] == 'b';
            std::vector<double> t;
            std::uint32_t seed = 0;
            for (int rep = 0; rep < kWarm + kReps; ++rep) {
                seed = 0x9e3779b9u * static_cast<std::uint32_t>(rep + 1) + (h2d ? 7u : 0u);
                if (h2d) {
                    for (std::size_t i = 0; i < kTotal / 4; ++i) host[i] = pattern(i, seed);
                    for (std::size_t off = 0; off < kTotal; off += 64) _mm_clflush(reinterpret_cast<char*>(host) + off);
                    _mm_mfence();
                } else {
                    fill_kernel<<<264, 256, 0, s>>>(dev, kTotal / 4, seed);
                    CHECK(cudaGetLastError());
                }
                CHECK(cudaStreamSynchronize(s));
                spin_kernel<<<1, 1, 0, s>>>(kHoldNs);
                CHECK(cudaGetLastError());
                CHECK(cudaEventRecord(start, s));
                for (int k = 0; k < kPieces; ++k) {
                    const std::size_t off = static_cast<std::size_t>(k) * kPiece;
                    if (wait) CHECK(cudaStreamWaitEvent(s, ready, 0));
                    if (h2d) {
                        CHECK(cudaMemcpyAsync(reinterpret_cast<char*>(dev) + off, reinterpret_cast<char*>(host) + off, kPiece,
                                              cudaMemcpyHostToDevice, s));
                    } else {
                        CHECK(cudaMemcpyAsync(reinterpret_cast<char*>(host) + off, reinterpret_cast<char*>(dev) + off, kPiece,
                                              cudaMemcpyDeviceToHost, s));
                    }
                    if (rec) CHECK(cudaEventRecord(after[static_cast<std::size_t>(k)], s));
                }
                CHECK(cudaEventRecord(stop, s));
                CHECK(cudaEventSynchronize(stop));
                float ms = 0;
                CHECK(cudaEventElapsedTime(&ms, start, stop));
                if (rep >= kWarm) t.push_back(ms * 1000.0 / kPieces);
            }
            const std::uint32_t* got = host;
            if (h2d) {
                CHECK(cudaMemcpy(back, dev, kTotal, cudaMemcpyDeviceToHost));
                got = back;
            }
            for (std::size_t i = 0; i < kTotal / 4; ++i) {
                if (got[i] != pattern(i, seed)) {
                    std::fprintf(stderr, "verification failed: %s %s word %zu\n", h2d ? "h2d" : "d2h", v, i);
                    return 1;
                }
            }
            std::printf("%s,%s,%.4f,%.4f,%.4f\n", h2d ? "h2d" : "d2h", v, median(t), *std::min_element(t.begin(), t.end()),
                        *std::max_element(t.begin(), t.end()));
            std::fflush(stdout);
        }
    }
    return 0;
}
