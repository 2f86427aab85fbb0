// zero_copy: a kernel whose SMs load or store mapped (pinned) host memory directly, by access
// width, stride and grid; and the dependent-load chase that gives one load's latency.
#include "dmasim/strategies/programs.h"
#include "dmasim/strategies/registry.h"

#include "dmasim/core/limits.h"
#include "dmasim/gpu/coalescing.h"

#include <algorithm>
#include <cmath>

namespace dmasim::strategies {

namespace {

// The chase beside a grid that stores to host memory (zero_copy.stores_beside), as dmaprobe runs
// it: the stores start, the chase's stream waits 300 us (a kernel that only waits) and then
// chases; the row is the chase's time over its hops. The stores must outlast the chase: they
// are sized for a hop behind every store the grid has waiting, and sized up if that was short.
void run_chase_beside_stores(Engine& engine, Case& c, const Op& chase, const std::string& what) {
    const config::ModelParams& params = c.params;
    const auto& z = c.spec.options.zero_copy;
    config::ZeroCopyOptions grid;
    grid.access = core::Bytes{16};
    grid.blocks = z.stores_beside;
    grid.threads = 256;
    constexpr std::int64_t kSettlePs = core::limits::kStoresBesideSettleNs * 1000;
    constexpr double kStoreRate = 64e9;  // above any PCIe Gen5 x16 link's: enough stores
    const auto build = [&](std::uint64_t store_bytes) {
        Program p;
        // Over and over through a source of the chase's size.
        Op stores = mapped_kernel_op({CopyDirection::kDeviceToHost}, store_bytes, grid, params.gpu, params.cpu.cache_line, c.spec.bytes);
        stores.stream = 1;
        p.ops.push_back(stores);
        p.ops.push_back(kernel_op(core::Duration{kSettlePs}, 0));
        p.ops.push_back(chase);
        p.ops.push_back(simple_op(Op::Kind::kSynchronize));
        return p;
    };
    constexpr std::size_t kStores = 0, kSettle = 1, kChase = 2;
    const double round_ps = static_cast<double>(mapped_kernel_op({CopyDirection::kDeviceToHost}, 1, grid, params.gpu,
                                                                  params.cpu.cache_line).mapped.loop.round_bytes) /
                            kStoreRate * 1e12 * 4.0;
    const double hop_ps = round_ps + 4e6;  // a round of the grid's stores, four times over, and a loaded round trip
    auto store_bytes = static_cast<std::uint64_t>((static_cast<double>(kSettlePs) + hop_ps * static_cast<double>(z.hops)) *
                                                  kStoreRate * 1e-12);
    constexpr int kTries = 4;
    for (int attempt = 0; attempt < kTries; ++attempt, store_bytes *= 4) {
        const Program prog = build(store_bytes);
        const ProgramOutcome o = engine.execute(params, prog);
        if (o.timings[kStores].end_ps < o.timings[kChase].end_ps) continue;
        c.take_main(o);
        const double chase_ps = o.timings[kChase].end_ps - o.timings[kSettle].end_ps;
        c.result.rows.push_back(make_row("", chase_ps / static_cast<double>(z.hops), 1,
                                         what + ", beside " + std::to_string(z.stores_beside) +
                                             " blocks of 256 threads storing 16 bytes each to host memory"));
        return;
    }
    throw std::invalid_argument("zero_copy.stores_beside: the stores beside the chase ended before it " +
                                std::to_string(kTries) + " times over; fewer hops would do");
}

// The chase beside a copy (zero_copy.copy_beside), as dmaprobe runs it: pinned copies of
// kCopyBesideChaseChunk back to back on a stream of their own, the chase's stream waiting 300 us
// (a kernel that only waits) before it chases; the row is the chase's time over its hops. The
// copies must outlast the chase: as many as dmaprobe issues, and more if that was short.
void run_chase_beside_copy(Engine& engine, Case& c, const Op& chase, const std::string& what) {
    const config::ModelParams& params = c.params;
    const auto& z = c.spec.options.zero_copy;
    constexpr std::int64_t kSettlePs = core::limits::kStoresBesideSettleNs * 1000;
    const CopyDirection dir = directions_of(z.copy_beside).front();
    constexpr int kCopyStream = 1;
    const auto build = [&](std::uint64_t chunks) {
        Program p;
        for (std::uint64_t k = 0; k < chunks; ++k) p.ops.push_back(copy_op(dir, core::limits::kCopyBesideChaseChunk, kCopyStream, false));
        p.ops.push_back(kernel_op(core::Duration{kSettlePs}, 0));
        p.ops.push_back(chase);
        p.ops.push_back(simple_op(Op::Kind::kSynchronize));
        return p;
    };
    std::uint64_t chunks = core::limits::copy_beside_chase_chunks(z.hops);
    constexpr int kTries = 3;
    for (int attempt = 0; attempt < kTries; ++attempt, chunks *= 2) {
        const Program prog = build(chunks);
        const ProgramOutcome o = engine.execute(params, prog);
        const std::size_t settle = chunks, chase_op = chunks + 1;
        if (o.timings[chunks - 1].end_ps < o.timings[chase_op].end_ps) continue;
        c.take_main(o);
        const double chase_ps = o.timings[chase_op].end_ps - o.timings[settle].end_ps;
        c.result.rows.push_back(make_row("", chase_ps / static_cast<double>(z.hops), 1,
                                         what + ", beside pinned " + z.copy_beside + " copies of 64 MiB back to back on a stream of their own"));
        return;
    }
    throw std::invalid_argument("zero_copy.copy_beside: the copies beside the chase ended before it " + std::to_string(kTries) +
                                " times over; fewer hops would do");
}

// What translating a host address adds, on average, to a load at an address drawn at random from
// `bytes`: a cache of translations covering `reach` misses with probability 1 - reach / bytes.
double host_translation_ps(const config::GpuParams& g, std::uint64_t bytes) {
    const auto miss = [bytes](core::Bytes reach, core::Duration cost) {
        if (reach.value == 0 || bytes <= reach.value) return 0.0;
        return static_cast<double>(cost.ps) * (1.0 - static_cast<double>(reach.value) / static_cast<double>(bytes));
    };
    return miss(g.host_translation_reach, g.host_translation_miss) + miss(g.host_translation_reach_far, g.host_translation_miss_far);
}

void run_chase(Engine& engine, Case& c) {
    const config::ModelParams& params = c.params;
    const CaseSpec& spec = c.spec;
    CaseResult& result = c.result;
    const auto& z = spec.options.zero_copy;
    if (z.memory == "device") {
        result.rows.push_back(not_modelled("", 1, "loads from GPU memory (L2, HBM) are not part of the model"));
        return;
    }
    // Each hop is one 32-byte read of host memory, the next issued when the last is back at its
    // warp: the copy engines' round trip and the SMs' own path to the host interface and back
    // (gpu.sm_host_path, DmaEngine::set_return_path).
    Op op;
    op.kind = Op::Kind::kMappedKernel;
    op.blocking = false;
    op.mapped.request_bytes = gpu::kSectorBytes;
    op.mapped.reads_in_flight = 1;
    op.mapped.read_bytes = static_cast<std::uint64_t>(z.hops) * gpu::kSectorBytes;
    std::string what = "time is one load: " + std::to_string(z.hops) + " dependent 32-byte reads of host memory, one in flight";
    // Each hop's address is drawn from the whole buffer, so each translation cache misses with
    // probability 1 - reach / size; the miss holds the load before it leaves the SM.
    const double miss_ps = host_translation_ps(params.gpu, spec.bytes);
    if (miss_ps > 0.0) {
        sim::WarpLoop& loop = op.mapped.loop;
        loop.warps = 1;
        loop.lines = 1;
        loop.access_bytes = gpu::kSectorBytes;
        loop.loop_ps = miss_ps;
        what += "; " + std::to_string(static_cast<int>(std::lround(miss_ps / 1e3))) +
                " ns a load for address translation past its caches' reach";
    }
    if (z.copy_beside != "none") {
        run_chase_beside_copy(engine, c, op, what);
        return;
    }
    if (z.stores_beside == 0) {
        Program prog;
        prog.ops.push_back(op);
        prog.ops.push_back(simple_op(Op::Kind::kSynchronize));
        const ProgramOutcome o = engine.execute(params, prog);
        c.take_main(o);
        result.rows.push_back(make_row("", o.elapsed_ps / static_cast<double>(z.hops), 1, what));
        return;
    }
    run_chase_beside_stores(engine, c, op, what);
}

void run_pattern(Engine& engine, Case& c) {
    const config::ModelParams& params = c.params;
    const CaseSpec& spec = c.spec;
    CaseResult& result = c.result;
    const auto& dirs = c.dirs;
    // A pinned copy beside the kernel, enqueued first on a stream of its own, as dmaprobe does.
    const std::string& beside = spec.options.zero_copy.copy_beside;
    const bool has_beside = beside != "none";
    constexpr int kBesideStream = 1;
    const auto build = [&](std::uint64_t bytes) {
        Program p;
        if (has_beside) p.ops.push_back(copy_op(directions_of(beside).front(), bytes, kBesideStream, false));
        p.ops.push_back(mapped_kernel_op(dirs, bytes, spec.options.zero_copy, params.gpu, params.cpu.cache_line, spec.bytes));
        p.ops.push_back(simple_op(Op::Kind::kOpenGate));
        p.ops.push_back(simple_op(Op::Kind::kSynchronize));
        add_compute(p, spec.options.compute);
        return p;
    };
    const Program prog = build(spec.bytes);
    const bool compute = spec.options.compute.duration.ps > 0;
    const std::size_t copy = 0;
    const std::size_t mapped = compute || has_beside ? 1 : 0;  // add_compute puts its kernel first
    const gpu::WarpAccess w = gpu::coalesce(static_cast<std::uint32_t>(spec.options.zero_copy.access.value),
                                            static_cast<std::uint32_t>(spec.options.zero_copy.stride));
    // Warp accesses are whole: a period of whole accesses keeps the request count affine.
    // The SMs' requests settle once their window of reads in flight has filled a few times;
    // but with few reads in flight the phase of Acks against round trips drifts slowly (one
    // block: exactly affine Ack counts at 64-192 KiB, 10 % more Acks at 64 MiB), so the
    // warm-up is at least a copy's.
    const Op& op = prog.ops[mapped];
    const std::uint64_t window = std::max<std::uint64_t>(1, op.mapped.reads_in_flight) * op.mapped.request_bytes *
                                 w.useful_bytes / std::max<std::uint32_t>(1, w.request_bytes);
    // A kernel that only stores has no reads in flight whose phase could drift: its writes
    // settle within 1 MiB (16 MiB of 4-byte stores sharing host lines: samples of 1-1.5 MiB
    // instead of 2-3 MiB, the same rows to the last digit). Not so lone partial writes (one
    // per host line): the host's merge and the posted credits hold them at nearly the same
    // rate (1.26 ns a write), and the beat between the two needs the copy's warm-up.
    const bool lone_partial_writes = op.mapped.write_spacing >= op.mapped.host_line &&
                                     op.mapped.write_request_bytes < op.mapped.host_line;
    constexpr std::uint64_t kStoreOnlyWarmup = 1ULL << 20;
    std::uint64_t warmup = op.mapped.read_bytes == 0 && !lone_partial_writes
                               ? kStoreOnlyWarmup
                               : std::max(engine.default_warmup(params), 4 * window);
    // An exchange's stores trail its loads by the requests queued ahead of them: its first wave
    // of accesses (every warp's first) runs loads first and stores after, so levels inside it are
    // affine but not yet steady: the warm-up spans that wave and four windows of reads (1056
    // blocks: a wave is 4.1 MiB, and 16 MiB extrapolated from shorter runs came out 46 % long).
    if (op.mapped.read_bytes > 0 && op.mapped.write_bytes > 0) warmup = std::max(warmup, op.mapped.loop.round_bytes + 4 * window);
    const ProgramOutcome o = engine.execute_sized(params, spec.bytes, w.useful_bytes, warmup, build);
    c.take_main(o);
    // What the loads and the stores became, for the direction(s) the kernel has.
    std::string shape;
    if (op.mapped.read_bytes > 0) {
        shape = std::to_string(op.mapped.reads_in_flight) + " reads in flight of " + std::to_string(op.mapped.request_bytes) +
                "B; " + std::to_string(static_cast<int>(w.efficiency() * 100)) + "% of moved bytes useful";
    }
    if (op.mapped.write_bytes > 0) {
        shape += std::string(shape.empty() ? "" : "; ") + "stores as " + std::to_string(op.mapped.write_request_bytes) +
                 "B writes" + (op.mapped.write_request_bytes == gpu::kLineBytes ? " (whole lines)" : " (one per store)");
    }
    if (has_beside) {
        const double kernel_ps = gated_ps(prog, o, mapped);
        const double copy_ps = gated_ps(prog, o, copy);
        const std::string copy_note = "a pinned " + beside + " copy of the same size beside the kernel, on its own stream";
        result.rows.push_back(sim_row("", std::max(kernel_ps, copy_ps), c.ndirs(),
                                      shape + "; " + copy_note + "; to the later of the two ends", o));
        result.rows.push_back(sim_row("copy", copy_ps, 1, copy_note + ": from the gate to the copy's end", o));
        result.rows.push_back(sim_row("kernel", kernel_ps, c.ndirs(), "the zero-copy kernel beside the copy: from the gate to its end", o));
        return;
    }
    result.rows.push_back(sim_row("", gated_ps(prog, o, mapped), c.ndirs(),
                                  shape + (compute ? "; beside a compute kernel, which takes SM room (a zero-copy kernel shares it) and turns at GPU memory"
                                                   : ""),
                                  o));
}

}  // namespace

void run_zero_copy(Engine& engine, Case& c) {
    if (c.spec.options.zero_copy.pattern == "chase") {
        run_chase(engine, c);
    } else {
        run_pattern(engine, c);
    }
}

}  // namespace dmasim::strategies
