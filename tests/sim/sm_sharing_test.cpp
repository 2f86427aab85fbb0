// Kernels running at once share the SMs' room for resident blocks (gpu.sms, max_warps_per_sm,
// max_blocks_per_sm). results/h100-sxm/isolating/sm-sharing (an H200 and a 2xH200): a zero-copy
// exchange of 264 blocks of 256 threads launched while a compute kernel holds every SM's 64 warps
// waits for it to end (3418-3420 us against 1616-1621 alone); beside one holding half of them it
// runs as alone; a compute kernel launched beside a running exchange starts the blocks that do not
// fit when the exchange ends (its end 3624-3634 us: the exchange's 1626-1636 plus its 2 ms).
#include <gtest/gtest.h>

#include <vector>

#include "dmasim/config/params.h"
#include "dmasim/config/scenario.h"
#include "dmasim/sim/host_runtime.h"
#include "dmasim/sim/simulator.h"
#include "dmasim/strategies/programs.h"
#include "dmasim/topology/platform_file.h"

namespace dmasim::sim {
namespace {

constexpr double kUs = 1e6;  // ps
constexpr double kComputeUs = 1000.0;
constexpr std::uint64_t kExchange = 8ULL << 20;

Simulator& simulator() {
    static Simulator s(topology::load_platform("h100-sxm", config::ModelParams{}), config::ModelParams{});
    return s;
}

Op compute(std::uint32_t blocks, std::uint32_t threads) {
    Op k = strategies::kernel_op(core::Duration{static_cast<std::int64_t>(kComputeUs * kUs)}, 1);
    k.grid.blocks = blocks;
    k.grid.warps_per_block = threads / 32;
    return k;
}

Op exchange(const config::ModelParams& p) {
    config::ZeroCopyOptions z;
    z.access = core::Bytes{16};
    z.blocks = 264;
    z.threads = 256;
    Op x = strategies::mapped_kernel_op({CopyDirection::kHostToDevice, CopyDirection::kDeviceToHost}, kExchange, z, p.gpu,
                                        p.cpu.cache_line);
    x.stream = 0;
    return x;
}

struct Times {
    double exchange_us;  // from its issue to its end
    double compute_end_us;
};

// `compute_first`: the compute kernel, then 200 us of the CPU, then the exchange (smshare.cu's
// first-* cases); else the exchange, then the compute kernel (after-*).
Times run(std::uint32_t blocks, std::uint32_t threads, bool compute_first) {
    const config::ModelParams p;
    Program prog;
    if (compute_first) {
        prog.ops.push_back(compute(blocks, threads));
        prog.ops.push_back(strategies::simple_op(Op::Kind::kCpuWork, core::Duration{200'000'000}));
        prog.ops.push_back(exchange(p));
    } else {
        prog.ops.push_back(exchange(p));
        prog.ops.push_back(compute(blocks, threads));
    }
    prog.ops.push_back(strategies::simple_op(Op::Kind::kSynchronize));
    const std::size_t x = compute_first ? 2 : 0;
    const std::size_t k = compute_first ? 0 : 1;
    const ProgramOutcome o = simulator().execute(p, prog);
    return {(o.timings[x].end_ps - o.timings[x].issued_ps) / kUs, o.timings[k].end_ps / kUs};
}

double alone_us() {
    const config::ModelParams p;
    Program prog;
    prog.ops.push_back(exchange(p));
    prog.ops.push_back(strategies::simple_op(Op::Kind::kSynchronize));
    const ProgramOutcome o = simulator().execute(p, prog);
    return (o.timings[0].end_ps - o.timings[0].issued_ps) / kUs;
}

TEST(SmSharing, AnExchangeBehindAKernelThatFillsEverySmWaitsForItsEnd) {
    const double alone = alone_us();
    // Half of every SM's warps taken: the exchange's 16 warps an SM fit beside them.
    for (const auto& [blocks, threads] : {std::pair{132U, 512U}, std::pair{132U, 1024U}}) {
        EXPECT_NEAR(run(blocks, threads, true).exchange_us, alone, 0.02 * alone) << blocks << "x" << threads;
    }
    // Every SM's 64 warps taken: the exchange starts when the compute kernel ends.
    for (const auto& [blocks, threads] : {std::pair{264U, 1024U}, std::pair{528U, 512U}}) {
        const Times t = run(blocks, threads, true);
        EXPECT_GT(t.exchange_us, kComputeUs - 200.0 + 0.9 * alone) << blocks << "x" << threads;
        EXPECT_LT(t.exchange_us, kComputeUs - 200.0 + 1.1 * alone + 20.0) << blocks << "x" << threads;
    }
}

TEST(SmSharing, AKernelBesideARunningExchangeStartsWhatDoesNotFitWhenTheExchangeEnds) {
    const double alone = alone_us();
    const Times t = run(264, 1024, false);
    EXPECT_NEAR(t.exchange_us, alone, 0.02 * alone);  // the exchange was resident first
    // 132 of its 264 blocks fit beside the exchange's 16 warps an SM; the rest start at its end.
    EXPECT_GT(t.compute_end_us, alone + kComputeUs - 20.0);
    EXPECT_LT(t.compute_end_us, alone + kComputeUs + 20.0);
    // A grid that fits beside it (132 x 1024) ends its duration after its start.
    EXPECT_LT(run(132, 1024, false).compute_end_us, kComputeUs + 20.0);
}

// A compute kernel that streams through GPU memory takes its turns there with the copy engines'
// accesses: a copy into the GPU that GPU memory holds (a what-if memory of 30 GB/s) gets half of
// it beside the kernel; with the H100's HBM it needs so little that it keeps its rate (the
// committed duplex rows beside a compute kernel: within 1 % of those without, measured and
// modelled).
TEST(SmSharing, AStreamingKernelSharesGpuMemoryWithACopyTurnByTurn) {
    const auto copy_us = [](const config::ModelParams& p, bool beside) {
        Program prog;
        if (beside) {
            Op k = compute(132, 512);
            k.grid.streams_memory = true;
            k.duration = core::Duration{20'000'000'000};  // outlasts the copy
            prog.ops.push_back(k);
        }
        prog.ops.push_back(strategies::copy_op(CopyDirection::kHostToDevice, 16ULL << 20, 0, false));
        const std::size_t c = prog.ops.size() - 1;
        prog.ops.push_back(strategies::simple_op(Op::Kind::kSynchronize));
        const ProgramOutcome o = simulator().execute(p, prog);
        return (o.timings[c].end_ps - o.timings[c].start_ps) / kUs;
    };
    config::ModelParams slow;
    slow.gpu_memory.bandwidth = core::Bandwidth{30e9};
    const double alone = copy_us(slow, false);
    EXPECT_NEAR(16.0 * (1 << 20) / (alone * 1e-6) / 1e9, 30.0, 0.05 * 30.0);  // held by the memory
    EXPECT_NEAR(copy_us(slow, true) / alone, 2.0, 0.05);
    const config::ModelParams hbm;
    EXPECT_NEAR(copy_us(hbm, true) / copy_us(hbm, false), 1.0, 0.01);
}

}  // namespace
}  // namespace dmasim::sim
