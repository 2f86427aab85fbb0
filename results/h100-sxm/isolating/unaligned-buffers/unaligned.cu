// unaligned-buffers (README.md): what a host buffer that does not start on a page, or on a cache
// line, costs a copy. dmaprobe's offset-1B rows show pageable copies out of the GPU a quarter slower
// 1 byte off a page, 64 bytes off within 2.5 %, copies into the GPU and pinned copies barely moved.
// A buffer from malloc() starts 16 bytes past a page when it is large (mmap'd with a header).
//   malloc     where malloc() puts buffers of 4 KiB-64 MiB (address mod 4096 and mod 64)
//   memcpy     one thread's memcpy from a page-aligned source into a destination OFF bytes past a
//              page (dst), and from a source OFF past a page into an aligned destination (src),
//              1 MiB (cache-resident) and 64 MiB, OFF = 0, 1, 8, 16, 32, 63, 64, 128, 2048
//   pageable   cudaMemcpy of pageable memory OFF bytes past a page, out of the GPU (d2h) and into
//              it (h2d), 64 KiB, 1 MiB, 16 MiB, OFF = 0, 1, 2, 4, 8, 16, 32, 64
//   pinned     the same from cudaMallocHost memory OFF bytes in, 4 KiB, 64 KiB, 16 MiB, OFF = 0, 1, 64
// 10 repetitions after 2 warm-ups, medians; host time around the call and a synchronisation, as
// dmaprobe; each copy's first and last byte checked.
//
// Build: nvcc -O3 -arch=sm_90 unaligned.cu -o unaligned
#include <cuda_runtime.h>
#include <sys/mman.h>

#include <algorithm>
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

using Clock = std::chrono::steady_clock;
constexpr int kWarm = 2;
constexpr int kReps = 10;
constexpr std::size_t kPage = 4096;
constexpr std::size_t kMax = std::size_t{64} << 20;
constexpr std::size_t kSlack = 2 * kPage;  // room for every offset past the buffer

unsigned char* map(std::size_t n) {
    void* m = ::mmap(nullptr, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED) {
        std::perror("mmap");
        std::exit(1);
    }
    std::memset(m, 0x11, n);  // old pages: no fault is timed
    return static_cast<unsigned char*>(m);
}

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    const std::size_t n = v.size();
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

void print(const char* what, const char* dir, std::size_t n, std::size_t off, const std::vector<double>& t) {
    std::printf("%s,%s,%zu,%zu,%.3f,%.3f,%.3f\n", what, dir, n, off, median(t), *std::min_element(t.begin(), t.end()),
                *std::max_element(t.begin(), t.end()));
    std::fflush(stdout);
}

template <class F>
std::vector<double> timed(F&& f) {
    std::vector<double> t;
    for (int rep = 0; rep < kWarm + kReps; ++rep) {
        const auto t0 = Clock::now();
        f();
        const double us = std::chrono::duration<double, std::micro>(Clock::now() - t0).count();
        if (rep >= kWarm) t.push_back(us);
    }
    return t;
}

void fail(const char* what, const char* dir, std::size_t n, std::size_t off) {
    std::fprintf(stderr, "%s %s %zu +%zu: wrong data\n", what, dir, n, off);
    std::exit(1);
}

}  // namespace

int main() {
    std::printf("what,dir,bytes,offset,us_median,us_min,us_max\n");
    // Where malloc puts a buffer (us columns: address mod 4096, mod 64).
    for (const std::size_t n : {std::size_t{4} << 10, std::size_t{64} << 10, std::size_t{1} << 20, std::size_t{16} << 20,
                                std::size_t{64} << 20}) {
        void* p = std::malloc(n);
        const auto a = reinterpret_cast<std::uintptr_t>(p);
        std::printf("malloc,-,%zu,%zu,%zu,%zu,0\n", n, static_cast<std::size_t>(a % kPage), static_cast<std::size_t>(a % kPage),
                    static_cast<std::size_t>(a % 64));
        std::free(p);
    }
    unsigned char* a = map(kMax + kSlack);
    unsigned char* b = map(kMax + kSlack);
    const std::size_t cpu_offsets[] = {0, 1, 8, 16, 32, 63, 64, 128, 2048};
    for (const std::size_t n : {std::size_t{1} << 20, kMax}) {
        for (const std::size_t off : cpu_offsets) {
            // dst: aligned source, destination off; src: source off, aligned destination.
            for (const bool dst : {true, false}) {
                unsigned char* s = dst ? a : a + off;
                unsigned char* d = dst ? b + off : b;
                s[0] = static_cast<unsigned char>(off + 1);
                s[n - 1] = static_cast<unsigned char>(off + 2);
                const auto t = timed([&] { std::memcpy(d, s, n); });
                if (d[0] != s[0] || d[n - 1] != s[n - 1]) fail("memcpy", dst ? "dst" : "src", n, off);
                print("memcpy", dst ? "dst" : "src", n, off, t);
            }
        }
    }
    unsigned char* dev = nullptr;
    CHECK(cudaMalloc(&dev, kMax));
    CHECK(cudaMemset(dev, 0x3C, kMax));
    CHECK(cudaDeviceSynchronize());
    unsigned char* pinned = nullptr;
    CHECK(cudaMallocHost(&pinned, kMax + kSlack));
    std::memset(pinned, 0x11, kMax + kSlack);
    const auto run = [&](const char* what, unsigned char* base, const std::vector<std::size_t>& sizes,
                         const std::vector<std::size_t>& offsets) {
        for (const std::size_t n : sizes) {
            for (const std::size_t off : offsets) {
                unsigned char* h = base + off;
                for (const bool h2d : {false, true}) {
                    const unsigned char mark = static_cast<unsigned char>(0x40 + off + (h2d ? 1 : 0));
                    if (h2d) {
                        h[0] = mark;
                        h[n - 1] = mark;
                    } else {
                        CHECK(cudaMemset(dev, mark, n));
                        CHECK(cudaDeviceSynchronize());
                    }
                    const auto t = timed([&] {
                        if (h2d) {
                            CHECK(cudaMemcpy(dev, h, n, cudaMemcpyHostToDevice));
                        } else {
                            CHECK(cudaMemcpy(h, dev, n, cudaMemcpyDeviceToHost));
                        }
                        CHECK(cudaDeviceSynchronize());
                    });
                    unsigned char first = 0, last = 0;
                    if (h2d) {
                        CHECK(cudaMemcpy(&first, dev, 1, cudaMemcpyDeviceToHost));
                        CHECK(cudaMemcpy(&last, dev + n - 1, 1, cudaMemcpyDeviceToHost));
                    } else {
                        first = h[0];
                        last = h[n - 1];
                    }
                    if (first != mark || last != mark) fail(what, h2d ? "h2d" : "d2h", n, off);
                    print(what, h2d ? "h2d" : "d2h", n, off, t);
                }
            }
        }
    };
    run("pageable", a, {std::size_t{64} << 10, std::size_t{1} << 20, std::size_t{16} << 20}, {0, 1, 2, 4, 8, 16, 32, 64});
    run("pinned", pinned, {std::size_t{4} << 10, std::size_t{64} << 10, std::size_t{16} << 20}, {0, 1, 64});
    CHECK(cudaFreeHost(pinned));
    CHECK(cudaFree(dev));
    std::fprintf(stderr, "done\n");
    return 0;
}
