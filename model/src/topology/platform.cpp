#include "dmasim/topology/platform.h"

#include <boost/graph/breadth_first_search.hpp>
#include <boost/graph/filtered_graph.hpp>
#include <boost/graph/visitors.hpp>

#include <algorithm>
#include <stdexcept>

#include "dmasim/core/error.h"

namespace dmasim::topology {

const char* to_string(NodeKind k) {
    switch (k) {
        case NodeKind::kCpu: return "cpu";
        case NodeKind::kRootComplex: return "root_complex";
        case NodeKind::kSwitch: return "switch";
        case NodeKind::kNvSwitch: return "nvswitch";
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
    // Added bare, then given its properties: add_vertex(properties, graph) asks Boost's named-graph
    // layer for a vertex by property first, whose empty optional GCC's -O1 flow analysis takes
    // for an uninitialised read (-Werror=uninitialized in the sanitizer build).
    const NodeId v = boost::add_vertex(graph_);
    graph_[v] = std::move(props);
    return v;
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

namespace {
// Routing filters (Boost wants default-constructible, copyable predicates). Only bridges carry
// traffic through: a CPU is where memory is and a GPU is an endpoint, neither forwards.
struct TransitThroughBridges {
    const Graph* graph = nullptr;
    NodeId a = 0;
    NodeId b = 0;
    bool operator()(NodeId v) const {
        const NodeKind k = (*graph)[v].kind;
        return v == a || v == b || k == NodeKind::kRootComplex || k == NodeKind::kSwitch || k == NodeKind::kNvSwitch;
    }
};
struct OnlyNvlink {
    const Graph* graph = nullptr;
    bool operator()(EdgeId e) const { return (*graph)[e].kind == LinkKind::kNvlink; }
};
struct NotNvlink {
    const Graph* graph = nullptr;
    bool operator()(EdgeId e) const { return (*graph)[e].kind != LinkKind::kNvlink; }
};
struct AnyEdge {
    const Graph* graph = nullptr;
    bool operator()(EdgeId) const { return true; }
};

template <class EdgeFilter>
bool search(const Graph& graph, NodeId a, NodeId b, EdgeFilter edges, std::vector<NodeId>& pred) {
    pred.assign(boost::num_vertices(graph), boost::graph_traits<Graph>::null_vertex());
    pred[a] = a;
    const boost::filtered_graph<Graph, EdgeFilter, TransitThroughBridges> g(graph, edges,
                                                                            TransitThroughBridges{&graph, a, b});
    boost::breadth_first_search(
        g, a, boost::visitor(boost::make_bfs_visitor(boost::record_predecessors(pred.data(), boost::on_tree_edge())))
                  .vertex_index_map(boost::get(boost::vertex_index, graph)));
    return pred[b] != boost::graph_traits<Graph>::null_vertex();
}
}  // namespace

namespace {
std::vector<Hop> hops_of(const Graph& graph, NodeId a, NodeId b, const std::vector<NodeId>& pred) {
    std::vector<Hop> hops;
    for (NodeId v = b; v != a; v = pred[v]) {
        const NodeId u = pred[v];
        hops.push_back(Hop{boost::edge(u, v, graph).first, u, v});
    }
    std::reverse(hops.begin(), hops.end());
    return hops;
}
}  // namespace

std::vector<Hop> Platform::pcie_route(NodeId a, NodeId b) const {
    if (a == b) return {};
    std::vector<NodeId> pred;
    if (!search(graph_, a, b, NotNvlink{&graph_}, pred)) {
        throw core::InputError(origin_.empty() ? "platform " + name_ : origin_, "links",
                               "no PCIe route from " + graph_[a].name + " to " + graph_[b].name +
                                   ": no chain of PCIe links through root complexes and switches joins them");
    }
    return hops_of(graph_, a, b, pred);
}

std::vector<Hop> Platform::route(NodeId a, NodeId b) const {
    if (a == b) return {};
    // NVLink first (what the CUDA driver uses between GPUs that have it), then any link.
    std::vector<NodeId> pred;
    if (!search(graph_, a, b, OnlyNvlink{&graph_}, pred) && !search(graph_, a, b, AnyEdge{&graph_}, pred)) {
        // A validated platform file joins every device to every root complex; what is left are
        // pairs no strategy may ask for (a device and an NVSwitch) and platforms built in code.
        throw core::InputError(origin_.empty() ? "platform " + name_ : origin_, "links",
                               "no route from " + graph_[a].name + " to " + graph_[b].name +
                                   ": no chain of links through root complexes and switches joins them");
    }
    return hops_of(graph_, a, b, pred);
}

EdgeId Platform::next_edge(NodeId from, NodeId to) const {
    const auto hops = route(from, to);
    if (hops.empty()) throw std::runtime_error("platform " + name_ + ": no edge from a node to itself");
    return hops.front().edge;
}

}  // namespace dmasim::topology
