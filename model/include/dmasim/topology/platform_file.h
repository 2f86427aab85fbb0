// Platform files (docs/platforms.md): reading them into a Platform graph, route classes as
// `nvidia-smi topo -m` prints them, each route's bottleneck link, and Graphviz output.
#pragma once

#include <string>
#include <vector>

#include "dmasim/config/params.h"
#include "dmasim/config/scenario.h"
#include "dmasim/topology/platform.h"

namespace dmasim::topology {

// A scenario's settings of single devices' own links (config::Scenario::device_links) and the
// scenario file its errors name.
struct DeviceLinks {
    std::string scenario_file;
    std::vector<config::Scenario::DeviceLink> settings;
};

// Reads a platform from YAML text. Links take `params.link` / `params.nvlink`, then the
// file's own keys, then the scenario's explicitly set `link.*`/`nvlink.*` keys (what-ifs), then
// the scenario's settings of a device's own link (`links.fpga0.lanes`). Throws core::InputError
// naming `origin` and the key (the scenario file and `links.DEVICE.KEY` for a device's setting).
Platform parse_platform(const std::string& yaml, const std::string& origin, const config::ModelParams& params,
                        const std::vector<std::string>& explicit_keys = {}, const DeviceLinks& device_links = {});
// A shipped platform by name, or a platform file (see config::resolve_platform).
Platform load_platform(const std::string& ref, const config::ModelParams& params,
                       const std::vector<std::string>& explicit_keys = {}, const DeviceLinks& device_links = {});
// The platform a scenario runs on.
Platform load_platform(const config::Scenario& scenario);

// Devices (GPUs and other endpoints) in the order users number them: gpus first, by name order.
std::vector<NodeId> devices(const Platform& p);
std::vector<NodeId> gpus(const Platform& p);
// A device's own PCIe link (the first PCIe edge at it), or nullptr where it has none.
const config::LinkParams* device_pcie_link(const Platform& p, NodeId device);

// X, NV#, PIX, PXB, PHB, NODE or SYS.
std::string route_class(const Platform& p, NodeId a, NodeId b);
// The same for the PCIe route alone (Platform::pcie_route): PIX, PXB, PHB, NODE or SYS.
std::string pcie_route_class(const Platform& p, NodeId a, NodeId b);
// The slowest link on the route and its data rate per direction (GB/s).
struct Bottleneck {
    std::string link;  // "rc0-sw0 (pcie Gen5 x16)"
    double gbps = 0.0;
};
Bottleneck bottleneck(const Platform& p, NodeId a, NodeId b);
double link_gbps(const LinkProps& l);
std::string describe(const Platform& p, EdgeId e);

// How peer-to-peer traffic from device a to device b goes by the platform's rules and the
// bridges on its route: refused (and why), bounced through host memory at a via_cpu bridge, or
// straight (both empty). The same for a GPU's peer copy and a card's DMA into a GPU.
struct PeerPath {
    std::string refusal;  // non-empty: refused, and why
    std::string via_cpu;  // the first bridge on the route that bounces it through host memory
    // Non-empty: writes go but a read of b's memory by a (its BAR) is refused, and why.
    std::string read_refusal;
};
PeerPath peer_path(const Platform& p, NodeId a, NodeId b);
// peer_path's refusal alone.
std::string peer_refusal(const Platform& p, NodeId a, NodeId b);

std::string to_dot(const Platform& p);
// Every node and link with the parameters it carries, as a JSON object (for config.json).
std::string effective_json(const Platform& p);

// Checks that the scenario's strategies can run on its platform (peer needs two GPUs, ...).
// Throws core::InputError naming the scenario file and key.
void check_scenario_platform(const config::Scenario& s, const Platform& p);

}  // namespace dmasim::topology
