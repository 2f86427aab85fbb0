// Is a copy into the GPU whose size is not a multiple of 4 B carried in the command stream as
// one that is? The main plan's 4097 B copy into the GPU takes 0.4-0.5 us longer than its 4096 B
// copy on both hosts, where a 3 B copy costs what 4 B does. fetch.cu's `synced` mode (the copy's
// stream synchronised and nothing queued on it since; the start event on a second stream just
// before cudaMemcpyAsync, the end event on the copy's stream): `synced` is the interval less the
// CPU's time in the call, `synced_call` that CPU time, which grows with the size only when the
// call copies the data into the command stream.
//
// Build: nvcc -O3 -arch=sm_90 odd.cu -o odd      Run: ./odd > odd.csv
// 30 warm-ups and 300 timed repetitions per cell; the last copy of every cell verified.
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

int main() {
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
    const std::size_t sizes[] = {1024, 1025, 1027, 4096, 4097, 4098, 4100, 4104, 8192, 8193, 16384, 16385, 24576, 24577};
    std::printf("dir,bytes,what,min_us,p10_us,median_us,p90_us\n");
    unsigned seed = 1;
    for (const int h2d : {1}) {
        const cudaMemcpyKind kind = h2d ? cudaMemcpyHostToDevice : cudaMemcpyDeviceToHost;
        for (const std::size_t n : sizes) {
            void* dst = h2d ? static_cast<void*>(dev) : static_cast<void*>(back);
            const void* src = h2d ? static_cast<const void*>(host) : static_cast<const void*>(dev);
            ++seed;
            fill(host, n, seed);
            if (!h2d) CHECK(cudaMemcpy(dev, host, n, cudaMemcpyHostToDevice));
            std::vector<double> synced, synced_call;
            for (int rep = 0; rep < kWarmup + kReps; ++rep) {
                const bool timed = rep >= kWarmup;
                CHECK(cudaStreamSynchronize(s));
                CHECK(cudaEventRecord(a, s2));
                const auto t0 = Clock::now();
                CHECK(cudaMemcpyAsync(dst, src, n, kind, s));
                const auto t1 = Clock::now();
                CHECK(cudaEventRecord(b, s));
                CHECK(cudaEventSynchronize(b));
                float ms = 0;
                CHECK(cudaEventElapsedTime(&ms, a, b));
                const double c = std::chrono::duration<double, std::micro>(t1 - t0).count();
                if (timed) {
                    synced_call.push_back(c);
                    synced.push_back(ms * 1000.0 - c);
                }
            }
            if (h2d) CHECK(cudaMemcpy(back, dev, n, cudaMemcpyDeviceToHost));
            if (std::memcmp(back, host, n) != 0) {
                std::fprintf(stderr, "verification failed: %s %zu bytes\n", h2d ? "h2d" : "d2h", n);
                return 1;
            }
            const char* dir = h2d ? "h2d" : "d2h";
            for (const auto& [what, v] : {std::pair<const char*, std::vector<double>*>{"synced", &synced},
                                          {"synced_call", &synced_call}}) {
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
