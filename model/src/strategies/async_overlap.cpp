// async_overlap: a transfer split over streams, each chunk H2D -> kernel -> D2H, against the
// same work on one stream.
#include "dmasim/strategies/programs.h"
#include "dmasim/strategies/registry.h"

#include <algorithm>
#include <stdexcept>

namespace dmasim::strategies {

void run_async_overlap(Engine& engine, Case& c) {
    const config::ModelParams& params = c.params;
    const CaseSpec& spec = c.spec;
    CaseResult& result = c.result;
    if (c.ndirs() != 2) throw std::invalid_argument("async_overlap moves both directions");
    const auto n = static_cast<std::uint64_t>(spec.options.async_overlap.streams);
    const core::Duration kernel = spec.options.async_overlap.kernel;
    // Depth-first issues chunk by chunk; breadth-first every H2D, then every kernel, then
    // every D2H. Engines and the compute queue take work in the order it was issued.
    const bool breadth_first = spec.options.async_overlap.issue == "breadth_first";
    const auto overlap = [&](std::uint64_t bytes) {
        Program prog;
        auto issue = [&](std::uint64_t s, int stage) {
            const std::uint64_t chunk = bytes / n + (s < bytes % n ? 1 : 0);
            // Chunk s starts after the s chunks before it, the first bytes % n of which are a byte longer.
            const std::uint64_t offset = s * (bytes / n) + std::min(s, bytes % n);
            const int stream = static_cast<int>(s);
            if (stage == 0) prog.ops.push_back(copy_op(CopyDirection::kHostToDevice, chunk, stream, false));
            if (stage == 1 && kernel.ps > 0) {
                prog.ops.push_back(kernel_op(core::Duration{kernel.ps / static_cast<std::int64_t>(n)}, stream));
            }
            if (stage == 2) {
                Op d2h = copy_op(CopyDirection::kDeviceToHost, chunk, stream, false);
                d2h.host_offset = offset;  // the chunks are parts of one host buffer
                prog.ops.push_back(d2h);
            }
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
    const std::uint64_t chunked = engine.transfer_period(params, 1) * n;
    const ProgramOutcome o =
        engine.execute_sized(params, spec.bytes, chunked, engine.default_warmup(params) * n, overlap);
    c.take_main(o);
    const ProgramOutcome s = engine.execute_sized(params, spec.bytes, 1, engine.default_warmup(params), serial);
    result.rows.push_back(sim_row("", o.elapsed_ps, 2,
                                  std::to_string(n) + " streams, H2D -> kernel -> D2H per chunk, issued " +
                                      (breadth_first ? "breadth-first" : "depth-first") + " to " +
                                      std::to_string(params.dma.engines) + " copy engine(s), " +
                                      std::to_string(params.runtime.connections) + " work queue(s) each",
                                  o));
    result.rows.push_back(sim_row("serial", s.elapsed_ps, 2, "one stream: H2D, kernel, D2H of the whole size", s));
}

}  // namespace dmasim::strategies
