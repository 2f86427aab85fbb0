// Fuzz target: `--set KEY=VALUE` overrides. Each line of the input is one --set argument
// (config::parse_set); the ones that parse are applied to a fixed scenario through
// config::parse_scenarios, and the scenario's platform is loaded and checked, as `dmasim run`
// does. Bad input must end in core::InputError.
#include <cstdint>
#include <sstream>
#include <string>
#include <vector>

#include "dmasim/config/scenario.h"
#include "dmasim/topology/platform_file.h"
#include "fuzz_check.h"

namespace {
constexpr const char* kTarget = "set";
constexpr const char* kScenario = "name: fixed\nstrategy: pinned\nsizes: [4KiB, 1MiB]\n";
using dmasim::fuzz::run;
namespace config = dmasim::config;
namespace topology = dmasim::topology;
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string text(reinterpret_cast<const char*>(data), size);
    std::vector<config::SetOverride> sets;
    std::istringstream lines(text);
    std::string line;
    while (sets.size() < 32 && std::getline(lines, line)) {
        run(kTarget, [&] { sets.push_back(config::parse_set(line)); });
    }
    if (sets.empty()) return 0;
    run(kTarget, [&] {
        for (const auto& s : config::parse_scenarios(kScenario, "fixed.yaml", sets)) {
            topology::check_scenario_platform(s, topology::load_platform(s));
        }
    });
    return 0;
}
