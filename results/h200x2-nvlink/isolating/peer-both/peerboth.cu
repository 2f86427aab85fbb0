// What does a peer copy over NVLink lose when the other GPU copies to it at the same time?
// (The 2xH200 main plan's peer rows both ways, peer access on: the model 7.9 % fast at 16 MiB,
// 1.6 % at 1 MiB, 2.4 % at 256 MiB, where one way it is 1-4 % fast.) GPU 0 and GPU 1, peer access
// enabled both ways. For each size (1, 4, 16, 64, 256 MiB): one way 0 -> 1 and 1 -> 0 alone, each
// timed by events on its source GPU around cudaMemcpyPeerAsync on a stream of that GPU; and both
// ways as dmaprobe issues them (start event on GPU 0; GPU 1's stream waits for it and copies
// 1 -> 0; GPU 0 copies 0 -> 1), each direction timed by events on its own GPU: GPU 0 from the start
// event to the end of its copy, GPU 1 from an event recorded after its wait to the end of its copy;
// and dmaprobe's row, the start event to a stop event on GPU 0 behind a wait for GPU 1's copy.
// 3 warm-ups and 30 timed repetitions a cell, medians and p10/p90; data verified per cell (nonzero
// patterns, compared on the host); every CUDA call checked.
//
// The CPU's time in each call of the both-ways sequence (dmaprobe's order: the start event on
// GPU 0, cudaSetDevice(1), GPU 1's wait and copy and its event, cudaSetDevice(0), GPU 0's copy,
// its wait for GPU 1's event, the stop event) goes to stderr: median, p10, p90 a call.
//
// Build: nvcc -O3 -arch=sm_90 peerboth.cu -o peerboth
// Run:   ./peerboth > peerboth.csv 2> calls.csv
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <string>
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

constexpr int kWarmup = 3;
constexpr int kReps = 30;

float elapsed_us(cudaEvent_t a, cudaEvent_t b) {
    float ms = 0;
    CHECK(cudaEventElapsedTime(&ms, a, b));
    return ms * 1000.0f;
}

double quantile(std::vector<double> v, double q) {
    std::sort(v.begin(), v.end());
    return v[static_cast<std::size_t>(q * static_cast<double>(v.size() - 1) + 0.5)];
}

void fill(unsigned char* d, std::size_t n, unsigned seed, int dev) {
    std::vector<unsigned char> h(n);
    for (std::size_t i = 0; i < n; ++i) h[i] = static_cast<unsigned char>((i * 131u + seed * 17u + 7u) % 251u + 1u);
    CHECK(cudaSetDevice(dev));
    CHECK(cudaMemcpy(d, h.data(), n, cudaMemcpyHostToDevice));
}

bool same(const unsigned char* a, int dev_a, const unsigned char* b, int dev_b, std::size_t n) {
    std::vector<unsigned char> ha(n), hb(n);
    CHECK(cudaSetDevice(dev_a));
    CHECK(cudaMemcpy(ha.data(), a, n, cudaMemcpyDeviceToHost));
    CHECK(cudaSetDevice(dev_b));
    CHECK(cudaMemcpy(hb.data(), b, n, cudaMemcpyDeviceToHost));
    return std::memcmp(ha.data(), hb.data(), n) == 0;
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
    const std::size_t max = std::size_t{256} << 20;
    unsigned char *src0 = nullptr, *dst0 = nullptr, *src1 = nullptr, *dst1 = nullptr;
    cudaStream_t s0, s1;
    cudaEvent_t start0, end0, stop0, start1, end1;
    CHECK(cudaSetDevice(0));
    CHECK(cudaMalloc(&src0, max));
    CHECK(cudaMalloc(&dst0, max));
    CHECK(cudaStreamCreateWithFlags(&s0, cudaStreamNonBlocking));
    for (cudaEvent_t* e : {&start0, &end0, &stop0}) CHECK(cudaEventCreate(e));
    CHECK(cudaSetDevice(1));
    CHECK(cudaMalloc(&src1, max));
    CHECK(cudaMalloc(&dst1, max));
    CHECK(cudaStreamCreateWithFlags(&s1, cudaStreamNonBlocking));
    for (cudaEvent_t* e : {&start1, &end1}) CHECK(cudaEventCreate(e));
    fill(src0, max, 1, 0);
    fill(src1, max, 2, 1);
    std::map<std::string, std::vector<double>> calls;
    std::printf("case,bytes,gpu0_median_us,gpu0_p10_us,gpu0_p90_us,gpu1_median_us,gpu1_p10_us,gpu1_p90_us,row_median_us\n");
    for (const std::size_t n : {std::size_t{1} << 20, std::size_t{4} << 20, std::size_t{16} << 20, std::size_t{64} << 20, max}) {
        for (const char* which : {"0to1", "1to0", "both"}) {
            const bool both = std::strcmp(which, "both") == 0;
            const bool from0 = both || std::strcmp(which, "0to1") == 0;
            const bool from1 = both || std::strcmp(which, "1to0") == 0;
            std::vector<double> t0, t1, row;
            for (int r = 0; r < kWarmup + kReps; ++r) {
                CHECK(cudaSetDevice(1));
                CHECK(cudaDeviceSynchronize());
                CHECK(cudaSetDevice(0));
                CHECK(cudaDeviceSynchronize());
                const bool keep = both && r >= kWarmup;
                const auto timed = [&](const char* what, auto&& f) {
                    const auto t = std::chrono::steady_clock::now();
                    f();
                    if (keep) calls[what].push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t).count());
                };
                timed("event_record", [&] { CHECK(cudaEventRecord(start0, s0)); });
                if (from1) {
                    timed("set_device", [&] { CHECK(cudaSetDevice(1)); });
                    if (both) timed("stream_wait_event_other_gpu", [&] { CHECK(cudaStreamWaitEvent(s1, start0, 0)); });
                    timed("event_record", [&] { CHECK(cudaEventRecord(start1, s1)); });
                    timed("memcpy_peer_async", [&] { CHECK(cudaMemcpyPeerAsync(dst0, 0, src1, 1, n, s1)); });
                    timed("event_record", [&] { CHECK(cudaEventRecord(end1, s1)); });
                    timed("set_device", [&] { CHECK(cudaSetDevice(0)); });
                }
                if (from0) timed("memcpy_peer_async", [&] { CHECK(cudaMemcpyPeerAsync(dst1, 1, src0, 0, n, s0)); });
                timed("event_record", [&] { CHECK(cudaEventRecord(end0, s0)); });
                if (from1) timed("stream_wait_event_other_gpu", [&] { CHECK(cudaStreamWaitEvent(s0, end1, 0)); });
                timed("event_record", [&] { CHECK(cudaEventRecord(stop0, s0)); });
                CHECK(cudaEventSynchronize(stop0));
                CHECK(cudaSetDevice(1));
                CHECK(cudaDeviceSynchronize());
                CHECK(cudaSetDevice(0));
                if (r < kWarmup) continue;
                if (from0) t0.push_back(elapsed_us(start0, end0));
                if (from1) t1.push_back(elapsed_us(start1, end1));
                row.push_back(elapsed_us(start0, stop0));
            }
            if (from0 && !same(src0, 0, dst1, 1, n)) {
                std::fprintf(stderr, "verification failed: 0 -> 1, %zu bytes\n", n);
                return 1;
            }
            if (from1 && !same(src1, 1, dst0, 0, n)) {
                std::fprintf(stderr, "verification failed: 1 -> 0, %zu bytes\n", n);
                return 1;
            }
            const auto q = [](const std::vector<double>& v, double p) { return v.empty() ? 0.0 : quantile(v, p); };
            std::printf("%s,%zu,%.3f,%.3f,%.3f,%.3f,%.3f,%.3f,%.3f\n", which, n, q(t0, 0.5), q(t0, 0.1), q(t0, 0.9), q(t1, 0.5), q(t1, 0.1),
                        q(t1, 0.9), q(row, 0.5));
            std::fflush(stdout);
        }
    }
    std::fprintf(stderr, "call,median_us,p10_us,p90_us,n\n");
    for (auto& [what, v] : calls) {
        std::fprintf(stderr, "%s,%.4f,%.4f,%.4f,%zu\n", what.c_str(), quantile(v, 0.5), quantile(v, 0.1), quantile(v, 0.9), v.size());
    }
    return 0;
}
