// Does work on one stream wait behind the read completions a copy into the GPU on another stream
// still has coming? (../duplex-overlap: in dmaprobe's gated pair the copy out of the GPU takes
// 1.8-5 us longer beside a copy into the GPU of 64 KiB-1 MiB.) No gate: the GPU idle before each
// repetition, the CPU issues a first copy of X bytes on s1 (X = 0: none) with an event before and
// after it, waits tau us past that call, then issues on s2 an event, a second copy and an event,
// and synchronises. A copy engine reads up to its window of requests ahead, so a copy into the
// GPU of 1 MiB has its reads out at once; if what the second copy does comes back behind those
// completions, its time grows with X. Two modes (the argument):
//
//  behind  the first copy into the GPU, X = 0, 64 KiB, 256 KiB, 1 MiB, 4 MiB; the second 4 KiB or
//          256 KiB out of the GPU, or 4 KiB into it; tau 0; the CPU rewrites the second copy's
//          destination before each repetition; 100 repetitions after 5 warm-ups.
//  sweep   both orders (first into the GPU and second out of it, and the reverse); X = 0, 128 KiB,
//          512 KiB, 1, 2, 4 and 16 MiB; the second of 4 KiB, 64 KiB, 256 KiB, 1 MiB, 4 MiB; tau 0,
//          10 or 30 us; 40 repetitions after 3 warm-ups.
//  pairs   the duplex pair's two copies at set offsets, ungated: the first copy of X (64 KiB,
//          256 KiB, 1 MiB) one way, the second of the same size the other way tau us after the
//          first call (0, 1, 2, 3, 4, 5, 6, 8, 10, 15, 20), both orders, and each alone (the other
//          of 0 bytes); 40 repetitions after 3 warm-ups. Both copies' intervals: how much each
//          loses to the other by how far apart they start (../duplex-overlap: in the gated pair
//          the copy out of the GPU loses 3-4 us at 256 KiB when it goes first, 0.2-1.5 second).
//
// Medians and p10/p90 of the second copy's event interval, the first copy's, and from the first's
// start to the second's end; the second copy's data verified per cell; every CUDA call checked.
// (The leases ran the two modes as two programs, behind.cu and sweep.cu, since folded into one.)
//
// Build: nvcc -O3 -arch=sm_90 behind.cu -o behind
// Run:   ./behind behind > behind.csv; ./behind sweep > sweep.csv; ./behind pairs > pairs.csv
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

constexpr std::size_t kBig = std::size_t{16} << 20;

void busy_wait_us(double us) {
    const auto t0 = std::chrono::steady_clock::now();
    while (std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count() < us) {
    }
}

float elapsed_us(cudaEvent_t a, cudaEvent_t b) {
    float ms = 0;
    CHECK(cudaEventElapsedTime(&ms, a, b));
    return ms * 1000.0f;
}

double quantile(std::vector<double> v, double q) {
    std::sort(v.begin(), v.end());
    return v[static_cast<std::size_t>(q * static_cast<double>(v.size() - 1) + 0.5)];
}

struct Times {
    std::vector<double> second, first, total;
};

// Host and device buffers of kBig each way; the first copy uses their start, the second their
// last `y` bytes.
class Copies {
public:
    Copies() : pattern_(kBig) {
        CHECK(cudaSetDevice(0));
        CHECK(cudaMallocHost(&hsrc_, kBig));
        CHECK(cudaMallocHost(&hdst_, kBig));
        CHECK(cudaMalloc(&dsrc_, kBig));
        CHECK(cudaMalloc(&ddst_, kBig));
        for (std::size_t i = 0; i < kBig; ++i) {
            hsrc_[i] = static_cast<unsigned char>((i * 131u + 7u) % 251u + 1u);
            pattern_[i] = static_cast<unsigned char>((i * 17u + 3u) % 253u + 1u);
        }
        CHECK(cudaMemcpy(dsrc_, pattern_.data(), kBig, cudaMemcpyHostToDevice));
        CHECK(cudaStreamCreateWithFlags(&s1_, cudaStreamNonBlocking));
        CHECK(cudaStreamCreateWithFlags(&s2_, cudaStreamNonBlocking));
        for (cudaEvent_t* e : {&e0_, &e1_, &ea_, &eb_}) CHECK(cudaEventCreate(e));
    }
    ~Copies() {
        for (cudaEvent_t e : {e0_, e1_, ea_, eb_}) cudaEventDestroy(e);
        cudaStreamDestroy(s1_);
        cudaStreamDestroy(s2_);
        cudaFree(dsrc_);
        cudaFree(ddst_);
        cudaFreeHost(hsrc_);
        cudaFreeHost(hdst_);
    }

    // The first copy of x bytes (into the GPU: first_up), tau us, the second of y bytes (into the
    // GPU: second_up); `rewrite`: the CPU writes the second copy's host destination first.
    Times cell(bool first_up, std::size_t x, bool second_up, std::size_t y, double tau, bool rewrite, int warmup, int reps) {
        Times t;
        unsigned char* h2 = hdst_ + (kBig - y);
        for (int r = 0; r < warmup + reps; ++r) {
            if (rewrite && !second_up) std::memset(h2, 0, y);
            CHECK(cudaDeviceSynchronize());
            CHECK(cudaEventRecord(e0_, s1_));
            if (x > 0) copy(first_up, 0, x, s1_);
            CHECK(cudaEventRecord(e1_, s1_));
            busy_wait_us(tau);
            CHECK(cudaEventRecord(ea_, s2_));
            if (y > 0) copy(second_up, kBig - y, y, s2_);
            CHECK(cudaEventRecord(eb_, s2_));
            CHECK(cudaDeviceSynchronize());
            if (r < warmup) continue;
            t.second.push_back(elapsed_us(ea_, eb_));
            t.first.push_back(elapsed_us(e0_, e1_));
            t.total.push_back(elapsed_us(e0_, eb_));
        }
        if (y == 0) return t;
        std::vector<unsigned char> got(y);
        if (second_up) {
            CHECK(cudaMemcpy(got.data(), ddst_ + (kBig - y), y, cudaMemcpyDeviceToHost));
            if (std::memcmp(got.data(), hsrc_ + (kBig - y), y) != 0) fail("into the GPU", y);
        } else if (std::memcmp(h2, pattern_.data() + (kBig - y), y) != 0) {
            fail("out of the GPU", y);
        }
        return t;
    }

private:
    void copy(bool up, std::size_t offset, std::size_t n, cudaStream_t s) {
        if (up) {
            CHECK(cudaMemcpyAsync(ddst_ + offset, hsrc_ + offset, n, cudaMemcpyHostToDevice, s));
        } else {
            CHECK(cudaMemcpyAsync(hdst_ + offset, dsrc_ + offset, n, cudaMemcpyDeviceToHost, s));
        }
    }
    [[noreturn]] static void fail(const char* what, std::size_t n) {
        std::fprintf(stderr, "verification failed: the second copy, %s, %zu bytes\n", what, n);
        std::exit(1);
    }

    unsigned char *hsrc_ = nullptr, *hdst_ = nullptr, *dsrc_ = nullptr, *ddst_ = nullptr;
    std::vector<unsigned char> pattern_;
    cudaStream_t s1_{}, s2_{};
    cudaEvent_t e0_{}, e1_{}, ea_{}, eb_{};
};

void behind(Copies& c) {
    std::printf("first_h2d_bytes,second,second_bytes,second_median_us,second_p10_us,second_p90_us,first_median_us,second_end_after_first_start_us\n");
    struct Second {
        const char* name;
        bool up;
        std::size_t bytes;
    };
    for (const Second& sec : {Second{"d2h", false, 4096}, Second{"d2h", false, 256 << 10}, Second{"h2d", true, 4096}}) {
        for (const std::size_t x : {std::size_t{0}, std::size_t{64} << 10, std::size_t{256} << 10, std::size_t{1} << 20, std::size_t{4} << 20}) {
            const Times t = c.cell(true, x, sec.up, sec.bytes, 0.0, true, 5, 100);
            std::printf("%zu,%s,%zu,%.4f,%.4f,%.4f,%.4f,%.4f\n", x, sec.name, sec.bytes, quantile(t.second, 0.5), quantile(t.second, 0.1),
                        quantile(t.second, 0.9), quantile(t.first, 0.5), quantile(t.total, 0.5));
            std::fflush(stdout);
        }
    }
}

void sweep(Copies& c) {
    std::printf("first,first_bytes,second,second_bytes,tau_us,second_median_us,second_p10_us,second_p90_us,first_median_us,second_end_after_first_start_us\n");
    const std::size_t xs[] = {0, 128 << 10, 512 << 10, 1 << 20, 2 << 20, 4 << 20, 16 << 20};
    const std::size_t ys[] = {4096, 64 << 10, 256 << 10, 1 << 20, 4 << 20};
    for (const bool first_up : {true, false}) {
        for (const double tau : {0.0, 10.0, 30.0}) {
            for (const std::size_t y : ys) {
                for (const std::size_t x : xs) {
                    const Times t = c.cell(first_up, x, !first_up, y, tau, false, 3, 40);
                    std::printf("%s,%zu,%s,%zu,%.0f,%.4f,%.4f,%.4f,%.4f,%.4f\n", first_up ? "h2d" : "d2h", x, first_up ? "d2h" : "h2d", y, tau,
                                quantile(t.second, 0.5), quantile(t.second, 0.1), quantile(t.second, 0.9), quantile(t.first, 0.5),
                                quantile(t.total, 0.5));
                    std::fflush(stdout);
                }
            }
        }
    }
}

void pairs(Copies& c) {
    std::printf("first,bytes,tau_us,first_median_us,first_p10_us,first_p90_us,second_median_us,second_p10_us,second_p90_us,first_alone_us,second_alone_us\n");
    const double taus[] = {0, 1, 2, 3, 4, 5, 6, 8, 10, 15, 20};
    for (const std::size_t n : {std::size_t{64} << 10, std::size_t{256} << 10, std::size_t{1} << 20}) {
        for (const bool first_up : {false, true}) {
            // Each alone: the other copy of no bytes (its call still made).
            const Times first_alone = c.cell(first_up, n, !first_up, 0, 0.0, false, 3, 40);
            const Times second_alone = c.cell(first_up, 0, !first_up, n, 0.0, false, 3, 40);
            for (const double tau : taus) {
                const Times t = c.cell(first_up, n, !first_up, n, tau, false, 3, 40);
                std::printf("%s,%zu,%.0f,%.4f,%.4f,%.4f,%.4f,%.4f,%.4f,%.4f,%.4f\n", first_up ? "h2d" : "d2h", n, tau, quantile(t.first, 0.5),
                            quantile(t.first, 0.1), quantile(t.first, 0.9), quantile(t.second, 0.5), quantile(t.second, 0.1),
                            quantile(t.second, 0.9), quantile(first_alone.first, 0.5), quantile(second_alone.second, 0.5));
                std::fflush(stdout);
            }
        }
    }
}

}  // namespace

int main(int argc, char** argv) {
    const std::string mode = argc > 1 ? argv[1] : "";
    if (mode != "behind" && mode != "sweep" && mode != "pairs") {
        std::fprintf(stderr, "usage: %s behind|sweep|pairs\n", argv[0]);
        return 2;
    }
    Copies c;
    if (mode == "behind") behind(c);
    if (mode == "sweep") sweep(c);
    if (mode == "pairs") pairs(c);
    return 0;
}
