// Does an event record's release, held while a copy into the GPU runs (busywait.cu: 7.3 us
// beside a long one), land when that copy ends? The model (runtime.busy_release_spacing) lands
// it when the copies running at its stamp have ended, at most 7.3 us less release_spacing after
// it; the duplex pairs, whose end event comes shortly before the other copy ends, want that.
// One GPU (GPU 0), per hop, all behind spins of the GPU's global timer so that the CPU's calls
// come long before:
//   stream C: a 20 us spin, then a copy into the GPU of S bytes from pinned memory, with events
//             c0 before and c1 after it;
//   stream A: a spin of 20 + D us, then event E (D = 1, the default: E a microsecond into the
//             copy; a larger D puts E later, so that the copy ends sooner after it);
//   stream B: waits for E, then event F.
// Per S (0: no copy, 64 KiB to 4 MiB), K hops a repetition, medians over the hops: F - E (one hop),
// c1 - E (how long the copy still ran after E), c1 - c0 (the copy). 3 warm-ups, 20 repetitions;
// the copy's data verified once per S; every CUDA call checked.
//
// Build: nvcc -O3 -arch=sm_90 releasecopy.cu -o releasecopy
// Run:   ./releasecopy [K [D]] > releasecopy.csv
#include <cuda_runtime.h>

#include <algorithm>
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
constexpr double kSpinUs = 20.0;

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

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v.empty() ? 0.0 : v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
    const int k_hops = argc > 1 ? std::atoi(argv[1]) : 50;
    if (k_hops < 1 || k_hops > 1000) {
        std::fprintf(stderr, "K = %s: not in 1..1000\n", argv[1]);
        return 2;
    }
    const double delay_us = argc > 2 ? std::atof(argv[2]) : 1.0;
    if (!(delay_us >= 0.0 && delay_us <= 1000.0)) {
        std::fprintf(stderr, "D = %s: not in 0..1000 us\n", argv[2]);
        return 2;
    }
    int count = 0;
    CHECK(cudaGetDeviceCount(&count));
    if (count < 1) {
        std::fprintf(stderr, "needs a GPU\n");
        return 1;
    }
    CHECK(cudaSetDevice(0));
    const std::size_t max_bytes = std::size_t{4} << 20;
    unsigned char* dev = nullptr;
    unsigned char* host = nullptr;
    CHECK(cudaMalloc(&dev, max_bytes));
    CHECK(cudaMallocHost(&host, max_bytes));
    for (std::size_t i = 0; i < max_bytes; ++i) host[i] = static_cast<unsigned char>((i * 131u + 7u) % 251u + 1u);
    cudaStream_t a{}, b{}, c{};
    CHECK(cudaStreamCreateWithFlags(&a, cudaStreamNonBlocking));
    CHECK(cudaStreamCreateWithFlags(&b, cudaStreamNonBlocking));
    CHECK(cudaStreamCreateWithFlags(&c, cudaStreamNonBlocking));
    const auto n = static_cast<std::size_t>(k_hops);
    std::vector<cudaEvent_t> e(n), f(n), c0(n), c1(n);
    for (std::size_t k = 0; k < n; ++k) {
        CHECK(cudaEventCreate(&e[k]));
        CHECK(cudaEventCreate(&f[k]));
        CHECK(cudaEventCreate(&c0[k]));
        CHECK(cudaEventCreate(&c1[k]));
    }
    std::printf("bytes,rep,hop_us,copy_after_e_us,copy_us,hops,delay_us\n");
    for (const std::size_t bytes : {std::size_t{0}, std::size_t{64} << 10, std::size_t{256} << 10, std::size_t{1} << 20, max_bytes}) {
        CHECK(cudaMemset(dev, 0, max_bytes));
        CHECK(cudaDeviceSynchronize());
        for (int r = 0; r < kWarmup + kReps; ++r) {
            for (std::size_t k = 0; k < n; ++k) {
                spin<<<1, 1, 0, c>>>(static_cast<unsigned long long>(kSpinUs * 1e3));
                CHECK(cudaGetLastError());
                CHECK(cudaEventRecord(c0[k], c));
                if (bytes > 0) CHECK(cudaMemcpyAsync(dev, host, bytes, cudaMemcpyHostToDevice, c));
                CHECK(cudaEventRecord(c1[k], c));
                spin<<<1, 1, 0, a>>>(static_cast<unsigned long long>((kSpinUs + delay_us) * 1e3));
                CHECK(cudaGetLastError());
                CHECK(cudaEventRecord(e[k], a));
                CHECK(cudaStreamWaitEvent(b, e[k], 0));
                CHECK(cudaEventRecord(f[k], b));
                // The next hop's spins start only after this hop's streams are done.
                CHECK(cudaStreamWaitEvent(a, f[k], 0));
                CHECK(cudaStreamWaitEvent(c, f[k], 0));
                CHECK(cudaStreamWaitEvent(c, e[k], 0));
                CHECK(cudaStreamWaitEvent(a, c1[k], 0));
            }
            CHECK(cudaDeviceSynchronize());
            if (r < kWarmup) continue;
            std::vector<double> hop, after, copy;
            for (std::size_t k = 0; k < n; ++k) {
                hop.push_back(elapsed_us(e[k], f[k]));
                after.push_back(elapsed_us(e[k], c1[k]));
                copy.push_back(elapsed_us(c0[k], c1[k]));
            }
            std::printf("%zu,%d,%.3f,%.3f,%.3f,%d,%g\n", bytes, r - kWarmup, median(hop), median(after), median(copy), k_hops, delay_us);
        }
        if (bytes > 0) {
            std::vector<unsigned char> back(bytes);
            CHECK(cudaMemcpy(back.data(), dev, bytes, cudaMemcpyDeviceToHost));
            if (std::memcmp(back.data(), host, bytes) != 0) {
                std::fprintf(stderr, "copy of %zu bytes: wrong data\n", bytes);
                return 1;
            }
        }
        std::fflush(stdout);
    }
    return 0;
}
