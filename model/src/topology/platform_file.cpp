#include "dmasim/topology/platform_file.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <fstream>
#include <set>
#include <sstream>

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

// Applies the keys of a YAML map to one parameter struct by its visitor, skipping `skip`.
template <class S>
void apply_keys(const YAML::Node& node, S& params, const std::string& origin, const std::string& where,
                std::set<std::string>& used) {
    params.visit([&](const config::FieldInfo& fi, auto& field) {
        const YAML::Node v = node[fi.key];
        if (!v) return;
        used.insert(fi.key);
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
    if (k == "gpu") {
        device = "gpu";
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

bool is_bridge(NodeKind k) { return k == NodeKind::kRootComplex || k == NodeKind::kSwitch || k == NodeKind::kNvSwitch; }

}  // namespace

Platform parse_platform(const std::string& yaml, const std::string& origin, const config::ModelParams& params,
                        const std::vector<std::string>& explicit_keys) {
    const YAML::Node doc = config::load_yaml(yaml, origin);
    if (!doc.IsMap()) throw InputError(origin, "", "a platform must be a YAML map");
    for (const auto& kv : doc) {
        const std::string k = kv.first.as<std::string>();
        if (k != "name" && k != "description" && k != "nodes" && k != "links" && k != "peer_rule") {
            throw InputError(origin, k, "unknown key; a platform takes: name, description, peer_rule, nodes, links");
        }
    }
    Platform p(text_of(doc["name"], origin, "name"));
    if (doc["description"]) p.set_description(doc["description"].Scalar());
    if (doc["peer_rule"]) {
        const std::string rule = doc["peer_rule"].Scalar();
        if (rule != "any" && rule != "same_switch") throw InputError(origin, "peer_rule", "must be any or same_switch");
        p.set_peer_same_switch_only(rule == "same_switch");
    }
    if (!doc["nodes"] || !doc["nodes"].IsSequence()) throw InputError(origin, "nodes", "missing: a list of nodes");
    for (std::size_t i = 0; i < doc["nodes"].size(); ++i) {
        const YAML::Node n = doc["nodes"][i];
        const std::string where = "nodes[" + std::to_string(i) + "]";
        NodeProps props;
        props.name = text_of(n["name"], origin, where + ".name");
        try {
            props.kind = kind_of(text_of(n["kind"], origin, where + ".kind"), props.device);
        } catch (const std::invalid_argument& e) {
            throw InputError(origin, where + ".kind",
                             std::string("'") + e.what() + "' is not cpu, root_complex, switch, nvswitch, gpu, fpga, nic or nvme");
        }
        std::set<std::string> used{"name", "kind", "socket", "p2p"};
        props.bridge = params.root_complex;
        if (is_bridge(props.kind)) {
            apply_keys(n, props.bridge, origin, where, used);
            apply_explicit(props.bridge, params.root_complex, "root_complex", explicit_keys);
        }
        for (const auto& kv : n) {
            const std::string k = kv.first.as<std::string>();
            if (used.count(k)) continue;
            std::string takes = "name, kind, socket, p2p";
            if (is_bridge(props.kind)) {
                config::RootComplexParams keys;
                keys.visit([&](const config::FieldInfo& fi, auto&) { takes += std::string(", ") + fi.key; });
            }
            throw InputError(origin, where + "." + k, "unknown key; this node takes: " + takes);
        }
        if (n["socket"]) {
            std::int64_t socket = 0;
            try {
                config::parse_field(n["socket"].Scalar(), socket);
            } catch (const core::UnitError& e) {
                throw InputError(origin, where + ".socket", e.what());
            }
            if (socket < 0 || socket > 63) throw InputError(origin, where + ".socket", "must be 0..63");
            props.socket = static_cast<int>(socket);
        }
        if (n["p2p"]) {
            const std::string v = n["p2p"].Scalar();
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
        try {
            p.add_node(props);
        } catch (const std::invalid_argument& e) {
            throw InputError(origin, where + ".name", e.what());
        }
    }
    if (!doc["links"] || !doc["links"].IsSequence()) throw InputError(origin, "links", "missing: a list of links");
    for (std::size_t i = 0; i < doc["links"].size(); ++i) {
        const YAML::Node l = doc["links"][i];
        const std::string where = "links[" + std::to_string(i) + "]";
        const std::string a = text_of(l["a"], origin, where + ".a");
        const std::string b = text_of(l["b"], origin, where + ".b");
        const auto na = p.find(a);
        const auto nb = p.find(b);
        if (!na) throw InputError(origin, where + ".a", "no node named '" + a + "'");
        if (!nb) throw InputError(origin, where + ".b", "no node named '" + b + "'");
        const std::string kind = l["kind"] ? l["kind"].Scalar() : std::string("pcie");
        LinkProps props{LinkKind::kPcie, params.link, params.nvlink};
        std::set<std::string> used{"a", "b", "kind"};
        if (kind == "pcie") {
            apply_keys(l, props.pcie, origin, where, used);
            apply_explicit(props.pcie, params.link, "link", explicit_keys);
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
            for (const char* key : {"bandwidth", "latency"}) {
                if (!l[key]) continue;
                used.insert(key);
                try {
                    if (std::string(key) == "bandwidth") {
                        props.nvlink.link_rate = core::parse_bandwidth(l[key].Scalar());
                    } else {
                        props.nvlink.latency = core::parse_duration(l[key].Scalar());
                    }
                } catch (const core::UnitError& e) {
                    throw InputError(origin, where + "." + key, e.what());
                }
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
        p.add_link(*na, *nb, props);
    }
    if (p.nodes_of(NodeKind::kCpu).empty()) throw InputError(origin, "nodes", "a platform needs a cpu node");
    return p;
}

Platform load_platform(const std::string& ref, const config::ModelParams& params,
                       const std::vector<std::string>& explicit_keys) {
    const auto& shipped = config::shipped_platforms();
    const auto it = shipped.find(ref);
    if (it != shipped.end()) return parse_platform(it->second, "platforms/" + ref + ".yaml", params, explicit_keys);
    return parse_platform(core::read_input_file(ref, "platform"), ref, params, explicit_keys);
}

Platform load_platform(const config::Scenario& s) {
    return load_platform(config::resolve_platform(s.platform, s.file), s.params, s.explicit_keys);
}

std::vector<NodeId> gpus(const Platform& p) { return p.nodes_of(NodeKind::kGpu); }

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
        case LinkKind::kNvlink: s += "NVLink x" + std::to_string(l.nvlink.links); break;
        case LinkKind::kSocket: s += "socket link"; break;
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
            fields.section("root_complex", "", n.bridge);
        }
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
            case LinkKind::kSocket:
                fields.section("nvlink", "", l.nvlink);
                break;
            case LinkKind::kInternal: break;
        }
        json.end_object();
    }
    json.end_array();
    json.end_object();
    return json.str();
}

std::string route_class(const Platform& p, NodeId a, NodeId b) {
    if (a == b) return "X";
    const auto hops = p.route(a, b);
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

Bottleneck bottleneck(const Platform& p, NodeId a, NodeId b) {
    Bottleneck best;
    for (const auto& h : p.route(a, b)) {
        const double gbps = link_gbps(p.link(h.edge));
        if (gbps <= 0.0) continue;
        if (best.link.empty() || gbps < best.gbps) best = Bottleneck{describe(p, h.edge), gbps};
    }
    return best;
}

std::string peer_refusal(const Platform& p, NodeId a, NodeId b) {
    const auto hops = p.route(a, b);
    const Graph& g = p.graph();
    if (p.peer_same_switch_only()) {
        const bool one_switch = hops.size() == 2 && g[hops[0].to].kind == NodeKind::kSwitch;
        if (!one_switch) {
            return "platform " + p.name() + " allows peer copies only between devices under one PCIe switch; " +
                   g[a].name + " and " + g[b].name + " are " + route_class(p, a, b);
        }
    }
    for (std::size_t i = 0; i + 1 < hops.size(); ++i) {
        const NodeProps& n = g[hops[i].to];
        if (n.p2p == P2pPolicy::kRefused) return n.name + " refuses peer-to-peer traffic";
    }
    return {};
}

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
        if (f.strategy == "third_party_dma" &&
            std::none_of(cards.begin(), cards.end(), [&](NodeId n) { return p.node(n).device == "fpga"; })) {
            throw InputError(s.file, where + ".strategy", "platform " + p.name() + " has no capture card (fpga)");
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
        if ((st != "peer" && st != "third_party_dma") && g.empty()) {
            throw InputError(s.file, "platform", "platform " + p.name() + " has no GPU");
        }
    }
}

}  // namespace dmasim::topology
