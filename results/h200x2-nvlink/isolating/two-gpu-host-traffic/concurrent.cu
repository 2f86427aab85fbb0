// Do two GPUs' copies to and from host memory slow each other? A staged peer copy (peer access
// off) runs a device-to-host copy on the source GPU while the destination GPU runs a
// host-to-device copy of the piece before; the model gives each GPU its own root port and lets
// them meet only in the root complex's total (port_bandwidth_total) and host memory. This
// program times each GPU's copies alone and with the other GPU's at once:
//   d2h0      GPU 0 device to host, alone          h2d1   GPU 1 host to device, alone
//   d2h0+h2d1 both at once (the staged pipeline's pair)
//   d2h0+d2h1, h2d0+h2d1  the same direction on both GPUs at once
// in two shapes: one 256 MiB copy, and 64 back-to-back 512 KiB copies (the runtime's staging
// pieces) on one stream. Each GPU's interval is timed with events on its own stream; both
// streams are held behind a spin kernel until all calls are queued, and the spins end together
// (same global-timer deadline), so the copies start within a microsecond or two of each other.
//
// Build: nvcc -O3 -arch=sm_90 concurrent.cu -o concurrent
// Run:   ./concurrent > concurrent.csv     (needs two GPUs)
// Two warm-ups and 20 timed repetitions per cell; medians, min and max; every copy verified;
// host buffers flushed from the CPU's caches before each repetition.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
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

constexpr std::size_t kMiB = 1024 * 1024;
constexpr std::size_t kBig = 256 * kMiB;
constexpr std::size_t kPiece = 512 * 1024;
constexpr int kPieces = 64;
constexpr int kWarm = 2;
constexpr int kReps = 20;
constexpr unsigned long long kLeadNs = 5'000'000;  // spins end this long after the calls begin

__global__ void spin_until(unsigned long long deadline) {
    for (;;) {
        unsigned long long t;
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
        if (t >= deadline) break;
    }
}

__global__ void read_timer(unsigned long long* out) {
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    *out = t;
}

__global__ void fill_kernel(std::uint32_t* p, std::size_t words, std::uint32_t seed) {
    for (std::size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < words; i += std::size_t{gridDim.x} * blockDim.x) {
        p[i] = static_cast<std::uint32_t>(i) * 2654435761u ^ seed;
    }
}

std::uint32_t pattern(std::size_t i, std::uint32_t seed) { return static_cast<std::uint32_t>(i) * 2654435761u ^ seed; }

struct Gpu {
    int id = 0;
    std::uint32_t* dev = nullptr;   // kBig bytes
    std::uint32_t* host = nullptr;  // kBig bytes, pinned
    cudaStream_t s{};
    cudaEvent_t a{}, b{};
    unsigned long long* timer = nullptr;
};

void setup(Gpu& g, int id) {
    g.id = id;
    CHECK(cudaSetDevice(id));
    CHECK(cudaMalloc(&g.dev, kBig));
    CHECK(cudaMallocHost(&g.host, kBig));
    CHECK(cudaMalloc(&g.timer, sizeof(unsigned long long)));
    CHECK(cudaStreamCreateWithFlags(&g.s, cudaStreamNonBlocking));
    CHECK(cudaEventCreate(&g.a));
    CHECK(cudaEventCreate(&g.b));
}

unsigned long long gpu_now(Gpu& g) {
    CHECK(cudaSetDevice(g.id));
    read_timer<<<1, 1, 0, g.s>>>(g.timer);
    CHECK(cudaGetLastError());
    unsigned long long t = 0;
    CHECK(cudaMemcpyAsync(&t, g.timer, sizeof t, cudaMemcpyDeviceToHost, g.s));
    CHECK(cudaStreamSynchronize(g.s));
    return t;
}

// The CPU's writes are flushed out of its caches, as dmaprobe's --flush-host-data does: the GPU
// then reads and writes lines that sit in DRAM (results/h100-sxm/isolating/host-cache-and-store-size).
void flush(const void* p, std::size_t bytes) {
    const char* c = static_cast<const char*>(p);
    for (std::size_t off = 0; off < bytes; off += 64) _mm_clflush(c + off);
    _mm_mfence();
}

// Data for one direction: device-to-host copies read a device pattern, host-to-device ones a
// host pattern; both with a seed per repetition so a stale copy fails verification.
void prepare(Gpu& g, bool d2h, std::size_t bytes, std::uint32_t seed) {
    CHECK(cudaSetDevice(g.id));
    const std::size_t words = bytes / 4;
    if (d2h) {
        fill_kernel<<<264, 256, 0, g.s>>>(g.dev, words, seed);
        CHECK(cudaGetLastError());
        std::memset(g.host, 0, bytes);
    } else {
        for (std::size_t i = 0; i < words; ++i) g.host[i] = pattern(i, seed);
        CHECK(cudaMemsetAsync(g.dev, 0, bytes, g.s));
    }
    flush(g.host, bytes);
    CHECK(cudaStreamSynchronize(g.s));
}

void verify(Gpu& g, bool d2h, std::size_t bytes, std::uint32_t seed, const char* what) {
    const std::size_t words = bytes / 4;
    std::vector<std::uint32_t> back;
    const std::uint32_t* p = g.host;
    if (!d2h) {
        back.resize(words);
        CHECK(cudaSetDevice(g.id));
        CHECK(cudaMemcpy(back.data(), g.dev, bytes, cudaMemcpyDeviceToHost));
        p = back.data();
    }
    for (std::size_t i = 0; i < words; ++i) {
        if (p[i] != pattern(i, seed)) {
            std::fprintf(stderr, "verification failed: %s GPU %d word %zu\n", what, g.id, i);
            std::exit(1);
        }
    }
}

void enqueue(Gpu& g, bool d2h, bool pieces, unsigned long long deadline) {
    CHECK(cudaSetDevice(g.id));
    spin_until<<<1, 1, 0, g.s>>>(deadline);
    CHECK(cudaGetLastError());
    CHECK(cudaEventRecord(g.a, g.s));
    const int n = pieces ? kPieces : 1;
    const std::size_t each = pieces ? kPiece : kBig;
    for (int k = 0; k < n; ++k) {
        char* d = reinterpret_cast<char*>(g.dev) + static_cast<std::size_t>(k) * each;
        char* h = reinterpret_cast<char*>(g.host) + static_cast<std::size_t>(k) * each;
        if (d2h) {
            CHECK(cudaMemcpyAsync(h, d, each, cudaMemcpyDeviceToHost, g.s));
        } else {
            CHECK(cudaMemcpyAsync(d, h, each, cudaMemcpyHostToDevice, g.s));
        }
    }
    CHECK(cudaEventRecord(g.b, g.s));
}

struct Cell {
    const char* name;
    bool use0, d2h0, use1, d2h1;
};

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    const std::size_t n = v.size();
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

}  // namespace

int main() {
    int n = 0;
    CHECK(cudaGetDeviceCount(&n));
    std::printf("cell,shape,gpu,direction,bytes,median_us,min_us,max_us,gbps\n");
    if (n < 2) {
        std::fprintf(stderr, "concurrent needs two GPUs; this machine has %d\n", n);
        return 1;
    }
    Gpu g[2];
    setup(g[0], 0);
    setup(g[1], 1);
    const Cell cells[] = {
        {"d2h0", true, true, false, false},          {"h2d1", false, false, true, false},
        {"d2h0+h2d1", true, true, true, false},      {"d2h1", false, false, true, true},
        {"h2d0", true, false, false, false},         {"d2h0+d2h1", true, true, true, true},
        {"h2d0+h2d1", true, false, true, false},
    };
    for (const bool pieces : {true, false}) {
        const std::size_t bytes = pieces ? kPiece * kPieces : kBig;
        for (const Cell& c : cells) {
            std::vector<double> t[2];
            std::uint32_t seed = 0;
            for (int rep = 0; rep < kWarm + kReps; ++rep) {
                seed = 0x9e3779b9u * static_cast<std::uint32_t>(rep + 1) + (pieces ? 17u : 0u);
                if (c.use0) prepare(g[0], c.d2h0, bytes, seed);
                if (c.use1) prepare(g[1], c.d2h1, bytes, seed ^ 0x5bd1e995u);
                // One deadline on both GPUs' global timers, which the driver keeps in step.
                const unsigned long long deadline = gpu_now(g[0]) + kLeadNs;
                if (c.use0) enqueue(g[0], c.d2h0, pieces, deadline);
                if (c.use1) enqueue(g[1], c.d2h1, pieces, deadline);
                for (int k = 0; k < 2; ++k) {
                    const bool used = k == 0 ? c.use0 : c.use1;
                    if (!used) continue;
                    CHECK(cudaSetDevice(k));
                    CHECK(cudaEventSynchronize(g[k].b));
                    float ms = 0;
                    CHECK(cudaEventElapsedTime(&ms, g[k].a, g[k].b));
                    if (rep >= kWarm) t[k].push_back(ms * 1000.0);
                }
            }
            if (c.use0) verify(g[0], c.d2h0, bytes, seed, c.name);
            if (c.use1) verify(g[1], c.d2h1, bytes, seed ^ 0x5bd1e995u, c.name);
            for (int k = 0; k < 2; ++k) {
                if (t[k].empty()) continue;
                const bool d2h = k == 0 ? c.d2h0 : c.d2h1;
                const double med = median(t[k]);
                std::printf("%s,%s,%d,%s,%zu,%.3f,%.3f,%.3f,%.2f\n", c.name, pieces ? "pieces512KiBx64" : "one256MiB", k,
                            d2h ? "d2h" : "h2d", bytes, med, *std::min_element(t[k].begin(), t[k].end()),
                            *std::max_element(t[k].begin(), t[k].end()), static_cast<double>(bytes) / med / 1e3);
                std::fflush(stdout);
            }
        }
    }
    return 0;
}
