// What holds a device-to-host copy at 51-52 GB/s while a host-to-device copy runs beside it
// (duplexmem.cu: 55 alone)? Either the upstream link, which also carries the other copy's read
// requests (a 24-byte TLP each: the more requests, the less room for the writes), or the root
// port's data path, which gives each direction its turn whatever the other moves.
//
// Beside a device-to-host copy of 256 MiB that writes one 16 MiB host buffer again and again (so
// that nothing is written back to host memory: duplexmem.cu), a host-to-device copy made of rows
// of W bytes (cudaMemcpy2DAsync, host pitch 2W, so that no two rows make one request) moves far
// fewer bytes per read request as W shrinks. Each case is also timed alone.
//
// With the argument `write8`, eight CPU threads store over a 2 GiB buffer all along, which slows
// the host-to-device reads (duplexmem.cu): then the D2H copy has room beside them, and whether it
// takes it with rows of 256 B as with rows of 4 KiB tells the link's share from the port's.
//
// Build: nvcc -O3 -arch=sm_90 -Xcompiler -pthread duplexshape.cu -o duplexshape
// Run:   ./duplexshape [write8] > duplexshape.csv     (progress on stderr)
//
// Timing as in duplexmem.cu: a gate kernel holds stream 0, both streams' copies queue behind it,
// events give each copy's end; one warm-up and 5 timed repetitions; copies verified once.
#include <cuda_runtime.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
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
constexpr std::size_t kD2hBytes = 256 * kMiB;
constexpr std::size_t kReuse = 16 * kMiB;
constexpr std::size_t kHostSrc = 1024 * kMiB;  // room for 512 MiB of rows at pitch 2W
constexpr int kReps = 5;

__global__ void gate(long long cycles) {
    const long long start = clock64();
    while (clock64() - start < cycles) {
    }
}

struct Times {
    float h2d_ms = 0.0f;
    float d2h_ms = 0.0f;
};

struct Setup {
    unsigned char* h_src = nullptr;
    unsigned char* h_dst = nullptr;
    unsigned char* d_dst = nullptr;
    unsigned char* d_src = nullptr;
    cudaStream_t s[2]{};
    cudaEvent_t open = nullptr, end_h2d = nullptr, end_d2h = nullptr;
};

// One repetition: rows of `width` bytes (0: none) H2D, and the D2H copy when `d2h`.
Times once(Setup& b, std::size_t width, std::size_t rows, bool d2h) {
    gate<<<1, 1, 0, b.s[0]>>>(400'000);
    CHECK(cudaGetLastError());
    CHECK(cudaEventRecord(b.open, b.s[0]));
    CHECK(cudaStreamWaitEvent(b.s[1], b.open, 0));
    if (width > 0) {
        // Host rows 2W apart; device rows packed.
        CHECK(cudaMemcpy2DAsync(b.d_dst, width, b.h_src, 2 * width, width, rows, cudaMemcpyHostToDevice, b.s[0]));
    }
    CHECK(cudaEventRecord(b.end_h2d, b.s[0]));
    if (d2h) {
        for (std::size_t off = 0; off < kD2hBytes; off += kReuse) {
            CHECK(cudaMemcpyAsync(b.h_dst, b.d_src + off, kReuse, cudaMemcpyDeviceToHost, b.s[1]));
        }
    }
    CHECK(cudaEventRecord(b.end_d2h, b.s[1]));
    CHECK(cudaStreamSynchronize(b.s[0]));
    CHECK(cudaStreamSynchronize(b.s[1]));
    Times t;
    CHECK(cudaEventElapsedTime(&t.h2d_ms, b.open, b.end_h2d));
    CHECK(cudaEventElapsedTime(&t.d2h_ms, b.open, b.end_d2h));
    return t;
}

Times median(Setup& b, std::size_t width, std::size_t rows, bool d2h) {
    once(b, width, rows, d2h);  // warm-up
    std::vector<float> h, d;
    for (int r = 0; r < kReps; ++r) {
        const Times t = once(b, width, rows, d2h);
        h.push_back(t.h2d_ms);
        d.push_back(t.d2h_ms);
    }
    std::sort(h.begin(), h.end());
    std::sort(d.begin(), d.end());
    return Times{h[kReps / 2], d[kReps / 2]};
}

void verify(Setup& b, std::size_t width, std::size_t rows) {
    std::vector<unsigned char> got(width * std::min<std::size_t>(rows, 4096));
    CHECK(cudaMemcpy(got.data(), b.d_dst, got.size(), cudaMemcpyDeviceToHost));
    for (std::size_t r = 0; r < got.size() / width; ++r) {
        if (std::memcmp(got.data() + r * width, b.h_src + r * 2 * width, width) != 0) {
            std::fprintf(stderr, "rows of %zu B: row %zu copied wrong\n", width, r);
            std::exit(1);
        }
    }
    std::vector<unsigned char> dst(kReuse), src(kReuse);
    CHECK(cudaMemcpy(src.data(), b.d_src + kD2hBytes - kReuse, kReuse, cudaMemcpyDeviceToHost));
    if (std::memcmp(src.data(), b.h_dst, kReuse) != 0) {
        std::fprintf(stderr, "D2H copy wrong\n");
        std::exit(1);
    }
}

}  // namespace

// Eight threads storing over their shares of a 2 GiB buffer until stopped.
class StoreLoad {
public:
    StoreLoad() : buffer_((std::size_t{2} << 30) / sizeof(std::uint64_t)) {
        for (int t = 0; t < 8; ++t) {
            pool_.emplace_back([this, t] {
                const std::size_t n = buffer_.size() / 8;
                std::uint64_t* p = buffer_.data() + n * static_cast<std::size_t>(t);
                while (running_.load(std::memory_order_relaxed)) {
                    for (std::size_t i = 0; i < n; ++i) p[i] = i;
                }
            });
        }
    }
    ~StoreLoad() {
        running_ = false;
        for (auto& th : pool_) th.join();
    }

private:
    std::vector<std::uint64_t> buffer_;  // of words: 2 GiB / 8 of them
    std::atomic<bool> running_{true};
    std::vector<std::thread> pool_;
};

int main(int argc, char** argv) {
    const bool write8 = argc > 1 && std::string(argv[1]) == "write8";
    Setup b;
    CHECK(cudaSetDevice(0));
    CHECK(cudaHostAlloc(&b.h_src, kHostSrc, cudaHostAllocDefault));
    CHECK(cudaHostAlloc(&b.h_dst, kReuse, cudaHostAllocDefault));
    CHECK(cudaMalloc(&b.d_dst, kHostSrc / 2));
    CHECK(cudaMalloc(&b.d_src, kD2hBytes));
    for (auto& s : b.s) CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    CHECK(cudaEventCreate(&b.open));
    CHECK(cudaEventCreate(&b.end_h2d));
    CHECK(cudaEventCreate(&b.end_d2h));
    for (std::size_t i = 0; i < kHostSrc; ++i) b.h_src[i] = static_cast<unsigned char>((i * 2654435761u) >> 13 | 1);
    std::vector<unsigned char> pattern(kD2hBytes);
    for (std::size_t i = 0; i < kD2hBytes; ++i) pattern[i] = static_cast<unsigned char>((i * 40503u) >> 7 | 1);
    CHECK(cudaMemcpy(b.d_src, pattern.data(), kD2hBytes, cudaMemcpyHostToDevice));

    const std::unique_ptr<StoreLoad> load = write8 ? std::make_unique<StoreLoad>() : nullptr;  // after the fills
    std::printf("width_bytes,rows,h2d_bytes,h2d_alone_us,d2h_alone_us,h2d_beside_us,d2h_beside_us\n");
    const Times d_alone = median(b, 0, 0, true);
    for (const std::size_t width : {std::size_t{32}, std::size_t{64}, std::size_t{128}, std::size_t{256},
                                    std::size_t{512}, std::size_t{4096}}) {
        // Size the rows so that alone they take about 8 ms: longer than the D2H copy beside them.
        const std::size_t probe_rows = std::min<std::size_t>(kHostSrc / (2 * width), 4 * kMiB / width);
        const Times probe = median(b, width, probe_rows, false);
        const double bytes_per_ms = static_cast<double>(probe_rows * width) / probe.h2d_ms;
        const std::size_t rows = std::min<std::size_t>(kHostSrc / (2 * width), static_cast<std::size_t>(8.0 * bytes_per_ms / width) + 1);
        const Times alone = median(b, width, rows, false);
        const Times beside = median(b, width, rows, true);
        verify(b, width, rows);
        std::printf("%zu,%zu,%zu,%.3f,%.3f,%.3f,%.3f\n", width, rows, rows * width, alone.h2d_ms * 1e3, d_alone.d2h_ms * 1e3,
                    beside.h2d_ms * 1e3, beside.d2h_ms * 1e3);
        std::fflush(stdout);
        std::fprintf(stderr, "rows of %zu B done\n", width);
    }
    // A contiguous H2D copy beside it, for reference (duplexmem.cu's duplex-d2h-reuse16).
    const std::size_t bytes = 512 * kMiB;
    const Times alone = median(b, bytes, 1, false);
    const Times beside = median(b, bytes, 1, true);
    std::printf("%zu,1,%zu,%.3f,%.3f,%.3f,%.3f\n", bytes, bytes, alone.h2d_ms * 1e3, d_alone.d2h_ms * 1e3,
                beside.h2d_ms * 1e3, beside.d2h_ms * 1e3);
    return 0;
}
