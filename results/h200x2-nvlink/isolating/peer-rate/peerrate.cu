// Does a peer copy over NVLink speed up as it goes? (2-GPU machines, peer access on.)
// A straight line fits one-way peer copies of 6-48 MiB at 390.9 GB/s a further MiB
// (../peer-step), but from 16 to 256 MiB the main plan's leases give 397 GB/s: a 256 MiB copy ends
// 9 us before that line. Either each byte gets cheaper later in a long copy (the links or clocks
// waking up, a ramp) or something costs a long copy less per byte (its size, not its age).
// GPU 0 -> GPU 1 on a stream of GPU 0, timed by events on GPU 0:
//   chunks      kChunks copies of kChunk bytes back to back on one stream, an event after each,
//               after the GPUs were idle for kIdleMs: each chunk's time by its position;
//   chunks-busy the same, right behind a copy of kChunks x kChunk bytes on the same stream (the
//               links already busy when the first chunk starts);
//   whole       one copy of kChunks x kChunk bytes, and copies of 8, 16, 32, 64, 128 MiB, each
//               after kIdleMs idle: the size line.
// 3 warm-ups and 20 timed repetitions; medians and p10/p90; data verified (nonzero patterns,
// compared on the host); every CUDA call checked.
//
// Build: nvcc -O3 -arch=sm_90 peerrate.cu -o peerrate
// Run:   ./peerrate > peerrate.csv
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
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
constexpr int kReps = 20;
constexpr int kChunks = 32;
constexpr std::size_t kChunk = std::size_t{8} << 20;
constexpr int kIdleMs = 2;

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

bool same(const unsigned char* a, int dev_a, const unsigned char* b, int dev_b, std::size_t n) {
    std::vector<unsigned char> ha(n), hb(n);
    CHECK(cudaSetDevice(dev_a));
    CHECK(cudaMemcpy(ha.data(), a, n, cudaMemcpyDeviceToHost));
    CHECK(cudaSetDevice(dev_b));
    CHECK(cudaMemcpy(hb.data(), b, n, cudaMemcpyDeviceToHost));
    return std::memcmp(ha.data(), hb.data(), n) == 0;
}

void idle() {
    for (int d : {1, 0}) {
        CHECK(cudaSetDevice(d));
        CHECK(cudaDeviceSynchronize());
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(kIdleMs));
}

}  // namespace

int main() {
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
    const std::size_t total = kChunk * kChunks;
    unsigned char *src = nullptr, *dst = nullptr, *pre_dst = nullptr;
    CHECK(cudaSetDevice(1));
    CHECK(cudaMalloc(&dst, total));
    CHECK(cudaMalloc(&pre_dst, total));
    CHECK(cudaSetDevice(0));
    CHECK(cudaMalloc(&src, total));
    {
        std::vector<unsigned char> h(total);
        for (std::size_t i = 0; i < total; ++i) h[i] = static_cast<unsigned char>((i * 131u + 7u) % 251u + 1u);
        CHECK(cudaMemcpy(src, h.data(), total, cudaMemcpyHostToDevice));
    }
    cudaStream_t s;
    CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    std::vector<cudaEvent_t> ev(kChunks + 2);
    for (auto& e : ev) CHECK(cudaEventCreate(&e));

    std::printf("case,index,bytes,median_us,p10_us,p90_us,gbps,reps\n");
    const auto row = [](const char* c, int index, std::size_t bytes, const std::vector<double>& v) {
        const double m = quantile(v, 0.5);
        std::printf("%s,%d,%zu,%.3f,%.3f,%.3f,%.2f,%zu\n", c, index, bytes, m, quantile(v, 0.1), quantile(v, 0.9),
                    static_cast<double>(bytes) / (m * 1e3), v.size());
    };
    for (const bool busy : {false, true}) {
        std::vector<std::vector<double>> t(kChunks);
        std::vector<double> sum;
        for (int r = 0; r < kWarmup + kReps; ++r) {
            idle();
            if (busy) CHECK(cudaMemcpyPeerAsync(pre_dst, 1, src, 0, total, s));
            CHECK(cudaEventRecord(ev[0], s));
            for (int k = 0; k < kChunks; ++k) {
                CHECK(cudaMemcpyPeerAsync(dst + k * kChunk, 1, src + k * kChunk, 0, kChunk, s));
                CHECK(cudaEventRecord(ev[k + 1], s));
            }
            CHECK(cudaEventSynchronize(ev[kChunks]));
            if (r < kWarmup) continue;
            for (int k = 0; k < kChunks; ++k) t[k].push_back(elapsed_us(ev[k], ev[k + 1]));
            sum.push_back(elapsed_us(ev[0], ev[kChunks]));
        }
        if (!same(src, 0, dst, 1, total)) {
            std::fprintf(stderr, "verification failed: chunks\n");
            return 1;
        }
        CHECK(cudaSetDevice(1));
        CHECK(cudaMemset(dst, 0, total));
        CHECK(cudaDeviceSynchronize());
        CHECK(cudaSetDevice(0));
        const char* c = busy ? "chunks-busy" : "chunks";
        for (int k = 0; k < kChunks; ++k) row(c, k, kChunk, t[k]);
        row(busy ? "chunks-busy-sum" : "chunks-sum", kChunks, total, sum);
        std::fflush(stdout);
    }
    for (const std::size_t n : {std::size_t{8} << 20, std::size_t{16} << 20, std::size_t{32} << 20, std::size_t{64} << 20,
                                std::size_t{128} << 20, total}) {
        std::vector<double> t;
        for (int r = 0; r < kWarmup + kReps; ++r) {
            idle();
            CHECK(cudaEventRecord(ev[0], s));
            CHECK(cudaMemcpyPeerAsync(dst, 1, src, 0, n, s));
            CHECK(cudaEventRecord(ev[1], s));
            CHECK(cudaEventSynchronize(ev[1]));
            if (r >= kWarmup) t.push_back(elapsed_us(ev[0], ev[1]));
        }
        if (!same(src, 0, dst, 1, n)) {
            std::fprintf(stderr, "verification failed: whole %zu\n", n);
            return 1;
        }
        CHECK(cudaSetDevice(1));
        CHECK(cudaMemset(dst, 0, total));
        CHECK(cudaDeviceSynchronize());
        CHECK(cudaSetDevice(0));
        row("whole", 0, n, t);
        std::fflush(stdout);
    }
    return 0;
}
