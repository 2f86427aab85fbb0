#include "dmasim/gpu/coalescing.h"

#include <map>
#include <set>

namespace dmasim::gpu {

WarpAccess coalesce(std::uint32_t access_bytes, std::uint32_t stride) {
    // line index -> touched sector indices within it (sorted)
    std::map<std::uint64_t, std::set<std::uint32_t>> lines;
    for (std::uint32_t lane = 0; lane < kWarpSize; ++lane) {
        const std::uint64_t first = static_cast<std::uint64_t>(lane) * stride * access_bytes;
        const std::uint64_t last = first + access_bytes - 1;
        for (std::uint64_t s = first / kSectorBytes; s <= last / kSectorBytes; ++s) {
            lines[s * kSectorBytes / kLineBytes].insert(static_cast<std::uint32_t>(s % (kLineBytes / kSectorBytes)));
        }
    }
    WarpAccess w;
    w.useful_bytes = kWarpSize * access_bytes;
    w.lines = static_cast<std::uint32_t>(lines.size());
    for (const auto& [line, sectors] : lines) {
        int prev = -2;
        for (const std::uint32_t s : sectors) {
            if (static_cast<int>(s) != prev + 1) ++w.requests;  // a gap starts a new request
            w.request_bytes += kSectorBytes;
            prev = static_cast<int>(s);
        }
    }
    return w;
}

StoreTraffic store_traffic(std::uint32_t access_bytes, std::uint32_t stride) {
    StoreTraffic t;
    // Stores are aligned to their size, which divides the line: no run crosses a line.
    t.write_bytes = stride <= 1 ? kLineBytes : access_bytes;
    t.spacing_bytes = stride <= 1 ? 0 : stride * access_bytes;
    return t;
}

bool shares_host_line(std::uint64_t index, std::uint64_t count, std::uint32_t spacing, std::uint32_t write_bytes,
                      std::uint32_t host_line) {
    if (spacing == 0 || host_line == 0 || write_bytes >= host_line) return false;
    const auto line = [&](std::uint64_t i) { return i * spacing / host_line; };
    return (index > 0 && line(index - 1) == line(index)) || (index + 1 < count && line(index + 1) == line(index));
}

}  // namespace dmasim::gpu
