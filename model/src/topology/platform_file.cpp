#include "dmasim/topology/platform_file.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <sstream>

#include "dmasim/config/param_checks.h"
#include "dmasim/config/param_io.h"
#include "dmasim/config/shipped_platforms.h"
#include "dmasim/config/yaml_io.h"
#include "dmasim/core/input_file.h"
#include "dmasim/core/error.h"
#include "dmasim/core/results.h"
#include "dmasim/pcie/wire.h"

namespace dmasim::topology {

namespace {

using core::InputError;

// Applies the keys of a YAML map to one parameter struct by its visitor; records the keys used.
template <class S>
void apply_keys(const YAML::Node& node, S& params, const std::string& origin, const std::string& where,
                std::set<std::string>& used) {
    params.visit([&](const config::FieldInfo& fi, auto& field) {
        const YAML::Node v = node[fi.key];
        if (!v) return;
        used.insert(fi.key);
        if (!v.IsScalar()) throw InputError(origin, where + "." + fi.key, "expected a single value (" + std::string(fi.unit) + ")");
        try {
            config::parse_field(v.Scalar(), field);
        } catch (const core::UnitError& e) {
            throw InputError(origin, where + "." + fi.key, e.what());
        }
    });
}

// The scenario's explicit settings win over the file's (a what-if overrides the machine).
template <class S>
void apply_explicit(S& target, const S& scenario, const std::string& section, const std::vector<std::string>& keys) {
    S src = scenario;
    std::vector<std::pair<std::string, std::string>> values;
    src.visit([&](const config::FieldInfo& fi, auto& field) {
        if (std::find(keys.begin(), keys.end(), section + "." + fi.key) != keys.end()) {
            values.emplace_back(fi.key, config::format_field(field));
        }
    });
    target.visit([&](const config::FieldInfo& fi, auto& field) {
        for (const auto& [k, v] : values) {
            if (k == fi.key) config::parse_field(v, field);
        }
    });
}

NodeKind kind_of(const std::string& k, std::string& device) {
    if (k == "cpu") return NodeKind::kCpu;
    if (k == "root_complex") return NodeKind::kRootComplex;
    if (k == "switch") return NodeKind::kSwitch;
    if (k == "nvswitch") return NodeKind::kNvSwitch;
    if (k == "gpu" || k == "npu") {
        // An accelerator that is not a GPU (an NPU such as Ascend's) is modelled as one: copy
        // engines, memory and a PCIe link with the gpu.* and dma.* settings; it is numbered with
        // the GPUs, in file order, and says what it is in topo show and config.json.
        device = k;
        return NodeKind::kGpu;
    }
    if (k == "fpga" || k == "nic" || k == "nvme") {
        device = k;
        return NodeKind::kEndpoint;
    }
    throw std::invalid_argument(k);
}

std::string text_of(const YAML::Node& n, const std::string& origin, const std::string& key) {
    if (!n || !n.IsScalar()) throw InputError(origin, key, "missing or not a single value");
    return n.Scalar();
}

// An optional key's single value.
std::string scalar_of(const YAML::Node& n, const std::string& origin, const std::string& key) {
    if (!n.IsScalar()) throw InputError(origin, key, "expected a single value");
    return n.Scalar();
}

bool is_bridge(NodeKind k) { return k == NodeKind::kRootComplex || k == NodeKind::kSwitch || k == NodeKind::kNvSwitch; }
bool is_device(NodeKind k) { return k == NodeKind::kGpu || k == NodeKind::kEndpoint; }

// A node's kind as the file spells it ("gpu", "nic", "root_complex").
std::string kind_text(const NodeProps& n) { return n.device.empty() ? std::string(to_string(n.kind)) : n.device; }

// Node ids are the file's node indices (vecS: vertices are numbered in insertion order).
std::string node_key(NodeId n) { return "nodes[" + std::to_string(n) + "]"; }
std::string link_key(std::size_t i) { return "links[" + std::to_string(i) + "]"; }

// Bounds on a platform's size: real machines have tens of nodes (a DGX: 35); routing tables grow
// with the square of the count, and the model numbers nodes with 16 bits.
constexpr std::size_t kMaxNodes = 1024;
constexpr std::size_t kMaxLinks = 4096;
constexpr std::size_t kMaxNameLength = 64;

// Node names become SystemC module names and Graphviz labels: letters, digits, '_' and '-'.
void check_node_name(const std::string& name, const std::string& origin, const std::string& key) {
    if (name.empty()) throw InputError(origin, key, "must not be empty");
    if (name.size() > kMaxNameLength) {
        throw InputError(origin, key, "is longer than " + std::to_string(kMaxNameLength) + " characters");
    }
    for (const char c : name) {
        const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-';
        if (!ok) throw InputError(origin, key, "'" + name + "' has characters other than letters, digits, '_' and '-'");
    }
}

// What kinds of node each kind of link may join. Checked as links are read, so the message can
// name the end that is wrong.
void check_link_ends(const Platform& p, LinkKind kind, NodeId a, NodeId b, const std::string& origin,
                     const std::string& where) {
    const NodeProps& na = p.node(a);
    const NodeProps& nb = p.node(b);
    // The end to blame: the first one that may not take this kind of link at all.
    auto blame = [&](auto&& allowed, const std::string& rule) {
        for (const auto& [n, end] : {std::pair{&na, ".a"}, std::pair{&nb, ".b"}}) {
            if (!allowed(n->kind)) throw InputError(origin, where + end, n->name + " is a " + kind_text(*n) + ": " + rule);
        }
    };
    switch (kind) {
        case LinkKind::kPcie:
            blame([](NodeKind k) { return k == NodeKind::kRootComplex || k == NodeKind::kSwitch || is_device(k); },
                  "a PCIe link joins root complexes, switches and devices (a CPU reaches its root complex by kind: "
                  "internal, an NVSwitch takes NVLinks)");
            if (is_device(na.kind) && is_device(nb.kind)) {
                throw InputError(origin, where + ".b",
                                 na.name + " and " + nb.name + " are both devices: a PCIe link has a root port or a "
                                 "switch at one end (GPUs bond directly with kind: nvlink)");
            }
            if (na.kind == NodeKind::kRootComplex && nb.kind == NodeKind::kRootComplex) {
                throw InputError(origin, where + ".b",
                                 na.name + " and " + nb.name + " are both root complexes: they meet through kind: socket");
            }
            break;
        case LinkKind::kNvlink:
            blame([](NodeKind k) { return k == NodeKind::kGpu || k == NodeKind::kNvSwitch; },
                  "NVLink joins GPUs and NVSwitches only");
            break;
        case LinkKind::kSocket:
            blame([](NodeKind k) { return k == NodeKind::kRootComplex; },
                  "a socket link (the CPUs' UPI/xGMI fabric) joins two root complexes");
            break;
        case LinkKind::kInternal:
            blame([](NodeKind k) { return k == NodeKind::kCpu || k == NodeKind::kRootComplex; },
                  "an internal link joins a cpu to its root complex");
            if (na.kind == nb.kind) {
                throw InputError(origin, where + ".b", "an internal link joins a cpu to a root complex, not two " +
                                                           kind_text(na) + " nodes");
            }
            break;
    }
}

struct LinkRecord {
    NodeId a;
    NodeId b;
    LinkKind kind;
    EdgeId edge;
};

// Minimal union-find over node ids, for the PCIe forest.
struct Components {
    std::vector<NodeId> parent;
    explicit Components(std::size_t n) : parent(n) {
        for (std::size_t i = 0; i < n; ++i) parent[i] = i;
    }
    NodeId find(NodeId v) {
        while (parent[v] != v) v = parent[v] = parent[parent[v]];
        return v;
    }
};

// The shape of the machine: PCIe is a tree under each root complex (PCIe Base Specification,
// §1.3: every switch and endpoint has one upstream port), every device hangs off one, each root
// complex belongs to one CPU, and the root complexes are joined by socket links. NVLink and
// socket links may form cycles (the CPU fabric and NVSwitch planes do).
void check_structure(const Platform& p, const std::vector<LinkRecord>& links, const std::string& origin) {
    const Graph& g = p.graph();
    const std::size_t n = boost::num_vertices(g);
    auto fail = [&](const std::string& key, const std::string& message) { throw InputError(origin, key, message); };
    if (p.nodes_of(NodeKind::kCpu).empty()) fail("nodes", "a platform needs a cpu node");
    if (p.nodes_of(NodeKind::kRootComplex).empty()) fail("nodes", "a platform needs a root_complex node");
    if (p.nodes_of(NodeKind::kGpu).empty() && p.nodes_of(NodeKind::kEndpoint).empty()) {
        fail("nodes", "a platform needs a device (gpu, npu, fpga, nic or nvme)");
    }

    // Root complexes and their CPUs (internal links join only those two kinds).
    std::vector<std::optional<std::size_t>> cpu_link(n);  // a root complex's internal link
    std::vector<bool> cpu_has_rc(n, false);
    for (std::size_t i = 0; i < links.size(); ++i) {
        if (links[i].kind != LinkKind::kInternal) continue;
        const bool a_is_rc = g[links[i].a].kind == NodeKind::kRootComplex;
        const NodeId rc = a_is_rc ? links[i].a : links[i].b;
        const NodeId cpu = a_is_rc ? links[i].b : links[i].a;
        if (cpu_link[rc]) {
            const LinkRecord& first = links[*cpu_link[rc]];
            fail(link_key(i), g[rc].name + " already hangs off " +
                                  g[first.a == rc ? first.b : first.a].name + " (" + link_key(*cpu_link[rc]) +
                                  "): a root complex belongs to one CPU");
        }
        cpu_link[rc] = i;
        cpu_has_rc[cpu] = true;
    }
    for (NodeId v = 0; v < n; ++v) {
        const NodeProps& node = g[v];
        if (node.kind == NodeKind::kCpu) {
            for (NodeId u = 0; u < v; ++u) {
                if (g[u].kind == NodeKind::kCpu && g[u].socket == node.socket) {
                    fail(node_key(v) + ".socket", node.name + " and " + g[u].name + " are both socket " +
                                                      std::to_string(node.socket) + ": one cpu node per socket");
                }
            }
        }
        if (node.kind == NodeKind::kRootComplex && !cpu_link[v]) {
            fail(node_key(v), node.name + " has no CPU: add { a: <cpu>, b: " + node.name + ", kind: internal }");
        }
        if (node.kind == NodeKind::kCpu && !cpu_has_rc[v]) {
            fail(node_key(v), node.name + " has no root complex (an internal link to a root_complex node), so no "
                                          "device can reach its memory");
        }
        if (node.kind == NodeKind::kRootComplex) {
            const LinkRecord& l = links[*cpu_link[v]];
            const NodeProps& cpu = g[l.a == v ? l.b : l.a];
            if (cpu.socket != node.socket) {
                fail(node_key(v) + ".socket", node.name + " is in socket " + std::to_string(node.socket) +
                                                  " but hangs off " + cpu.name + " of socket " +
                                                  std::to_string(cpu.socket) + ": give it socket: " +
                                                  std::to_string(cpu.socket));
            }
        }
    }

    // The PCIe forest, link by link in file order so that the link that closes a loop is named.
    Components comp(n);
    std::vector<std::optional<NodeId>> root_of(n);  // per component representative: its root complex
    std::vector<std::optional<std::size_t>> device_link(n);
    for (NodeId v = 0; v < n; ++v) {
        if (g[v].kind == NodeKind::kRootComplex) root_of[v] = v;
    }
    for (std::size_t i = 0; i < links.size(); ++i) {
        const LinkRecord& l = links[i];
        if (l.kind != LinkKind::kPcie) continue;
        for (const NodeId d : {l.a, l.b}) {
            if (!is_device(g[d].kind)) continue;
            if (device_link[d]) {
                fail(link_key(i), g[d].name + " already has a PCIe link (" + link_key(*device_link[d]) +
                                      "): a device has one, to the switch or root port above it");
            }
            device_link[d] = i;
        }
        const NodeId ca = comp.find(l.a);
        const NodeId cb = comp.find(l.b);
        if (ca == cb) {
            fail(link_key(i), "closes a loop in the PCIe tree (" + g[l.a].name + " and " + g[l.b].name +
                                  " are already joined by PCIe links): each switch and device has one link towards "
                                  "its root complex");
        }
        if (root_of[ca] && root_of[cb]) {
            fail(link_key(i), "joins the PCIe trees of " + g[*root_of[ca]].name + " and " + g[*root_of[cb]].name +
                                  ": a switch or device hangs off one root complex; root complexes meet through "
                                  "kind: socket");
        }
        comp.parent[ca] = cb;
        if (!root_of[cb]) root_of[cb] = root_of[ca];
    }
    for (NodeId v = 0; v < n; ++v) {
        const NodeProps& node = g[v];
        if (node.kind != NodeKind::kSwitch && !is_device(node.kind)) continue;
        const auto rc = root_of[comp.find(v)];
        if (!rc) {
            fail(node_key(v), node.name + " (" + kind_text(node) +
                                  ") has no PCIe path to a root complex: it must hang off a root port, directly or "
                                  "through switches (kind: pcie links)");
        }
        if (node.socket != g[*rc].socket) {
            fail(node_key(v) + ".socket", node.name + " is in socket " + std::to_string(node.socket) + " but hangs off " +
                                              g[*rc].name + " of socket " + std::to_string(g[*rc].socket) +
                                              ": give it socket: " + std::to_string(g[*rc].socket));
        }
    }

    // NVSwitches exist to carry NVLinks.
    for (NodeId v = 0; v < n; ++v) {
        if (g[v].kind != NodeKind::kNvSwitch) continue;
        const bool any = std::any_of(links.begin(), links.end(), [&](const LinkRecord& l) {
            return l.kind == LinkKind::kNvlink && (l.a == v || l.b == v);
        });
        if (!any) fail(node_key(v), g[v].name + " (nvswitch) has no NVLink");
    }

    // Root complexes reach each other (and the other sockets' memory) only over socket links: a
    // CPU node is where memory is, never a hop.
    const auto rcs = p.nodes_of(NodeKind::kRootComplex);
    std::vector<bool> reached(n, false);
    std::vector<NodeId> todo{rcs.front()};
    reached[rcs.front()] = true;
    while (!todo.empty()) {
        const NodeId v = todo.back();
        todo.pop_back();
        for (const LinkRecord& l : links) {
            if (l.kind != LinkKind::kSocket || (l.a != v && l.b != v)) continue;
            const NodeId u = l.a == v ? l.b : l.a;
            if (!reached[u]) {
                reached[u] = true;
                todo.push_back(u);
            }
        }
    }
    for (const NodeId rc : rcs) {
        if (!reached[rc]) {
            fail(node_key(rc), g[rc].name + " is not joined to " + g[rcs.front()].name +
                                   " by socket links (kind: socket): traffic between root complexes, and to another "
                                   "socket's memory, crosses them (a CPU node is never a hop)");
        }
    }
}

// Values that only make sense with the links around them.
void check_neighbours(const Platform& p, const std::vector<LinkRecord>& links, const config::ModelParams& params,
                      const std::string& origin) {
    const Graph& g = p.graph();
    auto fail = [&](const std::string& key, const std::string& message) { throw InputError(origin, key, message); };
    // A bridge cuts completions at the RCB of the port they leave by.
    for (std::size_t i = 0; i < links.size(); ++i) {
        if (links[i].kind != LinkKind::kPcie) continue;
        for (const NodeId v : {links[i].a, links[i].b}) {
            if (!is_bridge(g[v].kind)) continue;
            config::check_completion_size(g[v].bridge, node_key(v) + ".", g[links[i].edge].pcie, link_key(i) + ".", fail);
        }
    }
    // TLPs cross links unsplit, so each receiver with finite data credits needs room for the
    // largest TLP anything may send: the largest MPS of any link, or of the scenario's own link
    // section (the GPU's completions to peer reads are that size).
    core::Bytes largest = params.link.mps;
    std::string largest_from = "the scenario's link.mps";
    for (std::size_t i = 0; i < links.size(); ++i) {
        if (links[i].kind != LinkKind::kPcie) continue;
        const core::Bytes mps = g[links[i].edge].pcie.mps;
        if (mps.value > largest.value) {
            largest = mps;
            largest_from = link_key(i) + ".mps";
        }
    }
    for (std::size_t i = 0; i < links.size(); ++i) {
        if (links[i].kind != LinkKind::kPcie) continue;
        const config::LinkParams& l = g[links[i].edge].pcie;
        const std::pair<const char*, std::int64_t> data[] = {{"credits_posted_data", l.credits_posted_data},
                                                             {"credits_completion_data", l.credits_completion_data}};
        for (const auto& [key, credits] : data) {
            if (credits == 0 || credits * 16 >= static_cast<std::int64_t>(largest.value)) continue;
            fail(link_key(i) + "." + key,
                 std::to_string(credits) + " credits (" + core::to_string(core::Bytes{static_cast<std::uint64_t>(credits) * 16}) +
                     ") are too few for a " + core::to_string(largest) + " TLP (" + largest_from +
                     "): at least " + std::to_string(largest.value / 16) + ", or 0 for infinite");
        }
    }
}

void check_calibration_key(const YAML::Node& n, const std::string& origin) {
    if (scalar_of(n, origin, "calibration").empty()) {
        throw InputError(origin, "calibration", "must name a built-in calibration, a calibration file, or none");
    }
}

Platform read_platform(const YAML::Node& doc, const std::string& origin, const config::ModelParams& params,
                       const std::vector<std::string>& explicit_keys, const DeviceLinks& device_links) {
    if (!doc.IsMap()) throw InputError(origin, "", "a platform must be a YAML map");
    for (const auto& kv : doc) {
        const std::string k = kv.first.as<std::string>();
        if (k != "name" && k != "description" && k != "nodes" && k != "links" && k != "peer_rule" && k != "calibration" &&
            k != "host") {
            throw InputError(origin, k,
                             "unknown key; a platform takes: name, description, calibration, host, peer_rule, nodes, links");
        }
    }
    // Its host values are applied with its calibration by the scenario loader
    // (config::platform_host), which checks them; here only their form.
    if (doc["host"] && !doc["host"].IsMap()) {
        throw InputError(origin, "host", "expected a map of sections, e.g. host: { cpu: { memcpy_bandwidth: 6GB/s } }");
    }
    // Which calibration its scenarios start from is the scenario loader's business
    // (config::platform_calibration); here only its form.
    if (doc["calibration"]) check_calibration_key(doc["calibration"], origin);
    const std::string name = text_of(doc["name"], origin, "name");
    if (name.empty()) throw InputError(origin, "name", "must not be empty");
    Platform p(name);
    p.set_origin(origin);
    if (doc["description"]) p.set_description(scalar_of(doc["description"], origin, "description"));
    if (doc["peer_rule"]) {
        const std::string rule = scalar_of(doc["peer_rule"], origin, "peer_rule");
        if (rule != "any" && rule != "same_switch") throw InputError(origin, "peer_rule", "must be any or same_switch");
        p.set_peer_same_switch_only(rule == "same_switch");
    }
    const YAML::Node nodes = doc["nodes"];
    if (!nodes || !nodes.IsSequence() || nodes.size() == 0) {
        throw InputError(origin, "nodes", "missing: a list of nodes such as { name: gpu0, kind: gpu }");
    }
    if (nodes.size() > kMaxNodes) {
        throw InputError(origin, "nodes", std::to_string(nodes.size()) + " nodes; at most " + std::to_string(kMaxNodes));
    }
    auto fail = [&](const std::string& key, const std::string& message) { throw InputError(origin, key, message); };
    for (std::size_t i = 0; i < nodes.size(); ++i) {
        const YAML::Node n = nodes[i];
        const std::string where = "nodes[" + std::to_string(i) + "]";
        if (!n.IsMap()) throw InputError(origin, where, "a node is a map such as { name: gpu0, kind: gpu }");
        NodeProps props;
        props.name = text_of(n["name"], origin, where + ".name");
        check_node_name(props.name, origin, where + ".name");
        if (const auto other = p.find(props.name)) {
            throw InputError(origin, where + ".name",
                             "'" + props.name + "' is already the name of " + node_key(*other) + ": names are unique");
        }
        try {
            props.kind = kind_of(text_of(n["kind"], origin, where + ".kind"), props.device);
        } catch (const std::invalid_argument& e) {
            throw InputError(origin, where + ".kind",
                             std::string("'") + e.what() + "' is not cpu, root_complex, switch, nvswitch, gpu, npu, fpga, nic or nvme");
        }
        std::set<std::string> used{"name", "kind", "socket", "p2p", "p2p_reads"};
        props.bridge = params.root_complex;
        if (is_bridge(props.kind)) {
            apply_keys(n, props.bridge, origin, where, used);
            apply_explicit(props.bridge, params.root_complex, "root_complex", explicit_keys);
            config::check_root_complex(props.bridge, where + ".", fail);
        }
        props.bar = config::GpuBarParams::of(params.gpu);
        if (props.kind == NodeKind::kGpu) {
            const std::size_t before = used.size();
            apply_keys(n, props.bar, origin, where, used);
            props.bar_given = used.size() > before;
            apply_explicit(props.bar, config::GpuBarParams::of(params.gpu), "gpu", explicit_keys);
            config::GpuParams check;
            check.bar_aperture = props.bar.bar_aperture;
            check.bar_remap = props.bar.bar_remap;
            config::check_gpu(check, where + ".", fail);
        }
        props.card = params.card_dma;
        if (props.kind == NodeKind::kEndpoint) {
            apply_keys(n, props.card, origin, where, used);
            apply_explicit(props.card, params.card_dma, "card_dma", explicit_keys);
            config::check_card_dma(props.card, where + ".", fail);
        }
        for (const auto& kv : n) {
            const std::string k = kv.first.as<std::string>();
            if (used.count(k)) continue;
            std::string takes = "name, kind, socket, p2p, p2p_reads";
            if (is_bridge(props.kind)) {
                config::RootComplexParams keys;
                keys.visit([&](const config::FieldInfo& fi, auto&) { takes += std::string(", ") + fi.key; });
            }
            if (props.kind == NodeKind::kGpu) {
                config::GpuBarParams keys;
                keys.visit([&](const config::FieldInfo& fi, auto&) { takes += std::string(", ") + fi.key; });
            }
            if (props.kind == NodeKind::kEndpoint) {
                config::CardDmaParams keys;
                keys.visit([&](const config::FieldInfo& fi, auto&) { takes += std::string(", ") + fi.key; });
            }
            throw InputError(origin, where + "." + k, "unknown key; this node takes: " + takes);
        }
        if (n["socket"]) {
            std::int64_t socket = 0;
            try {
                config::parse_field(scalar_of(n["socket"], origin, where + ".socket"), socket);
            } catch (const core::UnitError& e) {
                throw InputError(origin, where + ".socket", e.what());
            }
            if (socket < 0 || socket > 63) {
                throw InputError(origin, where + ".socket", "must be 0..63, not " + std::to_string(socket));
            }
            props.socket = static_cast<int>(socket);
        }
        if (n["p2p"]) {
            const std::string v = scalar_of(n["p2p"], origin, where + ".p2p");
            if (!is_bridge(props.kind)) throw InputError(origin, where + ".p2p", "only bridges have a p2p policy");
            if (v == "allowed") {
                props.p2p = P2pPolicy::kAllowed;
            } else if (v == "via_cpu") {
                props.p2p = P2pPolicy::kViaCpu;
            } else if (v == "refused") {
                props.p2p = P2pPolicy::kRefused;
            } else {
                throw InputError(origin, where + ".p2p", "must be allowed, via_cpu or refused");
            }
        }
        if (n["p2p_reads"]) {
            const std::string v = scalar_of(n["p2p_reads"], origin, where + ".p2p_reads");
            if (props.kind != NodeKind::kRootComplex) {
                throw InputError(origin, where + ".p2p_reads", "only root complexes have a policy for peer reads");
            }
            if (v != "allowed" && v != "refused") throw InputError(origin, where + ".p2p_reads", "must be allowed or refused");
            props.peer_reads = v == "allowed";
        }
        p.add_node(props);
    }
    const YAML::Node link_list = doc["links"];
    if (!link_list || !link_list.IsSequence()) {
        throw InputError(origin, "links", "missing: a list of links such as { a: rc0, b: gpu0, kind: pcie }");
    }
    if (link_list.size() > kMaxLinks) {
        throw InputError(origin, "links", std::to_string(link_list.size()) + " links; at most " + std::to_string(kMaxLinks));
    }
    std::vector<LinkRecord> records;
    for (std::size_t i = 0; i < link_list.size(); ++i) {
        const YAML::Node l = link_list[i];
        const std::string where = link_key(i);
        if (!l.IsMap()) throw InputError(origin, where, "a link is a map such as { a: rc0, b: gpu0, kind: pcie }");
        const std::string a = text_of(l["a"], origin, where + ".a");
        const std::string b = text_of(l["b"], origin, where + ".b");
        const auto na = p.find(a);
        const auto nb = p.find(b);
        if (!na) throw InputError(origin, where + ".a", "no node named '" + a + "'");
        if (!nb) throw InputError(origin, where + ".b", "no node named '" + b + "'");
        if (*na == *nb) throw InputError(origin, where + ".b", "a link joins two different nodes; both ends are '" + a + "'");
        const std::string kind = l["kind"] ? scalar_of(l["kind"], origin, where + ".kind") : std::string("pcie");
        LinkProps props{LinkKind::kPcie, params.link, params.nvlink};
        std::set<std::string> used{"a", "b", "kind"};
        if (kind == "pcie") {
            apply_keys(l, props.pcie, origin, where, used);
            apply_explicit(props.pcie, params.link, "link", explicit_keys);
            // A device's own link: the scenario's settings for that device win over both.
            for (const NodeId end : {*na, *nb}) {
                if (!is_device(p.node(end).kind)) continue;
                bool set = false;
                for (const auto& d : device_links.settings) {
                    if (d.device != p.node(end).name) continue;
                    set = true;
                    props.pcie.visit([&](const config::FieldInfo& fi, auto& field) {
                        if (fi.key == d.key) config::parse_field(d.value, field);
                    });
                }
                // Its bounds as link.* has them, the error naming the scenario's key.
                if (set) {
                    config::check_link(props.pcie, "links." + p.node(end).name + ".",
                                       [&](const std::string& key, const std::string& message) {
                                           throw InputError(device_links.scenario_file, key, message);
                                       });
                }
            }
        } else if (kind == "nvlink") {
            props.kind = LinkKind::kNvlink;
            apply_keys(l, props.nvlink, origin, where, used);
            apply_explicit(props.nvlink, params.nvlink, "nvlink", explicit_keys);
        } else if (kind == "socket") {
            props.kind = LinkKind::kSocket;
            props.nvlink = config::NvlinkParams{};
            props.nvlink.links = 1;
            props.nvlink.link_rate = core::Bandwidth{64e9};
            props.nvlink.latency = core::Duration{150'000};
            props.nvlink.max_payload = params.link.mps;
            for (const char* key : {"bandwidth", "latency", "peer_bandwidth"}) {
                if (!l[key]) continue;
                used.insert(key);
                const std::string value = scalar_of(l[key], origin, where + "." + key);
                try {
                    if (std::string(key) == "bandwidth") {
                        props.nvlink.link_rate = core::parse_bandwidth(value);
                    } else if (std::string(key) == "peer_bandwidth") {
                        props.peer_bandwidth = core::parse_bandwidth(value);
                    } else {
                        props.nvlink.latency = core::parse_duration(value);
                    }
                } catch (const core::UnitError& e) {
                    throw InputError(origin, where + "." + key, e.what());
                }
            }
            // Written so that NaN fails too; 0B/s: peer writes cross as any other traffic.
            if (l["peer_bandwidth"] &&
                !(props.peer_bandwidth.bytes_per_s >= 0.0 && props.peer_bandwidth.bytes_per_s <= props.nvlink.link_rate.bytes_per_s)) {
                throw InputError(origin, where + ".peer_bandwidth",
                                 "must be 0B/s (as other traffic) or a rate up to the link's bandwidth (" +
                                     core::to_string(props.nvlink.link_rate) + "), not " + core::to_string(props.peer_bandwidth));
            }
        } else if (kind == "internal") {
            props.kind = LinkKind::kInternal;
        } else {
            throw InputError(origin, where + ".kind", "'" + kind + "' is not pcie, nvlink, socket or internal");
        }
        for (const auto& kv : l) {
            const std::string k = kv.first.as<std::string>();
            if (!used.count(k)) throw InputError(origin, where + "." + k, "unknown key for a " + kind + " link");
        }
        // The values as the run will see them: the file's, then the scenario's explicit ones.
        switch (props.kind) {
            case LinkKind::kPcie: config::check_link(props.pcie, where + ".", fail); break;
            case LinkKind::kNvlink: config::check_nvlink(props.nvlink, where + ".", fail); break;
            case LinkKind::kSocket: config::check_socket_link(props.nvlink, where + ".", fail); break;
            case LinkKind::kInternal: break;
        }
        check_link_ends(p, props.kind, *na, *nb, origin, where);
        for (std::size_t j = 0; j < records.size(); ++j) {
            if ((records[j].a == *na && records[j].b == *nb) || (records[j].a == *nb && records[j].b == *na)) {
                throw InputError(origin, where,
                                 "a second link between " + a + " and " + b + " (" + link_key(j) +
                                     " is the first): one link per pair of nodes (NVLinks bond as links: N)");
            }
        }
        records.push_back(LinkRecord{*na, *nb, props.kind, p.add_link(*na, *nb, props)});
    }
    // Every device the scenario set a link for is a device of this platform with a PCIe link.
    for (const auto& d : device_links.settings) {
        const auto n = p.find(d.device);
        if (!n || !is_device(p.node(*n).kind)) {
            std::string names;
            for (const auto v : devices(p)) names += (names.empty() ? "" : ", ") + p.node(v).name;
            throw InputError(device_links.scenario_file, "links." + d.device,
                             "platform " + p.name() + " has no device named '" + d.device + "' (" + names + ")");
        }
        if (device_pcie_link(p, *n) == nullptr) {
            throw InputError(device_links.scenario_file, "links." + d.device, d.device + " has no PCIe link on platform " + p.name());
        }
    }
    check_structure(p, records, origin);
    check_neighbours(p, records, params, origin);
    return p;
}

// A platform file is read once per scenario and case in every worker, and a calibration step
// reads each again; parsing its YAML was a tenth of a step. The document depends on the text
// alone (the parameters are applied after), and read_platform only reads it, so one parsed copy
// of each text serves every call of the process and of the workers it forks. Texts that fail
// are not kept: each call gets the same error. Bounded, so that a stream of different texts
// (a fuzzer) cannot grow it.
const YAML::Node& parsed_platform_text(const std::string& yaml, const std::string& origin) {
    static std::map<std::string, YAML::Node> parsed;
    constexpr std::size_t kMaxTexts = 64;
    const std::string key = origin + '\n' + yaml;
    auto it = parsed.find(key);
    if (it != parsed.end()) return it->second;
    YAML::Node doc = config::load_yaml(yaml, origin);
    if (parsed.size() >= kMaxTexts) parsed.clear();
    return parsed.emplace(key, std::move(doc)).first->second;
}

}  // namespace

Platform parse_platform(const std::string& yaml, const std::string& origin, const config::ModelParams& params,
                        const std::vector<std::string>& explicit_keys, const DeviceLinks& device_links) {
    const YAML::Node& doc = parsed_platform_text(yaml, origin);
    try {
        return read_platform(doc, origin, params, explicit_keys, device_links);
    } catch (const YAML::Exception& e) {
        throw InputError(origin, "", config::yaml_error_message(e));
    }
}

Platform load_platform(const std::string& ref, const config::ModelParams& params,
                       const std::vector<std::string>& explicit_keys, const DeviceLinks& device_links) {
    const auto& shipped = config::shipped_platforms();
    const auto it = shipped.find(ref);
    if (it != shipped.end()) return parse_platform(it->second, "platforms/" + ref + ".yaml", params, explicit_keys, device_links);
    return parse_platform(core::read_input_file(ref, "platform"), ref, params, explicit_keys, device_links);
}

Platform load_platform(const config::Scenario& s) {
    return load_platform(config::resolve_platform(s.platform, s.file), s.params, s.explicit_keys,
                         DeviceLinks{s.file, s.device_links});
}

std::vector<NodeId> gpus(const Platform& p) { return p.nodes_of(NodeKind::kGpu); }

const config::LinkParams* device_pcie_link(const Platform& p, NodeId device) {
    const Graph& g = p.graph();
    for (auto [e, end] = boost::out_edges(device, g); e != end; ++e) {
        if (g[*e].kind == LinkKind::kPcie) return &g[*e].pcie;
    }
    return nullptr;
}

std::vector<NodeId> devices(const Platform& p) {
    std::vector<NodeId> out = gpus(p);
    for (const auto n : p.nodes_of(NodeKind::kEndpoint)) out.push_back(n);
    return out;
}

double link_gbps(const LinkProps& l) {
    switch (l.kind) {
        case LinkKind::kPcie: return pcie::raw_gbps(l.pcie);
        case LinkKind::kNvlink:
        case LinkKind::kSocket: return static_cast<double>(l.nvlink.links) * l.nvlink.link_rate.gb_per_s();
        case LinkKind::kInternal: return 0.0;
    }
    return 0.0;
}

std::string describe(const Platform& p, EdgeId e) {
    const Graph& g = p.graph();
    const LinkProps& l = g[e];
    std::string s = g[boost::source(e, g)].name + "-" + g[boost::target(e, g)].name + " (";
    switch (l.kind) {
        case LinkKind::kPcie: s += "PCIe " + pcie::describe_link(l.pcie); break;
        case LinkKind::kNvlink:
            s += "NVLink x" + std::to_string(l.nvlink.links);
            // The GPU may feed the bond less than its flits carry (nvlink.port_bandwidth).
            if (l.nvlink.port_bandwidth.bytes_per_s > 0.0) s += ", GPU port " + core::to_string(l.nvlink.port_bandwidth);
            break;
        case LinkKind::kSocket:
            s += "socket link";
            if (l.peer_bandwidth.bytes_per_s > 0.0) s += ", peer-to-peer " + core::to_string(l.peer_bandwidth);
            break;
        case LinkKind::kInternal: s += "internal"; break;
    }
    return s + ")";
}

std::string effective_json(const Platform& p) {
    const Graph& g = p.graph();
    core::JsonWriter json;
    config::JsonFieldWriter fields{&json};
    json.begin_object();
    json.value("name", p.name());
    json.begin_array("nodes");
    for (auto [v, end] = boost::vertices(g); v != end; ++v) {
        NodeProps n = g[*v];
        json.begin_object();
        json.value("name", n.name);
        json.value("kind", n.device.empty() ? std::string(to_string(n.kind)) : n.device);
        json.value("socket", n.socket);
        if (is_bridge(n.kind)) {
            json.value("p2p", n.p2p == P2pPolicy::kAllowed ? "allowed" : n.p2p == P2pPolicy::kViaCpu ? "via_cpu" : "refused");
            if (n.kind == NodeKind::kRootComplex) json.value("p2p_reads", n.peer_reads ? "allowed" : "refused");
            fields.section("root_complex", "", n.bridge);
        }
        if (n.kind == NodeKind::kEndpoint) fields.section("card_dma", "", n.card);
        if (n.kind == NodeKind::kGpu) fields.section("gpu", "", n.bar);
        json.end_object();
    }
    json.end_array();
    json.begin_array("links");
    for (auto [e, end] = boost::edges(g); e != end; ++e) {
        LinkProps l = g[*e];
        json.begin_object();
        json.value("a", g[boost::source(*e, g)].name);
        json.value("b", g[boost::target(*e, g)].name);
        json.value("kind", to_string(l.kind));
        switch (l.kind) {
            case LinkKind::kPcie:
                fields.section("link", "", l.pcie);
                break;
            case LinkKind::kNvlink:
                fields.section("nvlink", "", l.nvlink);
                break;
            case LinkKind::kSocket:
                fields.section("nvlink", "", l.nvlink);
                json.value("peer_bandwidth", core::to_string(l.peer_bandwidth));
                break;
            case LinkKind::kInternal: break;
        }
        json.end_object();
    }
    json.end_array();
    json.end_object();
    return json.str();
}

namespace {
std::string class_of(const Platform& p, const std::vector<Hop>& hops) {
    const Graph& g = p.graph();
    // All NVLink (directly or through NVSwitches): NV# with the narrowest bond.
    bool all_nvlink = true;
    std::int64_t narrowest = 0;
    for (const auto& h : hops) {
        if (g[h.edge].kind != LinkKind::kNvlink) {
            all_nvlink = false;
            break;
        }
        narrowest = narrowest == 0 ? g[h.edge].nvlink.links : std::min(narrowest, g[h.edge].nvlink.links);
    }
    if (all_nvlink) return "NV" + std::to_string(narrowest);
    int host_bridges = 0;
    int switches = 0;
    bool sockets = false;
    for (std::size_t i = 0; i < hops.size(); ++i) {
        const NodeProps& n = g[hops[i].to];
        if (g[hops[i].from].socket != n.socket) sockets = true;
        if (i + 1 == hops.size()) break;  // the destination itself
        if (n.kind == NodeKind::kRootComplex) ++host_bridges;
        if (n.kind == NodeKind::kSwitch) ++switches;
    }
    if (sockets) return "SYS";
    if (host_bridges >= 2) return "NODE";
    if (host_bridges == 1) return "PHB";
    return switches <= 1 ? "PIX" : "PXB";
}
}  // namespace

std::string route_class(const Platform& p, NodeId a, NodeId b) { return a == b ? "X" : class_of(p, p.route(a, b)); }

std::string pcie_route_class(const Platform& p, NodeId a, NodeId b) {
    return a == b ? "X" : class_of(p, p.pcie_route(a, b));
}

Bottleneck bottleneck(const Platform& p, NodeId a, NodeId b) {
    Bottleneck best;
    for (const auto& h : p.route(a, b)) {
        const double gbps = link_gbps(p.link(h.edge));
        if (gbps <= 0.0) continue;
        if (best.link.empty() || gbps < best.gbps) best = Bottleneck{describe(p, h.edge), gbps};
    }
    return best;
}

PeerPath peer_path(const Platform& p, NodeId a, NodeId b) {
    PeerPath out;
    if (a == b) return out;
    const Graph& g = p.graph();
    if (p.peer_same_switch_only()) {
        // A rule about the PCIe tree: judged on PCIe membership, whatever NVLink joins the pair.
        const auto tree = p.pcie_route(a, b);
        const bool one_switch = tree.size() == 2 && g[tree[0].to].kind == NodeKind::kSwitch;
        if (!one_switch) {
            out.refusal = "platform " + p.name() + " allows peer copies only between devices under one PCIe switch; " +
                          g[a].name + " and " + g[b].name + " are " + pcie_route_class(p, a, b) + " on PCIe";
            return out;
        }
    }
    // The bridges the traffic crosses (none over NVLink) say what they do with it.
    const auto hops = p.route(a, b);
    for (std::size_t i = 0; i + 1 < hops.size(); ++i) {
        const NodeProps& n = g[hops[i].to];
        if (n.p2p == P2pPolicy::kRefused) {
            out.refusal = n.name + " refuses peer-to-peer traffic";
            out.via_cpu.clear();
            return out;
        }
        if (n.p2p == P2pPolicy::kViaCpu && out.via_cpu.empty()) out.via_cpu = n.name;
        if (!n.peer_reads && out.read_refusal.empty()) out.read_refusal = n.name + " forwards peer writes but not peer reads";
    }
    return out;
}

std::string peer_refusal(const Platform& p, NodeId a, NodeId b) { return peer_path(p, a, b).refusal; }

std::string to_dot(const Platform& p) {
    const Graph& g = p.graph();
    std::ostringstream os;
    os << "graph \"" << p.name() << "\" {\n  node [fontname=\"Helvetica\"];\n";
    for (auto [it, end] = boost::vertices(g); it != end; ++it) {
        const NodeProps& n = g[*it];
        const char* shape = n.kind == NodeKind::kCpu ? "box3d"
                            : (n.kind == NodeKind::kRootComplex || n.kind == NodeKind::kSwitch ||
                               n.kind == NodeKind::kNvSwitch)
                                ? "diamond"
                                : "box";
        os << "  \"" << n.name << "\" [shape=" << shape << ", label=\"" << n.name << "\\n"
           << (n.device.empty() ? to_string(n.kind) : n.device) << ", socket " << n.socket << "\"];\n";
    }
    for (auto [e, end] = boost::edges(g); e != end; ++e) {
        const LinkProps& l = g[*e];
        std::string label;
        switch (l.kind) {
            case LinkKind::kPcie:
                label = "Gen" + std::to_string(l.pcie.generation) + " x" + std::to_string(l.pcie.lanes);
                break;
            case LinkKind::kNvlink: label = "NV" + std::to_string(l.nvlink.links); break;
            case LinkKind::kSocket: label = "socket"; break;
            case LinkKind::kInternal: label = ""; break;
        }
        os << "  \"" << g[boost::source(*e, g)].name << "\" -- \"" << g[boost::target(*e, g)].name << "\" [label=\""
           << label << "\"" << (l.kind == LinkKind::kNvlink ? ", color=\"#009E73\", penwidth=2" : "")
           << (l.kind == LinkKind::kInternal ? ", style=dotted" : "") << "];\n";
    }
    os << "}\n";
    return os.str();
}

namespace {
// A peer copy needs a route between its two GPUs. A platform file that passed its checks has
// one; this keeps a platform built in code from failing inside the simulation instead.
void check_connected(const config::Scenario& s, const Platform& p, NodeId a, NodeId b, const std::string& key) {
    try {
        (void)p.route(a, b);
    } catch (const InputError&) {
        throw InputError(s.file, key,
                         p.node(a).name + " and " + p.node(b).name + " of platform " + p.name() +
                             " are not connected: no route through root complexes, switches or NVLink joins them");
    }
}
}  // namespace

void check_scenario_platform(const config::Scenario& s, const Platform& p) {
    const auto g = gpus(p);
    const auto cards = p.nodes_of(NodeKind::kEndpoint);
    for (std::size_t i = 0; i < s.flows.size(); ++i) {
        const auto& f = s.flows[i];
        const std::string where = "flows[" + std::to_string(i) + "]";
        if (static_cast<std::size_t>(f.device) >= g.size()) {
            throw InputError(s.file, where + ".device",
                             "GPU " + std::to_string(f.device) + " does not exist on platform " + p.name() + " (" +
                                 std::to_string(g.size()) + " GPUs)");
        }
        if (f.strategy == "peer" && static_cast<std::size_t>(f.peer_device) >= g.size()) {
            throw InputError(s.file, where + ".peer_device", "GPU " + std::to_string(f.peer_device) + " does not exist");
        }
        if (f.strategy == "peer") {
            check_connected(s, p, g[static_cast<std::size_t>(f.device)], g[static_cast<std::size_t>(f.peer_device)],
                            where + ".peer_device");
        }
        if (f.strategy == "third_party_dma" &&
            std::none_of(cards.begin(), cards.end(), [&](NodeId n) { return p.node(n).device == "fpga"; })) {
            throw InputError(s.file, where + ".strategy", "platform " + p.name() + " has no capture card (fpga)");
        }
        // A flow has no fallback through host memory: a refused path is the scenario's error.
        if (f.strategy == "peer") {
            const std::string why = peer_refusal(p, g[static_cast<std::size_t>(f.device)], g[static_cast<std::size_t>(f.peer_device)]);
            if (!why.empty()) throw InputError(s.file, where + ".peer_device", "the platform refuses this peer flow: " + why);
        }
        if (f.strategy == "third_party_dma") {
            const std::string why = peer_refusal(p, cards.front(), g[static_cast<std::size_t>(f.device)]);
            if (!why.empty()) {
                throw InputError(s.file, where + ".strategy",
                                 "the platform refuses the card's writes into GPU " + std::to_string(f.device) + ": " + why);
            }
        }
    }
    if (!s.flows.empty()) return;
    for (const auto& st : s.strategies) {
        if (st == "peer") {
            const auto& po = s.options.peer;
            if (static_cast<std::size_t>(std::max(po.src_device, po.dst_device)) >= g.size()) {
                throw InputError(s.file, "platform",
                                 "peer needs GPUs " + std::to_string(po.src_device) + " and " +
                                     std::to_string(po.dst_device) + ", but platform " + p.name() + " has " +
                                     std::to_string(g.size()));
            }
            if (po.src_device != po.dst_device) {
                check_connected(s, p, g[static_cast<std::size_t>(po.src_device)],
                                g[static_cast<std::size_t>(po.dst_device)], "peer.dst_device");
            }
            // A copy within one GPU never leaves it: no peer rule applies.
            const std::string refusal = po.src_device == po.dst_device
                                            ? std::string()
                                            : peer_refusal(p, g[static_cast<std::size_t>(po.src_device)],
                                                           g[static_cast<std::size_t>(po.dst_device)]);
            if (!refusal.empty() && po.refused == "error") {
                throw InputError(s.file, "peer.refused", "the platform refuses this peer copy: " + refusal);
            }
        }
        if (st == "third_party_dma") {
            const bool fpga = std::any_of(cards.begin(), cards.end(), [&](NodeId n) { return p.node(n).device == "fpga"; });
            if (!fpga || g.empty()) {
                throw InputError(s.file, "platform",
                                 "third_party_dma needs a capture card (an fpga node) and a GPU; platform " + p.name() +
                                     " has none (shipped: radar-switch, radar-rootports)");
            }
        }
        const std::string& via = s.options.periodic.via;
        if (st == "periodic" && (via == "fpga_direct" || via == "fpga_via_host") &&
            std::none_of(cards.begin(), cards.end(), [&](NodeId n) { return p.node(n).device == "fpga"; })) {
            throw InputError(s.file, "frame.via", via + " needs a capture card (an fpga node); platform " + p.name() +
                                                       " has none (shipped: radar-switch, radar-rootports)");
        }
        if (st == "periodic" && via == "fpga_direct" && !g.empty()) {
            // The card writes each frame into GPU memory itself: nothing can stage it on the way.
            const std::string why = peer_refusal(p, cards.front(), g.front());
            if (!why.empty()) {
                throw InputError(s.file, "frame.via",
                                 "fpga_direct needs the card to write into the GPU, which the platform refuses: " + why +
                                     "; fpga_via_host goes through pinned host memory");
            }
        }
        if (st == "cpu_mapped" && s.options.cpu_mapped.target == "card" && cards.empty()) {
            throw InputError(s.file, "cpu_mapped.target", "card: platform " + p.name() +
                                                              " has no card (an fpga, nic or nvme node; shipped: radar-switch, radar-rootports)");
        }
        if ((st != "peer" && st != "third_party_dma") && g.empty()) {
            throw InputError(s.file, "platform", "platform " + p.name() + " has no GPU");
        }
    }
}

}  // namespace dmasim::topology
