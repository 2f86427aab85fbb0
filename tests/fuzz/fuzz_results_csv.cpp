// Fuzz target: the results CSV reader (core::read_results_csv), which compare, calibrate and
// spread use on measured and simulated files. Bad input must end in core::InputError. Rows it
// reads must write (write_results_csv) and read back with the same text fields.
#include <cstdint>
#include <sstream>
#include <string>
#include <vector>

#include "dmasim/core/results.h"
#include "fuzz_check.h"

namespace {
constexpr const char* kTarget = "results_csv";
using dmasim::fuzz::require;
using dmasim::fuzz::run;
namespace core = dmasim::core;
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string text(reinterpret_cast<const char*>(data), size);
    run(kTarget, [&] {
        std::istringstream in(text);
        const std::vector<core::ResultRow> rows = core::read_results_csv(in, "fuzz.csv");
        for (const auto& r : rows) (void)r.gbps();

        std::ostringstream out;
        core::write_results_csv(out, rows);
        std::vector<core::ResultRow> back;
        std::istringstream again(out.str());
        require(run(kTarget, [&] { back = core::read_results_csv(again, "rewritten.csv"); }), kTarget,
                "rows that read do not read back after write_results_csv:\n" + out.str());
        require(back.size() == rows.size(), kTarget, "write/read changed the number of rows");
        for (std::size_t i = 0; i < rows.size(); ++i) {
            const auto& a = rows[i];
            const auto& b = back[i];
            require(a.scenario == b.scenario && a.strategy == b.strategy && a.direction == b.direction &&
                        a.source == b.source && a.variant == b.variant && a.status == b.status && a.note == b.note &&
                        a.directions == b.directions && a.size_bytes == b.size_bytes && a.repetitions == b.repetitions,
                    kTarget, "write/read changed row " + std::to_string(i + 1) + ": '" + core::format_result_row(a) +
                                 "' came back as '" + core::format_result_row(b) + "'");
        }
    });
    return 0;
}
