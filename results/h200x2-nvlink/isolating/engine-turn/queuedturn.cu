// Does a copy queued behind another stream's copy of the same direction take a turn
// (dma.channel_turn: an idle engine turning to another stream's copy starts it 0.556 us later;
// engineturn.cu), and do the two run one after the other at all?
//
// On GPU 0, all behind a spin kernel on stream a (stream b waits for an event recorded behind
// it), so that both copies are queued before either starts; timed with events: from `start`
// (recorded behind the spin on a) to each copy's end event.
//   same    X (1 MiB) then Y (64 KiB) on stream a, the same direction
//   other   X on stream a, Y on stream b (non-blocking streams)
//   alone   Y alone on stream a (its time from the start)
// For each: the end of X, the end of Y, Y's end less X's end. 20 warm-ups, then ITER (default
// 300) iterations, the modes in turn every iteration; both directions; pinned host memory; the
// last copies' data checked.
//
// Output (stdout, CSV): dir,mode,x_end_us,y_end_us,y_after_x_us (medians),reps
// Build: nvcc -O3 -arch=sm_90 queuedturn.cu -o queuedturn   (CUDA toolkit only)
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

constexpr int kWarmup = 20;
constexpr std::size_t kX = 1u << 20;
constexpr std::size_t kY = 64u << 10;

__global__ void spin(long long cycles) {
    const long long t0 = clock64();
    while (clock64() - t0 < cycles) {
    }
}

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

enum Mode { kSame, kOther, kAlone, kModes };
const char* const kNames[kModes] = {"same", "other", "alone"};

}  // namespace

int main(int argc, char** argv) {
    const int iterations = argc > 1 ? std::atoi(argv[1]) : 300;
    if (iterations < 10) {
        std::fprintf(stderr, "usage: queuedturn [ITERATIONS >= 10]\n");
        return 2;
    }
    CHECK(cudaSetDevice(0));
    unsigned char *hx = nullptr, *hy = nullptr, *dx = nullptr, *dy = nullptr;
    CHECK(cudaMallocHost(&hx, kX));
    CHECK(cudaMallocHost(&hy, kY));
    CHECK(cudaMalloc(&dx, kX));
    CHECK(cudaMalloc(&dy, kY));
    for (std::size_t i = 0; i < kX; ++i) hx[i] = static_cast<unsigned char>(i * 7 + 1) | 1;
    for (std::size_t i = 0; i < kY; ++i) hy[i] = static_cast<unsigned char>(i * 13 + 3) | 1;
    CHECK(cudaMemset(dx, 0x5a, kX));
    CHECK(cudaMemset(dy, 0x6b, kY));
    cudaStream_t a = nullptr, b = nullptr;
    CHECK(cudaStreamCreateWithFlags(&a, cudaStreamNonBlocking));
    CHECK(cudaStreamCreateWithFlags(&b, cudaStreamNonBlocking));
    cudaEvent_t start, held, ex, ey;
    CHECK(cudaEventCreate(&start));
    CHECK(cudaEventCreate(&held));
    CHECK(cudaEventCreate(&ex));
    CHECK(cudaEventCreate(&ey));
    int clock_khz = 0;
    CHECK(cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, 0));
    const long long spin_cycles = static_cast<long long>(clock_khz) * 50 / 1000;  // 50 us
    std::printf("dir,mode,x_end_us,y_end_us,y_after_x_us,reps\n");
    for (const bool up : {false, true}) {
        const cudaMemcpyKind kind = up ? cudaMemcpyHostToDevice : cudaMemcpyDeviceToHost;
        std::vector<double> xe[kModes], ye[kModes], gap[kModes];
        for (int it = 0; it < kWarmup + iterations; ++it) {
            for (int m = 0; m < kModes; ++m) {
                spin<<<1, 1, 0, a>>>(spin_cycles);
                CHECK(cudaGetLastError());
                CHECK(cudaEventRecord(start, a));
                CHECK(cudaStreamWaitEvent(b, start, 0));
                cudaStream_t ys = m == kOther ? b : a;
                if (m != kAlone) {
                    if (up) {
                        CHECK(cudaMemcpyAsync(dx, hx, kX, kind, a));
                    } else {
                        CHECK(cudaMemcpyAsync(hx, dx, kX, kind, a));
                    }
                    CHECK(cudaEventRecord(ex, a));
                }
                if (up) {
                    CHECK(cudaMemcpyAsync(dy, hy, kY, kind, ys));
                } else {
                    CHECK(cudaMemcpyAsync(hy, dy, kY, kind, ys));
                }
                CHECK(cudaEventRecord(ey, ys));
                CHECK(cudaDeviceSynchronize());
                float x_ms = 0.0f, y_ms = 0.0f;
                CHECK(cudaEventElapsedTime(&y_ms, start, ey));
                if (m != kAlone) CHECK(cudaEventElapsedTime(&x_ms, start, ex));
                if (it >= kWarmup) {
                    xe[m].push_back(x_ms * 1e3);
                    ye[m].push_back(y_ms * 1e3);
                    gap[m].push_back((y_ms - x_ms) * 1e3);
                }
            }
        }
        // The last copies' data: out of the GPU the host buffers hold the device's bytes.
        if (!up) {
            for (std::size_t i = 0; i < kY; ++i) {
                if (hy[i] != 0x6b) {
                    std::fprintf(stderr, "d2h: byte %zu of Y is %d\n", i, hy[i]);
                    return 1;
                }
            }
            for (std::size_t i = 0; i < kX; ++i) {
                if (hx[i] != 0x5a) {
                    std::fprintf(stderr, "d2h: byte %zu of X is %d\n", i, hx[i]);
                    return 1;
                }
            }
        } else {
            std::vector<unsigned char> got(kY);
            CHECK(cudaMemcpy(got.data(), dy, kY, cudaMemcpyDeviceToHost));
            if (std::memcmp(got.data(), hy, kY) != 0) {
                std::fprintf(stderr, "h2d: Y differs\n");
                return 1;
            }
        }
        for (int m = 0; m < kModes; ++m) {
            std::printf("%s,%s,%.3f,%.3f,%.3f,%zu\n", up ? "h2d" : "d2h", kNames[m], m == kAlone ? 0.0 : median(xe[m]),
                        median(ye[m]), m == kAlone ? 0.0 : median(gap[m]), ye[m].size());
        }
        std::fflush(stdout);
    }
    return 0;
}
