// Where does a chain of copies out of the GPU lose its time beside copies into it? (chainpair: on
// the one-GPU H200 a chain of 4 KiB copies out of the GPU costs 1.61 us a copy alone and 1.26-1.68
// more beside chains of 4-64 KiB copies into the GPU; on the 2xH200 0.26-0.29 more.) Events time
// the chain's copies from outside; here the CPU also watches their data land. Each copy's source
// holds a marker in the last 8 bytes of every 4 KiB, stamped anew each repetition by a one-thread
// kernel, and the copies go to distinct parts of a pinned destination the CPU never writes; once
// the gate opens, the CPU spins on the markers in order and stamps each as it appears (a posted
// write is in host memory, and coherent, when the CPU can read it).
//
// On GPU 0, behind a spin kernel on stream a that holds everything until every call is made: 64
// copies out of the GPU of S bytes (4 or 64 KiB) on stream a, an event after the first and after
// the last; beside it, on stream b (which waits for an event recorded behind the gate): nothing,
// a chain of copies into the GPU of T bytes (4 or 64 KiB; 16 MiB of them, at most 512), or one
// 64 MiB copy into the GPU. Per repetition, each a median over the chain's copies:
//   event_us   the events' interval over 63: a copy's share of the chain, as chainpair has it
//   land_us    from one copy's last marker to the next one's: the same from the data's side
//   span_us    a 64 KiB copy's first marker to its last: its data's own time in host memory
//   gap_us     one copy's last marker to the next one's first: what lies between two copies
// If the data land at the pace the events give and the gaps grow beside the other direction, the
// engine starts each copy late; if a copy's span grows, its writes are slow.
// 3 warm-ups, then ITER repetitions of every cell in turn (default 30); the markers checked every
// repetition and all the chain's data at the end.
//
// Output (stdout, CSV): size,beside,reps,event_us,land_us,land_p10_us,land_p90_us,span_us,gap_us
// (medians over the repetitions)
//
// With `mid` as the second argument (chainland ITER mid): do the reads of copies into the GPU of
// 64 KiB to 1 MiB (chainpair: a chain out of the GPU costs +1.1..1.4 us a copy beside copies of
// 256 KiB, where the model gives +0.2..0.4) make every copy of the chain wait a little, or some of
// them a lot? The cells: the chain of 4 or 64 KiB copies out of the GPU beside nothing, chains into
// the GPU of T = 64, 128, 256, 512 KiB and 1 MiB (32 MiB of them, at most 512) and the long copy;
// and each of those chains alone (size 0). Every gap between two copies of every repetition is
// kept, so the output gives their spread, and an event after the neighbour's 2nd and 10th copies
// times eight of its copies while the chain runs:
// size,beside,reps,event_us,land_us,gap_p10_us,gap_p25_us,gap_us,gap_p75_us,gap_p90_us,other_us
// (event_us and land_us medians over the repetitions; the gaps' quantiles over all gaps of all
// repetitions; other_us the neighbour's time a copy over those eight, median over the repetitions)
// Build: nvcc -O3 -arch=sm_90 chainland.cu -o chainland   (CUDA toolkit only)
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
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

constexpr int kWarmup = 3;
constexpr int kChain = 64;
constexpr std::size_t kKiB = 1024;
constexpr std::size_t kChunk = 4 * kKiB;  // a marker at the end of every 4 KiB
constexpr std::size_t kMaxSize = 64 * kKiB;
constexpr std::size_t kLong = 64 << 20;
constexpr std::size_t kBesideBytes = 16 << 20;
constexpr int kMaxBeside = 512;
constexpr long long kGateTimeoutNs = 5000000000LL;
constexpr double kSpinLimitUs = 2e6;

using Clock = std::chrono::steady_clock;

double us_since(Clock::time_point t0) { return std::chrono::duration<double, std::micro>(Clock::now() - t0).count(); }

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

__device__ __host__ std::uint64_t marker(std::uint32_t stamp, std::uint32_t k) {
    return 0xA5A5000000000000ull | (static_cast<std::uint64_t>(stamp) << 20) | static_cast<std::uint64_t>(k + 1);
}

// The last 8 bytes of every 4 KiB chunk of the source: this repetition's marker.
__global__ void stamp_markers(unsigned char* src, std::size_t chunks, std::uint32_t stamp) {
    for (std::size_t k = 0; k < chunks; ++k) {
        *reinterpret_cast<std::uint64_t*>(src + (k + 1) * kChunk - 8) = marker(stamp, static_cast<std::uint32_t>(k));
    }
}

double quantile(std::vector<double> v, double q) {
    if (v.empty()) return 0.0;
    std::sort(v.begin(), v.end());
    return v[static_cast<std::size_t>(q * static_cast<double>(v.size() - 1) + 0.5)];
}

struct Cell {
    std::size_t size;  // the chain's copies out of the GPU
    std::string beside;
    std::size_t other;  // chain: its copies' size; long: the copy's
    std::vector<double> event, land, span, gap;
    std::vector<double> gaps_all, other_copy;  // mid: every gap; the neighbour's time a copy
};

}  // namespace

int main(int argc, char** argv) {
    const int iterations = argc > 1 ? std::atoi(argv[1]) : 30;
    const bool mid = argc > 2 && std::string(argv[2]) == "mid";
    if (iterations < 5 || (argc > 2 && !mid)) {
        std::fprintf(stderr, "usage: chainland [ITERATIONS >= 5 [mid]]\n");
        return 2;
    }
    // mid: the neighbour's chain outlasts a chain of 64 KiB copies out of the GPU beside 1 MiB copies.
    const std::size_t beside_bytes = mid ? 2 * kBesideBytes : kBesideBytes;
    constexpr int kOtherFirst = 1, kOtherLast = 9;  // mid: the neighbour's copies timed (indices)
    CHECK(cudaSetDevice(0));
    const std::size_t chain_bytes = kChain * kMaxSize;
    unsigned char *d_src = nullptr, *h_dst = nullptr, *h_big = nullptr, *d_big = nullptr;
    CHECK(cudaMalloc(&d_src, chain_bytes));
    CHECK(cudaMallocHost(&h_dst, chain_bytes));
    CHECK(cudaMallocHost(&h_big, kLong));
    CHECK(cudaMalloc(&d_big, kLong));
    {
        std::vector<unsigned char> pattern(chain_bytes);
        for (std::size_t i = 0; i < chain_bytes; ++i) pattern[i] = static_cast<unsigned char>(i * 29 + 11) | 1;
        CHECK(cudaMemcpy(d_src, pattern.data(), chain_bytes, cudaMemcpyHostToDevice));
    }
    // The destination is written once here, by the GPU (a memset), so that the CPU never holds its
    // lines dirty; the CPU only reads it.
    CHECK(cudaMemset(d_big, 0, kMaxSize));
    for (std::size_t off = 0; off < chain_bytes; off += kMaxSize) {
        CHECK(cudaMemcpy(h_dst + off, d_big, kMaxSize, cudaMemcpyDeviceToHost));
    }
    for (std::size_t i = 0; i < kLong; ++i) h_big[i] = static_cast<unsigned char>(i * 17 + 3) | 1;
    int* flag = nullptr;
    int* flag_dev = nullptr;
    CHECK(cudaHostAlloc(&flag, 2 * sizeof(int), cudaHostAllocMapped));
    CHECK(cudaHostGetDevicePointer(reinterpret_cast<void**>(&flag_dev), flag, 0));
    cudaStream_t a = nullptr, b = nullptr;
    CHECK(cudaStreamCreateWithFlags(&a, cudaStreamNonBlocking));
    CHECK(cudaStreamCreateWithFlags(&b, cudaStreamNonBlocking));
    cudaEvent_t start = nullptr, first = nullptr, last = nullptr, other_end = nullptr, other_a = nullptr, other_b = nullptr;
    CHECK(cudaEventCreate(&other_a));
    CHECK(cudaEventCreate(&other_b));
    CHECK(cudaEventCreate(&start));
    CHECK(cudaEventCreate(&first));
    CHECK(cudaEventCreate(&last));
    CHECK(cudaEventCreate(&other_end));

    std::vector<Cell> cells;
    if (mid) {
        for (const std::size_t size : {std::size_t{0}, 4 * kKiB, 64 * kKiB}) {
            if (size > 0) cells.push_back({size, "none", 0, {}, {}, {}, {}, {}, {}});
            for (const std::size_t t : {64 * kKiB, 128 * kKiB, 256 * kKiB, 512 * kKiB, 1024 * kKiB}) {
                cells.push_back({size, "chain" + std::to_string(t / kKiB) + "K", t, {}, {}, {}, {}, {}, {}});
            }
            if (size > 0) cells.push_back({size, "long", kLong, {}, {}, {}, {}, {}, {}});
        }
    } else {
        for (const std::size_t size : {4 * kKiB, 64 * kKiB}) {
            cells.push_back({size, "none", 0, {}, {}, {}, {}, {}, {}});
            cells.push_back({size, "chain4K", 4 * kKiB, {}, {}, {}, {}, {}, {}});
            cells.push_back({size, "chain64K", 64 * kKiB, {}, {}, {}, {}, {}, {}});
            cells.push_back({size, "long", kLong, {}, {}, {}, {}, {}, {}});
        }
    }
    std::uint32_t stamp = 0;
    std::vector<double> seen(kChain * (kMaxSize / kChunk));
    const auto run = [&](Cell& c, bool keep) {
        const std::size_t per_copy = c.size / kChunk;
        const std::size_t markers = kChain * per_copy;
        ++stamp;
        // Copy k's source is d_src + k * size; its markers are chunks k * per_copy ... (k + 1) * per_copy - 1.
        stamp_markers<<<1, 1, 0, a>>>(d_src, markers, stamp);
        CHECK(cudaGetLastError());
        CHECK(cudaStreamSynchronize(a));
        flag[0] = 0;
        flag[1] = 0;
        __sync_synchronize();
        gate<<<1, 1, 0, a>>>(flag_dev, kGateTimeoutNs);
        CHECK(cudaGetLastError());
        CHECK(cudaEventRecord(start, a));
        CHECK(cudaStreamWaitEvent(b, start, 0));
        // size 0 (mid): the neighbour alone.
        for (int k = 0; k < kChain && c.size > 0; ++k) {
            CHECK(cudaMemcpyAsync(h_dst + k * c.size, d_src + k * c.size, c.size, cudaMemcpyDeviceToHost, a));
            if (k == 0) CHECK(cudaEventRecord(first, a));
        }
        if (c.size == 0) CHECK(cudaEventRecord(first, a));
        CHECK(cudaEventRecord(last, a));
        if (c.beside.rfind("chain", 0) == 0) {
            const int n = std::min<int>(kMaxBeside, static_cast<int>(beside_bytes / c.other));
            for (int k = 0; k < n; ++k) {
                CHECK(cudaMemcpyAsync(d_big, h_big, c.other, cudaMemcpyHostToDevice, b));
                if (mid && k == kOtherFirst) CHECK(cudaEventRecord(other_a, b));
                if (mid && k == kOtherLast) CHECK(cudaEventRecord(other_b, b));
            }
        } else if (c.beside == "long") {
            CHECK(cudaMemcpyAsync(d_big, h_big, kLong, cudaMemcpyHostToDevice, b));
        }
        CHECK(cudaEventRecord(other_end, b));
        __sync_synchronize();
        const Clock::time_point t0 = Clock::now();
        flag[0] = 1;
        for (std::size_t m = 0; m < markers; ++m) {
            const volatile std::uint64_t* p = reinterpret_cast<const volatile std::uint64_t*>(h_dst + (m + 1) * kChunk - 8);
            const std::uint64_t want = marker(stamp, static_cast<std::uint32_t>(m));
            while (*p != want) {
                if (us_since(t0) > kSpinLimitUs) {
                    std::fprintf(stderr, "chainland: marker %zu of %s %zu never landed (gate timed out: %d)\n", m, c.beside.c_str(),
                                 c.size, flag[1]);
                    std::exit(1);
                }
            }
            seen[m] = us_since(t0);
        }
        CHECK(cudaEventSynchronize(last));
        CHECK(cudaEventSynchronize(other_end));
        if (flag[1] != 0) {
            std::fprintf(stderr, "chainland: the gate timed out (%zu %s)\n", c.size, c.beside.c_str());
            std::exit(1);
        }
        if (!keep) return;
        float ms = 0;
        if (mid && c.beside.rfind("chain", 0) == 0) {
            CHECK(cudaEventElapsedTime(&ms, other_a, other_b));
            c.other_copy.push_back(ms * 1000.0 / (kOtherLast - kOtherFirst));
        }
        if (c.size == 0) return;
        CHECK(cudaEventElapsedTime(&ms, first, last));
        c.event.push_back(ms * 1000.0 / (kChain - 1));
        std::vector<double> land, span, gap;
        for (int k = 0; k < kChain; ++k) {
            const double head = seen[k * per_copy], tail = seen[(k + 1) * per_copy - 1];
            if (per_copy > 1) span.push_back(tail - head);
            if (k > 0) {
                land.push_back(tail - seen[k * per_copy - 1]);
                gap.push_back(head - seen[k * per_copy - 1]);
            }
        }
        c.gaps_all.insert(c.gaps_all.end(), gap.begin(), gap.end());
        c.land.push_back(quantile(land, 0.5));
        c.span.push_back(quantile(span, 0.5));
        c.gap.push_back(quantile(gap, 0.5));
    };
    for (int it = 0; it < kWarmup + iterations; ++it) {
        for (Cell& c : cells) run(c, it >= kWarmup);
    }
    // All of the last run's data (64 KiB cells last): every byte but the markers as the source has it.
    CHECK(cudaDeviceSynchronize());
    std::vector<unsigned char> want(chain_bytes);
    CHECK(cudaMemcpy(want.data(), d_src, chain_bytes, cudaMemcpyDeviceToHost));
    if (std::memcmp(want.data(), h_dst, chain_bytes) != 0) {
        std::fprintf(stderr, "chainland: the chain's data differ from its source\n");
        return 1;
    }
    if (mid) {
        std::printf("size,beside,reps,event_us,land_us,gap_p10_us,gap_p25_us,gap_us,gap_p75_us,gap_p90_us,other_us\n");
        for (const Cell& c : cells) {
            const auto& g = c.gaps_all;
            std::printf("%zu,%s,%zu,%.4f,%.4f,%.4f,%.4f,%.4f,%.4f,%.4f,%.4f\n", c.size, c.beside.c_str(),
                        c.size > 0 ? c.event.size() : c.other_copy.size(), quantile(c.event, 0.5), quantile(c.land, 0.5), quantile(g, 0.1),
                        quantile(g, 0.25), quantile(g, 0.5), quantile(g, 0.75), quantile(g, 0.9), quantile(c.other_copy, 0.5));
        }
        return 0;
    }
    std::printf("size,beside,reps,event_us,land_us,land_p10_us,land_p90_us,span_us,gap_us\n");
    for (const Cell& c : cells) {
        std::printf("%zu,%s,%zu,%.4f,%.4f,%.4f,%.4f,%.4f,%.4f\n", c.size, c.beside.c_str(), c.event.size(), quantile(c.event, 0.5),
                    quantile(c.land, 0.5), quantile(c.land, 0.1), quantile(c.land, 0.9), quantile(c.span, 0.5), quantile(c.gap, 0.5));
    }
    return 0;
}
