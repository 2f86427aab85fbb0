// Which call state is this host in (README: a fast and a slow one, every driver call about 0.9 us
// apart; lease_states.py: the main plan's leases split by their blocking 64 KiB copies)? Times, on
// GPU 0, what the main plan's state indicator does, dmaprobe's way (pinned buffers, non-zero data,
// warm-ups, medians), plus the calls other isolating cases need the host's level of:
//   h2d_64k_us, d2h_64k_us   blocking cudaMemcpy of 64 KiB, pinned (the main plan's `pinned` rows)
//   mallochost_64k_us        cudaMallocHost of 64 KiB (then freed, outside the time)
//   record_call_us           the CPU's time in cudaEventRecord on an idle stream
//   wait_call_us             the CPU's time in cudaStreamWaitEvent on a recorded event
// and, with two GPUs (the calls dmaprobe's both-ways peer rows make, the model's runtime.*_call):
//   cross_wait_call_us       cudaStreamWaitEvent on GPU 1's stream for an event of GPU 0
//   set_device_call_us       cudaSetDevice to the other GPU
//   peer_on_call_1m_us       cudaMemcpyPeerAsync of 1 MiB, peer access enabled (over NVLink)
//   staged_call_1m_us        the same without peer access (staged through host memory, two pieces)
//   staged_call_16m_us       ... of 16 MiB (32 pieces): (this - the 1 MiB call) / 30 is a piece's time
// Each: 10 warm-ups, 200 repetitions (the staged calls 40), the median, p10 and p90. One line of
// CSV per quantity.
//
// Mode `interleaved N` (two GPUs, peer access enabled): N iterations, each one of every call above
// in turn but the staged ones, one CSV row an iteration, so that each call can be set beside the
// state its iteration's blocking copy shows (the state moves within a lease, in runs of ms to
// 0.3 s; hoststate_summary.py splits the iterations by it).
//
// Build: nvcc -O3 -arch=sm_90 hoststate.cu -o hoststate   (CUDA toolkit only)
// Run:   ./hoststate > hoststate.csv;  ./hoststate interleaved 20000 > interleaved.csv
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
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

using Clock = std::chrono::steady_clock;
constexpr int kWarmup = 10;
constexpr int kReps = 200;
constexpr std::size_t kBytes = 64 * 1024;

double quantile(std::vector<double> v, double q) {
    std::sort(v.begin(), v.end());
    return v[static_cast<std::size_t>(q * static_cast<double>(v.size() - 1) + 0.5)];
}

// body() returns the microseconds of one repetition.
void measure(const char* what, const std::function<double()>& body, int reps = kReps) {
    std::vector<double> us;
    for (int r = 0; r < kWarmup + reps; ++r) {
        const double t = body();
        if (r >= kWarmup) us.push_back(t);
    }
    std::printf("%s,%.3f,%.3f,%.3f,%d\n", what, quantile(us, 0.5), quantile(us, 0.1), quantile(us, 0.9), reps);
}

double since_us(Clock::time_point t) { return std::chrono::duration<double, std::micro>(Clock::now() - t).count(); }


// The calls of dmaprobe's both-ways peer rows. Peer access is enabled for the copies over NVLink
// and disabled again for the staged ones; every copy's data checked once.
void two_gpus(cudaStream_t s0, cudaEvent_t e0) {
    constexpr std::size_t kBig = 16u << 20;
    constexpr std::size_t kMiB = 1u << 20;
    unsigned char* src = nullptr;
    unsigned char* dst = nullptr;
    cudaStream_t s1 = nullptr;
    CHECK(cudaSetDevice(0));
    CHECK(cudaMalloc(&src, kBig));
    CHECK(cudaMemset(src, 0x5a, kBig));
    CHECK(cudaSetDevice(1));
    CHECK(cudaMalloc(&dst, kBig));
    CHECK(cudaStreamCreateWithFlags(&s1, cudaStreamNonBlocking));
    CHECK(cudaSetDevice(0));
    CHECK(cudaEventRecord(e0, s0));
    CHECK(cudaStreamSynchronize(s0));
    measure("cross_wait_call_us", [&] {
        CHECK(cudaSetDevice(1));
        const Clock::time_point t = Clock::now();
        CHECK(cudaStreamWaitEvent(s1, e0, 0));
        const double us = since_us(t);
        CHECK(cudaStreamSynchronize(s1));
        CHECK(cudaSetDevice(0));
        return us;
    });
    measure("set_device_call_us", [&] {
        const Clock::time_point t = Clock::now();
        CHECK(cudaSetDevice(1));
        const double us = since_us(t);
        CHECK(cudaSetDevice(0));
        return us;
    });
    const auto peer_copy = [&](std::size_t bytes) {
        CHECK(cudaSetDevice(0));
        const Clock::time_point t = Clock::now();
        CHECK(cudaMemcpyPeerAsync(dst, 1, src, 0, bytes, s0));
        const double us = since_us(t);
        CHECK(cudaStreamSynchronize(s0));
        return us;
    };
    const auto check_copy = [&](std::size_t bytes) {
        std::vector<unsigned char> host(bytes);
        CHECK(cudaSetDevice(1));
        CHECK(cudaMemcpy(host.data(), dst, bytes, cudaMemcpyDeviceToHost));
        for (std::size_t i = 0; i < bytes; ++i) {
            if (host[i] != 0x5a) {
                std::fprintf(stderr, "the peer copy's byte %zu is wrong\n", i);
                std::exit(1);
            }
        }
        CHECK(cudaMemset(dst, 0, kBig));
        CHECK(cudaDeviceSynchronize());
        CHECK(cudaSetDevice(0));
    };
    int can = 0;
    CHECK(cudaDeviceCanAccessPeer(&can, 0, 1));
    if (can) {
        CHECK(cudaSetDevice(0));
        CHECK(cudaDeviceEnablePeerAccess(1, 0));
        measure("peer_on_call_1m_us", [&] { return peer_copy(kMiB); });
        check_copy(kMiB);
        CHECK(cudaDeviceDisablePeerAccess(1));
    }
    measure("staged_call_1m_us", [&] { return peer_copy(kMiB); }, 40);
    check_copy(kMiB);
    measure("staged_call_16m_us", [&] { return peer_copy(kBig); }, 40);
    check_copy(kBig);
    CHECK(cudaSetDevice(1));
    CHECK(cudaStreamDestroy(s1));
    CHECK(cudaFree(dst));
    CHECK(cudaSetDevice(0));
    CHECK(cudaFree(src));
}


// One row an iteration: every call of the two-GPU rows beside a blocking 64 KiB copy each way.
void interleaved(int iterations) {
    constexpr std::size_t kMiB = 1u << 20;
    unsigned char *host = nullptr, *back = nullptr, *dev = nullptr, *src = nullptr, *dst = nullptr;
    cudaStream_t s0 = nullptr, s1 = nullptr;
    cudaEvent_t e0 = nullptr, e1 = nullptr;
    CHECK(cudaSetDevice(0));
    CHECK(cudaMallocHost(&host, kBytes));
    CHECK(cudaMallocHost(&back, kBytes));
    CHECK(cudaMalloc(&dev, kBytes));
    CHECK(cudaMalloc(&src, kMiB));
    CHECK(cudaMemset(src, 0x3c, kMiB));
    for (std::size_t i = 0; i < kBytes; ++i) host[i] = static_cast<unsigned char>(i * 131 + 7);
    CHECK(cudaStreamCreateWithFlags(&s0, cudaStreamNonBlocking));
    CHECK(cudaEventCreate(&e0));
    CHECK(cudaSetDevice(1));
    CHECK(cudaMalloc(&dst, kMiB));
    CHECK(cudaStreamCreateWithFlags(&s1, cudaStreamNonBlocking));
    CHECK(cudaEventCreate(&e1));
    CHECK(cudaSetDevice(0));
    int can = 0;
    CHECK(cudaDeviceCanAccessPeer(&can, 0, 1));
    if (!can) {
        std::fprintf(stderr, "GPU 0 cannot access GPU 1\n");
        std::exit(1);
    }
    CHECK(cudaDeviceEnablePeerAccess(1, 0));
    std::printf("iteration,h2d_64k_us,d2h_64k_us,record_call_us,wait_call_us,cross_wait_call_us,set_device_call_us,peer_on_call_1m_us\n");
    for (int it = -kWarmup; it < iterations; ++it) {
        Clock::time_point t = Clock::now();
        CHECK(cudaMemcpy(dev, host, kBytes, cudaMemcpyHostToDevice));
        const double h2d = since_us(t);
        t = Clock::now();
        CHECK(cudaMemcpy(back, dev, kBytes, cudaMemcpyDeviceToHost));
        const double d2h = since_us(t);
        t = Clock::now();
        CHECK(cudaEventRecord(e0, s0));
        const double record = since_us(t);
        CHECK(cudaStreamSynchronize(s0));
        t = Clock::now();
        CHECK(cudaStreamWaitEvent(s0, e0, 0));
        const double wait = since_us(t);
        t = Clock::now();
        CHECK(cudaSetDevice(1));
        const double set = since_us(t);
        t = Clock::now();
        CHECK(cudaStreamWaitEvent(s1, e0, 0));
        const double cross = since_us(t);
        CHECK(cudaStreamSynchronize(s1));
        CHECK(cudaSetDevice(0));
        t = Clock::now();
        CHECK(cudaMemcpyPeerAsync(dst, 1, src, 0, kMiB, s0));
        const double peer_on = since_us(t);
        CHECK(cudaStreamSynchronize(s0));
        if (it >= 0) std::printf("%d,%.3f,%.3f,%.3f,%.3f,%.3f,%.3f,%.3f\n", it, h2d, d2h, record, wait, cross, set, peer_on);
    }
    if (std::memcmp(host, back, kBytes) != 0) {
        std::fprintf(stderr, "the 64 KiB copy came back wrong\n");
        std::exit(1);
    }
    std::vector<unsigned char> got(kMiB);
    CHECK(cudaSetDevice(1));
    CHECK(cudaMemcpy(got.data(), dst, kMiB, cudaMemcpyDeviceToHost));
    for (std::size_t i = 0; i < kMiB; ++i) {
        if (got[i] != 0x3c) {
            std::fprintf(stderr, "the peer copy's byte %zu is wrong\n", i);
            std::exit(1);
        }
    }
}

}  // namespace

int main(int argc, char** argv) {
    if (argc > 1) {
        const int n = argc > 2 ? std::atoi(argv[2]) : 0;
        if (std::strcmp(argv[1], "interleaved") != 0 || n < 1 || n > 1000000) {
            std::fprintf(stderr, "usage: %s [interleaved N]   (N in 1..1000000)\n", argv[0]);
            return 2;
        }
        int count = 0;
        CHECK(cudaGetDeviceCount(&count));
        if (count < 2) {
            std::fprintf(stderr, "interleaved needs two GPUs, found %d\n", count);
            return 1;
        }
        interleaved(n);
        return 0;
    }
    int count = 0;
    CHECK(cudaGetDeviceCount(&count));
    if (count < 1) {
        std::fprintf(stderr, "needs a GPU\n");
        return 1;
    }
    CHECK(cudaSetDevice(0));
    unsigned char* host = nullptr;
    unsigned char* back = nullptr;
    unsigned char* dev = nullptr;
    CHECK(cudaMallocHost(&host, kBytes));
    CHECK(cudaMallocHost(&back, kBytes));
    CHECK(cudaMalloc(&dev, kBytes));
    for (std::size_t i = 0; i < kBytes; ++i) host[i] = static_cast<unsigned char>(i * 131 + 7);
    cudaStream_t s = nullptr;
    CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    cudaEvent_t e = nullptr;
    CHECK(cudaEventCreate(&e));
    std::printf("quantity,median,p10,p90,reps\n");
    measure("h2d_64k_us", [&] {
        const Clock::time_point t = Clock::now();
        CHECK(cudaMemcpy(dev, host, kBytes, cudaMemcpyHostToDevice));
        return since_us(t);
    });
    measure("d2h_64k_us", [&] {
        const Clock::time_point t = Clock::now();
        CHECK(cudaMemcpy(back, dev, kBytes, cudaMemcpyDeviceToHost));
        return since_us(t);
    });
    if (std::memcmp(host, back, kBytes) != 0) {
        std::fprintf(stderr, "the 64 KiB copy came back wrong\n");
        return 1;
    }
    measure("mallochost_64k_us", [&] {
        void* p = nullptr;
        const Clock::time_point t = Clock::now();
        CHECK(cudaMallocHost(&p, kBytes));
        const double us = since_us(t);
        CHECK(cudaFreeHost(p));
        return us;
    });
    measure("record_call_us", [&] {
        CHECK(cudaStreamSynchronize(s));
        const Clock::time_point t = Clock::now();
        CHECK(cudaEventRecord(e, s));
        return since_us(t);
    });
    measure("wait_call_us", [&] {
        CHECK(cudaEventRecord(e, s));
        CHECK(cudaStreamSynchronize(s));
        const Clock::time_point t = Clock::now();
        CHECK(cudaStreamWaitEvent(s, e, 0));
        return since_us(t);
    });
    CHECK(cudaStreamSynchronize(s));
    if (count >= 2) two_gpus(s, e);
    return 0;
}
