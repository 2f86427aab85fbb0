// Runtime operations and rows the strategies build on (dmasim/strategies/programs.h).
#include "dmasim/strategies/programs.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "dmasim/core/limits.h"
#include "dmasim/gpu/coalescing.h"
#include "dmasim/sim/root_complex.h"

namespace dmasim::strategies {

core::Duration pages_cost(std::uint64_t bytes, const config::CpuParams& cpu, core::Duration fixed,
                          core::Duration per_page) {
    const std::uint64_t pages = (bytes + cpu.page_size.value - 1) / cpu.page_size.value;
    return core::Duration{fixed.ps + static_cast<std::int64_t>(pages) * per_page.ps};
}

core::Duration pinned_alloc_cost(std::uint64_t bytes, const config::CpuParams& cpu, bool* pooled) {
    const std::uint64_t page = cpu.page_size.value;
    const std::uint64_t pages = (bytes + page - 1) / page;
    const bool from_pool = pages * page < cpu.alloc_pinned_pool.value;
    if (pooled != nullptr) *pooled = from_pool;
    if (from_pool) return cpu.alloc_pinned_pool_fixed;
    // The allocation before, of the same size, freed the pages this one gets back; the share of
    // them its cache kept is zeroed there, the rest in DRAM (results/h100-sxm/isolating/alloc-pages).
    const double cold_pages = (1.0 - sim::io_cache_kept_share(pages * page, cpu.alloc_pinned_cache.value)) * static_cast<double>(pages);
    return core::Duration{pages_cost(bytes, cpu, cpu.alloc_pinned_fixed, cpu.alloc_pinned_per_page).ps +
                          static_cast<std::int64_t>(std::llround(cold_pages * static_cast<double>(cpu.alloc_pinned_cold_per_page.ps)))};
}

Op copy_op(CopyDirection dir, std::uint64_t bytes, int stream, bool blocking) {
    Op op;
    op.kind = Op::Kind::kCopy;
    op.direction = dir;
    op.bytes = bytes;
    op.stream = stream;
    op.blocking = blocking;
    return op;
}

Op staged_op(CopyDirection dir, std::uint64_t bytes, bool cached, bool fresh, std::uint32_t page_offset) {
    Op op;
    op.kind = Op::Kind::kStagedCopy;
    op.direction = dir;
    op.bytes = bytes;
    op.working_set_cached = cached;
    op.fresh_pages = fresh;
    op.page_offset = page_offset;
    return op;
}

Op kernel_op(core::Duration d, int stream) {
    Op op;
    op.kind = Op::Kind::kKernel;
    op.duration = d;
    op.stream = stream;
    op.blocking = false;
    return op;
}

Op simple_op(Op::Kind kind, core::Duration d) {
    Op op;
    op.kind = kind;
    op.duration = d;
    return op;
}

RowResult make_row(std::string variant, double ps, int directions, std::string note) {
    RowResult r;
    r.variant = std::move(variant);
    r.time_ps = r.p10_ps = r.p90_ps = r.min_ps = r.max_ps = ps;
    r.directions = directions;
    r.note = std::move(note);
    return r;
}

RowResult not_modelled(std::string variant, int directions, std::string why) {
    RowResult r = make_row(std::move(variant), 0.0, directions, "not modelled yet: " + std::move(why));
    r.status = "not_modelled";
    return r;
}

RowResult refused_row(std::string variant, int directions, std::string why) {
    RowResult r = make_row(std::move(variant), 0.0, directions, "refused by the platform: " + std::move(why));
    r.status = "refused";
    return r;
}

// A stream no strategy's own operations use.
constexpr int kComputeStream = 7;

void add_compute(Program& prog, const config::ComputeOptions& c) {
    if (c.duration.ps <= 0) return;
    Op k;
    k.kind = Op::Kind::kKernel;
    k.duration = c.duration;
    k.stream = kComputeStream;
    k.blocking = false;
    // Its grid takes SM room while it runs (HostRuntime: a zero-copy kernel beside it gets what is left).
    k.grid.blocks = static_cast<std::uint32_t>(c.blocks);
    k.grid.warps_per_block = static_cast<std::uint32_t>(c.threads / static_cast<std::int64_t>(gpu::kWarpSize));
    k.grid.streams_memory = c.bytes.value > 0;
    prog.ops.insert(prog.ops.begin(), k);
}

double gated_ps(const Program& prog, const ProgramOutcome& o, std::size_t last) {
    const auto gate = std::find_if(prog.ops.begin(), prog.ops.end(), [](const Op& op) { return op.kind == Op::Kind::kOpenGate; });
    DMASIM_ASSERT(gate != prog.ops.end());
    return o.timings[last].end_ps - o.timings[static_cast<std::size_t>(gate - prog.ops.begin())].end_ps;
}

std::vector<CopyDirection> directions_of(const std::string& direction) {
    if (direction == "h2d") return {CopyDirection::kHostToDevice};
    if (direction == "d2h") return {CopyDirection::kDeviceToHost};
    if (direction == "both") return {CopyDirection::kHostToDevice, CopyDirection::kDeviceToHost};
    throw std::invalid_argument("direction '" + direction + "' is not h2d, d2h or both");
}

Program pinned_program(const std::vector<CopyDirection>& dirs, std::uint64_t bytes) {
    Program prog;
    if (dirs.size() == 1) {
        prog.ops.push_back(copy_op(dirs.front(), bytes, 0, true));
        return prog;
    }
    for (std::size_t i = 0; i < dirs.size(); ++i) prog.ops.push_back(copy_op(dirs[i], bytes, static_cast<int>(i), false));
    prog.ops.push_back(simple_op(Op::Kind::kSynchronize));
    return prog;
}

Program pageable_program(const std::vector<CopyDirection>& dirs, std::uint64_t bytes, bool cached, bool fresh,
                         std::uint32_t page_offset) {
    Program prog;
    for (const auto d : dirs) prog.ops.push_back(staged_op(d, bytes, cached, fresh, page_offset));
    return prog;
}

Op mapped_kernel_op(const std::vector<CopyDirection>& dirs, std::uint64_t bytes, const config::ZeroCopyOptions& z,
                    const config::GpuParams& g, core::Bytes host_line, std::uint64_t source_bytes) {
    const gpu::WarpAccess w = gpu::coalesce(static_cast<std::uint32_t>(z.access.value), static_cast<std::uint32_t>(z.stride));
    const std::uint64_t warp_accesses = (bytes + w.useful_bytes - 1) / w.useful_bytes;
    const std::int64_t warps_per_block = z.threads / static_cast<std::int64_t>(gpu::kWarpSize);
    const std::int64_t blocks_per_sm = std::max<std::int64_t>(
        1, std::min(g.max_blocks_per_sm, g.max_warps_per_sm / std::max<std::int64_t>(1, warps_per_block)));
    const std::int64_t resident_blocks = std::min(z.blocks, g.sms * blocks_per_sm);
    const std::int64_t warps = resident_blocks * warps_per_block;
    const std::int64_t streams = warps * g.loads_in_flight;  // accesses in flight, one per warp and load
    Op op;
    op.kind = Op::Kind::kMappedKernel;
    op.blocking = false;
    op.grid.blocks = static_cast<std::uint32_t>(z.blocks);
    op.grid.warps_per_block = static_cast<std::uint32_t>(warps_per_block);
    op.grid.resident_alone = static_cast<std::uint32_t>(resident_blocks);
    op.mapped.warp_reads = static_cast<std::uint32_t>(std::min<std::int64_t>(streams * w.requests, UINT32_MAX));
    op.mapped.request_bytes = w.request_bytes / w.requests;
    // Reads in flight are held twice: by the requests themselves and by the lines they are for,
    // a line's entry holding the requests of one warp access to it. Lines of one scattered
    // sector each run out of line entries first (results/h100-sxm/isolating/zero-copy-request-shape).
    const std::int64_t by_lines = g.sysmem_max_outstanding_lines * w.requests / std::max<std::uint32_t>(1, w.lines);
    op.mapped.reads_in_flight = static_cast<std::uint32_t>(std::max<std::int64_t>(
        1, std::min({streams * w.requests, g.sysmem_max_outstanding_reads, by_lines})));
    // The loop each warp runs (sim::WarpLoop): loads of host memory line by line, then the loop;
    // stores fed by loads of GPU memory, line by line too, within the SMs' store limit.
    sim::WarpLoop& loop = op.mapped.loop;
    loop.warps = static_cast<std::uint32_t>(streams);
    loop.lines = w.requests;
    // The gap is per 128 bytes asked for: a request of one 32-byte sector leaves a quarter of it
    // after the one before (4-byte loads one sector a line, 32 requests an access, take 1.60 us a
    // round from one block where four whole lines take 1.51: results/h100-sxm/isolating/
    // zero-copy-grid-shape; 1, 2 and 4 whole lines gave the gap itself).
    loop.line_gap_ps = static_cast<double>(g.host_load_line_gap.ps) * static_cast<double>(w.request_bytes) /
                       static_cast<double>(std::max<std::uint32_t>(1, w.requests) * gpu::kLineBytes);
    loop.loop_ps = static_cast<double>(g.sm_loop.ps);
    loop.round_bytes = static_cast<std::uint64_t>(streams) * w.useful_bytes;
    loop.access_bytes = w.useful_bytes;
    // The stores' source in GPU memory, written by a kernel before the loop: the L2 still holds all
    // of it up to half the L2, none from the L2's size on, and a share falling evenly between; a
    // round's load of GPU memory hits or misses as that share says (results/h100-sxm/isolating/
    // store-source). An exchange's loads write as much into GPU memory beside it.
    const double device_bytes = static_cast<double>(source_bytes > 0 ? source_bytes : bytes) * static_cast<double>(dirs.size());
    const double l2 = static_cast<double>(g.l2_size.value);
    const double kept = std::clamp((l2 - device_bytes) / (l2 / 2.0), 0.0, 1.0);
    const double device_load_ps = kept * static_cast<double>(g.device_load_latency.ps) +
                                  (1.0 - kept) * static_cast<double>(g.device_load_miss_latency.ps);
    loop.round_ps = device_load_ps + static_cast<double>(g.sm_loop.ps) +
                    static_cast<double>(w.requests - 1) * static_cast<double>(g.device_load_line_gap.ps);
    loop.store_bytes_per_s = static_cast<double>(std::min(z.blocks, g.sms)) * g.sm_store_bandwidth.bytes_per_s;
    loop.store_buffer_bytes = g.sysmem_store_buffer.value;
    const gpu::StoreTraffic st = gpu::store_traffic(static_cast<std::uint32_t>(z.access.value), static_cast<std::uint32_t>(z.stride));
    op.mapped.write_request_bytes = st.write_bytes;
    op.mapped.write_spacing = st.spacing_bytes;
    op.mapped.host_line = static_cast<std::uint32_t>(host_line.value);
    for (const auto d : dirs) {
        if (d == CopyDirection::kHostToDevice) {
            op.mapped.read_bytes = warp_accesses * w.request_bytes;
        } else {
            // Whole warp accesses, as the reads; only the stored bytes travel.
            op.mapped.write_bytes = warp_accesses * w.useful_bytes;
        }
    }
    return op;
}

std::string with_note(std::string note, const std::string& fast_forward) {
    if (fast_forward.empty()) return note;
    return note.empty() ? fast_forward : note + "; " + fast_forward;
}

RowResult sim_row(std::string variant, double ps, int directions, std::string note, const ProgramOutcome& o) {
    RowResult r = make_row(std::move(variant), ps, directions, with_note(std::move(note), o.fast_forward));
    r.host_bytes = true;
    r.host_read_bytes = o.host_read_bytes;
    r.host_written_bytes = o.host_written_bytes;
    return r;
}

RowResult phase_row(std::string variant, std::vector<double> ps, int directions, std::string note, const ProgramOutcome& o,
                    bool deterministic) {
    std::sort(ps.begin(), ps.end());
    const auto n = static_cast<double>(ps.size());
    double sum = 0.0;
    for (const double v : ps) sum += v;
    // The phases sample a uniform distribution at i / n; phase i stands for (i + 0.5) / n of it.
    const auto quantile = [&](double q) {
        const double at = q * n - 0.5;
        if (at <= 0.0) return ps.front();
        if (at >= n - 1.0) return ps.back();
        const auto lo = static_cast<std::size_t>(at);
        return ps[lo] + (ps[lo + 1] - ps[lo]) * (at - static_cast<double>(lo));
    };
    RowResult r = sim_row(std::move(variant), sum / n, directions, std::move(note), o);
    if (ps.size() > 1 && !deterministic) {
        r.p10_ps = quantile(0.1);
        r.p90_ps = quantile(0.9);
        r.min_ps = ps.front();
        r.max_ps = ps.back();
    }
    return r;
}

config::GpuBarParams bar_of(Engine& engine, const config::ModelParams& params, int gpu) {
    const topology::Platform& p = engine.platform();
    const topology::NodeProps& n = p.node(*p.find(engine.device_name(gpu)));
    return n.bar_given ? n.bar : config::GpuBarParams::of(params.gpu);
}

std::string bar_refusal(Engine& engine, const config::ModelParams& params, int gpu, std::uint64_t bytes) {
    const config::GpuBarParams bar = bar_of(engine, params, gpu);
    if (bar.bar_windows || bar.bar_aperture.value == 0 || bytes <= bar.bar_aperture.value) return {};
    return core::to_string(core::Bytes{bytes}) + " does not fit " + engine.device_name(gpu) + "'s BAR1 aperture of " +
           core::to_string(bar.bar_aperture) + ", and its mappings are not remapped window by window (bar_windows: false)";
}

BarTransfer run_through_bar(Engine& engine, const config::ModelParams& params, std::uint64_t bytes,
                            const config::GpuBarParams& bar, const std::function<Op(std::uint64_t)>& window_op) {
    const std::uint64_t aperture = bar.bar_aperture.value;
    BarTransfer t;
    t.windows = aperture == 0 ? 1 : (bytes + aperture - 1) / aperture;
    if (t.windows > core::limits::kMaxCasePieces) {
        throw std::invalid_argument(engine.label() + ": " + std::to_string(t.windows) + " BAR windows; at most " +
                                    std::to_string(core::limits::kMaxCasePieces));
    }
    const auto build = [&](std::uint64_t level) {
        Program prog;
        const std::uint64_t w = aperture == 0 ? level : aperture;
        for (std::uint64_t done = 0; done < level; done += w) {
            if (done > 0) prog.ops.push_back(simple_op(Op::Kind::kCpuWork, bar.bar_remap));
            prog.ops.push_back(window_op(std::min(w, level - done)));
        }
        return prog;
    };
    t.outcome = engine.execute_sized(params, bytes, aperture == 0 ? 1 : aperture,
                                     std::max(engine.default_warmup(params), 2 * aperture), build);
    return t;
}

bool host_buffer_not_modelled(Case& c, bool fresh_modelled, bool offset_modelled) {
    const auto& hb = c.spec.options.host_buffer;
    // A whole number of pages off leaves every TLP where it was (requests never cross 4 KiB).
    constexpr std::uint64_t kPageBoundary = 4096;
    const bool fresh_missing = hb.fresh && !fresh_modelled;
    if ((offset_modelled || hb.offset.value % kPageBoundary == 0) && !fresh_missing) return false;
    c.result.rows.push_back(not_modelled("", c.ndirs(), fresh_missing ? "page faults of never-touched host memory"
                                                                 : "a host buffer off a page boundary (TLP alignment)"));
    return true;
}

void Case::take_main(const ProgramOutcome& o) {
    result.links = o.links;
    result.links_interval_ps = o.elapsed_ps;
    result.read_requests = o.read_requests;
    result.writes = o.writes;
    result.peak_outstanding_reads = o.peak_outstanding_reads;
    result.host_memory_bytes = o.host_memory_bytes;
    result.fast_forward = o.fast_forward;
}

}  // namespace dmasim::strategies
