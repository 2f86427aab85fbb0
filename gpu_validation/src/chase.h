// The pointer chase of zero_copy pattern=chase: a random cyclic chain through a buffer, one
// node per 64-byte line, each node holding the byte offset of the next. One GPU thread follows
// it with dependent uncached loads, so each load waits for the one before: the time per hop is
// the load round trip. Plain C++: unit-tested without a GPU.
#pragma once

#include <cstddef>
#include <cstdint>

namespace dmaprobe {

// Writes the chain into [base, base + bytes): bytes / node_bytes nodes at multiples of
// node_bytes, linked in one cycle through all of them in an order drawn from `seed`
// (Sattolo's algorithm), so that consecutive hops land on unrelated lines and pages. Bytes of a
// node past its 8-byte link are left as they are. Returns the number of nodes.
std::size_t build_chase(void* base, std::size_t bytes, std::size_t node_bytes, std::uint64_t seed);

// The offset a chase of `hops` loads from offset `start` ends at (what the kernel reports).
std::uint64_t chase_end(const void* base, std::int64_t hops, std::uint64_t start = 0);

}  // namespace dmaprobe
