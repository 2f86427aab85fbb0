// When does a pageable copy out of the GPU write its destination? The runtime stages it through a
// pinned buffer: an engine fills the buffer, the CPU copies it out into the pageable destination.
// The model (pageable.bounce_size, 1 MiB) fills a whole buffer before the CPU copies any of it, and
// the main plan's copies out of the GPU of 64 KiB-1 MiB are 1.3-3.4 us slower than that on the
// leases of ../pageable-pieces once the CPU's copy runs at the rate the large copies give
// (13-14 GB/s), those of 64 MiB-1 GiB 14 % faster than the model's fitted rate. Which part is
// slower: the start of the CPU's copy (the buffer's fill, its completion seen by the CPU), or the
// CPU's copy itself, and does it go in pieces?
//
// Per size, blocking copies out of the GPU, each kind in its own loop of 3 warm-ups and 20
// repetitions (medians and p10/p90 of the call's time), the GPU source refilled by a kernel with a
// new pattern before each repetition (outside the time, as dmaprobe refills its device buffers),
// the destination verified word by word after the loop:
//   pinned*:   into a pinned buffer, the engine's part alone, against what the CPU's caches hold of
//              the destination: as the repetition before left it (`pinned`; `_norefill`: the
//              source not refilled), flushed (`_flushed`), just read by the CPU (`_read`), just
//              written by it (`_written`);
//   pageable*: into a malloc'd, touched buffer, the same buffer every repetition as dmaprobe runs a
//              case: back to back (`pageable`, `_norefill`), just read (`_read`) or flushed
//              (`_flushed`) by the CPU, and `pageable_watched`: a second thread, on another core,
//              spins on the last 8 bytes of every piece of the destination (16 KiB, or size / 256
//              if larger) in order and stamps when each holds this repetition's data, on the
//              call's clock: the timeline of the CPU's copy-out (rows `piece`);
//   pageable_h2d: a pageable copy into the GPU and a synchronisation, as dmaprobe times it, back to
//              back, its source written and flushed once per size (the rate of the CPU's copy into
//              the staging pieces beside the copy-out's on the same machine).
// Build: nvcc -O3 -arch=sm_90 -Xcompiler -pthread watch.cu -o watch
// Run:   ./watch > watch.csv   (rows: kind,bytes,piece,offset,...; see the header line)
#include <cuda_runtime.h>
#include <immintrin.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
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

constexpr int kWarm = 3;
constexpr int kReps = 20;
constexpr std::size_t kMinPiece = 16u << 10;
constexpr std::size_t kMaxPieces = 256;
// A piece the watcher has not seen this long after the call started is recorded as missing, so a
// copy that writes out of order cannot hang the program.
constexpr double kGiveUpUs = 2e6;

using Clock = std::chrono::steady_clock;
double us(Clock::time_point a, Clock::time_point b) { return std::chrono::duration<double, std::micro>(b - a).count(); }

__host__ __device__ std::uint32_t value(std::size_t i, std::uint32_t seed) {
    return static_cast<std::uint32_t>(i) * 2654435761u ^ seed;
}

__global__ void fill_kernel(std::uint32_t* p, std::size_t words, std::uint32_t seed) {
    for (std::size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < words; i += std::size_t{gridDim.x} * blockDim.x) {
        p[i] = value(i, seed);
    }
}

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    const std::size_t n = v.size();
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}
double quantile(std::vector<double> v, double q) {
    std::sort(v.begin(), v.end());
    return v[static_cast<std::size_t>(q * static_cast<double>(v.size() - 1) + 0.5)];
}

// The watcher: waits for a job (a repetition), then stamps each piece's last 8 bytes as they turn
// to the repetition's data.
struct Watch {
    std::atomic<int> job{0};   // repetition number to watch; 0 idle; -1 quit
    std::atomic<int> done{0};  // last repetition watched
    const volatile std::uint64_t* dst = nullptr;
    std::size_t bytes = 0, piece = 0;
    std::uint32_t seed = 0;
    Clock::time_point start;
    std::vector<double> seen_us;  // per piece, this repetition
};

void watcher(Watch* w) {
    int last = 0;
    for (;;) {
        int j;
        while ((j = w->job.load(std::memory_order_acquire)) == last || j == 0) {
            if (j == -1) return;
        }
        if (j == -1) return;
        last = j;
        const std::size_t pieces = w->bytes / w->piece;
        for (std::size_t k = 0; k < pieces; ++k) {
            const std::size_t off = (k + 1) * w->piece - 8;  // the piece's last 8 bytes
            const std::size_t word = off / 4;
            const std::uint64_t want =
                static_cast<std::uint64_t>(value(word, w->seed)) | (static_cast<std::uint64_t>(value(word + 1, w->seed)) << 32);
            double t = -1.0;
            for (;;) {
                const Clock::time_point now = Clock::now();
                if (w->dst[off / 8] == want) {
                    t = us(w->start, now);
                    break;
                }
                if (us(w->start, now) > kGiveUpUs) break;
            }
            w->seen_us[k] = t;
        }
        w->done.store(j, std::memory_order_release);
    }
}

}  // namespace

int main() {
    const std::size_t sizes[] = {16u << 10, 64u << 10, 128u << 10, 256u << 10, 512u << 10, 1u << 20, 3u << 19,
                                 2u << 20,  4u << 20,  8u << 20,   16u << 20,  64u << 20};
    constexpr std::size_t kMax = 64u << 20;
    CHECK(cudaSetDevice(0));
    CHECK(cudaFree(nullptr));
    std::uint32_t* dev = nullptr;
    std::uint32_t* pinned = nullptr;
    CHECK(cudaMalloc(&dev, kMax));
    CHECK(cudaHostAlloc(reinterpret_cast<void**>(&pinned), kMax, cudaHostAllocDefault));
    void* raw = nullptr;
    if (posix_memalign(&raw, 4096, kMax) != 0) {
        std::fprintf(stderr, "posix_memalign failed\n");
        return 1;
    }
    auto* pageable = static_cast<std::uint32_t*>(raw);
    std::memset(pageable, 0, kMax);  // touched: no first-touch faults in the timed copies

    Watch w;
    w.dst = reinterpret_cast<const volatile std::uint64_t*>(pageable);
    w.seen_us.assign(kMaxPieces, -1.0);
    std::thread th(watcher, &w);
    int job = 0;

    std::printf("kind,bytes,piece_bytes,piece,offset_bytes,p50_us,p10_us,p90_us,missing\n");
    std::uint32_t seed = 0x5bd1e995u;
    const auto flush = [](const void* p, std::size_t n) {
        const char* c = static_cast<const char*>(p);
        for (std::size_t i = 0; i < n; i += 64) _mm_clflush(c + i);
        _mm_mfence();
    };
    volatile std::uint64_t sink = 0;
    const auto read_all = [&](const void* p, std::size_t n) {
        const auto* q = static_cast<const std::uint64_t*>(p);
        std::uint64_t s = 0;
        for (std::size_t i = 0; i < n / 8; ++i) s += q[i];
        sink = sink + s;
    };
    for (const std::size_t n : sizes) {
        const std::size_t words = n / 4;
        const std::size_t piece = std::max(kMinPiece, n / kMaxPieces);
        const std::size_t pieces = n / piece;
        const auto verify = [&](const std::uint32_t* p, const char* what) {
            for (std::size_t i = 0; i < words; ++i) {
                if (p[i] != value(i, seed)) {
                    std::fprintf(stderr, "verification failed: %s %zu B word %zu\n", what, n, i);
                    std::exit(1);
                }
            }
        };
        // One kind: its own loop; `prep` runs before each repetition's call, outside its time, after
        // the GPU source is refilled with this repetition's pattern (as dmaprobe refills its device
        // buffers before each repetition); the destination is verified after the loop.
        const auto kind = [&](const char* name, std::uint32_t* dst, bool watched, bool refill, auto&& prep) {
            std::vector<std::vector<double>> seen(pieces);
            std::vector<int> missing(pieces, 0);
            std::vector<double> t;
            for (int rep = 0; rep < kWarm + kReps; ++rep) {
                if (refill || rep == 0) {
                    ++seed;
                    fill_kernel<<<264, 256>>>(dev, words, seed);
                    CHECK(cudaGetLastError());
                    CHECK(cudaDeviceSynchronize());
                }
                prep();
                if (watched) {
                    w.bytes = n;
                    w.piece = piece;
                    w.seed = seed;
                    std::fill(w.seen_us.begin(), w.seen_us.end(), -1.0);
                }
                w.start = Clock::now();
                if (watched) w.job.store(++job, std::memory_order_release);
                CHECK(cudaMemcpy(dst, dev, n, cudaMemcpyDeviceToHost));
                const Clock::time_point t1 = Clock::now();
                if (watched) {
                    while (w.done.load(std::memory_order_acquire) != job) {
                    }
                }
                if (rep < kWarm) continue;
                t.push_back(us(w.start, t1));
                if (!watched) continue;
                for (std::size_t k = 0; k < pieces; ++k) {
                    if (w.seen_us[k] < 0) {
                        ++missing[k];
                    } else {
                        seen[k].push_back(w.seen_us[k]);
                    }
                }
            }
            verify(dst, name);
            std::printf("%s,%zu,%zu,,,%.3f,%.3f,%.3f,0\n", name, n, piece, median(t), quantile(t, 0.1), quantile(t, 0.9));
            if (!watched) return;
            for (std::size_t k = 0; k < pieces; ++k) {
                if (seen[k].empty()) {
                    std::printf("piece,%zu,%zu,%zu,%zu,,,,%d\n", n, piece, k, (k + 1) * piece, missing[k]);
                } else {
                    std::printf("piece,%zu,%zu,%zu,%zu,%.3f,%.3f,%.3f,%d\n", n, piece, k, (k + 1) * piece, median(seen[k]),
                                quantile(seen[k], 0.1), quantile(seen[k], 0.9), missing[k]);
                }
            }
        };
        const auto nothing = [] {};
        // The engine's part alone, against the state of the destination's lines in the CPU's caches.
        kind("pinned", pinned, false, true, nothing);                                  // as the last repetition left them
        kind("pinned_norefill", pinned, false, false, nothing);                        // the GPU source not rewritten
        kind("pinned_flushed", pinned, false, true, [&] { flush(pinned, n); });        // in DRAM only
        kind("pinned_read", pinned, false, true, [&] { read_all(pinned, n); });        // the CPU has just read them
        kind("pinned_written", pinned, false, true, [&] { std::memset(pinned, 0, n); });  // the CPU holds them modified
        // The pageable copy: back to back, watched, and with the destination just read by the CPU.
        kind("pageable", pageable, false, true, nothing);
        kind("pageable_norefill", pageable, false, false, nothing);
        kind("pageable_watched", pageable, true, true, nothing);
        kind("pageable_read", pageable, false, true, [&] { read_all(pageable, n); });
        kind("pageable_flushed", pageable, false, true, [&] { flush(pageable, n); });
        // The pageable copy into the GPU, as dmaprobe times it (the call and a synchronisation),
        // back to back, its source written and flushed once per size: how its rate, the CPU's
        // copy into staging pieces of 64 KiB each handed to an engine, compares with the
        // copy-out's above on the same machine.
        {
            ++seed;
            for (std::size_t i = 0; i < words; ++i) pageable[i] = value(i, seed);
            flush(pageable, n);
            std::vector<double> t;
            for (int rep = 0; rep < kWarm + kReps; ++rep) {
                const Clock::time_point t0 = Clock::now();
                CHECK(cudaMemcpy(dev, pageable, n, cudaMemcpyHostToDevice));
                CHECK(cudaDeviceSynchronize());
                const Clock::time_point t1 = Clock::now();
                if (rep >= kWarm) t.push_back(us(t0, t1));
            }
            CHECK(cudaMemcpy(pinned, dev, n, cudaMemcpyDeviceToHost));
            verify(pinned, "pageable_h2d");
            std::printf("pageable_h2d,%zu,%zu,,,%.3f,%.3f,%.3f,0\n", n, piece, median(t), quantile(t, 0.1), quantile(t, 0.9));
        }
        std::fflush(stdout);
    }
    w.job.store(-1, std::memory_order_release);
    th.join();
    std::free(raw);
    CHECK(cudaFreeHost(pinned));
    CHECK(cudaFree(dev));
    return 0;
}
