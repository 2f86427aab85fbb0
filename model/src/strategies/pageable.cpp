// pageable: cudaMemcpy of ordinary (pageable) host memory, which the runtime stages through its
// pinned bounce buffers.
#include "dmasim/strategies/programs.h"
#include "dmasim/strategies/registry.h"

#include <algorithm>

namespace dmasim::strategies {

void run_pageable_copy(Engine& engine, Case& c, const std::string& note) {
    const bool fresh = c.spec.options.host_buffer.fresh;
    const config::ModelParams& params = c.params;
    const CaseSpec& spec = c.spec;
    CaseResult& result = c.result;
    const auto& dirs = c.dirs;
    const bool cached = spec.bytes <= params.cpu.llc_size.value;
    // The largest piece of its directions: the transfer period's step (pieces are powers of two).
    std::uint64_t bounce = 0;
    for (const auto d : dirs) bounce = std::max(bounce, params.pageable.piece(d == sim::CopyDirection::kHostToDevice));
    // Staging settles once every bounce buffer has been filled and drained once.
    const std::uint64_t warmup =
        std::max(engine.default_warmup(params),
                 static_cast<std::uint64_t>(params.pageable.bounce_buffers) * params.pageable.bounce_size.value + bounce);
    const ProgramOutcome o = engine.execute_sized(params, spec.bytes, bounce, warmup, [&](std::uint64_t bytes) {
        return pageable_program(dirs, bytes, cached, fresh,
                                static_cast<std::uint32_t>(spec.options.host_buffer.offset.value % params.cpu.page_size.value));
    });
    c.take_main(o);
    result.rows.push_back(sim_row("", o.elapsed_ps, c.ndirs(),
                                  fresh ? note + (note.empty() ? "" : "; ") +
                                              "never-touched memory: the runtime's copy faults in each page (cpu.first_touch_read, first_touch_write)"
                                        : note,
                                  o));
}

void run_pageable(Engine& engine, Case& c) {
    if (host_buffer_not_modelled(c, true, true)) return;
    run_pageable_copy(engine, c, "");
}

}  // namespace dmasim::strategies
