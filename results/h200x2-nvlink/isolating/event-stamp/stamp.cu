// When does the GPU stamp an event recorded on an idle stream? dmaprobe times a peer copy from
// a start event recorded just before the call (no gate), so the row holds whatever lies between
// the event's stamp and the copy's start. The model (HostRuntime::enqueue) stamps such an event
// once its channel has fetched it, as it fetches a copy's work: the interval then holds the
// copy's call and the engine's own start, not the fetch. Without that, it would hold the fetch
// too (dma.launch_latency less dma.queued_launch_latency: 2.3 us in the 2xH200's calibration).
//
// Per case, three ways of timing the same copy:
//   ungated  record A; the copy; record B (dmaprobe's peer rows): B - A, and the CPU time of the
//            record call and of the copy call;
//   gated    a 100 us spin kernel holds the stream, then record A; the copy; record B: the copy's
//            work is fetched while the stream is held, so B - A is the engine's start, the data
//            and the copy's end;
//   late     record A, wait until it is done, then the copy; record B: the copy's own call,
//            fetch and start, the data and its end, plus the wait's wake-up.
// ungated - gated is then what lies between A's stamp and the copy's start beyond a queued
// copy's: the record call's rest and the copy call, and the fetch if A is stamped before it.
//
// Cases: peer copies GPU 0 -> GPU 1 with peer access on (64 KiB, 1 MiB; needs two GPUs) and
// pinned copies on GPU 0 (host to device and device to host, 64 KiB), so that one GPU answers
// the same question for copies through its own channel.
//
// Build: nvcc -O3 -arch=sm_90 stamp.cu -o stamp
// Run:   ./stamp > stamp.csv
// Five warm-ups and 60 timed repetitions per case and way; medians and p10/p90; the copied data
// is verified after the last repetition.
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
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

constexpr std::size_t kKiB = 1024;
constexpr int kWarmup = 5;
constexpr int kReps = 60;
constexpr unsigned long long kHoldNs = 100'000;  // the gate: far longer than three calls

using Clock = std::chrono::steady_clock;

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
        p[i] = (static_cast<std::uint32_t>(i) * 2654435761u) ^ seed;
    }
}

__global__ void check_kernel(const std::uint32_t* p, std::size_t words, std::uint32_t seed, unsigned* bad) {
    for (std::size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < words; i += std::size_t{gridDim.x} * blockDim.x) {
        if (p[i] != ((static_cast<std::uint32_t>(i) * 2654435761u) ^ seed)) atomicAdd(bad, 1u);
    }
}

double us_between(Clock::time_point a, Clock::time_point b) {
    return std::chrono::duration<double, std::micro>(b - a).count();
}

struct Stats {
    double p10, median, p90;
};

Stats stats(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    const auto at = [&](double q) { return v[static_cast<std::size_t>(q * static_cast<double>(v.size() - 1) + 0.5)]; };
    return {at(0.1), at(0.5), at(0.9)};
}

// One copy as the case makes it, on `s` (the source GPU's stream).
struct Copy {
    std::string name;
    std::size_t bytes;
    int device;  // where the stream and the events live
    void* dst;
    int dst_device;  // -1: not a peer copy
    const void* src;
    int src_device;
    cudaMemcpyKind kind;
};

void issue(const Copy& c, cudaStream_t s) {
    if (c.dst_device >= 0) {
        CHECK(cudaMemcpyPeerAsync(c.dst, c.dst_device, c.src, c.src_device, c.bytes, s));
    } else {
        CHECK(cudaMemcpyAsync(c.dst, c.src, c.bytes, c.kind, s));
    }
}

void measure(const Copy& c) {
    CHECK(cudaSetDevice(c.device));
    cudaStream_t s;
    CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    cudaEvent_t a, b;
    CHECK(cudaEventCreate(&a));
    CHECK(cudaEventCreate(&b));
    for (const char* way : {"ungated", "gated", "late"}) {
        std::vector<double> interval, copy_call, record_call;
        for (int rep = 0; rep < kWarmup + kReps; ++rep) {
            CHECK(cudaDeviceSynchronize());
            const std::string w = way;
            if (w == "gated") {
                spin_kernel<<<1, 1, 0, s>>>(kHoldNs);
                CHECK(cudaGetLastError());
            }
            const auto r0 = Clock::now();
            CHECK(cudaEventRecord(a, s));
            const auto r1 = Clock::now();
            if (w == "late") CHECK(cudaEventSynchronize(a));
            const auto c0 = Clock::now();
            issue(c, s);
            const auto c1 = Clock::now();
            CHECK(cudaEventRecord(b, s));
            CHECK(cudaEventSynchronize(b));
            float ms = 0;
            CHECK(cudaEventElapsedTime(&ms, a, b));
            if (rep >= kWarmup) {
                interval.push_back(ms * 1e3);
                copy_call.push_back(us_between(c0, c1));
                record_call.push_back(us_between(r0, r1));
            }
        }
        const Stats i = stats(interval), cc = stats(copy_call), rc = stats(record_call);
        std::printf("%s,%zu,%s,%.3f,%.3f,%.3f,%.3f,%.3f\n", c.name.c_str(), c.bytes, way, i.median, i.p10, i.p90, cc.median,
                    rc.median);
        std::fflush(stdout);
    }
    CHECK(cudaEventDestroy(a));
    CHECK(cudaEventDestroy(b));
    CHECK(cudaStreamDestroy(s));
}

void fill(int dev, void* p, std::size_t bytes, std::uint32_t seed) {
    CHECK(cudaSetDevice(dev));
    fill_kernel<<<132, 256>>>(static_cast<std::uint32_t*>(p), bytes / 4, seed);
    CHECK(cudaGetLastError());
    CHECK(cudaDeviceSynchronize());
}

bool verify_device(int dev, const void* p, std::size_t bytes, std::uint32_t seed) {
    CHECK(cudaSetDevice(dev));
    unsigned* bad = nullptr;
    CHECK(cudaMallocManaged(&bad, sizeof(unsigned)));
    *bad = 0;
    check_kernel<<<132, 256>>>(static_cast<const std::uint32_t*>(p), bytes / 4, seed, bad);
    CHECK(cudaGetLastError());
    CHECK(cudaDeviceSynchronize());
    const bool ok = *bad == 0;
    CHECK(cudaFree(bad));
    return ok;
}

bool verify_host(const void* p, std::size_t bytes, std::uint32_t seed) {
    const auto* w = static_cast<const std::uint32_t*>(p);
    for (std::size_t i = 0; i < bytes / 4; ++i) {
        if (w[i] != ((static_cast<std::uint32_t>(i) * 2654435761u) ^ seed)) return false;
    }
    return true;
}

}  // namespace

int main() {
    int gpus = 0;
    CHECK(cudaGetDeviceCount(&gpus));
    std::printf("case,size_bytes,way,interval_us,interval_p10_us,interval_p90_us,copy_call_us,record_call_us\n");
    bool ok = true;
    const std::size_t small = 64 * kKiB;
    const std::size_t big = 1024 * kKiB;
    // One GPU: pinned copies through GPU 0's own channel.
    CHECK(cudaSetDevice(0));
    void *d0 = nullptr, *h = nullptr;
    CHECK(cudaMalloc(&d0, big));
    CHECK(cudaMallocHost(&h, big));
    fill(0, d0, small, 7);
    measure({"d2h", small, 0, h, -1, d0, 0, cudaMemcpyDeviceToHost});
    ok = verify_host(h, small, 7) && ok;
    for (std::size_t i = 0; i < small / 4; ++i) static_cast<std::uint32_t*>(h)[i] = (static_cast<std::uint32_t>(i) * 2654435761u) ^ 9u;
    measure({"h2d", small, 0, d0, -1, h, 0, cudaMemcpyHostToDevice});
    ok = verify_device(0, d0, small, 9) && ok;
    if (gpus >= 2) {
        int can = 0;
        CHECK(cudaDeviceCanAccessPeer(&can, 0, 1));
        if (can) {
            CHECK(cudaSetDevice(0));
            CHECK(cudaDeviceEnablePeerAccess(1, 0));
            void* d1 = nullptr;
            CHECK(cudaSetDevice(1));
            CHECK(cudaMalloc(&d1, big));
            for (const std::size_t n : {small, big}) {
                fill(0, d0, n, 11 + static_cast<std::uint32_t>(n));
                measure({"peer", n, 0, d1, 1, d0, 0, cudaMemcpyDefault});
                ok = verify_device(1, d1, n, 11 + static_cast<std::uint32_t>(n)) && ok;
            }
            CHECK(cudaSetDevice(1));
            CHECK(cudaFree(d1));
        } else {
            std::fprintf(stderr, "GPU 0 cannot access GPU 1: no peer cases\n");
        }
    } else {
        std::fprintf(stderr, "one GPU: no peer cases\n");
    }
    CHECK(cudaSetDevice(0));
    CHECK(cudaFree(d0));
    CHECK(cudaFreeHost(h));
    if (!ok) {
        std::fprintf(stderr, "verification FAILED\n");
        return 1;
    }
    std::fprintf(stderr, "verified\n");
    return 0;
}
