// Peer-to-peer through the PCIe tree of a two-socket host (issue 15): pairs under one switch
// (PIX), on two root complexes of one socket (NODE) and on two sockets (SYS); what a root
// complex does with peer writes (root_complex.peer_write_size, p2p policies) and what the link
// between the sockets gives them (peer_bandwidth). One elaborated platform; each case loads its
// own variant of it (CaseSpec::platform), as a scenario's --set does.
#include <gtest/gtest.h>

#include <string>

#include "dmasim/core/error.h"
#include "dmasim/pcie/wire.h"
#include "dmasim/sim/simulator.h"
#include "dmasim/topology/platform_file.h"

namespace dmasim::sim {
namespace {

constexpr std::uint64_t kMiB = 1 << 20;

// gpu0 and gpu1 under sw0 on rc0; gpu2 under sw1 on rc1 (socket 0); gpu3 under sw2 on rc2
// (socket 1); a capture card on its own root port of rc1. `rc` is appended to every root
// complex, `rc1` to rc1 alone, `socket` to the link between the sockets.
std::string host(const std::string& rc, const std::string& rc1 = "", const std::string& socket = "") {
    return "name: two-sockets\nnodes:\n"
           "  - {name: cpu0, kind: cpu, socket: 0}\n  - {name: cpu1, kind: cpu, socket: 1}\n"
           "  - {name: rc0, kind: root_complex, socket: 0" + rc + "}\n"
           "  - {name: rc1, kind: root_complex, socket: 0" + rc + rc1 + "}\n"
           "  - {name: rc2, kind: root_complex, socket: 1" + rc + "}\n"
           "  - {name: sw0, kind: switch, socket: 0}\n  - {name: sw1, kind: switch, socket: 0}\n"
           "  - {name: sw2, kind: switch, socket: 1}\n"
           "  - {name: gpu0, kind: gpu, socket: 0}\n  - {name: gpu1, kind: gpu, socket: 0}\n"
           "  - {name: gpu2, kind: gpu, socket: 0}\n  - {name: gpu3, kind: gpu, socket: 1}\n"
           "  - {name: fpga0, kind: fpga, socket: 0}\n"
           "links:\n"
           "  - {a: cpu0, b: rc0, kind: internal}\n  - {a: cpu0, b: rc1, kind: internal}\n"
           "  - {a: cpu1, b: rc2, kind: internal}\n"
           "  - {a: rc0, b: rc1, kind: socket, bandwidth: 256GB/s, latency: 50ns}\n"
           "  - {a: rc0, b: rc2, kind: socket, bandwidth: 64GB/s, latency: 150ns" + socket + "}\n"
           "  - {a: rc0, b: sw0}\n  - {a: sw0, b: gpu0}\n  - {a: sw0, b: gpu1}\n"
           "  - {a: rc1, b: sw1}\n  - {a: sw1, b: gpu2}\n  - {a: rc1, b: fpga0}\n"
           "  - {a: rc2, b: sw2}\n  - {a: sw2, b: gpu3}\n";
}

config::ModelParams params() {
    config::ModelParams p;
    p.link.generation = 5;
    p.link.lanes = 16;
    return p;
}

Simulator& simulator() {
    static Simulator s(topology::parse_platform(host(""), "two-sockets.yaml", params()), params());
    return s;
}

CaseResult run(const topology::Platform& platform, const std::string& strategy, const std::string& dir, int src, int dst,
               const std::string& access, std::uint64_t bytes = 64 * kMiB) {
    config::StrategyOptions o;
    o.peer.access = access;
    o.peer.src_device = src;
    o.peer.dst_device = dst;
    CaseSpec spec{strategy, dir, bytes, o, {}, &platform};
    return simulator().run(params(), spec);
}

double gbps(const RowResult& r, std::uint64_t bytes) {
    return static_cast<double>(bytes) * r.directions / (r.time_ps * 1e-12) * 1e-9;
}

const RowResult& row(const CaseResult& r, const std::string& variant) {
    for (const auto& x : r.rows) {
        if (x.variant == variant) return x;
    }
    throw std::runtime_error("no row " + variant);
}

// The two-socket host with `keys` added to one node's own settings (`node` as host() writes it,
// e.g. "{name: fpga0, kind: fpga, socket: 0}"), and `rc1` to rc1's.
topology::Platform with_keys(const std::string& node, const std::string& keys, const std::string& rc1 = "") {
    std::string text = host("", rc1);
    text.replace(text.find(node), node.size(), node.substr(0, node.size() - 1) + keys + "}");
    return topology::parse_platform(text, "keys.yaml", params());
}

constexpr const char* kCard = "{name: fpga0, kind: fpga, socket: 0}";
constexpr const char* kGpu0 = "{name: gpu0, kind: gpu, socket: 0}";

TEST(PeerPaths, AnIntelRootComplexCutsPeerWritesIntoSmallerWrites) {
    const topology::Platform whole = topology::parse_platform(host(""), "a.yaml", params());
    const topology::Platform cut = topology::parse_platform(host(", peer_write_size: 64B"), "b.yaml", params());
    const double pix_whole = gbps(run(whole, "peer", "h2d", 0, 1, "on").rows.front(), 64 * kMiB);
    const double pix_cut = gbps(run(cut, "peer", "h2d", 0, 1, "on").rows.front(), 64 * kMiB);
    const double node_whole = gbps(run(whole, "peer", "h2d", 0, 2, "on").rows.front(), 64 * kMiB);
    const double node_cut = gbps(run(cut, "peer", "h2d", 0, 2, "on").rows.front(), 64 * kMiB);
    // Under one switch nothing changes: the switch passes the GPU's 256-byte writes on.
    EXPECT_NEAR(pix_cut, pix_whole, 0.005 * pix_whole);
    // Through the root complexes each 256-byte write leaves as four 64-byte ones, each with its
    // own header, framing and LCRC: the copy's rate falls as the wire's payload share does.
    config::LinkParams l = params().link;
    const double share_whole = 256.0 / pcie::tlp_wire_bytes(pcie::TlpKind::kMemWrite, 256, l);
    const double share_cut = 256.0 / (4.0 * pcie::tlp_wire_bytes(pcie::TlpKind::kMemWrite, 64, l));
    EXPECT_NEAR(node_cut / node_whole, share_cut / share_whole, 0.03);
    EXPECT_LT(node_cut, 0.85 * pix_cut);
}

TEST(PeerPaths, PixNodeAndSysPairsDifferAsTheHostsBridgesSay) {
    // The Intel host of the shipped dgx-h100: 64-byte peer writes, 22 GB/s of peer traffic across
    // the sockets (NCCL's SRP_QPI_BW).
    const topology::Platform intel =
        topology::parse_platform(host(", peer_write_size: 64B", "", ", peer_bandwidth: 22GB/s"), "intel.yaml", params());
    const double pix = gbps(run(intel, "peer", "h2d", 0, 1, "on").rows.front(), 64 * kMiB);
    const double node = gbps(run(intel, "peer", "h2d", 0, 2, "on").rows.front(), 64 * kMiB);
    const double sys = gbps(run(intel, "peer", "h2d", 0, 3, "on").rows.front(), 64 * kMiB);
    EXPECT_GT(pix, node * 1.15);
    EXPECT_GT(node, sys * 1.5);
    // Across the sockets the link's peer rate holds the copy, less what the copy's ends cost.
    EXPECT_LT(sys, 22.0);
    EXPECT_GT(sys, 0.95 * 22.0);
    // Both ways across the sockets, staging through host memory beats peer access there.
    const CaseResult both = run(intel, "peer", "both", 0, 3, "both");
    EXPECT_LT(gbps(row(both, "peer=on"), 64 * kMiB), gbps(row(both, "peer=off"), 64 * kMiB));
    // Both ways on one socket the root complexes' link takes in no more than the slower links
    // after it pass on: the case comes to rest (with nothing holding the rc0-rc1 link back it
    // queued without bound and never did).
    const CaseResult node_both = run(intel, "peer", "both", 0, 2, "on", 256 * kMiB);
    EXPECT_GT(gbps(node_both.rows.front(), 256 * kMiB), 1.8 * node);
}

TEST(PeerPaths, ARefusingRootComplexLeavesTheCardOnlyThePathThroughHost) {
    const topology::Platform open = topology::parse_platform(host(""), "open.yaml", params());
    const topology::Platform shut = topology::parse_platform(host("", ", p2p: refused"), "shut.yaml", params());
    const CaseResult ok = run(open, "third_party_dma", "h2d", 0, 0, "on", 4 * kMiB);
    const CaseResult refused = run(shut, "third_party_dma", "h2d", 0, 0, "on", 4 * kMiB);
    EXPECT_EQ(row(ok, "").status, "ok");
    EXPECT_EQ(row(refused, "").status, "refused");
    EXPECT_NE(row(refused, "").note.find("rc1 refuses peer-to-peer traffic"), std::string::npos);
    // The way through host memory does not cross a bridge port to port: unchanged.
    EXPECT_EQ(row(refused, "via_host").status, "ok");
    EXPECT_DOUBLE_EQ(row(refused, "via_host").time_ps, row(ok, "via_host").time_ps);
}

TEST(PeerPaths, AViaCpuBridgeIsNamedInThePeerRowAndCostsTheBounce) {
    const topology::Platform open = topology::parse_platform(host(""), "open.yaml", params());
    const topology::Platform bounce = topology::parse_platform(host("", ", p2p: via_cpu"), "bounce.yaml", params());
    const CaseResult a = run(open, "peer", "h2d", 0, 2, "on");
    const CaseResult b = run(bounce, "peer", "h2d", 0, 2, "on");
    const RowResult& straight = a.rows.front();
    const RowResult& bounced = b.rows.front();
    EXPECT_NE(bounced.note.find("bounced through host memory at rc1"), std::string::npos);
    EXPECT_EQ(straight.note.find("bounced"), std::string::npos);
    EXPECT_GT(bounced.time_ps, straight.time_ps);
}

// Issue 15 (the mapping thread's argument that going through host memory costs it two accesses
// per byte): each row carries the host memory traffic of its program.
TEST(PeerPaths, TheCardsRowsSayWhatHostMemoryServedThem) {
    const topology::Platform open = topology::parse_platform(host(""), "open.yaml", params());
    const std::uint64_t bytes = 4 * kMiB;
    const CaseResult r = run(open, "third_party_dma", "h2d", 0, 0, "on", bytes);
    const RowResult& direct = row(r, "");
    const RowResult& via = row(r, "via_host");
    ASSERT_TRUE(direct.host_bytes);
    ASSERT_TRUE(via.host_bytes);
    // Straight into the GPU: no data through host memory, only the card's descriptors (32 bytes a
    // 4 KiB page) and a semaphore.
    const std::uint64_t descriptors = bytes / 4096 * 32;
    EXPECT_EQ(direct.host_read_bytes, descriptors);
    EXPECT_LT(direct.host_written_bytes, 4096U);
    // Through host memory: the card's writes land there and the GPU's copy reads them back.
    EXPECT_GE(via.host_written_bytes, bytes);
    EXPECT_LT(via.host_written_bytes, bytes + 4096);
    EXPECT_GE(via.host_read_bytes, bytes + descriptors);
    EXPECT_LT(via.host_read_bytes, bytes + descriptors + 4096);
    // A peer copy staged through host memory: each piece written and read once.
    const CaseResult staged = run(open, "peer", "h2d", 0, 1, "off", 16 * kMiB);
    EXPECT_GE(row(staged, "peer=off").host_written_bytes, 16 * kMiB);
    EXPECT_GE(row(staged, "peer=off").host_read_bytes, 16 * kMiB);
    // The GPU copying out of the card's registered window reads the card's BAR: no data
    // through host memory either.
    const RowResult& reads = row(r, "gpu_reads_card");
    EXPECT_EQ(reads.status, "ok");
    ASSERT_TRUE(reads.host_bytes);
    EXPECT_LT(reads.host_read_bytes + reads.host_written_bytes, 4096U);
    // A refused row times nothing and says nothing about host memory.
    const topology::Platform shut = topology::parse_platform(host("", ", p2p: refused"), "shut.yaml", params());
    const CaseResult refused = run(shut, "third_party_dma", "h2d", 0, 0, "on", bytes);
    EXPECT_FALSE(row(refused, "").host_bytes);
    EXPECT_EQ(row(refused, "gpu_reads_card").status, "refused");
}

// Issue 15: the card's own DMA engine reads its scatter-gather list from host memory, a block of
// descriptors per read request (at most its MRRS), ahead of the data they describe. A block whose
// data takes less than a read's round trip leaves the card waiting for its next descriptors.
TEST(PeerPaths, TheCardsEngineReadsItsDescriptorsFromHostMemoryAheadOfTheirData) {
    const auto card = [&](const std::string& keys) { return with_keys(kCard, keys); };
    const std::uint64_t bytes = 4 * kMiB;
    const auto direct = [&](const topology::Platform& p) {
        return row(run(p, "third_party_dma", "h2d", 0, 0, "on", bytes), "");
    };
    const RowResult pages = direct(card(""));
    // One descriptor read per page would cost a round trip per 4 KiB: 16 per read (MRRS 512 B)
    // hide all but the first behind the data.
    const RowResult one_by_one = direct(card(", descriptors_per_fetch: 1, descriptor_bytes: 256B"));
    const RowResult contiguous = direct(card(", descriptor_bytes: 0B"));
    EXPECT_EQ(contiguous.host_read_bytes, 0U);
    EXPECT_EQ(one_by_one.host_read_bytes, bytes / 256 * 32);
    EXPECT_LT(gbps(one_by_one, bytes), 0.5 * gbps(pages, bytes));
    // With the list fetched ahead the card runs within 2 % of a card with no list at all.
    EXPECT_NEAR(gbps(pages, bytes), gbps(contiguous, bytes), 0.02 * gbps(contiguous, bytes));
    EXPECT_GT(pages.time_ps, contiguous.time_ps);
    // An endpoint's own keys are a card's engine's; a GPU has none of them.
    EXPECT_THROW(with_keys(kGpu0, ", descriptor_bytes: 4KiB"), core::InputError);
}

// Issue 15: a root complex that forwards peer writes but not peer reads (Intel client CPUs; AMD's
// before Zen): the card still writes into the GPU, the GPU cannot read the card's window.
TEST(PeerPaths, ARootComplexThatRefusesPeerReadsLeavesTheCardItsWrites) {
    const topology::Platform writes_only =
        topology::parse_platform(host("", ", p2p_reads: refused"), "writes-only.yaml", params());
    const CaseResult r = run(writes_only, "third_party_dma", "h2d", 0, 0, "on", 4 * kMiB);
    EXPECT_EQ(row(r, "").status, "ok");
    const RowResult& reads = row(r, "gpu_reads_card");
    EXPECT_EQ(reads.status, "refused");
    EXPECT_NE(reads.note.find("rc1 forwards peer writes but not peer reads"), std::string::npos) << reads.note;
    // A GPU's peer copy is written by its source: not refused.
    EXPECT_TRUE(topology::peer_path(writes_only, *writes_only.find("gpu0"), *writes_only.find("gpu2")).refusal.empty());
    // Only a root complex has the setting.
    EXPECT_FALSE(writes_only.node(*writes_only.find("rc1")).peer_reads);
    EXPECT_TRUE(writes_only.node(*writes_only.find("rc0")).peer_reads);
    EXPECT_THROW(with_keys("{name: sw0, kind: switch, socket: 0}", ", p2p_reads: refused"), core::InputError);
}

// Issue 15: the card reading the GPU's memory (third_party_dma d2h) with its own read requests,
// each at most its MRRS, at most read_requests outstanding; a root complex that forwards writes
// only refuses the card's reads and lets the GPU write into the card's window.
TEST(PeerPaths, TheCardReadsGpuMemoryWithItsOwnReadRequests) {
    const auto card = [&](const std::string& rc1, const std::string& keys) { return with_keys(kCard, keys, rc1); };
    const std::uint64_t bytes = 4 * kMiB;
    const CaseResult open = run(card("", ""), "third_party_dma", "d2h", 0, 0, "on", bytes);
    EXPECT_EQ(row(open, "").status, "ok");
    EXPECT_NE(row(open, "").note.find("card reads GPU memory through the BAR"), std::string::npos) << row(open, "").note;
    EXPECT_EQ(row(open, "via_host").status, "ok");
    EXPECT_EQ(row(open, "gpu_writes_card").status, "ok");
    // Through host memory: the GPU's copy writes it there and the card reads it back.
    EXPECT_GE(row(open, "via_host").host_written_bytes, bytes);
    EXPECT_GE(row(open, "via_host").host_read_bytes, bytes);
    // One read in flight: each 512-byte request waits for its completions' round trip.
    const CaseResult one = run(card("", ", read_requests: 1"), "third_party_dma", "d2h", 0, 0, "on", bytes);
    EXPECT_LT(gbps(row(one, ""), bytes), 0.25 * gbps(row(open, ""), bytes));
    // Writes only at rc1: the card cannot read the GPU; the GPU can still write into the card.
    const CaseResult writes_only = run(card(", p2p_reads: refused", ""), "third_party_dma", "d2h", 0, 0, "on", bytes);
    EXPECT_EQ(row(writes_only, "").status, "refused");
    EXPECT_NE(row(writes_only, "").note.find("the card cannot read the GPU: rc1 forwards peer writes but not peer reads"),
              std::string::npos)
        << row(writes_only, "").note;
    EXPECT_EQ(row(writes_only, "gpu_writes_card").status, "ok");
}

// Issue 15: a GPU whose BAR1 is smaller than a buffer either maps it a window at a time or refuses
// it, as its platform node says (bar_windows); the node's own keys hold for that GPU alone.
TEST(PeerPaths, AGpuNodeSaysWhetherABufferLargerThanItsBarIsRemappedOrRefused) {
    const auto with_gpu0 = [&](const std::string& keys) { return with_keys(kGpu0, keys); };
    const std::uint64_t bytes = 4 * kMiB;
    const topology::Platform remaps = with_gpu0(", bar_aperture: 1MiB, bar_remap: 20us");
    const topology::Platform refuses = with_gpu0(", bar_aperture: 1MiB, bar_windows: false");
    const CaseResult remapped = run(remaps, "third_party_dma", "h2d", 0, 0, "on", bytes);
    const RowResult& windows = row(remapped, "");
    EXPECT_EQ(windows.status, "ok");
    EXPECT_NE(windows.note.find("in 4 aperture windows"), std::string::npos) << windows.note;
    const CaseResult r = run(refuses, "third_party_dma", "h2d", 0, 0, "on", bytes);
    EXPECT_EQ(row(r, "").status, "refused");
    EXPECT_NE(row(r, "").note.find("4MiB does not fit gpu0's BAR1 aperture of 1MiB"), std::string::npos) << row(r, "").note;
    EXPECT_EQ(row(r, "via_host").status, "ok");
    // A buffer that fits goes either way.
    EXPECT_EQ(row(run(refuses, "third_party_dma", "h2d", 0, 0, "on", kMiB), "").status, "ok");
    // Three remaps of 20 us between the four windows, and each window a transfer of its own (the
    // card's start and its last writes' way to the GPU again: a few us each).
    const CaseResult at_once = run(with_gpu0(""), "third_party_dma", "h2d", 0, 0, "on", bytes);
    const RowResult& whole = row(at_once, "");
    EXPECT_GE(windows.time_ps - whole.time_ps, 3 * 20e6);
    EXPECT_LT(windows.time_ps - whole.time_ps, 3 * 20e6 + 3 * 10e6);
    // A GPU node takes only its BAR's keys.
    EXPECT_THROW(with_gpu0(", sms: 80"), core::InputError);
}

// Issue 15: the CPU copying out of the card's memory window mapped into user space (the radar
// thread's memcpy from the mapping): uncached loads to the card, one at a time.
TEST(PeerPaths, TheCpuReadsTheCardsWindowOneUncachedLoadAtATime) {
    const topology::Platform open = topology::parse_platform(host(""), "open.yaml", params());
    config::ModelParams p = params();
    const auto read = [&](std::uint64_t load) {
        p.cpu.mmio_read_bytes = core::Bytes{load};
        config::StrategyOptions o;
        o.cpu_mapped.target = "card";
        return simulator().run(p, CaseSpec{"cpu_mapped", "d2h", 256 * 1024, o, {}, &open});
    };
    const CaseResult wide = read(64);
    const CaseResult narrow = read(16);
    // Four times the loads, each a round trip: about four times as long.
    EXPECT_NEAR(narrow.time_ps / wide.time_ps, 4.0, 0.2);
    EXPECT_NE(wide.rows.front().note.find("from the card's memory window"), std::string::npos) << wide.rows.front().note;
    // The loads go to the card, not to a GPU.
    std::uint64_t to_card = 0, to_gpu = 0;
    for (const auto& l : wide.links) {
        if (l.label == "rc1->fpga0") to_card = l.stats.tlps;
        if (l.label == "sw0->gpu0") to_gpu = l.stats.tlps;
    }
    EXPECT_GE(to_card, 256U * 1024 / 64);
    EXPECT_EQ(to_gpu, 0U);
}

}  // namespace
}  // namespace dmasim::sim
