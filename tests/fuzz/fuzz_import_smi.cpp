// Fuzz target: the `nvidia-smi topo -m` importer (topology::import_nvidia_smi_topo, as
// `dmasim topo import --nvidia-smi` and dmasim-import use it). Bad input must end in
// core::InputError. What it returns is a platform file, so parse_platform must accept it, and
// every pair of its devices must have a route.
#include <cstdint>
#include <string>

#include "dmasim/config/params.h"
#include "dmasim/topology/import.h"
#include "dmasim/topology/platform_file.h"
#include "fuzz_check.h"

namespace {
constexpr const char* kTarget = "import_smi";
using dmasim::fuzz::require;
using dmasim::fuzz::run;
namespace topology = dmasim::topology;
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string text(reinterpret_cast<const char*>(data), size);
    std::string yaml;
    if (!run(kTarget, [&] { yaml = topology::import_nvidia_smi_topo(text, "fuzz-topo.txt", "fuzzed"); })) return 0;
    std::string why;
    const bool parsed = run(kTarget, [&] {
        try {
            const topology::Platform p = topology::parse_platform(yaml, "imported.yaml", dmasim::config::ModelParams{});
            const auto devs = topology::devices(p);
            for (const auto a : devs) {
                for (const auto b : devs) {
                    (void)topology::route_class(p, a, b);
                    (void)topology::bottleneck(p, a, b);
                }
            }
        } catch (const dmasim::core::InputError& e) {
            why = e.what();
            throw;
        }
    });
    require(parsed, kTarget, "the importer wrote a platform file that dmasim refuses (" + why + "):\n" + yaml);
    return 0;
}
