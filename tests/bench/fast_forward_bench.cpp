// Fast-forward against TLP level on a 1 GiB pinned host-to-device copy (docs/fast-forward.md):
// wall time of each, and, on the fast run, its speed-up over the TLP run and how far its
// simulated time and link bytes are from it. The goal is a speed-up of at least 100 with
// agreement within 0.1 %; `bench_fast_forward` prints the measured numbers, it does not assert.
#include <benchmark/benchmark.h>

#include <chrono>
#include <cmath>
#include <optional>

#include "dmasim/sim/simulator.h"
#include "dmasim/topology/platform_file.h"

namespace {

using dmasim::sim::CaseResult;
using dmasim::sim::Fidelity;

dmasim::sim::Simulator& simulator() {
    static dmasim::sim::Simulator s(dmasim::topology::load_platform("h100-sxm", dmasim::config::ModelParams{}),
                                    dmasim::config::ModelParams{});
    return s;
}

constexpr std::uint64_t kBytes = 1ULL << 30;

// The TLP-level run, kept for the fast run to compare with; its wall time per run in seconds.
std::optional<CaseResult> g_tlp;
double g_tlp_wall_s = 0.0;

std::uint64_t wire_bytes(const CaseResult& r) {
    std::uint64_t n = 0;
    for (const auto& l : r.links) n += l.stats.payload_bytes + l.stats.tlp_overhead_bytes + l.stats.dllp_bytes;
    return n;
}

void BM_PinnedH2D1GiB(benchmark::State& state) {
    const Fidelity f = state.range(0) == 0 ? Fidelity::kTlp : Fidelity::kFast;
    simulator().set_fidelity(f);
    const dmasim::config::ModelParams params;
    std::optional<CaseResult> last;
    double wall_s = 0.0;
    for (auto _ : state) {
        const auto t0 = std::chrono::steady_clock::now();
        last = simulator().run(params, "pinned", "h2d", kBytes);
        // No DoNotOptimize(last->time_ps): the simulation cannot be optimised away, and GCC
        // with its non-const form read back 0 or garbage for it here (GCC 12, -O3).
        wall_s += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    }
    wall_s /= static_cast<double>(state.iterations());
    state.counters["simulated_us"] = last->time_ps * 1e-6;
    state.SetLabel(dmasim::sim::to_string(f));
    if (f == Fidelity::kTlp) {
        g_tlp = last;
        g_tlp_wall_s = wall_s;
    } else if (g_tlp) {
        state.counters["speedup_vs_tlp"] = g_tlp_wall_s / wall_s;
        state.counters["time_rel_diff"] = std::fabs(last->time_ps / g_tlp->time_ps - 1.0);
        state.counters["bytes_rel_diff"] =
            std::fabs(static_cast<double>(wire_bytes(*last)) / static_cast<double>(wire_bytes(*g_tlp)) - 1.0);
        state.SetLabel(last->fast_forward);
    }
}
// TLP level first: the fast run compares with it.
BENCHMARK(BM_PinnedH2D1GiB)->Arg(0)->Iterations(1)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_PinnedH2D1GiB)->Arg(1)->Iterations(5)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
