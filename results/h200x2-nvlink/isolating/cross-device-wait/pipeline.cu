// What paces a staged peer copy (peer access off)? The runtime moves 512 KiB pieces through
// pinned host buffers: a device-to-host copy on the source GPU, then a host-to-device copy on
// the destination, handed over by events across the GPUs. Measured: 13.8 us a piece, where one
// GPU's back-to-back copies of a piece take 12.0-12.4 us and a cross-GPU wait 5.65 us (xdwait).
// This program builds the pipeline by hand and takes it apart:
//   1. `chain`: 64 host-to-device pieces back to back on GPU 1 (a) alone, (b) each behind a
//      cudaStreamWaitEvent on an event of GPU 0 that completed long before, (c) the same with an
//      event of another stream of GPU 1; and device-to-host pieces on GPU 0 likewise. A wait
//      that is already satisfied may still cost its channel something.
//   2. `pipeline`: the staged copy by hand, 64 pieces through B = 1, 2, 3, 4, 6 and 64 buffers, a
//      piece leaving GPU 0 once the piece B before it has entered GPU 1 (two streams, events);
//      `by_hand_source_done` times the same runs to the last piece's leaving GPU 0.
//   3. `runtime`: cudaMemcpyPeerAsync of the same 32 MiB with peer access off.
// Times are per piece, from an event after a spin kernel that holds the streams until every
// call is queued (the runtime's own call cannot be held: it is timed from its start event).
//
// Build: nvcc -O3 -arch=sm_90 pipeline.cu -o pipeline
// Run:   ./pipeline > pipeline.csv     (needs two GPUs)
// Two warm-ups and 20 timed repetitions per cell; medians, min and max; the copied data verified.
#include <cuda_runtime.h>

#include <algorithm>
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

constexpr std::size_t kPiece = 512 * 1024;
constexpr int kPieces = 64;
constexpr std::size_t kTotal = kPiece * kPieces;
constexpr int kWarm = 2;
constexpr int kReps = 20;
constexpr unsigned long long kHoldNs = 5'000'000;  // longer than queueing the calls
constexpr int kMaxBuffers = 6;  // and kPieces

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

void fill(int dev, void* p, std::uint32_t seed) {
    CHECK(cudaSetDevice(dev));
    fill_kernel<<<264, 256>>>(static_cast<std::uint32_t*>(p), kTotal / 4, seed);
    CHECK(cudaGetLastError());
    CHECK(cudaDeviceSynchronize());
}

void verify(int dev, const void* p, std::uint32_t seed, const char* what) {
    CHECK(cudaSetDevice(dev));
    unsigned* bad = nullptr;
    CHECK(cudaMalloc(&bad, sizeof(unsigned)));
    CHECK(cudaMemset(bad, 0, sizeof(unsigned)));
    check_kernel<<<264, 256>>>(static_cast<const std::uint32_t*>(p), kTotal / 4, seed, bad);
    CHECK(cudaGetLastError());
    unsigned host = 0;
    CHECK(cudaMemcpy(&host, bad, sizeof host, cudaMemcpyDeviceToHost));
    CHECK(cudaFree(bad));
    if (host != 0) {
        std::fprintf(stderr, "verification failed: %s: %u words wrong\n", what, host);
        std::exit(1);
    }
}

struct Stats {
    double median, min, max;
};

Stats stats(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    const std::size_t n = v.size();
    return {n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]), v.front(), v.back()};
}

void print(const char* test, const char* variant, int buffers, const Stats& s) {
    std::printf("%s,%s,%d,%.4f,%.4f,%.4f\n", test, variant, buffers, s.median, s.min, s.max);
    std::fflush(stdout);
}

struct Setup {
    void* src = nullptr;   // GPU 0
    void* dst = nullptr;   // GPU 1
    void* host = nullptr;  // pinned, kTotal (chains) or kMaxBuffers pieces (pipeline)
    cudaStream_t s0{}, s1{}, s1b{};
    cudaEvent_t start{}, stop{}, stop1{}, done0{}, done1{}, downs{};
    std::vector<cudaEvent_t> out, in;  // per piece: left GPU 0, entered GPU 1
};

double elapsed_us(cudaEvent_t a, cudaEvent_t b) {
    float ms = 0;
    CHECK(cudaEventElapsedTime(&ms, a, b));
    return ms * 1000.0;
}

// 1. Back-to-back pieces on one GPU, each optionally behind a wait on an event long complete.
void chain(Setup& g, bool h2d, const char* wait_on) {
    const int dev = h2d ? 1 : 0;
    cudaStream_t s = h2d ? g.s1 : g.s0;
    cudaEvent_t start = h2d ? g.stop1 : g.start;  // on the timed stream's GPU
    cudaEvent_t stop = h2d ? g.done1 : g.stop;
    // Completed before the timed region: an event of the other GPU (and `ready`, below, of
    // another stream of this one).
    cudaEvent_t other_gpu = h2d ? g.done0 : g.done1;
    cudaEvent_t ready{};
    CHECK(cudaSetDevice(dev));
    CHECK(cudaEventCreateWithFlags(&ready, cudaEventDisableTiming));
    cudaStream_t side{};
    CHECK(cudaStreamCreateWithFlags(&side, cudaStreamNonBlocking));
    CHECK(cudaEventRecord(ready, side));
    CHECK(cudaSetDevice(1 - dev));
    CHECK(cudaEventRecord(other_gpu, h2d ? g.s0 : g.s1));
    CHECK(cudaDeviceSynchronize());
    CHECK(cudaSetDevice(dev));
    CHECK(cudaDeviceSynchronize());
    std::vector<double> t;
    for (int rep = 0; rep < kWarm + kReps; ++rep) {
        CHECK(cudaSetDevice(dev));
        spin_kernel<<<1, 1, 0, s>>>(kHoldNs);
        CHECK(cudaGetLastError());
        CHECK(cudaEventRecord(start, s));
        for (int k = 0; k < kPieces; ++k) {
            const std::size_t off = static_cast<std::size_t>(k) * kPiece;
            if (wait_on[0] == 'o') CHECK(cudaStreamWaitEvent(s, other_gpu, 0));
            if (wait_on[0] == 's') CHECK(cudaStreamWaitEvent(s, ready, 0));
            if (h2d) {
                CHECK(cudaMemcpyAsync(static_cast<char*>(g.dst) + off, static_cast<char*>(g.host) + off, kPiece,
                                      cudaMemcpyHostToDevice, s));
            } else {
                CHECK(cudaMemcpyAsync(static_cast<char*>(g.host) + off, static_cast<char*>(g.src) + off, kPiece,
                                      cudaMemcpyDeviceToHost, s));
            }
        }
        CHECK(cudaEventRecord(stop, s));
        CHECK(cudaEventSynchronize(stop));
        if (rep >= kWarm) t.push_back(elapsed_us(start, stop) / kPieces);
    }
    print("chain", h2d ? (wait_on[0] == 'n' ? "h2d" : wait_on[0] == 'o' ? "h2d_wait_other_gpu" : "h2d_wait_same_gpu")
                       : (wait_on[0] == 'n' ? "d2h" : wait_on[0] == 'o' ? "d2h_wait_other_gpu" : "d2h_wait_same_gpu"),
          1, stats(t));
    CHECK(cudaSetDevice(dev));
    CHECK(cudaEventDestroy(ready));
    CHECK(cudaStreamDestroy(side));
}

// 2. The staged pipeline by hand through `buffers` pinned buffers.
void pipeline(Setup& g, int buffers) {
    std::vector<double> t, t_down;
    std::uint32_t seed = 0;
    for (int rep = 0; rep < kWarm + kReps; ++rep) {
        seed = 0x9e3779b9u * static_cast<std::uint32_t>(rep + 1) + static_cast<std::uint32_t>(buffers);
        fill(0, g.src, seed);
        CHECK(cudaSetDevice(1));
        CHECK(cudaMemset(g.dst, 0, kTotal));
        CHECK(cudaDeviceSynchronize());
        CHECK(cudaSetDevice(0));
        spin_kernel<<<1, 1, 0, g.s0>>>(kHoldNs);
        CHECK(cudaGetLastError());
        CHECK(cudaEventRecord(g.start, g.s0));
        for (int k = 0; k < kPieces; ++k) {
            const auto ku = static_cast<std::size_t>(k);
            const std::size_t off = ku * kPiece;
            char* buf = static_cast<char*>(g.host) + static_cast<std::size_t>(k % buffers) * kPiece;
            CHECK(cudaSetDevice(0));
            if (k >= buffers) CHECK(cudaStreamWaitEvent(g.s0, g.in[ku - static_cast<std::size_t>(buffers)], 0));
            CHECK(cudaMemcpyAsync(buf, static_cast<char*>(g.src) + off, kPiece, cudaMemcpyDeviceToHost, g.s0));
            CHECK(cudaEventRecord(g.out[ku], g.s0));
            CHECK(cudaSetDevice(1));
            CHECK(cudaStreamWaitEvent(g.s1, g.out[ku], 0));
            CHECK(cudaMemcpyAsync(static_cast<char*>(g.dst) + off, buf, kPiece, cudaMemcpyHostToDevice, g.s1));
            CHECK(cudaEventRecord(g.in[ku], g.s1));
        }
        CHECK(cudaSetDevice(0));
        CHECK(cudaEventRecord(g.downs, g.s0));
        CHECK(cudaStreamWaitEvent(g.s0, g.in[kPieces - 1], 0));
        CHECK(cudaEventRecord(g.stop, g.s0));
        CHECK(cudaEventSynchronize(g.stop));
        if (rep >= kWarm) {
            t.push_back(elapsed_us(g.start, g.stop) / kPieces);
            t_down.push_back(elapsed_us(g.start, g.downs) / kPieces);
        }
    }
    verify(1, g.dst, seed, "pipeline");
    print("pipeline", "by_hand", buffers, stats(t));
    // The source's copies alone: from the start to the last piece's leaving GPU 0.
    print("pipeline", "by_hand_source_done", buffers, stats(t_down));
}

// 3. The runtime's own staging of the same copy.
void runtime(Setup& g) {
    std::vector<double> t;
    std::uint32_t seed = 0;
    for (int rep = 0; rep < kWarm + kReps; ++rep) {
        seed = 0x85ebca6bu * static_cast<std::uint32_t>(rep + 3);
        fill(0, g.src, seed);
        CHECK(cudaSetDevice(0));
        CHECK(cudaEventRecord(g.start, g.s0));
        CHECK(cudaMemcpyPeerAsync(g.dst, 1, g.src, 0, kTotal, g.s0));
        CHECK(cudaEventRecord(g.stop, g.s0));
        CHECK(cudaEventSynchronize(g.stop));
        if (rep >= kWarm) t.push_back(elapsed_us(g.start, g.stop) / kPieces);
    }
    verify(1, g.dst, seed, "runtime");
    print("runtime", "cudaMemcpyPeerAsync", 0, stats(t));
}

}  // namespace

int main() {
    int n = 0;
    CHECK(cudaGetDeviceCount(&n));
    std::printf("test,variant,buffers,us_per_piece_median,min,max\n");
    if (n < 2) {
        std::fprintf(stderr, "pipeline needs two GPUs; this machine has %d\n", n);
        return 1;
    }
    for (int a = 0; a < 2; ++a) {  // peer access off, as a staged copy runs
        CHECK(cudaSetDevice(a));
        const cudaError_t e = cudaDeviceDisablePeerAccess(1 - a);
        if (e == cudaErrorPeerAccessNotEnabled) {
            (void)cudaGetLastError();
        } else {
            CHECK(e);
        }
    }
    Setup g;
    g.out.resize(kPieces);
    g.in.resize(kPieces);
    CHECK(cudaSetDevice(0));
    CHECK(cudaMalloc(&g.src, kTotal));
    CHECK(cudaMallocHost(&g.host, kTotal));
    CHECK(cudaStreamCreateWithFlags(&g.s0, cudaStreamNonBlocking));
    CHECK(cudaEventCreate(&g.start));
    CHECK(cudaEventCreate(&g.stop));
    CHECK(cudaEventCreate(&g.downs));
    CHECK(cudaEventCreateWithFlags(&g.done0, cudaEventDisableTiming));
    for (auto& e : g.out) CHECK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
    CHECK(cudaSetDevice(1));
    CHECK(cudaMalloc(&g.dst, kTotal));
    CHECK(cudaStreamCreateWithFlags(&g.s1, cudaStreamNonBlocking));
    CHECK(cudaStreamCreateWithFlags(&g.s1b, cudaStreamNonBlocking));
    CHECK(cudaEventCreate(&g.stop1));
    CHECK(cudaEventCreate(&g.done1));
    for (auto& e : g.in) CHECK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
    fill(0, g.src, 1);
    for (const bool h2d : {true, false}) {
        for (const char* w : {"none", "other", "same"}) chain(g, h2d, w);
    }
    // kPieces buffers: no piece waits for a buffer, only for its own way out of GPU 0.
    for (const int b : {1, 2, 3, 4, kMaxBuffers, kPieces}) pipeline(g, b);
    runtime(g);
    return 0;
}
