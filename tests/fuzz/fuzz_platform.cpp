// Fuzz target: platform files (topology::parse_platform), then what dmasim asks of a platform
// that parsed: the route between every pair of devices and from every device to every CPU, the
// route class, the bottleneck, the peer rule, every link's description, the Graphviz and JSON
// forms. Bad input must end in core::InputError. A platform that passed its checks joins every
// pair of devices (platform_file.cpp), so a device pair without a route is a failure too.
#include <cstdint>
#include <string>

#include "dmasim/config/params.h"
#include "dmasim/topology/platform_file.h"
#include "fuzz_check.h"

namespace {
constexpr const char* kTarget = "platform";
using dmasim::fuzz::require;
using dmasim::fuzz::run;
namespace topology = dmasim::topology;
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string text(reinterpret_cast<const char*>(data), size);
    run(kTarget, [&] {
        const topology::Platform p = topology::parse_platform(text, "fuzz-platform.yaml", dmasim::config::ModelParams{});
        const auto devs = topology::devices(p);
        for (const auto a : devs) {
            for (const auto b : devs) {
                require(run(kTarget, [&] { (void)p.route(a, b); }), kTarget,
                        "a platform that parsed has no route between devices " + p.node(a).name + " and " +
                            p.node(b).name);
                (void)topology::route_class(p, a, b);
                (void)topology::bottleneck(p, a, b);
                (void)topology::peer_refusal(p, a, b);
            }
            for (const auto cpu : p.nodes_of(topology::NodeKind::kCpu)) {
                run(kTarget, [&] {
                    (void)p.route(a, cpu);
                    (void)p.route(cpu, a);
                    (void)topology::route_class(p, a, cpu);
                    (void)topology::bottleneck(p, cpu, a);
                });
            }
        }
        for (auto [e, end] = boost::edges(p.graph()); e != end; ++e) {
            (void)topology::describe(p, *e);
            (void)topology::link_gbps(p.link(*e));
        }
        (void)topology::to_dot(p);
        (void)topology::effective_json(p);
    });
    return 0;
}
