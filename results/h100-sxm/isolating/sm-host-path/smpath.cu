// Whether an SM's load of host memory and a copy engine's read of it take the same round trip.
// The model gave both one round trip (link, root complex, DRAM and back), so the pointer chase
// (an SM's dependent loads, 1.20-1.22 us a hop on the H100's leases) fixed the copy engines'
// reads too; chains of copies (../copy-chains) put a copy into the GPU about 1 us dearer than
// one out of it, which is the engine's read round trip, 0.2-0.3 us short of the chase's.
// This program measures both on one machine, one after the other, so that the difference is
// the machine's own and not two sets of leases':
//   - chase: one thread follows a random cycle of 64-byte nodes through 4 KiB of mapped pinned
//     host memory (every load misses the GPU's caches: ld.global.cv), and the same through
//     4 KiB of GPU memory (the L2's hit, for reference); kernel time over hops, events;
//   - chain: kCopies copies of one size back to back on one stream behind a spin kernel, each
//     to its own offset, an event after the first and after the last: a copy's share of the
//     running chain, into the GPU and out of it at 4, 16 and 64 KiB (../copy-chains' method,
//     host sources rewritten and flushed from the CPU's caches before each repetition).
// The engine's read round trip is a chain into the GPU less one out of it at the same size.
// Every cell: 3 warm-ups, 30 timed repetitions, median / min / max; the chase's end node and the
// last repetition's copied data are verified.
//
// Build: nvcc -O3 -arch=sm_90 smpath.cu -o smpath
// Run:   ./smpath > smpath.csv
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include <immintrin.h>

namespace {

#define CHECK(call)                                                                                      \
    do {                                                                                                 \
        const cudaError_t e_ = (call);                                                                   \
        if (e_ != cudaSuccess) {                                                                         \
            std::fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call, cudaGetErrorString(e_)); \
            std::exit(1);                                                                                \
        }                                                                                                \
    } while (0)

constexpr int kCopies = 32;
constexpr std::size_t kMaxBytes = 64 * 1024;
constexpr std::size_t kTotal = kMaxBytes * kCopies;
constexpr int kWarm = 3;
constexpr int kReps = 30;
constexpr unsigned long long kHoldNs = 2'000'000;
constexpr std::size_t kChaseBytes = 4096;
constexpr std::size_t kNodeBytes = 64;
constexpr long long kHostHops = 10000;
constexpr long long kDeviceHops = 50000;

__global__ void spin_kernel(unsigned long long ns) {
    unsigned long long t0;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
    for (;;) {
        unsigned long long t;
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
        if (t - t0 >= ns) break;
    }
}

__global__ void chase_kernel(const unsigned char* base, unsigned long long start, long long hops, unsigned long long* end) {
    unsigned long long off = start;
    for (long long h = 0; h < hops; ++h) off = __ldcv(reinterpret_cast<const unsigned long long*>(base + off));
    *end = off;
}

__device__ __host__ inline unsigned char pattern(std::size_t i, std::uint32_t seed) {
    return static_cast<unsigned char>((static_cast<std::uint32_t>(i) * 2654435761u ^ seed) >> 7);
}

__global__ void fill_kernel(unsigned char* p, std::size_t n, std::uint32_t seed) {
    for (std::size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += std::size_t{gridDim.x} * blockDim.x) p[i] = pattern(i, seed);
}

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    const std::size_t n = v.size();
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

void print_row(const char* kind, const char* where, std::size_t bytes, const std::vector<double>& t) {
    std::printf("%s,%s,%zu,%.4f,%.4f,%.4f\n", kind, where, bytes, median(t), *std::min_element(t.begin(), t.end()),
                *std::max_element(t.begin(), t.end()));
    std::fflush(stdout);
}

// A single cycle through every node (Sattolo's shuffle), each node holding the next's offset.
void build_cycle(unsigned char* p, std::size_t bytes, std::uint64_t seed) {
    const std::size_t nodes = bytes / kNodeBytes;
    std::vector<std::uint64_t> order(nodes);
    for (std::size_t i = 0; i < nodes; ++i) order[i] = i;
    for (std::size_t i = nodes - 1; i > 0; --i) {
        seed = seed * 6364136223846793005ull + 1442695040888963407ull;
        std::swap(order[i], order[(seed >> 33) % i]);
    }
    for (std::size_t i = 0; i < nodes; ++i) {
        const std::uint64_t next = order[i] * kNodeBytes;
        std::memcpy(p + i * kNodeBytes, &next, sizeof next);
    }
}

std::uint64_t cycle_end(const unsigned char* p, long long hops) {
    std::uint64_t off = 0;
    for (long long h = 0; h < hops; ++h) std::memcpy(&off, p + off, sizeof off);
    return off;
}

void chase(bool host_memory, cudaStream_t s) {
    const long long hops = host_memory ? kHostHops : kDeviceHops;
    std::vector<unsigned char> image(kChaseBytes);
    build_cycle(image.data(), kChaseBytes, host_memory ? 0x5eedull : 0xdecafull);
    unsigned char* chain = nullptr;
    if (host_memory) {
        CHECK(cudaHostAlloc(&chain, kChaseBytes, cudaHostAllocMapped));
        std::memcpy(chain, image.data(), kChaseBytes);
    } else {
        CHECK(cudaMalloc(&chain, kChaseBytes));
        CHECK(cudaMemcpy(chain, image.data(), kChaseBytes, cudaMemcpyHostToDevice));
    }
    void* base = chain;
    if (host_memory) CHECK(cudaHostGetDevicePointer(&base, chain, 0));
    unsigned long long* end = nullptr;
    CHECK(cudaMalloc(&end, sizeof *end));
    cudaEvent_t a, b;
    CHECK(cudaEventCreate(&a));
    CHECK(cudaEventCreate(&b));
    std::vector<double> t;
    for (int rep = 0; rep < kWarm + kReps; ++rep) {
        CHECK(cudaEventRecord(a, s));
        chase_kernel<<<1, 1, 0, s>>>(static_cast<const unsigned char*>(base), 0, hops, end);
        CHECK(cudaGetLastError());
        CHECK(cudaEventRecord(b, s));
        CHECK(cudaEventSynchronize(b));
        float ms = 0;
        CHECK(cudaEventElapsedTime(&ms, a, b));
        if (rep >= kWarm) t.push_back(ms * 1000.0 / static_cast<double>(hops));
    }
    unsigned long long got = 0;
    CHECK(cudaMemcpy(&got, end, sizeof got, cudaMemcpyDeviceToHost));
    if (got != cycle_end(image.data(), hops)) {
        std::fprintf(stderr, "verification failed: chase through %s memory ended at %llu\n", host_memory ? "host" : "GPU", got);
        std::exit(1);
    }
    print_row("chase", host_memory ? "host" : "device", kChaseBytes, t);
    CHECK(cudaEventDestroy(a));
    CHECK(cudaEventDestroy(b));
    CHECK(cudaFree(end));
    if (host_memory) {
        CHECK(cudaFreeHost(chain));
    } else {
        CHECK(cudaFree(chain));
    }
}

void chain(bool h2d, std::size_t n, unsigned char* dev, unsigned char* host, unsigned char* back, cudaStream_t s) {
    cudaEvent_t first, stop;
    CHECK(cudaEventCreate(&first));
    CHECK(cudaEventCreate(&stop));
    const std::size_t stride = std::max<std::size_t>(n, 4096);
    const std::size_t span = stride * kCopies;
    std::vector<double> t;
    std::uint32_t seed = 0;
    for (int rep = 0; rep < kWarm + kReps; ++rep) {
        seed = 0x9e3779b9u * static_cast<std::uint32_t>(rep + 1) + static_cast<std::uint32_t>(n) + (h2d ? 7u : 0u);
        if (h2d) {
            for (std::size_t i = 0; i < span; ++i) host[i] = pattern(i, seed);
            for (std::size_t off = 0; off < span; off += 64) _mm_clflush(host + off);
            _mm_mfence();
        } else {
            fill_kernel<<<264, 256, 0, s>>>(dev, span, seed);
            CHECK(cudaGetLastError());
        }
        CHECK(cudaStreamSynchronize(s));
        spin_kernel<<<1, 1, 0, s>>>(kHoldNs);
        CHECK(cudaGetLastError());
        for (int k = 0; k < kCopies; ++k) {
            const std::size_t off = static_cast<std::size_t>(k) * stride;
            if (h2d) {
                CHECK(cudaMemcpyAsync(dev + off, host + off, n, cudaMemcpyHostToDevice, s));
            } else {
                CHECK(cudaMemcpyAsync(host + off, dev + off, n, cudaMemcpyDeviceToHost, s));
            }
            if (k == 0) CHECK(cudaEventRecord(first, s));
        }
        CHECK(cudaEventRecord(stop, s));
        CHECK(cudaEventSynchronize(stop));
        float ms = 0;
        CHECK(cudaEventElapsedTime(&ms, first, stop));
        if (rep >= kWarm) t.push_back(ms * 1000.0 / (kCopies - 1));
    }
    const unsigned char* got = host;
    if (h2d) {
        CHECK(cudaMemcpy(back, dev, span, cudaMemcpyDeviceToHost));
        got = back;
    }
    for (int k = 0; k < kCopies; ++k) {
        const std::size_t off = static_cast<std::size_t>(k) * stride;
        for (std::size_t i = off; i < off + n; ++i) {
            if (got[i] != pattern(i, seed)) {
                std::fprintf(stderr, "verification failed: %s %zu B copy %d byte %zu\n", h2d ? "h2d" : "d2h", n, k, i - off);
                std::exit(1);
            }
        }
    }
    print_row("chain", h2d ? "h2d" : "d2h", n, t);
    CHECK(cudaEventDestroy(first));
    CHECK(cudaEventDestroy(stop));
}

}  // namespace

int main() {
    std::printf("kind,where,bytes,us_median,us_min,us_max\n");
    CHECK(cudaSetDeviceFlags(cudaDeviceMapHost));
    cudaStream_t s;
    CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    unsigned char* dev = nullptr;
    unsigned char* host = nullptr;
    unsigned char* back = nullptr;
    CHECK(cudaMalloc(&dev, kTotal));
    CHECK(cudaMallocHost(&host, kTotal));
    CHECK(cudaMallocHost(&back, kTotal));
    // The chase first and last, the chains between: the difference is taken within minutes.
    chase(true, s);
    chase(false, s);
    for (const std::size_t n : {std::size_t{4096}, std::size_t{16384}, std::size_t{65536}}) {
        for (const bool h2d : {true, false}) chain(h2d, n, dev, host, back, s);
    }
    chase(true, s);
    CHECK(cudaFree(dev));
    CHECK(cudaFreeHost(host));
    CHECK(cudaFreeHost(back));
    return 0;
}
