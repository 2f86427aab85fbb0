#include "datagen.h"

#include <gtest/gtest.h>

#include <cstring>
#include <vector>

namespace dmaprobe {
namespace {

TEST(DmaprobeDatagen, FillThenVerifyAtAwkwardSizes) {
    for (std::size_t n : {std::size_t{1}, std::size_t{7}, std::size_t{8}, std::size_t{13}, std::size_t{4096},
                          std::size_t{4099}, (std::size_t{5} << 20) + 3}) {
        std::vector<std::uint64_t> buf((n + 7) / 8 + 1);
        fill_pattern(buf.data(), n, 42);
        EXPECT_TRUE(verify_pattern(buf.data(), n, 42).ok()) << n;
        EXPECT_FALSE(verify_pattern(buf.data(), n, 43).ok()) << n;
    }
}

TEST(DmaprobeDatagen, FindsEveryBadByteAndTheFirst) {
    const std::size_t n = (std::size_t{6} << 20) + 5;  // parallel path
    std::vector<std::uint64_t> buf((n + 7) / 8);
    auto* b = reinterpret_cast<unsigned char*>(buf.data());
    fill_pattern(b, n, 7);
    b[100] ^= 1;
    b[n - 1] ^= 0xFF;
    b[n / 2] ^= 0x10;
    const VerifyResult r = verify_pattern(b, n, 7);
    EXPECT_EQ(r.mismatches, 3U);
    EXPECT_EQ(r.first_bad, 100U);
}

TEST(DmaprobeDatagen, XorMaskMatchesTheKernelTransform) {
    const std::size_t n = 1003;
    std::vector<std::uint64_t> buf((n + 7) / 8);
    auto* b = reinterpret_cast<unsigned char*>(buf.data());
    fill_pattern(b, n, 9);
    for (std::size_t i = 0; i < n; ++i) b[i] ^= static_cast<unsigned char>(kKernelMask >> (8 * (i % 8)));
    EXPECT_TRUE(verify_pattern(b, n, 9, kKernelMask).ok());
    EXPECT_FALSE(verify_pattern(b, n, 9).ok());
}

TEST(DmaprobeDatagen, WordsAreNonZeroAndSeedsDiffer) {
    for (std::uint64_t w = 0; w < 100000; ++w) ASSERT_NE(pattern_word(1, w), 0U);
    EXPECT_NE(make_seed(0, 0, 1), make_seed(0, 1, 1));
    EXPECT_NE(make_seed(0, 0, 1), make_seed(1, 0, 1));
    EXPECT_NE(make_seed(0, 0, 1), make_seed(0, 0, 2));
    // A zero-filled buffer never passes (the pattern has no zero words).
    std::vector<std::uint64_t> zeros(512, 0);
    EXPECT_EQ(verify_pattern(zeros.data(), 4096, 5).ok(), false);
}

TEST(DmaprobeDatagen, FlushingFromTheCachesKeepsEveryByte) {
    // Off a line boundary, a partial last line, and a size that takes the parallel path: the
    // lines are written back, not dropped, so the pattern must still verify.
    for (std::size_t n : {std::size_t{1}, std::size_t{100}, (std::size_t{5} << 20) + 3}) {
        std::vector<std::uint64_t> buf((n + 7) / 8 + 2);
        auto* b = reinterpret_cast<unsigned char*>(buf.data()) + 8;
        fill_pattern(b, n, 11);
        const bool flushed = flush_from_caches(b, n);
#if defined(__x86_64__)
        EXPECT_EQ(flushed, __builtin_cpu_supports("clflushopt") != 0) << n;
#else
        EXPECT_FALSE(flushed) << n;
#endif
        EXPECT_TRUE(verify_pattern(b, n, 11).ok()) << n;
    }
}

TEST(DmaprobeDatagen, BytesMatchWords) {
    for (std::uint64_t i = 0; i < 64; ++i) {
        const std::uint64_t w = pattern_word(3, i / 8);
        EXPECT_EQ(pattern_byte(3, i), static_cast<unsigned char>(w >> (8 * (i % 8))));
    }
}

}  // namespace
}  // namespace dmaprobe
