// What holds both-way DMA on a lent machine: duplex copies (H2D on one copy engine, D2H on the
// other) against one-way copies of the same size, with and without CPU threads loading host
// DRAM, with a flushed or a cache-resident H2D source, and with the D2H (or H2D) host buffer
// reused so that its lines can stay in the last-level cache.
//
// The question it answers (docs/model.md, "Why duplex is below twice one way"): on the lent H100
// hosts the two directions together move about 100 GB/s at 16 MiB but about 93 at 64 MiB and
// more, the H2D copy losing what the D2H copy keeps. If host DRAM is what runs out once the
// copies' written lines leave the cache, loading DRAM from the CPU lowers the duplex rate,
// and keeping the written lines in the cache (a reused destination) or the read lines in it (a
// warm source) raises it.
//
// Build: nvcc -O3 -arch=sm_90 -Xcompiler -pthread duplexmem.cu -o duplexmem
// Run:   ./duplexmem > duplexmem.csv      (about a minute; progress on stderr)
//        ./duplexmem repeat > repeat.csv  (as dmaprobe runs: nothing flushed, the same host
//        buffers written and read again each repetition, 16-256 MiB, 3 warm-ups, 10 repetitions)
//
// Timing: a gate kernel holds stream 0; both streams' copies are queued behind it (stream 1
// waits for an event recorded after the gate), so both start when the gate opens. Events after
// each copy give its end. Each case: one warm-up, then kReps timed repetitions; the host
// buffers are flushed from the CPU caches (clflushopt) before every repetition unless the case
// says warm. Every copy is verified once per case (non-zero pattern, every word).
#include <cuda_runtime.h>
#include <immintrin.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
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

constexpr std::size_t kMiB = std::size_t{1} << 20;
constexpr std::size_t kMaxBytes = 512 * kMiB;
constexpr std::size_t kReuseBytes = 16 * kMiB;  // a reused host buffer: well inside the 300 MiB L3
constexpr int kReps = 5;
constexpr int kRepeatWarmups = 3;  // repeat mode: enough passes for the cache's steady state
constexpr int kRepeatReps = 10;
constexpr int kLoadThreads = 8;
constexpr std::size_t kLoadBytes = std::size_t{2} << 30;  // the load threads' buffer, 7x the L3
constexpr int kFlushThreads = 4;

__global__ void gate(long long ns) {
    const long long start = clock64();
    // clock64 counts SM cycles; 2 GHz is near enough for a gate whose length does not matter.
    while (clock64() - start < ns * 2) {
    }
}

__global__ void fill_device(std::uint64_t* p, std::size_t n, std::uint64_t seed) {
    for (std::size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += std::size_t{gridDim.x} * blockDim.x) {
        p[i] = (i + 1) * 0x9E3779B97F4A7C15ULL ^ seed;
    }
}

__global__ void count_mismatches(const std::uint64_t* p, std::size_t n, std::uint64_t seed, unsigned long long* bad) {
    for (std::size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += std::size_t{gridDim.x} * blockDim.x) {
        if (p[i] != ((i + 1) * 0x9E3779B97F4A7C15ULL ^ seed)) atomicAdd(bad, 1ULL);
    }
}

std::uint64_t pattern(std::size_t i, std::uint64_t seed) { return (i + 1) * 0x9E3779B97F4A7C15ULL ^ seed; }

void fill_host(std::uint64_t* p, std::size_t n, std::uint64_t seed) {
    for (std::size_t i = 0; i < n; ++i) p[i] = pattern(i, seed);
}

__attribute__((target("clflushopt"))) void flush_range(const unsigned char* p, std::size_t lo, std::size_t hi) {
    for (std::size_t a = lo; a < hi; a += 64) _mm_clflushopt(const_cast<unsigned char*>(p + a));
    _mm_sfence();  // clflushopt is ordered only by a fence
}

// The host buffers are page aligned, so offsets on 64-byte boundaries are line boundaries.
void flush(const void* p, std::size_t n) {
    std::vector<std::thread> pool;
    for (int t = 0; t < kFlushThreads; ++t) {
        const std::size_t lo = n * static_cast<std::size_t>(t) / kFlushThreads & ~std::size_t{63};
        const std::size_t hi = t + 1 == kFlushThreads ? n : n * static_cast<std::size_t>(t + 1) / kFlushThreads & ~std::size_t{63};
        pool.emplace_back(flush_range, static_cast<const unsigned char*>(p), lo, hi);
    }
    for (auto& th : pool) th.join();
}

// Reads every line of p, so that the lines are in the CPU's caches (as far as they fit).
std::uint64_t touch(const std::uint64_t* p, std::size_t n) {
    std::uint64_t s = 0;
    for (std::size_t i = 0; i < n; i += 8) s += p[i];
    return s;
}

// CPU threads streaming over their shares of a buffer far larger than the L3, counting bytes.
class DramLoad {
public:
    enum class Kind { kNone, kRead, kWrite };

    explicit DramLoad(std::uint64_t* buffer) : buffer_(buffer) {}
    ~DramLoad() { stop(); }

    void start(Kind kind) {
        stop();
        kind_ = kind;
        if (kind == Kind::kNone) return;
        running_ = true;
        bytes_ = 0;
        for (int t = 0; t < kLoadThreads; ++t) {
            pool_.emplace_back([this, t] {
                const std::size_t n = kLoadBytes / sizeof(std::uint64_t);
                const std::size_t lo = n * static_cast<std::size_t>(t) / kLoadThreads;
                const std::size_t hi = n * static_cast<std::size_t>(t + 1) / kLoadThreads;
                constexpr std::size_t kChunk = 1 << 17;  // 1 MiB of words between checks
                std::uint64_t s = 0;
                std::size_t i = lo;
                while (running_.load(std::memory_order_relaxed)) {
                    const std::size_t end = std::min(hi, i + kChunk);
                    if (kind_ == Kind::kRead) {
                        for (std::size_t j = i; j < end; ++j) s += buffer_[j];
                    } else {
                        for (std::size_t j = i; j < end; ++j) buffer_[j] = j;
                    }
                    bytes_.fetch_add((end - i) * sizeof(std::uint64_t), std::memory_order_relaxed);
                    i = end == hi ? lo : end;
                }
                sink_.fetch_add(s, std::memory_order_relaxed);
            });
        }
    }
    void stop() {
        running_ = false;
        for (auto& th : pool_) th.join();
        pool_.clear();
    }
    std::uint64_t bytes() const { return bytes_.load(std::memory_order_relaxed); }
    static const char* name(Kind k) { return k == Kind::kNone ? "none" : k == Kind::kRead ? "read8" : "write8"; }

private:
    std::uint64_t* buffer_;
    Kind kind_ = Kind::kNone;
    std::atomic<bool> running_{false};
    std::atomic<std::uint64_t> bytes_{0};
    std::atomic<std::uint64_t> sink_{0};
    std::vector<std::thread> pool_;
};

enum class Mode { kH2d, kD2h, kDuplex };

struct Case {
    Mode mode;
    std::size_t bytes;      // per direction
    std::size_t reuse_h2d;  // 0, or the H2D host source is this many bytes, read again and again
    std::size_t reuse_d2h;  // 0, or the D2H host destination is this many bytes, written again and again
    bool warm;              // the H2D source read by the CPU just before (not flushed)
    const char* label;
};

struct Buffers {
    std::uint64_t* h_src = nullptr;  // H2D source (pinned)
    std::uint64_t* h_dst = nullptr;  // D2H destination (pinned)
    std::uint64_t* d_dst = nullptr;  // H2D destination
    std::uint64_t* d_src = nullptr;  // D2H source
    unsigned long long* d_bad = nullptr;
    cudaStream_t s[2]{};
    cudaEvent_t open = nullptr, end_h2d = nullptr, end_d2h = nullptr;
};

constexpr std::uint64_t kSeedH2d = 0x1234;
constexpr std::uint64_t kSeedD2h = 0xABCD;

// Queues one repetition: the copies of `c` behind a gate. Each copy of a reused buffer is the
// reused size; the device side moves through the whole size, so the GPU sees the same traffic.
void queue(const Case& c, Buffers& b) {
    gate<<<1, 1, 0, b.s[0]>>>(200'000);
    CHECK(cudaGetLastError());
    CHECK(cudaEventRecord(b.open, b.s[0]));
    CHECK(cudaStreamWaitEvent(b.s[1], b.open, 0));
    if (c.mode != Mode::kD2h) {
        const std::size_t piece = c.reuse_h2d != 0 ? c.reuse_h2d : c.bytes;
        for (std::size_t off = 0; off < c.bytes; off += piece) {
            const std::size_t host_off = c.reuse_h2d != 0 ? 0 : off;
            CHECK(cudaMemcpyAsync(reinterpret_cast<char*>(b.d_dst) + off, reinterpret_cast<char*>(b.h_src) + host_off, piece,
                                  cudaMemcpyHostToDevice, b.s[0]));
        }
    }
    CHECK(cudaEventRecord(b.end_h2d, b.s[0]));
    if (c.mode != Mode::kH2d) {
        const std::size_t piece = c.reuse_d2h != 0 ? c.reuse_d2h : c.bytes;
        for (std::size_t off = 0; off < c.bytes; off += piece) {
            const std::size_t host_off = c.reuse_d2h != 0 ? 0 : off;
            CHECK(cudaMemcpyAsync(reinterpret_cast<char*>(b.h_dst) + host_off, reinterpret_cast<char*>(b.d_src) + off, piece,
                                  cudaMemcpyDeviceToHost, b.s[1]));
        }
    }
    CHECK(cudaEventRecord(b.end_d2h, b.s[1]));
}

void verify(const Case& c, Buffers& b) {
    if (c.mode != Mode::kD2h) {
        // The H2D destination holds the source pattern, repeated where the source is reused.
        const std::size_t piece = (c.reuse_h2d != 0 ? c.reuse_h2d : c.bytes) / sizeof(std::uint64_t);
        for (std::size_t off = 0; off < c.bytes / sizeof(std::uint64_t); off += piece) {
            CHECK(cudaMemset(b.d_bad, 0, sizeof(unsigned long long)));
            count_mismatches<<<264, 512>>>(b.d_dst + off, piece, kSeedH2d, b.d_bad);
            CHECK(cudaGetLastError());
            unsigned long long bad = 0;
            CHECK(cudaMemcpy(&bad, b.d_bad, sizeof bad, cudaMemcpyDeviceToHost));
            if (bad != 0) {
                std::fprintf(stderr, "%s: H2D copy wrong in %llu words\n", c.label, bad);
                std::exit(1);
            }
        }
    }
    if (c.mode != Mode::kH2d) {
        // The D2H destination holds the device pattern of the last piece copied into it.
        const std::size_t piece = (c.reuse_d2h != 0 ? c.reuse_d2h : c.bytes) / sizeof(std::uint64_t);
        const std::size_t last = c.bytes / sizeof(std::uint64_t) - piece;
        std::size_t bad = 0;
        for (std::size_t i = 0; i < piece; ++i) bad += b.h_dst[i] != pattern(last + i, kSeedD2h);
        if (bad != 0) {
            std::fprintf(stderr, "%s: D2H copy wrong in %zu words\n", c.label, bad);
            std::exit(1);
        }
    }
}

}  // namespace

int main(int argc, char** argv) {
    // repeat: the steady state of repetitions that rewrite the same host buffers, as the main
    // plan's are: what a D2H copy's writes find of their own earlier lines in the I/O cache.
    const bool repeat = argc > 1 && std::strcmp(argv[1], "repeat") == 0;
    if (argc > 1 && !repeat) {
        std::fprintf(stderr, "usage: duplexmem [repeat]\n");
        return 2;
    }
    Buffers b;
    CHECK(cudaSetDevice(0));
    CHECK(cudaHostAlloc(&b.h_src, kMaxBytes, cudaHostAllocDefault));
    CHECK(cudaHostAlloc(&b.h_dst, kMaxBytes, cudaHostAllocDefault));
    CHECK(cudaMalloc(&b.d_dst, kMaxBytes));
    CHECK(cudaMalloc(&b.d_src, kMaxBytes));
    CHECK(cudaMalloc(&b.d_bad, sizeof(unsigned long long)));
    for (auto& s : b.s) CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    CHECK(cudaEventCreate(&b.open));
    CHECK(cudaEventCreate(&b.end_h2d));
    CHECK(cudaEventCreate(&b.end_d2h));
    fill_host(b.h_src, kMaxBytes / sizeof(std::uint64_t), kSeedH2d);
    std::memset(b.h_dst, 0, kMaxBytes);
    fill_device<<<264, 512>>>(b.d_src, kMaxBytes / sizeof(std::uint64_t), kSeedD2h);
    CHECK(cudaGetLastError());
    CHECK(cudaDeviceSynchronize());
    auto* load_buffer = static_cast<std::uint64_t*>(std::aligned_alloc(4096, kLoadBytes));
    if (load_buffer == nullptr) {
        std::fprintf(stderr, "cannot allocate the load buffer\n");
        return 1;
    }
    std::memset(load_buffer, 1, kLoadBytes);  // faults the pages in
    DramLoad load(load_buffer);

    std::vector<Case> cases;
    const std::vector<std::size_t> sizes_mib =
        repeat ? std::vector<std::size_t>{16, 24, 32, 40, 48, 56, 64, 80, 96, 128, 192, 256}
               : std::vector<std::size_t>{4, 8, 12, 16, 20, 24, 32, 40, 48, 64, 96, 128, 256, 512};
    for (const std::size_t mib : sizes_mib) {
        for (const Mode m : {Mode::kH2d, Mode::kD2h, Mode::kDuplex}) {
            cases.push_back({m, mib * kMiB, 0, 0, false, m == Mode::kH2d ? "h2d" : m == Mode::kD2h ? "d2h" : "duplex"});
        }
    }
    for (const std::size_t mib : {std::size_t{64}, std::size_t{256}}) {
        if (repeat) break;
        cases.push_back({Mode::kDuplex, mib * kMiB, 0, kReuseBytes, false, "duplex-d2h-reuse16"});
        cases.push_back({Mode::kDuplex, mib * kMiB, kReuseBytes, 0, false, "duplex-h2d-reuse16"});
        cases.push_back({Mode::kDuplex, mib * kMiB, kReuseBytes, kReuseBytes, false, "duplex-both-reuse16"});
        cases.push_back({Mode::kD2h, mib * kMiB, 0, kReuseBytes, false, "d2h-reuse16"});
        cases.push_back({Mode::kH2d, mib * kMiB, kReuseBytes, 0, false, "h2d-reuse16"});
    }
    for (const std::size_t mib : {std::size_t{16}, std::size_t{64}, std::size_t{128}}) {
        if (repeat) break;
        cases.push_back({Mode::kDuplex, mib * kMiB, 0, 0, true, "duplex-warm"});
        cases.push_back({Mode::kH2d, mib * kMiB, 0, 0, true, "h2d-warm"});
    }

    std::printf("label,load,size_bytes,rep,h2d_us,d2h_us,cpu_load_gbps\n");
    std::uint64_t sink = 0;
    const std::vector<DramLoad::Kind> loads =
        repeat ? std::vector<DramLoad::Kind>{DramLoad::Kind::kNone}
               : std::vector<DramLoad::Kind>{DramLoad::Kind::kNone, DramLoad::Kind::kRead, DramLoad::Kind::kWrite};
    const int warmups = repeat ? kRepeatWarmups : 1;
    const int reps = repeat ? kRepeatReps : kReps;
    for (const DramLoad::Kind lk : loads) {
        load.start(lk);
        std::fprintf(stderr, "load %s\n", DramLoad::name(lk));
        for (const Case& c : cases) {
            // The reuse and warm cases answer their question without a CPU load.
            if (lk != DramLoad::Kind::kNone && (c.reuse_h2d != 0 || c.reuse_d2h != 0 || c.warm)) continue;
            for (int rep = -warmups; rep < reps; ++rep) {
                const std::size_t src_bytes = c.reuse_h2d != 0 ? c.reuse_h2d : c.bytes;
                const std::size_t dst_bytes = c.reuse_d2h != 0 ? c.reuse_d2h : c.bytes;
                if (c.warm) {
                    sink += touch(b.h_src, src_bytes / sizeof(std::uint64_t));
                } else if (!repeat) {
                    flush(b.h_src, src_bytes);
                }
                if (!repeat) flush(b.h_dst, dst_bytes);
                const std::uint64_t before = load.bytes();
                const auto t0 = std::chrono::steady_clock::now();
                queue(c, b);
                CHECK(cudaStreamSynchronize(b.s[0]));
                CHECK(cudaStreamSynchronize(b.s[1]));
                const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
                const double cpu_gbps = static_cast<double>(load.bytes() - before) / wall / 1e9;
                float h2d_ms = 0.0f, d2h_ms = 0.0f;
                CHECK(cudaEventElapsedTime(&h2d_ms, b.open, b.end_h2d));
                CHECK(cudaEventElapsedTime(&d2h_ms, b.open, b.end_d2h));
                if (rep < 0) {
                    if (rep == -warmups) verify(c, b);
                    continue;
                }
                std::printf("%s,%s,%zu,%d,%.3f,%.3f,%.2f\n", c.label, DramLoad::name(lk), c.bytes, rep,
                            c.mode == Mode::kD2h ? 0.0 : h2d_ms * 1e3, c.mode == Mode::kH2d ? 0.0 : d2h_ms * 1e3, cpu_gbps);
            }
        }
        std::fflush(stdout);
    }
    load.stop();
    // What the load threads move with no DMA beside them, over one second each.
    for (const DramLoad::Kind lk : {DramLoad::Kind::kRead, DramLoad::Kind::kWrite}) {
        load.start(lk);
        const std::uint64_t before = load.bytes();
        std::this_thread::sleep_for(std::chrono::seconds(1));
        std::printf("cpu-alone,%s,0,0,0,0,%.2f\n", DramLoad::name(lk), static_cast<double>(load.bytes() - before) / 1e9);
        load.stop();
    }
    if (sink == 42) std::fprintf(stderr, "\n");
    std::free(load_buffer);
    return 0;
}
