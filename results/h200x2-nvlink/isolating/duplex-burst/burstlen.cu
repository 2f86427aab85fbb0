// Why is dmaprobe's burst of copies out of the GPU slower a copy than a chain of them? On the
// one-GPU host (the H100's kind) duplex.burst's 256 copies of 4 KiB out of the GPU take 1.92 us a
// copy (64 of 16 KiB: 1.93), where chainpair.cu's chain of 64 takes 1.60 (copy-chains, 32 copies:
// 1.58 / 1.74 on the H100); into the GPU the two agree (2.55 against 2.51). The burst differs from
// the chain in three ways: its length, its stream (it waits for the start event recorded behind the
// gate on the other stream), and the other stream waiting for its end event; and it is timed from
// the start event, not from its first copy's end.
//
// On GPU 0, behind a spin kernel (the gate) that holds everything until every call is made, N copies
// of S bytes one way (S = 4, 16 KiB; N = 16, 64, 256, 512), each to the same destination, in one of
// three layouts:
//   chain     on the gate's stream a: start event, the copies (an event after the first), end event
//             (chainpair.cu's chain)
//   burst     dmaprobe's duplex.burst with one direction left out (gpu_validation's measure_duplex,
//             `gated`): start event on a; stream b waits for it; the copies on b (an event after
//             the first); end event on b; a waits for it; stop event on a
//   nowait    the burst without a's wait for b's end and the stop event
// Per cell: per_copy_us, from the event after the first copy to the end event over N - 1 (the
// chain's pace); total_us, from the start event to the end event (burst: to the stop event,
// dmaprobe's row) over N; first_us, start to the first copy's end. Medians (p10, p90) over
// ITERATIONS repetitions (default 30) after 3 warm-ups, every cell once an iteration, in turn.
// Host buffers are written by the CPU once, before the first iteration; the copies' data are
// checked at the end.
//
// With `knee` as the second argument, where and for what a chain's copies get dearer along it: chains
// (layout chain) of N = 32, 64, 96, 128, 192, 256, 512 copies out of the GPU of 4 B, 4 KiB and 64 KiB,
// inside it of 4 KiB (d2d: an engine, no PCIe) and into it of 4 B; and `pair`: the chain of 4 KiB
// copies out of the GPU on a (N = 64, 256) beside as many more on b, released with it (another
// channel's chain the same way): whether what runs out after some copies is the channel's own.
//
// Usage: burstlen [ITERATIONS [knee]]        Build: nvcc -O3 -arch=sm_90 burstlen.cu -o burstlen
// Output (stdout, CSV): layout,dir,size,copies,per_copy_us,per_copy_p10_us,per_copy_p90_us,total_us,first_us,reps
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <utility>
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
constexpr std::size_t kKiB = 1024;
constexpr std::size_t kMaxSize = 64 * kKiB;
constexpr long long kGateTimeoutNs = 5000000000LL;

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

double quantile(std::vector<double> v, double q) {
    std::sort(v.begin(), v.end());
    return v[static_cast<std::size_t>(q * static_cast<double>(v.size() - 1) + 0.5)];
}

struct Cell {
    std::string layout;
    std::string dir;  // d2h, h2d or d2d
    std::size_t size;
    int copies;
    std::vector<double> per_copy, total, first;
};

}  // namespace

int main(int argc, char** argv) {
    const int iterations = argc > 1 ? std::atoi(argv[1]) : 30;
    const bool knee = argc > 2 && std::string(argv[2]) == "knee";
    if (iterations < 5 || (argc > 2 && !knee) || argc > 3) {
        std::fprintf(stderr, "usage: burstlen [ITERATIONS >= 5 [knee]]\n");
        return 2;
    }
    CHECK(cudaSetDevice(0));
    unsigned char *h_src = nullptr, *h_dst = nullptr, *d_src = nullptr, *d_dst = nullptr;
    unsigned char *h_dst2 = nullptr, *d_inside = nullptr;  // pair: the other chain's destination; d2d's
    CHECK(cudaMallocHost(&h_src, kMaxSize));
    CHECK(cudaMallocHost(&h_dst, kMaxSize));
    CHECK(cudaMallocHost(&h_dst2, kMaxSize));
    CHECK(cudaMalloc(&d_src, kMaxSize));
    CHECK(cudaMalloc(&d_dst, kMaxSize));
    CHECK(cudaMalloc(&d_inside, kMaxSize));
    std::vector<unsigned char> pattern(kMaxSize);
    for (std::size_t i = 0; i < kMaxSize; ++i) {
        h_src[i] = static_cast<unsigned char>(i * 131 + 7) | 1;
        pattern[i] = static_cast<unsigned char>(i * 29 + 11) | 1;
    }
    std::memset(h_dst, 0, kMaxSize);
    CHECK(cudaMemcpy(d_src, pattern.data(), kMaxSize, cudaMemcpyHostToDevice));
    int* flag = nullptr;
    int* flag_dev = nullptr;
    CHECK(cudaHostAlloc(&flag, 2 * sizeof(int), cudaHostAllocMapped));
    CHECK(cudaHostGetDevicePointer(reinterpret_cast<void**>(&flag_dev), flag, 0));
    cudaStream_t a = nullptr, b = nullptr;
    CHECK(cudaStreamCreateWithFlags(&a, cudaStreamNonBlocking));
    CHECK(cudaStreamCreateWithFlags(&b, cudaStreamNonBlocking));
    cudaEvent_t start = nullptr, first = nullptr, end = nullptr, stop = nullptr;
    CHECK(cudaEventCreate(&start));
    CHECK(cudaEventCreate(&first));
    CHECK(cudaEventCreate(&end));
    CHECK(cudaEventCreate(&stop));

    std::vector<Cell> cells;
    if (knee) {
        const std::pair<const char*, std::size_t> ops[] = {
            {"d2h", 4}, {"d2h", 4 * kKiB}, {"d2h", 64 * kKiB}, {"d2d", 4 * kKiB}, {"h2d", 4}};
        for (const auto& [dir, size] : ops) {
            for (const int copies : {32, 64, 96, 128, 192, 256, 512}) cells.push_back({"chain", dir, size, copies, {}, {}, {}});
        }
        for (const int copies : {64, 256}) cells.push_back({"pair", "d2h", 4 * kKiB, copies, {}, {}, {}});
    } else {
        for (const char* layout : {"chain", "burst", "nowait"}) {
            for (const char* dir : {"d2h", "h2d"}) {
                for (const std::size_t size : {4 * kKiB, 16 * kKiB}) {
                    for (const int copies : {16, 64, 256, 512}) cells.push_back({layout, dir, size, copies, {}, {}, {}});
                }
            }
        }
    }
    const auto run = [&](const Cell& c) {
        flag[0] = 0;
        flag[1] = 0;
        __sync_synchronize();
        gate<<<1, 1, 0, a>>>(flag_dev, kGateTimeoutNs);
        CHECK(cudaGetLastError());
        CHECK(cudaEventRecord(start, a));
        const bool on_a = c.layout == "chain" || c.layout == "pair";
        cudaStream_t s = on_a ? a : b;
        if (!on_a || c.layout == "pair") CHECK(cudaStreamWaitEvent(b, start, 0));
        for (int k = 0; k < c.copies; ++k) {
            if (c.dir == "h2d") {
                CHECK(cudaMemcpyAsync(d_dst, h_src, c.size, cudaMemcpyHostToDevice, s));
            } else if (c.dir == "d2d") {
                CHECK(cudaMemcpyAsync(d_inside, d_src, c.size, cudaMemcpyDeviceToDevice, s));
            } else {
                CHECK(cudaMemcpyAsync(h_dst, d_src, c.size, cudaMemcpyDeviceToHost, s));
            }
            if (k == 0) CHECK(cudaEventRecord(first, s));
        }
        CHECK(cudaEventRecord(end, s));
        if (c.layout == "pair") {
            for (int k = 0; k < c.copies; ++k) CHECK(cudaMemcpyAsync(h_dst2, d_src, c.size, cudaMemcpyDeviceToHost, b));
        }
        const bool waits = c.layout == "burst";
        if (waits) {
            CHECK(cudaStreamWaitEvent(a, end, 0));
            CHECK(cudaEventRecord(stop, a));
        }
        __sync_synchronize();
        flag[0] = 1;
        CHECK(cudaEventSynchronize(waits ? stop : end));
        CHECK(cudaStreamSynchronize(a));
        CHECK(cudaStreamSynchronize(b));
        if (flag[1] != 0) {
            std::fprintf(stderr, "burstlen: the gate timed out (%s %s %zu x %d)\n", c.layout.c_str(), c.dir.c_str(),
                         c.size, c.copies);
            std::exit(1);
        }
        float run_ms = 0, total_ms = 0, head_ms = 0;
        CHECK(cudaEventElapsedTime(&run_ms, first, end));
        CHECK(cudaEventElapsedTime(&total_ms, start, waits ? stop : end));
        CHECK(cudaEventElapsedTime(&head_ms, start, first));
        return std::vector<double>{1000.0 * run_ms / (c.copies - 1), 1000.0 * total_ms / c.copies, 1000.0 * head_ms};
    };
    for (int it = 0; it < kWarmup + iterations; ++it) {
        for (Cell& c : cells) {
            const std::vector<double> t = run(c);
            if (it < kWarmup) continue;
            c.per_copy.push_back(t[0]);
            c.total.push_back(t[1]);
            c.first.push_back(t[2]);
        }
    }
    // What the largest copy of each kind reached holds its source.
    std::size_t up = 0, down = 0, inside = 0;
    for (const Cell& c : cells) {
        std::size_t& reach = c.dir == "h2d" ? up : c.dir == "d2d" ? inside : down;
        reach = std::max(reach, c.size);
    }
    std::vector<unsigned char> got(kMaxSize);
    CHECK(cudaMemcpy(got.data(), d_dst, up, cudaMemcpyDeviceToHost));
    if (std::memcmp(got.data(), h_src, up) != 0) {
        std::fprintf(stderr, "burstlen: the copies into the GPU delivered wrong data\n");
        return 1;
    }
    if (std::memcmp(h_dst, pattern.data(), down) != 0) {
        std::fprintf(stderr, "burstlen: the copies out of the GPU delivered wrong data\n");
        return 1;
    }
    if (inside > 0) {
        CHECK(cudaMemcpy(got.data(), d_inside, inside, cudaMemcpyDeviceToHost));
        if (std::memcmp(got.data(), pattern.data(), inside) != 0) {
            std::fprintf(stderr, "burstlen: the copies inside the GPU delivered wrong data\n");
            return 1;
        }
    }
    std::printf("layout,dir,size,copies,per_copy_us,per_copy_p10_us,per_copy_p90_us,total_us,first_us,reps\n");
    for (const Cell& c : cells) {
        std::printf("%s,%s,%zu,%d,%.4f,%.4f,%.4f,%.4f,%.4f,%zu\n", c.layout.c_str(), c.dir.c_str(), c.size,
                    c.copies, quantile(c.per_copy, 0.5), quantile(c.per_copy, 0.1), quantile(c.per_copy, 0.9),
                    quantile(c.total, 0.5), quantile(c.first, 0.5), c.per_copy.size());
    }
    return 0;
}
