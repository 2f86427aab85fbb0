// How one warp's accesses to mapped host memory become memory requests: the 32 lanes'
// addresses are grouped into 32-byte sectors of 128-byte lines, and each contiguous run of
// touched sectors in a line is one request (a PCIe read of that many bytes, or a write).
// Plain arithmetic, no SystemC: the zero-copy model and its tests use it.
#pragma once

#include <cstdint>

namespace dmasim::gpu {

struct WarpAccess {
    std::uint32_t useful_bytes = 0;   // bytes the lanes asked for
    std::uint32_t lines = 0;          // 128-byte lines the warp access touches
    std::uint32_t requests = 0;       // memory requests the warp access becomes
    std::uint32_t request_bytes = 0;  // bytes those requests move in total
    double efficiency() const { return request_bytes ? static_cast<double>(useful_bytes) / request_bytes : 0.0; }
};

inline constexpr std::uint32_t kWarpSize = 32;
inline constexpr std::uint32_t kSectorBytes = 32;
inline constexpr std::uint32_t kLineBytes = 128;

// Lane i accesses `access_bytes` at byte offset i * stride * access_bytes (stride in elements).
WarpAccess coalesce(std::uint32_t access_bytes, std::uint32_t stride);

// How a kernel's stores reach host memory. The GPU merges the stores that reach a 128-byte line
// together into one write, and a PCIe memory write carries contiguous bytes only (byte enables
// exist for its first and last DW alone), so a line goes out as one write per contiguous run of
// stored bytes: a whole line at stride 1, one `access_bytes` write per store otherwise. It keeps
// no partial line to complete later: a line whose sectors come even a microsecond apart leaves
// as a write per sector (results/h100-sxm/isolating/narrow-stores). 1- and 2-byte stores at
// stride 1, whose lines are written by four and two warps, split some lines by how the warps'
// stores interleave (3-26 % of 1-byte lines by grid and kernel); the model writes them whole.
struct StoreTraffic {
    std::uint32_t write_bytes = 0;  // payload of one write
    // Bytes from one write's start to the next one's in host memory when the writes are one per
    // store (stride * access_bytes); 0 when they are whole lines, back to back.
    std::uint32_t spacing_bytes = 0;
};
StoreTraffic store_traffic(std::uint32_t access_bytes, std::uint32_t stride);

// Whether write `index` (0-based) of a stream of `count` writes `spacing` bytes apart shares its
// host cache line of `host_line` bytes with the write before or after it: the host merges such
// partial writes into the line one after another (root_complex.shared_line_write). A write of a
// whole line, or writes further apart than a line, share nothing.
bool shares_host_line(std::uint64_t index, std::uint64_t count, std::uint32_t spacing, std::uint32_t write_bytes,
                      std::uint32_t host_line);

}  // namespace dmasim::gpu
