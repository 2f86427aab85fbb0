// What does a peer copy over NVLink cost besides its data, on the GPU? (2-GPU machines, peer
// access on.) A one-way row from a start event is the call (1.91 us of CPU time on the 2xH200,
// ../peer-both/calls.csv) plus the copy's GPU side; 8 MiB copies queued back to back take 27.3 us
// each where their data takes 21.5 at 390.9 GB/s (../peer-rate): about 5.8 us a copy that queueing
// does not hide, where copies into or out of host memory queued on one stream lose 0.6 us.
// Modes (argv[1]):
//   chain   kChain copies of S on one stream of GPU 0, an event between each two, behind a spin
//           kernel so that all are queued first: each copy's time but the first; S = 64 KiB,
//           1 MiB, 8 MiB; kinds: peer (GPU 0 -> GPU 1), d2d (within GPU 0), d2h and h2d (pinned);
//   gated   one copy of S behind a spin kernel: start event (stamped as the spin ends), copy,
//           end event; S = 4 KiB .. 16 MiB; the same kinds;
//   idle    one copy of S on an idle stream: start event, copy, end event, and the CPU's time in
//           the copy's call; S = 4 KiB .. 16 MiB; the same kinds;
//   reps    dmaprobe's both-ways sequence (../peer-both), kReps2 repetitions at 1 and 16 MiB, every
//           repetition's row (start to stop) printed: one machine's spread.
// 3 warm-ups and 30 timed repetitions a cell (reps: 200); medians, p10, p90; data verified per
// cell (nonzero patterns, compared on the host); every CUDA call checked.
//
// Build: nvcc -O3 -arch=sm_90 peerfixed.cu -o peerfixed
// Run:   ./peerfixed chain|gated|idle|reps > MODE.csv
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
constexpr int kReps = 30;
constexpr int kReps2 = 200;
constexpr int kChain = 8;
constexpr double kSpinUs = 400.0;
constexpr std::size_t kMax = std::size_t{64} << 20;  // each buffer: a chain of 8 MiB copies
using Clock = std::chrono::steady_clock;

__device__ unsigned long long globaltimer_ns() {
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}

__global__ void spin(unsigned long long ns) {
    const unsigned long long t0 = globaltimer_ns();
    while (globaltimer_ns() - t0 < ns) {
    }
}

float elapsed_us(cudaEvent_t a, cudaEvent_t b) {
    float ms = 0;
    CHECK(cudaEventElapsedTime(&ms, a, b));
    return ms * 1000.0f;
}

double quantile(std::vector<double> v, double q) {
    if (v.empty()) return 0.0;
    std::sort(v.begin(), v.end());
    return v[static_cast<std::size_t>(q * static_cast<double>(v.size() - 1) + 0.5)];
}

struct Buffers {
    unsigned char* src0 = nullptr;   // GPU 0
    unsigned char* dst0 = nullptr;   // GPU 0 (d2d, and 1 -> 0)
    unsigned char* dst1 = nullptr;   // GPU 1
    unsigned char* src1 = nullptr;   // GPU 1
    unsigned char* host = nullptr;   // pinned
    unsigned char* host_dst = nullptr;
};

void pattern(std::vector<unsigned char>& h, unsigned seed) {
    for (std::size_t i = 0; i < h.size(); ++i) h[i] = static_cast<unsigned char>((i * 131u + seed * 17u + 7u) % 251u + 1u);
}

// Issues one copy of `kind` of n bytes at offset `off` on stream s (GPU 0 current).
void copy(const std::string& kind, const Buffers& b, std::size_t off, std::size_t n, cudaStream_t s) {
    if (kind == "peer") {
        CHECK(cudaMemcpyPeerAsync(b.dst1 + off, 1, b.src0 + off, 0, n, s));
    } else if (kind == "d2d") {
        CHECK(cudaMemcpyAsync(b.dst0 + off, b.src0 + off, n, cudaMemcpyDeviceToDevice, s));
    } else if (kind == "d2h") {
        CHECK(cudaMemcpyAsync(b.host_dst + off, b.src0 + off, n, cudaMemcpyDeviceToHost, s));
    } else {
        CHECK(cudaMemcpyAsync(b.dst0 + off, b.host + off, n, cudaMemcpyHostToDevice, s));
    }
}

// Checks what the last copies of `kind` wrote over [0, n) against the source.
bool verify(const std::string& kind, const Buffers& b, std::size_t n) {
    std::vector<unsigned char> want(n), got(n);
    CHECK(cudaSetDevice(0));
    if (kind == "h2d") {
        std::memcpy(want.data(), b.host, n);
    } else {
        CHECK(cudaMemcpy(want.data(), b.src0, n, cudaMemcpyDeviceToHost));
    }
    if (kind == "peer") {
        CHECK(cudaSetDevice(1));
        CHECK(cudaMemcpy(got.data(), b.dst1, n, cudaMemcpyDeviceToHost));
        CHECK(cudaSetDevice(0));
    } else if (kind == "d2h") {
        std::memcpy(got.data(), b.host_dst, n);
    } else {
        CHECK(cudaMemcpy(got.data(), b.dst0, n, cudaMemcpyDeviceToHost));
    }
    return std::memcmp(want.data(), got.data(), n) == 0;
}

void clear(const Buffers& b) {
    CHECK(cudaSetDevice(1));
    CHECK(cudaMemset(b.dst1, 0, kMax));
    CHECK(cudaDeviceSynchronize());
    CHECK(cudaSetDevice(0));
    CHECK(cudaMemset(b.dst0, 0, kMax));
    std::memset(b.host_dst, 0, kMax);
    CHECK(cudaDeviceSynchronize());
}

}  // namespace

int main(int argc, char** argv) {
    const std::string mode = argc > 1 ? argv[1] : "";
    if (mode != "chain" && mode != "gated" && mode != "idle" && mode != "reps") {
        std::fprintf(stderr, "usage: peerfixed chain|gated|idle|reps\n");
        return 2;
    }
    int count = 0;
    CHECK(cudaGetDeviceCount(&count));
    if (count < 2) {
        std::fprintf(stderr, "needs two GPUs, found %d\n", count);
        return 1;
    }
    for (int a = 0; a < 2; ++a) {
        CHECK(cudaSetDevice(a));
        const cudaError_t e = cudaDeviceEnablePeerAccess(1 - a, 0);
        if (e == cudaErrorPeerAccessAlreadyEnabled) {
            (void)cudaGetLastError();
        } else {
            CHECK(e);
        }
    }
    Buffers b;
    std::vector<unsigned char> h(kMax);
    CHECK(cudaSetDevice(1));
    CHECK(cudaMalloc(&b.dst1, kMax));
    CHECK(cudaMalloc(&b.src1, kMax));
    pattern(h, 2);
    CHECK(cudaMemcpy(b.src1, h.data(), kMax, cudaMemcpyHostToDevice));
    cudaStream_t s1;
    CHECK(cudaStreamCreateWithFlags(&s1, cudaStreamNonBlocking));
    cudaEvent_t start1, end1;
    CHECK(cudaEventCreate(&start1));
    CHECK(cudaEventCreate(&end1));
    CHECK(cudaSetDevice(0));
    CHECK(cudaMalloc(&b.src0, kMax));
    CHECK(cudaMalloc(&b.dst0, kMax));
    CHECK(cudaMallocHost(&b.host, kMax));
    CHECK(cudaMallocHost(&b.host_dst, kMax));
    pattern(h, 1);
    CHECK(cudaMemcpy(b.src0, h.data(), kMax, cudaMemcpyHostToDevice));
    pattern(h, 3);
    std::memcpy(b.host, h.data(), kMax);
    cudaStream_t s;
    CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    std::vector<cudaEvent_t> ev(kChain + 2);
    for (auto& e : ev) CHECK(cudaEventCreate(&e));
    const char* kinds[] = {"peer", "d2d", "d2h", "h2d"};
    const auto spin_ns = static_cast<unsigned long long>(kSpinUs * 1e3);

    if (mode == "chain") {
        std::printf("kind,bytes,per_copy_us,p10_us,p90_us,first_us,reps\n");
        for (const std::size_t n : {std::size_t{64} << 10, std::size_t{1} << 20, std::size_t{8} << 20}) {
            for (const char* k : kinds) {
                clear(b);
                std::vector<double> later, first;
                for (int r = 0; r < kWarmup + kReps; ++r) {
                    CHECK(cudaDeviceSynchronize());
                    spin<<<1, 1, 0, s>>>(spin_ns);
                    CHECK(cudaGetLastError());
                    CHECK(cudaEventRecord(ev[0], s));
                    for (int i = 0; i < kChain; ++i) {
                        copy(k, b, static_cast<std::size_t>(i) * n, n, s);
                        CHECK(cudaEventRecord(ev[i + 1], s));
                    }
                    CHECK(cudaEventSynchronize(ev[kChain]));
                    if (r < kWarmup) continue;
                    first.push_back(elapsed_us(ev[0], ev[1]));
                    for (int i = 1; i < kChain; ++i) later.push_back(elapsed_us(ev[i], ev[i + 1]));
                }
                if (!verify(k, b, n * kChain)) {
                    std::fprintf(stderr, "verification failed: chain %s %zu\n", k, n);
                    return 1;
                }
                std::printf("%s,%zu,%.3f,%.3f,%.3f,%.3f,%zu\n", k, n, quantile(later, 0.5), quantile(later, 0.1), quantile(later, 0.9),
                            quantile(first, 0.5), later.size());
                std::fflush(stdout);
            }
        }
    } else if (mode == "gated" || mode == "idle") {
        const bool gated = mode == "gated";
        std::printf("kind,bytes,median_us,p10_us,p90_us,call_us,reps\n");
        for (std::size_t n = std::size_t{4} << 10; n <= (std::size_t{16} << 20); n *= 4) {
            for (const char* k : kinds) {
                clear(b);
                std::vector<double> t, call;
                for (int r = 0; r < kWarmup + kReps; ++r) {
                    CHECK(cudaDeviceSynchronize());
                    if (gated) {
                        spin<<<1, 1, 0, s>>>(spin_ns);
                        CHECK(cudaGetLastError());
                    }
                    CHECK(cudaEventRecord(ev[0], s));
                    const Clock::time_point c0 = Clock::now();
                    copy(k, b, 0, n, s);
                    const double c = std::chrono::duration<double, std::micro>(Clock::now() - c0).count();
                    CHECK(cudaEventRecord(ev[1], s));
                    CHECK(cudaEventSynchronize(ev[1]));
                    if (r < kWarmup) continue;
                    t.push_back(elapsed_us(ev[0], ev[1]));
                    call.push_back(c);
                }
                if (!verify(k, b, n)) {
                    std::fprintf(stderr, "verification failed: %s %s %zu\n", mode.c_str(), k, n);
                    return 1;
                }
                std::printf("%s,%zu,%.3f,%.3f,%.3f,%.3f,%zu\n", k, n, quantile(t, 0.5), quantile(t, 0.1), quantile(t, 0.9), quantile(call, 0.5),
                            t.size());
                std::fflush(stdout);
            }
        }
    } else {
        // dmaprobe's both-ways sequence, as ../peer-both/peerboth.cu issues it; every row printed.
        std::printf("bytes,rep,row_us,gpu0_us,gpu1_us\n");
        for (const std::size_t n : {std::size_t{1} << 20, std::size_t{16} << 20}) {
            clear(b);
            for (int r = 0; r < kWarmup + kReps2; ++r) {
                CHECK(cudaSetDevice(1));
                CHECK(cudaDeviceSynchronize());
                CHECK(cudaSetDevice(0));
                CHECK(cudaDeviceSynchronize());
                CHECK(cudaEventRecord(ev[0], s));
                CHECK(cudaSetDevice(1));
                CHECK(cudaStreamWaitEvent(s1, ev[0], 0));
                CHECK(cudaEventRecord(start1, s1));
                CHECK(cudaMemcpyPeerAsync(b.dst0, 0, b.src1, 1, n, s1));
                CHECK(cudaEventRecord(end1, s1));
                CHECK(cudaSetDevice(0));
                CHECK(cudaMemcpyPeerAsync(b.dst1, 1, b.src0, 0, n, s));
                CHECK(cudaEventRecord(ev[1], s));
                CHECK(cudaStreamWaitEvent(s, end1, 0));
                CHECK(cudaEventRecord(ev[2], s));
                CHECK(cudaEventSynchronize(ev[2]));
                CHECK(cudaSetDevice(1));
                CHECK(cudaDeviceSynchronize());
                CHECK(cudaSetDevice(0));
                if (r < kWarmup) continue;
                std::printf("%zu,%d,%.3f,%.3f,%.3f\n", n, r - kWarmup, elapsed_us(ev[0], ev[2]), elapsed_us(ev[0], ev[1]),
                            elapsed_us(start1, end1));
            }
            if (!verify("peer", b, n)) {
                std::fprintf(stderr, "verification failed: reps 0 -> 1 %zu\n", n);
                return 1;
            }
            std::vector<unsigned char> want(n), got(n);
            CHECK(cudaSetDevice(1));
            CHECK(cudaMemcpy(want.data(), b.src1, n, cudaMemcpyDeviceToHost));
            CHECK(cudaSetDevice(0));
            CHECK(cudaMemcpy(got.data(), b.dst0, n, cudaMemcpyDeviceToHost));
            if (std::memcmp(want.data(), got.data(), n) != 0) {
                std::fprintf(stderr, "verification failed: reps 1 -> 0 %zu\n", n);
                return 1;
            }
            std::fflush(stdout);
        }
    }
    return 0;
}
