// cpu_mapped: the CPU itself stores to or loads from GPU memory through the BAR mapping.
#include "dmasim/strategies/programs.h"
#include "dmasim/strategies/registry.h"

#include <stdexcept>
#include <string>

namespace dmasim::strategies {

void run_cpu_mapped(Engine& engine, Case& c) {
    const config::ModelParams& params = c.params;
    const CaseSpec& spec = c.spec;
    CaseResult& result = c.result;
    const auto& dirs = c.dirs;
    if (c.ndirs() != 1) throw std::invalid_argument("cpu_mapped moves one direction at a time");
    // GPU memory through BAR1, or the capture card's memory window (cpu_mapped.target).
    const bool card = spec.options.cpu_mapped.target == "card";
    const auto targets = engine.devices_of_kind(card ? topology::NodeKind::kEndpoint : topology::NodeKind::kGpu);
    if (targets.empty()) {
        throw std::invalid_argument(std::string("cpu_mapped.target: ") + (card ? "card" : "gpu") + ": platform " +
                                    engine.platform().name() + " has none");
    }
    const int gpu = targets.front();
    // The mapping reaches GPU memory through BAR1: a buffer larger than its aperture
    // (gpu.bar_aperture; 0 = all of GPU memory, as resizable BAR gives) is mapped a window at a
    // time, each further window after a remap (gpu.bar_remap), as third_party_dma's card is. A
    // card's window is mapped whole.
    if (!card) {
        const std::string refusal = bar_refusal(engine, params, gpu, spec.bytes);
        if (!refusal.empty()) {
            result.rows.push_back(refused_row("", 1, "the mapping fails: " + refusal));
            return;
        }
    }
    const config::GpuBarParams bar = card ? config::GpuBarParams{} : bar_of(engine, params, gpu);
    const BarTransfer t = run_through_bar(engine, params, spec.bytes, bar, [&](std::uint64_t n) {
        Op op;
        op.kind = Op::Kind::kCpuMapped;
        op.direction = dirs.front();
        op.bytes = n;
        op.gpu = gpu;
        return op;
    });
    const ProgramOutcome& o = t.outcome;
    c.take_main(o);
    const std::string in_windows =
        t.windows > 1 ? ", in " + std::to_string(t.windows) + " windows of the " + core::to_string(bar.bar_aperture) +
                          " BAR1 aperture (a remap between them)"
                    : std::string();
    result.rows.push_back(sim_row("", o.elapsed_ps, 1,
                                  (dirs.front() == CopyDirection::kHostToDevice
                                       ? "CPU stores through a write-combining BAR mapping: 64-byte posted writes"
                                       : "CPU loads through the BAR mapping: uncached, " +
                                             core::to_string(params.cpu.mmio_read_bytes) + " each, " +
                                             std::to_string(params.cpu.mmio_reads_in_flight) + " in flight") +
                                      (card ? std::string(", from the card's memory window") : std::string()) + in_windows,
                                  o));
}

}  // namespace dmasim::strategies
