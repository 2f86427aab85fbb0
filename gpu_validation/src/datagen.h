// Test data: a counter-based pattern (splitmix64 of seed and word index), so that host threads
// and GPU kernels fill and check any part of a buffer independently. Every 64-bit word is
// non-zero and each repetition uses a new seed, so stale or unwritten bytes are caught.
// Byte i of a buffer is byte (i % 8) (little-endian) of pattern_word(seed, i / 8).
#pragma once

#include <cstddef>
#include <cstdint>

#if defined(__CUDACC__)
#define DMAPROBE_HD __host__ __device__ __forceinline__
#else
#define DMAPROBE_HD inline
#endif

namespace dmaprobe {

DMAPROBE_HD std::uint64_t mix64(std::uint64_t x) {
    x += 0x9E3779B97F4A7C15ULL;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
    return x ^ (x >> 31);
}

DMAPROBE_HD std::uint64_t pattern_word(std::uint64_t seed, std::uint64_t word_index) {
    const std::uint64_t v = mix64(seed ^ (word_index * 0xD1B54A32D192ED03ULL));
    return v != 0 ? v : 0x5A5A5A5A5A5A5A5AULL;
}

DMAPROBE_HD unsigned char pattern_byte(std::uint64_t seed, std::uint64_t byte_index) {
    return static_cast<unsigned char>(pattern_word(seed, byte_index >> 3) >> (8 * (byte_index & 7)));
}

// A seed per (case, repetition, buffer role): never the same twice in one run.
DMAPROBE_HD std::uint64_t make_seed(std::uint64_t case_index, std::uint64_t rep, std::uint64_t role) {
    return mix64((case_index << 32) ^ (rep << 4) ^ role ^ 0x0123456789ABCDEFULL);
}

// The transform of the synthetic kernel (async_overlap, periodic): out = in ^ mask word-wise.
inline constexpr std::uint64_t kKernelMask = 0xA5A5A5A5F00FF00FULL;

// Host side, parallel above a few MiB (std::thread). `p` should be 8-byte aligned.
void fill_pattern(void* p, std::size_t n, std::uint64_t seed);

// Writes every cache line of [p, p + n) back to memory and drops it from the CPU's caches
// (clflushopt, then a fence), parallel like fill_pattern. A DMA that then reads the buffer finds
// it in DRAM and in no core's cache. False on a CPU without the instruction (nothing done).
bool flush_from_caches(const void* p, std::size_t n);

struct VerifyResult {
    std::uint64_t mismatches = 0;    // bytes that differ
    std::uint64_t first_bad = 0;     // first differing byte (valid when mismatches > 0)
    bool ok() const { return mismatches == 0; }
};

// Compares buf[i] with pattern_byte(seed, i) ^ mask byte (i % 8) over [0, n).
VerifyResult verify_pattern(const void* p, std::size_t n, std::uint64_t seed, std::uint64_t xor_mask = 0);

}  // namespace dmaprobe
