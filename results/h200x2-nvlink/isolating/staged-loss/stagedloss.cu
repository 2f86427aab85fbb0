// What makes a staged peer copy issued while another one starts lose 3-10 us? (2xH200)
// ../staged-both found it only when the second cudaMemcpyPeerAsync (peer access off) is called
// within about 20 us of the first, not when both are queued before either starts, nor with
// more hardware queues. This program asks which part of the first copy does it, and to what:
// a GPU's channel waiting on a semaphore (the first copy's pieces wait for each other across the
// GPUs), its kernel, or its copies; and whether a plain copy issued then loses it as well.
//
// Every repetition, with both GPUs idle: a "first" operation is issued, then a reference event
// ev0 on an idle stream of GPU 0, the CPU spins until D us after ev0's call returned, and a
// "probe" is issued on another idle stream of GPU 0 with an event evP behind it. The probe's
// latency from its call is elapsed(ev0, evP) minus the CPU's time from ev0's call to the probe's
// call (both on GPU 0's clock and the CPU's; ev0's stamp lag is the same in every cell).
//   first:  none        nothing;
//           kernel      a spin kernel of kSpinUs on GPU 0 (SMs busy, no wait);
//           swait       GPU 0: a stream waits for an event behind that spin kernel on GPU 0, a
//                       4 KiB copy into GPU 0 behind the wait (a copy channel polling its
//                       semaphore, as a staged piece into GPU 0 waits for the other GPU's);
//           xwait       the same wait on an event behind a spin kernel on GPU 1 (across GPUs);
//           xwait1      the mirror: GPU 1's stream waits (4 KiB copy into GPU 1 behind) for a
//                       spin on GPU 0 (a waiting channel on the other GPU only);
//           staged10    cudaMemcpyPeerAsync 1 MiB GPU 1 -> GPU 0 on a stream of GPU 1 (as
//                       dmaprobe's both-ways row issues its first call);
//           staged01    the same 0 -> 1 on another stream of GPU 0.
//   probe:  d2h         cudaMemcpyAsync 4 KiB out of GPU 0 into pinned memory;
//           h2d         cudaMemcpyAsync 4 KiB into GPU 0 from pinned memory;
//           staged01    cudaMemcpyPeerAsync 1 MiB GPU 0 -> GPU 1 (the second call of the row);
//           d2h1        the 4 KiB copy out of GPU 1 (ev0 and the probe on GPU 1);
//           query       cudaEventQuery on ev0 (GPU 0): a call that queues nothing, so that its CPU
//                       time (probe_call_us) shows whether the driver holds the CPU back.
// Besides the latency each repetition records the probe call's own CPU time (probe_call_us) and,
// where a start event is asked for (START=1, the fourth argument), when the probe's stream
// started on its GPU: an event recorded on it right before the probe (start_us, from the call),
// and that record call's own CPU time (record_call_us).
// D: 0 to 120 us. 3 warm-ups and kReps repetitions a cell, every repetition printed; the copies'
// data verified after each cell (nonzero patterns, compared on the host); every CUDA call checked.
//
// Build: nvcc -O3 -arch=sm_90 stagedloss.cu -o stagedloss
// Run:   ./stagedloss [FIRSTS [PROBES [DELAYS [START]]]] > stagedloss.csv  (comma-separated lists)
#include <cuda_runtime.h>

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
constexpr int kReps = 40;
// Longer than the latest probe's call (120 us) and a 1 MiB staged copy (about 60 us), so that
// a wait on the spin is still waiting when every probe of a cell runs.
constexpr double kSpinUs = 250.0;
constexpr std::size_t kSmall = std::size_t{4} << 10;
// The staged copies' size: 1 MiB (two 512 KiB pieces), or STAGED_KIB from the environment.
std::size_t kStaged = std::size_t{1} << 20;

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

double since_us(Clock::time_point t0) { return std::chrono::duration<double, std::micro>(Clock::now() - t0).count(); }

std::vector<unsigned char> pattern(std::size_t n, unsigned seed) {
    std::vector<unsigned char> h(n);
    for (std::size_t i = 0; i < n; ++i) h[i] = static_cast<unsigned char>((i * 131u + seed * 17u + 7u) % 251u + 1u);
    return h;
}

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

bool one_of(const std::string& s, const std::vector<std::string>& allowed) {
    for (const std::string& a : allowed) {
        if (s == a) return true;
    }
    return false;
}

struct Gpu {
    unsigned char* src = nullptr;     // staged source (kStaged), pattern
    unsigned char* dst = nullptr;     // staged destination (kStaged)
    unsigned char* small = nullptr;   // 4 KiB probe / waiter buffer
    cudaStream_t ref{}, wait{}, spin{}, probe{}, first{};
    cudaEvent_t ev0{}, eva{}, evp{}, spun{};
};

bool check_device(const unsigned char* d, int dev, const std::vector<unsigned char>& want) {
    std::vector<unsigned char> h(want.size());
    CHECK(cudaSetDevice(dev));
    CHECK(cudaMemcpy(h.data(), d, want.size(), cudaMemcpyDeviceToHost));
    return std::memcmp(h.data(), want.data(), want.size()) == 0;
}

}  // namespace

int main(int argc, char** argv) {
    int count = 0;
    CHECK(cudaGetDeviceCount(&count));
    if (count < 2) {
        std::fprintf(stderr, "needs two GPUs, found %d\n", count);
        return 1;
    }
    const std::vector<std::string> all_firsts = {"none", "kernel", "swait", "xwait", "xwait1", "staged10", "staged01"};
    const std::vector<std::string> all_probes = {"d2h", "h2d", "staged01", "d2h1", "query"};
    std::vector<std::string> firsts = {"none", "kernel", "swait", "xwait", "xwait1", "staged10"};
    std::vector<std::string> probes = {"d2h", "h2d", "staged01"};
    std::vector<double> delays = {0, 2, 4, 6, 8, 10, 12, 14, 16, 20, 24, 28, 32, 40, 50, 60, 80, 100, 120};
    if (argc > 1) firsts = split(argv[1]);
    if (argc > 2) probes = split(argv[2]);
    if (argc > 3) {
        delays.clear();
        for (const std::string& d : split(argv[3])) delays.push_back(std::stod(d));
    }
    const bool start_event = argc > 4 && std::string(argv[4]) == "1";
    for (const std::string& f : firsts) {
        if (!one_of(f, all_firsts)) {
            std::fprintf(stderr, "unknown first %s (none kernel swait xwait xwait1 staged10 staged01)\n", f.c_str());
            return 2;
        }
    }
    for (const std::string& p : probes) {
        if (!one_of(p, all_probes)) {
            std::fprintf(stderr, "unknown probe %s (d2h h2d staged01 d2h1 query)\n", p.c_str());
            return 2;
        }
    }
    for (const std::string& f : firsts) {
        for (const std::string& p : probes) {
            if (f == "staged01" && p == "staged01") {
                std::fprintf(stderr, "first staged01 and probe staged01 would share their buffers\n");
                return 2;
            }
        }
    }
    for (const double d : delays) {
        if (!(d >= 0 && d <= 200)) {
            std::fprintf(stderr, "delay %g us: not in 0..200\n", d);
            return 2;
        }
    }
    if (const char* kib = std::getenv("STAGED_KIB")) {
        const long long k = std::atoll(kib);
        if (k < 4 || k > (256 << 10)) {
            std::fprintf(stderr, "STAGED_KIB %s: not in 4..262144\n", kib);
            return 2;
        }
        kStaged = static_cast<std::size_t>(k) << 10;
    }
    // Peer access off both ways: cudaMemcpyPeerAsync stages through host memory.
    for (int a = 0; a < 2; ++a) {
        CHECK(cudaSetDevice(a));
        const cudaError_t e = cudaDeviceDisablePeerAccess(1 - a);
        if (e == cudaErrorPeerAccessNotEnabled) {
            (void)cudaGetLastError();
        } else {
            CHECK(e);
        }
    }
    Gpu g[2];
    const std::vector<unsigned char> staged_pattern[2] = {pattern(kStaged, 1), pattern(kStaged, 2)};
    const std::vector<unsigned char> small_pattern = pattern(kSmall, 3);
    for (int d = 0; d < 2; ++d) {
        CHECK(cudaSetDevice(d));
        CHECK(cudaMalloc(&g[d].src, kStaged));
        CHECK(cudaMalloc(&g[d].dst, kStaged));
        CHECK(cudaMalloc(&g[d].small, kSmall));
        CHECK(cudaMemcpy(g[d].src, staged_pattern[d].data(), kStaged, cudaMemcpyHostToDevice));
        CHECK(cudaMemcpy(g[d].small, small_pattern.data(), kSmall, cudaMemcpyHostToDevice));
        for (cudaStream_t* s : {&g[d].ref, &g[d].wait, &g[d].spin, &g[d].probe, &g[d].first}) {
            CHECK(cudaStreamCreateWithFlags(s, cudaStreamNonBlocking));
        }
        CHECK(cudaEventCreate(&g[d].ev0));
        CHECK(cudaEventCreate(&g[d].eva));
        CHECK(cudaEventCreate(&g[d].evp));
        CHECK(cudaEventCreateWithFlags(&g[d].spun, cudaEventDisableTiming));
    }
    unsigned char* host_in = nullptr;   // the h2d probe's and the waiters' source
    unsigned char* host_out = nullptr;  // the d2h probe's destination
    CHECK(cudaMallocHost(&host_in, kSmall));
    CHECK(cudaMallocHost(&host_out, kSmall));
    std::memcpy(host_in, small_pattern.data(), kSmall);
    const auto spin_ns = static_cast<unsigned long long>(kSpinUs * 1000.0);

    // A copy channel of GPU `waiter` polls a semaphore that GPU `spinner`'s spin kernel releases.
    const auto wait_behind_spin = [&](int waiter, int spinner) {
        CHECK(cudaSetDevice(spinner));
        spin<<<1, 1, 0, g[spinner].spin>>>(spin_ns);
        CHECK(cudaGetLastError());
        CHECK(cudaEventRecord(g[spinner].spun, g[spinner].spin));
        CHECK(cudaSetDevice(waiter));
        CHECK(cudaStreamWaitEvent(g[waiter].wait, g[spinner].spun, 0));
        CHECK(cudaMemcpyAsync(g[waiter].small, host_in, kSmall, cudaMemcpyHostToDevice, g[waiter].wait));
    };
    const auto issue_first = [&](const std::string& f) {
        if (f == "kernel") {
            CHECK(cudaSetDevice(0));
            spin<<<1, 1, 0, g[0].spin>>>(spin_ns);
            CHECK(cudaGetLastError());
        } else if (f == "swait") {
            wait_behind_spin(0, 0);
        } else if (f == "xwait") {
            wait_behind_spin(0, 1);
        } else if (f == "xwait1") {
            wait_behind_spin(1, 0);
        } else if (f == "staged10") {
            CHECK(cudaSetDevice(1));
            CHECK(cudaMemcpyPeerAsync(g[0].dst, 0, g[1].src, 1, kStaged, g[1].first));
        } else if (f == "staged01") {
            CHECK(cudaSetDevice(0));
            CHECK(cudaMemcpyPeerAsync(g[1].dst, 1, g[0].src, 0, kStaged, g[0].first));
        }
    };
    // Returns the CPU's time in the probe's call; sets record_call to the start event's.
    double record_call = 0.0;
    const auto issue_probe = [&](const std::string& p, int on) {
        if (start_event) {
            const Clock::time_point r0 = Clock::now();
            CHECK(cudaEventRecord(g[on].eva, g[on].probe));
            record_call = since_us(r0);
        }
        const Clock::time_point c0 = Clock::now();
        if (p == "query") {
            const cudaError_t e = cudaEventQuery(g[0].ev0);
            if (e != cudaSuccess && e != cudaErrorNotReady) CHECK(e);
        } else if (p == "d2h1") {
            CHECK(cudaMemcpyAsync(host_out, g[1].small, kSmall, cudaMemcpyDeviceToHost, g[1].probe));
        } else if (p == "d2h") {
            CHECK(cudaMemcpyAsync(host_out, g[0].small, kSmall, cudaMemcpyDeviceToHost, g[0].probe));
        } else if (p == "h2d") {
            CHECK(cudaMemcpyAsync(g[0].small, host_in, kSmall, cudaMemcpyHostToDevice, g[0].probe));
        } else {
            CHECK(cudaMemcpyPeerAsync(g[1].dst, 1, g[0].src, 0, kStaged, g[0].probe));
        }
        const double took = since_us(c0);
        CHECK(cudaEventRecord(g[on].evp, g[on].probe));
        return took;
    };
    const auto sync_all = [&] {
        for (int d = 0; d < 2; ++d) {
            CHECK(cudaSetDevice(d));
            CHECK(cudaDeviceSynchronize());
        }
    };

    std::printf("first,probe,delay_us,rep,call_us,elapsed_us,latency_us,probe_call_us,start_us,record_call_us\n");
    for (const std::string& p : probes) {
        for (const std::string& f : firsts) {
            for (const double delay : delays) {
                for (int d = 0; d < 2; ++d) {
                    CHECK(cudaSetDevice(d));
                    CHECK(cudaMemset(g[d].dst, 0, kStaged));
                }
                std::memset(host_out, 0, kSmall);
                sync_all();
                for (int rep = 0; rep < kWarmup + kReps; ++rep) {
                    issue_first(f);
                    const int on = p == "d2h1" ? 1 : 0;
                    CHECK(cudaSetDevice(on));
                    CHECK(cudaEventRecord(g[on].ev0, g[on].ref));
                    const Clock::time_point t0 = Clock::now();
                    while (since_us(t0) < delay) {
                    }
                    const double call = since_us(t0);
                    const double probe_call = issue_probe(p, on);
                    sync_all();
                    float ms = 0;
                    CHECK(cudaEventElapsedTime(&ms, g[on].ev0, g[on].evp));
                    float ms_a = 0;
                    if (start_event) CHECK(cudaEventElapsedTime(&ms_a, g[on].ev0, g[on].eva));
                    if (rep >= kWarmup) {
                        const double el = ms * 1000.0;
                        std::printf("%s,%s,%g,%d,%.3f,%.3f,%.3f,%.3f,%.3f,%.3f\n", f.c_str(), p.c_str(), delay, rep - kWarmup, call, el,
                                    el - call, probe_call, start_event ? ms_a * 1000.0 - call : 0.0, record_call);
                    }
                }
                bool ok = true;
                if (p == "d2h" || p == "d2h1") ok = ok && std::memcmp(host_out, small_pattern.data(), kSmall) == 0;
                if (p == "staged01" || f == "staged01") ok = ok && check_device(g[1].dst, 1, staged_pattern[0]);
                if (f == "staged10") ok = ok && check_device(g[0].dst, 0, staged_pattern[1]);
                if (p == "h2d" || f == "swait" || f == "xwait") ok = ok && check_device(g[0].small, 0, small_pattern);
                if (!ok) {
                    std::fprintf(stderr, "data check failed: first %s probe %s delay %g\n", f.c_str(), p.c_str(), delay);
                    return 1;
                }
            }
        }
        std::fflush(stdout);
    }
    return 0;
}
