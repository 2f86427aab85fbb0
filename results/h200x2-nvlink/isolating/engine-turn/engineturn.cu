// Does a blocking copy cost more when the work before it in its direction ran on another stream?
// (../duplex-beside: a blocking cudaMemcpy right after dmaprobe's duplex pair, whose copies ran on
// two streams of their own, takes 0.4-0.75 us longer than the same copy in a loop of its own on
// four 2xH200 leases, except a copy into the GPU of 4-16 KiB, which no engine carries.)
//
// On GPU 0, blocking cudaMemcpy (the legacy stream) of pinned memory, timed on the host clock from
// the call to its return, as dmaprobe's `pinned` rows; before each timed copy, untimed:
//   loop        nothing: the copy before it on its engine is the last repetition's, on its stream
//   same        a 4 KiB cudaMemcpy in the same direction on the legacy stream
//   other       a 4 KiB cudaMemcpyAsync in the same direction on stream s (created non-blocking),
//               then cudaStreamSynchronize(s)
//   other64     the same of 64 KiB (a copy into the GPU of 64 KiB goes through an engine)
//   other_then_same  `other64`, then `same`: the turn paid by an untimed copy
//   reverse     a 64 KiB cudaMemcpyAsync in the other direction on stream s, synchronised
// then a one-block kernel that writes the copy's device buffer (as dmaprobe's fill/poison before
// each copy) and cudaDeviceSynchronize. Every mode runs once an iteration, in turn, so the host's
// call state (../copy-levels) moves them alike; 20 warm-up iterations, then ITER (default 300).
// Sizes 4 KiB, 64 KiB, 1 MiB; both directions. Host sources non-zero, each copy's data checked
// after its last repetition.
//
// Output (stdout, CSV): dir,size,mode,median_us,p10_us,p90_us,reps
// Build: nvcc -O3 -arch=sm_90 engineturn.cu -o engineturn   (CUDA toolkit only)
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
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

using Clock = std::chrono::steady_clock;
constexpr int kWarmup = 20;
constexpr std::size_t kSmall = 4 * 1024;
constexpr std::size_t kMid = 64 * 1024;

double since_us(Clock::time_point t) { return std::chrono::duration<double, std::micro>(Clock::now() - t).count(); }

double quantile(std::vector<double> v, double q) {
    std::sort(v.begin(), v.end());
    return v[static_cast<std::size_t>(q * static_cast<double>(v.size() - 1) + 0.5)];
}

__global__ void touch(unsigned char* p, std::size_t n, unsigned char v) {
    for (std::size_t i = threadIdx.x; i < n; i += blockDim.x) p[i] = v;
}

enum Mode { kLoop, kSame, kOther, kOther64, kOtherThenSame, kReverse, kModes };
const char* const kNames[kModes] = {"loop", "same", "other", "other64", "other_then_same", "reverse"};

}  // namespace

int main(int argc, char** argv) {
    const int iterations = argc > 1 ? std::atoi(argv[1]) : 300;
    if (iterations < 10) {
        std::fprintf(stderr, "usage: engineturn [ITERATIONS >= 10]\n");
        return 2;
    }
    CHECK(cudaSetDevice(0));
    constexpr std::size_t kMax = 1u << 20;
    unsigned char *h_src = nullptr, *h_dst = nullptr, *h_side = nullptr, *d_buf = nullptr, *d_side = nullptr;
    CHECK(cudaMallocHost(&h_src, kMax));
    CHECK(cudaMallocHost(&h_dst, kMax));
    CHECK(cudaMallocHost(&h_side, kMax));
    CHECK(cudaMalloc(&d_buf, kMax));
    CHECK(cudaMalloc(&d_side, kMax));
    for (std::size_t i = 0; i < kMax; ++i) h_src[i] = static_cast<unsigned char>(i * 131 + 7) | 1;
    std::memset(h_side, 0x33, kMax);
    CHECK(cudaMemset(d_side, 0x44, kMax));
    cudaStream_t s = nullptr;
    CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    std::printf("dir,size,mode,median_us,p10_us,p90_us,reps\n");
    for (const bool up : {false, true}) {
        const cudaMemcpyKind kind = up ? cudaMemcpyHostToDevice : cudaMemcpyDeviceToHost;
        const cudaMemcpyKind back = up ? cudaMemcpyDeviceToHost : cudaMemcpyHostToDevice;
        // A side copy in this direction (same/other) or the other (reverse), never the timed buffers.
        const auto side = [&](std::size_t n, bool reverse, cudaStream_t st) {
            const bool side_up = reverse ? !up : up;
            void* dst = side_up ? static_cast<void*>(d_side) : static_cast<void*>(h_side);
            const void* src = side_up ? static_cast<const void*>(h_side) : static_cast<const void*>(d_side);
            if (st == nullptr) {
                CHECK(cudaMemcpy(dst, src, n, side_up ? cudaMemcpyHostToDevice : cudaMemcpyDeviceToHost));
            } else {
                CHECK(cudaMemcpyAsync(dst, src, n, reverse ? back : kind, st));
                CHECK(cudaStreamSynchronize(st));
            }
        };
        for (const std::size_t size : {kSmall, kMid, kMax}) {
            std::vector<double> us[kModes];
            for (int it = 0; it < kWarmup + iterations; ++it) {
                for (int m = 0; m < kModes; ++m) {
                    switch (m) {
                        case kSame: side(kSmall, false, nullptr); break;
                        case kOther: side(kSmall, false, s); break;
                        case kOther64: side(kMid, false, s); break;
                        case kOtherThenSame: side(kMid, false, s); side(kSmall, false, nullptr); break;
                        case kReverse: side(kMid, true, s); break;
                        default: break;
                    }
                    // The copy's device buffer written first (dmaprobe's poison or fill).
                    touch<<<1, 256>>>(d_buf, size, up ? 0 : static_cast<unsigned char>(0x5a + m));
                    CHECK(cudaGetLastError());
                    CHECK(cudaDeviceSynchronize());
                    const auto t0 = Clock::now();
                    if (up) {
                        CHECK(cudaMemcpy(d_buf, h_src, size, kind));
                    } else {
                        CHECK(cudaMemcpy(h_dst, d_buf, size, kind));
                    }
                    const double t = since_us(t0);
                    if (it >= kWarmup) us[m].push_back(t);
                }
            }
            // The last copy's data: every byte.
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
    return 0;
}
