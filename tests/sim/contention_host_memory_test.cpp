// Two GPUs of one host, each on its own root port, copying to and from host memory at once: what
// they share is the root complex's way to memory (root_complex.ports_bandwidth_total). Its own
// executable: a process elaborates one SystemC model.
#include <gtest/gtest.h>

#include "dmasim/sim/simulator.h"
#include "dmasim/topology/platform_file.h"

namespace dmasim::sim {
namespace {

// On the 2-GPU host all root ports share one way to host memory
// (root_complex.ports_bandwidth_total, 106 GB/s on h200x2-nvlink): reads, and the write-backs of
// lines that writes past the I/O cache evict, with write-backs first. Two GPUs reading host
// memory at once share it; one writing past the I/O cache slows the other's reads and keeps its
// own rate; writes that evict nothing do not use it. Measured in
// results/h200x2-nvlink/isolating/two-gpu-host-traffic (256 MiB: 106.0 GB/s from the host
// together, 104.3 one each way with the host-to-device copy at 49.3 and the other at 55.0).
TEST(Contention, AllRootPortsShareTheWayToHostMemoryWriteBacksFirst) {
    const config::ModelParams p;
    topology::Platform platform = topology::load_platform("h200x2-nvlink", p);
    const auto rc = platform.find("rc0");
    ASSERT_TRUE(rc.has_value());
    const double total = platform.node(*rc).bridge.ports_bandwidth_total.bytes_per_s / 1e9;  // GB/s
    ASSERT_GT(total, 0.0);
    ASSERT_GT(platform.node(*rc).bridge.io_cache.value, 0U);
    // Long enough that the way's queue has filled and write-backs run most of the time.
    const std::uint64_t big = 8 * platform.node(*rc).bridge.io_cache.value;
    const auto flow = [](const char* name, std::int64_t device, const char* dir, std::uint64_t size) {
        config::FlowSpec f;
        f.name = name;
        f.device = device;
        f.direction = dir;
        f.size = size;
        return f;
    };
    // GB/s of a flow's row (the flows of one case are all `big` or all `small`).
    std::uint64_t size = 0;
    const auto gbps = [&size](const RowResult& r) { return static_cast<double>(size) / r.time_ps * 1e3; };
    size = big;
    Simulator sim(platform, p);
    const double in_alone = gbps(sim.run_flows(p, {flow("in", 0, "h2d", big)}, &platform).rows[0]);
    const double out_alone = gbps(sim.run_flows(p, {flow("out", 0, "d2h", big)}, &platform).rows[0]);
    ASSERT_GT(2 * in_alone, total * 1.02);  // alone, each is above half the shared way
    // Two readers: the way's rate between them.
    const CaseResult reads = sim.run_flows(p, {flow("a", 0, "h2d", big), flow("b", 1, "h2d", big)}, &platform);
    EXPECT_NEAR(gbps(reads.rows[0]) + gbps(reads.rows[1]), total, 0.02 * total);
    // A writer past the I/O cache beside a reader: the writer keeps its rate, the reader loses.
    const CaseResult mixed = sim.run_flows(p, {flow("out", 0, "d2h", big), flow("in", 1, "h2d", big)}, &platform);
    EXPECT_NEAR(gbps(mixed.rows[0]) / out_alone, 1.0, 0.01);
    EXPECT_LT(gbps(mixed.rows[1]), 0.97 * in_alone);
    // Writers within the I/O cache evict nothing: two of them do not touch the shared way.
    const std::uint64_t small = platform.node(*rc).bridge.io_cache.value / 4;
    size = small;
    const double small_alone = gbps(sim.run_flows(p, {flow("out", 0, "d2h", small)}, &platform).rows[0]);
    const CaseResult writes = sim.run_flows(p, {flow("a", 0, "d2h", small), flow("b", 1, "d2h", small)}, &platform);
    for (const auto& r : writes.rows) { EXPECT_NEAR(gbps(r) / small_alone, 1.0, 0.02) << r.variant; }
}

}  // namespace
}  // namespace dmasim::sim
