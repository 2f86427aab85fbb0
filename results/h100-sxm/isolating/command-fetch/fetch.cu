// Does a small host-to-device copy carried in the command stream take its data with its work?
// results/h100-sxm/isolating/small-copies found a blocking 2 KiB copy to the device costing what
// a 1 KiB one (the front end's) does beyond the call, and copies from 2 to 24 KiB growing at
// 15-22 GB/s a further byte, not the link's rate; but a blocking copy's time beyond its call
// also holds the runtime's synchronisation. This times the GPU's side alone, on an idle stream:
//   `synced`: the copy's stream synchronised (cudaStreamSynchronize) and nothing queued on it
//            since; the start event is recorded on a second, idle stream just before the call,
//            the end event on the copy's stream after it; the interval less the CPU's time in
//            the call (per repetition): what the GPU adds after the call returns;
//   `synced_call`: that CPU time in cudaMemcpyAsync;
//   `idle`:  the same with the start event recorded on the copy's own stream just before the
//            call: the stream is idle on the GPU but has work queued since it was synchronised;
//   `call`:  the CPU time in cudaMemcpyAsync there;
//   `queued`: the same copy issued while a spin kernel holds the stream, timed between an event
//            after the spin and one after the copy: the work was fetched long before, and the
//            channel acquires the kernel's semaphore before the copy (polled: a sawtooth in the
//            call's phase; its minimum over the repetitions is the copy's own cost).
// If the front end reads a copy's data with its work (the mechanism runtime.command_fetch_bandwidth
// models), `synced` grows from 2 to 24 KiB at that rate and a 2 KiB copy costs little more than a
// 1 KiB one, while a 28 KiB copy (read by an engine: a round trip) costs more than 24 KiB. A
// first run with `idle` only (an event queued just before the call) found the call flat in size
// and the copy growing at the link's rate: no copy into the command stream at all.
//
// Build: nvcc -O3 -arch=sm_90 fetch.cu -o fetch      Run: ./fetch > fetch.csv; ./fetch odd > odd.csv
// (`odd`: the synchronised mode alone, into the GPU, at 1-24 KiB + 1-8 B: is 4097 B carried as 4096 B
// is? lease 1baafad9 ran it as a separate odd.cu with the same loop)
// 30 warm-ups and 300 timed repetitions per cell, p10/median/p90 (and min for `queued`); the
// last copy of every cell verified.
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
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
constexpr std::size_t kMax = 64 * kKiB;
constexpr int kWarmup = 30;
constexpr int kReps = 300;
constexpr unsigned long long kHoldNs = 30'000;

__global__ void spin_kernel(unsigned long long ns) {
    unsigned long long t0;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
    for (;;) {
        unsigned long long t;
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
        if (t - t0 >= ns) break;
    }
}

using Clock = std::chrono::steady_clock;

struct Stats {
    double min, p10, median, p90;
};

Stats stats(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    const auto at = [&](double q) { return v[static_cast<std::size_t>(q * static_cast<double>(v.size() - 1) + 0.5)]; };
    return {v.front(), at(0.1), at(0.5), at(0.9)};
}

void fill(unsigned char* p, std::size_t n, unsigned seed) {
    for (std::size_t i = 0; i < n; ++i) p[i] = static_cast<unsigned char>((i * 131u + seed * 7u + 1u) & 0xff);
}

}  // namespace

int main(int argc, char** argv) {
    // `fetch odd`: the synchronised mode alone, into the GPU, at sizes that are not a multiple
    // of 4 B and their neighbours (odd.csv): is 4097 B carried as 4096 B is?
    const bool odd = argc > 1 && std::strcmp(argv[1], "odd") == 0;
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
    const std::vector<std::size_t> sizes =
        odd ? std::vector<std::size_t>{1024, 1025, 1027, 4096, 4097, 4098, 4100, 4104, 8192, 8193, 16384, 16385, 24576, 24577}
            : std::vector<std::size_t>{4, 512, 1 * kKiB, 2 * kKiB, 3 * kKiB, 4 * kKiB, 6 * kKiB, 8 * kKiB, 12 * kKiB,
                                       16 * kKiB, 20 * kKiB, 24 * kKiB, 28 * kKiB, 32 * kKiB, 48 * kKiB, 64 * kKiB};
    std::printf("dir,bytes,what,min_us,p10_us,median_us,p90_us\n");
    unsigned seed = 1;
    for (const int h2d : odd ? std::vector<int>{1} : std::vector<int>{1, 0}) {
        const cudaMemcpyKind kind = h2d ? cudaMemcpyHostToDevice : cudaMemcpyDeviceToHost;
        for (const std::size_t n : sizes) {
            void* dst = h2d ? static_cast<void*>(dev) : static_cast<void*>(back);
            const void* src = h2d ? static_cast<const void*>(host) : static_cast<const void*>(dev);
            ++seed;
            fill(host, n, seed);
            if (!h2d) CHECK(cudaMemcpy(dev, host, n, cudaMemcpyHostToDevice));
            std::vector<double> synced, synced_call, idle, call, queued;
            // The copy between a start event on `start_stream` and an end event on its own stream:
            // the CPU's time in the call, and the interval less it.
            const auto event_timed = [&](bool sync_first, cudaStream_t start_stream, std::vector<double>& gpu,
                                         std::vector<double>& cpu) {
                for (int rep = 0; rep < kWarmup + kReps; ++rep) {
                    if (sync_first) CHECK(cudaStreamSynchronize(s));
                    CHECK(cudaEventRecord(a, start_stream));
                    const auto t0 = Clock::now();
                    CHECK(cudaMemcpyAsync(dst, src, n, kind, s));
                    const auto t1 = Clock::now();
                    CHECK(cudaEventRecord(b, s));
                    CHECK(cudaEventSynchronize(b));
                    float ms = 0;
                    CHECK(cudaEventElapsedTime(&ms, a, b));
                    const double c = std::chrono::duration<double, std::micro>(t1 - t0).count();
                    if (rep >= kWarmup) {
                        cpu.push_back(c);
                        gpu.push_back(ms * 1000.0 - c);
                    }
                }
            };
            event_timed(true, s2, synced, synced_call);
            if (!odd) {
                event_timed(false, s, idle, call);
                for (int rep = 0; rep < kWarmup + kReps; ++rep) {
                    spin_kernel<<<1, 1, 0, s>>>(kHoldNs);
                    CHECK(cudaGetLastError());
                    CHECK(cudaEventRecord(a, s));
                    CHECK(cudaMemcpyAsync(dst, src, n, kind, s));
                    CHECK(cudaEventRecord(b, s));
                    CHECK(cudaEventSynchronize(b));
                    float ms = 0;
                    CHECK(cudaEventElapsedTime(&ms, a, b));
                    if (rep >= kWarmup) queued.push_back(ms * 1000.0);
                }
            }
            if (h2d) CHECK(cudaMemcpy(back, dev, n, cudaMemcpyDeviceToHost));
            if (std::memcmp(back, host, n) != 0) {
                std::fprintf(stderr, "verification failed: %s %zu bytes\n", h2d ? "h2d" : "d2h", n);
                return 1;
            }
            const char* dir = h2d ? "h2d" : "d2h";
            for (const auto& [what, v] : {std::pair<const char*, std::vector<double>*>{"synced", &synced},
                                          {"synced_call", &synced_call}, {"idle", &idle},
                                          {"call", &call}, {"queued", &queued}}) {
                if (v->empty()) continue;
                const Stats st = stats(*v);
                std::printf("%s,%zu,%s,%.4f,%.4f,%.4f,%.4f\n", dir, n, what, st.min, st.p10, st.median, st.p90);
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
