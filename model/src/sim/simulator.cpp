#include "dmasim/sim/simulator.h"

#include <cstdio>
#include <stdexcept>

#include "dmasim/sim/platform_top.h"

namespace dmasim::sim {

namespace {
bool g_elaborated = false;
}

std::uint64_t CaseResult::tlps() const {
    std::uint64_t n = 0;
    for (const auto& l : links) n += l.stats.tlps;
    return n;
}

bool strategy_modelled(const std::string& strategy) { return strategy == "pinned" || strategy == "duplex"; }

Simulator::Simulator(topology::Platform platform, const config::ModelParams& params)
    : platform_(std::make_unique<topology::Platform>(std::move(platform))) {
    if (g_elaborated) throw std::logic_error("a SystemC model can be elaborated only once per process");
    g_elaborated = true;
    // Model warnings are errors: a TLM protocol slip must not pass silently into a number.
    sc_core::sc_report_handler::set_actions(sc_core::SC_WARNING, sc_core::SC_DISPLAY | sc_core::SC_THROW);
    sc_core::sc_report_handler::set_actions(sc_core::SC_ERROR, sc_core::SC_DISPLAY | sc_core::SC_THROW);
    top_ = std::make_unique<PlatformTop>("platform", *platform_, params);
}

Simulator::~Simulator() = default;

CaseResult Simulator::run(const config::ModelParams& params, const std::string& strategy,
                          const std::string& direction, std::uint64_t bytes) {
    if (!strategy_modelled(strategy)) {
        throw std::invalid_argument("strategy '" + strategy + "' is not modelled in this version (modelled: pinned, duplex)");
    }
    if (bytes == 0) throw std::invalid_argument("a copy of 0 bytes");
    CopyRequest request;
    const bool h2d = direction == "h2d" || direction == "both";
    const bool d2h = direction == "d2h" || direction == "both";
    if (!h2d && !d2h) throw std::invalid_argument("direction '" + direction + "' is not h2d, d2h or both");
    if (strategy == "duplex" && !(h2d && d2h)) throw std::invalid_argument("duplex moves both directions");
    // The CUDA runtime gives each direction its own copy engine; with one engine they serialise.
    if (h2d) request.copies.push_back({CopyDirection::kHostToDevice, bytes, 0});
    if (d2h) request.copies.push_back({CopyDirection::kDeviceToHost, bytes, 1});

    if (!top_->idle()) throw std::logic_error("model not idle between runs");
    top_->configure(params);
    HostRuntime& rt = top_->runtime();
    rt.submit(request);
    sc_core::sc_start();
    if (!rt.done()) {
        throw std::runtime_error("the simulation stalled before the copy finished (" + strategy + " " + direction +
                                 ", " + std::to_string(bytes) + " bytes): a flow-control deadlock");
    }
    // Let the last Acks and credit updates land so that the next run starts from rest.
    for (int i = 0; i < 1000 && !top_->idle(); ++i) sc_core::sc_start(sc_core::sc_time(1, sc_core::SC_US));
    if (!top_->idle()) throw std::runtime_error("the model did not come to rest after a copy");

    CaseResult r;
    r.time_ps = rt.elapsed_ps();
    for (const auto& l : top_->links()) {
        r.links.push_back(LinkReport{l.label, l.link->stats(), l.link->physics().stream_bytes_per_s * 1e-9});
    }
    Gpu& gpu = top_->gpu();
    for (int i = 0; i < gpu.active_engines(); ++i) {
        const EngineStats& s = gpu.engine(i).stats();
        r.read_requests += s.read_requests;
        r.writes += s.writes;
        r.peak_outstanding_reads = std::max(r.peak_outstanding_reads, s.peak_outstanding_reads);
    }
    r.host_memory_busy_ps = top_->host_memory().stats().busy_ps;
    return r;
}

}  // namespace dmasim::sim

// libsystemc's own main() calls sc_main(); dmasim and its tests have their own main() and
// elaborate through Simulator instead, but the shared library still needs the symbol.
int sc_main(int /*argc*/, char* /*argv*/[]) {
    std::fprintf(stderr, "dmasim: sc_main is not an entry point of this program\n");
    return 1;
}
