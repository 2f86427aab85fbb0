// Devices under one PCIe switch: peer-to-peer and capture-card DMA stay below the root complex.
#include <gtest/gtest.h>

#include "dmasim/sim/simulator.h"
#include "dmasim/topology/platform_file.h"

namespace dmasim::sim {
namespace {

constexpr std::uint64_t kMiB = 1 << 20;

Simulator& simulator() {
    static Simulator s(topology::load_platform("radar-switch", config::ModelParams{}), config::ModelParams{});
    return s;
}

std::uint64_t payload_on(const CaseResult& r, const std::string& label) {
    for (const auto& l : r.links) {
        if (l.label == label) return l.stats.payload_bytes;
    }
    throw std::runtime_error("no link " + label);
}

TEST(ThirdPartyDma, CardWritesGpuMemoryWithoutTouchingTheHost) {
    config::ModelParams p;
    const CaseResult r = simulator().run(p, CaseSpec{"third_party_dma", "h2d", 64 * kMiB, {}, {}});
    // The card writing, the card through pinned host memory, the GPU reading the card's window.
    ASSERT_EQ(r.rows.size(), 3U);
    EXPECT_EQ(r.rows[1].variant, "via_host");
    EXPECT_EQ(r.rows[2].variant, "gpu_reads_card");
    const double direct = r.rows[0].time_ps;
    const double via_host = r.rows[1].time_ps;
    // Under one switch the frame goes card -> switch -> GPU; only the completion semaphore
    // climbs to the root complex, and the card's descriptors (32 bytes a 4 KiB page) come down.
    const std::uint64_t descriptors = 64 * kMiB / p.card_dma.descriptor_bytes.value * p.card_dma.descriptor_size.value;
    EXPECT_EQ(payload_on(r, "fpga0->sw0"), 64 * kMiB + p.dma.semaphore_size.value);
    EXPECT_LT(payload_on(r, "sw0->rc0"), 64U);
    EXPECT_EQ(payload_on(r, "rc0->sw0"), descriptors);
    EXPECT_GE(r.host_memory_bytes, descriptors);
    EXPECT_LT(r.host_memory_bytes, descriptors + 64U);
    // Through the host it is two transfers, one after the other.
    EXPECT_GT(via_host, 1.8 * direct);
}

TEST(ThirdPartyDma, SmallBarApertureCostsARemapPerWindow) {
    config::ModelParams p;
    const double whole = simulator().run(p, CaseSpec{"third_party_dma", "h2d", 64 * kMiB, {}, {}}).time_ps;
    p.gpu.bar_aperture = core::Bytes{16 * kMiB};
    const CaseResult windows = simulator().run(p, CaseSpec{"third_party_dma", "h2d", 64 * kMiB, {}, {}});
    EXPECT_NE(windows.rows[0].note.find("4 aperture windows"), std::string::npos);
    // 3 remaps, 3 more copy launches and completions.
    EXPECT_GT(windows.time_ps - whole, 3.0 * static_cast<double>(p.gpu.bar_remap.ps));
}

}  // namespace
}  // namespace dmasim::sim
