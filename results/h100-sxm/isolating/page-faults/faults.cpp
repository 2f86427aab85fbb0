// page-faults (README.md): what the first touch of never-touched anonymous memory costs the CPU,
// page by page, on the lent machines: the cost a pageable copy from or into such memory pays inside
// the driver's CPU copy (dmaprobe's `pageable-fresh` rows). CPU only.
//
// For each size, 15 repetitions after 2 warm-ups, each on a new mmap (MAP_PRIVATE|MAP_ANONYMOUS,
// no madvise: 4 KiB pages while transparent huge pages are `madvise`), timed with steady_clock:
//   read      one 8-byte load per 4 KiB page (each a read fault: the zero page is mapped)
//   write     one 8-byte store per page (each a write fault: a page is allocated and zeroed)
//   copy_from memcpy of the whole mapping into a buffer touched before (read faults inside a copy)
//   copy_into memcpy of such a buffer into the whole mapping (write faults inside a copy)
//   copy_warm memcpy between two buffers touched before (the copy alone)
// Prints CSV: mode,bytes,pages,us_median,us_min,us_max,us_per_page (median / pages).
//
// Build: g++ -O2 -std=c++17 faults.cpp -o faults
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;
constexpr std::size_t kPage = 4096;
constexpr int kWarm = 2;
constexpr int kReps = 15;

void* fresh(std::size_t n) {
    void* m = ::mmap(nullptr, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED) {
        std::perror("mmap");
        std::exit(1);
    }
    return m;
}

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    const std::size_t n = v.size();
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

}  // namespace

int main() {
    const std::size_t sizes[] = {64u << 10, 256u << 10, 1u << 20, 4u << 20, 16u << 20, 64u << 20};
    const char* modes[] = {"read", "write", "copy_from", "copy_into", "copy_warm"};
    std::vector<unsigned char> warm_a(64u << 20, 0x5A), warm_b(64u << 20, 0xA5);
    std::printf("mode,bytes,pages,us_median,us_min,us_max,us_per_page\n");
    volatile std::uint64_t sink = 0;
    for (const std::size_t n : sizes) {
        const std::size_t pages = n / kPage;
        for (int mode = 0; mode < 5; ++mode) {
            std::vector<double> t;
            for (int rep = 0; rep < kWarm + kReps; ++rep) {
                auto* m = static_cast<unsigned char*>(mode == 4 ? warm_b.data() : fresh(n));
                const auto t0 = Clock::now();
                switch (mode) {
                    case 0: {
                        std::uint64_t s = 0;
                        for (std::size_t p = 0; p < pages; ++p) s += *reinterpret_cast<volatile std::uint64_t*>(m + p * kPage);
                        sink = sink + s;
                        break;
                    }
                    case 1:
                        for (std::size_t p = 0; p < pages; ++p) *reinterpret_cast<volatile std::uint64_t*>(m + p * kPage) = p + 1;
                        break;
                    case 2: std::memcpy(warm_a.data(), m, n); break;
                    case 3: std::memcpy(m, warm_a.data(), n); break;
                    default: std::memcpy(m, warm_a.data(), n); break;
                }
                const double us = std::chrono::duration<double, std::micro>(Clock::now() - t0).count();
                // What the touch left: zeros read, the stored values, the copied bytes.
                bool ok = true;
                if (mode == 1) ok = *reinterpret_cast<std::uint64_t*>(m + (pages - 1) * kPage) == pages;
                if (mode == 2) ok = warm_a[n - 1] == 0;
                if (mode == 3 || mode == 4) ok = std::memcmp(m, warm_a.data(), n) == 0;
                if (mode == 2) std::memset(warm_a.data(), 0x5A, n);
                if (!ok) {
                    std::fprintf(stderr, "%s %zu: verification failed\n", modes[mode], n);
                    return 1;
                }
                if (mode != 4) ::munmap(m, n);
                if (rep >= kWarm) t.push_back(us);
            }
            const double med = median(t);
            std::printf("%s,%zu,%zu,%.2f,%.2f,%.2f,%.4f\n", modes[mode], n, pages, med, *std::min_element(t.begin(), t.end()),
                        *std::max_element(t.begin(), t.end()), med / static_cast<double>(pages));
            std::fflush(stdout);
        }
    }
    std::fprintf(stderr, "done (sink %llu)\n", static_cast<unsigned long long>(sink));
    return 0;
}
