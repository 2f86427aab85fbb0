// The plan keys of the cases that isolate mechanisms (pointer chase, access widths, compute
// beside a transfer, issue order, host buffer placement, setup-only, copies within one GPU,
// copy-engine count) and the pointer chase's chain.
#include <gtest/gtest.h>

#include <cstring>
#include <set>
#include <stdexcept>
#include <vector>

#include "chase.h"
#include "dmasim/core/error.h"
#include "spec.h"
#include "test_util.h"

namespace dmaprobe {
namespace {

using test::plan_case;

Options opts() {
    Options o;
    o.plan = "plan.txt";
    o.out = "out";
    return o;
}

CaseDecision decide(const std::string& line, const Options& o = opts()) {
    return decide_case(plan_case(line), 0, "plan.txt", o);
}

std::string error_of(const std::string& line) {
    try {
        decide(line);
    } catch (const dmasim::core::InputError& e) {
        return e.what();
    }
    return "";
}

const std::string kCommon = " repetitions=10 warmup=2";
const std::string kZc = "case scenario=z strategy=zero_copy stride=1 blocks=4 threads=256";

TEST(DmaprobeCases, EveryAccessWidthOfTheGpuIsAccepted) {
    for (int w : {1, 2, 4, 8, 16}) {
        const auto d = decide(kZc + " direction=d2h size_bytes=4096 access_bytes=" + std::to_string(w) + kCommon);
        EXPECT_EQ(d.spec.access_bytes, w);
    }
    EXPECT_NE(error_of(kZc + " direction=h2d size_bytes=4096 access_bytes=3" + kCommon).find("not 1, 2, 4, 8 or 16"),
              std::string::npos);
}

TEST(DmaprobeCases, ChaseNeedsItsMemoryAndHopsAndLoadsOnly) {
    const auto d = decide(kZc + " direction=h2d size_bytes=65536 access_bytes=8 pattern=chase memory=device hops=500" +
                          kCommon);
    EXPECT_TRUE(d.spec.chase);
    EXPECT_TRUE(d.spec.chase_device);
    EXPECT_EQ(d.spec.hops, 500);
    EXPECT_NE(error_of(kZc + " direction=h2d size_bytes=65536 access_bytes=8 pattern=chase hops=5" + kCommon).find("memory"),
              std::string::npos);
    EXPECT_NE(error_of(kZc + " direction=d2h size_bytes=65536 access_bytes=8 pattern=chase memory=host hops=5" + kCommon)
                  .find("direction"),
              std::string::npos);
    EXPECT_NE(error_of(kZc + " direction=h2d size_bytes=32 access_bytes=8 pattern=chase memory=host hops=5" + kCommon)
                  .find("64-byte node"),
              std::string::npos);
}

TEST(DmaprobeCases, ComputeBesideATransferCarriesItsKernel) {
    const auto d = decide("case scenario=d strategy=duplex direction=both size_bytes=4096 host_memory=pinned "
                          "compute_ns=30000000 compute_blocks=132 compute_threads=512 compute_bytes=1073741824" +
                          kCommon);
    EXPECT_EQ(d.spec.compute_ns, 30000000);
    EXPECT_EQ(d.spec.compute_blocks, 132);
    EXPECT_EQ(d.spec.compute_bytes, std::uint64_t{1} << 30);
    EXPECT_NE(error_of("case scenario=d strategy=duplex direction=both size_bytes=4096 host_memory=pageable "
                       "compute_ns=30000000 compute_blocks=132 compute_threads=512 compute_bytes=1073741824" +
                       kCommon)
                  .find("pinned"),
              std::string::npos);
    EXPECT_NE(error_of("case scenario=d strategy=duplex direction=both size_bytes=4096 host_memory=pinned compute_ns=5" +
                       kCommon)
                  .find("compute_blocks"),
              std::string::npos);
}

TEST(DmaprobeCases, IssueOrderIsDepthFirstUnlessTheCaseSaysBreadthFirst) {
    const std::string base = "case scenario=a strategy=async_overlap direction=both size_bytes=4096 streams=4";
    EXPECT_FALSE(decide(base + kCommon).spec.breadth_first);
    EXPECT_TRUE(decide(base + " issue=breadth_first" + kCommon).spec.breadth_first);
    EXPECT_NE(error_of(base + " issue=sideways" + kCommon).find("depth_first or breadth_first"), std::string::npos);
}

TEST(DmaprobeCases, HostBufferPlacementAndSetupOnly) {
    const auto off = decide("case scenario=o strategy=pinned direction=h2d size_bytes=4096 host_offset=64" + kCommon);
    EXPECT_EQ(off.spec.host_offset, 64U);
    EXPECT_TRUE(decide("case scenario=f strategy=pageable direction=d2h size_bytes=4096 host_fresh=1" + kCommon).spec.host_fresh);
    EXPECT_NE(error_of("case scenario=f strategy=pinned direction=d2h size_bytes=4096 host_fresh=1" + kCommon).find("pageable"),
              std::string::npos);
    EXPECT_TRUE(decide("case scenario=s strategy=pinned direction=h2d size_bytes=4096 setup_only=1" + kCommon).spec.setup_only);
    EXPECT_TRUE(decide("case scenario=s strategy=registered direction=h2d size_bytes=4096 reuses=1 setup_only=1" + kCommon)
                    .spec.setup_only);
}

TEST(DmaprobeCases, ACopyWithinOneGpuNeedsNoSecondGpu) {
    const auto d = decide("case scenario=l strategy=peer direction=h2d size_bytes=4096 peer_access=1 src_device=0 "
                          "dst_device=0 variant=local" +
                          kCommon);
    EXPECT_TRUE(d.spec.local_copy);
    MachineInfo one_gpu;
    one_gpu.device_count = 1;
    one_gpu.copy_engines = 3;
    EXPECT_EQ(machine_skip_reason(d.spec, one_gpu), "");
    const auto peer = decide("case scenario=p strategy=peer direction=h2d size_bytes=4096 peer_access=1 src_device=0 "
                             "dst_device=1" +
                             kCommon);
    EXPECT_NE(machine_skip_reason(peer.spec, one_gpu).find("two GPUs"), std::string::npos);
}

TEST(DmaprobeCases, ACaseForAnotherCopyEngineCountIsSkippedWithTheReason) {
    const auto d = decide("case scenario=a strategy=async_overlap direction=both size_bytes=4096 streams=4 copy_engines=1" +
                          kCommon);
    MachineInfo m;
    m.device_count = 1;
    m.copy_engines = 3;
    const std::string why = machine_skip_reason(d.spec, m);
    EXPECT_NE(why.find("1 copy engine(s)"), std::string::npos) << why;
    EXPECT_NE(why.find("has 3"), std::string::npos) << why;
    m.copy_engines = 1;
    EXPECT_EQ(machine_skip_reason(d.spec, m), "");
    EXPECT_NE(machine_conditions(d.spec).find("1 copy engine"), std::string::npos);
}

TEST(DmaprobeChase, TheChainIsOneCycleThroughEveryNode) {
    constexpr std::size_t kNodes = 1000;
    std::vector<unsigned char> buf(kNodes * kChaseNodeBytes, 0);
    ASSERT_EQ(build_chase(buf.data(), buf.size(), kChaseNodeBytes, 42), kNodes);
    std::set<std::uint64_t> seen;
    std::uint64_t off = 0;
    for (std::size_t h = 0; h < kNodes; ++h) {
        ASSERT_EQ(off % kChaseNodeBytes, 0U);
        ASSERT_LT(off, buf.size());
        seen.insert(off);
        std::memcpy(&off, buf.data() + off, sizeof off);
    }
    EXPECT_EQ(seen.size(), kNodes);  // every node once...
    EXPECT_EQ(off, 0U);              // ...and back to the start
    EXPECT_EQ(chase_end(buf.data(), static_cast<std::int64_t>(kNodes)), 0U);
    EXPECT_NE(chase_end(buf.data(), 1), 0U);
    // A run that continues from where the last stopped ends where one long run would.
    EXPECT_EQ(chase_end(buf.data(), 300, chase_end(buf.data(), 200)), chase_end(buf.data(), 500));
}

TEST(DmaprobeChase, TheSeedDecidesTheOrder) {
    std::vector<unsigned char> a(256 * kChaseNodeBytes), b(a.size()), c(a.size());
    build_chase(a.data(), a.size(), kChaseNodeBytes, 1);
    build_chase(b.data(), b.size(), kChaseNodeBytes, 1);
    build_chase(c.data(), c.size(), kChaseNodeBytes, 2);
    EXPECT_EQ(a, b);
    EXPECT_NE(a, c);
    // Consecutive hops mostly land far apart: a chase is not a stream.
    int neighbours = 0;
    std::uint64_t off = 0;
    for (int h = 0; h < 256; ++h) {
        std::uint64_t next = 0;
        std::memcpy(&next, a.data() + off, sizeof next);
        if (next == off + kChaseNodeBytes) ++neighbours;
        off = next;
    }
    EXPECT_LT(neighbours, 10);
    EXPECT_THROW(build_chase(a.data(), 16, kChaseNodeBytes, 1), std::invalid_argument);
}

}  // namespace
}  // namespace dmaprobe
