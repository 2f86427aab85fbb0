#include "chase.h"

#include <cstring>
#include <stdexcept>
#include <vector>

namespace dmaprobe {

namespace {

std::uint64_t splitmix64(std::uint64_t& state) {
    std::uint64_t z = (state += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

// Uniform in [0, bound) without modulo bias (Lemire's rejection would do too; bound is small
// enough next to 2^64 that rejecting the top sliver is cheap and exact).
std::uint64_t below(std::uint64_t& state, std::uint64_t bound) {
    const std::uint64_t limit = ~std::uint64_t{0} - (~std::uint64_t{0} % bound);
    for (;;) {
        const std::uint64_t r = splitmix64(state);
        if (r < limit) return r % bound;
    }
}

}  // namespace

std::size_t build_chase(void* base, std::size_t bytes, std::size_t node_bytes, std::uint64_t seed) {
    if (node_bytes < sizeof(std::uint64_t) || node_bytes % sizeof(std::uint64_t) != 0) {
        throw std::invalid_argument("chase nodes must be a multiple of 8 bytes");
    }
    const std::size_t nodes = bytes / node_bytes;
    if (nodes == 0) throw std::invalid_argument("a chase needs room for one node");
    // Sattolo's shuffle of the identity gives a permutation that is one cycle through every
    // node: the chain never closes early, whatever the number of hops.
    std::vector<std::uint32_t> order(nodes);
    for (std::size_t i = 0; i < nodes; ++i) order[i] = static_cast<std::uint32_t>(i);
    std::uint64_t state = seed;
    for (std::size_t i = nodes - 1; i > 0; --i) {
        const std::size_t j = static_cast<std::size_t>(below(state, i));  // j < i: Sattolo, not Fisher-Yates
        std::swap(order[i], order[j]);
    }
    auto* p = static_cast<unsigned char*>(base);
    for (std::size_t i = 0; i < nodes; ++i) {
        const std::uint64_t next = static_cast<std::uint64_t>(order[i]) * node_bytes;
        std::memcpy(p + i * node_bytes, &next, sizeof next);
    }
    return nodes;
}

std::uint64_t chase_end(const void* base, std::int64_t hops, std::uint64_t start) {
    const auto* p = static_cast<const unsigned char*>(base);
    std::uint64_t off = start;
    for (std::int64_t h = 0; h < hops; ++h) std::memcpy(&off, p + off, sizeof off);
    return off;
}

}  // namespace dmaprobe
