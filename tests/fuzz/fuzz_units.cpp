// Fuzz target: the unit parsers (core/units.h). They throw core::UnitError on bad text (their
// documented contract); anything else is a failure. What they accept must print back in a form
// they accept again (the header's promise), and sizes and durations must round-trip exactly.
#include <cmath>
#include <cstdint>
#include <string>

#include "dmasim/core/units.h"
#include "fuzz_check.h"

namespace {
constexpr const char* kTarget = "units";
using dmasim::fuzz::Allow;
using dmasim::fuzz::require;
using dmasim::fuzz::run;
namespace core = dmasim::core;
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string text(reinterpret_cast<const char*>(data), size);
    run(kTarget, [&] {
        const core::Bytes b = core::parse_bytes(text);
        const std::string s = core::to_string(b);
        core::Bytes back;
        require(run(kTarget, [&] { back = core::parse_bytes(s); }, Allow::kInputOrUnitError), kTarget,
                "parse_bytes('" + text + "') printed as '" + s + "', which parse_bytes refuses");
        require(back == b, kTarget, "parse_bytes('" + text + "') = " + std::to_string(b.value) + " printed as '" + s +
                                        "', read back as " + std::to_string(back.value));
    }, Allow::kInputOrUnitError);
    run(kTarget, [&] {
        const core::Duration d = core::parse_duration(text);
        require(d.ps >= 0, kTarget, "parse_duration('" + text + "') is negative");
        const std::string s = core::to_string(d);
        core::Duration back;
        require(run(kTarget, [&] { back = core::parse_duration(s); }, Allow::kInputOrUnitError), kTarget,
                "parse_duration('" + text + "') printed as '" + s + "', which parse_duration refuses");
        require(back == d, kTarget, "parse_duration('" + text + "') = " + std::to_string(d.ps) + " ps printed as '" + s +
                                        "', read back as " + std::to_string(back.ps) + " ps");
    }, Allow::kInputOrUnitError);
    run(kTarget, [&] {
        const core::Bandwidth bw = core::parse_bandwidth(text);
        const std::string s = core::to_string(bw);
        require(run(kTarget, [&] { core::parse_bandwidth(s); }, Allow::kInputOrUnitError), kTarget,
                "parse_bandwidth('" + text + "') printed as '" + s + "', which parse_bandwidth refuses");
    }, Allow::kInputOrUnitError);
    run(kTarget, [&] {
        const core::TransferRate r = core::parse_transfer_rate(text);
        const std::string s = core::to_string(r);
        require(run(kTarget, [&] { core::parse_transfer_rate(s); }, Allow::kInputOrUnitError), kTarget,
                "parse_transfer_rate('" + text + "') printed as '" + s + "', which parse_transfer_rate refuses");
    }, Allow::kInputOrUnitError);
    return 0;
}
