// Does the pointer chase through host memory read lines a CPU core holds? (chase-cache, README.md)
//
// dmaprobe's zero_copy pattern=chase has the CPU write the chain into mapped pinned memory
// (build_chase) and walk it before every repetition (chase_end, for the end it verifies), and
// flushes neither: the GPU's dependent loads then find the chain's lines in the CPU's caches,
// written by it. This program times the same chase (one thread, __ldcv, 20000 hops, events around
// the kernel) through 4 KiB-64 MiB with the chain's lines left four ways:
//   dirty        as dmaprobe: written, walked by the CPU before each run, not flushed;
//   dirty-core   the same with this thread held on the one CPU it started on;
//   clean        written and flushed (clflushopt) once, then walked by the CPU before each run:
//                clean copies in a core's caches;
//   flushed      written and flushed, the end computed from a private copy, flushed again
//                before each run: nothing in any CPU cache (what --flush-host-data promises).
// Every cell is run ROUNDS times, the modes and footprints interleaved, so that a state of the host
// that comes and goes shows as a change between rounds. 2 warm-ups and 10 timed runs a cell,
// medians; every run's end is checked against the chain.
// With `windows` as the second argument it times instead a flushed 4 KiB chain in each of 16 windows
// of the 64 MiB buffer (page k at 4 MiB + 4 KiB apart), ROUNDS times over: does a 4 KiB chase's level
// go with where its page lies (mode `window-K`), or with the machine?
// Build: nvcc -O3 -arch=sm_90 -Xcompiler -mclflushopt chasecache.cu -o chasecache
// Run:   ./chasecache [ROUNDS] [windows] > chasecache.csv
#include <cuda_runtime.h>
#include <immintrin.h>
#include <sched.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#define CHECK(x)                                                                              \
    do {                                                                                      \
        cudaError_t e_ = (x);                                                                 \
        if (e_ != cudaSuccess) {                                                              \
            std::fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); \
            std::exit(1);                                                                     \
        }                                                                                     \
    } while (0)

namespace {

constexpr std::size_t kNode = 64;      // one node a 64-byte line, as dmaprobe's chase
constexpr long long kHops = 20000;     // dmaprobe's main plan
constexpr int kWarmups = 2;
constexpr int kRuns = 10;

__global__ void chase(const unsigned char* base, unsigned long long start, long long hops, unsigned long long* end) {
    unsigned long long off = start;
    for (long long h = 0; h < hops; ++h) off = __ldcv(reinterpret_cast<const unsigned long long*>(base + off));
    *end = off;
}

std::uint64_t splitmix(std::uint64_t& s) {
    std::uint64_t z = (s += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

// Sattolo's shuffle: one cycle through every node (as gpu_validation/src/chase.cpp).
void build(unsigned char* p, std::size_t bytes, std::uint64_t seed) {
    const std::size_t n = bytes / kNode;
    std::vector<std::uint32_t> order(n);
    for (std::size_t i = 0; i < n; ++i) order[i] = static_cast<std::uint32_t>(i);
    for (std::size_t i = n - 1; i > 0; --i) std::swap(order[i], order[splitmix(seed) % i]);
    for (std::size_t i = 0; i < n; ++i) {
        const std::uint64_t next = static_cast<std::uint64_t>(order[i]) * kNode;
        std::memcpy(p + i * kNode, &next, sizeof next);
    }
}

std::uint64_t walk(const unsigned char* p, long long hops, std::uint64_t off) {
    for (long long h = 0; h < hops; ++h) std::memcpy(&off, p + off, sizeof off);
    return off;
}

void flush(const unsigned char* p, std::size_t n) {
    for (std::size_t a = 0; a < n; a += 64) _mm_clflushopt(const_cast<unsigned char*>(p + a));
    _mm_sfence();
}

// One cell: kWarmups + kRuns chases of kHops from `dev`, each run continuing where the last one
// stopped. `before_run(from)` prepares a run (walks the chain on the CPU or in a private image,
// flushes or not) and returns the end the chain says, which the run is checked against. Returns the
// timed runs' us a hop, sorted; exits on a wrong end, naming `what`.
template <class BeforeRun>
std::vector<double> time_cell(const unsigned char* dev, unsigned long long* end, cudaStream_t st, cudaEvent_t a,
                              cudaEvent_t b, BeforeRun before_run, const char* what) {
    std::vector<double> t;
    std::uint64_t from = 0;
    for (int i = 0; i < kWarmups + kRuns; ++i) {
        const std::uint64_t want = before_run(from);
        CHECK(cudaEventRecord(a, st));
        chase<<<1, 1, 0, st>>>(dev, from, kHops, end);
        CHECK(cudaGetLastError());
        CHECK(cudaEventRecord(b, st));
        CHECK(cudaEventSynchronize(b));
        unsigned long long got = 0;
        CHECK(cudaMemcpy(&got, end, sizeof got, cudaMemcpyDeviceToHost));
        if (got != want) {
            std::fprintf(stderr, "%s: ended at %llu, the chain says %llu\n", what, got, static_cast<unsigned long long>(want));
            std::exit(1);
        }
        float ms = 0;
        CHECK(cudaEventElapsedTime(&ms, a, b));
        if (i >= kWarmups) t.push_back(ms * 1000.0 / kHops);
        from = want;
    }
    std::sort(t.begin(), t.end());
    return t;
}

}  // namespace

int main(int argc, char** argv) {
    const int rounds = argc > 1 ? std::atoi(argv[1]) : 6;
    const std::size_t sizes[] = {4096, 64 * 1024, 2u << 20, 64u << 20};
    const char* modes[] = {"dirty", "dirty-core", "clean", "flushed"};
    const std::size_t max = 64u << 20;
    unsigned char* host = nullptr;
    CHECK(cudaHostAlloc(reinterpret_cast<void**>(&host), max, cudaHostAllocMapped));
    unsigned char* mapped = nullptr;
    CHECK(cudaHostGetDevicePointer(reinterpret_cast<void**>(&mapped), host, 0));
    unsigned long long* end = nullptr;
    CHECK(cudaMalloc(&end, sizeof *end));
    cudaStream_t st;
    CHECK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
    cudaEvent_t a, b;
    CHECK(cudaEventCreate(&a));
    CHECK(cudaEventCreate(&b));
    std::vector<unsigned char> image(max);
    cpu_set_t all;
    CHECK(sched_getaffinity(0, sizeof all, &all) == 0 ? cudaSuccess : cudaErrorUnknown);
    std::printf("round,mode,size_bytes,us_per_hop,p10_us,p90_us,cpu_before,cpu_after\n");
    std::uint64_t seed = 1;
    if (argc > 2 && std::strcmp(argv[2], "windows") == 0) {
        constexpr std::size_t kWindow = 4096;
        constexpr int kWindows = 16;
        for (int r = 0; r < rounds; ++r) {
            for (int w = 0; w < kWindows; ++w) {
                const std::size_t at = static_cast<std::size_t>(w) * ((4u << 20) + kWindow);
                unsigned char* win = host + at;
                build(win, kWindow, ++seed);
                std::memcpy(image.data(), win, kWindow);
                flush(win, kWindow);
                char what[32];
                std::snprintf(what, sizeof what, "window %d", w);
                const std::vector<double> t = time_cell(
                    mapped + at, end, st, a, b, [&](std::uint64_t from) { return walk(image.data(), kHops, from); }, what);
                std::printf("%d,window-%d,%zu,%.4f,%.4f,%.4f,%d,%d\n", r, w, kWindow, (t[4] + t[5]) / 2, t[1], t[8],
                            sched_getcpu(), sched_getcpu());
                std::fflush(stdout);
            }
        }
        return 0;
    }
    for (int r = 0; r < rounds; ++r) {
        for (int m = 0; m < 4; ++m) {
            for (std::size_t n : sizes) {
                const bool on_core = m == 1, cpu_walks = m != 3, flushed_once = m >= 2;
                if (on_core) {
                    cpu_set_t one;
                    CPU_ZERO(&one);
                    CPU_SET(sched_getcpu(), &one);
                    sched_setaffinity(0, sizeof one, &one);
                }
                const int cpu_before = sched_getcpu();
                build(host, n, ++seed);
                std::memcpy(image.data(), host, n);
                if (flushed_once) flush(host, n);
                char what[64];
                std::snprintf(what, sizeof what, "mode %s size %zu", modes[m], n);
                const std::vector<double> t = time_cell(
                    mapped, end, st, a, b,
                    [&](std::uint64_t from) {
                        const std::uint64_t want = cpu_walks ? walk(host, kHops, from) : walk(image.data(), kHops, from);
                        if (m == 3) flush(host, n);
                        return want;
                    },
                    what);
                const int cpu_after = sched_getcpu();
                if (on_core) sched_setaffinity(0, sizeof all, &all);
                std::printf("%d,%s,%zu,%.4f,%.4f,%.4f,%d,%d\n", r, modes[m], n, (t[4] + t[5]) / 2, t[1], t[8], cpu_before,
                            cpu_after);
                std::fflush(stdout);
            }
        }
    }
    return 0;
}
