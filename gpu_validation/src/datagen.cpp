#include "datagen.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <thread>
#include <vector>

#if defined(__x86_64__) || defined(_M_X64)
#include <immintrin.h>
#define DMAPROBE_HAVE_CLFLUSH 1
#endif

namespace dmaprobe {

namespace {

constexpr std::size_t kParallelAbove = std::size_t{4} << 20;

unsigned worker_count(std::size_t n) {
    if (n < kParallelAbove) return 1;
    const unsigned hw = std::max(1U, std::thread::hardware_concurrency());
    return std::min(hw, 16U);
}

// Splits [0, n) into `workers` word-aligned parts and runs f(part, begin, end) on each in
// parallel (inline when there is one part).
template <class F>
void parallel_parts(std::size_t n, unsigned workers, F&& f) {
    if (workers <= 1) {
        f(0U, std::size_t{0}, n);
        return;
    }
    const std::size_t words = (n + 7) / 8;
    const std::size_t per = (words + workers - 1) / workers;
    std::vector<std::thread> threads;
    for (unsigned t = 0; t < workers; ++t) {
        const std::size_t b = std::min(n, t * per * 8);
        const std::size_t e = std::min(n, (t + 1) * per * 8);
        if (b >= e) break;
        threads.emplace_back([&f, t, b, e] { f(t, b, e); });
    }
    for (auto& th : threads) th.join();
}

void fill_range(unsigned char* p, std::size_t b, std::size_t e, std::uint64_t seed) {
    std::size_t i = b;
    for (; i + 8 <= e; i += 8) {
        const std::uint64_t w = pattern_word(seed, i / 8);
        std::memcpy(p + i, &w, 8);
    }
    for (; i < e; ++i) p[i] = pattern_byte(seed, i);
}

VerifyResult verify_range(const unsigned char* p, std::size_t b, std::size_t e, std::uint64_t seed,
                          std::uint64_t mask) {
    VerifyResult r;
    auto bad = [&r](std::size_t at) {
        if (r.mismatches == 0) r.first_bad = at;
        ++r.mismatches;
    };
    std::size_t i = b;
    for (; i + 8 <= e; i += 8) {
        std::uint64_t w;
        std::memcpy(&w, p + i, 8);
        const std::uint64_t want = pattern_word(seed, i / 8) ^ mask;
        if (w == want) continue;
        for (unsigned k = 0; k < 8; ++k) {
            if (static_cast<unsigned char>(w >> (8 * k)) != static_cast<unsigned char>(want >> (8 * k))) bad(i + k);
        }
    }
    for (; i < e; ++i) {
        const auto want = static_cast<unsigned char>(pattern_byte(seed, i) ^
                                                     static_cast<unsigned char>(mask >> (8 * (i & 7))));
        if (p[i] != want) bad(i);
    }
    return r;
}

}  // namespace

void fill_pattern(void* p, std::size_t n, std::uint64_t seed) {
    auto* bytes = static_cast<unsigned char*>(p);
    parallel_parts(n, worker_count(n), [&](unsigned, std::size_t b, std::size_t e) { fill_range(bytes, b, e, seed); });
}

#if defined(DMAPROBE_HAVE_CLFLUSH)
__attribute__((target("clflushopt"))) static void flush_range(const unsigned char* p, std::size_t b, std::size_t e) {
    // By address, not by offset: a buffer off a line boundary ends in a line of its own.
    constexpr std::uintptr_t kLine = 64;  // x86 cache line
    const std::uintptr_t end = reinterpret_cast<std::uintptr_t>(p) + e;
    for (std::uintptr_t a = (reinterpret_cast<std::uintptr_t>(p) + b) & ~(kLine - 1); a < end; a += kLine) {
        _mm_clflushopt(reinterpret_cast<void*>(a));
    }
    _mm_sfence();  // clflushopt is ordered only by a fence
}
#endif

bool flush_from_caches(const void* p, std::size_t n) {
#if defined(DMAPROBE_HAVE_CLFLUSH)
    if (!__builtin_cpu_supports("clflushopt")) return false;
    const auto* bytes = static_cast<const unsigned char*>(p);
    parallel_parts(n, worker_count(n), [&](unsigned, std::size_t b, std::size_t e) { flush_range(bytes, b, e); });
    return true;
#else
    (void)p;
    (void)n;
    return false;
#endif
}

VerifyResult verify_pattern(const void* p, std::size_t n, std::uint64_t seed, std::uint64_t xor_mask) {
    const auto* bytes = static_cast<const unsigned char*>(p);
    const unsigned workers = worker_count(n);
    std::vector<VerifyResult> parts(workers);
    parallel_parts(n, workers, [&](unsigned t, std::size_t b, std::size_t e) {
        parts[t] = verify_range(bytes, b, e, seed, xor_mask);
    });
    VerifyResult total;
    for (const auto& r : parts) {  // parts are in address order
        if (r.mismatches > 0 && total.mismatches == 0) total.first_bad = r.first_bad;
        total.mismatches += r.mismatches;
    }
    return total;
}

}  // namespace dmaprobe
