// Fuzz target: the flat plan (core/plan.h) as dmaprobe reads it: core::read_plan, then every
// case through the harness's checks (gpu_validation/src/spec.h: decide_case, the machine
// checks, the --list text). Plain C++; no CUDA needed. Bad input must end in core::InputError.
// A plan that reads must also write and read back to the same cases (plan.h: "any string
// round-trips").
#include <cstdint>
#include <sstream>
#include <string>

#include "dmasim/core/plan.h"
#include "fuzz_check.h"
#include "options.h"
#include "spec.h"

namespace {
constexpr const char* kTarget = "plan";
using dmasim::fuzz::require;
using dmasim::fuzz::run;
namespace core = dmasim::core;

void check_cases(const core::Plan& plan, const dmaprobe::Options& opt) {
    // Like dmaprobe: each case is decided on its own, so one bad case does not hide the rest.
    for (std::size_t i = 0; i < plan.cases.size(); ++i) {
        run(kTarget, [&] {
            const dmaprobe::CaseDecision d = dmaprobe::decide_case(plan.cases[i], i, "fuzz.plan", opt);
            (void)d.spec.label();
            (void)dmaprobe::machine_conditions(d.spec);
            dmaprobe::MachineInfo none;  // nothing known about the machine
            (void)dmaprobe::machine_skip_reason(d.spec, none);
            dmaprobe::MachineInfo two;   // two peer-capable GPUs on a Gen5 x16 link
            two.device_count = 2;
            two.link_generation = 5;
            two.link_lanes = 16;
            two.copy_engines = 2;
            two.peer_capable = {{true, true}, {true, true}};
            (void)dmaprobe::machine_skip_reason(d.spec, two);
            (void)dmaprobe::resolve_peer_destination(d.spec, two.device_count);
        });
    }
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string text(reinterpret_cast<const char*>(data), size);
    run(kTarget, [&] {
        std::istringstream in(text);
        const core::Plan plan = core::read_plan(in, "fuzz.plan");

        std::ostringstream out;
        core::write_plan(out, plan);
        core::Plan back;
        std::istringstream again(out.str());
        require(run(kTarget, [&] { back = core::read_plan(again, "rewritten.plan"); }), kTarget,
                "a plan that reads does not read back after write_plan:\n" + out.str());
        require(back.cases.size() == plan.cases.size(), kTarget, "write_plan/read_plan changed the number of cases");
        for (std::size_t i = 0; i < plan.cases.size(); ++i) {
            require(back.cases[i].items() == plan.cases[i].items(), kTarget,
                    "write_plan/read_plan changed case " + std::to_string(i + 1) + ": '" +
                        core::format_plan_case(plan.cases[i]) + "'");
        }

        check_cases(plan, dmaprobe::Options{});
        dmaprobe::Options narrowed;  // --repetitions 3 --warmup 0 --only pinned --max-size 1MiB
        narrowed.repetitions = 3;
        narrowed.warmup = 0;
        narrowed.only = "pinned";
        narrowed.max_size = std::uint64_t{1} << 20;
        narrowed.device = 1;
        check_cases(plan, narrowed);
    });
    return 0;
}
