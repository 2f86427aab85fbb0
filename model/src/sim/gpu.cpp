#include "dmasim/sim/gpu.h"

namespace dmasim::sim {

Gpu::Gpu(sc_core::sc_module_name name, std::uint16_t node_id, const config::ModelParams& params)
    : sc_core::sc_module(name), egress("egress"), ingress("ingress"), memory("memory", params.gpu_memory),
      node_id_(node_id) {
    egress.bind(static_cast<TlpBwIf&>(*this));
    ingress.bind(static_cast<TlpFwIf&>(*this));
    for (int i = 0; i < kSmWriteUnit + 1; ++i) {
        const std::string n = i == kSmReadUnit ? "sm_reads" : i == kSmWriteUnit ? "sm_writes" : "ce" + std::to_string(i);
        engines.push_back(std::make_unique<DmaEngine>(n.c_str(), params.dma, i, node_id, kick_));
        engines.back()->gpu_memory.socket.bind(memory.socket);
    }
    configure(params);
    SC_METHOD(arbitrate);
    sensitive << kick_;
    dont_initialize();
}

void Gpu::configure(const config::ModelParams& params) {
    if (params.dma.engines > kMaxEngines) {
        SC_REPORT_ERROR(name(), ("dma.engines is larger than the " + std::to_string(kMaxEngines) +
                                 " engines elaborated").c_str());
    }
    engine_count_ = static_cast<int>(params.dma.engines);
    memory.configure(params.gpu_memory);
    for (int i = 0; i < kMaxEngines; ++i) engines[static_cast<std::size_t>(i)]->configure(params.dma, params.link);
    // SM traffic starts with the kernel, not with a copy engine's work fetch.
    config::DmaParams sm = params.dma;
    sm.launch_latency = params.runtime.kernel_launch_latency;
    sm.max_read_requests = params.gpu.sysmem_max_outstanding_reads;
    engines[kSmReadUnit]->configure(sm, params.link);
    engines[kSmWriteUnit]->configure(sm, params.link);
    sources_.clear();
    for (int i = 0; i < engine_count_; ++i) sources_.push_back(i);
    sources_.push_back(kSmReadUnit);
    sources_.push_back(kSmWriteUnit);
    next_engine_ = 0;
    link_ready_ = true;
}

tlm::tlm_sync_enum Gpu::nb_transport_fw(Tlp& t, tlm::tlm_phase& phase, sc_core::sc_time&) {
    DMASIM_ASSERT(phase == tlm::BEGIN_REQ);
    if (t.kind != TlpKind::kCompletion) {
        SC_REPORT_ERROR(name(), "requests into GPU memory through the BAR are not modelled in this version");
        return tlm::TLM_COMPLETED;
    }
    const std::uint32_t engine = t.tag >> 16;
    DMASIM_ASSERT(engine < engines.size());
    engines[engine]->on_completion(t);
    // Endpoints advertise infinite completion credits: the data goes straight to memory.
    return tlm::TLM_COMPLETED;
}

tlm::tlm_sync_enum Gpu::nb_transport_bw(Tlp&, tlm::tlm_phase& phase, sc_core::sc_time&) {
    DMASIM_ASSERT(phase == tlm::END_REQ);
    link_ready_ = true;
    kick_.notify(sc_core::SC_ZERO_TIME);
    return tlm::TLM_COMPLETED;
}

void Gpu::arbitrate() {
    while (link_ready_) {
        int chosen = -1;
        const int n = static_cast<int>(sources_.size());
        for (int i = 0; i < n; ++i) {
            const int k = (next_engine_ + i) % n;
            if (engines[static_cast<std::size_t>(sources_[static_cast<std::size_t>(k)])]->has_tlp()) {
                chosen = k;
                break;
            }
        }
        if (chosen < 0) return;
        next_engine_ = (chosen + 1) % n;
        DmaEngine& e = *engines[static_cast<std::size_t>(sources_[static_cast<std::size_t>(chosen)])];
        Tlp t = e.take();
        tlm::tlm_phase phase = tlm::BEGIN_REQ;
        sc_core::sc_time delay = sc_core::SC_ZERO_TIME;
        const tlm::tlm_sync_enum r = egress->nb_transport_fw(t, phase, delay);
        link_ready_ = (r == tlm::TLM_UPDATED && phase == tlm::END_REQ);
    }
}

}  // namespace dmasim::sim
