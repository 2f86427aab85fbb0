// The timeline: what a traced run records, checked against the run's own results.
#include "dmasim/sim/trace.h"

#include <gtest/gtest.h>

#include <regex>

#include "dmasim/sim/simulator.h"
#include "dmasim/sim/tlp.h"
#include "dmasim/topology/platform_file.h"

namespace dmasim::sim {
namespace {

TEST(Trace, RecordsEnginesStreamsKernelsAndLinkOccupancy) {
    Simulator sim(topology::load_platform("h100-sxm", config::ModelParams{}), config::ModelParams{});
    Tracer tracer(10e6);  // 10 us windows
    Tracer::set_active(&tracer);
    config::StrategyOptions o;
    o.async_overlap.streams = 2;
    o.async_overlap.kernel = core::Duration{500'000'000};
    const CaseResult r = sim.run(config::ModelParams{}, CaseSpec{"async_overlap", "both", 16 << 20, o, "overlap"});
    Tracer::set_active(nullptr);
    const std::string json = tracer.json();
    // Named tracks for the CPU thread, the streams, both copy engines, the compute engine, the links.
    for (const char* name : {"application thread", "stream 0", "stream 1", "\"ce0\"", "\"ce1\"", "compute",
                             "link gpu0->rc0", "link rc0->gpu0", "\"overlap\""}) {
        EXPECT_NE(json.find(name), std::string::npos) << name;
    }
    // Two programs ran (the pipelined one and the serial one): two case spans, the first as
    // long as the result.
    const std::regex case_span("\"name\": \"overlap\", \"pid\": \\d+, \"tid\": \\d+, \"ts\": [0-9.]+, \"dur\": ([0-9.]+)");
    std::smatch m;
    ASSERT_TRUE(std::regex_search(json, m, case_span));
    EXPECT_NEAR(std::stod(m[1]), r.rows[0].time_ps * 1e-6, 1e-3);
    // Each chunk is one H2D read job and one D2H write job on the engines.
    const auto count = [&](const std::string& what) {
        std::size_t n = 0;
        for (std::size_t pos = json.find(what); pos != std::string::npos; pos = json.find(what, pos + 1)) ++n;
        return n;
    };
    EXPECT_EQ(count("\"name\": \"read 8MiB\""), 2U);
    EXPECT_EQ(count("\"name\": \"write 8MiB\""), 2U);
    EXPECT_GT(count("\"ph\": \"C\""), 10U);
}

TEST(Trace, OccupancyIsAPercentOfEachWindow) {
    // Counters are placed from the current case's start, which a case run before this test in the
    // same process (the one above) has moved: these count from 0.
    case_origin_ps() = 0.0;
    Tracer tracer(1000.0);
    Tracer::set_active(&tracer);
    OccupancyProbe probe;
    probe.busy("l", 0.0, 250.0);
    probe.busy("l", 500.0, 250.0);   // same window: 50 %
    probe.busy("l", 3500.0, 1000.0); // a later window, idle between
    probe.flush("l");
    Tracer::set_active(nullptr);
    const std::string json = tracer.json();
    EXPECT_NE(json.find("\"ts\": 0.000000, \"args\": {\"percent\": 50.000}"), std::string::npos) << json;
    EXPECT_NE(json.find("\"ts\": 0.001000, \"args\": {\"percent\": 0.000}"), std::string::npos) << json;
    EXPECT_NE(json.find("\"ts\": 0.003000, \"args\": {\"percent\": 100.000}"), std::string::npos) << json;
}

}  // namespace
}  // namespace dmasim::sim
