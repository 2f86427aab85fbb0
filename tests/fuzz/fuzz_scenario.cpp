// Fuzz target: scenario files as `dmasim validate` and `dmasim plan` read them:
// config::parse_scenarios, each scenario's platform (topology::load_platform, a shipped name or
// a file) and its checks against the scenario, then the flat plan (config::expand_plan), written
// and read back, and every case through dmaprobe's checks (gpu_validation/src/spec.h). Bad
// input must end in core::InputError. A plan that dmasim writes from scenarios it accepted must
// read back unchanged and be accepted by the harness: a refusal there would only show on the
// GPU machine.
#include <cstdint>
#include <sstream>
#include <string>
#include <vector>

#include "dmasim/config/plan_expand.h"
#include "dmasim/config/scenario.h"
#include "dmasim/core/plan.h"
#include "dmasim/topology/platform_file.h"
#include "fuzz_check.h"
#include "options.h"
#include "spec.h"

namespace {
constexpr const char* kTarget = "scenario";
using dmasim::fuzz::require;
using dmasim::fuzz::run;
namespace config = dmasim::config;
namespace core = dmasim::core;
namespace topology = dmasim::topology;
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string text(reinterpret_cast<const char*>(data), size);
    std::vector<config::Scenario> scenarios;
    const bool accepted = run(kTarget, [&] {
        scenarios = config::parse_scenarios(text, "fuzz/scenario.yaml");
        for (const auto& s : scenarios) topology::check_scenario_platform(s, topology::load_platform(s));
    });
    if (!accepted) return 0;

    core::Plan plan;
    if (!run(kTarget, [&] { plan = config::expand_plan(scenarios); })) return 0;
    std::ostringstream out;
    core::write_plan(out, plan);
    core::Plan back;
    std::istringstream in(out.str());
    require(run(kTarget, [&] { back = core::read_plan(in, "plan.txt"); }), kTarget,
            "the plan written for accepted scenarios does not read back:\n" + out.str());
    require(back.cases.size() == plan.cases.size(), kTarget, "the plan lost cases when read back");
    for (std::size_t i = 0; i < back.cases.size(); ++i) {
        std::string why;
        const bool ok = run(kTarget, [&] {
            try {
                (void)dmaprobe::decide_case(back.cases[i], i, "plan.txt", dmaprobe::Options{});
            } catch (const core::InputError& e) {
                why = e.what();
                throw;
            }
        });
        require(ok, kTarget,
                "dmaprobe refuses a case that dmasim planned from an accepted scenario: " + why + "\n  case: " +
                    core::format_plan_case(back.cases[i]));
    }
    return 0;
}
