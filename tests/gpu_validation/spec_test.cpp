#include "spec.h"

#include <gtest/gtest.h>

#include <cstring>
#include <set>
#include <stdexcept>
#include <vector>

#include "chase.h"
#include "dmasim/core/error.h"
#include "dmasim/core/limits.h"
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

CaseDecision decide(const std::string& line, const Options& o = opts(), std::size_t index = 0) {
    return decide_case(plan_case(line), index, "plan.txt", o);
}

// The message of the InputError that deciding `line` throws ("" if none).
std::string error_of(const std::string& line, const Options& o = opts()) {
    try {
        decide(line, o, 2);
    } catch (const dmasim::core::InputError& e) {
        return e.what();
    }
    return "";
}

const std::string kCommon = " repetitions=10 warmup=2";

TEST(DmaprobeSpec, PinnedCaseRuns) {
    const auto d = decide("case scenario=s strategy=pinned direction=h2d size_bytes=4096" + kCommon + " variant=v1");
    EXPECT_EQ(d.action, CaseAction::run);
    EXPECT_EQ(d.spec.scenario, "s");
    EXPECT_EQ(d.spec.strategy, Strategy::pinned);
    EXPECT_EQ(d.spec.direction, Direction::h2d);
    EXPECT_EQ(d.spec.size_bytes, 4096U);
    EXPECT_EQ(d.spec.repetitions, 10);
    EXPECT_EQ(d.spec.warmup, 2);
    EXPECT_FALSE(d.spec.repetitions_fixed);
    EXPECT_EQ(d.spec.variant, "v1");
    EXPECT_EQ(d.spec.directions(), 1);
    EXPECT_EQ(d.spec.label(), "pinned/h2d 4KiB");
}

TEST(DmaprobeSpec, EveryRunnableStrategyParsesItsKeys) {
    auto reg = decide("case scenario=s strategy=registered direction=d2h size_bytes=64 reuses=8" + kCommon);
    EXPECT_EQ(reg.spec.reuses, 8);

    auto dup = decide("case scenario=s strategy=duplex direction=both size_bytes=64 host_memory=pageable" + kCommon);
    EXPECT_EQ(dup.spec.host_memory, HostMemory::pageable);
    EXPECT_EQ(dup.spec.directions(), 2);

    auto as = decide("case scenario=s strategy=async_overlap direction=both size_bytes=64 streams=4 kernel_ns=1000" + kCommon);
    EXPECT_EQ(as.spec.streams, 4);
    EXPECT_EQ(as.spec.kernel_ns, 1000);
    auto as0 = decide("case scenario=s strategy=async_overlap direction=h2d size_bytes=64 streams=2" + kCommon);
    EXPECT_EQ(as0.spec.kernel_ns, 0);

    auto zc = decide("case scenario=s strategy=zero_copy direction=both size_bytes=64 access_bytes=16 stride=2 blocks=3 threads=128" + kCommon);
    EXPECT_EQ(zc.spec.access_bytes, 16);
    EXPECT_EQ(zc.spec.stride, 2);
    EXPECT_EQ(zc.spec.blocks, 3);
    EXPECT_EQ(zc.spec.threads, 128);

    auto peer = decide("case scenario=s strategy=peer direction=both size_bytes=64 peer_access=0 src_device=1 dst_device=0" + kCommon);
    EXPECT_FALSE(peer.spec.peer_access);
    EXPECT_EQ(peer.spec.src_device, 1);
    EXPECT_EQ(peer.spec.dst_device, 0);

    auto per = decide("case scenario=radar strategy=periodic direction=h2d size_bytes=4194304 period_ns=8000000 frames=500 via=pinned" + kCommon);
    EXPECT_EQ(per.action, CaseAction::run);
    EXPECT_EQ(per.spec.period_ns, 8000000);
    EXPECT_EQ(per.spec.frames, 500);
    EXPECT_EQ(per.spec.deadline_ns, 8000000);  // defaults to the period
    EXPECT_EQ(per.spec.host_memory, HostMemory::pinned);
    EXPECT_EQ(per.spec.repetitions, 500);      // frames, not repetitions
    EXPECT_TRUE(per.spec.repetitions_fixed);

    auto per2 = decide("case scenario=radar strategy=periodic direction=d2h size_bytes=64 period_ns=1000 deadline_ns=500 frames=5 host_memory=pageable kernel_ns=100" + kCommon);
    EXPECT_EQ(per2.spec.deadline_ns, 500);
    EXPECT_EQ(per2.spec.host_memory, HostMemory::pageable);
    EXPECT_EQ(per2.spec.kernel_ns, 100);
}

TEST(DmaprobeSpec, MissingKeysNameTheCaseAndTheKey) {
    const std::string e = error_of("case scenario=radar strategy=periodic direction=h2d size_bytes=64 via=pinned frames=3" + kCommon);
    EXPECT_NE(e.find("plan.txt case 3 (scenario radar)"), std::string::npos) << e;
    EXPECT_NE(e.find("key 'period_ns'"), std::string::npos) << e;
    EXPECT_NE(e.find("missing"), std::string::npos) << e;

    EXPECT_NE(error_of("case strategy=pinned direction=h2d size_bytes=64" + kCommon).find("key 'scenario'"), std::string::npos);
    EXPECT_NE(error_of("case scenario=s direction=h2d size_bytes=64" + kCommon).find("key 'strategy'"), std::string::npos);
    EXPECT_NE(error_of("case scenario=s strategy=pinned size_bytes=64" + kCommon).find("key 'direction'"), std::string::npos);
    EXPECT_NE(error_of("case scenario=s strategy=pinned direction=h2d" + kCommon).find("key 'size_bytes'"), std::string::npos);
    EXPECT_NE(error_of("case scenario=s strategy=pinned direction=h2d size_bytes=64 warmup=1").find("key 'repetitions'"), std::string::npos);
    EXPECT_NE(error_of("case scenario=s strategy=pinned direction=h2d size_bytes=64 repetitions=1").find("key 'warmup'"), std::string::npos);
    EXPECT_NE(error_of("case scenario=s strategy=registered direction=h2d size_bytes=64" + kCommon).find("key 'reuses'"), std::string::npos);
    EXPECT_NE(error_of("case scenario=s strategy=duplex direction=both size_bytes=64" + kCommon).find("key 'host_memory'"), std::string::npos);
    EXPECT_NE(error_of("case scenario=s strategy=async_overlap direction=both size_bytes=64" + kCommon).find("key 'streams'"), std::string::npos);
    EXPECT_NE(error_of("case scenario=s strategy=zero_copy direction=h2d size_bytes=64 access_bytes=4 stride=1 blocks=1" + kCommon).find("key 'threads'"), std::string::npos);
    EXPECT_NE(error_of("case scenario=s strategy=peer direction=h2d size_bytes=64" + kCommon).find("key 'peer_access'"), std::string::npos);
    EXPECT_NE(error_of("case scenario=s strategy=periodic direction=h2d size_bytes=64 period_ns=10 frames=2" + kCommon).find("key 'via'"), std::string::npos);
}

TEST(DmaprobeSpec, BadValuesAreClearErrors) {
    EXPECT_NE(error_of("case scenario=s strategy=teleport direction=h2d size_bytes=64" + kCommon).find("unknown strategy 'teleport'"), std::string::npos);
    EXPECT_NE(error_of("case scenario=s strategy=pinned direction=up size_bytes=64" + kCommon).find("'up' is not one of h2d, d2h, both"), std::string::npos);
    EXPECT_NE(error_of("case scenario=s strategy=pinned direction=h2d size_bytes=4KiB" + kCommon).find("'4KiB' is not an integer"), std::string::npos);
    EXPECT_NE(error_of("case scenario=s strategy=pinned direction=h2d size_bytes=0" + kCommon).find("out of range"), std::string::npos);
    EXPECT_NE(error_of("case scenario=s strategy=pinned direction=both size_bytes=64" + kCommon).find("strategy duplex"), std::string::npos);
    EXPECT_NE(error_of("case scenario=s strategy=duplex direction=h2d size_bytes=64 host_memory=pinned" + kCommon).find("both directions"), std::string::npos);
    EXPECT_NE(error_of("case scenario=s strategy=duplex direction=both size_bytes=64 host_memory=zero_copy" + kCommon).find("not one of pinned, pageable"), std::string::npos);
    EXPECT_NE(error_of("case scenario=s strategy=zero_copy direction=h2d size_bytes=64 access_bytes=3 stride=1 blocks=1 threads=32" + kCommon).find("not 1, 2, 4, 8 or 16"), std::string::npos);
    EXPECT_NE(error_of("case scenario=s strategy=zero_copy direction=h2d size_bytes=66 access_bytes=4 stride=1 blocks=1 threads=32" + kCommon).find("not a multiple of access_bytes=4"), std::string::npos);
    EXPECT_NE(error_of("case scenario=s strategy=zero_copy direction=h2d size_bytes=64 access_bytes=4 stride=1 blocks=1 threads=2048" + kCommon).find("key 'threads'"), std::string::npos);
    EXPECT_NE(error_of("case scenario=s strategy=peer direction=d2h size_bytes=64 peer_access=1" + kCommon).find("one way"), std::string::npos);
    EXPECT_NE(error_of("case scenario=s strategy=peer direction=h2d size_bytes=64 peer_access=2" + kCommon).find("key 'peer_access'"), std::string::npos);
    // --device naming the plan's destination leaves a peer copy with one GPU at both ends.
    Options dev1 = opts();
    dev1.device = 1;
    EXPECT_NE(error_of("case scenario=s strategy=peer direction=h2d size_bytes=64 peer_access=1 src_device=0 dst_device=1" + kCommon, dev1).find("same GPU"), std::string::npos);
    // The plan's own src = dst is a copy within one GPU, which goes one way with access on.
    EXPECT_NE(error_of("case scenario=s strategy=peer direction=both size_bytes=64 peer_access=1 src_device=1 dst_device=1" + kCommon).find("within one GPU"), std::string::npos);
    EXPECT_NE(error_of("case scenario=s strategy=periodic direction=both size_bytes=64 period_ns=10 frames=2 via=pinned" + kCommon).find("h2d or d2h"), std::string::npos);
    EXPECT_NE(error_of("case scenario=s strategy=pinned direction=h2d size_bytes=64 link_generation=9" + kCommon).find("key 'link_generation'"), std::string::npos);
}

// dmaprobe's limits are the ones dmasim validates scenarios against (dmasim/core/limits.h):
// `dmasim plan` used to write sizes and counts dmaprobe refused (issue 11). At a limit a case
// runs; one step past it is refused with the key named.
TEST(DmaprobeSpec, LimitsAreTheScenarioLimits) {
    namespace lim = dmasim::core::limits;
    const std::string pinned = "case scenario=s strategy=pinned direction=h2d size_bytes=";
    EXPECT_EQ(error_of(pinned + std::to_string(lim::kMaxCopyBytes) + kCommon), "");
    EXPECT_NE(error_of(pinned + std::to_string(lim::kMaxCopyBytes + 1) + kCommon).find("key 'size_bytes'"), std::string::npos);
    EXPECT_EQ(error_of(pinned + "64 repetitions=1000000 warmup=1000000"), "");
    EXPECT_NE(error_of(pinned + "64 repetitions=1000001 warmup=0").find("key 'repetitions'"), std::string::npos);
    EXPECT_NE(error_of(pinned + "64 repetitions=1 warmup=1000001").find("key 'warmup'"), std::string::npos);

    const std::string async = "case scenario=s strategy=async_overlap direction=both";
    EXPECT_EQ(error_of(async + " size_bytes=64 streams=64" + kCommon), "");
    EXPECT_NE(error_of(async + " size_bytes=4096 streams=65" + kCommon).find("key 'streams'"), std::string::npos);
    // A stream without a byte of its own: dmasim refuses the scenario, and so does dmaprobe.
    EXPECT_NE(error_of(async + " size_bytes=63 streams=64" + kCommon).find("key 'size_bytes'"), std::string::npos);

    const std::string frames = "case scenario=s strategy=periodic direction=h2d via=pinned";
    EXPECT_EQ(error_of(frames + " size_bytes=1024 period_ns=36000000 frames=100000" + kCommon), "");
    EXPECT_NE(error_of(frames + " size_bytes=1024 period_ns=1000 frames=100001" + kCommon).find("key 'frames'"), std::string::npos);
    // An hour of frames, and 128 GiB in one case, at most.
    EXPECT_NE(error_of(frames + " size_bytes=1024 period_ns=36000001 frames=100000" + kCommon).find("key 'frames'"), std::string::npos);
    EXPECT_NE(error_of(frames + " size_bytes=67108864 period_ns=1000 frames=2049" + kCommon).find("key 'frames'"), std::string::npos);

    EXPECT_NE(error_of("case scenario=s strategy=registered direction=h2d size_bytes=64 reuses=1000001" + kCommon).find("key 'reuses'"),
              std::string::npos);
    EXPECT_EQ(kChaseNodeBytes, lim::kChaseNodeBytes);
}

TEST(DmaprobeSpec, UnknownKeysAreIgnored) {
    const auto d = decide("case scenario=s strategy=pinned direction=h2d size_bytes=64 future_key=42" + kCommon);
    EXPECT_EQ(d.action, CaseAction::run);
}

TEST(DmaprobeSpec, HwSkipAndUnsupportedStrategiesAreSkippedWithReasons) {
    const auto fpga = decide("case scenario=f strategy=third_party_dma direction=h2d size_bytes=64 hw_skip=needs%20a%20capture%20card");
    EXPECT_EQ(fpga.action, CaseAction::skip);
    EXPECT_EQ(fpga.reason, "hw_skip: needs a capture card");

    // hw_skip on a runnable strategy: its strategy keys are not required.
    const auto hs = decide("case scenario=f strategy=zero_copy direction=h2d size_bytes=64 hw_skip=gen6");
    EXPECT_EQ(hs.action, CaseAction::skip);

    const auto tp = decide("case scenario=f strategy=third_party_dma direction=h2d size_bytes=64");
    EXPECT_EQ(tp.action, CaseAction::skip);
    EXPECT_NE(tp.reason.find("capture card"), std::string::npos);
    const auto cm = decide("case scenario=f strategy=cpu_mapped direction=d2h size_bytes=64");
    EXPECT_EQ(cm.action, CaseAction::skip);
    EXPECT_NE(cm.reason.find("BAR"), std::string::npos);
}

TEST(DmaprobeSpec, OptionsFilterAndOverride) {
    Options o = opts();
    o.only = "pageable";
    EXPECT_EQ(decide("case scenario=s strategy=pinned direction=h2d size_bytes=64" + kCommon, o).action, CaseAction::filter);
    EXPECT_EQ(decide("case scenario=s strategy=pageable direction=h2d size_bytes=64" + kCommon, o).action, CaseAction::run);
    // Filtered cases are still checked: a broken plan is an error whatever the filter.
    EXPECT_NE(error_of("case scenario=s strategy=registered direction=h2d size_bytes=64" + kCommon, o).find("reuses"), std::string::npos);

    Options m = opts();
    m.max_size = 1024;
    const auto big = decide("case scenario=s strategy=pinned direction=h2d size_bytes=4096" + kCommon, m);
    EXPECT_EQ(big.action, CaseAction::filter);
    EXPECT_NE(big.reason.find("--max-size"), std::string::npos);
    EXPECT_EQ(decide("case scenario=s strategy=pinned direction=h2d size_bytes=1024" + kCommon, m).action, CaseAction::run);

    Options r = opts();
    r.repetitions = 3;
    r.warmup = 0;
    const auto d = decide("case scenario=s strategy=pinned direction=h2d size_bytes=64 repetitions=50 warmup=5", r);
    EXPECT_EQ(d.spec.repetitions, 3);
    EXPECT_EQ(d.spec.warmup, 0);
    EXPECT_TRUE(d.spec.repetitions_fixed);
    // With --repetitions/--warmup, the plan need not carry them.
    EXPECT_EQ(decide("case scenario=s strategy=pinned direction=h2d size_bytes=64", r).action, CaseAction::run);

    Options p = opts();
    p.device = 2;
    p.peer_device = 3;
    const auto peer = decide("case scenario=s strategy=peer direction=h2d size_bytes=64 peer_access=1 src_device=0 dst_device=1" + kCommon, p);
    EXPECT_EQ(peer.spec.src_device, 2);
    EXPECT_EQ(peer.spec.dst_device, 3);
}

MachineInfo h100_gen5() {
    MachineInfo m;
    m.device_count = 1;
    m.link_generation = 5;
    m.link_lanes = 16;
    m.link_source = "sysfs";
    m.peer_capable = {{false}};
    return m;
}

// `dmasim plan` names every case's platform and the link that platform gives the GPU: a what-if
// of another generation is skipped on this GPU, not measured as if it were that link.
TEST(DmaprobeSpec, APlatformsLinkOrPeerRouteThatDiffersSkipsTheCase) {
    const std::string gen3 = "case scenario=v100 strategy=pinned direction=h2d size_bytes=64 platform=v100-gen3 "
                             "link_generation=3 link_lanes=16 link_from=platform" + kCommon;
    const auto v100 = decide(gen3);
    EXPECT_EQ(v100.action, CaseAction::run);
    const std::string r = machine_skip_reason(v100.spec, h100_gen5());
    EXPECT_NE(r.find("platform v100-gen3 gives GPU 0 PCIe Gen3 x16; GPU 0's link runs at Gen5 x16"), std::string::npos) << r;
    EXPECT_NE(machine_conditions(v100.spec).find("(platform v100-gen3)"), std::string::npos);
    const auto h100 = decide("case scenario=h strategy=pinned direction=h2d size_bytes=64 platform=h100-sxm "
                             "link_generation=5 link_lanes=16 link_from=platform" + kCommon);
    EXPECT_EQ(machine_skip_reason(h100.spec, h100_gen5()), "");
    // A link the machine does not show: a platform's link runs (most cases carry one), a link the
    // scenario set on purpose must be confirmed.
    MachineInfo unknown = h100_gen5();
    unknown.link_generation = unknown.link_lanes = -1;
    EXPECT_EQ(machine_skip_reason(h100.spec, unknown), "");
    const auto set = decide("case scenario=s strategy=pinned direction=h2d size_bytes=64 link_generation=5 link_lanes=16" + kCommon);
    EXPECT_NE(machine_skip_reason(set.spec, unknown).find("cannot be confirmed"), std::string::npos);
    EXPECT_THROW(decide("case scenario=s strategy=pinned direction=h2d size_bytes=64 link_from=nowhere" + kCommon),
                 dmasim::core::InputError);

    // Two GPUs joined by NVLink: a peer case modelled under a PCIe switch is not this path.
    MachineInfo h200 = h100_gen5();
    h200.device_count = 2;
    h200.peer_capable = {{false, true}, {true, false}};
    h200.routes = {{"X", "NV18"}, {"NV18", "X"}};
    const std::string peer = "case scenario=p strategy=peer direction=h2d size_bytes=64 peer_access=1 src_device=0 "
                             "dst_device=1 platform=P link_generation=5 link_lanes=16 link_from=platform peer_route=";
    const auto pix = decide(peer + "PIX" + kCommon);
    const std::string why = machine_skip_reason(pix.spec, h200);
    EXPECT_NE(why.find("platform P joins GPUs 0 and 1 by PIX; this machine by NV18"), std::string::npos) << why;
    EXPECT_EQ(machine_skip_reason(decide(peer + "NV18" + kCommon).spec, h200), "");
    h200.routes.clear();  // nvidia-smi not there: the pair is not refused for it
    EXPECT_EQ(machine_skip_reason(pix.spec, h200), "");
}

TEST(DmaprobeSpec, LinkMismatchSkipsTheCase) {
    const auto same = decide("case scenario=s strategy=pinned direction=h2d size_bytes=64 link_generation=5 link_lanes=16" + kCommon);
    EXPECT_EQ(machine_skip_reason(same.spec, h100_gen5()), "");

    const auto gen6 = decide("case scenario=s strategy=pinned direction=h2d size_bytes=64 link_generation=6 link_lanes=16" + kCommon);
    const std::string r = machine_skip_reason(gen6.spec, h100_gen5());
    EXPECT_NE(r.find("PCIe Gen6 x16"), std::string::npos) << r;
    EXPECT_NE(r.find("runs at Gen5 x16"), std::string::npos) << r;

    const auto x8 = decide("case scenario=s strategy=pinned direction=h2d size_bytes=64 link_lanes=8" + kCommon);
    EXPECT_NE(machine_skip_reason(x8.spec, h100_gen5()).find("x8"), std::string::npos);

    MachineInfo unknown = h100_gen5();
    unknown.link_generation = -1;
    unknown.link_lanes = -1;
    unknown.link_source = "unknown";
    EXPECT_NE(machine_skip_reason(same.spec, unknown).find("could not be read"), std::string::npos);
    // A case without link keys runs whatever the link.
    const auto plain = decide("case scenario=s strategy=pinned direction=h2d size_bytes=64" + kCommon);
    EXPECT_EQ(machine_skip_reason(plain.spec, unknown), "");
}

TEST(DmaprobeSpec, PeerNeedsTwoCapableGpus) {
    const auto peer = decide("case scenario=s strategy=peer direction=h2d size_bytes=64 peer_access=1" + kCommon);
    EXPECT_EQ(machine_skip_reason(peer.spec, h100_gen5()), "peer needs two GPUs; this machine has 1");

    MachineInfo two = h100_gen5();
    two.device_count = 2;
    two.peer_capable = {{false, true}, {true, false}};
    EXPECT_EQ(resolve_peer_destination(peer.spec, 2), 1);
    EXPECT_EQ(machine_skip_reason(peer.spec, two), "");

    two.peer_capable = {{false, false}, {false, false}};
    EXPECT_NE(machine_skip_reason(peer.spec, two).find("cannot access each other as peers"), std::string::npos);
    // Without peer access the runtime stages through host memory: capability does not matter.
    const auto staged = decide("case scenario=s strategy=peer direction=both size_bytes=64 peer_access=0" + kCommon);
    EXPECT_EQ(machine_skip_reason(staged.spec, two), "");

    const auto far = decide("case scenario=s strategy=peer direction=h2d size_bytes=64 peer_access=0 dst_device=5" + kCommon);
    EXPECT_NE(machine_skip_reason(far.spec, two).find("GPU 5 does not exist"), std::string::npos);
}

TEST(DmaprobeSpec, ListConditions) {
    const auto gen = decide("case scenario=s strategy=pinned direction=h2d size_bytes=64 link_generation=4" + kCommon);
    EXPECT_EQ(machine_conditions(gen.spec), "needs the GPU link to run at PCIe Gen4");
    const auto peer = decide("case scenario=s strategy=peer direction=h2d size_bytes=64 peer_access=1" + kCommon);
    EXPECT_NE(machine_conditions(peer.spec).find("two GPUs"), std::string::npos);
    const auto plain = decide("case scenario=s strategy=pinned direction=h2d size_bytes=64" + kCommon);
    EXPECT_EQ(machine_conditions(plain.spec), "");
}

TEST(DmaprobeSpec, StrategyNamesRoundTrip) {
    for (const char* name : {"pageable", "pinned", "registered", "async_overlap", "duplex", "zero_copy", "peer",
                             "third_party_dma", "cpu_mapped", "periodic"}) {
        const auto s = strategy_from_name(name);
        ASSERT_TRUE(s.has_value()) << name;
        EXPECT_STREQ(to_string(*s), name);
    }
    EXPECT_FALSE(strategy_from_name("PINNED"));
    EXPECT_FALSE(harness_can_run(Strategy::third_party_dma));
    EXPECT_FALSE(harness_can_run(Strategy::cpu_mapped));
    EXPECT_TRUE(harness_can_run(Strategy::periodic));
}

// The cases that isolate mechanisms (pointer chase, access widths, compute beside a transfer,
// issue order, host buffer placement, setup-only, copies within one GPU, copy-engine count).
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

TEST(DmaprobeCases, StoresBesideAreForAChaseThroughHostMemory) {
    const std::string chase = kZc + " direction=h2d size_bytes=65536 access_bytes=8 pattern=chase hops=5";
    EXPECT_EQ(decide(chase + " memory=host" + kCommon).spec.stores_beside, 0);
    EXPECT_EQ(decide(chase + " memory=host stores_beside=264" + kCommon).spec.stores_beside, 264);
    EXPECT_NE(error_of(chase + " memory=device stores_beside=264" + kCommon).find("stores_beside"), std::string::npos);
    EXPECT_NE(error_of(chase + " memory=host stores_beside=5000" + kCommon).find("stores_beside"), std::string::npos);
    EXPECT_NE(error_of(kZc + " direction=d2h size_bytes=4096 access_bytes=4 stores_beside=8" + kCommon).find("stores_beside"),
              std::string::npos);
}

TEST(DmaprobeCases, ACopyBesideAZeroCopyKernelIsEitherDirectionAndAlone) {
    const auto none = decide(kZc + " direction=d2h size_bytes=4096 access_bytes=4" + kCommon);
    EXPECT_FALSE(none.spec.has_copy_beside);
    const auto up = decide(kZc + " direction=d2h size_bytes=4096 access_bytes=4 copy_beside=h2d" + kCommon);
    EXPECT_TRUE(up.spec.has_copy_beside);
    EXPECT_EQ(up.spec.copy_beside, dmaprobe::Direction::h2d);
    EXPECT_EQ(decide(kZc + " direction=h2d size_bytes=4096 access_bytes=4 copy_beside=d2h" + kCommon).spec.copy_beside,
              dmaprobe::Direction::d2h);
    EXPECT_NE(error_of(kZc + " direction=d2h size_bytes=4096 access_bytes=4 copy_beside=both" + kCommon).find("copy_beside"),
              std::string::npos);
    // Beside a chase through host memory (what a load waits beside a copy), within the hops the
    // model simulates with every TLP of the copy; not beside a chase through GPU memory, nor with
    // stores beside it too.
    const std::string host_chase = kZc + " direction=h2d size_bytes=65536 access_bytes=8 pattern=chase memory=host";
    EXPECT_EQ(decide(host_chase + " hops=5 copy_beside=d2h" + kCommon).spec.copy_beside, dmaprobe::Direction::d2h);
    EXPECT_NE(error_of(host_chase + " hops=5000 copy_beside=d2h" + kCommon).find("hops"), std::string::npos);
    EXPECT_NE(error_of(host_chase + " hops=5 stores_beside=8 copy_beside=d2h" + kCommon).find("copy_beside"), std::string::npos);
    EXPECT_NE(error_of(kZc + " direction=h2d size_bytes=65536 access_bytes=8 pattern=chase memory=device hops=5 copy_beside=h2d" +
                       kCommon)
                  .find("copy_beside"),
              std::string::npos);
    EXPECT_NE(error_of(kZc + " direction=d2h size_bytes=4096 access_bytes=4 compute_ns=1000 compute_blocks=1 compute_threads=32 "
                             "compute_bytes=1048576 copy_beside=h2d" + kCommon)
                  .find("copy_beside"),
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

TEST(DmaprobeCases, BlockingCopiesBesideADuplexPairNeedPinnedMemoryAndNoComputeKernel) {
    const std::string pair = "case scenario=d strategy=duplex direction=both size_bytes=4096";
    EXPECT_FALSE(decide(pair + " host_memory=pinned" + kCommon).spec.one_way_beside);
    EXPECT_TRUE(decide(pair + " host_memory=pinned one_way_beside=1" + kCommon).spec.one_way_beside);
    EXPECT_NE(error_of(pair + " host_memory=pageable one_way_beside=1" + kCommon).find("one_way_beside"), std::string::npos);
    EXPECT_NE(error_of(pair + " host_memory=pinned one_way_beside=2" + kCommon).find("one_way_beside"), std::string::npos);
    EXPECT_NE(error_of(pair + " host_memory=pinned one_way_beside=1 compute_ns=1000 compute_blocks=1 compute_threads=32 "
                              "compute_bytes=1048576" + kCommon)
                  .find("one_way_beside"),
              std::string::npos);
}

TEST(DmaprobeCases, ADuplexBurstNeedsPinnedMemoryAndTimesItsOwnOneWayCopies) {
    const std::string pair = "case scenario=d strategy=duplex direction=both size_bytes=4096";
    EXPECT_EQ(decide(pair + " host_memory=pinned" + kCommon).spec.burst_copies, 0);
    EXPECT_EQ(decide(pair + " host_memory=pinned burst_copies=256" + kCommon).spec.burst_copies, 256);
    EXPECT_EQ(decide(pair + " host_memory=pinned burst_copies=512" + kCommon).spec.burst_copies, 512);
    EXPECT_NE(error_of(pair + " host_memory=pinned burst_copies=513" + kCommon).find("burst_copies"), std::string::npos);
    EXPECT_NE(error_of(pair + " host_memory=pageable burst_copies=16" + kCommon).find("burst_copies"), std::string::npos);
    EXPECT_NE(error_of(pair + " host_memory=pinned burst_copies=16 one_way_beside=1" + kCommon).find("burst_copies"),
              std::string::npos);
    EXPECT_NE(error_of(pair + " host_memory=pinned burst_copies=16 compute_ns=1000 compute_blocks=1 compute_threads=32 "
                              "compute_bytes=1048576" + kCommon)
                  .find("burst_copies"),
              std::string::npos);
    // 512 copies of 64 GiB each way: far more than one case may move.
    EXPECT_NE(error_of("case scenario=d strategy=duplex direction=both size_bytes=68719476736 host_memory=pinned "
                       "burst_copies=512" + kCommon)
                  .find("burst_copies"),
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

TEST(DmaprobeCases, ACaseForAnotherWorkQueueCountIsSkippedNamingTheVariable) {
    const auto d = decide("case scenario=a strategy=async_overlap direction=both size_bytes=4096 streams=4 connections=1" +
                          kCommon);
    EXPECT_EQ(d.spec.connections, 1);
    MachineInfo m;
    m.device_count = 1;
    m.connections = max_connections_from_env(nullptr);  // unset: CUDA's 8
    EXPECT_EQ(m.connections, 8);
    const std::string why = machine_skip_reason(d.spec, m);
    EXPECT_NE(why.find("CUDA_DEVICE_MAX_CONNECTIONS=1"), std::string::npos) << why;
    EXPECT_NE(why.find("has 8"), std::string::npos) << why;
    m.connections = max_connections_from_env("1");
    EXPECT_EQ(machine_skip_reason(d.spec, m), "");
    // A value CUDA would not take is no count: the case is skipped, never run under a guess.
    for (const char* bad : {"0", "33", "x", "-1", "123"}) EXPECT_EQ(max_connections_from_env(bad), -1) << bad;
    EXPECT_EQ(max_connections_from_env("32"), 32);
    EXPECT_EQ(max_connections_from_env(""), 8);
    // A case that sets nothing runs whatever the variable says.
    const auto any = decide("case scenario=b strategy=async_overlap direction=both size_bytes=4096 streams=4" + kCommon);
    m.connections = 3;
    EXPECT_EQ(machine_skip_reason(any.spec, m), "");
    EXPECT_NE(machine_conditions(d.spec).find("CUDA_DEVICE_MAX_CONNECTIONS=1"), std::string::npos);
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
