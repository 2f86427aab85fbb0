#include "dmasim/sim/platform_top.h"

#include <map>
#include <stdexcept>

namespace dmasim::sim {

namespace {
std::uint16_t id16(topology::NodeId n) { return static_cast<std::uint16_t>(n); }

HostRuntime::Params runtime_params(const config::ModelParams& p) {
    return HostRuntime::Params{p.runtime, p.cpu, p.pageable, p.dma.launch_latency};
}
}  // namespace

PlatformTop::PlatformTop(sc_core::sc_module_name name, const topology::Platform& platform,
                         const config::ModelParams& params)
    : sc_core::sc_module(name), platform_(platform) {
    using topology::LinkKind;
    using topology::NodeKind;
    const topology::Graph& g = platform.graph();

    std::map<topology::NodeId, MemoryController*> memory_of_cpu;
    std::map<topology::NodeId, RootComplex*> rc_of;
    std::map<topology::NodeId, Gpu*> gpu_of;
    std::map<topology::NodeId, std::map<topology::NodeId, int>> rc_port;

    for (auto [it, end] = boost::vertices(g); it != end; ++it) {
        const topology::NodeProps& n = g[*it];
        switch (n.kind) {
            case NodeKind::kCpu:
                host_memories_.push_back(std::make_unique<MemoryController>((n.name + "_memory").c_str(), params.host_memory));
                memory_of_cpu[*it] = host_memories_.back().get();
                break;
            case NodeKind::kRootComplex: {
                std::vector<std::uint16_t> peers;
                for (auto [e, eend] = boost::out_edges(*it, g); e != eend; ++e) {
                    if (g[*e].kind != LinkKind::kPcie) continue;
                    rc_port[*it][boost::target(*e, g)] = static_cast<int>(peers.size());
                    peers.push_back(id16(boost::target(*e, g)));
                }
                root_complexes_.push_back(std::make_unique<RootComplex>(n.name.c_str(), params.root_complex, id16(*it), peers));
                rc_of[*it] = root_complexes_.back().get();
                break;
            }
            case NodeKind::kGpu:
                gpus_.push_back(std::make_unique<Gpu>(n.name.c_str(), id16(*it), params));
                gpu_of[*it] = gpus_.back().get();
                break;
            case NodeKind::kSwitch:
            case NodeKind::kEndpoint:
                throw std::runtime_error("platform " + platform.name() + ": node '" + n.name + "' is a " +
                                         topology::to_string(n.kind) + ", which this version does not elaborate");
        }
    }
    if (gpus_.empty() || root_complexes_.empty() || host_memories_.empty()) {
        throw std::runtime_error("platform " + platform.name() + " needs a CPU, a root complex and a GPU");
    }

    // Root complexes reach host memory through their socket's memory controller.
    for (auto& [rc_node, rc] : rc_of) {
        for (auto [e, eend] = boost::out_edges(rc_node, g); e != eend; ++e) {
            const auto other = boost::target(*e, g);
            if (g[*e].kind == LinkKind::kInternal && memory_of_cpu.count(other)) {
                rc->memory.socket.bind(memory_of_cpu[other]->socket);
            }
        }
    }

    // Each PCIe edge is two links, one per direction, paired for their DLLP traffic.
    auto egress_of = [&](topology::NodeId from, topology::NodeId to) -> TlpInitiatorSocket& {
        if (gpu_of.count(from)) return gpu_of[from]->egress;
        return rc_of.at(from)->ports[static_cast<std::size_t>(rc_port[from][to])]->egress;
    };
    auto ingress_of = [&](topology::NodeId at, topology::NodeId from) -> TlpTargetSocket& {
        if (gpu_of.count(at)) return gpu_of[at]->ingress;
        return rc_of.at(at)->ports[static_cast<std::size_t>(rc_port[at][from])]->ingress;
    };
    for (auto [e, eend] = boost::edges(g); e != eend; ++e) {
        if (g[*e].kind != LinkKind::kPcie) continue;
        const auto a = boost::source(*e, g);
        const auto b = boost::target(*e, g);
        const std::size_t first = links_.size();
        for (const auto& [from, to] : {std::pair{a, b}, std::pair{b, a}}) {
            const std::string label = g[from].name + "->" + g[to].name;
            const std::string module_name = "link_" + g[from].name + "_to_" + g[to].name;
            links_.push_back(LinkEntry{label, *e, std::make_unique<PcieLink>(module_name.c_str(), g[*e].pcie)});
            egress_of(from, to).bind(links_.back().link->tx);
            links_.back().link->rx.bind(ingress_of(to, from));
        }
        links_[first].link->pair_with(*links_[first + 1].link);
    }

    Gpu& gpu0 = *gpus_.front();
    const topology::NodeId gpu_node = gpu0.node_id();
    const auto cpus = platform.nodes_of(NodeKind::kCpu);
    runtime_ = std::make_unique<HostRuntime>("runtime", runtime_params(params), gpu0, id16(cpus.front()));
    runtime_->host_memory.socket.bind(memory_of_cpu.at(cpus.front())->socket);
    // The root complex on the GPU's route to the host reports its semaphores to the runtime.
    for (const auto& hop : platform.route(gpu_node, cpus.front())) {
        if (rc_of.count(hop.to)) rc_of[hop.to]->set_listener(runtime_.get());
    }
    configure(params);
}

void PlatformTop::configure(const config::ModelParams& params) {
    for (auto& m : host_memories_) m->configure(params.host_memory);
    for (auto& rc : root_complexes_) rc->configure(params.root_complex, params.link, params.host_memory.latency);
    for (auto& gpu : gpus_) gpu->configure(params);
    // The scenario's link settings describe the GPU's link; other edges keep the graph's.
    const auto cpus = platform_.nodes_of(topology::NodeKind::kCpu);
    const auto route = platform_.route(gpus_.front()->node_id(), cpus.front());
    for (auto& entry : links_) {
        bool on_route = false;
        for (const auto& hop : route) on_route = on_route || hop.edge == entry.edge;
        entry.link->configure(on_route ? params.link : platform_.link(entry.edge).pcie);
    }
    runtime_->configure(runtime_params(params));
}

bool PlatformTop::idle() const {
    for (const auto& l : links_) {
        if (!l.link->idle()) return false;
    }
    for (const auto& rc : root_complexes_) {
        if (!rc->idle()) return false;
    }
    for (const auto& gpu : gpus_) {
        for (const auto& e : gpu->engines) {
            if (e->busy()) return false;
        }
    }
    return true;
}

}  // namespace dmasim::sim
