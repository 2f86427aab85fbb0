#include "dmasim/sim/platform_top.h"

#include <map>
#include <stdexcept>

namespace dmasim::sim {

namespace {
std::uint16_t id16(topology::NodeId n) { return static_cast<std::uint16_t>(n); }

HostRuntime::Params runtime_params(const config::ModelParams& p) {
    return HostRuntime::Params{p.runtime,
                               p.cpu,
                               p.pageable,
                               p.dma.launch_latency,
                               p.dma.queued_launch_latency,
                               p.dma.channel_turn,
                               p.dma.held_releases,
                               p.dma.release_wait_max,
                               p.gpu.front_end_turn,
                               p.gpu.front_end_turn_max,
                               p.dma.host_write_hold,
                               p.dma.host_write_hold_beside_reads,
                               p.dma.host_write_hold_fetching,
                               p.gpu.fetch_window,
                               p.gpu.sms,
                               p.gpu.max_warps_per_sm,
                               p.gpu.max_blocks_per_sm};
}

bool carries_packets(topology::LinkKind k) {
    return k == topology::LinkKind::kPcie || k == topology::LinkKind::kNvlink || k == topology::LinkKind::kSocket;
}
}  // namespace

PlatformTop::PlatformTop(sc_core::sc_module_name name, const topology::Platform& platform,
                         const config::ModelParams& params)
    : sc_core::sc_module(name), platform_(platform), fabric_("fabric") {
    using topology::LinkKind;
    using topology::NodeKind;
    const topology::Graph& g = platform.graph();
    const auto cpus = platform.nodes_of(NodeKind::kCpu);
    if (cpus.empty()) throw std::runtime_error("platform " + platform.name() + " has no CPU");
    // Delays are built as counts of picoseconds (tlp.h, ps_delay): the kernel must count in ps.
    DMASIM_ASSERT(sc_core::sc_get_time_resolution() == sc_core::sc_time(1.0, sc_core::SC_PS));

    // Ports of a node: its packet-carrying edges, in edge order.
    std::map<topology::NodeId, std::map<topology::NodeId, int>> port_of;
    auto peers_of = [&](topology::NodeId n) {
        std::vector<std::uint16_t> peers;
        for (auto [e, end] = boost::out_edges(n, g); e != end; ++e) {
            if (!carries_packets(g[*e].kind)) continue;
            port_of[n][boost::target(*e, g)] = static_cast<int>(peers.size());
            peers.push_back(id16(boost::target(*e, g)));
        }
        return peers;
    };
    // A root complex serves the memory of the CPU it hangs off.
    auto cpu_of = [&](topology::NodeId rc) -> topology::NodeId {
        for (auto [e, end] = boost::out_edges(rc, g); e != end; ++e) {
            if (g[*e].kind == LinkKind::kInternal && g[boost::target(*e, g)].kind == NodeKind::kCpu) {
                return boost::target(*e, g);
            }
        }
        throw std::runtime_error("platform " + platform.name() + ": root complex " + g[rc].name + " has no CPU");
    };

    std::map<topology::NodeId, MemoryController*> memory_of_cpu;
    std::map<topology::NodeId, RootComplex*> bridge_of;
    std::map<topology::NodeId, Gpu*> device_of;
    for (auto [it, end] = boost::vertices(g); it != end; ++it) {
        const topology::NodeProps& n = g[*it];
        switch (n.kind) {
            case NodeKind::kCpu:
                host_memories_.push_back(std::make_unique<MemoryController>((n.name + "_memory").c_str(), params.host_memory));
                memory_of_cpu[*it] = host_memories_.back().get();
                break;
            case NodeKind::kRootComplex:
            case NodeKind::kSwitch:
            case NodeKind::kNvSwitch: {
                const bool is_switch = n.kind != NodeKind::kRootComplex;
                bridges_.push_back(std::make_unique<RootComplex>(n.name.c_str(), params.root_complex, id16(*it), peers_of(*it),
                                                                 is_switch, is_switch ? 0 : id16(cpu_of(*it))));
                bridge_of[*it] = bridges_.back().get();
                bridge_nodes_.push_back(id16(*it));
                bridges_.back()->set_p2p_via_cpu(n.p2p == topology::P2pPolicy::kViaCpu);
                break;
            }
            case NodeKind::kGpu:
            case NodeKind::kEndpoint:
                devices_.push_back(std::make_unique<Gpu>(n.name.c_str(), id16(*it), params, peers_of(*it)));
                device_names_.push_back(n.name);
                device_of[*it] = devices_.back().get();
                break;
        }
    }
    if (devices_.empty() || bridges_.empty()) {
        throw std::runtime_error("platform " + platform.name() + " needs a root complex and a device");
    }
    for (auto& [node, rc] : bridge_of) {
        if (rc->memory) rc->memory->bind(*memory_of_cpu.at(cpu_of(node)));
    }

    // Routing tables: for every bridge and device, the port of the first hop towards every node.
    for (auto [it, end] = boost::vertices(g); it != end; ++it) {
        const bool bridge = bridge_of.count(*it) > 0;
        if (!bridge && !device_of.count(*it)) continue;
        for (auto [dst, dend] = boost::vertices(g); dst != dend; ++dst) {
            if (*dst == *it) continue;
            std::vector<topology::Hop> hops;
            try {
                hops = platform.route(*it, *dst);
            } catch (const std::runtime_error&) {
                continue;  // e.g. a root complex never talks to an NVSwitch
            }
            const auto first = hops.front();
            if (!carries_packets(g[first.edge].kind)) continue;  // the socket's own memory
            const int port = port_of[*it].at(first.to);
            if (bridge) {
                bridge_of[*it]->set_route(id16(*dst), port);
            } else {
                device_of[*it]->set_route(id16(*dst), port);
            }
        }
    }

    auto egress_of = [&](topology::NodeId from, topology::NodeId to) -> TlpInitiatorSocket& {
        const auto port = static_cast<std::size_t>(port_of[from].at(to));
        if (device_of.count(from)) return device_of[from]->ports[port]->egress;
        return bridge_of.at(from)->ports[port]->egress;
    };
    auto ingress_of = [&](topology::NodeId at, topology::NodeId from) -> TlpTargetSocket& {
        const auto port = static_cast<std::size_t>(port_of[at].at(from));
        if (device_of.count(at)) return device_of[at]->ports[port]->ingress;
        return bridge_of.at(at)->ports[port]->ingress;
    };
    for (auto [e, eend] = boost::edges(g); e != eend; ++e) {
        if (!carries_packets(g[*e].kind)) continue;
        const auto a = boost::source(*e, g);
        const auto b = boost::target(*e, g);
        const std::size_t first = links_.size();
        for (const auto& [from, to] : {std::pair{a, b}, std::pair{b, a}}) {
            const std::string label = g[from].name + "->" + g[to].name;
            const std::string module_name = "link_" + g[from].name + "_to_" + g[to].name;
            links_.push_back(LinkEntry{label, *e, std::make_unique<PcieLink>(module_name.c_str(), g[*e].pcie)});
            links_.back().link->set_trace_name("link " + label);
            egress_of(from, to).bind(links_.back().link->tx);
            links_.back().link->rx.bind(ingress_of(to, from));
        }
        links_[first].link->pair_with(*links_[first + 1].link);
    }

    std::vector<Gpu*> devices;
    for (auto& d : devices_) devices.push_back(d.get());
    runtime_ = std::make_unique<HostRuntime>("runtime", runtime_params(params), devices, id16(cpus.front()));
    runtime_->host_memory.bind(*memory_of_cpu.at(cpus.front()));
    for (auto& rc : bridges_) rc->set_listener(runtime_.get());
    for (auto& d : devices_) {
        for (const int unit : {Gpu::kSmReadUnit, Gpu::kSmWriteUnit}) d->engine(unit).set_listener(runtime_.get());
    }
    device_nodes_.clear();
    for (auto& d : devices_) device_nodes_.push_back(d->node_id());
    for (auto& [node, rc] : bridge_of) {
        if (rc->memory && cpu_of(node) == cpus.front()) runtime_->set_root_complex(rc);
    }
    configure(params, platform);
}

int PlatformTop::device_index(const std::string& node_name) const {
    for (std::size_t i = 0; i < device_names_.size(); ++i) {
        if (device_names_[i] == node_name) return static_cast<int>(i);
    }
    return -1;
}

void PlatformTop::configure(const config::ModelParams& params, const topology::Platform& links_from) {
    for (auto& m : host_memories_) m->configure(params.host_memory);
    const topology::Graph& g = platform_.graph();
    auto case_node = [&](std::uint16_t node) {
        const auto n = links_from.find(g[node].name);
        if (!n) throw std::runtime_error("a case's platform differs from the elaborated one");
        return *n;
    };
    for (std::size_t i = 0; i < devices_.size(); ++i) {
        const auto self = links_from.find(device_names_[i]);
        if (!self) throw std::runtime_error("a case's platform differs from the elaborated one");
        const topology::NodeProps& node = links_from.node(*self);
        if (node.kind != topology::NodeKind::kEndpoint) {
            devices_[i]->configure(params);
            // The engines' queue (dma.egress_queue) is measured on PCIe links; NVLink takes their
            // TLPs as before.
            std::vector<std::uint8_t> queued;
            for (const auto& port : devices_[i]->ports) {
                const auto [e, found] = boost::edge(*self, case_node(port->peer), links_from.graph());
                queued.push_back(found && links_from.link(e).kind == topology::LinkKind::kPcie ? 1 : 0);
            }
            devices_[i]->set_queued_ports(queued);
            continue;
        }
        // A capture card's engine: its own descriptors and doorbell, on its own link (the
        // upstream PCIe link of the endpoint).
        config::DmaParams card = params.dma;
        card.max_read_requests = node.card.read_requests;
        card.launch_latency = node.card.launch_latency;
        card.queued_launch_latency = node.card.launch_latency;
        card.descriptor_bytes = node.card.descriptor_bytes;
        card.descriptor_size = node.card.descriptor_size;
        card.descriptors_per_fetch = node.card.descriptors_per_fetch;
        card.egress_queue = core::Bytes{0};  // a card's one engine: nothing to order against
        config::LinkParams link = params.link;
        for (auto [e, end] = boost::out_edges(*self, links_from.graph()); e != end; ++e) {
            if (links_from.link(*e).kind == topology::LinkKind::kPcie) link = links_from.link(*e).pcie;
        }
        devices_[i]->configure(params, card, link);
    }
    for (std::size_t i = 0; i < bridges_.size(); ++i) {
        RootComplex& rc = *bridges_[i];
        const auto self = case_node(bridge_nodes_[i]);
        std::vector<config::LinkParams> port_links;
        for (const auto& port : rc.ports) {
            const auto [e, found] = boost::edge(self, case_node(port->peer), links_from.graph());
            const bool pcie = found && links_from.link(e).kind == topology::LinkKind::kPcie;
            port_links.push_back(pcie ? links_from.link(e).pcie : params.link);
        }
        rc.configure(links_from.node(self).bridge, port_links, params.host_memory);
        // The case's policy: the same topology may come with another bridge setting.
        rc.set_p2p_via_cpu(links_from.node(self).p2p == topology::P2pPolicy::kViaCpu);
    }
    for (auto& entry : links_) {
        // The same platform, loaded for this case: its links carry this case's settings.
        const auto a = links_from.find(g[boost::source(entry.edge, g)].name);
        const auto b = links_from.find(g[boost::target(entry.edge, g)].name);
        if (!a || !b) throw std::runtime_error("a case's platform differs from the elaborated one");
        const auto [e, found] = boost::edge(*a, *b, links_from.graph());
        if (!found) throw std::runtime_error("a case's platform differs from the elaborated one");
        const topology::LinkProps& props = links_from.link(e);
        if (props.kind == topology::LinkKind::kPcie) {
            entry.link->configure(props.pcie);
        } else {
            entry.link->configure_nvlink(props.nvlink);
            if (props.kind == topology::LinkKind::kSocket) {
                entry.link->set_peer_bandwidth(props.peer_bandwidth);
                entry.link->use_socket_credits(params.link);
            }
        }
    }
    runtime_->configure(runtime_params(params));
}

void PlatformTop::flush_trace() {
    for (auto& l : links_) l.link->flush_trace();
}

bool PlatformTop::idle() const { return busy_part().empty(); }

std::string PlatformTop::busy_part() const {
    for (const auto& l : links_) {
        if (!l.link->idle()) return "link " + l.label;
    }
    for (const auto& rc : bridges_) {
        if (!rc->idle()) return std::string("bridge ") + rc->name();
    }
    for (const auto& d : devices_) {
        if (!d->idle()) return std::string("device ") + d->name();
    }
    return {};
}

}  // namespace dmasim::sim
