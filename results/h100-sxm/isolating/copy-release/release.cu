// Where a copy's completion falls after its call, both ways, on the H100's kind of host.
// ../../../h200x2-nvlink/isolating/d2h-release timed a copy out of the GPU only: its data land
// 5.0-5.2 us after the call starts and a flag its stream writes behind it 1.2-1.7 us after that.
// The model places the data about 1.6 us later and the completion about as much sooner
// (../d2h-landing). For a copy into the GPU the CPU cannot see the data land, but it can see the
// flag: the difference of the two directions' flags is the difference of what each does before
// its completion, and beside the blocking calls it splits each direction's time into the part
// before the flag and the part after it.
//
// Per direction and size, each repetition on a stream the CPU has just synchronised: the
// destination is overwritten (a kernel into GPU memory; out of it the CPU writes the host side
// and flushes it from its caches), then
//   `async`:    cudaMemcpyAsync, then cuStreamWriteValue32 of a flag in mapped host memory (the
//               channel writes it once the copy is complete); the CPU spins from just before the
//               call until the flag holds this repetition's value (`flag_us`) and, out of the
//               GPU, records first when the destination's last word holds its value (`data_us`);
//               `call_us` is the CPU's time in cudaMemcpyAsync alone;
//   `blocking`: cudaMemcpy, call to return (`blocking_us`).
// With `queued` the stream gets an event recorded before the copy (not waited for), so a small
// copy into the GPU is not carried in the command stream (../command-fetch) but read by an engine.
//
// Build: nvcc -O3 -arch=sm_90 release.cu -o release -lcuda
// Run:   ./release [queued] > release.csv
// 10 warm-ups and 300 repetitions per cell, medians and p10/p90; every cell's last copy verified.
#include <cuda.h>
#include <cuda_runtime.h>
#include <immintrin.h>

#include <algorithm>
#include <atomic>
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
#define CHECK_CU(call)                                                                          \
    do {                                                                                        \
        const CUresult r_ = (call);                                                             \
        if (r_ != CUDA_SUCCESS) {                                                               \
            const char* s_ = nullptr;                                                           \
            cuGetErrorString(r_, &s_);                                                          \
            std::fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call, s_ ? s_ : "?"); \
            std::exit(1);                                                                       \
        }                                                                                       \
    } while (0)

constexpr int kWarm = 10;
constexpr int kReps = 300;

using Clock = std::chrono::steady_clock;
double us(Clock::time_point a, Clock::time_point b) { return std::chrono::duration<double, std::micro>(b - a).count(); }

std::uint32_t value(std::size_t i, std::uint32_t seed) { return static_cast<std::uint32_t>(i) * 2654435761u ^ seed; }

__global__ void fill_kernel(std::uint32_t* p, std::size_t words, std::uint32_t seed) {
    for (std::size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < words; i += std::size_t{gridDim.x} * blockDim.x) {
        p[i] = static_cast<std::uint32_t>(i) * 2654435761u ^ seed;
    }
}

// The host side holds `seed`'s values and none of it is in the CPU's caches.
void fill_host(std::uint32_t* p, std::size_t words, std::uint32_t seed) {
    for (std::size_t i = 0; i < words; ++i) p[i] = value(i, seed);
    for (std::size_t i = 0; i < words; i += 16) _mm_clflush(p + i);
    _mm_mfence();
}

struct Stats {
    double p10, p50, p90;
};
Stats stats(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    const std::size_t n = v.size();
    return {v[n / 10], n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]), v[n * 9 / 10]};
}

}  // namespace

int main(int argc, char** argv) {
    const bool queued = argc > 1 && std::strcmp(argv[1], "queued") == 0;
    if (argc > 1 && !queued) {
        std::fprintf(stderr, "usage: release [queued]\n");
        return 2;
    }
    const std::size_t sizes[] = {8, 4096, 16384, 65536, 262144, 1048576};
    constexpr std::size_t kMax = 1048576;
    CHECK(cudaSetDevice(0));
    CHECK(cudaFree(nullptr));
    std::uint32_t* dev = nullptr;
    std::uint32_t* host = nullptr;
    volatile std::uint32_t* flag = nullptr;
    CHECK(cudaMalloc(&dev, kMax));
    CHECK(cudaHostAlloc(reinterpret_cast<void**>(&host), kMax, cudaHostAllocDefault));
    CHECK(cudaHostAlloc(const_cast<std::uint32_t**>(&flag), 64, cudaHostAllocMapped));
    void* flag_dev = nullptr;
    CHECK(cudaHostGetDevicePointer(&flag_dev, const_cast<std::uint32_t*>(flag), 0));
    cudaStream_t s;
    CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    cudaEvent_t before;
    CHECK(cudaEventCreateWithFlags(&before, cudaEventDisableTiming));
    std::printf("mode,direction,bytes,call_us,data_us,flag_us,blocking_us,flag_p10,flag_p90,blocking_p10,blocking_p90\n");
    std::uint32_t counter = 0;
    for (const bool into_gpu : {true, false}) {
        for (const std::size_t n : sizes) {
            const std::size_t words = n / 4;
            std::vector<double> call, data, flag_t, blocking;
            // Into the GPU the source is written and flushed once per size, as dmaprobe does (a
            // copy engine's reads do not bring it back into the CPU's caches); out of it the host
            // destination is rewritten and flushed every repetition, so that its last word shows
            // when the data land.
            std::uint32_t seed = 0x5bd1e995u + static_cast<std::uint32_t>(n);
            if (into_gpu) fill_host(host, words, seed);
            for (int rep = 0; rep < kWarm + kReps; ++rep) {
                for (const bool is_blocking : {false, true}) {
                    if (!into_gpu) seed = 0x9e3779b9u * static_cast<std::uint32_t>(2 * rep + is_blocking + 1) + static_cast<std::uint32_t>(n);
                    // The source holds this repetition's values, the destination something else.
                    fill_kernel<<<132, 256, 0, s>>>(dev, words, into_gpu ? ~seed : seed);
                    CHECK(cudaGetLastError());
                    CHECK(cudaStreamSynchronize(s));
                    if (!into_gpu) fill_host(host, words, ~seed);
                    volatile std::uint32_t* last = host + words - 1;
                    if (queued) CHECK(cudaEventRecord(before, s));
                    ++counter;
                    *flag = 0;
                    std::atomic_thread_fence(std::memory_order_seq_cst);
                    if (is_blocking) {
                        const Clock::time_point t0 = Clock::now();
                        CHECK(cudaMemcpy(into_gpu ? static_cast<void*>(dev) : static_cast<void*>(host),
                                         into_gpu ? static_cast<void*>(host) : static_cast<void*>(dev), n,
                                         into_gpu ? cudaMemcpyHostToDevice : cudaMemcpyDeviceToHost));
                        const Clock::time_point t1 = Clock::now();
                        if (rep >= kWarm) blocking.push_back(us(t0, t1));
                        continue;
                    }
                    const std::uint32_t expect = value(words - 1, seed);
                    const Clock::time_point t0 = Clock::now();
                    CHECK(cudaMemcpyAsync(into_gpu ? static_cast<void*>(dev) : static_cast<void*>(host),
                                          into_gpu ? static_cast<void*>(host) : static_cast<void*>(dev), n,
                                          into_gpu ? cudaMemcpyHostToDevice : cudaMemcpyDeviceToHost, s));
                    const Clock::time_point tc = Clock::now();
                    CHECK_CU(cuStreamWriteValue32(s, reinterpret_cast<CUdeviceptr>(flag_dev), counter, CU_STREAM_WRITE_VALUE_DEFAULT));
                    Clock::time_point td = tc;
                    if (!into_gpu) {
                        while (*last != expect) {
                        }
                        td = Clock::now();
                    }
                    while (*flag != counter) {
                    }
                    const Clock::time_point tf = Clock::now();
                    CHECK(cudaStreamSynchronize(s));
                    if (rep >= kWarm) {
                        call.push_back(us(t0, tc));
                        data.push_back(into_gpu ? 0.0 : us(t0, td));
                        flag_t.push_back(us(t0, tf));
                    }
                }
            }
            // The blocking copy was last: its destination holds its values.
            std::vector<std::uint32_t> check(words);
            CHECK(cudaMemcpy(check.data(), into_gpu ? static_cast<void*>(dev) : static_cast<void*>(host), n,
                             into_gpu ? cudaMemcpyDeviceToHost : cudaMemcpyHostToHost));
            for (std::size_t i = 0; i < words; ++i) {
                if (check[i] != value(i, seed)) {
                    std::fprintf(stderr, "verification failed: %s %zu B word %zu\n", into_gpu ? "h2d" : "d2h", n, i);
                    return 1;
                }
            }
            const Stats c = stats(call), d = stats(data), f = stats(flag_t), b = stats(blocking);
            std::printf("%s,%s,%zu,%.3f,%.3f,%.3f,%.3f,%.3f,%.3f,%.3f,%.3f\n", queued ? "queued" : "synced",
                        into_gpu ? "h2d" : "d2h", n, c.p50, into_gpu ? 0.0 : d.p50, f.p50, b.p50, f.p10, f.p90, b.p10, b.p90);
            std::fflush(stdout);
        }
    }
    return 0;
}
