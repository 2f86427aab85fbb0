// Speed of the model: simulated TLPs per wall-clock second for a 1 GiB pinned copy, next to
// the bare SystemC event rate (two methods notifying each other) measured in the same binary.
#include <benchmark/benchmark.h>

#include <systemc>

#include "dmasim/sim/simulator.h"
#include "dmasim/topology/platform_file.h"

namespace {

// Two SC_METHODs ping-ponging timed notifications: the kernel's floor cost per event.
class PingPong : public sc_core::sc_module {
public:
    SC_HAS_PROCESS(PingPong);
    explicit PingPong(sc_core::sc_module_name name) : sc_core::sc_module(name) {
        SC_METHOD(ping);
        sensitive << a_;
        dont_initialize();
        SC_METHOD(pong);
        sensitive << b_;
        dont_initialize();
    }
    void start(std::uint64_t events) {
        remaining_ = events;
        a_.notify(sc_core::SC_ZERO_TIME);
    }

private:
    void ping() { step(b_); }
    void pong() { step(a_); }
    void step(sc_core::sc_event& next) {
        if (remaining_ == 0) {
            sc_core::sc_pause();
            return;
        }
        --remaining_;
        next.notify(sc_core::sc_time(1, sc_core::SC_NS));
    }
    sc_core::sc_event a_, b_;
    std::uint64_t remaining_ = 0;
};

struct Model {
    // Everything is elaborated before the first sc_start.
    PingPong pingpong{"pingpong"};
    dmasim::sim::Simulator simulator{dmasim::topology::load_platform("h100-sxm", dmasim::config::ModelParams{}),
                                     dmasim::config::ModelParams{}};
};

// TLP level: these benchmarks time the simulator itself (bench_fast_forward times the
// fast-forward, which is the default).
Model& model() {
    static Model m;
    static const bool tlp = (m.simulator.set_fidelity(dmasim::sim::Fidelity::kTlp), true);
    (void)tlp;
    return m;
}

void BM_PinnedCopy1GiB(benchmark::State& state) {
    Model& m = model();
    const dmasim::config::ModelParams params;
    std::uint64_t tlps = 0;
    for (auto _ : state) {
        const auto r = m.simulator.run(params, "pinned", state.range(0) ? "d2h" : "h2d", 1ULL << 30);
        tlps += r.tlps();
        benchmark::DoNotOptimize(r.time_ps);
    }
    state.counters["tlps_per_s"] = benchmark::Counter(static_cast<double>(tlps), benchmark::Counter::kIsRate);
    state.SetLabel(state.range(0) ? "d2h" : "h2d");
}
BENCHMARK(BM_PinnedCopy1GiB)->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond)->Iterations(2);

// The other strategies the speed goal names: duplex (two engines, DLLPs both ways) and a
// zero-copy kernel reading host memory (SM loads, 16-byte accesses from 264 x 256 threads).
void BM_Strategy1GiB(benchmark::State& state, const char* strategy, const char* direction) {
    Model& m = model();
    const dmasim::config::ModelParams params;
    dmasim::sim::CaseSpec spec;
    spec.strategy = strategy;
    spec.direction = direction;
    spec.bytes = 1ULL << 30;
    std::uint64_t tlps = 0;
    for (auto _ : state) {
        const auto r = m.simulator.run(params, spec);
        tlps += r.tlps();
        benchmark::DoNotOptimize(r.time_ps);
    }
    state.counters["tlps_per_s"] = benchmark::Counter(static_cast<double>(tlps), benchmark::Counter::kIsRate);
}
BENCHMARK_CAPTURE(BM_Strategy1GiB, duplex, "duplex", "both")->Unit(benchmark::kMillisecond)->Iterations(1);
BENCHMARK_CAPTURE(BM_Strategy1GiB, zero_copy_h2d, "zero_copy", "h2d")->Unit(benchmark::kMillisecond)->Iterations(1);

void BM_SystemCEventRate(benchmark::State& state) {
    Model& m = model();
    const auto events = static_cast<std::uint64_t>(state.range(0));
    for (auto _ : state) {
        m.pingpong.start(events);
        sc_core::sc_start();
    }
    state.counters["events_per_s"] =
        benchmark::Counter(static_cast<double>(events) * static_cast<double>(state.iterations()),
                           benchmark::Counter::kIsRate);
}
BENCHMARK(BM_SystemCEventRate)->Arg(10'000'000)->Unit(benchmark::kMillisecond)->Iterations(3);

}  // namespace

BENCHMARK_MAIN();
