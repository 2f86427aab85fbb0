#include "dmasim/sim/simulator.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <functional>
#include <optional>
#include <stdexcept>

#include "dmasim/core/limits.h"
#include "dmasim/core/results.h"
#include "dmasim/gpu/coalescing.h"
#include "dmasim/sim/fast_forward.h"
#include "dmasim/sim/host_runtime.h"
#include "dmasim/sim/platform_top.h"
#include "dmasim/sim/trace.h"
#include "dmasim/topology/platform_file.h"

namespace dmasim::sim {

namespace {

bool g_elaborated = false;

const std::vector<std::string>& modelled() {
    static const std::vector<std::string> names{"pinned",   "duplex",    "pageable", "registered",     "async_overlap",
                                                "periodic", "zero_copy", "peer",     "third_party_dma", "cpu_mapped"};
    return names;
}

core::Duration pages_cost(std::uint64_t bytes, const config::CpuParams& cpu, core::Duration fixed,
                          core::Duration per_page) {
    const std::uint64_t pages = (bytes + cpu.page_size.value - 1) / cpu.page_size.value;
    return core::Duration{fixed.ps + static_cast<std::int64_t>(pages) * per_page.ps};
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

// `cached`: the user buffer fits in the CPU's last-level cache. It is decided by the case's
// size, not by `bytes`, so that a fast-forward level at a smaller size stays on the same path.
Op staged_op(CopyDirection dir, std::uint64_t bytes, bool cached) {
    Op op;
    op.kind = Op::Kind::kStagedCopy;
    op.direction = dir;
    op.bytes = bytes;
    op.working_set_cached = cached;
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

Op simple_op(Op::Kind kind, core::Duration d = {}) {
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

// A row the model cannot back with a mechanism yet: no time, status not_modelled.
RowResult not_modelled(std::string variant, int directions, std::string why) {
    RowResult r = make_row(std::move(variant), 0.0, directions, "not modelled yet: " + std::move(why));
    r.status = "not_modelled";
    return r;
}

// The same program with a compute kernel beside it on a stream of its own (compute.duration >
// 0). Kernels in this version take no SMs or memory bandwidth, so it changes nothing by
// construction; the row says so, and the measured rows show what it costs on a GPU.
constexpr int kComputeStream = 7;
void add_compute(Program& prog, const config::ComputeOptions& c) {
    if (c.duration.ps <= 0) return;
    Op k;
    k.kind = Op::Kind::kKernel;
    k.duration = c.duration;
    k.stream = kComputeStream;
    k.blocking = false;
    prog.ops.insert(prog.ops.begin(), k);
}

// What dmaprobe's events measure of a gated program (Op::Kind::kOpenGate): from the gate
// opening to the end of operation `last`. The CPU's calls before it are outside.
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

// Pinned copies: one blocking cudaMemcpy, or, for both directions, two cudaMemcpyAsync on two
// streams and a synchronize (that is what duplex is).
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

// Pageable copies are synchronous for the calling thread, so two directions from one thread
// run one after the other.
Program pageable_program(const std::vector<CopyDirection>& dirs, std::uint64_t bytes, bool cached) {
    Program prog;
    for (const auto d : dirs) prog.ops.push_back(staged_op(d, bytes, cached));
    return prog;
}

// A zero-copy kernel: its warps' loads coalesce into requests (gpu/coalescing.h), each resident
// warp running its loop (sim::WarpLoop: an access's lines leave one after another, the warp
// waits for its last), within the GPU's limit on outstanding host-memory reads; its stores are
// merged per line in the L2 and posted one write per contiguous run (gpu::store_traffic), at
// the pace of the loads from GPU memory that feed them and the SMs' store limit.
Op mapped_kernel_op(const std::vector<CopyDirection>& dirs, std::uint64_t bytes, const config::ZeroCopyOptions& z,
                    const config::GpuParams& g, core::Bytes host_line) {
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
    op.mapped.request_bytes = w.request_bytes / w.requests;
    op.mapped.reads_in_flight = static_cast<std::uint32_t>(
        std::min<std::int64_t>(streams * w.requests, g.sysmem_max_outstanding_reads));
    // The loop each warp runs (sim::WarpLoop): loads of host memory line by line, then the loop;
    // stores fed by loads of GPU memory, line by line too, within the SMs' store limit.
    WarpLoop& loop = op.mapped.loop;
    loop.warps = static_cast<std::uint32_t>(streams);
    loop.lines = w.requests;
    loop.line_gap_ps = static_cast<double>(g.host_load_line_gap.ps);
    loop.loop_ps = static_cast<double>(g.sm_loop.ps);
    loop.round_bytes = static_cast<std::uint64_t>(streams) * w.useful_bytes;
    loop.round_ps = static_cast<double>(g.device_load_latency.ps + g.sm_loop.ps) +
                    static_cast<double>(w.requests - 1) * static_cast<double>(g.device_load_line_gap.ps);
    loop.store_bytes_per_s = static_cast<double>(std::min(z.blocks, g.sms)) * g.sm_store_bandwidth.bytes_per_s;
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

// The watchdog's yardstick (simulator.h, Watchdog): about how long `prog` takes, from the
// parameters alone, as if no two operations overlapped. Bytes move at half the slowest rate on
// the platform; requests are limited by their window (read tags, flow-control credits, loads in
// flight) to one window per round trip; a round trip crosses every link and bridge of the
// platform twice. Over the shipped scenarios the simulated time is 0.008 to 1.04 times it, so
// a budget of 100 times it stops runaways only.
double estimate_ps(const Program& prog, const config::ModelParams& p, const topology::Platform& links) {
    double rtt_ps = static_cast<double>(p.host_memory.latency.ps + p.gpu_memory.latency.ps);
    double dma_bps = std::min(p.host_memory.bandwidth.bytes_per_s, p.gpu_memory.bandwidth.bytes_per_s);
    double mps = 4096, mrrs = 4096, read_window = static_cast<double>(p.dma.max_read_requests), write_window = 1e9;
    auto window = [](double& w, std::int64_t credits, double per) {
        if (credits > 0) w = std::min(w, std::max(1.0, static_cast<double>(credits) / per));
    };
    for (auto [e, end] = boost::edges(links.graph()); e != end; ++e) {
        const topology::LinkProps& l = links.link(*e);
        if (l.kind == topology::LinkKind::kPcie) {
            rtt_ps += 2.0 * static_cast<double>(l.pcie.latency.ps);
            // Half the raw rate: headers, framing and DLLPs cost at most that much.
            dma_bps = std::min(dma_bps, 0.5 * pcie::link_physics(l.pcie).stream_bytes_per_s);
            mps = std::min(mps, static_cast<double>(l.pcie.mps.value));
            mrrs = std::min(mrrs, static_cast<double>(l.pcie.mrrs.value));
            window(read_window, l.pcie.credits_nonposted_header, 1.0);
            window(write_window, l.pcie.credits_posted_header, 1.0);
            window(write_window, l.pcie.credits_posted_data, static_cast<double>(l.pcie.mps.value) / pcie::kCreditBytes);
            window(read_window, l.pcie.credits_completion_header, 1.0);
        } else if (l.kind == topology::LinkKind::kNvlink || l.kind == topology::LinkKind::kSocket) {
            rtt_ps += 2.0 * static_cast<double>(l.nvlink.latency.ps);
            dma_bps = std::min(dma_bps, 0.5 * l.nvlink.link_rate.bytes_per_s);
        }
    }
    for (auto [v, end] = boost::vertices(links.graph()); v != end; ++v) {
        const topology::NodeProps& n = links.node(*v);
        if (n.kind == topology::NodeKind::kRootComplex || n.kind == topology::NodeKind::kSwitch ||
            n.kind == topology::NodeKind::kNvSwitch) {
            rtt_ps += 2.0 * static_cast<double>(n.bridge.forward_latency.ps + n.bridge.switch_latency.ps);
        }
    }
    const config::RuntimeParams& rt = p.runtime;
    const double fixed_ps = static_cast<double>(rt.call_overhead.ps + rt.sync_latency.ps + rt.stream_wait_latency.ps +
                                                rt.kernel_launch_latency.ps + p.dma.launch_latency.ps) +
                            2.0 * rtt_ps;
    auto ceil_div = [](double a, double b) { return std::ceil(a / std::max(b, 1.0)); };
    // Reads and writes of `bytes` by a DMA engine: rate, and a round trip per window of requests.
    auto dma_ps = [&](double bytes) {
        return bytes / dma_bps * 1e12 + (ceil_div(bytes, mrrs) / read_window + ceil_div(bytes, mps) / write_window) * rtt_ps;
    };
    double release_ps = 0.0;
    double total_ps = 0.0;
    for (const Op& op : prog.ops) {
        const auto bytes = static_cast<double>(op.bytes);
        const auto duration = static_cast<double>(op.duration.ps);
        switch (op.kind) {
            case Op::Kind::kCopy:
                total_ps += fixed_ps + dma_ps(bytes);
                break;
            case Op::Kind::kStagedCopy: {
                const double cpu_bps = std::min({p.cpu.memcpy_bandwidth.bytes_per_s, p.cpu.memcpy_bandwidth_cached.bytes_per_s,
                                                 p.host_memory.bandwidth.bytes_per_s});
                total_ps += ceil_div(bytes, static_cast<double>(p.pageable.bounce_size.value)) * fixed_ps + dma_ps(bytes) +
                            2.0 * bytes / cpu_bps * 1e12;
                break;
            }
            case Op::Kind::kKernel:
                total_ps += fixed_ps + duration;
                break;
            case Op::Kind::kCpuWork:
                total_ps += duration;
                break;
            case Op::Kind::kReleaseAt:
                release_ps = std::max(release_ps, duration);
                break;
            case Op::Kind::kSynchronize:
                total_ps += fixed_ps;
                break;
            case Op::Kind::kMappedKernel: {
                const auto rd = static_cast<double>(op.mapped.read_bytes);
                const auto wr = static_cast<double>(op.mapped.write_bytes);
                const auto req = static_cast<double>(std::max<std::uint32_t>(op.mapped.request_bytes, 1));
                const auto wreq = static_cast<double>(
                    std::max<std::uint32_t>(op.mapped.write_request_bytes ? op.mapped.write_request_bytes : op.mapped.request_bytes, 1));
                total_ps += fixed_ps + (rd + wr) / dma_bps * 1e12 +
                            (ceil_div(rd, req) / std::max<double>(op.mapped.reads_in_flight, 1.0) +
                             ceil_div(wr, wreq) / write_window) * rtt_ps;
                // The warps' loop: an access per round trip and loop for each warp, a store
                // iteration per round.
                const WarpLoop& loop = op.mapped.loop;
                if (loop.warps > 0) {
                    total_ps += ceil_div(rd, static_cast<double>(loop.warps) * loop.lines * req) *
                                    (rtt_ps + loop.loop_ps + static_cast<double>(loop.lines) * loop.line_gap_ps) +
                                ceil_div(wr, static_cast<double>(loop.round_bytes)) * loop.round_ps;
                    if (loop.store_bytes_per_s > 0.0) total_ps += wr / loop.store_bytes_per_s * 1e12;
                }
                break;
            }
            case Op::Kind::kOpenGate:
                break;
            case Op::Kind::kCpuMapped:
                if (op.direction == CopyDirection::kHostToDevice) {
                    total_ps += fixed_ps + bytes / std::min(p.cpu.wc_bandwidth.bytes_per_s, dma_bps) * 1e12 +
                                ceil_div(bytes, 64.0) / std::min<double>(static_cast<double>(p.cpu.wc_buffers), write_window) * rtt_ps;
                } else {
                    total_ps += fixed_ps + ceil_div(bytes, static_cast<double>(p.cpu.mmio_read_bytes.value)) /
                                               static_cast<double>(std::max<std::int64_t>(p.cpu.mmio_reads_in_flight, 1)) * rtt_ps;
                }
                break;
        }
    }
    return release_ps + total_ps;
}

}  // namespace

namespace {
Fidelity g_default_fidelity = Fidelity::kFast;
}  // namespace

const char* to_string(Fidelity f) { return f == Fidelity::kFast ? "fast" : "tlp"; }

Fidelity parse_fidelity(const std::string& text) {
    if (text == "fast") return Fidelity::kFast;
    if (text == "tlp") return Fidelity::kTlp;
    throw std::invalid_argument("fidelity '" + text + "' is not fast or tlp");
}

void set_default_fidelity(Fidelity f) { g_default_fidelity = f; }
Fidelity default_fidelity() { return g_default_fidelity; }

std::uint64_t CaseResult::tlps() const {
    std::uint64_t n = 0;
    for (const auto& l : links) n += l.stats.tlps;
    return n;
}

bool strategy_modelled(const std::string& strategy) {
    const auto& m = modelled();
    return std::find(m.begin(), m.end(), strategy) != m.end();
}

const char* modelled_strategies() {
    return "pinned, duplex, pageable, registered, async_overlap, periodic, zero_copy, peer, third_party_dma, cpu_mapped";
}

Simulator::Simulator(topology::Platform platform, const config::ModelParams& params)
    : platform_(std::make_unique<topology::Platform>(std::move(platform))) {
    if (g_elaborated) throw std::logic_error("a SystemC model can be elaborated only once per process");
    g_elaborated = true;
    // Model warnings are errors: a TLM protocol slip must not pass silently into a number.
    sc_core::sc_report_handler::set_actions(sc_core::SC_WARNING, sc_core::SC_DISPLAY | sc_core::SC_THROW);
    sc_core::sc_report_handler::set_actions(sc_core::SC_ERROR, sc_core::SC_DISPLAY | sc_core::SC_THROW);
    top_ = std::make_unique<PlatformTop>("platform", *platform_, params);
}

Simulator::~Simulator() = default;

namespace {
std::string seconds(double ps) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.4g s", ps * 1e-12);
    return buf;
}

std::string refusal(const std::string& failed) {
    return "the model was left mid-case by an earlier failure and runs no more cases in this process (" + failed + ")";
}
}  // namespace

void Simulator::fail(const std::string& what) {
    const std::string where = (origin_.empty() ? std::string() : origin_ + ": ") + trace_label_ + ": ";
    failed_ = where + what;
    throw SimulationError(failed_);
}

ProgramOutcome Simulator::execute(const config::ModelParams& params, const Program& program) {
    if (!top_->idle()) throw std::logic_error("model not idle between runs");
    std::optional<topology::Platform> own_links;
    if (links_from_ == nullptr) {
        // No platform of the case's own: `params` describes every link.
        own_links = *platform_;
        for (auto [e, end] = boost::edges(own_links->graph()); e != end; ++e) {
            topology::LinkProps& l = own_links->link(*e);
            if (l.kind == topology::LinkKind::kPcie) l.pcie = params.link;
            if (l.kind == topology::LinkKind::kNvlink) l.nvlink = params.nvlink;
        }
        for (auto [v, end] = boost::vertices(own_links->graph()); v != end; ++v) {
            own_links->node(*v).bridge = params.root_complex;
        }
    }
    const topology::Platform& links = links_from_ != nullptr ? *links_from_ : *own_links;
    start_case_clock();
    top_->configure(params, links);
    HostRuntime& rt = top_->runtime();
    const double t0 = now_ps();

    // The watchdog: the program gets a simulated-time budget; sc_start returns when the
    // runtime pauses at the program's end, when no event is left, or when the budget is spent.
    // Nothing of it runs per event.
    const double estimate = estimate_ps(program, params, links);
    const auto clock_left = static_cast<double>((sc_core::sc_max_time() - sc_core::sc_time_stamp()).value());
    if (!(estimate < clock_left)) {
        // Nothing was submitted: the model stays usable for other cases.
        throw SimulationError((origin_.empty() ? std::string() : origin_ + ": ") + trace_label_ + ": needs up to " +
                              seconds(estimate) + " of simulated time, more than SystemC's clock has left (" +
                              seconds(clock_left) + ")");
    }
    const double budget = std::min(watchdog_.factor * estimate + static_cast<double>(watchdog_.margin.ps), clock_left);
    rt.submit(program);
    try {
        sc_core::sc_start(sc_core::sc_time::from_value(static_cast<sc_dt::uint64>(budget)), sc_core::SC_EXIT_ON_STARVATION);
    } catch (const std::exception& e) {
        fail(std::string("the simulation failed: ") + e.what());
    }
    if (!rt.done()) {
        const std::string when = "after " + seconds(now_ps() - t0) + " of simulated time, " + rt.unfinished();
        if (sc_core::sc_pending_activity()) {
            char factor[32];
            std::snprintf(factor, sizeof factor, "%g", watchdog_.factor);
            fail("ran past its simulated-time budget of " + seconds(budget) + " (" + factor + " x the estimate of " +
                 seconds(estimate) + ", plus " + seconds(static_cast<double>(watchdog_.margin.ps)) + "): stopped " + when);
        }
        fail("deadlock: no event is left to run " + when +
             " (a case validation should have refused, or a model bug: please report it)");
    }
    // Let the last Acks and credit updates land so that the next run starts from rest.
    for (int i = 0; i < 1000 && !top_->idle(); ++i) sc_core::sc_start(sc_core::sc_time(1, sc_core::SC_US));
    if (!top_->idle()) fail("the model did not come to rest after the program ended");
    if (Tracer* tr = Tracer::active()) {
        top_->flush_trace();
        tr->span(tr->track("cases", "case"), trace_label_, t0, t0 + rt.elapsed_ps());
    }

    ProgramOutcome out;
    out.elapsed_ps = rt.elapsed_ps();
    out.timings = rt.timings();
    const MemoryStats& hm = top_->host_memory().stats();
    out.host_memory_bytes = hm.bytes_read + hm.bytes_written;
    for (const auto& l : top_->links()) {
        out.links.push_back(LinkReport{l.label, l.link->stats(), l.link->physics().stream_bytes_per_s * 1e-9});
    }
    for (std::size_t d = 0; d < top_->device_count(); ++d) {
        for (const auto& engine : top_->device(d).engines) {
            const EngineStats& s = engine->stats();
            out.read_requests += s.read_requests;
            out.writes += s.writes;
            out.peak_outstanding_reads = std::max(out.peak_outstanding_reads, s.peak_outstanding_reads);
        }
    }
    return out;
}

namespace {

// The levels cost at most this fraction of the real program, or it is simulated as it is.
constexpr double kMaxCostFraction = 0.5;
// How affine the levels must be. Counts wobble only in runs whose steady state is not exactly
// periodic (two transfers at incommensurate rates, whose phase drifts); a wobble of 1e-4 of a
// step keeps the extrapolation's error near that, ten times below the 0.1 % promised (the
// agreement test and docs/fast-forward.md have the measured errors).
constexpr Tolerance kTolerance{1e-4, 2.0, 0.0, 1e-3};

bool repeats_without_fixed_durations(const Program& p) {
    // A program whose operation count grows with its size (staging chunks, BAR windows) is
    // extrapolated without the event-order check, so nothing of fixed length may overlap it:
    // no kernels, no release times, and CPU work only between blocking calls.
    bool all_blocking = true;
    for (const Op& op : p.ops) {
        if (op.kind == Op::Kind::kKernel || op.kind == Op::Kind::kReleaseAt) return false;
        if ((op.kind == Op::Kind::kCopy || op.kind == Op::Kind::kMappedKernel) && !op.blocking) all_blocking = false;
    }
    return all_blocking || std::none_of(p.ops.begin(), p.ops.end(), [](const Op& op) { return op.kind == Op::Kind::kCpuWork; });
}

std::string with_note(std::string note, const std::string& fast_forward) {
    if (fast_forward.empty()) return note;
    return note.empty() ? fast_forward : note + "; " + fast_forward;
}

}  // namespace

ProgramOutcome Simulator::execute(const config::ModelParams& params, const ProgramFamily& family) {
    if (fidelity_ == Fidelity::kTlp || Tracer::active() != nullptr || !family.scalable) {
        return execute(params, family.make(family.target));
    }
    const Program real = family.make(family.target);
    // Longer warm-ups on later tries, as long as they are worth it: runs that settle late
    // (duplex) or whose steady state has a long period (one block of zero-copy warps) pass then.
    for (const std::uint64_t warmup : {family.min_level, 4 * family.min_level, 16 * family.min_level}) {
        // Any whole number of periods apart would do for an exactly periodic run; a quarter of
        // the warm-up keeps the three levels cheap and still spans many periods.
        const auto levels = choose_levels(family.target, warmup, std::max<std::uint64_t>(1, warmup / 4),
                                          kMaxCostFraction);
        if (!levels) break;
        std::array<Program, 3> progs{family.make(levels->at(0)), family.make(levels->at(1)), family.make(levels->at(2))};
        bool same_ops = true;
        for (const auto& p : progs) same_ops = same_ops && p.ops.size() == real.ops.size();
        if (!same_ops && !repeats_without_fixed_durations(real)) break;
        std::array<ProgramOutcome, 3> at;
        for (std::size_t i = 0; i < 3; ++i) at[i] = execute(params, progs[i]);
        Extrapolation x = extrapolate(at, *levels, kTolerance);
        if (!x.outcome) continue;
        if (same_ops && !same_event_order(at, *x.outcome)) continue;
        x.outcome->fast_forward = "fast-forwarded from " + family.describe(levels->at(0)) + ", " +
                                  family.describe(levels->at(1)) + ", " + family.describe(levels->at(2));
        return *x.outcome;
    }
    return execute(params, real);
}

std::uint64_t Simulator::transfer_period(const config::ModelParams& p, std::uint64_t extra) const {
    constexpr std::uint64_t kCap = 1ULL << 30;
    // Engines read GPU memory and the CPU copies in 64 KiB pieces; requests never cross 4 KiB.
    std::uint64_t u = 64 * 1024;
    auto add = [&](std::uint64_t v) {
        if (u != 0 && v > 0) u = lcm_capped(u, v, kCap);
    };
    const topology::Platform& g = links_from_ != nullptr ? *links_from_ : *platform_;
    for (auto [e, end] = boost::edges(g.graph()); e != end; ++e) {
        const topology::LinkProps& l = g.link(*e);
        if (l.kind == topology::LinkKind::kPcie) {
            const config::LinkParams& lp = links_from_ != nullptr ? l.pcie : p.link;
            add(lp.mps.value);
            add(lp.mrrs.value);
            add(lp.rcb.value);
        } else {
            add(l.nvlink.max_payload.value);
        }
    }
    for (auto [v, end] = boost::vertices(g.graph()); v != end; ++v) {
        add((links_from_ != nullptr ? g.node(*v).bridge : p.root_complex).completion_size.value);
    }
    add(p.root_complex.completion_size.value);
    add(p.nvlink.max_payload.value);
    add(64);  // write-combined CPU stores leave in 64-byte lines
    add(p.cpu.mmio_read_bytes.value);
    add(extra);
    return u;
}

std::uint64_t Simulator::default_warmup(const config::ModelParams& params) const {
    // Twice what an engine keeps in flight: its read tags' worth of requests (host-to-device),
    // or what it reads ahead of its writes (device-to-host); the run is in steady state between
    // filling that window and draining it.
    const std::uint64_t reads =
        static_cast<std::uint64_t>(params.dma.max_read_requests) * std::max<std::uint64_t>(params.link.mrrs.value, 128);
    return std::max<std::uint64_t>({1ULL << 20, 2 * reads, 2 * params.dma.read_ahead.value});
}

ProgramFamily Simulator::sized_family(const config::ModelParams& params, std::uint64_t size, std::uint64_t extra,
                                      std::uint64_t warmup_bytes, std::function<Program(std::uint64_t bytes)> build) const {
    ProgramFamily f;
    const std::uint64_t unit = transfer_period(params, extra);
    if (unit == 0) {
        f.make = [build, size](std::uint64_t) { return build(size); };
        return f;
    }
    const std::uint64_t rest = size % unit;
    f.target = size / unit;
    f.scalable = f.target > 0;
    f.min_level = std::max<std::uint64_t>(1, (warmup_bytes + unit - 1) / unit);
    f.make = [build, rest, unit](std::uint64_t m) { return build(rest + m * unit); };
    f.describe = [rest, unit](std::uint64_t m) { return core::to_string(core::Bytes{rest + m * unit}); };
    return f;
}

std::vector<int> Simulator::devices_of_kind(topology::NodeKind kind) const {
    std::vector<int> out;
    for (const auto n : platform_->nodes_of(kind)) out.push_back(top_->device_index(platform_->node(n).name));
    return out;
}

void Simulator::run_peer(const config::ModelParams& params, const CaseSpec& spec,
                         const std::vector<CopyDirection>& dirs, CaseResult& result,
                         const std::function<void(const ProgramOutcome&)>& take_main) {
    const auto gpus = devices_of_kind(topology::NodeKind::kGpu);
    const auto& po = spec.options.peer;
    if (static_cast<std::size_t>(std::max(po.src_device, po.dst_device)) >= gpus.size()) {
        throw std::invalid_argument("peer needs GPUs " + std::to_string(po.src_device) + " and " +
                                    std::to_string(po.dst_device) + "; platform " + platform_->name() + " has " +
                                    std::to_string(gpus.size()));
    }
    if (po.src_device == po.dst_device) {
        // The copy engine reading and writing one GPU's memory: no GPU-memory model yet.
        result.rows.push_back(not_modelled("local", 1, "a copy within one GPU (its copy engine against GPU memory)"));
        return;
    }
    const int src = gpus[static_cast<std::size_t>(po.src_device)];
    const int dst = gpus[static_cast<std::size_t>(po.dst_device)];
    const bool both = dirs.size() == 2;
    // A platform rule (Ascend: one switch only) or a bridge may refuse peer traffic.
    const std::string refusal =
        topology::peer_refusal(*platform_, *platform_->find(device_name(src)), *platform_->find(device_name(dst)));
    if (!refusal.empty() && po.refused == "error") throw std::invalid_argument("peer copy refused: " + refusal);
    // Peer access on: the source's copy engine writes straight into the peer, by the route the
    // graph gives (NVLink when there is one, else through the switch or the root complex).
    auto first_hop = [&](int from, int to) {
        const auto a = platform_->find(device_name(from));
        const auto b = platform_->find(device_name(to));
        return platform_->link(platform_->next_edge(*a, *b)).kind;
    };
    auto peer_copy = [&](int from, int to, int stream, bool blocking, std::uint64_t bytes) {
        Op op = copy_op(CopyDirection::kDeviceToHost, bytes, stream, blocking);
        op.gpu = from;
        op.peer_gpu = to;
        if (first_hop(from, to) == topology::LinkKind::kNvlink) {
            op.request_bytes = static_cast<std::uint32_t>(params.nvlink.max_payload.value);
        }
        return op;
    };
    const std::string route = topology::to_string(first_hop(src, dst));
    const auto row = [](std::string variant, double ps, int directions, std::string note, const ProgramOutcome& o) {
        return make_row(std::move(variant), ps, directions, with_note(std::move(note), o.fast_forward));
    };
    const bool on = (po.access == "on" || po.access == "both") && refusal.empty();
    const bool off = po.access == "off" || po.access == "both" || !refusal.empty();
    if (on) {
        const auto build = [&](std::uint64_t bytes) {
            Program prog;
            prog.ops.push_back(peer_copy(src, dst, 0, !both, bytes));
            if (both) {
                prog.ops.push_back(peer_copy(dst, src, 1, false, bytes));
                prog.ops.push_back(simple_op(Op::Kind::kSynchronize));
            }
            return prog;
        };
        const ProgramOutcome o = execute(params, sized_family(params, spec.bytes, 1, default_warmup(params), build));
        take_main(o);
        result.rows.push_back(row("peer=on", o.elapsed_ps, both ? 2 : 1, "peer access enabled: writes over " + route, o));
    }
    if (off) {
        // Peer access off: the runtime stages through pinned host buffers, chunk by chunk: a
        // device-to-host copy on the source, then a host-to-device copy on the destination;
        // each bounce buffer is a stream of its own, so chunks overlap.
        const std::uint64_t chunk = params.pageable.bounce_size.value;
        const auto buffers = static_cast<int>(params.pageable.bounce_buffers);
        const std::uint64_t chunks = (spec.bytes + chunk - 1) / chunk;
        // Validation refuses more; the check keeps a case built in code from exhausting memory.
        if (chunks > core::limits::kMaxCasePieces) {
            throw std::invalid_argument(trace_label_ + ": " + std::to_string(chunks) + " staging chunks; at most " +
                                        std::to_string(core::limits::kMaxCasePieces));
        }
        const std::vector<std::pair<int, int>> ways = both ? std::vector<std::pair<int, int>>{{src, dst}, {dst, src}}
                                                           : std::vector<std::pair<int, int>>{{src, dst}};
        const auto build = [&](std::uint64_t bytes) {
            Program prog;
            for (std::uint64_t k = 0; k * chunk < bytes; ++k) {
                const std::uint64_t n = std::min(chunk, bytes - k * chunk);
                for (std::size_t w = 0; w < ways.size(); ++w) {
                    const int stream = static_cast<int>(w) * buffers + static_cast<int>(k % static_cast<std::uint64_t>(buffers));
                    Op down = copy_op(CopyDirection::kDeviceToHost, n, stream, false);
                    down.gpu = ways[w].first;
                    Op up = copy_op(CopyDirection::kHostToDevice, n, stream, false);
                    up.gpu = ways[w].second;
                    prog.ops.push_back(down);
                    prog.ops.push_back(up);
                }
            }
            prog.ops.push_back(simple_op(Op::Kind::kSynchronize));
            return prog;
        };
        // A level adds whole rounds of the bounce buffers, so that streams keep their turns.
        const std::uint64_t round = chunk * static_cast<std::uint64_t>(buffers);
        const ProgramOutcome o =
            execute(params, sized_family(params, spec.bytes, round, std::max(default_warmup(params), 2 * round), build));
        if (!on) take_main(o);
        const std::string why = refusal.empty() ? "peer access disabled" : "refused (" + refusal + ")";
        result.rows.push_back(row(refusal.empty() ? "peer=off" : "peer=refused", o.elapsed_ps, both ? 2 : 1,
                                  why + ": staged through host in " + std::to_string(chunks) + " chunks", o));
    }
}

void Simulator::run_third_party(const config::ModelParams& params, const CaseSpec& spec, CaseResult& result,
                                const std::function<void(const ProgramOutcome&)>& take_main) {
    const auto cards = devices_of_kind(topology::NodeKind::kEndpoint);
    const auto gpus = devices_of_kind(topology::NodeKind::kGpu);
    if (cards.empty() || gpus.empty()) {
        throw std::invalid_argument("third_party_dma needs a platform with a capture card (an endpoint) and a GPU, "
                                    "e.g. radar-switch or radar-rootports; " + platform_->name() + " has none");
    }
    const int card = cards.front();
    const int gpu = gpus.front();
    const auto row = [](std::string variant, double ps, std::string note, const ProgramOutcome& o) {
        return make_row(std::move(variant), ps, 1, with_note(std::move(note), o.fast_forward));
    };
    // Direct: the card's DMA engine writes the frame into GPU memory through the GPU's BAR,
    // window by window when the BAR aperture is smaller than the frame (the driver remaps it).
    const std::uint64_t aperture = params.gpu.bar_aperture.value;
    const std::uint64_t window = aperture == 0 ? spec.bytes : aperture;
    if ((spec.bytes + window - 1) / window > core::limits::kMaxCasePieces) {
        throw std::invalid_argument(trace_label_ + ": " + std::to_string((spec.bytes + window - 1) / window) +
                                    " BAR windows; at most " + std::to_string(core::limits::kMaxCasePieces));
    }
    const std::uint64_t windows = (spec.bytes + window - 1) / window;
    const auto direct = [&](std::uint64_t bytes) {
        Program prog;
        const std::uint64_t w = aperture == 0 ? bytes : aperture;
        for (std::uint64_t done = 0; done < bytes; done += w) {
            if (done > 0) prog.ops.push_back(simple_op(Op::Kind::kCpuWork, params.gpu.bar_remap));
            Op op = copy_op(CopyDirection::kDeviceToHost, std::min(w, bytes - done), 0, true);
            op.gpu = card;
            op.peer_gpu = gpu;
            prog.ops.push_back(op);
        }
        return prog;
    };
    // A level adds whole BAR windows.
    const ProgramOutcome o = execute(
        params, sized_family(params, spec.bytes, aperture == 0 ? 1 : aperture,
                             std::max(default_warmup(params), 2 * aperture), direct));
    take_main(o);
    result.rows.push_back(row("", o.elapsed_ps, "card writes GPU memory through the BAR" +
                                                    (windows > 1 ? " in " + std::to_string(windows) + " aperture windows" : std::string()),
                              o));
    // Via host: the card writes pinned host memory, then the GPU copies it in.
    const auto via_host = [&](std::uint64_t bytes) {
        Program prog;
        Op to_host = copy_op(CopyDirection::kDeviceToHost, bytes, 0, true);
        to_host.gpu = card;
        prog.ops.push_back(to_host);
        Op to_gpu = copy_op(CopyDirection::kHostToDevice, bytes, 0, true);
        to_gpu.gpu = gpu;
        prog.ops.push_back(to_gpu);
        return prog;
    };
    const ProgramOutcome h = execute(params, sized_family(params, spec.bytes, 1, default_warmup(params), via_host));
    result.rows.push_back(row("via_host", h.elapsed_ps, "card writes pinned host memory, then cudaMemcpy H2D", h));
}

CaseResult Simulator::run_flows(const config::ModelParams& params, const std::vector<config::FlowSpec>& flows,
                                const topology::Platform* platform, const std::string& label,
                                const std::string& origin) {
    if (!failed_.empty()) throw SimulationError(refusal(failed_));
    links_from_ = platform;
    trace_label_ = label.empty() ? std::to_string(flows.size()) + " flows" : label;
    origin_ = origin;
    const auto gpus = devices_of_kind(topology::NodeKind::kGpu);
    const auto cards = devices_of_kind(topology::NodeKind::kEndpoint);
    // The CPU thread issues each flow when its start time comes, on a stream of its own.
    std::vector<std::size_t> order(flows.size());
    for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return flows[a].start.ps < flows[b].start.ps; });
    std::vector<std::size_t> op_of(flows.size());
    // Flow i moves sizes[i] bytes.
    const auto build = [&](const std::vector<std::uint64_t>& sizes) {
        Program prog;
        for (const std::size_t i : order) {
            const auto& f = flows[i];
            if (f.start.ps > 0) prog.ops.push_back(simple_op(Op::Kind::kReleaseAt, f.start));
            Op op = copy_op(f.direction == "h2d" ? CopyDirection::kHostToDevice : CopyDirection::kDeviceToHost, sizes[i],
                            static_cast<int>(i), false);
            op.gpu = gpus.at(static_cast<std::size_t>(f.device));
            if (f.strategy == "peer") {
                op.direction = CopyDirection::kDeviceToHost;
                op.peer_gpu = gpus.at(static_cast<std::size_t>(f.peer_device));
            } else if (f.strategy == "third_party_dma") {
                op.direction = CopyDirection::kDeviceToHost;
                op.peer_gpu = op.gpu;
                op.gpu = cards.at(0);
            }
            op_of[i] = prog.ops.size();
            prog.ops.push_back(op);
        }
        prog.ops.push_back(simple_op(Op::Kind::kSynchronize));
        return prog;
    };
    // The family: every flow grows in proportion to its size (k_i periods per level, k_i its
    // size over the smallest flow's), so that their ratio, and the phases in which they share
    // links, keep their shape; flow i moves r_i + m k_i U bytes.
    ProgramFamily family;
    std::vector<std::uint64_t> real(flows.size()), slope(flows.size(), 1), rest(flows.size(), 0);
    std::uint64_t smallest = ~0ULL;
    for (std::size_t i = 0; i < flows.size(); ++i) {
        real[i] = flows[i].size;
        smallest = std::min(smallest, real[i]);
    }
    const std::uint64_t unit = transfer_period(params, 1);
    family.make = [&build, real](std::uint64_t) { return build(real); };
    if (unit != 0 && smallest > 0 && !flows.empty()) {
        std::uint64_t target = ~0ULL;
        for (std::size_t i = 0; i < flows.size(); ++i) {
            slope[i] = real[i] / smallest;
            target = std::min(target, real[i] / (slope[i] * unit));
        }
        for (std::size_t i = 0; i < flows.size(); ++i) rest[i] = real[i] - target * slope[i] * unit;
        family.target = target;
        family.scalable = target > 0;
        family.min_level = std::max<std::uint64_t>(1, (default_warmup(params) + unit - 1) / unit);
        const auto sizes_at = [slope, rest, unit](std::uint64_t m) {
            std::vector<std::uint64_t> sizes(slope.size());
            for (std::size_t i = 0; i < sizes.size(); ++i) sizes[i] = rest[i] + m * slope[i] * unit;
            return sizes;
        };
        family.make = [&build, sizes_at](std::uint64_t m) { return build(sizes_at(m)); };
        family.describe = [sizes_at](std::uint64_t m) {
            std::string d;
            for (const auto b : sizes_at(m)) d += (d.empty() ? "" : "+") + core::to_string(core::Bytes{b});
            return d;
        };
    }
    const ProgramOutcome o = execute(params, family);
    CaseResult result;
    result.links = o.links;
    result.host_memory_bytes = o.host_memory_bytes;
    result.fast_forward = o.fast_forward;
    for (std::size_t i = 0; i < flows.size(); ++i) {
        result.rows.push_back(make_row("flow=" + flows[i].name,
                                       o.timings[op_of[i]].end_ps - static_cast<double>(flows[i].start.ps), 1,
                                       with_note("started at " + core::to_string(flows[i].start) + " with " +
                                                     std::to_string(flows.size() - 1) + " other flows",
                                                 o.fast_forward)));
    }
    result.time_ps = o.elapsed_ps;
    return result;
}

std::string Simulator::device_name(int device) const { return top_->device(static_cast<std::size_t>(device)).basename(); }

CaseResult Simulator::run(const config::ModelParams& params, const std::string& strategy, const std::string& direction,
                          std::uint64_t bytes) {
    return run(params, CaseSpec{strategy, direction, bytes, config::StrategyOptions{}, {}});
}

CaseResult Simulator::run(const config::ModelParams& params, const CaseSpec& spec) {
    if (!strategy_modelled(spec.strategy)) {
        throw std::invalid_argument("strategy '" + spec.strategy + "' is not modelled in this version (modelled: " +
                                    modelled_strategies() + ")");
    }
    if (spec.bytes == 0) throw std::invalid_argument("a copy of 0 bytes");
    if (!failed_.empty()) throw SimulationError(refusal(failed_));
    links_from_ = spec.platform;
    trace_label_ = spec.label.empty()
                       ? spec.strategy + " " + spec.direction + " " + core::to_string(core::Bytes{spec.bytes})
                       : spec.label;
    origin_ = spec.origin;
    const auto dirs = directions_of(spec.direction);
    const int ndirs = static_cast<int>(dirs.size());
    const std::string& st = spec.strategy;
    if ((st == "duplex" || st == "async_overlap") && ndirs != 2) {
        throw std::invalid_argument(st + " moves both directions");
    }
    if (st == "periodic" && spec.direction != "h2d") throw std::invalid_argument("periodic frames go host to device");

    CaseResult result;
    auto take_main = [&](const ProgramOutcome& o) {
        result.links = o.links;
        result.read_requests = o.read_requests;
        result.writes = o.writes;
        result.peak_outstanding_reads = o.peak_outstanding_reads;
        result.host_memory_bytes = o.host_memory_bytes;
        result.fast_forward = o.fast_forward;
    };
    const auto row = make_row;
    // Rows of a fast-forwarded program say so at the end of their note.
    const auto sim_row = [](std::string variant, double ps, int directions, std::string note, const ProgramOutcome& o) {
        return make_row(std::move(variant), ps, directions, with_note(std::move(note), o.fast_forward));
    };

    const auto& hb = spec.options.host_buffer;
    const bool host_placed = st == "pinned" || st == "pageable" || st == "registered";
    const bool setup_only = (st == "pinned" && spec.options.pinned.setup_only) ||
                            (st == "registered" && spec.options.registered.setup_only);
    // A whole number of pages off leaves every TLP where it was (requests never cross 4 KiB).
    constexpr std::uint64_t kPageBoundary = 4096;
    if (host_placed && !setup_only && (hb.offset.value % kPageBoundary != 0 || hb.fresh)) {
        // Host buffers off a page boundary (TLPs split at other addresses) and never-touched
        // pageable memory (page faults inside the copy) have no mechanism here yet.
        result.rows.push_back(not_modelled("", ndirs, hb.fresh ? "page faults of never-touched pageable memory"
                                                               : "a host buffer off a page boundary (TLP alignment)"));
        result.time_ps = 0.0;
        return result;
    }
    if (st == "pinned" || (st == "duplex" && spec.options.duplex.host_memory == "pinned")) {
        if (!setup_only) {
            const auto build = [&](std::uint64_t bytes) {
                Program p = pinned_program(dirs, bytes);
                add_compute(p, spec.options.compute);
                return p;
            };
            const Program prog = build(spec.bytes);
            const bool compute = st == "duplex" && spec.options.compute.duration.ps > 0;
            const ProgramOutcome o =
                execute(params, sized_family(params, spec.bytes, 1, default_warmup(params), build));
            take_main(o);
            // With a compute kernel the program lasts as long as the kernel: the transfer ends
            // when its last copy does.
            double end = o.elapsed_ps;
            if (compute) {
                end = 0.0;
                for (std::size_t i = 0; i < prog.ops.size(); ++i) {
                    if (prog.ops[i].kind == Op::Kind::kCopy) end = std::max(end, o.timings[i].end_ps);
                }
            }
            result.rows.push_back(sim_row("", end, ndirs,
                                          compute ? "beside a compute kernel, which in this version uses no SMs or memory bandwidth"
                                                  : "",
                                          o));
        }
        if (st == "pinned") {
            // Allocations of fewer whole pages than the pool's size are carved out of the
            // driver's pinned pool; larger ones come from the OS and are zeroed, pinned and
            // mapped page by page. Measured on the H100 (results/h100-sxm/isolating/pinned-pool):
            // 2 MiB - 4 KiB takes 3-5 us, 2 MiB - 1 B (512 pages, as 2 MiB) about 1 ms.
            const std::uint64_t page = params.cpu.page_size.value;
            const std::uint64_t rounded = (spec.bytes + page - 1) / page * page;
            const bool pooled = rounded < params.cpu.alloc_pinned_pool.value;
            const auto alloc = pooled ? params.cpu.alloc_pinned_pool_fixed
                                      : pages_cost(spec.bytes, params.cpu, params.cpu.alloc_pinned_fixed,
                                                   params.cpu.alloc_pinned_per_page);
            result.rows.push_back(row("setup=mallochost", static_cast<double>(alloc.ps), 1,
                                      pooled ? "cudaMallocHost(size_bytes) from the driver's pinned pool"
                                             : "cudaMallocHost(size_bytes): fixed + per-page cost"));
        }
    } else if (st == "pageable" || st == "duplex") {
        const bool cached = spec.bytes <= params.cpu.llc_size.value;
        const std::uint64_t bounce = params.pageable.bounce_size.value;
        // Staging settles once every bounce buffer has been filled and drained once.
        const std::uint64_t warmup = std::max(default_warmup(params),
                                              (static_cast<std::uint64_t>(params.pageable.bounce_buffers) + 1) * bounce);
        const ProgramOutcome o = execute(
            params, sized_family(params, spec.bytes, bounce, warmup,
                                 [&](std::uint64_t bytes) { return pageable_program(dirs, bytes, cached); }));
        take_main(o);
        result.rows.push_back(sim_row("", o.elapsed_ps, ndirs,
                                      st == "duplex" ? "pageable copies are synchronous: one direction after the other" : "",
                                      o));
    } else if (st == "registered" && setup_only) {
        const double reg = static_cast<double>(
            pages_cost(spec.bytes, params.cpu, params.cpu.register_fixed, params.cpu.register_per_page).ps);
        const double unreg = static_cast<double>(
            pages_cost(spec.bytes, params.cpu, params.cpu.unregister_fixed, params.cpu.unregister_per_page).ps);
        result.rows.push_back(row("setup=register", reg, ndirs, "cudaHostRegister: fixed + per-page cost"));
        result.rows.push_back(row("setup=unregister", unreg, ndirs, "cudaHostUnregister: fixed + per-page cost"));
    } else if (st == "registered") {
        const ProgramOutcome o =
            execute(params, sized_family(params, spec.bytes, 1, default_warmup(params),
                                         [&](std::uint64_t bytes) { return pinned_program(dirs, bytes); }));
        take_main(o);
        const double reg = static_cast<double>(
            pages_cost(spec.bytes, params.cpu, params.cpu.register_fixed, params.cpu.register_per_page).ps);
        const double unreg = static_cast<double>(
            pages_cost(spec.bytes, params.cpu, params.cpu.unregister_fixed, params.cpu.unregister_per_page).ps);
        const auto k = static_cast<double>(spec.options.registered.reuses);
        result.rows.push_back(sim_row("", o.elapsed_ps, ndirs, "copy of registered memory: the pinned path", o));
        result.rows.push_back(row("setup=register", reg, ndirs, "cudaHostRegister: fixed + per-page cost"));
        result.rows.push_back(row("setup=unregister", unreg, ndirs, "cudaHostUnregister: fixed + per-page cost"));
        result.rows.push_back(sim_row("amortised_" + std::to_string(spec.options.registered.reuses),
                                      (reg + k * o.elapsed_ps + unreg) / k, ndirs, "(register + K copies + unregister) / K", o));
    } else if (st == "async_overlap") {
        const auto n = static_cast<std::uint64_t>(spec.options.async_overlap.streams);
        const core::Duration kernel = spec.options.async_overlap.kernel;
        // Depth-first issues chunk by chunk; breadth-first every H2D, then every kernel, then
        // every D2H. Engines and the compute queue take work in the order it was issued.
        const bool breadth_first = spec.options.async_overlap.issue == "breadth_first";
        const auto overlap = [&](std::uint64_t bytes) {
            Program prog;
            auto issue = [&](std::uint64_t s, int stage) {
                const std::uint64_t chunk = bytes / n + (s < bytes % n ? 1 : 0);
                const int stream = static_cast<int>(s);
                if (stage == 0) prog.ops.push_back(copy_op(CopyDirection::kHostToDevice, chunk, stream, false));
                if (stage == 1 && kernel.ps > 0) {
                    prog.ops.push_back(kernel_op(core::Duration{kernel.ps / static_cast<std::int64_t>(n)}, stream));
                }
                if (stage == 2) prog.ops.push_back(copy_op(CopyDirection::kDeviceToHost, chunk, stream, false));
            };
            for (std::uint64_t outer = 0; outer < (breadth_first ? 3 : n); ++outer) {
                for (std::uint64_t inner = 0; inner < (breadth_first ? n : 3); ++inner) {
                    if (breadth_first) {
                        issue(inner, static_cast<int>(outer));
                    } else {
                        issue(outer, static_cast<int>(inner));
                    }
                }
            }
            prog.ops.push_back(simple_op(Op::Kind::kSynchronize));
            return prog;
        };
        const auto serial = [&](std::uint64_t bytes) {
            Program prog;
            prog.ops.push_back(copy_op(CopyDirection::kHostToDevice, bytes, 0, false));
            if (kernel.ps > 0) prog.ops.push_back(kernel_op(kernel, 0));
            prog.ops.push_back(copy_op(CopyDirection::kDeviceToHost, bytes, 0, false));
            prog.ops.push_back(simple_op(Op::Kind::kSynchronize));
            return prog;
        };
        // Each chunk must grow by whole transfer periods from one level to the next.
        const std::uint64_t chunked = transfer_period(params, 1) * n;
        const ProgramOutcome o = execute(params, sized_family(params, spec.bytes, chunked, default_warmup(params) * n, overlap));
        take_main(o);
        const ProgramOutcome s = execute(params, sized_family(params, spec.bytes, 1, default_warmup(params), serial));
        result.rows.push_back(sim_row("", o.elapsed_ps, 2,
                                      std::to_string(n) + " streams, H2D -> kernel -> D2H per chunk, issued " +
                                          (breadth_first ? "breadth-first" : "depth-first") + " to " +
                                          std::to_string(params.dma.engines) + " copy engine(s)",
                                      o));
        result.rows.push_back(sim_row("serial", s.elapsed_ps, 2, "one stream: H2D, kernel, D2H of the whole size", s));
    } else if (st == "zero_copy" && spec.options.zero_copy.pattern == "chase") {
        const auto& z = spec.options.zero_copy;
        if (z.memory == "device") {
            result.rows.push_back(not_modelled("", 1, "loads from GPU memory (L2, HBM) are not part of the model"));
            result.time_ps = 0.0;
            return result;
        }
        // What the model says today: each hop is one 32-byte read of host memory, the next
        // issued when the last returns. It shares its round trip with the copy engines' reads.
        Program prog;
        Op op;
        op.kind = Op::Kind::kMappedKernel;
        op.blocking = false;
        op.mapped.request_bytes = gpu::kSectorBytes;
        op.mapped.reads_in_flight = 1;
        op.mapped.read_bytes = static_cast<std::uint64_t>(z.hops) * gpu::kSectorBytes;
        prog.ops.push_back(op);
        prog.ops.push_back(simple_op(Op::Kind::kSynchronize));
        const ProgramOutcome o = execute(params, prog);
        take_main(o);
        result.rows.push_back(row("", o.elapsed_ps / static_cast<double>(z.hops), 1,
                                  "time is one load: " + std::to_string(z.hops) +
                                      " dependent 32-byte reads of host memory, one in flight"));
    } else if (st == "zero_copy") {
        const auto build = [&](std::uint64_t bytes) {
            Program p;
            p.ops.push_back(mapped_kernel_op(dirs, bytes, spec.options.zero_copy, params.gpu, params.cpu.cache_line));
            p.ops.push_back(simple_op(Op::Kind::kOpenGate));
            p.ops.push_back(simple_op(Op::Kind::kSynchronize));
            add_compute(p, spec.options.compute);
            return p;
        };
        const Program prog = build(spec.bytes);
        const bool compute = spec.options.compute.duration.ps > 0;
        const std::size_t mapped = compute ? 1 : 0;  // add_compute puts the kernel first
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
        const std::uint64_t warmup = op.mapped.read_bytes == 0 && !lone_partial_writes
                                         ? kStoreOnlyWarmup
                                         : std::max(default_warmup(params), 4 * window);
        const ProgramOutcome o = execute(params, sized_family(params, spec.bytes, w.useful_bytes, warmup, build));
        take_main(o);
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
        result.rows.push_back(sim_row("", gated_ps(prog, o, mapped), ndirs,
                                      shape + (compute ? "; beside a compute kernel, which in this version uses no SMs or memory bandwidth"
                                                       : ""),
                                      o));
    } else if (st == "cpu_mapped") {
        if (ndirs != 1) throw std::invalid_argument("cpu_mapped moves one direction at a time");
        const int gpu = devices_of_kind(topology::NodeKind::kGpu).front();
        const auto build = [&](std::uint64_t bytes) {
            Program prog;
            Op op;
            op.kind = Op::Kind::kCpuMapped;
            op.direction = dirs.front();
            op.bytes = bytes;
            op.gpu = gpu;
            prog.ops.push_back(op);
            return prog;
        };
        const ProgramOutcome o = execute(params, sized_family(params, spec.bytes, 1, default_warmup(params), build));
        take_main(o);
        result.rows.push_back(sim_row("", o.elapsed_ps, 1,
                                  dirs.front() == CopyDirection::kHostToDevice
                                      ? "CPU stores through a write-combining BAR mapping: 64-byte posted writes"
                                          : "CPU loads through the BAR mapping: uncached, " +
                                                std::to_string(params.cpu.mmio_reads_in_flight) + " in flight",
                                      o));
    } else if (st == "peer") {
        run_peer(params, spec, dirs, result, take_main);
    } else if (st == "third_party_dma") {
        run_third_party(params, spec, result, take_main);
    } else if (st == "periodic") {
        const auto& f = spec.options.periodic;
        const bool from_card = f.via == "fpga_direct" || f.via == "fpga_via_host";
        const auto cards = devices_of_kind(topology::NodeKind::kEndpoint);
        const auto gpus = devices_of_kind(topology::NodeKind::kGpu);
        if (from_card && (cards.empty() || gpus.empty())) {
            throw std::invalid_argument("frames via " + f.via + " need a capture card: platform radar-switch or radar-rootports");
        }
        if (f.count < 1 || f.count > core::limits::kMaxFrames) {
            throw std::invalid_argument(trace_label_ + ": " + std::to_string(f.count) + " frames; 1.." +
                                        std::to_string(core::limits::kMaxFrames));
        }
        const bool cached = spec.bytes <= params.cpu.llc_size.value;
        // The first `count` frames, and for each the op whose end is the frame's arrival.
        const auto frames = [&](std::int64_t count, std::vector<std::size_t>& copy_index) {
            Program prog;
            for (std::int64_t i = 0; i < count; ++i) {
                prog.ops.push_back(simple_op(Op::Kind::kReleaseAt, core::Duration{i * f.period.ps}));
                if (f.via == "pageable") {
                    prog.ops.push_back(staged_op(CopyDirection::kHostToDevice, spec.bytes, cached));
                } else if (f.via == "zero_copy") {
                    Op op = mapped_kernel_op({CopyDirection::kHostToDevice}, spec.bytes, spec.options.zero_copy, params.gpu, params.cpu.cache_line);
                    op.blocking = true;
                    prog.ops.push_back(op);
                } else if (from_card) {
                    // The card writes the frame into GPU memory, or into pinned host memory and the
                    // GPU copies it in.
                    Op card = copy_op(CopyDirection::kDeviceToHost, spec.bytes, 0, true);
                    card.gpu = cards.front();
                    if (f.via == "fpga_direct") card.peer_gpu = gpus.front();
                    prog.ops.push_back(card);
                    if (f.via == "fpga_via_host") {
                        Op in = copy_op(CopyDirection::kHostToDevice, spec.bytes, 0, true);
                        in.gpu = gpus.front();
                        prog.ops.push_back(in);
                    }
                } else {
                    // With processing, the copy is queued (cudaMemcpyAsync) and the kernel behind it.
                    prog.ops.push_back(copy_op(CopyDirection::kHostToDevice, spec.bytes, 0, f.kernel.ps == 0));
                }
                // Processing: the kernel runs after the frame's copy on the same stream and the
                // application waits for it, as dmaprobe does, so the frame is done when it ends and
                // a frame that overruns delays the next one's start (a backlog).
                if (f.kernel.ps > 0) {
                    prog.ops.push_back(kernel_op(f.kernel, 0));
                    prog.ops.push_back(simple_op(Op::Kind::kSynchronize));
                }
                copy_index.push_back(prog.ops.size() - 1);
            }
            return prog;
        };
        const auto latencies = [&](const ProgramOutcome& out, const std::vector<std::size_t>& copy_index) {
            std::vector<double> l;
            for (std::size_t i = 0; i < copy_index.size(); ++i) {
                l.push_back(out.timings[copy_index[i]].end_ps - static_cast<double>(static_cast<std::int64_t>(i) * f.period.ps));
            }
            return l;
        };
        std::optional<ProgramOutcome> reused;
        std::vector<double> latency;
        // Frame reuse: runs of 2, 3 and 4 frames. Frame 0 starts from a freshly configured model;
        // when each later frame arrives before the next release (the model at rest in between)
        // and frames 1 to 3 took the same time, every later frame is frame 3 again: its latency
        // repeats and every count grows by the same step per frame (checked over the three runs).
        constexpr std::int64_t kFirst = 2;
        if (fidelity_ == Fidelity::kFast && Tracer::active() == nullptr && f.count > 3 * (kFirst + 1)) {
            std::array<ProgramOutcome, 3> at;
            std::vector<std::size_t> index;
            for (std::int64_t k = 0; k < 3; ++k) {
                index.clear();
                at[static_cast<std::size_t>(k)] = execute(params, frames(kFirst + k, index));
            }
            const std::vector<double> seen = latencies(at[2], index);
            bool steady = true;
            for (std::size_t i = 0; i < seen.size(); ++i) {
                if (!(seen[i] < static_cast<double>(f.period.ps))) steady = false;
                if (i >= 2 && std::fabs(seen[i] - seen[i - 1]) > kTolerance.absolute_ps) steady = false;
            }
            Levels levels;
            levels.first = kFirst;
            levels.step = 1;
            levels.target = static_cast<std::uint64_t>(f.count);
            Extrapolation x = extrapolate(at, levels, kTolerance);
            if (steady && x.outcome) {
                reused = std::move(x.outcome);
                latency = seen;
                latency.resize(static_cast<std::size_t>(f.count), seen.back());
                reused->fast_forward = "fast-forwarded: frames " + std::to_string(seen.size() + 1) + " to " +
                                       std::to_string(f.count) + " reuse frame " + std::to_string(seen.size()) +
                                       "'s result (the model is at rest before each frame)";
            }
        }
        ProgramOutcome o;
        if (reused) {
            o = std::move(*reused);
        } else {
            std::vector<std::size_t> index;
            o = execute(params, frames(f.count, index));
            latency = latencies(o, index);
        }
        take_main(o);
        const double deadline = static_cast<double>((f.deadline.ps > 0 ? f.deadline : f.period).ps);
        const auto misses = std::count_if(latency.begin(), latency.end(), [&](double l) { return l > deadline; });
        RowResult main = sim_row("", core::percentile(latency, 0.5), 1,
                                 std::to_string(f.count) + " frames via " + f.via + ", per-frame latency from release", o);
        main.p10_ps = core::percentile(latency, 0.1);
        main.p90_ps = core::percentile(latency, 0.9);
        main.min_ps = *std::min_element(latency.begin(), latency.end());
        main.max_ps = *std::max_element(latency.begin(), latency.end());
        result.rows.push_back(main);
        result.rows.push_back(sim_row("p99", core::percentile(latency, 0.99), 1, "99th percentile frame latency", o));
        result.rows.push_back(sim_row("misses", deadline, 1,
                                      std::to_string(misses) + " of " + std::to_string(f.count) + " frames missed the deadline",
                                      o));
        // Sustained: the whole stream's time per frame, so gbps is the rate the GPU kept up.
        result.rows.push_back(sim_row("sustained", o.elapsed_ps / static_cast<double>(f.count), 1,
                                      "time of all frames / frames: gbps is the sustained rate", o));
        // Backlog, defined as dmaprobe defines it: the last quarter's median latency against
        // the first quarter's.
        const std::size_t quarter = std::max<std::size_t>(1, latency.size() / 4);
        const std::vector<double> first(latency.begin(), latency.begin() + static_cast<std::ptrdiff_t>(quarter));
        const std::vector<double> last(latency.end() - static_cast<std::ptrdiff_t>(quarter), latency.end());
        const double first_ps = core::percentile(first, 0.5);
        RowResult backlog = row("backlog", core::percentile(last, 0.5), 1, "");
        backlog.p10_ps = core::percentile(last, 0.1);
        backlog.p90_ps = core::percentile(last, 0.9);
        backlog.min_ps = *std::min_element(last.begin(), last.end());
        backlog.max_ps = *std::max_element(last.begin(), last.end());
        const double growth_ps = backlog.time_ps - first_ps;
        char buf[160];
        std::snprintf(buf, sizeof buf, "last quarter of frames; first_quarter_us=%.4g growth_us=%.4g backlog=%s",
                      first_ps * 1e-6, growth_ps * 1e-6, growth_ps > static_cast<double>(f.period.ps) ? "yes" : "no");
        backlog.note = with_note(buf, o.fast_forward);
        result.rows.push_back(backlog);
    }
    result.time_ps = result.rows.front().time_ps;
    return result;
}

}  // namespace dmasim::sim

// libsystemc's own main() calls sc_main(); dmasim and its tests have their own main() and
// elaborate through Simulator instead, but the shared library still needs the symbol.
int sc_main(int /*argc*/, char* /*argv*/[]) {
    std::fprintf(stderr, "dmasim: sc_main is not an entry point of this program\n");
    return 1;
}
