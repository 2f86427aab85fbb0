// When does each copy into the GPU of dmaprobe's duplex burst move its data, in the pair and alone?
// (one GPU) results/h100-sxm/isolating/pair-ends: in the pair the two directions run in lockstep,
// each copy into the GPU 0.57 / 0.89 / 1.62 us slower than alone at 16 / 64 / 256 KiB (the model
// 0.34 / 0.35 / 0.69). Whether that is before its data (its start), in its data (the port's
// share) or after it (its release) the events cannot say. Here a one-thread watcher kernel on a
// third stream, started before the gate, polls each copy's first and last word in GPU memory and
// stamps %globaltimer as each lands; the gate kernel stamps when it ends.
//
// The calls are pairends.cu's `last` (dmaprobe's pair exactly: stream 1 runs the gate kernel and
// records the start event, stream 2 waits for it; stream 1 copies into the GPU, stream 2 out of
// it, 1 MiB each way in copies of `bytes`; an event on each stream, stream 1 waits for stream 2's,
// the stop event). Modes: `pair`, and `h2d` alone (the copies out of the GPU left out, every other
// call kept). Every repetition writes new marker words at each copy's first and last word of the
// host source (the rest is written and flushed once per cell), so the watcher knows the words of
// this repetition's copy.
//
// Build: nvcc -O3 -arch=sm_90 pairwatch.cu -o pairwatch      Run: ./pairwatch > pairwatch.csv
// 5 warm-ups and 40 repetitions per cell. Rows: per copy k the first and last word's landing
// (`first`, `last`, us after the gate kernel's end stamp), and the events h2d_end, d2h_end and stop
// (us after the start event); p10, median, p90 over the repetitions. Both directions' data are
// verified after every cell; a watcher that waits more than 20 ms for a word stops the program.
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

constexpr std::size_t kBurst = 1 << 20;  // bytes each way
constexpr std::size_t kMaxCopies = 64;   // 16 KiB copies
constexpr int kWarm = 5;
constexpr int kReps = 40;
constexpr unsigned long long kHoldNs = 1'000'000;    // longer than every call of a cell
constexpr unsigned long long kGiveUpNs = 20'000'000;  // a word that never lands

__device__ __forceinline__ unsigned long long now_ns() {
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}

// The gate: spins, then stamps its end.
__global__ void gate_kernel(unsigned long long ns, unsigned long long* end_stamp) {
    const unsigned long long t0 = now_ns();
    while (now_ns() - t0 < ns) {
    }
    *end_stamp = now_ns();
}

// Per copy k: waits for its first, then its last word to hold this repetition's markers and
// stamps each. Volatile loads go to the L2, where the copy engine's writes land.
__global__ void watch_kernel(const std::uint32_t* dst, std::size_t words_per_copy, std::size_t copies,
                             const std::uint32_t* markers, unsigned long long* stamps, int* gave_up) {
    const unsigned long long t0 = now_ns();
    for (std::size_t k = 0; k < copies; ++k) {
        for (int end = 0; end < 2; ++end) {
            const volatile std::uint32_t* w = dst + k * words_per_copy + (end == 0 ? 0 : words_per_copy - 1);
            const std::uint32_t want = markers[2 * k + end];
            while (*w != want) {
                if (now_ns() - t0 > kGiveUpNs) {
                    *gave_up = 1;
                    return;
                }
            }
            stamps[2 * k + end] = now_ns();
        }
    }
}

__device__ __host__ inline unsigned char pattern(std::size_t i, std::uint32_t seed) {
    return static_cast<unsigned char>((static_cast<std::uint32_t>(i) * 2654435761u ^ seed) >> 7);
}

__global__ void fill_kernel(unsigned char* p, std::size_t n, std::uint32_t seed) {
    for (std::size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += std::size_t{gridDim.x} * blockDim.x) p[i] = pattern(i, seed);
}

// A marker no earlier repetition of any cell wrote at that word, and never the pattern's.
std::uint32_t marker(std::uint32_t cell, int rep, std::size_t k, int end) {
    return 0x80000000u | (cell << 20) | (static_cast<std::uint32_t>(rep) << 8) | (static_cast<std::uint32_t>(k) << 1) |
           static_cast<std::uint32_t>(end);
}

struct Stats {
    double p10, median, p90;
};

Stats stats(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    const auto at = [&](double q) { return v[static_cast<std::size_t>(q * static_cast<double>(v.size() - 1) + 0.5)]; };
    return {at(0.1), at(0.5), at(0.9)};
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
    std::uint32_t* d_markers = nullptr;
    unsigned long long* d_stamps = nullptr;  // [0]: the gate's end; then 2 per copy
    int* d_gave_up = nullptr;
    CHECK(cudaMalloc(&d_markers, 2 * kMaxCopies * sizeof(std::uint32_t)));
    CHECK(cudaMalloc(&d_stamps, (1 + 2 * kMaxCopies) * sizeof(unsigned long long)));
    CHECK(cudaMalloc(&d_gave_up, sizeof(int)));
    CHECK(cudaMemset(d_gave_up, 0, sizeof(int)));
    cudaStream_t s1, s2, s3;
    CHECK(cudaStreamCreateWithFlags(&s1, cudaStreamNonBlocking));
    CHECK(cudaStreamCreateWithFlags(&s2, cudaStreamNonBlocking));
    CHECK(cudaStreamCreateWithFlags(&s3, cudaStreamNonBlocking));
    cudaEvent_t start, stop, end_up, end_down;
    CHECK(cudaEventCreate(&start));
    CHECK(cudaEventCreate(&stop));
    CHECK(cudaEventCreate(&end_up));
    CHECK(cudaEventCreate(&end_down));
    // Load every kernel before the first watcher runs: a kernel loaded lazily while the watcher
    // spins would wait for it.
    gate_kernel<<<1, 1>>>(0, d_stamps);
    watch_kernel<<<1, 1>>>(reinterpret_cast<const std::uint32_t*>(d_dst), 1, 0, d_markers, d_stamps + 1, d_gave_up);
    CHECK(cudaGetLastError());
    CHECK(cudaDeviceSynchronize());
    std::printf("bytes,mode,what,k,p10_us,median_us,p90_us\n");
    std::uint32_t seed = 1, cell = 0;
    std::vector<std::uint32_t> markers(2 * kMaxCopies);
    std::vector<unsigned long long> stamps(1 + 2 * kMaxCopies);
    for (const std::size_t bytes : {std::size_t{16} << 10, std::size_t{64} << 10, std::size_t{256} << 10}) {
        const std::size_t copies = kBurst / bytes;
        const std::size_t words = bytes / sizeof(std::uint32_t);
        for (const char* mode : {"pair", "h2d"}) {
            const bool do_down = std::strcmp(mode, "pair") == 0;
            ++seed;
            ++cell;
            for (std::size_t i = 0; i < kBurst; ++i) h_src[i] = pattern(i, seed);
            for (std::size_t off = 0; off < kBurst; off += 64) _mm_clflush(h_src + off);
            _mm_mfence();
            fill_kernel<<<264, 256>>>(d_src, kBurst, seed + 1000);
            CHECK(cudaGetLastError());
            CHECK(cudaMemset(d_dst, 0, kBurst));
            CHECK(cudaDeviceSynchronize());
            std::vector<std::vector<double>> first(copies), last(copies);
            std::vector<double> t_stop, t_end_up, t_end_down;
            int rep = 0;
            for (; rep < kWarm + kReps; ++rep) {
                auto* words_src = reinterpret_cast<std::uint32_t*>(h_src);
                for (std::size_t k = 0; k < copies; ++k) {
                    for (int end = 0; end < 2; ++end) {
                        markers[2 * k + end] = marker(cell, rep, k, end);
                        words_src[k * words + (end == 0 ? 0 : words - 1)] = markers[2 * k + end];
                    }
                }
                CHECK(cudaMemcpy(d_markers, markers.data(), 2 * copies * sizeof(std::uint32_t), cudaMemcpyHostToDevice));
                watch_kernel<<<1, 1, 0, s3>>>(reinterpret_cast<const std::uint32_t*>(d_dst), words, copies, d_markers,
                                              d_stamps + 1, d_gave_up);
                CHECK(cudaGetLastError());
                gate_kernel<<<1, 1, 0, s1>>>(kHoldNs, d_stamps);
                CHECK(cudaGetLastError());
                CHECK(cudaEventRecord(start, s1));
                CHECK(cudaStreamWaitEvent(s2, start, 0));
                for (std::size_t k = 0; k < copies; ++k) {
                    CHECK(cudaMemcpyAsync(d_dst + k * bytes, h_src + k * bytes, bytes, cudaMemcpyHostToDevice, s1));
                }
                for (std::size_t k = 0; do_down && k < copies; ++k) {
                    CHECK(cudaMemcpyAsync(h_dst + k * bytes, d_src + k * bytes, bytes, cudaMemcpyDeviceToHost, s2));
                }
                CHECK(cudaEventRecord(end_up, s1));
                CHECK(cudaEventRecord(end_down, s2));
                CHECK(cudaStreamWaitEvent(s1, end_down, 0));
                CHECK(cudaEventRecord(stop, s1));
                CHECK(cudaEventSynchronize(stop));
                CHECK(cudaStreamSynchronize(s3));
                int gave_up = 0;
                CHECK(cudaMemcpy(&gave_up, d_gave_up, sizeof(int), cudaMemcpyDeviceToHost));
                if (gave_up) {
                    std::fprintf(stderr, "watcher gave up: %zu B copies, %s, repetition %d\n", bytes, mode, rep);
                    return 1;
                }
                if (rep < kWarm) continue;
                CHECK(cudaMemcpy(stamps.data(), d_stamps, (1 + 2 * copies) * sizeof(unsigned long long), cudaMemcpyDeviceToHost));
                for (std::size_t k = 0; k < copies; ++k) {
                    first[k].push_back(static_cast<double>(static_cast<long long>(stamps[1 + 2 * k] - stamps[0])) / 1000.0);
                    last[k].push_back(static_cast<double>(static_cast<long long>(stamps[2 + 2 * k] - stamps[0])) / 1000.0);
                }
                float ms = 0;
                CHECK(cudaEventElapsedTime(&ms, start, stop));
                t_stop.push_back(ms * 1000.0);
                CHECK(cudaEventElapsedTime(&ms, start, end_up));
                t_end_up.push_back(ms * 1000.0);
                CHECK(cudaEventElapsedTime(&ms, start, end_down));
                t_end_down.push_back(ms * 1000.0);
            }
            // The data: the pattern, but for the last repetition's markers.
            CHECK(cudaMemcpy(back, d_dst, kBurst, cudaMemcpyDeviceToHost));
            const auto* back_words = reinterpret_cast<const std::uint32_t*>(back);
            for (std::size_t i = 0; i < kBurst; ++i) {
                const std::size_t w = i / sizeof(std::uint32_t), in = w % words;
                if (in == 0 || in == words - 1) continue;
                if (back[i] != pattern(i, seed)) {
                    std::fprintf(stderr, "verification failed: into the GPU, %zu B copies, %s, byte %zu\n", bytes, mode, i);
                    return 1;
                }
            }
            for (std::size_t k = 0; k < copies; ++k) {
                if (back_words[k * words] != marker(cell, rep - 1, k, 0) || back_words[k * words + words - 1] != marker(cell, rep - 1, k, 1)) {
                    std::fprintf(stderr, "verification failed: into the GPU, %zu B copies, %s, markers of copy %zu\n", bytes, mode, k);
                    return 1;
                }
            }
            for (std::size_t i = 0; do_down && i < kBurst; ++i) {
                if (h_dst[i] != pattern(i, seed + 1000)) {
                    std::fprintf(stderr, "verification failed: out of the GPU, %zu B copies, %s, byte %zu\n", bytes, mode, i);
                    return 1;
                }
            }
            const auto line = [&](const char* what, std::size_t k, const std::vector<double>& v) {
                const Stats s = stats(v);
                std::printf("%zu,%s,%s,%zu,%.3f,%.3f,%.3f\n", bytes, mode, what, k, s.p10, s.median, s.p90);
            };
            for (std::size_t k = 0; k < copies; ++k) {
                line("first", k, first[k]);
                line("last", k, last[k]);
            }
            line("h2d_end", copies - 1, t_end_up);
            if (do_down) line("d2h_end", copies - 1, t_end_down);
            line("stop", copies - 1, t_stop);
            std::fflush(stdout);
        }
    }
    CHECK(cudaEventDestroy(start));
    CHECK(cudaEventDestroy(stop));
    CHECK(cudaEventDestroy(end_up));
    CHECK(cudaEventDestroy(end_down));
    CHECK(cudaStreamDestroy(s1));
    CHECK(cudaStreamDestroy(s2));
    CHECK(cudaStreamDestroy(s3));
    CHECK(cudaFree(d_markers));
    CHECK(cudaFree(d_stamps));
    CHECK(cudaFree(d_gave_up));
    CHECK(cudaFree(d_dst));
    CHECK(cudaFree(d_src));
    CHECK(cudaFreeHost(h_src));
    CHECK(cudaFreeHost(h_dst));
    CHECK(cudaFreeHost(back));
    return 0;
}
