#include "dmasim/pcie/wire.h"

#include <gtest/gtest.h>

namespace dmasim::pcie {
namespace {

config::LinkParams link(int gen, int lanes = 16, std::uint64_t mps = 256) {
    config::LinkParams l;
    l.generation = gen;
    l.lanes = lanes;
    l.mps = core::Bytes{mps};
    return l;
}

TEST(Wire, BytesPerTlpFollowTheSpec) {
    // Gen3+: STP token (4, carries the sequence number) + LCRC (4) + header + payload.
    EXPECT_EQ(tlp_wire_bytes(TlpKind::kMemWrite, 256, link(5)), 8U + 16U + 256U);
    EXPECT_EQ(tlp_wire_bytes(TlpKind::kMemRead, 0, link(5)), 8U + 16U);
    EXPECT_EQ(tlp_wire_bytes(TlpKind::kCompletion, 64, link(5)), 8U + 12U + 64U);
    // Gen1/2: STP(1) + sequence(2) + LCRC(4) + END(1).
    EXPECT_EQ(tlp_wire_bytes(TlpKind::kMemWrite, 128, link(2)), 8U + 16U + 128U);
    // 32-bit addressing uses 3DW request headers; ECRC adds 4 bytes.
    auto l = link(4);
    l.addr64 = false;
    l.ecrc = true;
    EXPECT_EQ(tlp_wire_bytes(TlpKind::kMemWrite, 256, l), 8U + 12U + 256U + 4U);
    // Gen6 Flit mode: no per-TLP framing or LCRC; DLLPs ride in the flit's DLP bytes.
    EXPECT_EQ(tlp_wire_bytes(TlpKind::kMemWrite, 256, link(6)), 16U + 256U);
    EXPECT_EQ(dllp_wire_bytes(link(6)), 0U);
    EXPECT_EQ(dllp_wire_bytes(link(3)), 8U);
    EXPECT_EQ(data_credits(256), 16U);
    EXPECT_EQ(data_credits(1), 1U);
}

TEST(Wire, RawRatesAfterEncodingAndSkp) {
    // Gen1 x1: 2.5 GT/s * 8/10 = 250 MB/s before SKP.
    EXPECT_NEAR(raw_gbps(link(1, 1)), 0.25 * 1180.0 / 1184.0, 1e-9);
    // Gen3 x16: 8 GT/s * 16 / 8 * 128/130 * 370/371.
    EXPECT_NEAR(raw_gbps(link(3)), 16.0 * 128.0 / 130.0 * 370.0 / 371.0, 1e-9);
    EXPECT_NEAR(raw_gbps(link(5)), 64.0 * 128.0 / 130.0 * 370.0 / 371.0, 1e-9);
    // Gen6 x16: 64 GT/s * 16 / 8, 236 of 256 flit bytes carry TLPs.
    EXPECT_NEAR(raw_gbps(link(6)), 128.0 * 236.0 / 256.0 * 740.0 / 741.0, 1e-9);
    // Lanes scale linearly.
    EXPECT_NEAR(raw_gbps(link(4, 4)) * 4, raw_gbps(link(4, 16)), 1e-9);
}

TEST(Wire, EfficiencyForGivenMpsAndCompletionSize) {
    EXPECT_NEAR(write_efficiency(link(5), 256).payload_fraction, 256.0 / 280.0, 1e-12);
    EXPECT_NEAR(write_efficiency(link(5, 16, 128), 128).payload_fraction, 128.0 / 152.0, 1e-12);
    EXPECT_NEAR(completion_efficiency(link(5), 64).payload_fraction, 64.0 / 84.0, 1e-12);
    EXPECT_NEAR(write_efficiency(link(5), 256).gbps, raw_gbps(link(5)) * 256.0 / 280.0, 1e-9);
    // Gen5 x16 posted writes of 256 bytes: about 57.4 GB/s of payload.
    EXPECT_NEAR(write_efficiency(link(5), 256).gbps, 57.45, 0.05);
}

TEST(Wire, DescribesTheLink) {
    EXPECT_EQ(describe_link(link(5)), "Gen5 x16 (32 GT/s, 128b/130b)");
    EXPECT_EQ(describe_link(link(2, 4)), "Gen2 x4 (5 GT/s, 8b/10b)");
    EXPECT_THROW(generation_spec(7), std::invalid_argument);
}

}  // namespace
}  // namespace dmasim::pcie
