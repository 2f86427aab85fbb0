// When does a copy out of the GPU's data land in host memory beside a copy into the GPU, and when
// is the copy seen done? (../behind-reads: a copy out of the GPU issued with a copy into the GPU of
// 1-16 MiB ends 8-10 us late whatever its size; 1 MiB both ways at once, the copy out of the GPU
// 7 us late where the model gives 3.6. Which waits there, its writes or only its release, those
// events cannot tell.) Here the CPU watches the data land: the copy out of the GPU's source holds
// a non-zero marker in the last 8 bytes of each sixteenth of it, its pinned destination is zeroed
// before each repetition, and the CPU, once its calls return, spins on the sixteen markers in
// order, stamping each as it appears (a posted write is in host memory, and coherent, when the CPU
// can read it), then on cudaStreamQuery of the copy's stream until the copy is seen done. Times
// from just before the first call, on the CPU's clock; the copies' event intervals beside them.
// The markers carry a new stamp each repetition (a one-thread kernel writes them into the source
// before it), so the destination is never written by the CPU: a destination the CPU has just
// zeroed sits dirty in its caches and halves the copy's rate (a first version of this program,
// lease dd018f47: 1 MiB in 41.7 us instead of 22).
//
// No gate: the GPU idle before each repetition (synchronised, 20 us of nothing). Cells: the copy
// into the GPU of X bytes (0: none; 64 KiB, 256 KiB, 1, 4, 16 MiB) on s1 and the copy out of the
// GPU of Y bytes (4 KiB, 64 KiB, 256 KiB, 1 MiB) on s2, issued in either order one right after
// the other; 40 repetitions after 3 warm-ups. Every CUDA call checked; every repetition's markers
// and, on each cell's first repetition, all of the copy out of the GPU's data and the copy into
// the GPU's data compared with their sources.
//
// Mode tau: the 4 KiB copy out of the GPU issued tau = 0, 2, ... us after the calls of a copy into
// the GPU of 2 MiB (tau to 50) or 4 MiB (to 90), 20 repetitions after 3 warm-ups; each alone first.
// Where its release waits as the other copy runs out tells how fast the reads owed ahead of it
// drain: at the port's outward rate, the release comes as the last of them leaves (a fixed time
// before the other copy's end, whatever tau), faster, that much sooner.
//
// Build: nvcc -O3 -arch=sm_90 landing.cu -o landing
// Run:   ./landing > landing.csv 2> landing-ends.csv; ./landing tau > tau.csv 2> tau-ends.csv
#include <cuda_runtime.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <algorithm>
#include <atomic>
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

constexpr std::size_t kBigIn = std::size_t{16} << 20;  // the largest copy into the GPU
constexpr std::size_t kBigOut = std::size_t{1} << 20;  // the largest copy out of it
constexpr int kChunks = 16;
constexpr int kReps = 40;
constexpr int kWarmups = 3;
constexpr int kTauReps = 20;
constexpr double kSpinLimitUs = 2e6;  // a marker or a stream not done after 2 s: something broke

using Clock = std::chrono::steady_clock;

double us_since(Clock::time_point t0) { return std::chrono::duration<double, std::micro>(Clock::now() - t0).count(); }

void busy_wait_us(double us) {
    const auto t0 = Clock::now();
    while (us_since(t0) < us) {
    }
}

float elapsed_us(cudaEvent_t a, cudaEvent_t b) {
    float ms = 0;
    CHECK(cudaEventElapsedTime(&ms, a, b));
    return ms * 1000.0f;
}

std::uint64_t marker(std::uint32_t stamp, int k) {
    return 0x5A5A000000000000ull | (static_cast<std::uint64_t>(stamp) << 8) | static_cast<std::uint64_t>(k + 1);
}

// Each sixteenth's last 8 bytes of the source get this repetition's marker.
__global__ void stamp_markers(unsigned char* src, std::size_t y, std::uint32_t stamp, int chunks) {
    for (int k = 0; k < chunks; ++k) {
        const std::size_t end = y / static_cast<std::size_t>(chunks) * static_cast<std::size_t>(k + 1);
        *reinterpret_cast<std::uint64_t*>(src + end - 8) =
            0x5A5A000000000000ull | (static_cast<std::uint64_t>(stamp) << 8) | static_cast<std::uint64_t>(k + 1);
    }
}

class Landing {
public:
    Landing() {
        CHECK(cudaSetDevice(0));
        CHECK(cudaMallocHost(&hin_, kBigIn));
        CHECK(cudaMalloc(&din_, kBigIn));
        CHECK(cudaMalloc(&dout_, kBigOut));
        CHECK(cudaMallocHost(&hout_, kBigOut));
        // Non-zero data both ways (a zero page or a compressible pattern would not move as data does).
        for (std::size_t i = 0; i < kBigIn; ++i) hin_[i] = static_cast<unsigned char>(1 + (i * 131 + 7) % 251);
        expected_.resize(kBigOut);
        for (std::size_t i = 0; i < kBigOut; ++i) expected_[i] = static_cast<unsigned char>(1 + (i * 37 + 11) % 253);
        CHECK(cudaStreamCreateWithFlags(&s1_, cudaStreamNonBlocking));
        CHECK(cudaStreamCreateWithFlags(&s2_, cudaStreamNonBlocking));
        for (cudaEvent_t* e : {&in0_, &in1_, &out0_, &out1_}) CHECK(cudaEventCreate(e));
    }

    // The copy out of the GPU's source for y bytes: the pattern (markers stamped per repetition).
    void prepare_source(std::size_t y) {
        CHECK(cudaMemcpy(dout_, expected_.data(), y, cudaMemcpyHostToDevice));
        source_.assign(expected_.begin(), expected_.begin() + static_cast<std::ptrdiff_t>(y));
    }

    static std::size_t chunk_end(std::size_t y, int k) { return y / kChunks * static_cast<std::size_t>(k + 1); }

    // One repetition; writes its rows unless warm-up.
    void run(const char* order, std::size_t x, std::size_t y, int rep, bool verify, double tau_us = 0.0) {
        const std::uint32_t stamp = ++stamp_ & 0xFFFFFF;
        stamp_markers<<<1, 1>>>(dout_, y, stamp, kChunks);
        CHECK(cudaGetLastError());
        for (int k = 0; k < kChunks; ++k) {
            const std::uint64_t m = marker(stamp, k);
            std::memcpy(source_.data() + chunk_end(y, k) - sizeof m, &m, sizeof m);
        }
        CHECK(cudaDeviceSynchronize());
        busy_wait_us(20.0);
        const bool in_first = std::strcmp(order, "in_first") == 0;
        const auto t0 = Clock::now();
        if (in_first) copy_in(x);
        if (tau_us > 0) busy_wait_us(tau_us);
        CHECK(cudaEventRecord(out0_, s2_));
        CHECK(cudaMemcpyAsync(hout_, dout_, y, cudaMemcpyDeviceToHost, s2_));
        CHECK(cudaEventRecord(out1_, s2_));
        if (!in_first) copy_in(x);
        const double t_calls = us_since(t0);
        double t[kChunks];
        for (int k = 0; k < kChunks; ++k) {
            const volatile std::uint64_t* m = reinterpret_cast<const volatile std::uint64_t*>(hout_ + chunk_end(y, k) - 8);
            while (*m != marker(stamp, k)) {
                if (us_since(t0) > kSpinLimitUs) {
                    std::fprintf(stderr, "marker %d of %zu bytes never landed\n", k, y);
                    std::exit(1);
                }
            }
            t[k] = us_since(t0);
        }
        cudaError_t q;
        while ((q = cudaStreamQuery(s2_)) == cudaErrorNotReady) {
            if (us_since(t0) > kSpinLimitUs) {
                std::fprintf(stderr, "the copy out of the GPU was never seen done\n");
                std::exit(1);
            }
        }
        CHECK(q);
        const double t_seen = us_since(t0);
        CHECK(cudaDeviceSynchronize());
        const double out_us = elapsed_us(out0_, out1_);
        double in_us = 0, in_start_to_out_end = 0, in_start_to_out_start = 0;
        if (x > 0) {
            in_us = elapsed_us(in0_, in1_);
            in_start_to_out_end = elapsed_us(in0_, out1_);
            in_start_to_out_start = elapsed_us(in0_, out0_);
        }
        if (verify) check(x, y);
        if (rep < 0) return;
        for (int k = 0; k < kChunks; ++k)
            std::printf("%s,%zu,%zu,%d,%d,%zu,%.3f\n", order, x, y, rep, k, chunk_end(y, k), t[k]);
        std::fprintf(stderr, "%s,%zu,%zu,%d,%.3f,%.3f,%.3f,%.3f,%.3f,%.3f,%.3f,%.3f,%.1f\n", order, x, y, rep, t_calls, t[0],
                     t[kChunks - 1], t_seen, out_us, in_us, in_start_to_out_start, in_start_to_out_end, tau_us);
    }

private:
    void copy_in(std::size_t x) {
        if (x == 0) return;
        CHECK(cudaEventRecord(in0_, s1_));
        CHECK(cudaMemcpyAsync(din_, hin_, x, cudaMemcpyHostToDevice, s1_));
        CHECK(cudaEventRecord(in1_, s1_));
    }

    void check(std::size_t x, std::size_t y) const {
        if (std::memcmp(hout_, source_.data(), y) != 0) {
            std::fprintf(stderr, "copy out of the GPU of %zu bytes: wrong data\n", y);
            std::exit(1);
        }
        if (x > 0) {
            std::vector<unsigned char> back(x);
            CHECK(cudaMemcpy(back.data(), din_, x, cudaMemcpyDeviceToHost));
            if (std::memcmp(back.data(), hin_, x) != 0) {
                std::fprintf(stderr, "copy into the GPU of %zu bytes: wrong data\n", x);
                std::exit(1);
            }
        }
    }

    unsigned char* hin_ = nullptr;
    unsigned char* din_ = nullptr;
    unsigned char* dout_ = nullptr;
    unsigned char* hout_ = nullptr;
    std::vector<unsigned char> expected_, source_;
    cudaStream_t s1_{}, s2_{};
    cudaEvent_t in0_{}, in1_{}, out0_{}, out1_{};
    std::uint32_t stamp_ = 0;
};

}  // namespace

// Mode h2d: where a copy into the GPU's data land in GPU memory, seen by a one-thread kernel that
// spins on its last sixteenth's marker, then checks the other fifteen (volatile loads reach the
// L2, where the engine writes; a first version walked them in order, about 0.19 us a load, and
// saw 4 KiB land over 3 us: lease eec62fdf, flag_us late at 4 and 64 KiB), and then
// stores a flag into mapped host memory, which the CPU spins on; the CPU then spins on the copy's
// stream until it is seen done. `flag_us` less what a store from the GPU takes to reach the CPU
// (half the round trip `rtt`: the CPU stores a flag the kernel spins on, the kernel answers) is
// about when the last data landed, on the CPU's clock, to compare with the copy out of the GPU's
// last data and its stream seen done (grid).
struct Shared {
    volatile unsigned int go;      // CPU -> kernel (rtt)
    volatile unsigned int answer;  // kernel -> CPU (rtt, and "running")
    volatile unsigned int seen;    // kernel -> CPU: the last marker is in GPU memory
    volatile unsigned int error;
    unsigned long long t[16];      // the kernel's globaltimer as each marker appeared
};

__device__ unsigned long long globaltimer() {
    unsigned long long t;
    asm volatile("mov.u64 %0, %globaltimer;" : "=l"(t));
    return t;
}

__global__ void watch_markers(const unsigned char* dst, std::size_t x, unsigned long long stamp_base, int chunks,
                              Shared* sh, unsigned int rtt_rounds) {
    for (unsigned int r = 1; r <= rtt_rounds; ++r) {  // the CPU's round trips
        const unsigned long long t0 = globaltimer();
        while (sh->go != r) {
            if (globaltimer() - t0 > 100000000ull) { sh->error = 1; return; }
        }
        sh->answer = r;
        __threadfence_system();
    }
    // Running, once the CPU has seen the last answer (it says so with one more go): the CPU may
    // issue the copy. (Answering at once raced the CPU's read of the last round's answer.)
    const unsigned long long t_go = globaltimer();
    while (sh->go != rtt_rounds + 1) {
        if (globaltimer() - t_go > 100000000ull) { sh->error = 3; return; }
    }
    sh->answer = 0xFFFFFFFFu;
    __threadfence_system();
    const unsigned long long t0 = globaltimer();
    // The last sixteenth's marker first (one load a turn, so the flag follows its landing by one
    // L2 round trip, not sixteen), then the others, which must all be there.
    for (int i = 0; i < chunks; ++i) {
        const int k = (i + chunks - 1) % chunks;
        const std::size_t end = x / static_cast<std::size_t>(chunks) * static_cast<std::size_t>(k + 1);
        const volatile unsigned long long* m = reinterpret_cast<const volatile unsigned long long*>(dst + end - 8);
        const unsigned long long want = stamp_base | static_cast<unsigned long long>(k + 1);
        while (*m != want) {
            if (globaltimer() - t0 > 100000000ull) { sh->error = 2; return; }
        }
        sh->t[k] = globaltimer();
    }
    sh->seen = 1;
    __threadfence_system();
}

void h2d_landing() {
    constexpr std::size_t kMax = std::size_t{1} << 20;
    constexpr unsigned int kRtt = 20;
    unsigned char *hin = nullptr, *din = nullptr;
    Shared* sh = nullptr;
    CHECK(cudaMallocHost(&hin, kMax));
    CHECK(cudaMalloc(&din, kMax));
    CHECK(cudaHostAlloc(&sh, sizeof(Shared), cudaHostAllocMapped));
    Shared* dsh = nullptr;
    CHECK(cudaHostGetDevicePointer(&dsh, sh, 0));
    for (std::size_t i = 0; i < kMax; ++i) hin[i] = static_cast<unsigned char>(1 + (i * 131 + 7) % 251);
    cudaStream_t s1, s3;
    CHECK(cudaStreamCreateWithFlags(&s1, cudaStreamNonBlocking));
    CHECK(cudaStreamCreateWithFlags(&s3, cudaStreamNonBlocking));
    cudaEvent_t e0, e1;
    CHECK(cudaEventCreate(&e0));
    CHECK(cudaEventCreate(&e1));
    std::printf("x_bytes,rep,rtt_us,calls_us,flag_us,seen_us,event_us,last_to_all_gpu_us\n");
    std::uint32_t stamp = 0;
    for (std::size_t x : {std::size_t{4096}, std::size_t{65536}, std::size_t{262144}, kMax}) {
        for (int rep = -kWarmups; rep < kReps; ++rep) {
            const unsigned long long base = 0x5A5A000000000000ull | (static_cast<unsigned long long>(++stamp & 0xFFFFFF) << 8);
            for (int k = 0; k < kChunks; ++k) {
                const unsigned long long m = base | static_cast<unsigned long long>(k + 1);
                std::memcpy(hin + x / kChunks * static_cast<std::size_t>(k + 1) - 8, &m, 8);
            }
            std::memset(const_cast<Shared*>(sh), 0, sizeof(Shared));
            std::atomic_thread_fence(std::memory_order_seq_cst);
            CHECK(cudaDeviceSynchronize());
            watch_markers<<<1, 1, 0, s3>>>(din, x, base, kChunks, dsh, kRtt);
            CHECK(cudaGetLastError());
            // Round trips: the CPU's store seen by the kernel, its answer seen by the CPU.
            std::vector<double> rtts;
            for (unsigned int r = 1; r <= kRtt; ++r) {
                const auto t0 = Clock::now();
                sh->go = r;
                while (sh->answer != r) {
                    if (us_since(t0) > kSpinLimitUs || sh->error) {
                        std::fprintf(stderr, "the watching kernel never answered (error %u)\n", sh->error);
                        std::exit(1);
                    }
                }
                rtts.push_back(us_since(t0));
            }
            sh->go = kRtt + 1;
            while (sh->answer != 0xFFFFFFFFu) {
                if (sh->error) {
                    std::fprintf(stderr, "the watching kernel stopped (error %u)\n", sh->error);
                    std::exit(1);
                }
            }
            busy_wait_us(5.0);
            const auto t0 = Clock::now();
            CHECK(cudaEventRecord(e0, s1));
            CHECK(cudaMemcpyAsync(din, hin, x, cudaMemcpyHostToDevice, s1));
            CHECK(cudaEventRecord(e1, s1));
            const double calls = us_since(t0);
            while (sh->seen == 0) {
                if (us_since(t0) > kSpinLimitUs || sh->error) {
                    std::fprintf(stderr, "the last marker of %zu bytes was never seen (error %u)\n", x, sh->error);
                    std::exit(1);
                }
            }
            const double flag = us_since(t0);
            cudaError_t q;
            while ((q = cudaStreamQuery(s1)) == cudaErrorNotReady) {
            }
            CHECK(q);
            const double seen = us_since(t0);
            CHECK(cudaDeviceSynchronize());
            if (rep == 0) {
                std::vector<unsigned char> back(x);
                CHECK(cudaMemcpy(back.data(), din, x, cudaMemcpyDeviceToHost));
                if (std::memcmp(back.data(), hin, x) != 0) {
                    std::fprintf(stderr, "copy into the GPU of %zu bytes: wrong data\n", x);
                    std::exit(1);
                }
            }
            if (rep < 0) continue;
            std::sort(rtts.begin(), rtts.end());
            std::printf("%zu,%d,%.3f,%.3f,%.3f,%.3f,%.3f,%.3f\n", x, rep, rtts[rtts.size() / 2], calls, flag, seen,
                        elapsed_us(e0, e1), static_cast<double>(sh->t[kChunks - 2] - sh->t[kChunks - 1]) / 1e3);
        }
    }
}

int main(int argc, char** argv) {
    const std::string mode = argc > 1 ? argv[1] : "grid";
    if (mode != "grid" && mode != "tau" && mode != "h2d") {
        std::fprintf(stderr, "usage: %s [grid|tau|h2d]\n", argv[0]);
        return 2;
    }
    if (mode == "h2d") {
        CHECK(cudaSetDevice(0));
        h2d_landing();
        return 0;
    }
    Landing l;
    std::printf("order,x_bytes,y_bytes,rep,chunk,landed_bytes,t_us\n");
    std::fprintf(stderr,
                 "order,x_bytes,y_bytes,rep,calls_us,first_us,last_us,seen_us,out_event_us,in_event_us,"
                 "in_start_to_out_start_us,in_start_to_out_end_us,tau_us\n");
    if (mode == "tau") {
        // The 4 KiB copy out of the GPU issued tau after the copy into it, over the latter's life:
        // where its release waits, and how that wait ends as the copy into the GPU runs out.
        constexpr std::size_t y = 4096;
        l.prepare_source(y);
        for (int r = -kWarmups; r < kReps; ++r) l.run("in_first", 0, y, r, r == 0);
        for (std::size_t x : {std::size_t{2} << 20, std::size_t{4} << 20}) {
            for (int tau = 0; tau <= 90; tau += 2) {
                if (x == (std::size_t{2} << 20) && tau > 50) break;
                for (int r = -kWarmups; r < kTauReps; ++r) l.run("in_first", x, y, r, r == 0, tau);
            }
        }
        std::fflush(stdout);
        return 0;
    }
    const std::size_t xs[] = {0, 65536, 262144, 1u << 20, 4u << 20, kBigIn};
    const std::size_t ys[] = {4096, 65536, 262144, kBigOut};
    for (std::size_t y : ys) {
        l.prepare_source(y);
        for (std::size_t x : xs) {
            for (const char* order : {"in_first", "out_first"}) {
                if (x == 0 && std::strcmp(order, "out_first") == 0) continue;  // alone: one order
                for (int r = -kWarmups; r < kReps; ++r) l.run(order, x, y, r, r == 0);
            }
        }
    }
    std::fflush(stdout);
    return 0;
}
