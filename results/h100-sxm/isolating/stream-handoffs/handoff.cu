// What lies between operations on the GPU's side of a stream: one copy timed from the call, from
// an event recorded just before it on an idle GPU (dmaprobe's peer interval), behind a spin kernel
// (dmaprobe's gated interval), behind another copy, and across two streams (dmaprobe's duplex).
// Each case isolates one handoff; the differences between cases give its cost.
//
// Build: nvcc -O3 -arch=sm_90 handoff.cu -o handoff
// Run:   ./handoff > handoff.csv
//
// Cases, per direction (h2d, d2h; d2d for the two peer-API cases) and size. "spin" is a
// one-thread kernel that holds its stream for kHoldNs by the GPU's clock, so that everything
// after it is queued before it ends; ePre is an event before it, eMid one after it.
//   blocking     host clock around cudaMemcpy
//   call         host clock around cudaMemcpyAsync on an idle GPU (the stream synchronised after)
//   ungated      eA; copy; eB on an idle GPU: elapsed(eA, eB)
//   spin_only    ePre; spin; eB: elapsed(ePre, eB), the baseline of the spin_* cases
//   spin_copy    ePre; spin; copy; eB: elapsed(ePre, eB)
//   gated        ePre; spin; eMid; copy; eB: elapsed(eMid, eB) (value) and elapsed(ePre, eB) (from_pre)
//   spin_small   ePre; spin; 4 B copy (same direction); eB: elapsed(ePre, eB)
//   spin_small_copy ePre; spin; 4 B copy; copy; eB: elapsed(ePre, eB)
//   cross        stream 1: spin; eMid. stream 2: wait eMid; copy; eC. stream 1: wait eC; eB.
//                elapsed(eMid, eB): the copy between two cross-stream event waits
//   call_peer    host clock around cudaMemcpyPeerAsync within GPU 0 (d2d)
//   ungated_peer eA; cudaMemcpyPeerAsync within GPU 0; eB on an idle GPU (d2d)
//   call_d2d, ungated_d2d: the same with cudaMemcpyAsync device to device
// 20 warm-ups and 200 timed repetitions per cell; p10, median, p90. Host sources hold a
// non-zero pattern written once and flushed from the CPU's caches; every cell's last copy is
// verified against its source, and every CUDA call is checked.
#include <cuda_runtime.h>
#include <immintrin.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
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
constexpr int kWarmup = 20;
constexpr int kReps = 200;
// Long enough for every call of a case to be queued before the spin ends (they take < 30 us).
constexpr unsigned long long kHoldNs = 100'000;

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

double us_since(Clock::time_point t0) { return std::chrono::duration<double, std::micro>(Clock::now() - t0).count(); }

void fill(unsigned char* p, std::size_t n, unsigned seed) {
    for (std::size_t i = 0; i < n; ++i) p[i] = static_cast<unsigned char>(((i * 131u + seed * 17u) % 251u) + 1u);
}

void flush(const unsigned char* p, std::size_t n) {
    for (std::size_t i = 0; i < n; i += 64) _mm_clflush(p + i);
    _mm_mfence();
}

struct Stats {
    double p10, median, p90;
};

Stats stats(std::vector<double> t) {
    std::sort(t.begin(), t.end());
    const auto at = [&](double q) { return t[static_cast<std::size_t>(q * static_cast<double>(t.size() - 1) + 0.5)]; };
    return {at(0.1), at(0.5), at(0.9)};
}

float elapsed_us(cudaEvent_t a, cudaEvent_t b) {
    float ms = 0;
    CHECK(cudaEventElapsedTime(&ms, a, b));
    return ms * 1000.0f;
}

}  // namespace

int main() {
    CHECK(cudaSetDevice(0));
    const std::size_t sizes[] = {4, 1 * kKiB, 4 * kKiB, 16 * kKiB, 24 * kKiB, 28 * kKiB, 64 * kKiB, 256 * kKiB, 1024 * kKiB};
    const std::size_t max = 1024 * kKiB;
    unsigned char *hsrc = nullptr, *hdst = nullptr, *back = nullptr, *dsrc = nullptr, *ddst = nullptr;
    unsigned char *hsmall = nullptr, *dsmall_src = nullptr, *dsmall_dst = nullptr;
    CHECK(cudaMallocHost(&hsmall, 64));
    CHECK(cudaMalloc(&dsmall_src, 64));
    CHECK(cudaMalloc(&dsmall_dst, 64));
    std::memset(hsmall, 0x5a, 64);
    CHECK(cudaMemset(dsmall_src, 0x5a, 64));
    CHECK(cudaMallocHost(&hsrc, max));
    CHECK(cudaMallocHost(&hdst, max));
    CHECK(cudaMallocHost(&back, max));
    CHECK(cudaMalloc(&dsrc, max));
    CHECK(cudaMalloc(&ddst, max));
    fill(hsrc, max, 1);
    fill(back, max, 2);
    CHECK(cudaMemcpy(dsrc, back, max, cudaMemcpyHostToDevice));  // the device source: pattern 2
    flush(hsrc, max);
    cudaStream_t s1, s2;
    CHECK(cudaStreamCreateWithFlags(&s1, cudaStreamNonBlocking));
    CHECK(cudaStreamCreateWithFlags(&s2, cudaStreamNonBlocking));
    cudaEvent_t ePre, eMid, eA, eB, eC;
    for (cudaEvent_t* e : {&ePre, &eMid, &eA, &eB, &eC}) CHECK(cudaEventCreate(e));

    std::printf("case,dir,bytes,p10_us,median_us,p90_us,from_pre_median_us\n");
    for (const std::string dir : {"h2d", "d2h", "d2d"}) {
        for (const std::size_t n : sizes) {
            unsigned char* dst = dir == "h2d" ? ddst : dir == "d2h" ? hdst : ddst;
            const unsigned char* src = dir == "h2d" ? hsrc : dsrc;
            const cudaMemcpyKind kind = dir == "h2d"   ? cudaMemcpyHostToDevice
                                        : dir == "d2h" ? cudaMemcpyDeviceToHost
                                                       : cudaMemcpyDeviceToDevice;
            // The 4 B copy ahead of the measured one has buffers of its own, so it cannot be
            // mistaken for the measured copy's data.
            unsigned char* small_dst = dir == "d2h" ? hsmall : dsmall_dst;
            const unsigned char* small_src = dir == "h2d" ? hsmall : dsmall_src;
            const auto copy = [&](cudaStream_t s) { CHECK(cudaMemcpyAsync(dst, src, n, kind, s)); };
            const auto small = [&](cudaStream_t s) { CHECK(cudaMemcpyAsync(small_dst, small_src, 4, kind, s)); };
            const auto spin = [&](cudaStream_t s) {
                spin_kernel<<<1, 1, 0, s>>>(kHoldNs);
                CHECK(cudaGetLastError());
            };
            // One repetition returns the value and, for spin cases, elapsed(ePre, eB).
            using Rep = std::function<std::pair<double, double>()>;
            std::vector<std::pair<std::string, Rep>> cases;
            if (dir != "d2d") {
                cases.push_back({"blocking", [&] {
                                     const auto t0 = Clock::now();
                                     CHECK(cudaMemcpy(dst, src, n, kind));
                                     return std::pair<double, double>{us_since(t0), 0.0};
                                 }});
                cases.push_back({"call", [&] {
                                     const auto t0 = Clock::now();
                                     copy(s1);
                                     const double us = us_since(t0);
                                     CHECK(cudaStreamSynchronize(s1));
                                     return std::pair<double, double>{us, 0.0};
                                 }});
                cases.push_back({"ungated", [&] {
                                     CHECK(cudaEventRecord(eA, s1));
                                     copy(s1);
                                     CHECK(cudaEventRecord(eB, s1));
                                     CHECK(cudaEventSynchronize(eB));
                                     return std::pair<double, double>{elapsed_us(eA, eB), 0.0};
                                 }});
                cases.push_back({"spin_only", [&] {
                                     CHECK(cudaEventRecord(ePre, s1));
                                     spin(s1);
                                     CHECK(cudaEventRecord(eB, s1));
                                     CHECK(cudaEventSynchronize(eB));
                                     const double v = elapsed_us(ePre, eB);
                                     return std::pair<double, double>{v, v};
                                 }});
                cases.push_back({"spin_copy", [&] {
                                     CHECK(cudaEventRecord(ePre, s1));
                                     spin(s1);
                                     copy(s1);
                                     CHECK(cudaEventRecord(eB, s1));
                                     CHECK(cudaEventSynchronize(eB));
                                     const double v = elapsed_us(ePre, eB);
                                     return std::pair<double, double>{v, v};
                                 }});
                cases.push_back({"gated", [&] {
                                     CHECK(cudaEventRecord(ePre, s1));
                                     spin(s1);
                                     CHECK(cudaEventRecord(eMid, s1));
                                     copy(s1);
                                     CHECK(cudaEventRecord(eB, s1));
                                     CHECK(cudaEventSynchronize(eB));
                                     return std::pair<double, double>{elapsed_us(eMid, eB), elapsed_us(ePre, eB)};
                                 }});
                cases.push_back({"spin_small", [&] {
                                     CHECK(cudaEventRecord(ePre, s1));
                                     spin(s1);
                                     small(s1);
                                     CHECK(cudaEventRecord(eB, s1));
                                     CHECK(cudaEventSynchronize(eB));
                                     const double v = elapsed_us(ePre, eB);
                                     return std::pair<double, double>{v, v};
                                 }});
                cases.push_back({"spin_small_copy", [&] {
                                     CHECK(cudaEventRecord(ePre, s1));
                                     spin(s1);
                                     small(s1);
                                     copy(s1);
                                     CHECK(cudaEventRecord(eB, s1));
                                     CHECK(cudaEventSynchronize(eB));
                                     const double v = elapsed_us(ePre, eB);
                                     return std::pair<double, double>{v, v};
                                 }});
                cases.push_back({"cross", [&] {
                                     spin(s1);
                                     CHECK(cudaEventRecord(eMid, s1));
                                     CHECK(cudaStreamWaitEvent(s2, eMid, 0));
                                     copy(s2);
                                     CHECK(cudaEventRecord(eC, s2));
                                     CHECK(cudaStreamWaitEvent(s1, eC, 0));
                                     CHECK(cudaEventRecord(eB, s1));
                                     CHECK(cudaEventSynchronize(eB));
                                     return std::pair<double, double>{elapsed_us(eMid, eB), 0.0};
                                 }});
            } else {
                const auto peer = [&] { CHECK(cudaMemcpyPeerAsync(dst, 0, src, 0, n, s1)); };
                const auto call_case = [&](std::function<void()> issue) {
                    return [&, issue] {
                        const auto t0 = Clock::now();
                        issue();
                        const double us = us_since(t0);
                        CHECK(cudaStreamSynchronize(s1));
                        return std::pair<double, double>{us, 0.0};
                    };
                };
                const auto ungated_case = [&](std::function<void()> issue) {
                    return [&, issue] {
                        CHECK(cudaEventRecord(eA, s1));
                        issue();
                        CHECK(cudaEventRecord(eB, s1));
                        CHECK(cudaEventSynchronize(eB));
                        return std::pair<double, double>{elapsed_us(eA, eB), 0.0};
                    };
                };
                const std::function<void()> d2d = [&] { copy(s1); };
                cases.push_back({"call_peer", call_case(peer)});
                cases.push_back({"ungated_peer", ungated_case(peer)});
                cases.push_back({"call_d2d", call_case(d2d)});
                cases.push_back({"ungated_d2d", ungated_case(d2d)});
            }
            for (auto& [name, rep] : cases) {
                std::vector<double> v, pre;
                // Cleared, so that a case which does not copy cannot pass for one that did.
                if (dir == "d2h") {
                    std::memset(hdst, 0, n);
                } else {
                    CHECK(cudaMemset(ddst, 0, max));
                }
                for (int r = 0; r < kWarmup + kReps; ++r) {
                    const auto [value, from_pre] = rep();
                    if (r >= kWarmup) {
                        v.push_back(value);
                        pre.push_back(from_pre);
                    }
                }
                CHECK(cudaDeviceSynchronize());
                // The measured copy moved its source's bytes.
                const unsigned char* got = dst;
                if (dir != "d2h") {
                    CHECK(cudaMemcpy(back, dst, n, cudaMemcpyDeviceToHost));
                    got = back;
                }
                std::vector<unsigned char> want(n);
                if (dir == "h2d") {
                    std::memcpy(want.data(), hsrc, n);
                } else {
                    CHECK(cudaMemcpy(want.data(), dsrc, n, cudaMemcpyDeviceToHost));
                }
                if (name != "spin_only" && name != "spin_small" && std::memcmp(got, want.data(), n) != 0) {
                    std::fprintf(stderr, "verification failed: %s %s %zu bytes\n", name.c_str(), dir.c_str(), n);
                    return 1;
                }
                const Stats s = stats(v);
                std::printf("%s,%s,%zu,%.4f,%.4f,%.4f,%.4f\n", name.c_str(), dir.c_str(), n, s.p10, s.median, s.p90,
                            stats(pre).median);
                std::fflush(stdout);
            }
        }
    }
    for (cudaEvent_t e : {ePre, eMid, eA, eB, eC}) CHECK(cudaEventDestroy(e));
    CHECK(cudaStreamDestroy(s1));
    CHECK(cudaStreamDestroy(s2));
    CHECK(cudaFree(dsrc));
    CHECK(cudaFree(ddst));
    CHECK(cudaFreeHost(hsrc));
    CHECK(cudaFreeHost(hdst));
    CHECK(cudaFreeHost(back));
    CHECK(cudaFreeHost(hsmall));
    CHECK(cudaFree(dsmall_src));
    CHECK(cudaFree(dsmall_dst));
    return 0;
}
