// Does cudaMemset of device memory take a copy engine, and so give the next copy of another
// stream a turn (dma.channel_turn, engineturn.cu)? dmaprobe poisons a copy's device destination
// with cudaMemset on the legacy stream before each repetition, also before its duplex pair, whose
// copies run on streams of their own.
//
// On GPU 0, a copy on stream s (created non-blocking) of pinned memory, cudaMemcpyAsync then
// cudaStreamSynchronize(s), host clock from the call to the return; before it, untimed, on the
// legacy stream and then cudaDeviceSynchronize:
//   kernel     a one-block kernel writing a device buffer (what comes before every mode too)
//   memset     cudaMemset of 64 KiB of a device buffer
//   copy       a 64 KiB cudaMemcpy the same way (a turn: the reference)
//   copy_back  a 64 KiB cudaMemcpy the other way (no turn on this engine)
// Every mode once an iteration, in turn; 20 warm-ups, then ITER (default 300). 64 KiB and 1 MiB,
// both ways; the last copy's data checked.
//
// Output (stdout, CSV): dir,size,mode,median_us,p10_us,p90_us,reps
// Build: nvcc -O3 -arch=sm_90 memsetturn.cu -o memsetturn   (CUDA toolkit only)
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

using Clock = std::chrono::steady_clock;
constexpr int kWarmup = 20;
constexpr std::size_t kSide = 64 * 1024;

double since_us(Clock::time_point t) { return std::chrono::duration<double, std::micro>(Clock::now() - t).count(); }

double quantile(std::vector<double> v, double q) {
    std::sort(v.begin(), v.end());
    return v[static_cast<std::size_t>(q * static_cast<double>(v.size() - 1) + 0.5)];
}

__global__ void touch(unsigned char* p, std::size_t n, unsigned char v) {
    for (std::size_t i = threadIdx.x; i < n; i += blockDim.x) p[i] = v;
}

enum Mode { kKernel, kMemset, kCopy, kCopyBack, kModes };
const char* const kNames[kModes] = {"kernel", "memset", "copy", "copy_back"};

}  // namespace

int main(int argc, char** argv) {
    const int iterations = argc > 1 ? std::atoi(argv[1]) : 300;
    if (iterations < 10) {
        std::fprintf(stderr, "usage: memsetturn [ITERATIONS >= 10]\n");
        return 2;
    }
    CHECK(cudaSetDevice(0));
    constexpr std::size_t kMax = 1u << 20;
    unsigned char *h_src = nullptr, *h_dst = nullptr, *h_side = nullptr, *d_buf = nullptr, *d_side = nullptr,
                  *d_touch = nullptr;
    CHECK(cudaMallocHost(&h_src, kMax));
    CHECK(cudaMallocHost(&h_dst, kMax));
    CHECK(cudaMallocHost(&h_side, kMax));
    CHECK(cudaMalloc(&d_buf, kMax));
    CHECK(cudaMalloc(&d_side, kMax));
    CHECK(cudaMalloc(&d_touch, kMax));
    for (std::size_t i = 0; i < kMax; ++i) h_src[i] = static_cast<unsigned char>(i * 131 + 7) | 1;
    std::memset(h_side, 0x33, kMax);
    cudaStream_t s = nullptr;
    CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    std::printf("dir,size,mode,median_us,p10_us,p90_us,reps\n");
    for (const bool up : {false, true}) {
        for (const std::size_t size : {kSide, kMax}) {
            std::vector<double> us[kModes];
            for (int it = 0; it < kWarmup + iterations; ++it) {
                for (int m = 0; m < kModes; ++m) {
                    // The copy's device buffer written first, as dmaprobe's fill (a kernel).
                    touch<<<1, 256>>>(up ? d_touch : d_buf, size, static_cast<unsigned char>(0x5a + m));
                    CHECK(cudaGetLastError());
                    if (m == kMemset) CHECK(cudaMemset(d_side, 0x11 + it % 7, kSide));
                    if (m == kCopy || m == kCopyBack) {
                        const bool side_up = m == kCopy ? up : !up;
                        if (side_up) {
                            CHECK(cudaMemcpy(d_side, h_side, kSide, cudaMemcpyHostToDevice));
                        } else {
                            CHECK(cudaMemcpy(h_side, d_side, kSide, cudaMemcpyDeviceToHost));
                        }
                    }
                    CHECK(cudaDeviceSynchronize());
                    const auto t0 = Clock::now();
                    if (up) {
                        CHECK(cudaMemcpyAsync(d_buf, h_src, size, cudaMemcpyHostToDevice, s));
                    } else {
                        CHECK(cudaMemcpyAsync(h_dst, d_buf, size, cudaMemcpyDeviceToHost, s));
                    }
                    CHECK(cudaStreamSynchronize(s));
                    const double t = since_us(t0);
                    if (it >= kWarmup) us[m].push_back(t);
                }
            }
            if (up) {
                std::vector<unsigned char> got(size);
                CHECK(cudaMemcpy(got.data(), d_buf, size, cudaMemcpyDeviceToHost));
                if (std::memcmp(got.data(), h_src, size) != 0) {
                    std::fprintf(stderr, "h2d %zu B: the GPU's copy differs from the source\n", size);
                    return 1;
                }
            } else {
                const auto want = static_cast<unsigned char>(0x5a + kModes - 1);
                for (std::size_t i = 0; i < size; ++i) {
                    if (h_dst[i] != want) {
                        std::fprintf(stderr, "d2h %zu B: byte %zu is %d, not %d\n", size, i, h_dst[i], want);
                        return 1;
                    }
                }
            }
            for (int m = 0; m < kModes; ++m) {
                std::printf("%s,%zu,%s,%.3f,%.3f,%.3f,%zu\n", up ? "h2d" : "d2h", size, kNames[m], quantile(us[m], 0.5),
                            quantile(us[m], 0.1), quantile(us[m], 0.9), us[m].size());
            }
            std::fflush(stdout);
        }
    }
    CHECK(cudaStreamDestroy(s));
    CHECK(cudaFreeHost(h_src));
    CHECK(cudaFreeHost(h_dst));
    CHECK(cudaFreeHost(h_side));
    CHECK(cudaFree(d_buf));
    CHECK(cudaFree(d_side));
    CHECK(cudaFree(d_touch));
    return 0;
}
