// What does a small copy into the GPU that the call carries in its command stream cost on each
// kind of host, by size, with its source where dmaprobe's pinned rows have it (written and then
// flushed from the CPU's caches) and where a program that just wrote it has it (dirty)?
// ../../../h100-sxm/isolating/command-fetch split such a copy into the call's CPU time and the
// GPU's side on a synchronised stream, but with the source left in the CPU's caches; the main
// plan's 16 KiB pinned copy into the GPU is +9.7 % in the model on the 2xH200 and +3.2 % on the
// H100, where the model copies the source at cpu.memcpy_bandwidth (one thread from DRAM) and the
// front end reads it at runtime.command_fetch_bandwidth.
//
// For each size (1-24 KiB carried, 28 KiB read by an engine) and source state, on a stream the
// CPU has synchronised (so that the call carries the copy):
//   `call`:     the CPU's time in cudaMemcpyAsync;
//   `gpu`:      from a start event recorded on a second, idle stream just before the call to an
//               end event behind the copy on its stream, less the call's time: what the GPU adds
//               after the call returns;
//   `blocking`: cudaMemcpy, host clock from the call to its return (as dmaprobe's pinned rows);
//   `async_sync` (added 2026-12-01): cudaMemcpyAsync then cudaStreamSynchronize on the synchronised
//               stream, no events, host clock from the call to the synchronisation's return, and
//   `async_call`: that call's own time (is a blocking copy this pair, or another path?);
//   `blocking_d2h`: the same out of the GPU into a pinned destination written (and flushed) first.
// Before every repetition the source is rewritten with new data, and with `flushed` written back
// and evicted (clflush each line, mfence). With `clean` (added 2026-12-01, as dmaprobe's rows
// have it: --flush-host-data without --fresh-host-data) it is written and flushed once before
// the cell's warm-ups, and every repetition copies it again: the call's copy finds it in the
// CPU's cache, unmodified.
//
// Build: nvcc -O3 -arch=sm_90 inlinecopy.cu -o inlinecopy     Run: ./inlinecopy > inlinecopy.csv
// 30 warm-ups and 300 timed repetitions per cell, p10/median/p90; every cell's last copy verified.
#include <cuda_runtime.h>
#include <immintrin.h>

#include <algorithm>
#include <chrono>
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

constexpr std::size_t kKiB = 1024;
constexpr std::size_t kLine = 64;
constexpr std::size_t kMax = 28 * kKiB;
constexpr int kWarmup = 30;
constexpr int kReps = 300;

using Clock = std::chrono::steady_clock;

void write_source(unsigned char* p, std::size_t n, unsigned seed) {
    for (std::size_t i = 0; i < n; ++i) p[i] = static_cast<unsigned char>((i * 131u + seed * 7u + 1u) & 0xff);
}

void flush(const unsigned char* p, std::size_t n) {
    for (std::size_t i = 0; i < n; i += kLine) _mm_clflush(p + i);
    _mm_mfence();
}

struct Stats {
    double p10, median, p90;
};

Stats stats(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    const auto at = [&](double q) { return v[static_cast<std::size_t>(q * static_cast<double>(v.size() - 1) + 0.5)]; };
    return {at(0.1), at(0.5), at(0.9)};
}

double us(Clock::time_point a, Clock::time_point b) { return std::chrono::duration<double, std::micro>(b - a).count(); }

}  // namespace

int main() {
    CHECK(cudaSetDevice(0));
    unsigned char* host = nullptr;
    unsigned char* back = nullptr;
    unsigned char* dev = nullptr;
    CHECK(cudaMallocHost(&host, kMax));
    CHECK(cudaMallocHost(&back, kMax));
    CHECK(cudaMalloc(&dev, kMax));
    cudaStream_t s, s2;
    CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    CHECK(cudaStreamCreateWithFlags(&s2, cudaStreamNonBlocking));
    cudaEvent_t a, b;
    CHECK(cudaEventCreate(&a));
    CHECK(cudaEventCreate(&b));
    const std::size_t sizes[] = {1 * kKiB, 2 * kKiB, 4 * kKiB, 8 * kKiB, 12 * kKiB, 16 * kKiB, 20 * kKiB, 24 * kKiB, 28 * kKiB};
    std::printf("bytes,source,what,p10_us,median_us,p90_us\n");
    unsigned seed = 1;
    for (const std::size_t n : sizes) {
        for (const int state : {0, 1, 2}) {
            const bool flushed = state == 0;
            const bool clean = state == 2;
            const char* source = state == 0 ? "flushed" : state == 1 ? "dirty" : "clean";
            // Every write of the source goes through this: once per cell with `clean`.
            const auto prepare = [&]() {
                if (clean) return;
                write_source(host, n, ++seed);
                if (flushed) flush(host, n);
            };
            if (clean) {
                write_source(host, n, ++seed);
                flush(host, n);
            }
            std::vector<double> call, gpu, blocking, blocking_d2h, async_sync, async_call;
            for (int rep = 0; rep < kWarmup + kReps; ++rep) {
                prepare();
                CHECK(cudaStreamSynchronize(s));
                CHECK(cudaEventRecord(a, s2));
                const auto t0 = Clock::now();
                CHECK(cudaMemcpyAsync(dev, host, n, cudaMemcpyHostToDevice, s));
                const auto t1 = Clock::now();
                CHECK(cudaEventRecord(b, s));
                CHECK(cudaEventSynchronize(b));
                float ms = 0;
                CHECK(cudaEventElapsedTime(&ms, a, b));
                if (rep >= kWarmup) {
                    call.push_back(us(t0, t1));
                    gpu.push_back(ms * 1000.0 - us(t0, t1));
                }
            }
            CHECK(cudaMemcpy(back, dev, n, cudaMemcpyDeviceToHost));
            if (std::memcmp(back, host, n) != 0) {
                std::fprintf(stderr, "verification failed: async %zu bytes %s\n", n, source);
                return 1;
            }
            for (int rep = 0; rep < kWarmup + kReps; ++rep) {
                prepare();
                CHECK(cudaStreamSynchronize(s));
                const auto t0 = Clock::now();
                CHECK(cudaMemcpyAsync(dev, host, n, cudaMemcpyHostToDevice, s));
                const auto t1 = Clock::now();
                CHECK(cudaStreamSynchronize(s));
                const auto t2 = Clock::now();
                if (rep >= kWarmup) {
                    async_call.push_back(us(t0, t1));
                    async_sync.push_back(us(t0, t2));
                }
            }
            CHECK(cudaMemcpy(back, dev, n, cudaMemcpyDeviceToHost));
            if (std::memcmp(back, host, n) != 0) {
                std::fprintf(stderr, "verification failed: async_sync %zu bytes %s\n", n, source);
                return 1;
            }
            for (int rep = 0; rep < kWarmup + kReps; ++rep) {
                prepare();
                const auto t0 = Clock::now();
                CHECK(cudaMemcpy(dev, host, n, cudaMemcpyHostToDevice));
                const auto t1 = Clock::now();
                if (rep >= kWarmup) blocking.push_back(us(t0, t1));
            }
            CHECK(cudaMemcpy(back, dev, n, cudaMemcpyDeviceToHost));
            if (std::memcmp(back, host, n) != 0) {
                std::fprintf(stderr, "verification failed: blocking %zu bytes %s\n", n, source);
                return 1;
            }
            // Out of the GPU: the data the last copy in left there, into a destination the CPU
            // wrote (and flushed) first; `clean`: written and flushed once, before the warm-ups.
            if (clean) {
                std::memset(back, 0, n);
                flush(back, n);
            }
            for (int rep = 0; rep < kWarmup + kReps; ++rep) {
                if (!clean) {
                    std::memset(back, 0, n);
                    if (flushed) flush(back, n);
                }
                const auto t0 = Clock::now();
                CHECK(cudaMemcpy(back, dev, n, cudaMemcpyDeviceToHost));
                const auto t1 = Clock::now();
                if (rep >= kWarmup) blocking_d2h.push_back(us(t0, t1));
            }
            if (std::memcmp(back, host, n) != 0) {
                std::fprintf(stderr, "verification failed: blocking_d2h %zu bytes %s\n", n, source);
                return 1;
            }
            for (const auto& [what, v] : {std::pair<const char*, std::vector<double>*>{"call", &call}, {"gpu", &gpu},
                                          {"blocking", &blocking}, {"blocking_d2h", &blocking_d2h},
                                          {"async_sync", &async_sync}, {"async_call", &async_call}}) {
                const Stats st = stats(*v);
                std::printf("%zu,%s,%s,%.4f,%.4f,%.4f\n", n, source, what, st.p10, st.median, st.p90);
            }
            std::fflush(stdout);
        }
    }
    CHECK(cudaEventDestroy(a));
    CHECK(cudaEventDestroy(b));
    CHECK(cudaStreamDestroy(s));
    CHECK(cudaStreamDestroy(s2));
    CHECK(cudaFree(dev));
    CHECK(cudaFreeHost(host));
    CHECK(cudaFreeHost(back));
    return 0;
}
