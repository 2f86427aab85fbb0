#include "dmasim/sim/simulator.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <functional>
#include <limits>
#include <map>
#include <optional>
#include <stdexcept>

#include "dmasim/core/limits.h"
#include "dmasim/core/results.h"
#include "dmasim/gpu/coalescing.h"
#include "dmasim/sim/fast_forward.h"
#include "dmasim/sim/host_runtime.h"
#include "dmasim/sim/platform_top.h"
#include "dmasim/sim/trace.h"
#include "dmasim/strategies/programs.h"
#include "dmasim/strategies/registry.h"
#include "dmasim/topology/platform_file.h"

namespace dmasim::sim {

namespace {
// A case's own platform is the caller's, alive only for the call that names it: once that call
// returns, a program executed directly (Simulator::execute) takes its links from its parameters
// again, never from a platform that may be gone.
class PlatformOfTheCall {
public:
    explicit PlatformOfTheCall(const topology::Platform*& links_from) : links_from_(links_from) {}
    PlatformOfTheCall(const PlatformOfTheCall&) = delete;
    PlatformOfTheCall& operator=(const PlatformOfTheCall&) = delete;
    ~PlatformOfTheCall() { links_from_ = nullptr; }

private:
    const topology::Platform*& links_from_;
};
}  // namespace

namespace {

using strategies::copy_op;
using strategies::make_row;
using strategies::simple_op;
using strategies::with_note;

bool g_elaborated = false;

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
    // Every call as dear as the dearest kind (a plain, a peer or a staged peer call, or a staged piece,
    // an event, a wait and a device switch), every wait as long as a cross-GPU try, every copy held
    // as a staged copy's first piece enters its GPU, turning its engine from another stream, waiting
    // the front end's turns, its engine's hold after a copy into host memory and its wait for that
    // copy's held release.
    const double fixed_ps = static_cast<double>(rt.call_overhead.ps + rt.peer_call.ps + rt.peer_gpu_call.ps + rt.peer_staged_call.ps +
                                                rt.peer_staged_piece_call.ps + rt.record_call.ps + rt.stream_wait_call.ps +
                                                rt.cross_device_wait_call.ps + rt.set_device_call.ps + rt.cross_device_try.ps +
                                                rt.sync_latency.ps + rt.stream_wait_latency.ps +
                                                rt.poll_period.ps + rt.kernel_launch_latency.ps + rt.staged_entry_hold.ps +
                                                std::max(p.dma.launch_latency.ps, p.dma.queued_launch_latency.ps) +
                                                p.dma.channel_turn.ps + p.gpu.front_end_turn_max.ps +
                                                std::max({p.dma.host_write_hold.ps, p.dma.host_write_hold_beside_reads.ps, p.dma.host_write_hold_fetching.ps}) +
                                                p.dma.release_wait_max.ps) +
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
                total_ps += fixed_ps + dma_ps(bytes) + bytes / p.cpu.memcpy_bandwidth.bytes_per_s * 1e12;
                break;
            case Op::Kind::kStagedCopy: {
                const double cpu_bps = std::min({p.cpu.memcpy_bandwidth.bytes_per_s, p.cpu.memcpy_bandwidth_cached.bytes_per_s,
                                                 p.cpu.copy_out_bytes_per_s(),
                                                 p.host_memory.bandwidth.bytes_per_s});
                // Out of the GPU its writes may land on lines a core holds (held_write_bandwidth).
                const double held_bps = p.root_complex.held_write_bandwidth.bytes_per_s;
                total_ps += ceil_div(bytes, static_cast<double>(p.pageable.piece(op.direction == sim::CopyDirection::kHostToDevice))) * fixed_ps + dma_ps(bytes) +
                            2.0 * bytes / cpu_bps * 1e12 + (held_bps > 0.0 ? bytes / held_bps * 1e12 : 0.0);
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
            case Op::Kind::kRecord:
                break;
            case Op::Kind::kWaitFor:
                total_ps += fixed_ps + static_cast<double>(rt.cross_device_wait.ps);
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

bool strategy_modelled(const std::string& strategy) { return strategies::find(strategy) != nullptr; }

const char* modelled_strategies() {
    static const std::string names = [] {
        std::string out;
        for (const auto& s : strategies::table()) out += (out.empty() ? "" : ", ") + std::string(s.name);
        return out;
    }();
    return names.c_str();
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
    const std::uint64_t extent = program.host_write_extent > 0 ? program.host_write_extent : host_write_extent(program);
    for (const auto& b : top_->bridges()) b->set_write_extent(extent);
    rt.submit(program);
    try {
        top_->fabric().set_limit(kernel_now() + static_cast<sc_dt::uint64>(budget));
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
    for (int i = 0; i < 1000 && !top_->idle(); ++i) {
        const sc_core::sc_time step(1, sc_core::SC_US);
        top_->fabric().set_limit(kernel_now() + step.value());
        sc_core::sc_start(step);
    }
    if (!top_->idle()) fail("the model did not come to rest after the program ended (" + top_->busy_part() + " still busy)");
    if (Tracer* tr = Tracer::active()) {
        top_->flush_trace();
        tr->span(tr->track("cases", "case"), trace_label_, t0, t0 + rt.elapsed_ps());
    }

    ProgramOutcome out;
    out.elapsed_ps = rt.elapsed_ps();
    out.timings = rt.timings();
    const MemoryStats& hm = top_->host_memory().stats();
    out.host_memory_bytes = hm.bytes_read + hm.bytes_written;
    out.host_read_bytes = hm.bytes_read;
    out.host_written_bytes = hm.bytes_written;
    for (const auto& b : top_->bridges()) {
        out.memory_wait_ps += b->stats().memory_wait_ps;
        out.longest_release_hold_ps = std::max(out.longest_release_hold_ps, b->stats().longest_release_hold_ps);
    }
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

// An application's wait on another GPU's event passes at a try on the grid of its call
// (cross_device_wait_pass): a step function of the size, which three levels may
// happen to see as a straight line and extrapolate a period off.
bool tries_on_a_call_grid(const Program& p, const config::ModelParams& params) {
    if (params.runtime.poll_period.ps <= 0) return false;
    return std::any_of(p.ops.begin(), p.ops.end(), [&p](const Op& op) {
        return op.kind == Op::Kind::kWaitFor && !op.queued_by_runtime && p.ops[op.after].gpu != op.gpu;
    });
}

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

}  // namespace

ProgramOutcome Simulator::execute(const config::ModelParams& params, const ProgramFamily& family) {
    if (fidelity_ == Fidelity::kTlp || Tracer::active() != nullptr || !family.scalable) {
        return execute(params, family.make(family.target));
    }
    const Program real = family.make(family.target);
    if (tries_on_a_call_grid(real, params)) return execute(params, real);
    // Levels already simulated in an earlier try are not simulated again.
    std::map<std::uint64_t, ProgramOutcome> simulated;
    const auto cost_of_new = [&](const Levels& l) {
        std::uint64_t cost = 0;
        for (int i = 0; i < 3; ++i) {
            if (simulated.count(l.at(i)) == 0) cost += l.at(i);
        }
        return static_cast<double>(cost);
    };
    // Longer warm-ups on later tries, as long as they are worth it: runs that settle late
    // (duplex) or whose steady state has a long period (one block of zero-copy warps) pass then.
    for (const std::uint64_t warmup : {family.min_level, 4 * family.min_level, 16 * family.min_level}) {
        // Any whole number of periods apart would do for an exactly periodic run; a quarter of
        // the warm-up keeps the three levels cheap and still spans many periods. A run whose
        // steady state repeats only every other such step (two phases that line up every second
        // step: partial writes merging at one rate while the link delivers them at another)
        // gets a second try twice as far apart, which reuses what the first simulated.
        const std::uint64_t quarter = std::max<std::uint64_t>(1, warmup / 4);
        for (const std::uint64_t step : {quarter, 2 * quarter}) {
            const auto levels =
                choose_levels(family.target, family.settle_level + warmup, step, std::numeric_limits<double>::infinity());
            const bool affordable =
                levels && cost_of_new(*levels) <= kMaxCostFraction * static_cast<double>(family.target);
            // Longer warm-ups cost more still.
            if (!affordable && step == quarter) return execute(params, real);
            if (!affordable) continue;
            std::array<Program, 3> progs{family.make(levels->at(0)), family.make(levels->at(1)),
                                         family.make(levels->at(2))};
            bool same_ops = true;
            for (const auto& p : progs) same_ops = same_ops && p.ops.size() == real.ops.size();
            if (!same_ops && !repeats_without_fixed_durations(real)) return execute(params, real);
            std::array<ProgramOutcome, 3> at;
            for (std::size_t i = 0; i < 3; ++i) {
                const std::uint64_t level = levels->at(static_cast<int>(i));
                auto it = simulated.find(level);
                if (it == simulated.end()) it = simulated.emplace(level, execute(params, progs[i])).first;
                at[i] = it->second;
            }
            Extrapolation x = extrapolate(at, *levels, kFastForwardTolerance);
            if (!x.outcome) continue;
            if (same_ops && !same_event_order(at, *x.outcome)) continue;
            x.outcome->fast_forward = "fast-forwarded from " + family.describe(levels->at(0)) + ", " +
                                      family.describe(levels->at(1)) + ", " + family.describe(levels->at(2));
            return *x.outcome;
        }
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

std::uint64_t Simulator::io_cache_bytes(const config::ModelParams& params) const {
    // Only where evicting costs something (root_complex.memory_bandwidth, or the ports' shared
    // ports_bandwidth_total) does filling the cache change the run.
    std::uint64_t bytes = 0;
    const auto count = [&](const config::RootComplexParams& rc) {
        if (rc.memory_bandwidth.bytes_per_s > 0.0 || rc.ports_bandwidth_total.bytes_per_s > 0.0) {
            bytes = std::max(bytes, rc.io_cache.value);
        }
    };
    if (links_from_ == nullptr) {
        count(params.root_complex);
        return bytes;
    }
    for (auto [v, end] = boost::vertices(links_from_->graph()); v != end; ++v) count(links_from_->node(*v).bridge);
    return bytes;
}

namespace {
// The level from which a program's writes to host memory have passed a port's I/O cache of
// `cache` bytes (0: they never do): the cache's share of the largest write, `target` levels.
// Past it the writes evict (from io_cache_free_bytes, which is less), and the levels also run
// at the sizes where the case's other rates have settled.
std::uint64_t settle_level(const Program& whole, std::uint64_t cache, std::uint64_t target) {
    const std::uint64_t largest = Simulator::host_write_extent(whole);
    if (largest <= cache) return 0;
    const long double share = static_cast<long double>(cache) / static_cast<long double>(largest);
    return static_cast<std::uint64_t>(std::ceil(share * static_cast<long double>(target)));
}
}  // namespace

std::uint64_t Simulator::host_write_extent(const Program& program) {
    std::uint64_t largest = 0;
    for (const Op& op : program.ops) {
        if (op.kind == Op::Kind::kCopy && op.direction == CopyDirection::kDeviceToHost && op.peer_gpu < 0) {
            largest = std::max(largest, op.host_offset + op.bytes);
        } else if (op.kind == Op::Kind::kMappedKernel) {
            largest = std::max(largest, op.mapped.write_bytes);
        }
    }
    return largest;
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
    // A transfer's writes to host memory run differently once they have filled a port's I/O
    // cache: the warm-up starts where the largest one does, at its share of the size.
    const Program real = build(size);
    if (const std::uint64_t cache = io_cache_bytes(params); cache > 0 && f.scalable) {
        f.settle_level = settle_level(real, cache, f.target);
    }
    // Every level evicts as the real program does: its repetitions pass over the real extent.
    f.make = [build, rest, unit, extent = host_write_extent(real)](std::uint64_t m) {
        Program p = build(rest + m * unit);
        p.host_write_extent = extent;
        return p;
    };
    f.describe = [rest, unit](std::uint64_t m) { return core::to_string(core::Bytes{rest + m * unit}); };
    return f;
}

std::vector<int> Simulator::devices_of_kind(topology::NodeKind kind) const {
    std::vector<int> out;
    for (const auto n : platform_->nodes_of(kind)) out.push_back(top_->device_index(platform_->node(n).name));
    return out;
}

CaseResult Simulator::run_flows(const config::ModelParams& params, const std::vector<config::FlowSpec>& flows,
                                const topology::Platform* platform, const std::string& label,
                                const std::string& origin) {
    if (!failed_.empty()) throw SimulationError(refusal(failed_));
    links_from_ = platform;
    const PlatformOfTheCall call(links_from_);
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
        // As for one transfer (sized_family): the warm-up starts where the largest flow that
        // writes host memory has filled a port's I/O cache.
        const Program whole = build(real);
        const std::uint64_t extent = host_write_extent(whole);
        if (const std::uint64_t cache = io_cache_bytes(params); cache > 0 && family.scalable) {
            family.settle_level = settle_level(whole, cache, target);
        }
        family.make = [&build, sizes_at, extent](std::uint64_t m) {
            Program p = build(sizes_at(m));
            p.host_write_extent = extent;
            return p;
        };
        family.describe = [sizes_at](std::uint64_t m) {
            std::string d;
            for (const auto b : sizes_at(m)) d += (d.empty() ? "" : "+") + core::to_string(core::Bytes{b});
            return d;
        };
    }
    const ProgramOutcome o = execute(params, family);
    CaseResult result;
    result.links = o.links;
    result.links_interval_ps = o.elapsed_ps;
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

// The simulator as the strategies see it (dmasim/strategies/strategy.h).
class SimulatorEngine final : public strategies::Engine {
public:
    explicit SimulatorEngine(Simulator& s) : s_(s) {}
    ProgramOutcome execute(const config::ModelParams& params, const Program& program) override {
        return s_.execute(params, program);
    }
    ProgramOutcome execute(const config::ModelParams& params, const ProgramFamily& family) override {
        return s_.execute(params, family);
    }
    ProgramFamily sized_family(const config::ModelParams& params, std::uint64_t size, std::uint64_t extra,
                               std::uint64_t warmup_bytes, std::function<Program(std::uint64_t)> build) const override {
        return s_.sized_family(params, size, extra, warmup_bytes, std::move(build));
    }
    std::uint64_t default_warmup(const config::ModelParams& params) const override { return s_.default_warmup(params); }
    std::uint64_t transfer_period(const config::ModelParams& params, std::uint64_t extra) const override {
        return s_.transfer_period(params, extra);
    }
    std::vector<int> devices_of_kind(topology::NodeKind kind) const override { return s_.devices_of_kind(kind); }
    std::string device_name(int device) const override { return s_.device_name(device); }
    // The case's own load of the platform where it has one (its bridges' p2p policies and
    // settings), else the elaborated one: the same topology either way.
    const topology::Platform& platform() const override { return s_.links_from_ != nullptr ? *s_.links_from_ : *s_.platform_; }
    Fidelity fidelity() const override { return s_.fidelity_; }
    const std::string& label() const override { return s_.trace_label_; }

private:
    Simulator& s_;
};

CaseResult Simulator::run(const config::ModelParams& params, const CaseSpec& spec) {
    const strategies::Strategy* strategy = strategies::find(spec.strategy);
    if (strategy == nullptr) {
        throw std::invalid_argument("strategy '" + spec.strategy + "' is not modelled in this version (modelled: " +
                                    modelled_strategies() + ")");
    }
    if (spec.bytes == 0) throw std::invalid_argument("a copy of 0 bytes");
    if (!failed_.empty()) throw SimulationError(refusal(failed_));
    links_from_ = spec.platform;
    const PlatformOfTheCall call(links_from_);
    trace_label_ = spec.label.empty()
                       ? spec.strategy + " " + spec.direction + " " + core::to_string(core::Bytes{spec.bytes})
                       : spec.label;
    origin_ = spec.origin;
    CaseResult result;
    strategies::Case c{params, spec, strategies::directions_of(spec.direction), result};
    SimulatorEngine engine(*this);
    strategy->run(engine, c);
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
