// Zero-time livelocks (tlp.h, zero_delay): processes that wake one another in delta cycles
// without the clock moving never reach the watchdog's simulated-time budget, so the model's
// zero-delay wake-ups are counted per simulated instant and too many end the case with an error.
// SystemC elaborates once per process: every test elaborates in a child (a death test).
#include <gtest/gtest.h>

#include <systemc>

#include <cstdio>
#include <cstdlib>

#include "dmasim/sim/simulator.h"
#include "dmasim/sim/tlp.h"
#include "dmasim/topology/platform_file.h"

namespace dmasim::sim {
namespace {

constexpr int kCaught = 3;

// Two methods that wake each other at zero delay for ever: the shape of a livelock.
class DeltaPingPong : public sc_core::sc_module {
public:
    SC_HAS_PROCESS(DeltaPingPong);
    explicit DeltaPingPong(sc_core::sc_module_name name) : sc_core::sc_module(name) {
        SC_METHOD(ping);
        sensitive << a_;
        SC_METHOD(pong);
        sensitive << b_;
        dont_initialize();
    }

private:
    void ping() { b_.notify(zero_delay()); }
    void pong() { a_.notify(zero_delay()); }
    sc_core::sc_event a_, b_;
};

TEST(Livelock, DeltaCyclesWithoutTimeEndInAnError) {
    EXPECT_EXIT(
        {
            sc_core::sc_report_handler::set_actions(sc_core::SC_ERROR, sc_core::SC_THROW);
            zero_delay_limit() = 100'000;
            DeltaPingPong p("p");
            try {
                sc_core::sc_start(sc_core::sc_time(1, sc_core::SC_MS));
            } catch (const std::exception& e) {
                std::fprintf(stderr, "caught: %s\n", e.what());
                std::fflush(stderr);
                std::_Exit(kCaught);
            }
            std::_Exit(0);
        },
        ::testing::ExitedWithCode(kCaught), "caught: .*more than 100000 zero-delay wake-ups without simulated time advancing");
}

// Through the simulator the error names the case, like the watchdog's; with the default limit
// a real copy never comes near it.
TEST(Livelock, TheSimulatorNamesTheCaseAndRealCopiesStayFarBelowTheLimit) {
    EXPECT_EXIT(
        {
            Simulator sim(topology::load_platform("h100-sxm", config::ModelParams{}), config::ModelParams{});
            const auto ok = sim.run(config::ModelParams{}, "pinned", "h2d", 64 << 20);
            if (!(ok.time_ps > 0)) std::_Exit(1);
            zero_delay_limit() = 0;  // a stand-in for a livelock: any instant with a second wake-up
            try {
                sim.run(config::ModelParams{}, "pinned", "h2d", 4096);
            } catch (const SimulationError& e) {
                std::fprintf(stderr, "SimulationError: %s\n", e.what());
                std::fflush(stderr);
                std::_Exit(kCaught);
            }
            std::_Exit(0);
        },
        ::testing::ExitedWithCode(kCaught), "SimulationError: pinned h2d 4KiB: .*zero-delay wake-ups without simulated time");
}

}  // namespace
}  // namespace dmasim::sim
