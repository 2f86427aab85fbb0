// A platform as a graph (Boost.Graph adjacency_list with bundled properties): CPU sockets with
// their memory, root complexes, PCIe switches and endpoints as nodes; PCIe links, NVLink and
// socket interconnects as edges. Routes come from graph search; the SystemC model is elaborated
// from this graph, so flows whose routes share an edge share that link in the simulation.
#pragma once

#include <boost/graph/adjacency_list.hpp>

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "dmasim/config/params.h"

namespace dmasim::topology {

enum class NodeKind { kCpu, kRootComplex, kSwitch, kGpu, kEndpoint };
enum class LinkKind { kPcie, kNvlink, kSocket, kInternal };

const char* to_string(NodeKind k);
const char* to_string(LinkKind k);

struct NodeProps {
    std::string name;
    NodeKind kind = NodeKind::kEndpoint;
    int socket = 0;  // CPU socket (NUMA node) the node hangs off
};

struct LinkProps {
    LinkKind kind = LinkKind::kPcie;
    config::LinkParams pcie;      // used when kind == kPcie
    config::NvlinkParams nvlink;  // used when kind == kNvlink
};

using Graph = boost::adjacency_list<boost::vecS, boost::vecS, boost::undirectedS, NodeProps, LinkProps>;
using NodeId = boost::graph_traits<Graph>::vertex_descriptor;
using EdgeId = boost::graph_traits<Graph>::edge_descriptor;

// One hop of a route: the edge crossed and the direction it is crossed in.
struct Hop {
    EdgeId edge;
    NodeId from;
    NodeId to;
};

class Platform {
public:
    explicit Platform(std::string name) : name_(std::move(name)) {}

    NodeId add_node(NodeProps props);
    EdgeId add_link(NodeId a, NodeId b, LinkProps props);

    std::optional<NodeId> find(const std::string& name) const;
    NodeId at(const std::string& name) const;  // throws std::out_of_range naming it
    std::vector<NodeId> nodes_of(NodeKind kind) const;

    // Fewest-hop route from a to b (breadth-first search). Empty when a == b; throws
    // std::runtime_error when b cannot be reached.
    std::vector<Hop> route(NodeId a, NodeId b) const;
    // The route's first edge out of `from` towards `to` (the egress a node uses).
    EdgeId next_edge(NodeId from, NodeId to) const;

    const Graph& graph() const { return graph_; }
    Graph& graph() { return graph_; }
    const NodeProps& node(NodeId n) const { return graph_[n]; }
    const LinkProps& link(EdgeId e) const { return graph_[e]; }
    LinkProps& link(EdgeId e) { return graph_[e]; }
    const std::string& name() const { return name_; }

private:
    std::string name_;
    Graph graph_;
};

// The default platform: one CPU socket with its DRAM, its root complex, and one H100 SXM on a
// PCIe link whose parameters come from `link`.
Platform make_single_gpu_platform(const std::string& name, const config::LinkParams& link);

// A shipped platform by name (config::platform_names()); every PCIe link takes `params.link`,
// every NVLink `params.nvlink`. Throws std::invalid_argument for an unknown name.
//   h100-sxm                 cpu0 - rc0 - gpu0
//   h200x2-nvlink            cpu0 - rc0 - {gpu0, gpu1}, gpu0 = gpu1 over NVLink
//   workstation-2gpu-switch  cpu0 - rc0 - sw0 - {gpu0, gpu1}
//   2gpu-rootports           cpu0 - rc0 - {gpu0, gpu1} on two root ports (peer through the root complex)
//   radar-switch             cpu0 - rc0 - sw0 - {gpu0, fpga0}
//   radar-rootports          cpu0 - rc0 - {gpu0, fpga0} on two root ports
Platform make_platform(const std::string& name, const config::ModelParams& params);

}  // namespace dmasim::topology
