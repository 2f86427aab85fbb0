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

enum class NodeKind { kCpu, kRootComplex, kSwitch, kNvSwitch, kGpu, kEndpoint };
// What a bridge does with peer-to-peer traffic.
enum class P2pPolicy { kAllowed, kViaCpu, kRefused };
enum class LinkKind { kPcie, kNvlink, kSocket, kInternal };

const char* to_string(NodeKind k);
const char* to_string(LinkKind k);

struct NodeProps {
    std::string name;
    NodeKind kind = NodeKind::kEndpoint;
    int socket = 0;  // CPU socket (NUMA node) the node hangs off
    P2pPolicy p2p = P2pPolicy::kAllowed;  // bridges
    std::string device;                   // endpoints: gpu, fpga, nic, nvme
    // Bridges: their own settings (a platform of another era has another root complex); the
    // scenario's root_complex section where the platform file is silent.
    config::RootComplexParams bridge;
    // Endpoints other than GPUs (capture cards, NICs, drives): their DMA engine's own settings;
    // the scenario's card_dma section where the platform file is silent.
    config::CardDmaParams card;
    // GPUs (and NPUs): their BAR1 where the platform file gives it (bar_given), else the case's
    // gpu.bar_* settings apply.
    config::GpuBarParams bar;
    bool bar_given = false;
    // Root complexes: whether they forward peer reads (a device reading another's BAR) as they
    // forward peer writes. Intel client CPUs forward writes only (an NVIDIA driver engineer,
    // NVIDIA/open-gpu-kernel-modules#1253), as did AMD's before Zen (lore.kernel.org, linux-pci,
    // the AMD P2PDMA patch of 2020-04-06).
    bool peer_reads = true;
};

struct LinkProps {
    LinkKind kind = LinkKind::kPcie;
    config::LinkParams pcie;      // used when kind == kPcie
    config::NvlinkParams nvlink;  // used when kind == kNvlink, and for kSocket (one link of the socket bandwidth)
    // kSocket: the rate peer-to-peer writes (device to device) get across, payload per direction,
    // below what other traffic gets (NCCL prices a path across Intel sockets at 6-40 GB/s by CPU
    // generation, src/graph/topo.h); 0 = as any other traffic.
    core::Bandwidth peer_bandwidth{0.0};
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

    // Fewest-hop route from a to b (breadth-first search). Traffic never passes through a CPU
    // node (a CPU is where memory is, not a bridge). Empty when a == b; throws core::InputError
    // naming the platform's file when b cannot be reached.
    std::vector<Hop> route(NodeId a, NodeId b) const;
    // The same over PCIe and socket links alone (no NVLink): the PCIe tree's own route, which
    // rules about PCIe switch membership judge (Ascend's one-switch rule) whatever NVLink adds.
    std::vector<Hop> pcie_route(NodeId a, NodeId b) const;
    // The route's first edge out of `from` towards `to` (the egress a node uses).
    EdgeId next_edge(NodeId from, NodeId to) const;

    const Graph& graph() const { return graph_; }
    Graph& graph() { return graph_; }
    const NodeProps& node(NodeId n) const { return graph_[n]; }
    NodeProps& node(NodeId n) { return graph_[n]; }
    const LinkProps& link(EdgeId e) const { return graph_[e]; }
    LinkProps& link(EdgeId e) { return graph_[e]; }
    const std::string& name() const { return name_; }
    // The file the platform was read from (for error messages); empty when built in code.
    const std::string& origin() const { return origin_; }
    void set_origin(std::string origin) { origin_ = std::move(origin); }
    const std::string& description() const { return description_; }
    void set_description(std::string d) { description_ = std::move(d); }
    // Ascend's rule: peer copies only between devices under one PCIe switch.
    bool peer_same_switch_only() const { return peer_same_switch_only_; }
    void set_peer_same_switch_only(bool v) { peer_same_switch_only_ = v; }

private:
    std::string name_;
    std::string origin_;
    std::string description_;
    bool peer_same_switch_only_ = false;
    Graph graph_;
};

}  // namespace dmasim::topology
