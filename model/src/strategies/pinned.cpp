// pinned: cudaMemcpy between cudaMallocHost memory and the GPU, and what that memory costs to
// allocate.
#include "dmasim/strategies/programs.h"
#include "dmasim/strategies/registry.h"

#include <algorithm>

namespace dmasim::strategies {

void run_pinned_copy(Engine& engine, Case& c) {
    const config::ModelParams& params = c.params;
    const CaseSpec& spec = c.spec;
    CaseResult& result = c.result;
    const auto& dirs = c.dirs;
    const auto build = [&](std::uint64_t bytes) {
        Program p = pinned_program(dirs, bytes);
        add_compute(p, spec.options.compute);
        return p;
    };
    const Program prog = build(spec.bytes);
    const bool compute = spec.strategy == "duplex" && spec.options.compute.duration.ps > 0;
    const ProgramOutcome o = engine.execute_sized(params, spec.bytes, 1, engine.default_warmup(params), build);
    c.take_main(o);
    // With a compute kernel the program lasts as long as the kernel: the transfer ends
    // when its last copy does.
    double end = o.elapsed_ps;
    if (compute) {
        end = 0.0;
        for (std::size_t i = 0; i < prog.ops.size(); ++i) {
            if (prog.ops[i].kind == Op::Kind::kCopy) end = std::max(end, o.timings[i].end_ps);
        }
    }
    result.rows.push_back(sim_row("", end, c.ndirs(),
                                  compute ? "beside a compute kernel, which takes SM room (a zero-copy kernel shares it) and turns at GPU memory"
                                          : "",
                                  o));
    if (spec.strategy != "duplex") return;
    // Each direction's own end, as dmaprobe gives it: how the two shared what they share.
    for (std::size_t i = 0; i < prog.ops.size(); ++i) {
        const Op& op = prog.ops[i];
        if (op.kind != Op::Kind::kCopy) continue;
        const bool up = op.direction == CopyDirection::kHostToDevice;
        result.rows.push_back(sim_row(up ? "h2d" : "d2h", o.timings[i].end_ps, 1,
                                      std::string("the ") + (up ? "H2D" : "D2H") + " copy of the pair: to its end", o));
    }
}

void run_pinned(Engine& engine, Case& c) {
    const config::ModelParams& params = c.params;
    const CaseSpec& spec = c.spec;
    CaseResult& result = c.result;
    if (!spec.options.pinned.setup_only) {
        if (host_buffer_not_modelled(c, false, true)) return;
        run_pinned_copy(engine, c);
    }
    // Allocations of fewer whole pages than the pool's size are carved out of the driver's
    // pinned pool (2 MiB - 4 KiB takes 3-5 us on the H100, 2 MiB - 1 B about 1 ms:
    // results/h100-sxm/isolating/pinned-pool); larger ones come from the OS and are zeroed,
    // pinned and mapped page by page.
    bool pooled = false;
    const core::Duration alloc = pinned_alloc_cost(spec.bytes, params.cpu, &pooled);
    result.rows.push_back(make_row("setup=mallochost", static_cast<double>(alloc.ps), 1,
                                   pooled ? "cudaMallocHost(size_bytes) from the driver's pinned pool"
                                          : "cudaMallocHost(size_bytes): fixed + per-page cost, pages out of the cache dearer"));
}

}  // namespace dmasim::strategies
