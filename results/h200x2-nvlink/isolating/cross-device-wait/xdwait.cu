// What one GPU's stream takes to learn that work on the other GPU is done, and how the runtime
// stages a peer copy when peer access is off. The model prices both with one parameter,
// runtime.cross_device_wait, fitted to the staged peer copies of ../peer-sizes; this program
// measures it on its own:
//   1. `pingpong`: streams on GPU 0 and GPU 1 wait for each other's events in turn, N times,
//      behind a spin kernel that holds GPU 0 until every call is queued. The events on GPU 0
//      give N round trips: two cross-device waits each. The same on two streams of one GPU
//      gives the same-device wait (runtime.stream_wait_latency).
//   2. `handoff`: a 512 KiB piece copied out of GPU 0 into pinned memory and from there into
//      GPU 1, N pieces through one buffer (each waits for the last): a piece costs both copies
//      and two cross-device waits. The same with both copies on GPU 0's streams (one GPU) costs
//      both copies and two same-device waits.
//   3. `staged`: cudaMemcpyPeerAsync with peer access off, 64 KiB to 16 MiB: the event interval,
//      and how long the call keeps the CPU (a call that returns at once leaves the staging to
//      the GPUs; one that returns with the copy done stages on the CPU).
//
// Build: nvcc -O3 -arch=sm_90 xdwait.cu -o xdwait
// Run:   ./xdwait > xdwait.csv     (progress on stderr; needs two GPUs)
//
// One warm-up and 30 timed repetitions per case, medians and min/max; copied data verified.
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
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

constexpr std::size_t kKiB = 1024;
constexpr std::size_t kPiece = 512 * kKiB;
constexpr int kRounds = 200;       // ping-pong round trips per repetition
constexpr int kPieces = 64;        // handoff pieces per repetition
constexpr int kReps = 30;
constexpr unsigned long long kHoldNs = 20'000'000;  // the spin kernel: far longer than queueing 800 calls (about 2 ms)

__global__ void spin_kernel(unsigned long long ns) {
    unsigned long long t0;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
    for (;;) {
        unsigned long long t;
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
        if (t - t0 >= ns) break;
    }
}

__global__ void fill_kernel(std::uint32_t* p, std::size_t words, std::uint32_t seed) {
    for (std::size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < words; i += std::size_t{gridDim.x} * blockDim.x) {
        p[i] = static_cast<std::uint32_t>(i) * 2654435761u ^ seed;
    }
}

__global__ void check_kernel(const std::uint32_t* p, std::size_t words, std::uint32_t seed, unsigned* bad) {
    for (std::size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < words; i += std::size_t{gridDim.x} * blockDim.x) {
        if (p[i] != (static_cast<std::uint32_t>(i) * 2654435761u ^ seed)) atomicAdd(bad, 1u);
    }
}

void fill(int dev, void* p, std::size_t bytes, std::uint32_t seed) {
    CHECK(cudaSetDevice(dev));
    fill_kernel<<<264, 256>>>(static_cast<std::uint32_t*>(p), bytes / 4, seed);
    CHECK(cudaGetLastError());
    CHECK(cudaDeviceSynchronize());
}

void verify(int dev, const void* p, std::size_t bytes, std::uint32_t seed, const char* what) {
    CHECK(cudaSetDevice(dev));
    unsigned* bad = nullptr;
    CHECK(cudaMallocManaged(&bad, sizeof(unsigned)));
    *bad = 0;
    check_kernel<<<264, 256>>>(static_cast<const std::uint32_t*>(p), bytes / 4, seed, bad);
    CHECK(cudaGetLastError());
    CHECK(cudaDeviceSynchronize());
    if (*bad != 0) {
        std::fprintf(stderr, "verification failed: %s: %u words wrong\n", what, *bad);
        std::exit(1);
    }
    CHECK(cudaFree(bad));
}

struct Stats {
    double median, min, max;
};

Stats stats(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    const std::size_t n = v.size();
    const double med = n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
    return {med, v.front(), v.back()};
}

void print(const char* test, const char* variant, std::size_t bytes, const char* unit, const Stats& s, const char* note) {
    std::printf("%s,%s,%zu,%s,%.4f,%.4f,%.4f,%s\n", test, variant, bytes, unit, s.median, s.min, s.max, note);
    std::fflush(stdout);
}

float elapsed_us(cudaEvent_t a, cudaEvent_t b) {
    float ms = 0;
    CHECK(cudaEventElapsedTime(&ms, a, b));
    return ms * 1000.0f;
}

void set_peer_access(bool on) {
    for (int a = 0; a < 2; ++a) {
        CHECK(cudaSetDevice(a));
        const cudaError_t e = on ? cudaDeviceEnablePeerAccess(1 - a, 0) : cudaDeviceDisablePeerAccess(1 - a);
        if (e == cudaErrorPeerAccessAlreadyEnabled || e == cudaErrorPeerAccessNotEnabled) {
            (void)cudaGetLastError();
        } else {
            CHECK(e);
        }
    }
}

// 1. Streams x (on GPU 0) and y (on GPU gy) wait for each other in turn, `rounds` times; events
// on x. With hold_ns 0 there is no spin: the first event is recorded on an idle GPU, as
// dmaprobe's start event of a peer row both ways is, and one round shows what that costs.
void pingpong(int gy, const char* variant, int rounds, unsigned long long hold_ns) {
    cudaStream_t x, y;
    CHECK(cudaSetDevice(0));
    CHECK(cudaStreamCreateWithFlags(&x, cudaStreamNonBlocking));
    CHECK(cudaSetDevice(gy));
    CHECK(cudaStreamCreateWithFlags(&y, cudaStreamNonBlocking));
    std::vector<cudaEvent_t> ex(static_cast<std::size_t>(rounds) + 1), ey(static_cast<std::size_t>(rounds));
    CHECK(cudaSetDevice(0));
    for (auto& e : ex) CHECK(cudaEventCreate(&e));
    CHECK(cudaSetDevice(gy));
    for (auto& e : ey) CHECK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
    std::vector<double> per_round;
    for (int rep = 0; rep <= kReps; ++rep) {
        CHECK(cudaSetDevice(0));
        if (hold_ns > 0) {
            spin_kernel<<<1, 1, 0, x>>>(hold_ns);
            CHECK(cudaGetLastError());
        }
        CHECK(cudaEventRecord(ex[0], x));
        for (int i = 0; i < rounds; ++i) {
            CHECK(cudaSetDevice(gy));
            CHECK(cudaStreamWaitEvent(y, ex[static_cast<std::size_t>(i)], 0));
            CHECK(cudaEventRecord(ey[static_cast<std::size_t>(i)], y));
            CHECK(cudaSetDevice(0));
            CHECK(cudaStreamWaitEvent(x, ey[static_cast<std::size_t>(i)], 0));
            CHECK(cudaEventRecord(ex[static_cast<std::size_t>(i) + 1], x));
        }
        const auto last = static_cast<std::size_t>(rounds);
        CHECK(cudaEventSynchronize(ex[last]));
        if (rep > 0) per_round.push_back(elapsed_us(ex[0], ex[last]) / rounds);
    }
    print("pingpong", variant, 0, "us_per_round_trip", stats(per_round),
          "two waits a round trip, each for an event of the other stream");
    for (auto& e : ex) CHECK(cudaEventDestroy(e));
    for (auto& e : ey) CHECK(cudaEventDestroy(e));
    CHECK(cudaStreamDestroy(x));
    CHECK(cudaStreamDestroy(y));
}

// 2. Pieces out of GPU 0 into one pinned buffer and from it into GPU gy, one at a time.
void handoff(int gy, const char* variant) {
    void* src = nullptr;
    void* dst = nullptr;
    void* host = nullptr;
    const std::size_t total = kPiece * kPieces;
    CHECK(cudaSetDevice(0));
    CHECK(cudaMalloc(&src, total));
    CHECK(cudaSetDevice(gy));
    CHECK(cudaMalloc(&dst, total));
    CHECK(cudaMallocHost(&host, kPiece));
    cudaStream_t x, y;
    CHECK(cudaSetDevice(0));
    CHECK(cudaStreamCreateWithFlags(&x, cudaStreamNonBlocking));
    CHECK(cudaSetDevice(gy));
    CHECK(cudaStreamCreateWithFlags(&y, cudaStreamNonBlocking));
    std::vector<cudaEvent_t> out(kPieces), in(kPieces);
    cudaEvent_t start, stop;
    CHECK(cudaSetDevice(0));
    CHECK(cudaEventCreate(&start));
    CHECK(cudaEventCreate(&stop));
    for (auto& e : out) CHECK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
    CHECK(cudaSetDevice(gy));
    for (auto& e : in) CHECK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
    std::vector<double> per_piece;
    std::uint32_t seed = 0;
    for (int rep = 0; rep <= kReps; ++rep) {
        seed = 0x9e3779b9u * static_cast<std::uint32_t>(rep + 1);
        fill(0, src, total, seed);
        CHECK(cudaSetDevice(0));
        spin_kernel<<<1, 1, 0, x>>>(kHoldNs);
        CHECK(cudaGetLastError());
        CHECK(cudaEventRecord(start, x));
        for (int k = 0; k < kPieces; ++k) {
            const std::size_t off = static_cast<std::size_t>(k) * kPiece;
            CHECK(cudaSetDevice(0));
            if (k > 0) CHECK(cudaStreamWaitEvent(x, in[static_cast<std::size_t>(k) - 1], 0));
            CHECK(cudaMemcpyAsync(host, static_cast<char*>(src) + off, kPiece, cudaMemcpyDeviceToHost, x));
            CHECK(cudaEventRecord(out[static_cast<std::size_t>(k)], x));
            CHECK(cudaSetDevice(gy));
            CHECK(cudaStreamWaitEvent(y, out[static_cast<std::size_t>(k)], 0));
            CHECK(cudaMemcpyAsync(static_cast<char*>(dst) + off, host, kPiece, cudaMemcpyHostToDevice, y));
            CHECK(cudaEventRecord(in[static_cast<std::size_t>(k)], y));
        }
        CHECK(cudaSetDevice(0));
        CHECK(cudaStreamWaitEvent(x, in[kPieces - 1], 0));
        CHECK(cudaEventRecord(stop, x));
        CHECK(cudaEventSynchronize(stop));
        if (rep > 0) per_piece.push_back(elapsed_us(start, stop) / kPieces);
    }
    verify(gy, dst, total, seed, "handoff");
    print("handoff", variant, kPiece, "us_per_piece", stats(per_piece),
          "a piece out of GPU 0 into pinned memory and into the destination, one buffer: both copies and two waits");
    for (auto& e : out) CHECK(cudaEventDestroy(e));
    for (auto& e : in) CHECK(cudaEventDestroy(e));
    CHECK(cudaEventDestroy(start));
    CHECK(cudaEventDestroy(stop));
    CHECK(cudaStreamDestroy(x));
    CHECK(cudaStreamDestroy(y));
    CHECK(cudaFreeHost(host));
    CHECK(cudaFree(src));
    CHECK(cudaFree(dst));
}

// The copies of one piece alone: what `handoff` pays besides its waits.
void piece_copies() {
    void* dev = nullptr;
    void* host = nullptr;
    CHECK(cudaSetDevice(0));
    CHECK(cudaMalloc(&dev, kPiece));
    CHECK(cudaMallocHost(&host, kPiece));
    std::memset(host, 0x5a, kPiece);
    cudaStream_t s;
    CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    cudaEvent_t a, b;
    CHECK(cudaEventCreate(&a));
    CHECK(cudaEventCreate(&b));
    for (int dir = 0; dir < 2; ++dir) {
        std::vector<double> t;
        for (int rep = 0; rep <= kReps; ++rep) {
            spin_kernel<<<1, 1, 0, s>>>(100'000);
            CHECK(cudaGetLastError());
            CHECK(cudaEventRecord(a, s));
            for (int k = 0; k < kPieces; ++k) {
                if (dir == 0) {
                    CHECK(cudaMemcpyAsync(host, dev, kPiece, cudaMemcpyDeviceToHost, s));
                } else {
                    CHECK(cudaMemcpyAsync(dev, host, kPiece, cudaMemcpyHostToDevice, s));
                }
            }
            CHECK(cudaEventRecord(b, s));
            CHECK(cudaEventSynchronize(b));
            if (rep > 0) t.push_back(elapsed_us(a, b) / kPieces);
        }
        print("piece", dir == 0 ? "d2h" : "h2d", kPiece, "us_per_piece", stats(t), "back-to-back copies of one piece on one stream");
    }
    CHECK(cudaEventDestroy(a));
    CHECK(cudaEventDestroy(b));
    CHECK(cudaStreamDestroy(s));
    CHECK(cudaFreeHost(host));
    CHECK(cudaFree(dev));
}

// 3. cudaMemcpyPeerAsync with peer access off: the event interval and the call's CPU time.
void staged(std::size_t bytes) {
    void* src = nullptr;
    void* dst = nullptr;
    CHECK(cudaSetDevice(0));
    CHECK(cudaMalloc(&src, bytes));
    CHECK(cudaSetDevice(1));
    CHECK(cudaMalloc(&dst, bytes));
    CHECK(cudaSetDevice(0));
    cudaStream_t s;
    CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    cudaEvent_t a, b;
    CHECK(cudaEventCreate(&a));
    CHECK(cudaEventCreate(&b));
    std::vector<double> gpu_us, call_us;
    std::uint32_t seed = 0;
    for (int rep = 0; rep <= kReps; ++rep) {
        seed = 0x85ebca6bu * static_cast<std::uint32_t>(rep + 7);
        fill(0, src, bytes, seed);
        CHECK(cudaSetDevice(0));
        CHECK(cudaEventRecord(a, s));
        const auto t0 = std::chrono::steady_clock::now();
        CHECK(cudaMemcpyPeerAsync(dst, 1, src, 0, bytes, s));
        const auto t1 = std::chrono::steady_clock::now();
        CHECK(cudaEventRecord(b, s));
        CHECK(cudaEventSynchronize(b));
        if (rep > 0) {
            gpu_us.push_back(elapsed_us(a, b));
            call_us.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count());
        }
    }
    verify(1, dst, bytes, seed, "staged");
    print("staged", "events", bytes, "us", stats(gpu_us), "cudaMemcpyPeerAsync, peer access off: start to stop event");
    print("staged", "call", bytes, "us", stats(call_us), "the same: CPU time inside cudaMemcpyPeerAsync");
    CHECK(cudaEventDestroy(a));
    CHECK(cudaEventDestroy(b));
    CHECK(cudaStreamDestroy(s));
    CHECK(cudaSetDevice(0));
    CHECK(cudaFree(src));
    CHECK(cudaSetDevice(1));
    CHECK(cudaFree(dst));
}

}  // namespace

int main() {
    int n = 0;
    CHECK(cudaGetDeviceCount(&n));
    std::printf("test,variant,bytes,unit,median,min,max,note\n");
    if (n < 2) {
        std::fprintf(stderr, "xdwait needs two GPUs; this machine has %d\n", n);
        return 1;
    }
    set_peer_access(false);
    std::fprintf(stderr, "ping-pong\n");
    pingpong(0, "same_gpu", kRounds, kHoldNs);
    pingpong(1, "cross_gpu", kRounds, kHoldNs);
    pingpong(0, "same_gpu_idle_once", 1, 0);
    pingpong(1, "cross_gpu_idle_once", 1, 0);
    std::fprintf(stderr, "handoff\n");
    piece_copies();
    handoff(0, "same_gpu");
    handoff(1, "cross_gpu");
    std::fprintf(stderr, "staged\n");
    for (std::size_t b : {64 * kKiB, 256 * kKiB, 512 * kKiB, 1024 * kKiB, 4096 * kKiB, 16384 * kKiB}) staged(b);
    return 0;
}
