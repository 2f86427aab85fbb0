// Host DRAM bandwidth of a lent machine, to judge whether it could hold DMA in both directions
// (duplex copies, the zero-copy exchange): N threads each stream over their own share of three
// 1 GiB buffers, reading (a sum), writing (non-temporal stores not used: plain stores, so write
// allocate counts as the CPU's traffic would) and copying. Best of 5 passes after a warm-up pass
// that also faults the pages in. Build: g++ -O3 -march=native -pthread membw.cpp -o membw
// Run: ./membw [threads...]   prints one CSV row per (threads, kernel).
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>

namespace {

constexpr std::size_t kBytes = std::size_t{1} << 30;
constexpr int kPasses = 5;

enum class Kernel { kRead, kWrite, kCopy };

double run(Kernel k, int threads, std::uint64_t* a, std::uint64_t* b) {
    const std::size_t n = kBytes / sizeof(std::uint64_t);
    std::vector<std::uint64_t> sums(static_cast<std::size_t>(threads), 0);
    double best = 0.0;
    for (int pass = 0; pass <= kPasses; ++pass) {
        std::vector<std::thread> pool;
        const auto t0 = std::chrono::steady_clock::now();
        for (int t = 0; t < threads; ++t) {
            pool.emplace_back([&, t] {
                const std::size_t lo = n * static_cast<std::size_t>(t) / static_cast<std::size_t>(threads);
                const std::size_t hi = n * static_cast<std::size_t>(t + 1) / static_cast<std::size_t>(threads);
                std::uint64_t s = 0;
                switch (k) {
                    case Kernel::kRead:
                        for (std::size_t i = lo; i < hi; ++i) s += a[i];
                        break;
                    case Kernel::kWrite:
                        for (std::size_t i = lo; i < hi; ++i) b[i] = i;
                        break;
                    case Kernel::kCopy:
                        std::memcpy(b + lo, a + lo, (hi - lo) * sizeof(std::uint64_t));
                        break;
                }
                sums[static_cast<std::size_t>(t)] = s;
            });
        }
        for (auto& th : pool) th.join();
        const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        const double moved = k == Kernel::kCopy ? 2.0 * kBytes : static_cast<double>(kBytes);
        if (pass > 0) best = std::max(best, moved / s / 1e9);
    }
    std::uint64_t total = 0;
    for (const auto v : sums) total += v;
    if (total == 42) std::puts("");  // keeps the read loop
    return best;
}

}  // namespace

int main(int argc, char** argv) {
    auto* a = static_cast<std::uint64_t*>(std::aligned_alloc(4096, kBytes));
    auto* b = static_cast<std::uint64_t*>(std::aligned_alloc(4096, kBytes));
    if (a == nullptr || b == nullptr) {
        std::fprintf(stderr, "membw: cannot allocate 2 GiB\n");
        return 1;
    }
    for (std::size_t i = 0; i < kBytes / sizeof(std::uint64_t); ++i) a[i] = i * 2654435761u;
    std::memset(b, 1, kBytes);
    std::vector<int> counts;
    for (int i = 1; i < argc; ++i) counts.push_back(std::atoi(argv[i]));
    if (counts.empty()) counts = {1, 2, 4, 8, 16};
    std::printf("threads,kernel,best_gbps\n");
    for (const int t : counts) {
        std::printf("%d,read,%.2f\n", t, run(Kernel::kRead, t, a, b));
        std::printf("%d,write,%.2f\n", t, run(Kernel::kWrite, t, a, b));
        std::printf("%d,copy,%.2f\n", t, run(Kernel::kCopy, t, a, b));
        std::fflush(stdout);
    }
    std::free(a);
    std::free(b);
    return 0;
}
