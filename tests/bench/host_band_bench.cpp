// What the band of machines costs (sim/host_band.h): the same cases with and without it. Issue
// 14 asks the shipped sweep with bands to cost at most twice the deterministic one; these cases
// are a cross-section of it (small host-bound copies, which are drawn, mid and large copies,
// which are screened or interpolated, a zero-copy kernel and a duplex pair). Counter `runs`:
// simulations per case.
#include <benchmark/benchmark.h>

#include <string>
#include <vector>

#include "dmasim/sim/host_band.h"
#include "dmasim/topology/platform_file.h"

namespace {

dmasim::sim::Simulator& simulator() {
    static dmasim::sim::Simulator s(dmasim::topology::load_platform("h100-sxm", dmasim::config::ModelParams{}),
                                    dmasim::config::ModelParams{});
    return s;
}

struct Case {
    const char* strategy;
    const char* direction;
    std::uint64_t bytes;
};

const std::vector<Case>& cases() {
    static const std::vector<Case> c = {
        {"pinned", "h2d", 4},          {"pinned", "d2h", 64 << 10},       {"pinned", "h2d", 1 << 20},
        {"pinned", "d2h", 256 << 20},  {"pageable", "h2d", 16 << 20},     {"registered", "h2d", 64 << 20},
        {"zero_copy", "h2d", 16 << 20}, {"duplex", "both", 1 << 20},      {"duplex", "both", 256 << 20},
    };
    return c;
}

void BM_Cases(benchmark::State& state) {
    dmasim::config::ModelParams params;
    if (state.range(0) == 0) params.host_spread = params.host_spread.without_spread();
    std::int64_t runs = 0;
    for (auto _ : state) {
        for (const Case& c : cases()) {
            const auto b = dmasim::sim::run_with_host_band(
                simulator(), params, dmasim::sim::CaseSpec{c.strategy, c.direction, c.bytes, {}, {}});
            runs += b.runs;
            benchmark::DoNotOptimize(b.result.time_ps);
        }
    }
    state.counters["runs_per_case"] =
        static_cast<double>(runs) / static_cast<double>(state.iterations() * static_cast<std::int64_t>(cases().size()));
    state.SetLabel(state.range(0) == 0 ? "deterministic" : "band of machines");
}
BENCHMARK(BM_Cases)->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond)->Iterations(2);

}  // namespace

BENCHMARK_MAIN();
