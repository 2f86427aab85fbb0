// What does a chain of copies one way lose while the GPU copies the other way? (duplex-burst: 256
// copies of 4 KiB back to back each way take 3.24 us a copy, where the same chains alone take
// 2.59 into the GPU and 2.18 out of it; the model gives the two directions nothing to share there.)
//
// On GPU 0, behind a spin kernel on stream a that holds everything until every call is made: a
// measured chain of 64 copies of S bytes (4 KiB or 64 KiB) in direction X (into or out of the GPU)
// on stream a, an event after its first copy and one after its last; its cost a copy is their
// interval over 63. Beside it, on stream b (which waits for an event recorded behind the gate):
//   none        nothing
//   chainT      a chain the other way of copies of T bytes (T = 4, 16, 64, 256 KiB, 1 MiB), as many
//               as outlast the measured chain (16 MiB of them, at most 512)
//   long        one 64 MiB copy the other way
//   same4K      a chain of 4 KiB copies the SAME way on stream b (another stream, the same engine)
//   peer        (two GPUs, peer access) one 256 MiB copy from GPU 0 to GPU 1 over NVLink: GPU 0's
//               engines busy, nothing of it on PCIe
// So whether what the chain loses follows the other direction's bytes (its write or read rate) or
// its copies (how many start and end per microsecond).
// Every cell runs once an iteration, in turn; 3 warm-up iterations, then ITER (default 30). Host
// buffers are written by the CPU once, before the first iteration (never between: lines the CPU
// has just written slow the GPU's writes to them); the measured chain's data checked at the end.
//
// Output (stdout, CSV): dir,size,beside,median_us,p10_us,p90_us,reps,first_us   (us a copy; first_us:
// the median from the start event to the event after the chain's first copy, that copy's own end)
// Build: nvcc -O3 -arch=sm_90 chainpair.cu -o chainpair   (CUDA toolkit only)
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <utility>
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
constexpr int kChain = 64;
constexpr std::size_t kKiB = 1024;
constexpr std::size_t kLong = 64 << 20;
constexpr std::size_t kPeer = std::size_t{256} << 20;
constexpr std::size_t kBesideBytes = 16 << 20;
constexpr int kMaxBeside = 512;
constexpr long long kGateTimeoutNs = 5000000000LL;

__global__ void gate(volatile int* flag, long long timeout_ns) {
    long long t0 = 0;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
    while (flag[0] == 0) {
        long long t = 0;
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
        if (t - t0 > timeout_ns) {
            flag[1] = 1;
            return;
        }
    }
}

double quantile(std::vector<double> v, double q) {
    std::sort(v.begin(), v.end());
    return v[static_cast<std::size_t>(q * static_cast<double>(v.size() - 1) + 0.5)];
}

struct Cell {
    bool up;            // the measured chain copies into the GPU
    std::size_t size;   // its copies' size
    std::string beside;
    std::size_t other;  // chainT: T; long/peer: the copy's size
    std::vector<double> us;
    std::vector<double> first;  // start event to the first copy's end
};

}  // namespace

int main(int argc, char** argv) {
    const int iterations = argc > 1 ? std::atoi(argv[1]) : 30;
    if (iterations < 5) {
        std::fprintf(stderr, "usage: chainpair [ITERATIONS >= 5]\n");
        return 2;
    }
    int gpus = 0;
    CHECK(cudaGetDeviceCount(&gpus));
    CHECK(cudaSetDevice(0));
    bool peer = false;
    if (gpus > 1) {
        int can = 0;
        CHECK(cudaDeviceCanAccessPeer(&can, 0, 1));
        if (can) {
            CHECK(cudaDeviceEnablePeerAccess(1, 0));
            peer = true;
        }
    }
    // Measured chain: h_src -> d_dst (into) or d_src -> h_dst (out). The other way: h_big <-> d_big.
    constexpr std::size_t kMaxSize = 64 * kKiB;
    unsigned char *h_src = nullptr, *h_dst = nullptr, *d_src = nullptr, *d_dst = nullptr;
    unsigned char *h_big = nullptr, *d_big = nullptr, *d_big2 = nullptr, *d_peer = nullptr;
    CHECK(cudaMallocHost(&h_src, kMaxSize));
    CHECK(cudaMallocHost(&h_dst, kMaxSize));
    CHECK(cudaMalloc(&d_src, kMaxSize));
    CHECK(cudaMalloc(&d_dst, kMaxSize));
    CHECK(cudaMallocHost(&h_big, kLong));
    CHECK(cudaMalloc(&d_big, kLong));
    CHECK(cudaMalloc(&d_big2, kLong));
    if (peer) {
        CHECK(cudaSetDevice(1));
        CHECK(cudaMalloc(&d_peer, kPeer));
        CHECK(cudaSetDevice(0));
        CHECK(cudaFree(d_big2));
        CHECK(cudaMalloc(&d_big2, kPeer));
    }
    for (std::size_t i = 0; i < kMaxSize; ++i) h_src[i] = static_cast<unsigned char>(i * 131 + 7) | 1;
    std::memset(h_dst, 0, kMaxSize);
    for (std::size_t i = 0; i < kLong; ++i) h_big[i] = static_cast<unsigned char>(i * 17 + 3) | 1;
    std::vector<unsigned char> pattern(kMaxSize);
    for (std::size_t i = 0; i < kMaxSize; ++i) pattern[i] = static_cast<unsigned char>(i * 29 + 11) | 1;
    CHECK(cudaMemcpy(d_src, pattern.data(), kMaxSize, cudaMemcpyHostToDevice));
    CHECK(cudaMemset(d_big, 0x5a, kLong));
    int* flag = nullptr;
    int* flag_dev = nullptr;
    CHECK(cudaHostAlloc(&flag, 2 * sizeof(int), cudaHostAllocMapped));
    CHECK(cudaHostGetDevicePointer(reinterpret_cast<void**>(&flag_dev), flag, 0));
    cudaStream_t a = nullptr, b = nullptr;
    CHECK(cudaStreamCreateWithFlags(&a, cudaStreamNonBlocking));
    CHECK(cudaStreamCreateWithFlags(&b, cudaStreamNonBlocking));
    cudaEvent_t start = nullptr, first = nullptr, last = nullptr, other_end = nullptr;
    CHECK(cudaEventCreate(&start));
    CHECK(cudaEventCreate(&first));
    CHECK(cudaEventCreate(&last));
    CHECK(cudaEventCreate(&other_end));

    std::vector<Cell> cells;
    for (const bool up : {true, false}) {
        for (const std::size_t size : {4 * kKiB, 64 * kKiB}) {
            cells.push_back({up, size, "none", 0, {}});
            for (const std::size_t t : {4 * kKiB, 16 * kKiB, 64 * kKiB, 256 * kKiB, 1024 * kKiB}) {
                cells.push_back({up, size, "chain" + std::to_string(t / kKiB) + "K", t, {}});
            }
            cells.push_back({up, size, "long", kLong, {}});
            cells.push_back({up, size, "same4K", 4 * kKiB, {}});
            if (peer) cells.push_back({up, size, "peer", kPeer, {}});
        }
    }
    const auto run = [&](const Cell& c) {
        flag[0] = 0;
        flag[1] = 0;
        __sync_synchronize();
        gate<<<1, 1, 0, a>>>(flag_dev, kGateTimeoutNs);
        CHECK(cudaGetLastError());
        CHECK(cudaEventRecord(start, a));
        CHECK(cudaStreamWaitEvent(b, start, 0));
        for (int k = 0; k < kChain; ++k) {
            if (c.up) {
                CHECK(cudaMemcpyAsync(d_dst, h_src, c.size, cudaMemcpyHostToDevice, a));
            } else {
                CHECK(cudaMemcpyAsync(h_dst, d_src, c.size, cudaMemcpyDeviceToHost, a));
            }
            if (k == 0) CHECK(cudaEventRecord(first, a));
        }
        CHECK(cudaEventRecord(last, a));
        if (c.beside.rfind("chain", 0) == 0 || c.beside == "same4K") {
            const bool other_up = c.beside == "same4K" ? c.up : !c.up;
            const int n = std::min<int>(kMaxBeside, static_cast<int>(kBesideBytes / c.other));
            for (int k = 0; k < n; ++k) {
                if (other_up) {
                    CHECK(cudaMemcpyAsync(d_big, h_big, c.other, cudaMemcpyHostToDevice, b));
                } else {
                    CHECK(cudaMemcpyAsync(h_big, d_big, c.other, cudaMemcpyDeviceToHost, b));
                }
            }
        } else if (c.beside == "long") {
            if (c.up) {
                CHECK(cudaMemcpyAsync(h_big, d_big, kLong, cudaMemcpyDeviceToHost, b));
            } else {
                CHECK(cudaMemcpyAsync(d_big, h_big, kLong, cudaMemcpyHostToDevice, b));
            }
        } else if (c.beside == "peer") {
            CHECK(cudaMemcpyPeerAsync(d_peer, 1, d_big2, 0, kPeer, b));
        }
        CHECK(cudaEventRecord(other_end, b));
        __sync_synchronize();
        flag[0] = 1;
        CHECK(cudaEventSynchronize(last));
        CHECK(cudaEventSynchronize(other_end));
        if (flag[1] != 0) {
            std::fprintf(stderr, "chainpair: the gate timed out (%s %zu %s): the calls did not fit the queues\n",
                         c.up ? "h2d" : "d2h", c.size, c.beside.c_str());
            std::exit(1);
        }
        float ms = 0, head = 0;
        CHECK(cudaEventElapsedTime(&ms, first, last));
        CHECK(cudaEventElapsedTime(&head, start, first));
        return std::make_pair(1000.0 * ms / (kChain - 1), 1000.0 * head);
    };
    for (int it = 0; it < kWarmup + iterations; ++it) {
        for (Cell& c : cells) {
            const auto [us, head] = run(c);
            if (it >= kWarmup) {
                c.us.push_back(us);
                c.first.push_back(head);
            }
        }
    }
    // The measured chains' last copies: into the GPU d_dst holds h_src; out of it h_dst holds d_src.
    std::vector<unsigned char> got(kMaxSize);
    CHECK(cudaMemcpy(got.data(), d_dst, 64 * kKiB, cudaMemcpyDeviceToHost));
    if (std::memcmp(got.data(), h_src, 64 * kKiB) != 0) {
        std::fprintf(stderr, "chainpair: the copy into the GPU delivered wrong data\n");
        return 1;
    }
    if (std::memcmp(h_dst, pattern.data(), 64 * kKiB) != 0) {
        std::fprintf(stderr, "chainpair: the copy out of the GPU delivered wrong data\n");
        return 1;
    }
    std::printf("dir,size,beside,median_us,p10_us,p90_us,reps,first_us\n");
    for (const Cell& c : cells) {
        std::printf("%s,%zu,%s,%.4f,%.4f,%.4f,%zu,%.4f\n", c.up ? "h2d" : "d2h", c.size, c.beside.c_str(),
                    quantile(c.us, 0.5), quantile(c.us, 0.1), quantile(c.us, 0.9), c.us.size(), quantile(c.first, 0.5));
    }
    return 0;
}
