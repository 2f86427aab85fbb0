// Where does each copy of dmaprobe's duplex burst end, in the pair and alone? (one GPU)
// results/h200x2-nvlink/isolating/duplex-burst: on the one-GPU H200 (the H100's kind of host) the
// model's burst pairs of 64 and 256 KiB copies are 11 % fast, and at 256 KiB the hardware ends both
// directions together (41.5 / 41.2 us) where the model's copies out of the GPU end 8 us before
// those into it. This times every copy's end.
//
// As dmaprobe's gated pair, with a spin kernel for the gate (every call is made while it spins):
// stream 1 runs the spin kernel and records the start event, stream 2 waits for it; stream 1
// copies into the GPU, stream 2 out of it, 1 MiB each way in copies of `bytes`; then an event on
// each stream, stream 1 waits for stream 2's, and the stop event. Modes: `pair`, `h2d` alone,
// `d2h` alone (the other direction's copies left out, every other call kept). With `each`, a
// timing event follows every copy (its own cost, 1.3 us on this host, isolating/record-cost, is in
// the later copies' ends); with `last`, only the last copy's (dmaprobe's calls exactly).
// Each copy has its own offset; the host source is rewritten and flushed once per cell.
//
// Build: nvcc -O3 -arch=sm_90 pairends.cu -o pairends      Run: ./pairends > pairends.csv
// 5 warm-ups and 40 repetitions per cell; per event the p10, median and p90 of its time from the
// start event (us); both directions' data verified after every cell.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
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

constexpr std::size_t kBurst = 1 << 20;  // bytes each way
constexpr std::size_t kMaxCopies = 64;   // 16 KiB copies
constexpr int kWarm = 5;
constexpr int kReps = 40;
constexpr unsigned long long kHoldNs = 1'000'000;  // longer than every call of a cell (64 copies, 63 events each way)

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

struct Stats {
    double p10, median, p90;
};

Stats stats(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    const auto at = [&](double q) { return v[static_cast<std::size_t>(q * static_cast<double>(v.size() - 1) + 0.5)]; };
    return {at(0.1), at(0.5), at(0.9)};
}

void verify(const unsigned char* p, std::size_t n, std::uint32_t seed, const char* what, std::size_t bytes, const char* mode) {
    for (std::size_t i = 0; i < n; ++i) {
        if (p[i] != pattern(i, seed)) {
            std::fprintf(stderr, "verification failed: %s, %zu B copies, %s, byte %zu\n", what, bytes, mode, i);
            std::exit(1);
        }
    }
}

}  // namespace

int main() {
    CHECK(cudaSetDevice(0));
    unsigned char *h_src = nullptr, *h_dst = nullptr, *d_dst = nullptr, *d_src = nullptr, *back = nullptr;
    CHECK(cudaMallocHost(&h_src, kBurst));
    CHECK(cudaMallocHost(&h_dst, kBurst));
    CHECK(cudaMallocHost(&back, kBurst));
    CHECK(cudaMalloc(&d_dst, kBurst));
    CHECK(cudaMalloc(&d_src, kBurst));
    cudaStream_t s1, s2;
    CHECK(cudaStreamCreateWithFlags(&s1, cudaStreamNonBlocking));
    CHECK(cudaStreamCreateWithFlags(&s2, cudaStreamNonBlocking));
    cudaEvent_t start, stop, end_up, end_down;
    CHECK(cudaEventCreate(&start));
    CHECK(cudaEventCreate(&stop));
    CHECK(cudaEventCreate(&end_up));
    CHECK(cudaEventCreate(&end_down));
    std::vector<cudaEvent_t> up(kMaxCopies), down(kMaxCopies);
    for (auto& e : up) CHECK(cudaEventCreate(&e));
    for (auto& e : down) CHECK(cudaEventCreate(&e));
    std::printf("bytes,mode,events,what,k,p10_us,median_us,p90_us\n");
    std::uint32_t seed = 1;
    for (const std::size_t bytes : {std::size_t{16} << 10, std::size_t{64} << 10, std::size_t{256} << 10, std::size_t{1} << 20}) {
        const std::size_t copies = kBurst / bytes;
        for (const char* mode : {"pair", "h2d", "d2h"}) {
            const bool do_up = std::strcmp(mode, "d2h") != 0;
            const bool do_down = std::strcmp(mode, "h2d") != 0;
            for (const bool each : {true, false}) {
                ++seed;
                for (std::size_t i = 0; i < kBurst; ++i) h_src[i] = pattern(i, seed);
                for (std::size_t off = 0; off < kBurst; off += 64) _mm_clflush(h_src + off);
                _mm_mfence();
                fill_kernel<<<264, 256>>>(d_src, kBurst, seed + 1000);
                CHECK(cudaGetLastError());
                CHECK(cudaDeviceSynchronize());
                // Per event: its times from the start event over the repetitions.
                std::vector<std::vector<double>> t_up(copies), t_down(copies);
                std::vector<double> t_stop, t_end_up, t_end_down;
                for (int rep = 0; rep < kWarm + kReps; ++rep) {
                    spin_kernel<<<1, 1, 0, s1>>>(kHoldNs);
                    CHECK(cudaGetLastError());
                    CHECK(cudaEventRecord(start, s1));
                    CHECK(cudaStreamWaitEvent(s2, start, 0));
                    if (do_up) {
                        for (std::size_t k = 0; k < copies; ++k) {
                            CHECK(cudaMemcpyAsync(d_dst + k * bytes, h_src + k * bytes, bytes, cudaMemcpyHostToDevice, s1));
                            if (each && k + 1 < copies) CHECK(cudaEventRecord(up[k], s1));
                        }
                    }
                    if (do_down) {
                        for (std::size_t k = 0; k < copies; ++k) {
                            CHECK(cudaMemcpyAsync(h_dst + k * bytes, d_src + k * bytes, bytes, cudaMemcpyDeviceToHost, s2));
                            if (each && k + 1 < copies) CHECK(cudaEventRecord(down[k], s2));
                        }
                    }
                    CHECK(cudaEventRecord(end_up, s1));
                    CHECK(cudaEventRecord(end_down, s2));
                    CHECK(cudaStreamWaitEvent(s1, end_down, 0));
                    CHECK(cudaEventRecord(stop, s1));
                    CHECK(cudaEventSynchronize(stop));
                    if (rep < kWarm) continue;
                    float ms = 0;
                    CHECK(cudaEventElapsedTime(&ms, start, stop));
                    t_stop.push_back(ms * 1000.0);
                    CHECK(cudaEventElapsedTime(&ms, start, end_up));
                    t_end_up.push_back(ms * 1000.0);
                    CHECK(cudaEventElapsedTime(&ms, start, end_down));
                    t_end_down.push_back(ms * 1000.0);
                    for (std::size_t k = 0; each && k + 1 < copies; ++k) {
                        if (do_up) {
                            CHECK(cudaEventElapsedTime(&ms, start, up[k]));
                            t_up[k].push_back(ms * 1000.0);
                        }
                        if (do_down) {
                            CHECK(cudaEventElapsedTime(&ms, start, down[k]));
                            t_down[k].push_back(ms * 1000.0);
                        }
                    }
                }
                if (do_up) {
                    CHECK(cudaMemcpy(back, d_dst, kBurst, cudaMemcpyDeviceToHost));
                    verify(back, kBurst, seed, "into the GPU", bytes, mode);
                }
                if (do_down) verify(h_dst, kBurst, seed + 1000, "out of the GPU", bytes, mode);
                const char* ev = each ? "each" : "last";
                const auto line = [&](const char* what, std::size_t k, const std::vector<double>& v) {
                    const Stats s = stats(v);
                    std::printf("%zu,%s,%s,%s,%zu,%.3f,%.3f,%.3f\n", bytes, mode, ev, what, k, s.p10, s.median, s.p90);
                };
                for (std::size_t k = 0; each && k + 1 < copies; ++k) {
                    if (do_up) line("h2d", k, t_up[k]);
                    if (do_down) line("d2h", k, t_down[k]);
                }
                line("h2d_end", copies - 1, t_end_up);
                line("d2h_end", copies - 1, t_end_down);
                line("stop", copies - 1, t_stop);
                std::fflush(stdout);
            }
        }
    }
    for (auto& e : up) CHECK(cudaEventDestroy(e));
    for (auto& e : down) CHECK(cudaEventDestroy(e));
    CHECK(cudaEventDestroy(start));
    CHECK(cudaEventDestroy(stop));
    CHECK(cudaEventDestroy(end_up));
    CHECK(cudaEventDestroy(end_down));
    CHECK(cudaStreamDestroy(s1));
    CHECK(cudaStreamDestroy(s2));
    CHECK(cudaFree(d_dst));
    CHECK(cudaFree(d_src));
    CHECK(cudaFreeHost(h_src));
    CHECK(cudaFreeHost(h_dst));
    CHECK(cudaFreeHost(back));
    return 0;
}
