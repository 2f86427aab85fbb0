// third_party_dma: a capture card's DMA engine moves frames straight between itself and GPU memory
// through the GPU's BAR (window by window when the aperture is small), against the path through
// pinned host memory and the GPU's own engine reaching the card's window. h2d: the card writes
// into the GPU (a radar card's frames); d2h: the card reads the GPU's memory (a card sending what
// the GPU computed).
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
    if (c.ndirs() != 1) throw std::invalid_argument("third_party_dma moves one direction at a time");
    const bool into_gpu = c.dirs.front() == CopyDirection::kHostToDevice;
    const int card = cards.front();
    const int gpu = gpus.front();
    const auto row = [](std::string variant, double ps, std::string note, const ProgramOutcome& o) {
        return sim_row(std::move(variant), ps, 1, std::move(note), o);
    };
    // A bridge on the way may refuse peer-to-peer traffic: then the card cannot reach the GPU
    // (nothing stages it), and only the path through host memory is left. A root complex that
    // forwards writes only refuses whichever device reads the other's BAR.
    const topology::Platform& platform = engine.platform();
    const topology::PeerPath path =
        topology::peer_path(platform, *platform.find(engine.device_name(card)), *platform.find(engine.device_name(gpu)));
    const std::string bounced = path.via_cpu.empty() ? std::string() : ", bounced through host memory at " + path.via_cpu;
    // Direct: the card's DMA engine writes the frame into GPU memory (h2d), or reads it from there
    // (d2h), through the GPU's BAR, window by window when the BAR aperture is smaller than the
    // frame (the driver remaps it).
    const std::string card_refusal = !path.refusal.empty() ? path.refusal : into_gpu ? std::string() : path.read_refusal;
    const std::string bar_refused = bar_refusal(engine, params, gpu, spec.bytes);
    if (!card_refusal.empty()) {
        result.rows.push_back(refused_row("", 1, std::string("the card cannot ") + (into_gpu ? "write into" : "read") +
                                                     " the GPU: " + card_refusal));
    } else if (!bar_refused.empty()) {
        result.rows.push_back(refused_row("", 1, "the GPU memory cannot be pinned for the card: " + bar_refused));
    } else {
        const BarTransfer t = run_through_bar(engine, params, spec.bytes, bar_of(engine, params, gpu), [&](std::uint64_t n) {
            Op op = copy_op(into_gpu ? CopyDirection::kDeviceToHost : CopyDirection::kHostToDevice, n, 0, true);
            op.gpu = card;
            op.peer_gpu = gpu;
            return op;
        });
        const ProgramOutcome& o = t.outcome;
        c.take_main(o);
        result.rows.push_back(row("", o.elapsed_ps,
                                  std::string(into_gpu ? "card writes GPU memory through the BAR"
                                                       : "card reads GPU memory through the BAR") +
                                      (t.windows > 1 ? " in " + std::to_string(t.windows) + " aperture windows" : std::string()) +
                                      bounced,
                                  o));
    }
    // Via host: the card writes pinned host memory, then the GPU copies it in; or the GPU copies
    // out into pinned host memory, then the card reads it.
    const auto via_host = [&](std::uint64_t bytes) {
        Program prog;
        Op card_op = copy_op(into_gpu ? CopyDirection::kDeviceToHost : CopyDirection::kHostToDevice, bytes, 0, true);
        card_op.gpu = card;
        Op gpu_op = copy_op(into_gpu ? CopyDirection::kHostToDevice : CopyDirection::kDeviceToHost, bytes, 0, true);
        gpu_op.gpu = gpu;
        prog.ops.push_back(into_gpu ? card_op : gpu_op);
        prog.ops.push_back(into_gpu ? gpu_op : card_op);
        return prog;
    };
    const ProgramOutcome h = engine.execute_sized(params, spec.bytes, 1, engine.default_warmup(params), via_host);
    if (!card_refusal.empty() || !bar_refused.empty()) c.take_main(h);
    result.rows.push_back(row("via_host", h.elapsed_ps,
                              into_gpu ? "card writes pinned host memory, then cudaMemcpy H2D"
                                       : "cudaMemcpy D2H into pinned host memory, then the card reads it",
                              h));
    // The other way round: the card's window registered as I/O memory (cudaHostRegisterIoMemory)
    // and copied by the GPU's engine, which reads the card's BAR (h2d: the radar thread's mmap of
    // the card's window) or writes into it (d2h). The same peer-to-peer path the other way: a
    // refusing bridge refuses it too, and a bridge that forwards writes only refuses the read.
    const std::string variant = into_gpu ? "gpu_reads_card" : "gpu_writes_card";
    const std::string gpu_refusal = !path.refusal.empty() ? path.refusal : into_gpu ? path.read_refusal : std::string();
    if (!gpu_refusal.empty()) {
        result.rows.push_back(refused_row(variant, 1, std::string("the GPU cannot ") + (into_gpu ? "read" : "write into") +
                                                          " the card's window: " + gpu_refusal));
        return;
    }
    const auto gpu_copies = [&](std::uint64_t bytes) {
        Program prog;
        Op op = copy_op(into_gpu ? CopyDirection::kHostToDevice : CopyDirection::kDeviceToHost, bytes, 0, true);
        op.gpu = gpu;
        op.peer_gpu = card;
        prog.ops.push_back(op);
        return prog;
    };
    const ProgramOutcome r = engine.execute_sized(params, spec.bytes, 1, engine.default_warmup(params), gpu_copies);
    result.rows.push_back(row(variant, r.elapsed_ps,
                              std::string("the card's window registered as I/O memory, cudaMemcpy ") +
                                  (into_gpu ? "H2D: the GPU's engine reads the card's BAR" : "D2H: the GPU's engine writes into the card's BAR") +
                                  bounced,
                              r));
}

}  // namespace dmasim::strategies
