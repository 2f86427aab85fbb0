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
// With `engines` as the second argument, the cells instead ask whether what a chain loses beside the
// other way comes from the copy engines or from PCIe and the host: beside it
//   none, chain4K, same4K, peer   as above
//   long        as above (the other way, 64 MiB)
//   d2dT        a chain of copies of T bytes inside GPU 0's memory (device to device: an engine, no
//               PCIe; T = 4, 64, 256 KiB, 1, 4 MiB), as many as outlast the measured chain (1 GiB
//               of them, at most 512)
//   d2dlong     one 1 GiB copy inside GPU 0's memory
// and, with no measured chain (size 0), each of the d2d, long and peer neighbours alone.
// If the chain loses beside the copies inside the GPU what it loses beside chain4K, the engines
// share something; if nothing, what it loses is on the link or in the host.
// With `kernels`, beside it a kernel on the SMs instead of a copy engine (and d2dlong to compare),
// each running for a fixed time that outlasts the chain, again and again over its buffer, with
// dmaprobe's own loop bodies (gpu_validation/src/cuda/kernels.cu), whose accesses in flight the
// model knows:
//   kspin       spins 600 us, touching no memory
//   compute:B   compute_kernel: B blocks of 512 threads read and write 1 GiB of GPU 0's memory for
//               4 ms (B = 33, 132, 264)
//   zcload:B    zero_copy_kernel loading host memory: B blocks of 256 threads copy 64 MiB of pinned
//               host memory into GPU memory, 16 bytes a thread, for 20 ms (reads over PCIe, no
//               engine; B = 4, 16, 66, 264, 1056)
//   zcstore:B   store_until_kernel: the same storing GPU memory into host memory (posted writes)
// and each alone (other_gbps: what the kernel moved, over its time). With `unrolled`, the same
// with loops of its own that keep more in flight (a look at the clock only every 16 accesses,
// which the compiler unrolls):
//   kcopy:B     B blocks of 512 threads copy within 1 GiB of GPU 0's memory for 4 ms (as d2dlong,
//               by the SMs; B = 8, 33, 132, 528)
//   kstore:B    B blocks of 512 threads store 16 bytes each over 64 MiB of pinned host memory for
//               20 ms (B = 2, 8, 33, 132, 264)
//   kload:B     the same loading it
// Whether the chain loses beside the GPU's memory traffic, its PCIe traffic, or only beside another
// copy engine, and how that grows with the accesses the kernel keeps in flight.
// With `control`, the measured chain is 64 operations of another kind, beside none, zcload:264,
// zcstore:264 and compute:264: copies of 4 KiB into and out of the GPU (as above), copies of 4 KiB
// inside it (d2d), cudaMemsetAsync of 4 KiB (memset: an engine writes GPU memory, no data from the
// host), and empty kernels of one block (kernel: no copy engine at all). Whether what a small copy
// waits for behind the SMs' traffic is its data's, or its work's and semaphores' (the dir column
// names the operation).
// With `front`, chains of 4 KiB copies into, out of and inside the GPU beside 512 operations of one
// kind on the other stream: none, records (cudaEventRecord: a semaphore release, no engine),
// kernels (empty kernels of one block), d2d4K (copies inside the GPU), chain4K (copies the other
// way; for the copies inside the GPU, into it). Which neighbour costs a chain its extra µs a copy: one
// that uses a copy engine, or any operation of the GPU's front end.
// So whether what the chain loses follows the other direction's bytes (its write or read rate) or
// its copies (how many start and end per microsecond).
// Every cell runs once an iteration, in turn; 3 warm-up iterations, then ITER (default 30). Host
// buffers are written by the CPU once, before the first iteration (never between: lines the CPU
// has just written slow the GPU's writes to them); the measured chain's data checked at the end.
//
// Output (stdout, CSV): dir,size,beside,median_us,p10_us,p90_us,reps,first_us,other_us   (us a copy;
// first_us: the median from the start event to the event after the chain's first copy, that copy's own
// end; other_us: the median from the start event to the end of what ran beside; other_gbps: a
// kernel's bytes moved over other_us, 0 for the rest)
// With `turn`, whether what a chain into the GPU pays beside another channel's work is paid per
// operation of that channel or while it has work queued: chains of 4 KiB copies into and out of the
// GPU beside kernels that spin D us each (spins:D, D = 2, 5, 10, 20, 50; as many as fill 800 us, at
// most 512), beside 512 empty kernels (kernels, as in `front`), and beside 512 empty kernels queued
// behind a wait on an event that a third stream records only after a 1 ms spin (blocked: the
// other channel has work queued but cannot run it while the chain runs).
// With `flush`, whether a chain out of the GPU pays for reads of host memory in flight beside it
// whatever their rate: chains of 4 KiB copies out of and into the GPU beside a kernel of T threads
// in one block, each thread loading host memory one word after another, each load's address
// depending on the word before (chase:T, T = 1, 32, 256: T loads in flight at every moment), and
// beside a chain of 4 KiB copies into the GPU (chain4K, as in the default set).
// With `sizes`, whether the hold a chain out of the GPU pays beside small copies into it is counted
// from its copy's end or its start (the one-GPU host: +1.24 us a copy at 4 KiB, +0.30 at 64 KiB,
// beside a chain of 4 KiB copies into the GPU): chains out of the GPU of 4, 8, 16, 32 and 64 KiB
// copies beside nothing, chain4K and chain16K.
// Usage: chainpair [ITERATIONS [engines|kernels|unrolled|control|front|turn|flush|sizes]]
// Build: nvcc -O3 -arch=sm_90 chainpair.cu -o chainpair   (CUDA toolkit only)
#include <cuda_runtime.h>

#include <algorithm>
#include <array>
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
constexpr std::size_t kInside = std::size_t{1} << 30;  // d2dlong, and the bytes of a d2d chain
constexpr std::size_t kBesideBytes = 16 << 20;
constexpr int kMaxBeside = 512;
constexpr long long kGateTimeoutNs = 5000000000LL;
constexpr long long kChaseNs = 1000000;    // flush, chase:T: outlasts the chain
constexpr long long kSpinsUs = 800;          // turn: what the spins:D kernels fill together
constexpr long long kBlockedNs = 1000000;    // turn, blocked: the third stream's spin before its event

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

constexpr long long kSpinNs = 600000;
constexpr long long kCopyNs = 4000000;   // kcopy: outlasts a chain of 64 copies at 7 us each
constexpr long long kHostNs = 20000000;  // kstore, kload: outlasts 64 copies at 200 us each
constexpr std::size_t kHostTraffic = std::size_t{64} << 20;  // kstore, kload: the buffer
constexpr int kTimerEvery = 16;          // accesses between two looks at the clock
constexpr int kThreads = 512;
constexpr int kZcThreads = 256;  // dmaprobe's zero-copy scenarios' blocks

__device__ long long now_ns() {
    long long t = 0;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}

__global__ void spin(long long ns) {
    const long long t0 = now_ns();
    while (now_ns() - t0 < ns) {
    }
}

// kcopy, kstore, kload: each thread goes over its share of n 16-byte elements again and again
// until `ns` have passed since it started, and adds what it moved to `moved`.
enum class Access { kCopy, kStore, kLoad };

template <Access A>
__global__ void stream_for(const uint4* src, uint4* dst, std::size_t n, long long ns, unsigned long long* moved,
                           unsigned* sink) {
    const long long t0 = now_ns();
    const std::size_t first = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x;
    const std::size_t step = std::size_t{gridDim.x} * blockDim.x;
    unsigned long long count = 0;
    unsigned acc = 0;
    for (bool go = true; go;) {
        for (std::size_t i = first; i < n; i += step) {
            if constexpr (A == Access::kCopy) {
                dst[i] = src[i];
            } else if constexpr (A == Access::kStore) {
                const unsigned v = static_cast<unsigned>(i + count) | 1u;
                dst[i] = make_uint4(v, v ^ 0x5a5a5a5au, v + 3u, v * 7u);
            } else {
                const uint4 v = src[i];
                acc ^= v.x + v.y + v.z + v.w;
            }
            if (++count % kTimerEvery == 0 && now_ns() - t0 > ns) {
                go = false;
                break;
            }
        }
    }
    atomicAdd(moved, count * sizeof(uint4) * (A == Access::kCopy ? 2 : 1));
    // The sum goes to `sink` only when it matches what no buffer here holds, so the loads stay.
    if (acc == 0x7e57ab1eu) sink[0] = acc;
}

// dmaprobe's loop bodies (gpu_validation/src/cuda/kernels.cu: zero_copy_kernel with stride 1,
// store_until_kernel, compute_kernel), each repeated until `ns` have passed since the thread
// started, adding what it moved to `moved`.
// zcload (host memory in, GPU memory out) and zcstore (the other way round): the same body.
__global__ void zc_for(const uint4* __restrict__ in, uint4* __restrict__ out, std::size_t elems, long long ns,
                       unsigned long long* moved) {
    const long long t0 = now_ns();
    const std::size_t step = static_cast<std::size_t>(gridDim.x) * blockDim.x;
    unsigned long long count = 0;
    do {
        for (std::size_t k = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; k < elems; k += step) {
            out[k] = in[k];
            ++count;
        }
    } while (now_ns() - t0 <= ns);
    atomicAdd(moved, count * sizeof(uint4));
}

// flush, chase:T: each thread loads a word of host memory whose address depends on the word it
// loaded before, until `ns` have passed, so T loads are in flight at every moment; adds the bytes
// it loaded to `moved`.
__global__ void chase_for(const unsigned* src, std::size_t words, long long ns, unsigned long long* moved,
                          unsigned* sink) {
    const long long t0 = now_ns();
    std::size_t i = (static_cast<std::size_t>(threadIdx.x) * 104729u) % words;
    unsigned x = 0;
    unsigned long long count = 0;
    while (now_ns() - t0 < ns) {
        for (int k = 0; k < 16; ++k) {
            x = *(reinterpret_cast<const volatile unsigned*>(src) + i);
            i = (i + 4099u + (x & 1u)) % words;
            ++count;
        }
    }
    if (x == 0xdeadbeefu) *sink = x;
    atomicAdd(moved, count * sizeof(unsigned));
}

__global__ void compute_for(uint4* buf, std::size_t elems, long long ns, unsigned long long* moved) {
    const long long t0 = now_ns();
    const std::size_t step = static_cast<std::size_t>(gridDim.x) * blockDim.x;
    std::size_t i = (static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x) % elems;
    unsigned long long count = 0;
    for (;;) {
        for (int k = 0; k < 16; ++k) {
            uint4 v = buf[i];
            v.x = v.x * 1664525u + 1013904223u;
            v.y ^= v.x;
            v.z += v.y;
            v.w ^= v.z;
            buf[i] = v;
            i += step;
            if (i >= elems) i %= elems;
        }
        count += 16;
        if (now_ns() - t0 > ns) break;
    }
    atomicAdd(moved, count * 2 * sizeof(uint4));
}

// "kcopy:33" -> 33; 0 for a name without blocks.
int blocks_of(const std::string& beside) {
    const std::size_t colon = beside.find(':');
    return colon == std::string::npos ? 0 : std::stoi(beside.substr(colon + 1));
}

double quantile(std::vector<double> v, double q) {
    std::sort(v.begin(), v.end());
    return v[static_cast<std::size_t>(q * static_cast<double>(v.size() - 1) + 0.5)];
}

__global__ void empty_kernel() {}

struct Cell {
    bool up;            // the measured chain copies into the GPU
    std::size_t size;   // its copies' size
    std::string beside;
    std::size_t other;  // chainT: T; long/peer: the copy's size
    std::vector<double> us;
    std::vector<double> first;  // start event to the first copy's end
    std::vector<double> other_us;  // start event to the end of what ran beside
    std::vector<double> other_gbps;  // a kernel's bytes moved over other_us
    std::string op = "copy";  // control: the measured chain's operations (copy, d2d, memset, kernel)
};

// engines: a neighbour inside the GPU, "d2d<KiB>K" or "d2dlong": its copies' size, 0 for none.
std::size_t inside_bytes(const std::string& beside) {
    if (beside == "d2dlong") return kInside;
    if (beside.rfind("d2d", 0) != 0) return 0;
    return std::stoull(beside.substr(3)) * kKiB;
}

}  // namespace

int main(int argc, char** argv) {
    const int iterations = argc > 1 ? std::atoi(argv[1]) : 30;
    const std::string set = argc > 2 ? argv[2] : "";
    const bool engines = set == "engines";
    const bool kernels = set == "kernels";
    const bool unrolled = set == "unrolled";
    const bool control = set == "control";
    const bool turn = set == "turn";
    const bool flush = set == "flush";
    const bool front = set == "front";
    const bool sizes = set == "sizes";
    if (iterations < 5 || (argc > 2 && !engines && !kernels && !unrolled && !control && !front && !turn && !flush && !sizes) ||
        argc > 3) {
        std::fprintf(stderr, "usage: chainpair [ITERATIONS >= 5 [engines|kernels|unrolled|control|front|turn|flush|sizes]]\n");
        return 2;
    }
    unsigned* d_sink = nullptr;
    unsigned long long* d_moved = nullptr;
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
    unsigned char *d_in_src = nullptr, *d_in_dst = nullptr;  // engines: copies inside GPU 0
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
    CHECK(cudaMalloc(&d_sink, sizeof(unsigned)));
    CHECK(cudaMalloc(&d_moved, sizeof(unsigned long long)));
    if (engines || kernels || unrolled || control || front || turn || flush) {
        CHECK(cudaMalloc(&d_in_src, kInside));
        CHECK(cudaMalloc(&d_in_dst, kInside));
        CHECK(cudaMemset(d_in_src, 0x3c, kInside));
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
    cudaEvent_t first_b = nullptr, second_b = nullptr;  // front: the records beside
    cudaStream_t c3 = nullptr;  // turn, blocked: the stream whose late event holds the kernels back
    cudaEvent_t late = nullptr;
    CHECK(cudaStreamCreateWithFlags(&c3, cudaStreamNonBlocking));
    CHECK(cudaEventCreateWithFlags(&late, cudaEventDisableTiming));
    CHECK(cudaEventCreate(&start));
    CHECK(cudaEventCreate(&first));
    CHECK(cudaEventCreate(&last));
    CHECK(cudaEventCreate(&other_end));
    CHECK(cudaEventCreate(&first_b));
    CHECK(cudaEventCreate(&second_b));

    std::vector<Cell> cells;
    if (control) {
        int copies = 0;
        for (const char* op : {"copy", "copy", "d2d", "memset", "kernel"}) {
            const bool up = std::string(op) == "copy" && copies++ == 0;  // the first copy chain into the GPU, the second out
            for (const char* b : {"none", "zcload:264", "zcstore:264", "compute:264"}) {
                Cell c{up, 4 * kKiB, b, std::string(b) == "none" ? 0 : kInside, {}};
                c.op = op;
                cells.push_back(c);
            }
        }
    }
    if (front) {
        int copies = 0;
        for (const char* op : {"copy", "copy", "d2d"}) {
            const bool up = std::string(op) == "copy" && copies++ == 0;
            for (const char* b : {"none", "records", "kernels", "d2d4K", "chain4K"}) {
                Cell c{up, 4 * kKiB, b, 4 * kKiB, {}};
                c.op = op;
                cells.push_back(c);
            }
        }
    }
    if (turn) {
        for (const bool up : {true, false}) {
            for (const char* b : {"none", "kernels", "spins:2", "spins:5", "spins:10", "spins:20", "spins:50", "blocked"}) {
                cells.push_back({up, 4 * kKiB, b, 4 * kKiB, {}});
            }
        }
    }
    if (flush) {
        for (const bool up : {false, true}) {
            for (const char* b : {"none", "chase:1", "chase:32", "chase:256", "chain4K"}) {
                cells.push_back({up, 4 * kKiB, b, 4 * kKiB, {}});
            }
        }
    }
    if (sizes) {
        for (const std::size_t size : {4 * kKiB, 8 * kKiB, 16 * kKiB, 32 * kKiB, 64 * kKiB}) {
            cells.push_back({false, size, "none", 0, {}});
            cells.push_back({false, size, "chain4K", 4 * kKiB, {}});
            cells.push_back({false, size, "chain16K", 16 * kKiB, {}});
        }
    }
    for (const bool up : {true, false}) {
        if (control || front || turn || flush || sizes) break;
        for (const std::size_t size : {4 * kKiB, 64 * kKiB}) {
            if (kernels) {
                if (size != 4 * kKiB) continue;  // the sweep at 4 KiB only
                for (const char* b : {"none", "d2dlong", "kspin", "compute:33", "compute:132", "compute:264", "zcload:4",
                                      "zcload:16", "zcload:66", "zcload:264", "zcload:1056", "zcstore:4", "zcstore:16",
                                      "zcstore:66", "zcstore:264", "zcstore:1056"}) {
                    cells.push_back({up, size, b, std::string(b) == "none" ? 0 : kInside, {}});
                }
                continue;
            }
            if (unrolled) {
                if (size != 4 * kKiB) continue;  // the sweep at 4 KiB only
                for (const char* b : {"none", "d2dlong", "kspin", "kcopy:8", "kcopy:33", "kcopy:132", "kcopy:528",
                                      "kstore:2", "kstore:8", "kstore:33", "kstore:132", "kstore:264", "kload:2",
                                      "kload:8", "kload:33", "kload:132", "kload:264"}) {
                    cells.push_back({up, size, b, std::string(b) == "none" ? 0 : kInside, {}});
                }
                continue;
            }
            if (engines) {
                for (const char* b : {"none", "chain4K", "same4K", "long", "d2d4K", "d2d64K", "d2d256K", "d2d1024K",
                                      "d2d4096K", "d2dlong"}) {
                    const std::string name = b;
                    const std::size_t inside = inside_bytes(name);
                    cells.push_back({up, size, name, inside ? inside : name == "long" ? kLong : 4 * kKiB, {}});
                }
                if (peer) cells.push_back({up, size, "peer", kPeer, {}});
                continue;
            }
            cells.push_back({up, size, "none", 0, {}});
            for (const std::size_t t : {4 * kKiB, 16 * kKiB, 64 * kKiB, 256 * kKiB, 1024 * kKiB}) {
                cells.push_back({up, size, "chain" + std::to_string(t / kKiB) + "K", t, {}});
            }
            cells.push_back({up, size, "long", kLong, {}});
            cells.push_back({up, size, "same4K", 4 * kKiB, {}});
            if (peer) cells.push_back({up, size, "peer", kPeer, {}});
        }
        if (kernels && up) {  // the neighbours alone: no measured chain
            for (const char* b : {"d2dlong", "compute:33", "compute:132", "compute:264", "zcload:4", "zcload:16",
                                  "zcload:66", "zcload:264", "zcload:1056", "zcstore:4", "zcstore:16", "zcstore:66",
                                  "zcstore:264", "zcstore:1056"}) {
                cells.push_back({up, 0, b, kInside, {}});
            }
        }
        if (unrolled && up) {  // the neighbours alone: no measured chain
            for (const char* b : {"d2dlong", "kcopy:8", "kcopy:33", "kcopy:132", "kcopy:528", "kstore:2", "kstore:8",
                                  "kstore:33", "kstore:132", "kstore:264", "kload:2", "kload:8", "kload:33", "kload:132",
                                  "kload:264"}) {
                cells.push_back({up, 0, b, kInside, {}});
            }
        }
        if (engines) {  // the neighbours alone: no measured chain
            for (const char* b : {"long", "d2d4K", "d2d64K", "d2d256K", "d2d1024K", "d2d4096K", "d2dlong"}) {
                const std::string name = b;
                if (up || name == "long") cells.push_back({up, 0, name, inside_bytes(name) ? inside_bytes(name) : kLong, {}});
            }
            if (up && peer) cells.push_back({up, 0, "peer", kPeer, {}});
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
        // A kernel that counts what it moved (spins:D names a time, not blocks).
        const bool counts = blocks_of(c.beside) > 0 && c.beside.rfind("spins:", 0) != 0;
        if (counts) CHECK(cudaMemsetAsync(d_moved, 0, sizeof(unsigned long long), b));
        for (int k = 0; k < (c.size ? kChain : 0); ++k) {
            if (c.op == "d2d") {
                CHECK(cudaMemcpyAsync(d_in_dst, d_src, c.size, cudaMemcpyDeviceToDevice, a));
            } else if (c.op == "memset") {
                CHECK(cudaMemsetAsync(d_in_dst, k & 0xff, c.size, a));
            } else if (c.op == "kernel") {
                empty_kernel<<<1, 1, 0, a>>>();
                CHECK(cudaGetLastError());
            } else if (c.up) {
                CHECK(cudaMemcpyAsync(d_dst, h_src, c.size, cudaMemcpyHostToDevice, a));
            } else {
                CHECK(cudaMemcpyAsync(h_dst, d_src, c.size, cudaMemcpyDeviceToHost, a));
            }
            if (k == 0) CHECK(cudaEventRecord(first, a));
        }
        if (!c.size) CHECK(cudaEventRecord(first, a));
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
        } else if (c.beside.rfind("d2d", 0) == 0 && c.beside != "d2dlong") {
            const int n = std::min<int>(kMaxBeside, static_cast<int>(kInside / c.other));
            for (int k = 0; k < n; ++k) {
                CHECK(cudaMemcpyAsync(d_in_dst, d_in_src, c.other, cudaMemcpyDeviceToDevice, b));
            }
        } else if (c.beside == "d2dlong") {
            CHECK(cudaMemcpyAsync(d_in_dst, d_in_src, kInside, cudaMemcpyDeviceToDevice, b));
        } else if (c.beside == "records") {
            for (int k = 0; k < kMaxBeside; ++k) CHECK(cudaEventRecord(k % 2 ? first_b : second_b, b));
        } else if (c.beside == "kernels") {
            for (int k = 0; k < kMaxBeside; ++k) {
                empty_kernel<<<1, 1, 0, b>>>();
                CHECK(cudaGetLastError());
            }
        } else if (c.beside.rfind("chase:", 0) == 0) {
            chase_for<<<1, blocks_of(c.beside), 0, b>>>(reinterpret_cast<const unsigned*>(h_big), kLong / sizeof(unsigned),
                                                        kChaseNs, d_moved, d_sink);
            CHECK(cudaGetLastError());
        } else if (c.beside.rfind("spins:", 0) == 0) {
            const long long each_us = blocks_of(c.beside);
            const int n = std::min<long long>(kMaxBeside, kSpinsUs / each_us);
            for (int k = 0; k < n; ++k) {
                spin<<<1, 32, 0, b>>>(each_us * 1000);
                CHECK(cudaGetLastError());
            }
        } else if (c.beside == "blocked") {
            CHECK(cudaStreamWaitEvent(c3, start, 0));
            spin<<<1, 32, 0, c3>>>(kBlockedNs);
            CHECK(cudaGetLastError());
            CHECK(cudaEventRecord(late, c3));
            CHECK(cudaStreamWaitEvent(b, late, 0));
            for (int k = 0; k < kMaxBeside; ++k) {
                empty_kernel<<<1, 1, 0, b>>>();
                CHECK(cudaGetLastError());
            }
        } else if (c.beside == "kspin") {
            spin<<<1, 32, 0, b>>>(kSpinNs);
            CHECK(cudaGetLastError());
        } else if (c.beside.rfind("kcopy:", 0) == 0) {
            stream_for<Access::kCopy><<<blocks_of(c.beside), kThreads, 0, b>>>(
                reinterpret_cast<const uint4*>(d_in_src), reinterpret_cast<uint4*>(d_in_dst), kInside / sizeof(uint4), kCopyNs,
                d_moved, d_sink);
            CHECK(cudaGetLastError());
        } else if (c.beside.rfind("kstore:", 0) == 0) {
            stream_for<Access::kStore><<<blocks_of(c.beside), kThreads, 0, b>>>(
                nullptr, reinterpret_cast<uint4*>(h_big), kHostTraffic / sizeof(uint4), kHostNs, d_moved, d_sink);
            CHECK(cudaGetLastError());
        } else if (c.beside.rfind("compute:", 0) == 0) {
            compute_for<<<blocks_of(c.beside), kThreads, 0, b>>>(reinterpret_cast<uint4*>(d_in_dst), kInside / sizeof(uint4),
                                                                 kCopyNs, d_moved);
            CHECK(cudaGetLastError());
        } else if (c.beside.rfind("zcload:", 0) == 0) {
            zc_for<<<blocks_of(c.beside), kZcThreads, 0, b>>>(reinterpret_cast<const uint4*>(h_big),
                                                              reinterpret_cast<uint4*>(d_in_dst),
                                                              kHostTraffic / sizeof(uint4), kHostNs, d_moved);
            CHECK(cudaGetLastError());
        } else if (c.beside.rfind("zcstore:", 0) == 0) {
            zc_for<<<blocks_of(c.beside), kZcThreads, 0, b>>>(reinterpret_cast<const uint4*>(d_in_src),
                                                              reinterpret_cast<uint4*>(h_big),
                                                              kHostTraffic / sizeof(uint4), kHostNs, d_moved);
            CHECK(cudaGetLastError());
        } else if (c.beside.rfind("kload:", 0) == 0) {
            stream_for<Access::kLoad><<<blocks_of(c.beside), kThreads, 0, b>>>(
                reinterpret_cast<const uint4*>(h_big), nullptr, kHostTraffic / sizeof(uint4), kHostNs, d_moved, d_sink);
            CHECK(cudaGetLastError());
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
        float ms = 0, head = 0, other = 0;
        CHECK(cudaEventElapsedTime(&ms, first, last));
        CHECK(cudaEventElapsedTime(&head, start, first));
        CHECK(cudaEventElapsedTime(&other, start, other_end));
        unsigned long long moved = 0;
        if (counts) CHECK(cudaMemcpy(&moved, d_moved, sizeof(moved), cudaMemcpyDeviceToHost));
        return std::array<double, 4>{1000.0 * ms / (kChain - 1), 1000.0 * head, 1000.0 * other,
                                     static_cast<double>(moved) / (1e6 * other)};
    };
    for (int it = 0; it < kWarmup + iterations; ++it) {
        for (Cell& c : cells) {
            const auto [us, head, other, gbps] = run(c);
            if (it >= kWarmup) {
                c.us.push_back(us);
                c.first.push_back(head);
                c.other_us.push_back(other);
                c.other_gbps.push_back(gbps);
            }
        }
    }
    // The measured chains' last copies: into the GPU d_dst holds h_src; out of it h_dst holds d_src, as
    // far as the largest measured copy reached.
    // (`sizes` measures chains out of the GPU only.)
    std::size_t checked = 0, checked_up = 0;
    for (const Cell& c : cells) {
        checked = std::max(checked, c.size);
        if (c.up) checked_up = std::max(checked_up, c.size);
    }
    std::vector<unsigned char> got(kMaxSize);
    CHECK(cudaMemcpy(got.data(), d_dst, checked_up, cudaMemcpyDeviceToHost));
    if (std::memcmp(got.data(), h_src, checked_up) != 0) {
        std::fprintf(stderr, "chainpair: the copy into the GPU delivered wrong data\n");
        return 1;
    }
    if (std::memcmp(h_dst, pattern.data(), checked) != 0) {
        std::fprintf(stderr, "chainpair: the copy out of the GPU delivered wrong data\n");
        return 1;
    }
    std::printf("dir,size,beside,median_us,p10_us,p90_us,reps,first_us,other_us,other_gbps\n");
    for (const Cell& c : cells) {
        const std::string dir = c.op != "copy" ? c.op : c.up ? "h2d" : "d2h";
        std::printf("%s,%zu,%s,%.4f,%.4f,%.4f,%zu,%.4f,%.4f,%.3f\n", dir.c_str(), c.size, c.beside.c_str(),
                    quantile(c.us, 0.5), quantile(c.us, 0.1), quantile(c.us, 0.9), c.us.size(), quantile(c.first, 0.5),
                    quantile(c.other_us, 0.5), quantile(c.other_gbps, 0.5));
    }
    return 0;
}
