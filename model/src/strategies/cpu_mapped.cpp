// cpu_mapped: the CPU itself stores to or loads from GPU memory through the BAR mapping.
#include "dmasim/strategies/programs.h"
#include "dmasim/strategies/registry.h"

#include <stdexcept>

namespace dmasim::strategies {

void run_cpu_mapped(Engine& engine, Case& c) {
    const config::ModelParams& params = c.params;
    const CaseSpec& spec = c.spec;
    CaseResult& result = c.result;
    const auto& dirs = c.dirs;
    if (c.ndirs() != 1) throw std::invalid_argument("cpu_mapped moves one direction at a time");
    const int gpu = engine.devices_of_kind(topology::NodeKind::kGpu).front();
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
    const ProgramOutcome o = engine.execute_sized(params, spec.bytes, 1, engine.default_warmup(params), build);
    c.take_main(o);
    result.rows.push_back(sim_row("", o.elapsed_ps, 1,
                              dirs.front() == CopyDirection::kHostToDevice
                                  ? "CPU stores through a write-combining BAR mapping: 64-byte posted writes"
                                      : "CPU loads through the BAR mapping: uncached, " +
                                            std::to_string(params.cpu.mmio_reads_in_flight) + " in flight",
                                  o));
}

}  // namespace dmasim::strategies
