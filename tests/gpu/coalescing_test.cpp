#include "dmasim/gpu/coalescing.h"

#include <gtest/gtest.h>

namespace dmasim::gpu {
namespace {

TEST(Coalescing, ContiguousAccessesFillWholeLines) {
    const WarpAccess w4 = coalesce(4, 1);
    EXPECT_EQ(w4.requests, 1U);
    EXPECT_EQ(w4.request_bytes, 128U);
    EXPECT_DOUBLE_EQ(w4.efficiency(), 1.0);
    const WarpAccess w16 = coalesce(16, 1);
    EXPECT_EQ(w16.requests, 4U);
    EXPECT_EQ(w16.request_bytes, 512U);
    EXPECT_DOUBLE_EQ(w16.efficiency(), 1.0);
}

TEST(Coalescing, StrideWastesTheBytesBetweenAccesses) {
    // Stride 2 with 4-byte loads touches every sector: half the bytes moved are useful.
    EXPECT_DOUBLE_EQ(coalesce(4, 2).efficiency(), 0.5);
    EXPECT_EQ(coalesce(4, 2).requests, 2U);
    // Stride 16: sectors 0 and 2 of 16 lines, two requests each (a PCIe read cannot skip a gap).
    EXPECT_EQ(coalesce(4, 16).lines, 16U);
    EXPECT_EQ(coalesce(4, 16).requests, 32U);
    EXPECT_EQ(coalesce(4, 1).lines, 1U);
    // Stride 8: one 4-byte access per 32-byte sector.
    EXPECT_DOUBLE_EQ(coalesce(4, 8).efficiency(), 1.0 / 8.0);
    // Stride 32: one access per line, a lone sector each: 32 requests of 32 bytes.
    const WarpAccess w = coalesce(4, 32);
    EXPECT_EQ(w.lines, 32U);
    EXPECT_EQ(w.requests, 32U);
    EXPECT_EQ(w.request_bytes, 32U * 32U);
    // 16-byte accesses at stride 2 skip every other 16 bytes: sectors stay fully touched.
    EXPECT_DOUBLE_EQ(coalesce(16, 2).efficiency(), 0.5);
}

// Stores: the L2 merges a line's stores, and a PCIe write carries contiguous bytes only.
TEST(Coalescing, StoresGoOutAsWholeLinesOrOneWriteEach) {
    // Stride 1, any width: the line fills, whoever filled it (1-byte stores included).
    for (const std::uint32_t width : {1U, 2U, 4U, 8U, 16U}) EXPECT_EQ(store_traffic(width, 1).write_bytes, kLineBytes) << width;
    // Any gap between stores: a write per store, of its own size, not the sector around it.
    EXPECT_EQ(store_traffic(4, 2).write_bytes, 4U);
    EXPECT_EQ(store_traffic(4, 32).write_bytes, 4U);
    EXPECT_EQ(store_traffic(16, 2).write_bytes, 16U);
    // How far apart they land decides which share a host cache line.
    EXPECT_EQ(store_traffic(4, 1).spacing_bytes, 0U);
    EXPECT_EQ(store_traffic(4, 12).spacing_bytes, 48U);
    EXPECT_EQ(store_traffic(16, 4).spacing_bytes, 64U);
}

// Which partial writes share a 64-byte host line with a neighbour: all of them when several fall
// in each line, none at one per line or more apart, and at 48 bytes apart the pairs that fall
// in one line (writes 0-1, 4-5, ...) but not the lone ones between (2, 3, 6, 7).
TEST(Coalescing, PartialWritesShareAHostLineWhenNeighboursFallInIt) {
    constexpr std::uint32_t kHostLine = 64;
    constexpr std::uint64_t kCount = 1000;
    auto shared = [&](std::uint32_t spacing, std::uint32_t bytes, std::uint64_t i) {
        return shares_host_line(i, kCount, spacing, bytes, kHostLine);
    };
    for (std::uint64_t i = 0; i < 16; ++i) {
        EXPECT_TRUE(shared(32, 4, i)) << i;   // two per line
        EXPECT_TRUE(shared(8, 4, i)) << i;    // eight per line
        EXPECT_FALSE(shared(64, 4, i)) << i;  // one per line
        EXPECT_FALSE(shared(128, 16, i)) << i;
    }
    const bool expected48[] = {true, true, false, false, true, true, false, false};
    for (std::uint64_t i = 0; i < 8; ++i) EXPECT_EQ(shared(48, 4, i), expected48[i]) << i;
    // The last write has only a neighbour before it; a lone first write none.
    EXPECT_TRUE(shares_host_line(kCount - 1, kCount, 32, 4, kHostLine));
    EXPECT_FALSE(shares_host_line(0, 1, 32, 4, kHostLine));
    // Whole lines are never partial, nor is a stream written back to back.
    EXPECT_FALSE(shared(64, 64, 1));
    EXPECT_FALSE(shared(0, 4, 1));
}

}  // namespace
}  // namespace dmasim::gpu
