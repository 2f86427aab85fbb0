// How far apart do a stream's event records land, and what does a record cost the work behind it?
// (runtime.release_spacing; on a machine of two GPUs each is measured, on one GPU the peer case is left out)
// ../peer-sequence found dmaprobe's both-ways peer row 3 us faster than the isolating sweep's
// sequence where that sequence only adds two records, and the model follows both sequences when
// the 2xH200's cost sits in the spacing of a stream's records (about 3 us) rather than in every
// handoff after finished work (runtime.stream_wait_latency, fitted 3.38 us). Measured here on
// each GPU of the machine, from a synchronised, idle stream, 10 warm-ups and 500 repetitions:
//   rr      record A, record B                          B - A
//   rrr     record A, B, C                              B - A, C - B
//   d2h-rr  a 4 KiB copy out of the GPU, records A, B  B - A
//   peer-rr a 1 MiB peer copy to the other GPU (peer access on), records A, B   B - A
//   d2h-rwr the copy, record A, a wait on an event done long before, record B   B - A
//   d2h-r   the copy between two records S and A       A - S (the copy with its handoff)
//   d2h-xr  S recorded on another stream right before the copy's call, A behind the copy on its own
//           stream: A - S, the copy without a record before it on its stream (d2h-r less this:
//           what a record costs the work right behind it)
//   h2d-r, h2d-xr   the same with a 1 MiB copy into the GPU (an engine's read, not the front end's)
//   k-r, k-xr       the same with an empty kernel
//   g-rr, g-d2h-r, g-d2h-xr, g-k-r, g-k-xr   the same behind a gate: every stream involved first
//           waits for an event behind a 100 us spin kernel on a third stream, so that all calls
//           are queued before any of it runs and the CPU's calls put no gap between them
// Every repetition: case,gpu,rep,first_us,second_us. Copies verified; every CUDA call checked.
//
// Build: nvcc -O3 -arch=sm_90 spacing.cu -o spacing
// Run:   ./spacing > spacing.csv
#include <cuda_runtime.h>

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

constexpr int kWarmup = 10;
constexpr int kReps = 500;
constexpr std::size_t kSmall = std::size_t{4} << 10;
constexpr std::size_t kPeer = std::size_t{1} << 20;

__global__ void empty_kernel() {}

__device__ unsigned long long globaltimer_ns() {
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}

// Spins for ns nanoseconds of the GPU's global timer.
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

}  // namespace

int main() {
    int count = 0;
    CHECK(cudaGetDeviceCount(&count));
    if (count < 1) {
        std::fprintf(stderr, "needs a GPU\n");
        return 1;
    }
    // With one GPU (the H100's kind of host) the peer case is left out.
    const int gpus = count >= 2 ? 2 : 1;
    for (int a = 0; a < gpus && gpus == 2; ++a) {
        CHECK(cudaSetDevice(a));
        const cudaError_t e = cudaDeviceEnablePeerAccess(1 - a, 0);
        if (e == cudaErrorPeerAccessAlreadyEnabled) {
            (void)cudaGetLastError();
        } else {
            CHECK(e);
        }
    }
    std::vector<unsigned char> pattern(kPeer);
    for (std::size_t i = 0; i < kPeer; ++i) pattern[i] = static_cast<unsigned char>((i * 131u + 7u) % 251u + 1u);
    unsigned char* dev[2] = {nullptr, nullptr};
    unsigned char* peer_dst[2] = {nullptr, nullptr};
    for (int d = 0; d < gpus; ++d) {
        CHECK(cudaSetDevice(d));
        CHECK(cudaMalloc(&dev[d], kPeer));
        CHECK(cudaMalloc(&peer_dst[d], kPeer));
        CHECK(cudaMemcpy(dev[d], pattern.data(), kPeer, cudaMemcpyHostToDevice));
    }
    unsigned char* host = nullptr;
    CHECK(cudaMallocHost(&host, kPeer));
    std::memcpy(host + kSmall, pattern.data(), kPeer - kSmall);
    std::printf("case,gpu,rep,first_us,second_us\n");
    const char* cases[] = {"rr", "rrr", "d2h-rr", "peer-rr", "d2h-rwr", "d2h-r", "d2h-xr", "h2d-r", "h2d-xr", "k-r", "k-xr",
                           "g-rr", "g-d2h-r", "g-d2h-xr", "g-k-r", "g-k-xr"};
    for (int g = 0; g < gpus; ++g) {
        CHECK(cudaSetDevice(g));
        cudaStream_t s, other, gate;
        CHECK(cudaStreamCreateWithFlags(&gate, cudaStreamNonBlocking));
        CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
        CHECK(cudaStreamCreateWithFlags(&other, cudaStreamNonBlocking));
        unsigned char* landing = nullptr;
        CHECK(cudaMalloc(&landing, kPeer));
        cudaEvent_t a, b, c, done, opened;
        for (cudaEvent_t* e : {&a, &b, &c, &done}) CHECK(cudaEventCreate(e));
        CHECK(cudaEventCreateWithFlags(&opened, cudaEventDisableTiming));
        CHECK(cudaEventRecord(done, s));
        CHECK(cudaDeviceSynchronize());
        for (const char* which : cases) {
            const std::string gk = which;
            const bool gated = gk.rfind("g-", 0) == 0;
            const std::string k = gated ? gk.substr(2) : gk;
            if (k == "peer-rr" && gpus < 2) continue;
            std::memset(host, 0, kSmall);
            for (int r = 0; r < kWarmup + kReps; ++r) {
                CHECK(cudaDeviceSynchronize());
                double first = 0, second = 0;
                if (gated) {
                    spin<<<1, 1, 0, gate>>>(100000ULL);
                    CHECK(cudaGetLastError());
                    CHECK(cudaEventRecord(opened, gate));
                    CHECK(cudaStreamWaitEvent(s, opened, 0));
                    CHECK(cudaStreamWaitEvent(other, opened, 0));
                }
                const bool with_s = k == "d2h-r" || k == "h2d-r" || k == "k-r";
                const bool with_x = k == "d2h-xr" || k == "h2d-xr" || k == "k-xr";
                if (with_s) CHECK(cudaEventRecord(c, s));
                if (with_x) CHECK(cudaEventRecord(c, other));
                if (k == "h2d-r" || k == "h2d-xr") CHECK(cudaMemcpyAsync(landing, host + kSmall, kPeer - kSmall, cudaMemcpyHostToDevice, s));
                if (k == "k-r" || k == "k-xr") {
                    empty_kernel<<<1, 1, 0, s>>>();
                    CHECK(cudaGetLastError());
                }
                if (k == "d2h-rr" || k == "d2h-rwr" || k == "d2h-r" || k == "d2h-xr") {
                    CHECK(cudaMemcpyAsync(host, dev[g], kSmall, cudaMemcpyDeviceToHost, s));
                }
                if (k == "peer-rr") CHECK(cudaMemcpyPeerAsync(peer_dst[1 - g], 1 - g, dev[g], g, kPeer, s));
                CHECK(cudaEventRecord(a, s));
                if (k == "d2h-rwr") CHECK(cudaStreamWaitEvent(s, done, 0));
                if (!with_s && !with_x) CHECK(cudaEventRecord(b, s));
                if (k == "rrr") CHECK(cudaEventRecord(c, s));
                CHECK(cudaDeviceSynchronize());
                if (with_s || with_x) {
                    first = elapsed_us(c, a);
                } else {
                    first = elapsed_us(a, b);
                    if (k == "rrr") second = elapsed_us(b, c);
                }
                if (r >= kWarmup) std::printf("%s,%d,%d,%.3f,%.3f\n", which, g, r - kWarmup, first, second);
            }
            if ((k == "d2h-rr" || k == "d2h-rwr" || k == "d2h-r" || k == "d2h-xr") && std::memcmp(host, pattern.data(), kSmall) != 0) {
                std::fprintf(stderr, "verification failed: %s on GPU %d\n", which, g);
                return 1;
            }
            if (k == "h2d-r" || k == "h2d-xr") {
                std::vector<unsigned char> h(kPeer - kSmall);
                CHECK(cudaMemcpy(h.data(), landing, kPeer - kSmall, cudaMemcpyDeviceToHost));
                if (std::memcmp(h.data(), pattern.data(), kPeer - kSmall) != 0) {
                    std::fprintf(stderr, "verification failed: %s on GPU %d\n", which, g);
                    return 1;
                }
            }
            if (k == "peer-rr") {
                std::vector<unsigned char> h(kPeer);
                CHECK(cudaSetDevice(1 - g));
                CHECK(cudaMemcpy(h.data(), peer_dst[1 - g], kPeer, cudaMemcpyDeviceToHost));
                CHECK(cudaSetDevice(g));
                if (std::memcmp(h.data(), pattern.data(), kPeer) != 0) {
                    std::fprintf(stderr, "verification failed: peer copy from GPU %d\n", g);
                    return 1;
                }
            }
        }
        std::fflush(stdout);
    }
    return 0;
}
