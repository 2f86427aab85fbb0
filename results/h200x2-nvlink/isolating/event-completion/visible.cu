// When does a device-to-host copy's data reach host memory, and when does the end event behind
// it complete? On the 2-GPU host an event-timed small copy holds 1.5-2.5 us more after its call
// than on the single-GPU hosts while a blocking copy does not (../../../h100-sxm/isolating/
// stream-handoffs, "The 2-GPU host"). This program times one copy on GPU 0 against the host's
// clock, every stamp taken by the CPU spinning on what it can see:
//   call     cudaMemcpyAsync's own CPU time;
//   data     from before the call until the destination's last 8 bytes hold the value the
//            source has this repetition (the CPU spins on them; the source is rewritten with a
//            new value every repetition);
//   event    the same copy with an event recorded right behind it: until cudaEventQuery on
//            that event first succeeds (another repetition, so the event's call does not hide
//            a copy that lands sooner);
//   blocking a cudaMemcpy of the same size, call to return;
//   ungated  the GPU's own interval between an event before the copy and the one after it.
// If the GPU's end event waits for something after the data (a barrier wider on one host), event
// - data grows there while blocking - data does not.
//
// Build: nvcc -O3 -arch=sm_90 visible.cu -o visible
// Run:   ./visible > visible.csv
// 10 warm-ups and 200 timed repetitions per size and way; medians and p10/p90; the last
// repetition's whole destination is verified.
#include <cuda_runtime.h>

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

constexpr int kWarmup = 10;
constexpr int kReps = 200;
constexpr double kSpinLimitUs = 1e6;  // a copy that never shows up is an error, not a hang

using Clock = std::chrono::steady_clock;

double us_since(Clock::time_point t0) { return std::chrono::duration<double, std::micro>(Clock::now() - t0).count(); }

// Every 8-byte word of the source gets `value`: the destination's last word tells the CPU which
// repetition's data has arrived.
__global__ void fill(std::uint64_t* p, std::size_t words, std::uint64_t value) {
    for (std::size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < words; i += gridDim.x * blockDim.x) p[i] = value;
}

struct Stats {
    double p10, median, p90;
};

Stats stats(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    const auto at = [&](double q) { return v[static_cast<std::size_t>(q * (v.size() - 1) + 0.5)]; };
    return {at(0.1), at(0.5), at(0.9)};
}

void row(const char* way, std::size_t bytes, const std::vector<double>& v) {
    const Stats s = stats(v);
    std::printf("%s,%zu,%.4f,%.4f,%.4f\n", way, bytes, s.p10, s.median, s.p90);
}

}  // namespace

int main() {
    CHECK(cudaSetDevice(0));
    const std::size_t sizes[] = {8, 4096, 65536, 262144, 1 << 20};
    const std::size_t max_bytes = 1 << 20;
    std::uint64_t* src = nullptr;
    std::uint64_t* dst = nullptr;
    CHECK(cudaMalloc(&src, max_bytes));
    CHECK(cudaMallocHost(&dst, max_bytes));
    cudaStream_t s;
    CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    cudaEvent_t before, after;
    CHECK(cudaEventCreate(&before));
    CHECK(cudaEventCreate(&after));
    std::printf("way,bytes,p10_us,median_us,p90_us\n");
    std::uint64_t value = 0x5a5a000000000000ULL;
    for (const std::size_t bytes : sizes) {
        const std::size_t words = bytes / 8;
        std::vector<double> call, data, event, blocking, ungated;
        for (int rep = 0; rep < kWarmup + kReps; ++rep) {
            ++value;
            fill<<<64, 256, 0, s>>>(src, words, value);
            CHECK(cudaGetLastError());
            CHECK(cudaStreamSynchronize(s));
            volatile std::uint64_t* last = dst + words - 1;
            // The data: the call, then straight to spinning on the last word (no event call in
            // between, which would hide a copy that lands sooner than the two calls).
            *last = 0;
            std::atomic_thread_fence(std::memory_order_seq_cst);
            const Clock::time_point t0 = Clock::now();
            CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToHost, s));
            const double t_call = us_since(t0);
            double t_data = 0;
            while (*last != value) {
                if (us_since(t0) > kSpinLimitUs) {
                    std::fprintf(stderr, "%zu B: the copy's last word never arrived\n", bytes);
                    return 1;
                }
            }
            t_data = us_since(t0);
            CHECK(cudaStreamSynchronize(s));
            // The event: the same copy of new data with an event right behind it, from an event
            // stamped on the idle stream; the CPU spins on the event.
            ++value;
            fill<<<64, 256, 0, s>>>(src, words, value);
            CHECK(cudaGetLastError());
            CHECK(cudaStreamSynchronize(s));
            CHECK(cudaEventRecord(before, s));
            CHECK(cudaEventSynchronize(before));
            const Clock::time_point t2 = Clock::now();
            CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToHost, s));
            CHECK(cudaEventRecord(after, s));
            cudaError_t q;
            while ((q = cudaEventQuery(after)) == cudaErrorNotReady) {
                if (us_since(t2) > kSpinLimitUs) {
                    std::fprintf(stderr, "%zu B: the end event never completed\n", bytes);
                    return 1;
                }
            }
            CHECK(q);
            const double t_event = us_since(t2);
            if (*last != value) {
                std::fprintf(stderr, "%zu B: the end event completed before the data arrived\n", bytes);
                return 1;
            }
            float ms = 0;
            CHECK(cudaEventElapsedTime(&ms, before, after));
            // The blocking copy of the same data, on the legacy stream, from an idle GPU.
            ++value;
            fill<<<64, 256, 0, s>>>(src, words, value);
            CHECK(cudaGetLastError());
            CHECK(cudaStreamSynchronize(s));
            const Clock::time_point t1 = Clock::now();
            CHECK(cudaMemcpy(dst, src, bytes, cudaMemcpyDeviceToHost));
            const double t_blocking = us_since(t1);
            if (dst[words - 1] != value) {
                std::fprintf(stderr, "%zu B: the blocking copy's data is wrong\n", bytes);
                return 1;
            }
            if (rep < kWarmup) continue;
            call.push_back(t_call);
            data.push_back(t_data);
            event.push_back(t_event);
            blocking.push_back(t_blocking);
            ungated.push_back(1000.0 * ms);  // starts at the event before, stamped while idle
        }
        for (std::size_t i = 0; i < words; ++i) {
            if (dst[i] != value) {
                std::fprintf(stderr, "%zu B: word %zu is wrong\n", bytes, i);
                return 1;
            }
        }
        row("call", bytes, call);
        row("data", bytes, data);
        row("event", bytes, event);
        row("blocking", bytes, blocking);
        row("ungated", bytes, ungated);
    }
    CHECK(cudaEventDestroy(before));
    CHECK(cudaEventDestroy(after));
    CHECK(cudaStreamDestroy(s));
    CHECK(cudaFreeHost(dst));
    CHECK(cudaFree(src));
    return 0;
}
