#include "dmasim/topology/platform.h"

#include <boost/graph/breadth_first_search.hpp>
#include <boost/graph/visitors.hpp>

#include <algorithm>
#include <stdexcept>

namespace dmasim::topology {

const char* to_string(NodeKind k) {
    switch (k) {
        case NodeKind::kCpu: return "cpu";
        case NodeKind::kRootComplex: return "root_complex";
        case NodeKind::kSwitch: return "switch";
        case NodeKind::kGpu: return "gpu";
        case NodeKind::kEndpoint: return "endpoint";
    }
    return "?";
}

const char* to_string(LinkKind k) {
    switch (k) {
        case LinkKind::kPcie: return "pcie";
        case LinkKind::kNvlink: return "nvlink";
        case LinkKind::kSocket: return "socket";
        case LinkKind::kInternal: return "internal";
    }
    return "?";
}

NodeId Platform::add_node(NodeProps props) {
    if (find(props.name)) throw std::invalid_argument("platform " + name_ + ": two nodes named '" + props.name + "'");
    return boost::add_vertex(std::move(props), graph_);
}

EdgeId Platform::add_link(NodeId a, NodeId b, LinkProps props) {
    if (a == b) throw std::invalid_argument("platform " + name_ + ": a link needs two different nodes");
    return boost::add_edge(a, b, std::move(props), graph_).first;
}

std::optional<NodeId> Platform::find(const std::string& name) const {
    for (auto [it, end] = boost::vertices(graph_); it != end; ++it) {
        if (graph_[*it].name == name) return *it;
    }
    return std::nullopt;
}

NodeId Platform::at(const std::string& name) const {
    const auto n = find(name);
    if (!n) throw std::out_of_range("platform " + name_ + " has no node '" + name + "'");
    return *n;
}

std::vector<NodeId> Platform::nodes_of(NodeKind kind) const {
    std::vector<NodeId> out;
    for (auto [it, end] = boost::vertices(graph_); it != end; ++it) {
        if (graph_[*it].kind == kind) out.push_back(*it);
    }
    return out;
}

std::vector<Hop> Platform::route(NodeId a, NodeId b) const {
    if (a == b) return {};
    const std::size_t n = boost::num_vertices(graph_);
    std::vector<NodeId> pred(n, boost::graph_traits<Graph>::null_vertex());
    pred[a] = a;
    boost::breadth_first_search(
        graph_, a,
        boost::visitor(boost::make_bfs_visitor(boost::record_predecessors(pred.data(), boost::on_tree_edge()))));
    if (pred[b] == boost::graph_traits<Graph>::null_vertex()) {
        throw std::runtime_error("platform " + name_ + ": no route from " + graph_[a].name + " to " + graph_[b].name);
    }
    std::vector<Hop> hops;
    for (NodeId v = b; v != a; v = pred[v]) {
        const NodeId u = pred[v];
        hops.push_back(Hop{boost::edge(u, v, graph_).first, u, v});
    }
    std::reverse(hops.begin(), hops.end());
    return hops;
}

EdgeId Platform::next_edge(NodeId from, NodeId to) const {
    const auto hops = route(from, to);
    if (hops.empty()) throw std::runtime_error("platform " + name_ + ": no edge from a node to itself");
    return hops.front().edge;
}

Platform make_single_gpu_platform(const std::string& name, const config::LinkParams& link) {
    Platform p(name);
    const NodeId cpu = p.add_node(NodeProps{"cpu0", NodeKind::kCpu, 0});
    const NodeId rc = p.add_node(NodeProps{"rc0", NodeKind::kRootComplex, 0});
    const NodeId gpu = p.add_node(NodeProps{"gpu0", NodeKind::kGpu, 0});
    p.add_link(cpu, rc, LinkProps{LinkKind::kInternal, {}, {}});
    p.add_link(rc, gpu, LinkProps{LinkKind::kPcie, link, {}});
    return p;
}

Platform make_platform(const std::string& name, const config::ModelParams& params) {
    if (name == "h100-sxm") return make_single_gpu_platform(name, params.link);
    Platform p(name);
    const LinkProps pcie{LinkKind::kPcie, params.link, params.nvlink};
    const LinkProps nvlink{LinkKind::kNvlink, params.link, params.nvlink};
    const NodeId cpu = p.add_node(NodeProps{"cpu0", NodeKind::kCpu, 0});
    const NodeId rc = p.add_node(NodeProps{"rc0", NodeKind::kRootComplex, 0});
    p.add_link(cpu, rc, LinkProps{LinkKind::kInternal, {}, {}});
    if (name == "h200x2-nvlink") {
        const NodeId g0 = p.add_node(NodeProps{"gpu0", NodeKind::kGpu, 0});
        const NodeId g1 = p.add_node(NodeProps{"gpu1", NodeKind::kGpu, 0});
        p.add_link(rc, g0, pcie);
        p.add_link(rc, g1, pcie);
        p.add_link(g0, g1, nvlink);
    } else if (name == "workstation-2gpu-switch" || name == "radar-switch") {
        const NodeId sw = p.add_node(NodeProps{"sw0", NodeKind::kSwitch, 0});
        p.add_link(rc, sw, pcie);
        p.add_link(sw, p.add_node(NodeProps{"gpu0", NodeKind::kGpu, 0}), pcie);
        if (name == "radar-switch") {
            p.add_link(sw, p.add_node(NodeProps{"fpga0", NodeKind::kEndpoint, 0}), pcie);
        } else {
            p.add_link(sw, p.add_node(NodeProps{"gpu1", NodeKind::kGpu, 0}), pcie);
        }
    } else if (name == "2gpu-rootports") {
        p.add_link(rc, p.add_node(NodeProps{"gpu0", NodeKind::kGpu, 0}), pcie);
        p.add_link(rc, p.add_node(NodeProps{"gpu1", NodeKind::kGpu, 0}), pcie);
    } else if (name == "radar-rootports") {
        p.add_link(rc, p.add_node(NodeProps{"gpu0", NodeKind::kGpu, 0}), pcie);
        p.add_link(rc, p.add_node(NodeProps{"fpga0", NodeKind::kEndpoint, 0}), pcie);
    } else {
        throw std::invalid_argument("unknown platform '" + name + "'");
    }
    return p;
}

}  // namespace dmasim::topology
