// peer: cudaMemcpyPeer between two GPUs, with peer access on (the source's copy engine writes
// into the peer by the route the platform gives: NVLink, a PCIe switch or the root complex) and
// off (the runtime stages through pinned host memory).
#include "dmasim/strategies/programs.h"
#include "dmasim/strategies/registry.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <utility>

#include "dmasim/core/limits.h"
#include "dmasim/topology/platform_file.h"

namespace dmasim::strategies {

void run_peer(Engine& engine, Case& c) {
    const config::ModelParams& params = c.params;
    const CaseSpec& spec = c.spec;
    CaseResult& result = c.result;
    const auto& dirs = c.dirs;
    const auto gpus = engine.devices_of_kind(topology::NodeKind::kGpu);
    const auto& po = spec.options.peer;
    if (static_cast<std::size_t>(std::max(po.src_device, po.dst_device)) >= gpus.size()) {
        throw std::invalid_argument("peer needs GPUs " + std::to_string(po.src_device) + " and " +
                                    std::to_string(po.dst_device) + "; platform " + engine.platform().name() + " has " +
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
    const topology::Platform& platform = engine.platform();
    const topology::PeerPath path =
        topology::peer_path(platform, *platform.find(engine.device_name(src)), *platform.find(engine.device_name(dst)));
    const std::string& refusal = path.refusal;
    if (!refusal.empty() && po.refused == "error") throw std::invalid_argument("peer copy refused: " + refusal);
    // Peer access on: the source's copy engine writes straight into the peer, by the route the
    // graph gives (NVLink when there is one, else through the switch or the root complex).
    auto first_hop = [&](int from, int to) {
        const auto a = platform.find(engine.device_name(from));
        const auto b = platform.find(engine.device_name(to));
        return platform.link(platform.next_edge(*a, *b)).kind;
    };
    auto peer_copy = [&](int from, int to, int stream, bool blocking, std::uint64_t bytes) {
        Op op = copy_op(CopyDirection::kDeviceToHost, bytes, stream, blocking);
        op.gpu = from;
        op.peer_gpu = to;
        op.peer_call = true;
        if (first_hop(from, to) == topology::LinkKind::kNvlink) {
            op.request_bytes = static_cast<std::uint32_t>(params.nvlink.max_payload.value);
        }
        return op;
    };
    const std::string route = topology::to_string(first_hop(src, dst));
    const bool on = (po.access == "on" || po.access == "both") && refusal.empty();
    const bool off = po.access == "off" || po.access == "both" || !refusal.empty();
    // dmaprobe times a peer copy with events on the source GPU's stream, from a start event
    // recorded just before the call to a stop event behind the copy; both ways, the other GPU's
    // stream waits for the start event and the source's stream for the other's end, both
    // across GPUs. So a row runs from the start event to the last stream operation: the
    // calls' own time (runtime.peer_call), no synchronisation, and a cross-device wait where
    // one GPU's stream waits for the other.
    // Streams: 0 the source's, 1 the destination's (both ways), then staging buffers.
    const auto wait_for = [](std::size_t after, int stream, int gpu) {
        Op w = simple_op(Op::Kind::kWaitFor);
        w.after = after;
        w.stream = stream;
        w.gpu = gpu;
        return w;
    };
    // The runtime's own waits inside a staged call: no call of the application's.
    const auto runtime_wait = [&wait_for](std::size_t after, int stream, int gpu) {
        Op w = wait_for(after, stream, gpu);
        w.queued_by_runtime = true;
        return w;
    };
    const auto record_on = [](int stream, int gpu) {
        Op record = simple_op(Op::Kind::kRecord);
        record.stream = stream;
        record.gpu = gpu;
        return record;
    };
    // Both ways, dmaprobe's source stream then waits for an event recorded behind the other GPU's
    // copy, and the row ends at the stop event behind that wait (as one way, behind the copy).
    // That wait's channel tries the other GPU's semaphore from the wait's call on, every poll
    // period (sim::cross_device_wait_pass), so the row moves with where the calls put the
    // tries against the other GPU's copy: by up to a period for a µs of the calls' time (isolating/
    // peer-phase). That phase is what machines differ in; the row is the mean over the phases,
    // which `phase` (0..1 of a period) sets by the CPU's time before the wait's call.
    const auto period = static_cast<double>(params.runtime.poll_period.ps);
    // Such a row is simulated at TLP level (its end steps with the size: Simulator::execute), so
    // long ones take one phase: a period moves a copy of more than kPhasedBytes by under 2 %.
    constexpr std::uint64_t kPhasedBytes = 16ULL << 20;
    const int phases = both && period > 0.0 && spec.bytes <= kPhasedBytes ? kPollPhases : 1;
    const auto finish = [&](Program& prog, std::size_t other_done, int phase) {
        if (both) {
            const auto hold = static_cast<std::int64_t>(std::llround(period * phase / phases));
            if (hold > 0) prog.ops.push_back(simple_op(Op::Kind::kCpuWork, core::Duration{hold}));
            prog.ops.push_back(wait_for(other_done, 0, src));
        }
        prog.ops.push_back(record_on(0, src));
    };
    const bool point = params.host_spread.deterministic();
    const std::string over = phases > 1 ? "; mean over " + std::to_string(phases) +
                                              " phases of the wait for the other GPU's copy against its tries, their spread the band"
                                        : std::string();
    // The start event on the source's stream comes first (op 0); both ways, the other GPU's
    // stream waits for it (op 1). A row runs from the event's time stamp, which the GPU takes
    // runtime.record_stamp after the record's call returns (HostRuntime::enqueue).
    const auto start = [&](Program& prog) {
        prog.ops.push_back(record_on(0, src));
        if (both) prog.ops.push_back(wait_for(0, 1, dst));
    };
    // A run fast-forwarded over a changing number of staged pieces has no timings; the record,
    // first on an idle stream, is stamped at the same moment whatever follows it.
    const auto timed = [&](const ProgramOutcome& o) {
        if (!o.timings.empty()) return o.elapsed_ps - o.timings.front().start_ps;
        Program alone;
        start(alone);
        return o.elapsed_ps - engine.execute(params, alone).timings.front().start_ps;
    };
    // Staged through host memory (peer access off, or not enabled the way a copy goes): the runtime
    // stages the copy through pinned host buffers of its own, piece by piece: a device-to-host
    // copy on the source, then a host-to-device copy on the destination. The pieces rotate through
    // the buffers, so the next piece leaves the source while the last one enters the destination,
    // and a buffer is written again only after the other GPU has emptied it. Every handoff is
    // between two GPUs (runtime.cross_device_wait), and so is the source's stream learning that
    // the last piece has arrived.
    const std::uint64_t piece = params.runtime.peer_staging_piece.value;
    const auto buffers = static_cast<int>(params.runtime.peer_staging_buffers);
    const std::uint64_t pieces = (spec.bytes + piece - 1) / piece;
    // Validation refuses more; the check keeps a case built in code from exhausting memory.
    if (pieces > core::limits::kMaxCasePieces) {
        throw std::invalid_argument(engine.label() + ": " + std::to_string(pieces) + " staging pieces; at most " +
                                    std::to_string(core::limits::kMaxCasePieces));
    }
    struct Way {
        int from, to, user_stream;
    };
    // One way's staged copy, its buffers the w-th set of streams; returns the wait on its user
    // stream for its last piece.
    const auto staged_way = [&](Program& prog, const Way& way, std::size_t w, std::uint64_t bytes) {
        const int first_buffer = 2 + static_cast<int>(w) * buffers;
        // The other way's call was issued on a stream that waits for the start event: its
        // pieces, whichever buffer they take, leave once that GPU has seen it.
        if (both && way.user_stream == 1) {
            for (int b = 0; b < buffers; ++b) prog.ops.push_back(runtime_wait(0, first_buffer + b, way.from));
        }
        std::size_t last_up = 0;
        for (std::uint64_t k = 0; k * piece < bytes; ++k) {
            const std::uint64_t n = std::min(piece, bytes - k * piece);
            const int stream = first_buffer + static_cast<int>(k % static_cast<std::uint64_t>(buffers));
            Op down = copy_op(CopyDirection::kDeviceToHost, n, stream, false);
            down.gpu = way.from;
            // The application's one call; the runtime queues the rest itself, spending CPU time
            // on each piece past the second (runtime.peer_staged_piece_call), so that a call made
            // after it (the other way's, both ways) starts that much later.
            down.queued_by_runtime = k > 0;
            down.peer_call = k == 0;
            down.staged_peer = k == 0 || k >= 2;
            down.staged_way = static_cast<int>(w);
            Op up = copy_op(CopyDirection::kHostToDevice, n, stream, false);
            up.gpu = way.to;
            up.queued_by_runtime = true;
            up.staged_way = static_cast<int>(w);
            prog.ops.push_back(down);
            prog.ops.push_back(up);
            last_up = prog.ops.size() - 1;
        }
        prog.ops.push_back(runtime_wait(last_up, way.user_stream, way.from));
        return prog.ops.size() - 1;
    };
    // A level adds whole rounds of the buffers, so that streams keep their turns.
    const std::uint64_t round = piece * static_cast<std::uint64_t>(buffers);
    // A row at every phase: the mean, with its band.
    const auto phase_rows = [&](const std::string& variant, const std::string& note, auto&& run) {
        std::vector<double> ps;
        ProgramOutcome first;
        for (int k = 0; k < phases; ++k) {
            const ProgramOutcome o = run(k);
            ps.push_back(timed(o));
            if (k == 0) first = std::move(o);
        }
        return std::make_pair(phase_row(variant, std::move(ps), both ? 2 : 1, note + over, first, point), first);
    };
    if (on) {
        // Enabled one way only (peer.enable: one_way, cudaDeviceEnablePeerAccess on the source
        // alone): the destination's copy into the source has no peer access and is staged.
        const bool reverse_staged = both && po.enable == "one_way";
        const auto run = [&](int phase) {
            const auto build = [&](std::uint64_t bytes) {
                Program prog;
                start(prog);
                if (reverse_staged) {
                    staged_way(prog, Way{dst, src, 1}, 0, bytes);
                } else if (both) {
                    prog.ops.push_back(peer_copy(dst, src, 1, false, bytes));
                }
                if (both) prog.ops.push_back(record_on(1, dst));
                const std::size_t other_done = prog.ops.size() - 1;
                prog.ops.push_back(peer_copy(src, dst, 0, false, bytes));
                finish(prog, other_done, phase);
                return prog;
            };
            return reverse_staged
                       ? engine.execute_sized(params, spec.bytes, round, std::max(engine.default_warmup(params), 2 * round), build)
                       : engine.execute_sized(params, spec.bytes, 1, engine.default_warmup(params), build);
        };
        auto [r, o] = phase_rows("peer=on",
                                 std::string(reverse_staged ? "peer access enabled one way: the source's copy writes over " + route +
                                                                  ", the other way's is staged through host"
                                                            : "peer access enabled: writes over " + route) +
                                     (path.via_cpu.empty() ? std::string() : ", bounced through host memory at " + path.via_cpu),
                                 run);
        c.take_main(o);
        result.rows.push_back(std::move(r));
    }
    if (off) {
        // Peer access off: both ways staged.
        // In dmaprobe's order: the other way's call first (both ways), then the source's.
        const auto run = [&](int phase) {
            const auto build = [&](std::uint64_t bytes) {
                Program prog;
                start(prog);
                std::size_t other_done = 0;
                if (both) {
                    staged_way(prog, Way{dst, src, 1}, 0, bytes);
                    prog.ops.push_back(record_on(1, dst));
                    other_done = prog.ops.size() - 1;
                }
                staged_way(prog, Way{src, dst, 0}, both ? 1 : 0, bytes);
                finish(prog, other_done, phase);
                return prog;
            };
            return engine.execute_sized(params, spec.bytes, round, std::max(engine.default_warmup(params), 2 * round), build);
        };
        const std::string why = refusal.empty() ? "peer access disabled" : "refused (" + refusal + ")";
        auto [r, o] = phase_rows(refusal.empty() ? "peer=off" : "peer=refused",
                                 why + ": staged through host in " + std::to_string(pieces) + " pieces", run);
        if (!on) c.take_main(o);
        result.rows.push_back(std::move(r));
    }
}

}  // namespace dmasim::strategies
