// Speed of the model on the V100/A100-era reference hosts, whose root complexes answer reads in
// 64-byte completions: twice the TLPs of a Gen5 H100 host per byte, so the per-TLP cost shows
// most. Both platforms have one topology (a GPU behind a switch), so one elaboration runs both.
#include <benchmark/benchmark.h>

#include "dmasim/sim/simulator.h"
#include "dmasim/topology/platform_file.h"

namespace {

struct Hosts {
    dmasim::config::ModelParams params;
    dmasim::topology::Platform a100 = dmasim::topology::load_platform("a100-gen4", params);
    dmasim::topology::Platform v100 = dmasim::topology::load_platform("v100-gen3", params);
    dmasim::sim::Simulator simulator{dmasim::topology::load_platform("a100-gen4", params), params};
};

// TLP level: the per-TLP cost is what is timed (fast-forward is the default).
Hosts& hosts() {
    static Hosts h;
    static const bool tlp = (h.simulator.set_fidelity(dmasim::sim::Fidelity::kTlp), true);
    (void)tlp;
    return h;
}

void BM_HostPinnedCopy1GiB(benchmark::State& state, bool v100, const char* direction) {
    Hosts& h = hosts();
    dmasim::sim::CaseSpec spec;
    spec.strategy = "pinned";
    spec.direction = direction;
    spec.bytes = 1ULL << 30;
    spec.platform = v100 ? &h.v100 : &h.a100;
    std::uint64_t tlps = 0;
    for (auto _ : state) {
        const auto r = h.simulator.run(h.params, spec);
        tlps += r.tlps();
        benchmark::DoNotOptimize(r.time_ps);
    }
    state.counters["tlps_per_s"] = benchmark::Counter(static_cast<double>(tlps), benchmark::Counter::kIsRate);
}
BENCHMARK_CAPTURE(BM_HostPinnedCopy1GiB, a100_h2d, false, "h2d")->Unit(benchmark::kMillisecond)->Iterations(1);
BENCHMARK_CAPTURE(BM_HostPinnedCopy1GiB, a100_d2h, false, "d2h")->Unit(benchmark::kMillisecond)->Iterations(1);
BENCHMARK_CAPTURE(BM_HostPinnedCopy1GiB, v100_h2d, true, "h2d")->Unit(benchmark::kMillisecond)->Iterations(1);
BENCHMARK_CAPTURE(BM_HostPinnedCopy1GiB, v100_d2h, true, "d2h")->Unit(benchmark::kMillisecond)->Iterations(1);

}  // namespace

BENCHMARK_MAIN();
