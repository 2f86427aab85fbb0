// Does a host-to-device copy read host lines that a device-to-host copy has just written more
// slowly than lines in DRAM? A staged peer copy (peer access off) reads every 512 KiB piece out of
// a pinned buffer a few microseconds after the other GPU's DMA wrote it, and takes 13.8-14.1 us a
// piece where back-to-back copies take 12.2 (results/h200x2-nvlink/isolating/cross-device-wait,
// pipeline.cu). On one GPU:
//   chain   64 host-to-device pieces of 512 KiB back to back from a 32 MiB pinned buffer that is
//           `flushed` (written by the CPU, flushed from its caches), `dma` (just written by a
//           device-to-host copy of the whole buffer), or `dma_flushed` (the same, then flushed)
//   pipeline  the staged pipeline within one GPU: a device-to-host piece on one stream, the
//           host-to-device copy of it on another, through B = 1, 3 and 6 buffers; and `apart`,
//           the same streams and events but the host-to-device copies read other buffers (flushed)
//           than the ones just written
// Per piece, from an event after a spin kernel that holds the streams until every call is queued.
//
// Build: nvcc -O3 -arch=sm_90 dmaread.cu -o dmaread
// Run:   ./dmaread > dmaread.csv
// Two warm-ups and 20 timed repetitions per cell; medians, min and max; copied data verified.
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

void flush(const void* p, std::size_t bytes) {
    const char* c = static_cast<const char*>(p);
    for (std::size_t off = 0; off < bytes; off += 64) _mm_clflush(c + off);
    _mm_mfence();
}

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    const std::size_t n = v.size();
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

void print(const char* test, const char* variant, int buffers, const std::vector<double>& t) {
    std::printf("%s,%s,%d,%.4f,%.4f,%.4f\n", test, variant, buffers, median(t), *std::min_element(t.begin(), t.end()),
                *std::max_element(t.begin(), t.end()));
    std::fflush(stdout);
}

struct Bufs {
    std::uint32_t* src = nullptr;  // device, kTotal: what the device-to-host copies read
    std::uint32_t* dst = nullptr;  // device, kTotal: what the host-to-device copies write
    std::uint32_t* host = nullptr;   // pinned, kTotal
    std::uint32_t* other = nullptr;  // pinned, kTotal: `apart`'s sources
    std::uint32_t* back = nullptr;   // pinned, kTotal: read-back for verification
    cudaStream_t a{}, b{};
    cudaEvent_t start{}, stop{};
    std::vector<cudaEvent_t> out, in;
};

void verify_dst(Bufs& g, const std::uint32_t* expect_host, std::uint32_t seed, bool use_pattern, const char* what) {
    CHECK(cudaMemcpy(g.back, g.dst, kTotal, cudaMemcpyDeviceToHost));
    for (std::size_t i = 0; i < kTotal / 4; ++i) {
        const std::uint32_t want = use_pattern ? pattern(i, seed) : expect_host[i];
        if (g.back[i] != want) {
            std::fprintf(stderr, "verification failed: %s word %zu\n", what, i);
            std::exit(1);
        }
    }
}

double h2d_chain(Bufs& g, const std::uint32_t* from) {
    spin_kernel<<<1, 1, 0, g.b>>>(kHoldNs);
    CHECK(cudaGetLastError());
    CHECK(cudaEventRecord(g.start, g.b));
    for (int k = 0; k < kPieces; ++k) {
        const std::size_t off = static_cast<std::size_t>(k) * kPiece;
        CHECK(cudaMemcpyAsync(reinterpret_cast<char*>(g.dst) + off, reinterpret_cast<const char*>(from) + off, kPiece,
                              cudaMemcpyHostToDevice, g.b));
    }
    CHECK(cudaEventRecord(g.stop, g.b));
    CHECK(cudaEventSynchronize(g.stop));
    float ms = 0;
    CHECK(cudaEventElapsedTime(&ms, g.start, g.stop));
    return ms * 1000.0 / kPieces;
}

void chains(Bufs& g) {
    for (const char* v : {"flushed", "dma", "dma_flushed"}) {
        std::vector<double> t;
        std::uint32_t seed = 0;
        for (int rep = 0; rep < kWarm + kReps; ++rep) {
            seed = 0x9e3779b9u * static_cast<std::uint32_t>(rep + 1);
            if (v[0] == 'f') {
                for (std::size_t i = 0; i < kTotal / 4; ++i) g.host[i] = pattern(i, seed);
                flush(g.host, kTotal);
            } else {
                fill_kernel<<<264, 256, 0, g.a>>>(g.src, kTotal / 4, seed);
                CHECK(cudaGetLastError());
                flush(g.host, kTotal);
                CHECK(cudaMemcpyAsync(g.host, g.src, kTotal, cudaMemcpyDeviceToHost, g.a));
                CHECK(cudaStreamSynchronize(g.a));
                if (std::strcmp(v, "dma_flushed") == 0) flush(g.host, kTotal);
            }
            const double us = h2d_chain(g, g.host);
            if (rep >= kWarm) t.push_back(us);
        }
        verify_dst(g, nullptr, seed, true, v);
        print("chain", v, 1, t);
    }
}

void pipelines(Bufs& g) {
    struct Cell {
        const char* variant;
        int buffers;
    };
    for (const Cell c : {Cell{"same_lines", 1}, Cell{"same_lines", 3}, Cell{"same_lines", 6}, Cell{"apart", 3}}) {
        const bool apart = c.variant[0] == 'a';
        std::vector<double> t;
        std::uint32_t seed = 0;
        for (int rep = 0; rep < kWarm + kReps; ++rep) {
            seed = 0x85ebca6bu * static_cast<std::uint32_t>(rep + 5) + static_cast<std::uint32_t>(c.buffers);
            fill_kernel<<<264, 256, 0, g.a>>>(g.src, kTotal / 4, seed);
            CHECK(cudaGetLastError());
            if (apart) {
                for (std::size_t i = 0; i < kTotal / 4; ++i) g.other[i] = pattern(i, seed ^ 0x1234567u);
                flush(g.other, kTotal);
            }
            flush(g.host, kTotal);
            CHECK(cudaDeviceSynchronize());
            spin_kernel<<<1, 1, 0, g.a>>>(kHoldNs);
            CHECK(cudaGetLastError());
            CHECK(cudaEventRecord(g.start, g.a));
            for (int k = 0; k < kPieces; ++k) {
                const auto ku = static_cast<std::size_t>(k);
                const std::size_t off = ku * kPiece;
                char* buf = reinterpret_cast<char*>(g.host) + static_cast<std::size_t>(k % c.buffers) * kPiece;
                const char* from = apart ? reinterpret_cast<const char*>(g.other) + off : buf;
                if (k >= c.buffers) CHECK(cudaStreamWaitEvent(g.a, g.in[ku - static_cast<std::size_t>(c.buffers)], 0));
                CHECK(cudaMemcpyAsync(buf, reinterpret_cast<char*>(g.src) + off, kPiece, cudaMemcpyDeviceToHost, g.a));
                CHECK(cudaEventRecord(g.out[ku], g.a));
                CHECK(cudaStreamWaitEvent(g.b, g.out[ku], 0));
                CHECK(cudaMemcpyAsync(reinterpret_cast<char*>(g.dst) + off, from, kPiece, cudaMemcpyHostToDevice, g.b));
                CHECK(cudaEventRecord(g.in[ku], g.b));
            }
            CHECK(cudaStreamWaitEvent(g.a, g.in[kPieces - 1], 0));
            CHECK(cudaEventRecord(g.stop, g.a));
            CHECK(cudaEventSynchronize(g.stop));
            float ms = 0;
            CHECK(cudaEventElapsedTime(&ms, g.start, g.stop));
            if (rep >= kWarm) t.push_back(ms * 1000.0 / kPieces);
        }
        if (apart) {
            verify_dst(g, g.other, 0, false, "pipeline apart");
        } else {
            verify_dst(g, nullptr, seed, true, "pipeline");
        }
        print("pipeline", c.variant, c.buffers, t);
    }
}

}  // namespace

int main() {
    std::printf("test,variant,buffers,us_per_piece_median,min,max\n");
    Bufs g;
    g.out.resize(kPieces);
    g.in.resize(kPieces);
    CHECK(cudaMalloc(&g.src, kTotal));
    CHECK(cudaMalloc(&g.dst, kTotal));
    CHECK(cudaMallocHost(&g.host, kTotal));
    CHECK(cudaMallocHost(&g.other, kTotal));
    CHECK(cudaMallocHost(&g.back, kTotal));
    CHECK(cudaStreamCreateWithFlags(&g.a, cudaStreamNonBlocking));
    CHECK(cudaStreamCreateWithFlags(&g.b, cudaStreamNonBlocking));
    CHECK(cudaEventCreate(&g.start));
    CHECK(cudaEventCreate(&g.stop));
    for (auto& e : g.out) CHECK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
    for (auto& e : g.in) CHECK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
    chains(g);
    pipelines(g);
    return 0;
}
