// When does a device-to-host copy's completion reach host memory, after its data? On the 2xH200
// host a copy out of the GPU holds its engine 0.9 us longer than on the H100 host in a chain
// (results/h100-sxm/isolating/copy-chains), and a blocking one returns 0.94 us later after its
// data (../h2d-landing). Is what holds the engine before the copy's completion (its semaphore:
// the CPU learns of the copy later) or after it (only the next copy waits)?
//
// Per repetition, on an idle stream: cudaMemcpyAsync of n bytes into pinned host memory, then
// cuStreamWriteValue32 of a flag in mapped host memory on the same stream (the channel writes it
// once the copy is complete), and an event. The CPU spins from just before the call: `data`,
// until the destination's last word holds this repetition's value; `flag`, until the flag does;
// `event`, until cudaEventQuery succeeds. Reported per size: the call's CPU time and the medians
// of data - call start, flag - data and event - data.
//
// Build: nvcc -O3 -arch=sm_90 release.cu -o release -lcuda
// Run:   ./release > release.csv
// 10 warm-ups and 200 repetitions per size; the destination verified once per size.
#include <cuda.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
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
#define CHECK_CU(call)                                                                      \
    do {                                                                                    \
        const CUresult r_ = (call);                                                         \
        if (r_ != CUDA_SUCCESS) {                                                           \
            const char* s_ = nullptr;                                                       \
            cuGetErrorString(r_, &s_);                                                      \
            std::fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call, s_ ? s_ : "?"); \
            std::exit(1);                                                                   \
        }                                                                                   \
    } while (0)

constexpr int kWarm = 10;
constexpr int kReps = 200;

using Clock = std::chrono::steady_clock;
double us(Clock::time_point a, Clock::time_point b) { return std::chrono::duration<double, std::micro>(b - a).count(); }

__global__ void fill_kernel(std::uint32_t* p, std::size_t words, std::uint32_t seed) {
    for (std::size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < words; i += std::size_t{gridDim.x} * blockDim.x) {
        p[i] = static_cast<std::uint32_t>(i) * 2654435761u ^ seed;
    }
}

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    const std::size_t n = v.size();
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

}  // namespace

int main() {
    const std::size_t sizes[] = {8, 4096, 65536, 262144, 1048576};
    constexpr std::size_t kMax = 1048576;
    CHECK(cudaSetDevice(0));
    CHECK(cudaFree(nullptr));
    std::uint32_t* dev = nullptr;
    std::uint32_t* host = nullptr;
    volatile std::uint32_t* flag = nullptr;
    CHECK(cudaMalloc(&dev, kMax));
    CHECK(cudaHostAlloc(reinterpret_cast<void**>(&host), kMax, cudaHostAllocDefault));
    CHECK(cudaHostAlloc(const_cast<std::uint32_t**>(&flag), 64, cudaHostAllocMapped));
    void* flag_dev = nullptr;
    CHECK(cudaHostGetDevicePointer(&flag_dev, const_cast<std::uint32_t*>(flag), 0));
    cudaStream_t s;
    CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    cudaEvent_t ev;
    CHECK(cudaEventCreateWithFlags(&ev, cudaEventDisableTiming));
    std::printf("bytes,call_us,data_us,flag_minus_data_us,event_minus_data_us,flag_minus_data_p10,flag_minus_data_p90\n");
    std::uint32_t counter = 0;
    for (const std::size_t n : sizes) {
        const std::size_t words = n / 4;
        std::vector<double> call, data, flag_d, event_d;
        std::uint32_t seed = 0;
        for (int rep = 0; rep < kWarm + kReps; ++rep) {
            seed = 0x9e3779b9u * static_cast<std::uint32_t>(rep + 1) + static_cast<std::uint32_t>(n);
            fill_kernel<<<132, 256, 0, s>>>(dev, words, seed);
            CHECK(cudaGetLastError());
            CHECK(cudaStreamSynchronize(s));
            const std::uint32_t expect = static_cast<std::uint32_t>(words - 1) * 2654435761u ^ seed;
            volatile std::uint32_t* last = host + words - 1;
            *last = ~expect;
            ++counter;
            *flag = 0;
            std::atomic_thread_fence(std::memory_order_seq_cst);
            const Clock::time_point t0 = Clock::now();
            CHECK(cudaMemcpyAsync(host, dev, n, cudaMemcpyDeviceToHost, s));
            CHECK_CU(cuStreamWriteValue32(s, reinterpret_cast<CUdeviceptr>(flag_dev), counter, CU_STREAM_WRITE_VALUE_DEFAULT));
            CHECK(cudaEventRecord(ev, s));
            const Clock::time_point t1 = Clock::now();
            while (*last != expect) {
            }
            const Clock::time_point td = Clock::now();
            while (*flag != counter) {
            }
            const Clock::time_point tf = Clock::now();
            while (cudaEventQuery(ev) == cudaErrorNotReady) {
            }
            const Clock::time_point te = Clock::now();
            CHECK(cudaGetLastError());
            if (rep >= kWarm) {
                call.push_back(us(t0, t1));
                data.push_back(us(t0, td));
                flag_d.push_back(us(td, tf));
                event_d.push_back(us(td, te));
            }
        }
        CHECK(cudaStreamSynchronize(s));
        for (std::size_t i = 0; i < words; ++i) {
            if (host[i] != (static_cast<std::uint32_t>(i) * 2654435761u ^ seed)) {
                std::fprintf(stderr, "verification failed: %zu B word %zu\n", n, i);
                return 1;
            }
        }
        std::vector<double> sorted = flag_d;
        std::sort(sorted.begin(), sorted.end());
        std::printf("%zu,%.3f,%.3f,%.3f,%.3f,%.3f,%.3f\n", n, median(call), median(data), median(flag_d), median(event_d),
                    sorted[sorted.size() / 10], sorted[sorted.size() * 9 / 10]);
        std::fflush(stdout);
    }
    return 0;
}
