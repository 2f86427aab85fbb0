// When does a host-to-device copy's data reach GPU memory, and when does the CPU learn that the
// copy is done? On the 2-GPU host the model's small blocking host-to-device copies are about
// 1.2 us slow while its device-to-host ones are right, and there a host-to-device copy takes no
// longer than a device-to-host one, where on the H100 host it takes 1.1 us longer (64 KiB-256 KiB;
// ../../compare, ../../../h100-sxm/compare). ../event-completion times a device-to-host copy's
// data against the host's clock; this program does the same both ways on GPU 0:
//   call      cudaMemcpyAsync's own CPU time;
//   seen      from before the call until the CPU sees a flag in mapped host memory that a
//             watcher kernel (one thread, started before the call, spinning on the destination's
//             last 8 bytes in GPU memory) writes once they hold this repetition's value; for a
//             device-to-host copy, until the CPU sees the destination's last 8 bytes itself;
//   event     the same copy with an event recorded behind it, until cudaEventQuery on it first
//             succeeds (another repetition);
//   blocking  a cudaMemcpy of the same size, call to return.
//   echo      the watcher's own report: from the CPU's store of a value into mapped host memory
//             that a second watcher spins on (over the link) to that watcher's flag: what a
//             flag costs beside a copy, the same on any host with the same link.
// If a host differs in how soon a copy's data lands, `seen` moves; if in how soon the CPU learns
// of it, `blocking - seen` does.
//
// Build: nvcc -O3 -arch=sm_90 landing.cu -o landing
// Run:   ./landing > landing.csv
// 10 warm-ups and 200 timed repetitions per size and way; medians and p10/p90; the last
// repetition's whole destination is verified. Host sources are out of the CPU's caches (set_last).
#include <cuda_runtime.h>
#include <immintrin.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
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
constexpr int kReps = 200;
constexpr double kSpinLimitUs = 1e6;  // a copy that never shows up is an error, not a hang
constexpr long long kWatchLimitNs = 2000000000LL;  // a watcher gives up after 2 s

using Clock = std::chrono::steady_clock;

double us_since(Clock::time_point t0) { return std::chrono::duration<double, std::micro>(Clock::now() - t0).count(); }

__device__ long long global_ns() {
    long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}

// One thread: says it runs, spins until `*watched` holds `value`, then writes `value` to `flag`
// (mapped host memory). Gives up (flag = ~value) after kWatchLimitNs.
__global__ void watch(const volatile std::uint64_t* watched, std::uint64_t value, volatile std::uint64_t* started,
                      volatile std::uint64_t* flag) {
    *started = value;
    __threadfence_system();
    const long long t0 = global_ns();
    while (*watched != value) {
        if (global_ns() - t0 > kWatchLimitNs) {
            *flag = ~value;
            return;
        }
    }
    *flag = value;
    __threadfence_system();
}

__global__ void fill(std::uint64_t* p, std::size_t words, std::uint64_t value) {
    for (std::size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < words; i += gridDim.x * blockDim.x) p[i] = value;
}

struct Stats {
    double p10, median, p90;
};

Stats stats(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    const auto at = [&](double q) { return v[static_cast<std::size_t>(q * (v.size() - 1) + 0.5)]; };
    return {at(0.1), at(0.5), at(0.9)};
}

void row(const char* way, const char* what, std::size_t bytes, const std::vector<double>& v) {
    const Stats s = stats(v);
    std::printf("%s,%s,%zu,%.4f,%.4f,%.4f\n", way, what, bytes, s.p10, s.median, s.p90);
}

// A host source as dmaprobe leaves it, out of the CPU's caches (a DMA read of lines the CPU holds
// dirty is slower): every word `base` once, flushed; each repetition then writes only the last
// word, which the watcher waits for, and flushes that line.
void flush(const void* p, std::size_t bytes) {
    for (std::size_t off = 0; off < bytes; off += 64) _mm_clflush(static_cast<const char*>(p) + off);
    _mm_mfence();
}

void set_last(std::uint64_t* host, std::size_t words, std::uint64_t value) {
    host[words - 1] = value;
    flush(host + words - 1, 8);
}

bool spin_until(volatile std::uint64_t* p, std::uint64_t value, Clock::time_point t0, const char* what) {
    while (*p != value) {
        if (*p == ~value) {
            std::fprintf(stderr, "%s: the watcher gave up\n", what);
            std::exit(1);
        }
        if (us_since(t0) > kSpinLimitUs) {
            std::fprintf(stderr, "%s: nothing arrived\n", what);
            std::exit(1);
        }
    }
    return true;
}

}  // namespace

int main() {
    CHECK(cudaSetDevice(0));
    CHECK(cudaSetDeviceFlags(cudaDeviceMapHost));
    const std::size_t sizes[] = {8, 4096, 65536, 262144, 1 << 20};
    const std::size_t max_bytes = 1 << 20;
    std::uint64_t* dev = nullptr;
    std::uint64_t* host = nullptr;
    std::uint64_t* flags = nullptr;  // [0] started, [1] flag, [2] echo word
    CHECK(cudaMalloc(&dev, max_bytes));
    CHECK(cudaMallocHost(&host, max_bytes));
    CHECK(cudaHostAlloc(&flags, 4096, cudaHostAllocMapped));
    std::uint64_t* dflags = nullptr;
    CHECK(cudaHostGetDevicePointer(reinterpret_cast<void**>(&dflags), flags, 0));
    volatile std::uint64_t* started = flags;
    volatile std::uint64_t* flag = flags + 1;
    volatile std::uint64_t* echo = flags + 2;
    cudaStream_t s, w;
    CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    CHECK(cudaStreamCreateWithFlags(&w, cudaStreamNonBlocking));
    cudaEvent_t after;
    CHECK(cudaEventCreate(&after));
    std::printf("way,what,bytes,p10_us,median_us,p90_us\n");
    std::uint64_t value = 0x5a5a000000000000ULL;
    // The watcher's own report: it spins on a mapped host word the CPU sets.
    {
        std::vector<double> v;
        for (int rep = 0; rep < kWarmup + kReps; ++rep) {
            ++value;
            *echo = 0;
            watch<<<1, 1, 0, w>>>(dflags + 2, value, dflags, dflags + 1);
            CHECK(cudaGetLastError());
            spin_until(started, value, Clock::now(), "echo start");
            std::atomic_thread_fence(std::memory_order_seq_cst);
            const Clock::time_point t0 = Clock::now();
            *echo = value;
            spin_until(flag, value, t0, "echo");
            const double t = us_since(t0);
            CHECK(cudaStreamSynchronize(w));
            if (rep >= kWarmup) v.push_back(t);
        }
        row("-", "echo", 8, v);
    }
    for (const bool to_device : {true, false}) {
        const char* way = to_device ? "h2d" : "d2h";
        for (const std::size_t bytes : sizes) {
            const std::size_t words = bytes / 8;
            const std::uint64_t base = ++value;
            if (to_device) {
                for (std::size_t i = 0; i < words; ++i) host[i] = base;
                flush(host, bytes);
            }
            std::vector<double> call, seen, event, blocking;
            for (int rep = 0; rep < kWarmup + kReps; ++rep) {
                // --- seen
                ++value;
                if (to_device) {
                    set_last(host, words, value);
                    CHECK(cudaMemset(dev + words - 1, 0, 8));
                    CHECK(cudaDeviceSynchronize());
                    watch<<<1, 1, 0, w>>>(dev + words - 1, value, dflags, dflags + 1);
                    CHECK(cudaGetLastError());
                    spin_until(started, value, Clock::now(), "watcher start");
                } else {
                    fill<<<64, 256, 0, s>>>(dev, words, value);
                    CHECK(cudaGetLastError());
                    CHECK(cudaStreamSynchronize(s));
                    host[words - 1] = 0;
                }
                volatile std::uint64_t* last = to_device ? flag : host + words - 1;
                std::atomic_thread_fence(std::memory_order_seq_cst);
                const Clock::time_point t0 = Clock::now();
                CHECK(cudaMemcpyAsync(to_device ? static_cast<void*>(dev) : static_cast<void*>(host),
                                      to_device ? static_cast<void*>(host) : static_cast<void*>(dev), bytes,
                                      to_device ? cudaMemcpyHostToDevice : cudaMemcpyDeviceToHost, s));
                const double t_call = us_since(t0);
                spin_until(last, value, t0, way);
                const double t_seen = us_since(t0);
                CHECK(cudaDeviceSynchronize());
                // --- event
                ++value;
                if (to_device) {
                    set_last(host, words, value);
                } else {
                    fill<<<64, 256, 0, s>>>(dev, words, value);
                    CHECK(cudaGetLastError());
                }
                CHECK(cudaDeviceSynchronize());
                const Clock::time_point t2 = Clock::now();
                CHECK(cudaMemcpyAsync(to_device ? static_cast<void*>(dev) : static_cast<void*>(host),
                                      to_device ? static_cast<void*>(host) : static_cast<void*>(dev), bytes,
                                      to_device ? cudaMemcpyHostToDevice : cudaMemcpyDeviceToHost, s));
                CHECK(cudaEventRecord(after, s));
                cudaError_t q;
                while ((q = cudaEventQuery(after)) == cudaErrorNotReady) {
                    if (us_since(t2) > kSpinLimitUs) {
                        std::fprintf(stderr, "%s %zu B: the end event never completed\n", way, bytes);
                        return 1;
                    }
                }
                CHECK(q);
                const double t_event = us_since(t2);
                // --- blocking
                ++value;
                if (to_device) {
                    set_last(host, words, value);
                } else {
                    fill<<<64, 256, 0, s>>>(dev, words, value);
                    CHECK(cudaGetLastError());
                }
                CHECK(cudaDeviceSynchronize());
                const Clock::time_point t1 = Clock::now();
                CHECK(cudaMemcpy(to_device ? static_cast<void*>(dev) : static_cast<void*>(host),
                                 to_device ? static_cast<void*>(host) : static_cast<void*>(dev), bytes,
                                 to_device ? cudaMemcpyHostToDevice : cudaMemcpyDeviceToHost));
                const double t_blocking = us_since(t1);
                if (rep < kWarmup) continue;
                call.push_back(t_call);
                seen.push_back(t_seen);
                event.push_back(t_event);
                blocking.push_back(t_blocking);
            }
            // The last repetition's whole destination.
            std::vector<std::uint64_t> check(words);
            if (to_device) {
                CHECK(cudaMemcpy(check.data(), dev, bytes, cudaMemcpyDeviceToHost));
            } else {
                std::memcpy(check.data(), host, bytes);
            }
            for (std::size_t i = 0; i < words; ++i) {
                if (check[i] != (to_device && i + 1 < words ? base : value)) {
                    std::fprintf(stderr, "%s %zu B: word %zu is wrong\n", way, bytes, i);
                    return 1;
                }
            }
            row(way, "call", bytes, call);
            row(way, "seen", bytes, seen);
            row(way, "event", bytes, event);
            row(way, "blocking", bytes, blocking);
        }
    }
    CHECK(cudaEventDestroy(after));
    CHECK(cudaStreamDestroy(s));
    CHECK(cudaStreamDestroy(w));
    CHECK(cudaFreeHost(flags));
    CHECK(cudaFreeHost(host));
    CHECK(cudaFree(dev));
    return 0;
}
