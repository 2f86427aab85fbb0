// What a small copy into the GPU that the call carries costs from pinned and from pageable memory,
// with its source clean in the CPU's cache or flushed (carried-source, README.md).
//
// Up to runtime.inline_h2d_max (pinned) and pageable.inline_max (pageable) the CUDA runtime copies a
// copy into the GPU into its command stream during the call. The model prices that copy at one rate
// for both kinds of memory; measured on separate leases, pinned copies grow by 7.0-9.4 GB/s from 4 to
// 24 KiB (inline-copy, clean source) and pageable ones by 3.9 GB/s from 4 to 64 KiB (pageable-pieces).
// This program measures both on one machine, minutes apart, the source either
//   clean    written and flushed once before the cell, then copied again every repetition (as dmaprobe's
//            rows: after the first copy the source is in the cache, clean), or
//   flushed  flushed (clflushopt) before every repetition: read from DRAM.
// For each cell: `blocking` (cudaMemcpy, host clock around it, as dmaprobe's pinned and pageable rows)
// and `call` (cudaMemcpyAsync on a stream the CPU has synchronised, the call alone), 5 warm-ups and 40
// repetitions, medians; every cell's last copy is checked against the source.
// With the argument `pageable-first` each round runs the pageable cells before the pinned ones:
// whether what slows the first pinned cells is their being first in the process.
// Build: nvcc -O3 -arch=sm_90 -Xcompiler -mclflushopt carried.cu -o carried
// Run:   ./carried [pageable-first] > carried.csv
#include <cuda_runtime.h>
#include <immintrin.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#define CHECK(x)                                                                                         \
    do {                                                                                                 \
        cudaError_t e_ = (x);                                                                            \
        if (e_ != cudaSuccess) {                                                                         \
            std::fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_));     \
            std::exit(1);                                                                                \
        }                                                                                                \
    } while (0)

namespace {

constexpr int kWarmups = 5;
constexpr int kRuns = 40;
constexpr std::size_t kKiB = 1024;
constexpr std::size_t kMax = 128 * kKiB;

double now_us() {
    return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

void flush(const unsigned char* p, std::size_t n) {
    for (std::size_t a = 0; a < n; a += 64) _mm_clflushopt(const_cast<unsigned char*>(p + a));
    _mm_sfence();
}

void fill(unsigned char* p, std::size_t n, unsigned seed) {
    for (std::size_t i = 0; i < n; ++i) p[i] = static_cast<unsigned char>((i * 131u + seed * 7u + 1u) & 0xFF);
}

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v.size() % 2 ? v[v.size() / 2] : 0.5 * (v[v.size() / 2 - 1] + v[v.size() / 2]);
}

}  // namespace

int main(int argc, char** argv) {
    const bool pageable_first = argc > 1 && std::strcmp(argv[1], "pageable-first") == 0;
    unsigned char* pinned = nullptr;
    CHECK(cudaMallocHost(reinterpret_cast<void**>(&pinned), kMax));
    auto* pageable = static_cast<unsigned char*>(std::aligned_alloc(4096, kMax));
    if (pageable == nullptr) return 1;
    std::memset(pageable, 0x5A, kMax);  // every page faulted in before any measurement
    unsigned char* dev = nullptr;
    CHECK(cudaMalloc(reinterpret_cast<void**>(&dev), kMax));
    std::vector<unsigned char> back(kMax);
    cudaStream_t st;
    CHECK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
    const std::size_t sizes[] = {4 * kKiB, 8 * kKiB, 12 * kKiB, 16 * kKiB, 20 * kKiB, 24 * kKiB, 32 * kKiB,
                                 48 * kKiB, 64 * kKiB, 96 * kKiB, 128 * kKiB};
    std::printf("memory,state,mode,size_bytes,median_us,p10_us,p90_us\n");
    unsigned seed = 0;
    for (int round = 0; round < 2; ++round) {  // the whole table twice: drift shows as a change between rounds
        for (int k = 0; k < 2; ++k) {
            const int mem = pageable_first ? 1 - k : k;
            unsigned char* src = mem == 0 ? pinned : pageable;
            for (int state = 0; state < 2; ++state) {
                for (int mode = 0; mode < 2; ++mode) {
                    for (std::size_t n : sizes) {
                        fill(src, n, ++seed);
                        flush(src, n);
                        std::vector<double> t;
                        for (int i = 0; i < kWarmups + kRuns; ++i) {
                            if (state == 1) flush(src, n);
                            double us = 0.0;
                            if (mode == 0) {
                                const double a = now_us();
                                CHECK(cudaMemcpy(dev, src, n, cudaMemcpyHostToDevice));
                                us = now_us() - a;
                            } else {
                                CHECK(cudaStreamSynchronize(st));
                                const double a = now_us();
                                CHECK(cudaMemcpyAsync(dev, src, n, cudaMemcpyHostToDevice, st));
                                us = now_us() - a;
                                CHECK(cudaStreamSynchronize(st));
                            }
                            if (i >= kWarmups) t.push_back(us);
                        }
                        CHECK(cudaMemcpy(back.data(), dev, n, cudaMemcpyDeviceToHost));
                        if (std::memcmp(back.data(), src, n) != 0) {
                            std::fprintf(stderr, "copy of %zu bytes did not arrive intact\n", n);
                            return 1;
                        }
                        std::sort(t.begin(), t.end());
                        std::printf("%s,%s,%s,%zu,%.3f,%.3f,%.3f\n", mem == 0 ? "pinned" : "pageable",
                                    state == 0 ? "clean" : "flushed", mode == 0 ? "blocking" : "call", n, median(t),
                                    t[t.size() / 10], t[t.size() * 9 / 10]);
                        std::fflush(stdout);
                    }
                }
            }
        }
    }
    return 0;
}
