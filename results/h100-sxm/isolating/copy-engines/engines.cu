// Which copy engine does a stream's copy run on? (../behind-reads: a 4 KiB copy into the GPU on a
// second stream beside a 4 MiB one on a first takes 3.8-4.2 us, so the two did not queue on one
// engine; the model runs every copy of one direction on one engine.) B streams (B = 1 to 7) each
// issue a 4 MiB copy, then stream B a 4 KiB copy the same way; all behind a gate kernel (each
// stream waits for a start event recorded behind it), the gate opens, the end of every copy is
// timed from the start event. If the small copy shares an engine with a big one it ends after it
// (about 80 us); if not, within a few us. Both directions; and the big copies' ends, which show
// whether they run one after another (ends 80 us apart) or together (sharing the link). Prints
// the device's asyncEngineCount. 3 warm-ups and 20 timed repetitions a cell, medians; data
// verified; every CUDA call checked; the gate gives up after 1 s.
//
// Build: nvcc -O3 -arch=sm_90 engines.cu -o engines
// Run:   ./engines > engines.csv
#include <cuda_runtime.h>

#include <algorithm>
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
constexpr int kReps = 20;
constexpr int kMaxStreams = 8;
constexpr unsigned long long kGateTimeoutNs = 1'000'000'000;

__global__ void gate_kernel(volatile int* flag, int* timed_out) {
    unsigned long long t0;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
    while (*flag == 0) {
        unsigned long long t;
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
        if (t - t0 > kGateTimeoutNs) {
            *timed_out = 1;
            return;
        }
    }
}

float elapsed_us(cudaEvent_t a, cudaEvent_t b) {
    float ms = 0;
    CHECK(cudaEventElapsedTime(&ms, a, b));
    return ms * 1000.0f;
}

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

}  // namespace

int main() {
    CHECK(cudaSetDevice(0));
    cudaDeviceProp prop{};
    CHECK(cudaGetDeviceProperties(&prop, 0));
    std::fprintf(stderr, "%s: asyncEngineCount %d\n", prop.name, prop.asyncEngineCount);
    const std::size_t big = std::size_t{4} << 20, small = 4096, slot = big + small;
    unsigned char *host = nullptr, *dev = nullptr, *gate_flag = nullptr;
    int* timed_out = nullptr;
    CHECK(cudaMallocHost(&host, slot * kMaxStreams));
    CHECK(cudaMalloc(&dev, slot * kMaxStreams));
    CHECK(cudaHostAlloc(&gate_flag, sizeof(int), cudaHostAllocMapped));
    CHECK(cudaHostAlloc(&timed_out, sizeof(int), cudaHostAllocMapped));
    int *dflag = nullptr, *dtimed_out = nullptr;
    CHECK(cudaHostGetDevicePointer(&dflag, gate_flag, 0));
    CHECK(cudaHostGetDevicePointer(&dtimed_out, timed_out, 0));
    *timed_out = 0;
    std::vector<unsigned char> pattern(slot * kMaxStreams);
    for (std::size_t i = 0; i < pattern.size(); ++i) pattern[i] = static_cast<unsigned char>((i * 131u + 7u) % 251u + 1u);
    cudaStream_t gate_stream;
    CHECK(cudaStreamCreateWithFlags(&gate_stream, cudaStreamNonBlocking));
    std::vector<cudaStream_t> s(kMaxStreams);
    for (auto& x : s) CHECK(cudaStreamCreateWithFlags(&x, cudaStreamNonBlocking));
    cudaEvent_t start;
    CHECK(cudaEventCreate(&start));
    std::vector<cudaEvent_t> done(kMaxStreams);
    for (auto& e : done) CHECK(cudaEventCreate(&e));
    std::printf("direction,big_streams,small_us,big_first_us,big_last_us\n");
    for (const bool up : {true, false}) {
        for (int b = 0; b <= kMaxStreams - 1; ++b) {
            std::vector<double> small_t, first_t, last_t;
            for (int r = 0; r < kWarmup + kReps; ++r) {
                if (up) {
                    std::memcpy(host, pattern.data(), pattern.size());
                    CHECK(cudaMemset(dev, 0, slot * kMaxStreams));
                } else {
                    CHECK(cudaMemcpy(dev, pattern.data(), pattern.size(), cudaMemcpyHostToDevice));
                    std::memset(host, 0, slot * kMaxStreams);
                }
                CHECK(cudaDeviceSynchronize());
                *reinterpret_cast<volatile int*>(gate_flag) = 0;
                gate_kernel<<<1, 1, 0, gate_stream>>>(dflag, dtimed_out);
                CHECK(cudaGetLastError());
                CHECK(cudaEventRecord(start, gate_stream));
                for (int i = 0; i <= b; ++i) {
                    CHECK(cudaStreamWaitEvent(s[static_cast<std::size_t>(i)], start, 0));
                    const std::size_t n = i < b ? big : small;
                    unsigned char* h = host + static_cast<std::size_t>(i) * slot;
                    unsigned char* d = dev + static_cast<std::size_t>(i) * slot;
                    if (up) {
                        CHECK(cudaMemcpyAsync(d, h, n, cudaMemcpyHostToDevice, s[static_cast<std::size_t>(i)]));
                    } else {
                        CHECK(cudaMemcpyAsync(h, d, n, cudaMemcpyDeviceToHost, s[static_cast<std::size_t>(i)]));
                    }
                    CHECK(cudaEventRecord(done[static_cast<std::size_t>(i)], s[static_cast<std::size_t>(i)]));
                }
                *reinterpret_cast<volatile int*>(gate_flag) = 1;
                CHECK(cudaDeviceSynchronize());
                if (*timed_out != 0) {
                    std::fprintf(stderr, "the gate timed out\n");
                    return 1;
                }
                if (r < kWarmup) continue;
                small_t.push_back(elapsed_us(start, done[static_cast<std::size_t>(b)]));
                double lo = 1e30, hi = 0.0;
                for (int i = 0; i < b; ++i) {
                    const double t = elapsed_us(start, done[static_cast<std::size_t>(i)]);
                    lo = std::min(lo, t);
                    hi = std::max(hi, t);
                }
                first_t.push_back(b > 0 ? lo : 0.0);
                last_t.push_back(b > 0 ? hi : 0.0);
            }
            // Verify every copy of the last repetition.
            std::vector<unsigned char> got(slot * kMaxStreams);
            if (up) {
                CHECK(cudaMemcpy(got.data(), dev, got.size(), cudaMemcpyDeviceToHost));
            } else {
                std::memcpy(got.data(), host, got.size());
            }
            for (int i = 0; i <= b; ++i) {
                const std::size_t off = static_cast<std::size_t>(i) * slot, n = i < b ? big : small;
                if (std::memcmp(got.data() + off, pattern.data() + off, n) != 0) {
                    std::fprintf(stderr, "verification failed: %s, stream %d of %d\n", up ? "h2d" : "d2h", i, b);
                    return 1;
                }
            }
            std::printf("%s,%d,%.4f,%.4f,%.4f\n", up ? "h2d" : "d2h", b, median(small_t), median(first_t), median(last_t));
            std::fflush(stdout);
        }
    }
    CHECK(cudaEventDestroy(start));
    for (auto& e : done) CHECK(cudaEventDestroy(e));
    for (auto& x : s) CHECK(cudaStreamDestroy(x));
    CHECK(cudaStreamDestroy(gate_stream));
    CHECK(cudaFree(dev));
    CHECK(cudaFreeHost(host));
    CHECK(cudaFreeHost(gate_flag));
    CHECK(cudaFreeHost(timed_out));
    return 0;
}
