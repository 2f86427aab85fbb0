// registered: cudaHostRegister of existing memory, copies over the pinned path, and the
// registration amortised over K copies.
#include "dmasim/strategies/programs.h"
#include "dmasim/strategies/registry.h"

namespace dmasim::strategies {

void run_registered(Engine& engine, Case& c) {
    const config::ModelParams& params = c.params;
    const CaseSpec& spec = c.spec;
    CaseResult& result = c.result;
    const auto& dirs = c.dirs;
    const double reg = static_cast<double>(
        pages_cost(spec.bytes, params.cpu, params.cpu.register_fixed, params.cpu.register_per_page).ps);
    const double unreg = static_cast<double>(
        pages_cost(spec.bytes, params.cpu, params.cpu.unregister_fixed, params.cpu.unregister_per_page).ps);
    const auto setup_rows = [&] {
        result.rows.push_back(make_row("setup=register", reg, c.ndirs(), "cudaHostRegister: fixed + per-page cost"));
        result.rows.push_back(make_row("setup=unregister", unreg, c.ndirs(), "cudaHostUnregister: fixed + per-page cost"));
    };
    if (spec.options.registered.setup_only) {
        setup_rows();
        return;
    }
    if (host_buffer_not_modelled(c)) return;
    const ProgramOutcome o =
        engine.execute_sized(params, spec.bytes, 1, engine.default_warmup(params),
                             [&](std::uint64_t bytes) { return pinned_program(dirs, bytes); });
    c.take_main(o);
    // The copy dmaprobe times is the first one after cudaHostRegister: the pinned path, after the
    // driver has resolved the new registration on the CPU.
    const double copy = o.elapsed_ps + static_cast<double>(params.cpu.register_first_copy.ps);
    const auto k = static_cast<double>(spec.options.registered.reuses);
    result.rows.push_back(sim_row("", copy, c.ndirs(), "first copy of memory just registered: cpu.register_first_copy, then the pinned path", o));
    setup_rows();
    // As dmaprobe amortises: each repetition's copy plus its registration shared by K copies.
    result.rows.push_back(sim_row("amortised_" + std::to_string(spec.options.registered.reuses),
                                  (reg + k * copy + unreg) / k, c.ndirs(), "(register + K copies + unregister) / K", o));
}

}  // namespace dmasim::strategies
