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

int main(int argc, char** argv) {
    const std::string mode = argc > 1 ? argv[1] : "grid";
    if (mode != "grid" && mode != "tau") {
        std::fprintf(stderr, "usage: %s [grid|tau]\n", argv[0]);
        return 2;
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
