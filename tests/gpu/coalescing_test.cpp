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
    // Stride 8: one 4-byte access per 32-byte sector.
    EXPECT_DOUBLE_EQ(coalesce(4, 8).efficiency(), 1.0 / 8.0);
    // Stride 32: one access per line, a lone sector each: 32 requests of 32 bytes.
    const WarpAccess w = coalesce(4, 32);
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
}

}  // namespace
}  // namespace dmasim::gpu
