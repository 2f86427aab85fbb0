// Fast-forward (docs/fast-forward.md): the extrapolation arithmetic on its own, then the rules on
// the default platform, each fast result against the same case simulated TLP by TLP. One
// Simulator per process (SystemC elaborates once); each test sets its fidelity.
#include "dmasim/sim/fast_forward.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>

#include "dmasim/config/scenario.h"
#include "dmasim/sim/simulator.h"
#include "dmasim/sim/trace.h"
#include "dmasim/topology/platform_file.h"

namespace dmasim::sim {
namespace {

constexpr std::uint64_t kMiB = 1 << 20;

// ---------------------------------------------------------------------------------------------
// Arithmetic.

TEST(FastForwardLevels, AreInTheTargetsResidueClassAndCheaperThanIt) {
    const auto l = choose_levels(1000, 16, 8, 0.5);
    ASSERT_TRUE(l.has_value());
    EXPECT_GE(l->at(0), 16U);
    EXPECT_EQ(l->at(1) - l->at(0), 8U);
    EXPECT_EQ((l->target - l->at(0)) % l->step, 0U);
    EXPECT_EQ(l->at(2) + l->jumps() * l->step, 1000U);
    EXPECT_LE(l->at(0) + l->at(1) + l->at(2), 500U);
    // Levels that would cost more than half the real run are not worth simulating.
    EXPECT_FALSE(choose_levels(60, 16, 8, 0.5).has_value());
    EXPECT_FALSE(choose_levels(0, 16, 8, 0.5).has_value());
}

TEST(FastForwardLevels, LcmIsCappedNotOverflowed) {
    EXPECT_EQ(lcm_capped(65536, 192, 1ULL << 30), 196608U);
    EXPECT_EQ(lcm_capped(1ULL << 40, 3, 1ULL << 30), 0U);
    EXPECT_EQ(lcm_capped(0, 3, 1ULL << 30), 0U);
}

// An outcome whose every quantity is a + b m (+ c m^2 for `bend`).
ProgramOutcome outcome(std::uint64_t m, std::uint64_t bend = 0) {
    ProgramOutcome o;
    o.elapsed_ps = 5'000'000.0 + 19'000.0 * static_cast<double>(m) + static_cast<double>(bend * m * m);
    o.read_requests = 3 + 16 * m;
    o.writes = 1;
    o.host_memory_bytes = 16 + 65536 * m;
    o.peak_outstanding_reads = 16;
    LinkReport l;
    l.label = "rc0->gpu0";
    l.stats.tlps = 7 + 512 * m + bend * m * m;
    l.stats.tlps_by_kind[2] = 512 * m;
    l.stats.payload_bytes = 65536 * m;
    l.stats.tlp_overhead_bytes = 24 * 512 * m;
    l.stats.dllps = 128 * m + 2;
    l.stats.busy_ps = 1.25e4 * static_cast<double>(m);
    o.links.push_back(l);
    OpTiming t;
    t.issued_ps = 0;
    t.start_ps = 2'500'000;
    t.end_ps = o.elapsed_ps - 1'000'000;
    o.timings.push_back(t);
    return o;
}

TEST(FastForwardExtrapolation, AnAffineRunExtrapolatesExactlyInWholeNumbers) {
    Levels l;
    l.first = 16;
    l.step = 8;
    l.target = 16 + 8 * 1000;
    const Extrapolation x = extrapolate({outcome(l.at(0)), outcome(l.at(1)), outcome(l.at(2))}, l, Tolerance{});
    ASSERT_TRUE(x.outcome.has_value()) << x.why_not;
    const ProgramOutcome want = outcome(l.target);
    EXPECT_EQ(x.outcome->read_requests, want.read_requests);
    EXPECT_EQ(x.outcome->host_memory_bytes, want.host_memory_bytes);
    EXPECT_EQ(x.outcome->peak_outstanding_reads, want.peak_outstanding_reads);
    EXPECT_EQ(x.outcome->links.at(0).stats.tlps, want.links[0].stats.tlps);
    EXPECT_EQ(x.outcome->links.at(0).stats.payload_bytes, want.links[0].stats.payload_bytes);
    EXPECT_EQ(x.outcome->links.at(0).stats.dllps, want.links[0].stats.dllps);
    EXPECT_DOUBLE_EQ(x.outcome->elapsed_ps, want.elapsed_ps);
    EXPECT_DOUBLE_EQ(x.outcome->links[0].stats.busy_ps, want.links[0].stats.busy_ps);
    ASSERT_EQ(x.outcome->timings.size(), 1U);
    EXPECT_DOUBLE_EQ(x.outcome->timings[0].end_ps, want.timings[0].end_ps);
}

TEST(FastForwardExtrapolation, ACurvedRunIsRefusedNamingTheQuantity) {
    Levels l;
    l.first = 16;
    l.step = 8;
    l.target = 16 + 8 * 1000;
    const Extrapolation x = extrapolate({outcome(l.at(0), 1), outcome(l.at(1), 1), outcome(l.at(2), 1)}, l, Tolerance{});
    EXPECT_FALSE(x.outcome.has_value());
    EXPECT_NE(x.why_not.find("not affine"), std::string::npos) << x.why_not;
}

TEST(FastForwardExtrapolation, OperationsThatChangeOrderBeforeTheTargetAreCaught) {
    // Two operations: a copy growing with m and a kernel of fixed length. At the levels the
    // kernel ends last; extrapolated, the copy outlasts it: the structure changes on the way.
    auto two = [](double m) {
        ProgramOutcome o;
        OpTiming copy{0.0, 1.0, 1e6 + 1e4 * m};
        OpTiming kernel{0.0, 1.0, 2e6};
        o.timings = {copy, kernel};
        return o;
    };
    const std::array<ProgramOutcome, 3> at{two(10), two(20), two(30)};
    EXPECT_TRUE(same_event_order(at, two(90)));
    EXPECT_FALSE(same_event_order(at, two(1000)));
}

// ---------------------------------------------------------------------------------------------
// The rules, on the simulated default platform.

Simulator& simulator() {
    static Simulator s(topology::load_platform("h100-sxm", config::ModelParams{}), config::ModelParams{});
    return s;
}

CaseResult run(Fidelity f, const CaseSpec& spec, const config::ModelParams& p = {}) {
    simulator().set_fidelity(f);
    return simulator().run(p, spec);
}

std::uint64_t wire_bytes(const LinkStats& s) { return s.payload_bytes + s.tlp_overhead_bytes + s.dllp_bytes; }

// Time of every row and bytes of every link within `tolerance` (relative).
void expect_agree(const CaseResult& fast, const CaseResult& tlp, double tolerance = 1e-3) {
    ASSERT_EQ(fast.rows.size(), tlp.rows.size());
    for (std::size_t i = 0; i < fast.rows.size(); ++i) {
        EXPECT_NEAR(fast.rows[i].time_ps, tlp.rows[i].time_ps, tolerance * tlp.rows[i].time_ps) << tlp.rows[i].variant;
    }
    ASSERT_EQ(fast.links.size(), tlp.links.size());
    for (std::size_t i = 0; i < fast.links.size(); ++i) {
        const auto a = static_cast<double>(wire_bytes(fast.links[i].stats));
        const auto b = static_cast<double>(wire_bytes(tlp.links[i].stats));
        EXPECT_NEAR(a, b, tolerance * b) << tlp.links[i].label;
    }
}

TEST(FastForwardRules, ALongPinnedCopyIsExtrapolatedAndAgrees) {
    const CaseSpec spec{"pinned", "h2d", 64 * kMiB + 4099, {}, {}};
    const CaseResult fast = run(Fidelity::kFast, spec);
    const CaseResult tlp = run(Fidelity::kTlp, spec);
    EXPECT_NE(fast.fast_forward.find("fast-forwarded"), std::string::npos);
    EXPECT_NE(fast.rows.front().note.find("fast-forwarded"), std::string::npos) << fast.rows.front().note;
    EXPECT_TRUE(tlp.fast_forward.empty());
    expect_agree(fast, tlp, 1e-6);
    // Counts are whole numbers and exactly those of the TLP-level run.
    EXPECT_EQ(fast.read_requests, tlp.read_requests);
    EXPECT_EQ(fast.tlps(), tlp.tlps());
}

TEST(FastForwardRules, ShortCopiesAreSimulatedAtTlpLevel) {
    const CaseResult fast = run(Fidelity::kFast, CaseSpec{"pinned", "d2h", 2 * kMiB, {}, {}});
    EXPECT_TRUE(fast.fast_forward.empty()) << fast.fast_forward;
}

TEST(FastForwardRules, TlpFidelityNeverExtrapolates) {
    const CaseResult tlp = run(Fidelity::kTlp, CaseSpec{"pinned", "d2h", 64 * kMiB, {}, {}});
    EXPECT_TRUE(tlp.fast_forward.empty());
    EXPECT_EQ(tlp.rows.front().note.find("fast-forwarded"), std::string::npos);
}

TEST(FastForwardRules, AFixedLengthKernelThatTheCopiesOvertakeIsNotExtrapolated) {
    // Four streams, H2D -> kernel -> D2H per chunk. At reduced sizes the kernels set the pace;
    // at 64 MiB the copies do: what overlaps what changes between the levels and the case, so
    // the event-order check must send it to TLP level (or the result would be the kernels').
    CaseSpec spec{"async_overlap", "both", 64 * kMiB, {}, {}};
    spec.options.async_overlap.streams = 4;
    spec.options.async_overlap.kernel = core::Duration{1'000'000'000};  // 1 ms
    const CaseResult fast = run(Fidelity::kFast, spec);
    const CaseResult tlp = run(Fidelity::kTlp, spec);
    EXPECT_EQ(fast.rows.front().note.find("fast-forwarded"), std::string::npos) << fast.rows.front().note;
    expect_agree(fast, tlp);
}

TEST(FastForwardRules, AKernelBesideThatOutlastsTheCopyAtEveryLevelIsExtrapolated) {
    // A compute kernel of 30 ms beside a 256 MiB duplex copy: the copies end long before it at
    // every level and at the real size, so the order of events is the same throughout. (At
    // 64 MiB the levels are so short that the copy out of the GPU, the faster, ends within the
    // other's last window of reads and its flush waits for all of them, where at the real size it
    // ends long before and waits for a window only: no level predicts that, and fast-forward
    // refuses it.)
    CaseSpec spec{"duplex", "both", 256 * kMiB, {}, {}};
    spec.options.compute.duration = core::Duration{30'000'000'000};
    const CaseResult fast = run(Fidelity::kFast, spec);
    const CaseResult tlp = run(Fidelity::kTlp, spec);
    EXPECT_NE(fast.fast_forward.find("fast-forwarded"), std::string::npos) << fast.rows.front().note;
    expect_agree(fast, tlp);
}

TEST(FastForwardRules, ARunThatRepeatsEveryOtherStepIsExtrapolatedFromLevelsTwiceAsFarApart) {
    // Strided 4-byte stores: partial writes that the host merges at its own pace while the link
    // delivers them at another, so the receiver's credit returns can line up only every other
    // 512 KiB step (their count per step alternates, by 28 in 57 600 at 16 MiB as `dmasim run`
    // simulates it). Levels 1 MiB apart, reusing 2 and 3 MiB, are then affine.
    // The shipped case, with the H100 calibration its platform names.
    const auto scenarios = config::load_scenarios(std::string(DMASIM_SOURCE_DIR) + "/scenarios/zero_copy_patterns.yaml");
    const auto zc = std::find_if(scenarios.begin(), scenarios.end(), [](const auto& s) { return s.name == "zc-stride-16"; });
    ASSERT_NE(zc, scenarios.end());
    CaseSpec spec{"zero_copy", "d2h", 16 * kMiB, {}, {}};
    spec.options = zc->options;
    const CaseResult fast = run(Fidelity::kFast, spec, zc->params);
    const CaseResult tlp = run(Fidelity::kTlp, spec, zc->params);
    EXPECT_NE(fast.fast_forward.find("fast-forwarded"), std::string::npos) << fast.fast_forward;
    expect_agree(fast, tlp);
}

TEST(FastForwardRules, PeriodicFramesAtRestAreReused) {
    CaseSpec spec{"periodic", "h2d", 4 * kMiB, {}, {}};
    spec.options.periodic.size = core::Bytes{4 * kMiB};
    spec.options.periodic.period = core::Duration{2'000'000'000};
    spec.options.periodic.count = 40;
    const CaseResult fast = run(Fidelity::kFast, spec);
    const CaseResult tlp = run(Fidelity::kTlp, spec);
    EXPECT_NE(fast.fast_forward.find("reuse frame"), std::string::npos) << fast.fast_forward;
    expect_agree(fast, tlp, 1e-6);
    EXPECT_EQ(fast.tlps(), tlp.tlps());
}

TEST(FastForwardRules, ABacklogOfFramesStopsTheReuse) {
    // 5 ms of processing per frame every 4 ms: each frame waits longer than the one before, so
    // no frame's result is another's and every frame is simulated.
    CaseSpec spec{"periodic", "h2d", 4 * kMiB, {}, {}};
    spec.options.periodic.size = core::Bytes{4 * kMiB};
    spec.options.periodic.period = core::Duration{4'000'000'000};
    spec.options.periodic.kernel = core::Duration{5'000'000'000};
    spec.options.periodic.count = 16;
    const CaseResult fast = run(Fidelity::kFast, spec);
    const CaseResult tlp = run(Fidelity::kTlp, spec);
    EXPECT_TRUE(fast.fast_forward.empty()) << fast.fast_forward;
    expect_agree(fast, tlp, 1e-9);
}

TEST(FastForwardRules, ATracerForcesTlpLevel) {
    Tracer tracer;
    Tracer::set_active(&tracer);
    const CaseResult traced = run(Fidelity::kFast, CaseSpec{"pinned", "h2d", 64 * kMiB, {}, {}});
    Tracer::set_active(nullptr);
    EXPECT_TRUE(traced.fast_forward.empty()) << traced.fast_forward;
}

}  // namespace
}  // namespace dmasim::sim
