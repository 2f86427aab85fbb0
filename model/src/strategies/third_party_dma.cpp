// third_party_dma: a capture card's DMA engine writes frames into GPU memory through the GPU's
// BAR (window by window when the aperture is small), against the path through pinned host memory.
#include "dmasim/strategies/programs.h"
#include "dmasim/strategies/registry.h"

#include <algorithm>
#include <stdexcept>

#include "dmasim/topology/platform_file.h"

namespace dmasim::strategies {

void run_third_party_dma(Engine& engine, Case& c) {
    const config::ModelParams& params = c.params;
    const CaseSpec& spec = c.spec;
    CaseResult& result = c.result;
    const auto cards = engine.devices_of_kind(topology::NodeKind::kEndpoint);
    const auto gpus = engine.devices_of_kind(topology::NodeKind::kGpu);
    if (cards.empty() || gpus.empty()) {
        throw std::invalid_argument("third_party_dma needs a platform with a capture card (an endpoint) and a GPU, "
                                    "e.g. radar-switch or radar-rootports; " + engine.platform().name() + " has none");
    }
    const int card = cards.front();
    const int gpu = gpus.front();
    const auto row = [](std::string variant, double ps, std::string note, const ProgramOutcome& o) {
        return sim_row(std::move(variant), ps, 1, std::move(note), o);
    };
    // A bridge on the way may refuse peer-to-peer traffic: then the card cannot write into the GPU
    // (nothing stages it), and only the path through host memory is left.
    const topology::Platform& platform = engine.platform();
    const topology::PeerPath path =
        topology::peer_path(platform, *platform.find(engine.device_name(card)), *platform.find(engine.device_name(gpu)));
    // Direct: the card's DMA engine writes the frame into GPU memory through the GPU's BAR,
    // window by window when the BAR aperture is smaller than the frame (the driver remaps it).
    const std::string bar_refused = bar_refusal(engine, params, gpu, spec.bytes);
    if (!path.refusal.empty()) {
        result.rows.push_back(refused_row("", 1, "the card cannot write into the GPU: " + path.refusal));
    } else if (!bar_refused.empty()) {
        result.rows.push_back(refused_row("", 1, "the GPU memory cannot be pinned for the card: " + bar_refused));
    } else {
        const BarTransfer t = run_through_bar(engine, params, spec.bytes, bar_of(engine, params, gpu), [&](std::uint64_t n) {
            Op op = copy_op(CopyDirection::kDeviceToHost, n, 0, true);
            op.gpu = card;
            op.peer_gpu = gpu;
            return op;
        });
        const ProgramOutcome& o = t.outcome;
        c.take_main(o);
        result.rows.push_back(row("", o.elapsed_ps,
                                  "card writes GPU memory through the BAR" +
                                      (t.windows > 1 ? " in " + std::to_string(t.windows) + " aperture windows" : std::string()) +
                                      (path.via_cpu.empty() ? std::string() : ", bounced through host memory at " + path.via_cpu),
                                  o));
    }
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
    const ProgramOutcome h = engine.execute_sized(params, spec.bytes, 1, engine.default_warmup(params), via_host);
    if (!path.refusal.empty() || !bar_refused.empty()) c.take_main(h);
    result.rows.push_back(row("via_host", h.elapsed_ps, "card writes pinned host memory, then cudaMemcpy H2D", h));
    // The other way round (the radar thread's mmap of the card's window): the window registered
    // as I/O memory (cudaHostRegisterIoMemory) and copied by the GPU's engine, whose reads go to
    // the card's BAR through the bridges and come back as the card's completions. The same
    // peer-to-peer path, read instead of written: a refusing bridge refuses it too.
    if (!path.refusal.empty() || !path.read_refusal.empty()) {
        result.rows.push_back(refused_row("gpu_reads_card", 1, "the GPU cannot read the card's window: " +
                                                                   (path.refusal.empty() ? path.read_refusal : path.refusal)));
        return;
    }
    const auto gpu_reads = [&](std::uint64_t bytes) {
        Program prog;
        Op op = copy_op(CopyDirection::kHostToDevice, bytes, 0, true);
        op.gpu = gpu;
        op.peer_gpu = card;
        prog.ops.push_back(op);
        return prog;
    };
    const ProgramOutcome r = engine.execute_sized(params, spec.bytes, 1, engine.default_warmup(params), gpu_reads);
    result.rows.push_back(row("gpu_reads_card", r.elapsed_ps,
                              "the card's window registered as I/O memory, cudaMemcpy H2D: the GPU's engine reads the card's BAR" +
                                  (path.via_cpu.empty() ? std::string() : ", bounced through host memory at " + path.via_cpu),
                              r));
}

}  // namespace dmasim::strategies
