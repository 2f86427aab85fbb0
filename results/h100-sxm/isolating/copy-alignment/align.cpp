// copy-alignment (README.md): one thread's memcpy against the alignment of its source and its
// destination, on the lent machines: what a pageable copy pays inside the runtime's staging copy when
// the user's buffer starts off a cache line (dmaprobe's offset-1B rows: out of the GPU +25 %, into it
// nothing). CPU only.
//
// memcpy(dst + d, src + s, n) for (d, s) in (0, 0), (1, 0), (64, 0), (0, 1), (0, 64), n from 64 KiB
// to 16 MiB, each buffer page-aligned and written before; the pair cycles through 64 MiB of buffers so
// that copies of 1 MiB and more come from and go to DRAM as the runtime's do. 20 repetitions after 3
// warm-ups, steady_clock; prints mode,bytes,dst_offset,src_offset,us_median,gbps.
//
// Build: g++ -O2 -std=c++17 align.cpp -o align
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;
constexpr int kWarm = 3;
constexpr int kReps = 20;
constexpr std::size_t kPool = 64u << 20;

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    const std::size_t n = v.size();
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

unsigned char* alloc(std::size_t n) {
    void* p = nullptr;
    if (posix_memalign(&p, 4096, n) != 0) std::exit(1);
    std::memset(p, 0x5A, n);
    return static_cast<unsigned char*>(p);
}

}  // namespace

int main() {
    const std::size_t sizes[] = {64u << 10, 1u << 20, 16u << 20};
    const std::size_t offsets[][2] = {{0, 0}, {1, 0}, {64, 0}, {0, 1}, {0, 64}};
    unsigned char* src = alloc(kPool + 4096);
    unsigned char* dst = alloc(kPool + 4096);
    std::printf("bytes,dst_offset,src_offset,us_median,gbps\n");
    for (const std::size_t n : sizes) {
        const std::size_t slots = std::max<std::size_t>(1, kPool / n);
        for (const auto& o : offsets) {
            std::vector<double> t;
            for (int rep = 0; rep < kWarm + kReps; ++rep) {
                // Small copies stay in the cache; large ones walk the pool, as a staging copy's data
                // does not stay there.
                const std::size_t at = n >= (1u << 20) ? (static_cast<std::size_t>(rep) % slots) * n : 0;
                unsigned char* d = dst + at + o[0];
                const unsigned char* s = src + at + o[1];
                const auto t0 = Clock::now();
                std::memcpy(d, s, n);
                const double us = std::chrono::duration<double, std::micro>(Clock::now() - t0).count();
                if (d[n - 1] != s[n - 1] || d[0] != s[0]) return 1;
                if (rep >= kWarm) t.push_back(us);
            }
            const double us = median(t);
            std::printf("%zu,%zu,%zu,%.2f,%.2f\n", n, o[0], o[1], us, static_cast<double>(n) / (us * 1e3));
            std::fflush(stdout);
        }
    }
    return 0;
}
