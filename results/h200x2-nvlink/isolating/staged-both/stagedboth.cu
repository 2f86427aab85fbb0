// Why is a staged peer copy both ways at once so much slower than one way at small sizes?
// (The 2xH200 main plan, peer access off: one way 58.5 us at 1 MiB, both ways 82.2 us, where the
// model gives 56.6 and 65.5: -20 % both ways; at 16 and 256 MiB both ways it is within 3 %.)
// Peer access is disabled both ways, so cudaMemcpyPeerAsync stages through host memory. For each
// size, on streams of GPU 0 (s0) and GPU 1 (s1):
//   0to1, 1to0   one way alone, timed by events on the source GPU (start, copy, end);
//   both         dmaprobe's sequence: start event on GPU 0; GPU 1's stream waits for it, records
//                start1, copies 1 -> 0, records end1; GPU 0 copies 0 -> 1, records end0, waits
//                for end1, records stop. gpu0 = start..end0, gpu1 = start1..end1, row = start..stop;
//   free         the same calls in the same order without the two cross-GPU waits: each copy
//                timed from its own GPU's start event;
//   gated        as free, but each GPU's stream first runs a spin kernel (600 us, in proportion
//                to the size past 64 MiB: spin_us), so both
//                copies (and all calls) are queued before either starts: the GPUs' side alone;
//   gated0to1    one way behind the spin kernel (the reference for gated);
//   swap         as free, but GPU 0's copy issued before GPU 1's;
//   later0:D     as gated, GPU 0's spin D us longer: its copy starts D us after GPU 1's
//   later1:D     (later1: GPU 1's later). Each copy timed from its own GPU's start event;
//   delay:D      as free, but the CPU spins D us between GPU 1's calls and GPU 0's, and GPU 0's
//                start event is recorded right before its call: does a copy issued while the
//                other's pieces run lose time, and only then?
//   queries:D    as delay, the CPU calling cudaEventQuery on GPU 1's end event for those D us
//                (the driver busy beside the pieces, not only the CPU).
//   bothlate:D   as both (dmaprobe's sequence and row), the CPU spinning D us between GPU 1's
//                calls and GPU 0's staged call: where the row steps from one group to the other
//                as GPU 0's copy starts later (GPU 1's call is what moves it in dmaprobe).
// With STAGEDBOTH_REPS=FILE set, every timed repetition of both and bothlate is also appended to
// FILE (case,bytes,rep,call1_us,row_us).
// The CPU side: the time each cudaMemcpyPeerAsync keeps the CPU (call0, call1), and, for both and
// free, when the CPU first sees each copy's end event done (cudaEventQuery in a loop), from the
// start of the first call (seen0, seen1): which copy ends first, and by how much.
// 3 warm-ups and 20 timed repetitions a cell; medians, p10 and p90; data verified per cell
// (nonzero patterns, compared on the host); every CUDA call checked.
//
// Build: nvcc -O3 -arch=sm_90 stagedboth.cu -o stagedboth
// Run:   ./stagedboth [CASES [SIZES]] > stagedboth.csv
//        CASES comma-separated (default 0to1,1to0,both,free,gated,gated0to1), SIZES in KiB
//        (default 512,1024,2048,4096,16384,65536; up to 1 GiB), e.g. ./stagedboth later0:10,later1:10 1024
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

constexpr int kWarmup = 3;
constexpr int kReps = 20;
// Long enough that every call of a case is queued before the spin ends (the calls of a 64 MiB
// staged copy keep the CPU 150-300 us); larger copies get it in proportion (spin_us).
constexpr double kSpinUs = 600.0;
constexpr std::size_t kSpinBytes = std::size_t{64} << 20;
// Sizes up to this are accepted (the main plan's largest staged peer copy is 256 MiB).
constexpr std::size_t kMaxBytes = std::size_t{1} << 30;

double spin_us(std::size_t n) { return kSpinUs * static_cast<double>(std::max(n, kSpinBytes)) / static_cast<double>(kSpinBytes); }

using Clock = std::chrono::steady_clock;

__device__ unsigned long long globaltimer_ns() {
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}

// Spins for ns nanoseconds of the GPU's global timer (not its clock, which varies).
__global__ void spin(unsigned long long ns) {
    const unsigned long long t0 = globaltimer_ns();
    while (globaltimer_ns() - t0 < ns) {
    }
}

float elapsed_us(cudaEvent_t a, cudaEvent_t b) {
    float ms = 0;
    CHECK(cudaEventElapsedTime(&ms, a, b));
    return ms * 1000.0f;
}

double since_us(Clock::time_point t0) { return std::chrono::duration<double, std::micro>(Clock::now() - t0).count(); }

double quantile(std::vector<double> v, double q) {
    if (v.empty()) return 0.0;
    std::sort(v.begin(), v.end());
    return v[static_cast<std::size_t>(q * static_cast<double>(v.size() - 1) + 0.5)];
}

void fill(unsigned char* d, std::size_t n, unsigned seed, int dev) {
    std::vector<unsigned char> h(n);
    for (std::size_t i = 0; i < n; ++i) h[i] = static_cast<unsigned char>((i * 131u + seed * 17u + 7u) % 251u + 1u);
    CHECK(cudaSetDevice(dev));
    CHECK(cudaMemcpy(d, h.data(), n, cudaMemcpyHostToDevice));
}

void clear(unsigned char* d, std::size_t n, int dev) {
    CHECK(cudaSetDevice(dev));
    CHECK(cudaMemset(d, 0, n));
    CHECK(cudaDeviceSynchronize());
}

bool same(const unsigned char* a, int dev_a, const unsigned char* b, int dev_b, std::size_t n) {
    std::vector<unsigned char> ha(n), hb(n);
    CHECK(cudaSetDevice(dev_a));
    CHECK(cudaMemcpy(ha.data(), a, n, cudaMemcpyDeviceToHost));
    CHECK(cudaSetDevice(dev_b));
    CHECK(cudaMemcpy(hb.data(), b, n, cudaMemcpyDeviceToHost));
    return std::memcmp(ha.data(), hb.data(), n) == 0;
}

struct Gpu {
    int dev = 0;
    unsigned char* src = nullptr;
    unsigned char* dst = nullptr;
    cudaStream_t s{};
    cudaEvent_t start{}, end{}, stop{};
};

std::vector<std::string> split(const std::string& s) {
    std::vector<std::string> out;
    std::size_t a = 0;
    while (a <= s.size()) {
        const std::size_t b = std::min(s.find(',', a), s.size());
        if (b > a) out.push_back(s.substr(a, b - a));
        a = b + 1;
    }
    return out;
}

}  // namespace

int main(int argc, char** argv) {
    int count = 0;
    CHECK(cudaGetDeviceCount(&count));
    if (count < 2) {
        std::fprintf(stderr, "needs two GPUs, found %d\n", count);
        return 1;
    }
    for (int a = 0; a < 2; ++a) {
        CHECK(cudaSetDevice(a));
        const cudaError_t e = cudaDeviceDisablePeerAccess(1 - a);
        if (e == cudaErrorPeerAccessNotEnabled) {
            (void)cudaGetLastError();
        } else {
            CHECK(e);
        }
    }
    std::vector<std::string> cases = {"0to1", "1to0", "both", "free", "gated", "gated0to1"};
    std::vector<std::size_t> sizes = {std::size_t{512} << 10, std::size_t{1} << 20, std::size_t{2} << 20,
                                      std::size_t{4} << 20,   std::size_t{16} << 20, std::size_t{64} << 20};
    if (argc > 1) cases = split(argv[1]);
    if (argc > 2) {
        sizes.clear();
        for (const std::string& k : split(argv[2])) {
            const std::size_t n = std::stoull(k) << 10;
            if (n == 0 || n > kMaxBytes) {
                std::fprintf(stderr, "size %s KiB: not in 1 KiB..%zu MiB\n", k.c_str(), kMaxBytes >> 20);
                return 2;
            }
            sizes.push_back(n);
        }
    }
    const std::size_t max = *std::max_element(sizes.begin(), sizes.end());
    FILE* reps_file = nullptr;
    if (const char* path = std::getenv("STAGEDBOTH_REPS")) {
        reps_file = std::fopen(path, "a");
        if (reps_file == nullptr) {
            std::fprintf(stderr, "cannot open %s\n", path);
            return 2;
        }
    }
    Gpu g[2];
    for (int d = 0; d < 2; ++d) {
        g[d].dev = d;
        CHECK(cudaSetDevice(d));
        CHECK(cudaMalloc(&g[d].src, max));
        CHECK(cudaMalloc(&g[d].dst, max));
        CHECK(cudaStreamCreateWithFlags(&g[d].s, cudaStreamNonBlocking));
        CHECK(cudaEventCreate(&g[d].start));
        CHECK(cudaEventCreate(&g[d].end));
        CHECK(cudaEventCreate(&g[d].stop));
        fill(g[d].src, max, 1u + static_cast<unsigned>(d), d);
    }
    std::printf("case,bytes,gpu0_us,gpu0_p10_us,gpu0_p90_us,gpu1_us,gpu1_p10_us,gpu1_p90_us,row_us,row_p10_us,row_p90_us,"
                "call0_us,call1_us,seen0_us,seen1_us,reps,call0_p10_us,call0_p90_us,call1_p10_us,call1_p90_us\n");
    for (const std::string& c : cases) {
        const std::string base = c.substr(0, c.find(':'));
        if (base != "0to1" && base != "1to0" && base != "both" && base != "free" && base != "swap" && base != "gated" &&
            base != "gated0to1" && base != "later0" && base != "later1" && base != "delay" && base != "queries" &&
            base != "bothlate") {
            std::fprintf(stderr, "unknown case %s (0to1 1to0 both free swap gated gated0to1 later0:US later1:US delay:US queries:US bothlate:US)\n",
                         c.c_str());
            return 2;
        }
    }
    for (const std::size_t n : sizes) {
        for (const std::string& c : cases) {
            const char* which = c.c_str();
            const std::string base = c.substr(0, c.find(':'));
            // later0:D / later1:D: gated, with GPU 0's (GPU 1's) spin D us longer, so its copy starts D us later.
            const double later = c.find(':') == std::string::npos ? 0.0 : std::stod(c.substr(c.find(':') + 1));
            const bool from0 = base != "1to0";
            const bool from1 = base != "0to1" && base != "gated0to1";
            const bool late = base == "bothlate";
            const bool waits = base == "both" || late;
            const bool gated = base == "gated" || base == "gated0to1" || base == "later0" || base == "later1";
            // delay:D / queries:D: the CPU's D us between GPU 1's calls and GPU 0's.
            const bool delayed = base == "delay" || base == "queries";
            const bool polls = waits || base == "free" || base == "swap" || delayed;
            const bool first0 = base == "swap";
            if (from0) clear(g[1].dst, n, 1);
            if (from1) clear(g[0].dst, n, 0);
            std::vector<double> t0, t1, row, call0, call1, seen0, seen1;
            for (int r = 0; r < kWarmup + kReps; ++r) {
                for (int d : {1, 0}) {
                    CHECK(cudaSetDevice(d));
                    CHECK(cudaDeviceSynchronize());
                }
                if (gated) {
                    for (int d : {1, 0}) {
                        if ((d == 0 && !from0) || (d == 1 && !from1)) continue;
                        CHECK(cudaSetDevice(d));
                        const double us = spin_us(n) + ((base == "later0" && d == 0) || (base == "later1" && d == 1) ? later : 0.0);
                        spin<<<1, 1, 0, g[d].s>>>(static_cast<unsigned long long>(us * 1e3));
                        CHECK(cudaGetLastError());
                    }
                }
                CHECK(cudaSetDevice(0));
                const Clock::time_point t_begin = Clock::now();
                double c0 = 0, c1 = 0;
                if (from0 && !delayed) CHECK(cudaEventRecord(g[0].start, g[0].s));
                const auto issue0 = [&] {
                    if (delayed) {
                        const Clock::time_point until = Clock::now() + std::chrono::nanoseconds(static_cast<long long>(later * 1e3));
                        while (Clock::now() < until) {
                            if (base == "queries") {
                                const cudaError_t e = cudaEventQuery(g[1].end);
                                if (e != cudaSuccess && e != cudaErrorNotReady) CHECK(e);
                            }
                        }
                        CHECK(cudaEventRecord(g[0].start, g[0].s));
                    }
                    if (late) {
                        const Clock::time_point until = Clock::now() + std::chrono::nanoseconds(static_cast<long long>(later * 1e3));
                        while (Clock::now() < until) {
                        }
                    }
                    const Clock::time_point t = Clock::now();
                    CHECK(cudaMemcpyPeerAsync(g[1].dst, 1, g[0].src, 0, n, g[0].s));
                    c0 = since_us(t);
                    CHECK(cudaEventRecord(g[0].end, g[0].s));
                };
                if (first0) issue0();
                if (from1) {
                    CHECK(cudaSetDevice(1));
                    if (waits) CHECK(cudaStreamWaitEvent(g[1].s, g[0].start, 0));
                    CHECK(cudaEventRecord(g[1].start, g[1].s));
                    const Clock::time_point t = Clock::now();
                    CHECK(cudaMemcpyPeerAsync(g[0].dst, 0, g[1].src, 1, n, g[1].s));
                    c1 = since_us(t);
                    CHECK(cudaEventRecord(g[1].end, g[1].s));
                    CHECK(cudaSetDevice(0));
                }
                if (from0) {
                    if (!first0) issue0();
                    if (waits) CHECK(cudaStreamWaitEvent(g[0].s, g[1].end, 0));
                    CHECK(cudaEventRecord(g[0].stop, g[0].s));
                }
                double s0 = -1, s1 = -1;
                if (polls) {
                    while (s0 < 0 || s1 < 0) {
                        if (s0 < 0) {
                            const cudaError_t e = cudaEventQuery(g[0].end);
                            if (e == cudaSuccess) s0 = since_us(t_begin);
                            else if (e != cudaErrorNotReady) CHECK(e);
                        }
                        if (s1 < 0) {
                            const cudaError_t e = cudaEventQuery(g[1].end);
                            if (e == cudaSuccess) s1 = since_us(t_begin);
                            else if (e != cudaErrorNotReady) CHECK(e);
                        }
                    }
                }
                for (int d : {1, 0}) {
                    CHECK(cudaSetDevice(d));
                    CHECK(cudaDeviceSynchronize());
                }
                CHECK(cudaSetDevice(0));
                if (r < kWarmup) continue;
                if (waits && reps_file != nullptr) {
                    std::fprintf(reps_file, "%s,%zu,%d,%.3f,%.3f\n", which, n, r - kWarmup, c1, elapsed_us(g[0].start, g[0].stop));
                }
                if (from0) {
                    t0.push_back(elapsed_us(g[0].start, g[0].end));
                    row.push_back(elapsed_us(g[0].start, g[0].stop));
                    call0.push_back(c0);
                }
                if (from1) {
                    t1.push_back(elapsed_us(g[1].start, g[1].end));
                    call1.push_back(c1);
                }
                if (polls) {
                    seen0.push_back(s0);
                    seen1.push_back(s1);
                }
            }
            if (from0 && !same(g[0].src, 0, g[1].dst, 1, n)) {
                std::fprintf(stderr, "verification failed: %s 0 -> 1, %zu bytes\n", which, n);
                return 1;
            }
            if (from1 && !same(g[1].src, 1, g[0].dst, 0, n)) {
                std::fprintf(stderr, "verification failed: %s 1 -> 0, %zu bytes\n", which, n);
                return 1;
            }
            std::printf("%s,%zu,%.3f,%.3f,%.3f,%.3f,%.3f,%.3f,%.3f,%.3f,%.3f,%.3f,%.3f,%.3f,%.3f,%d,%.3f,%.3f,%.3f,%.3f\n", which, n, quantile(t0, 0.5),
                        quantile(t0, 0.1), quantile(t0, 0.9), quantile(t1, 0.5), quantile(t1, 0.1), quantile(t1, 0.9),
                        quantile(row, 0.5), quantile(row, 0.1), quantile(row, 0.9), quantile(call0, 0.5), quantile(call1, 0.5),
                        quantile(seen0, 0.5), quantile(seen1, 0.5), kReps, quantile(call0, 0.1), quantile(call0, 0.9),
                        quantile(call1, 0.1), quantile(call1, 0.9));
            std::fflush(stdout);
        }
    }
    if (reps_file != nullptr) std::fclose(reps_file);
    return 0;
}
