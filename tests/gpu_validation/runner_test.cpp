#include "runner.h"

#include <gtest/gtest.h>

#include <sstream>
#include <stdexcept>

#include "stats.h"
#include "test_util.h"

namespace dmaprobe {
namespace {

// Records what it was asked to measure; returns one row per case (or throws on request).
class FakeBackend : public Backend {
public:
    MachineInfo machine;
    std::vector<std::string> measured;
    std::string fail_on;

    MachineInfo machine_info() const override { return machine; }
    std::vector<dmasim::core::ResultRow> measure(const MeasurementSpec& spec) override {
        measured.push_back(spec.scenario);
        if (spec.scenario == fail_on) throw std::runtime_error("verification failed (fake)");
        return {make_row(spec, "", summarize({1.0, 2.0, 3.0})), make_row(spec, "setup=x", summarize({5.0}))};
    }
    void describe(Metadata& m) const override { m.notes.push_back("fake"); }
};

std::vector<CaseDecision> decisions(const std::string& plan_text, const Options& opt) {
    std::istringstream in(plan_text);
    return decide_all(dmasim::core::read_plan(in, "p.txt"), "p.txt", opt);
}

const char* kPlan =
    "dmasim-plan 1\n"
    "case scenario=a strategy=pinned direction=h2d size_bytes=4096 repetitions=5 warmup=1\n"
    "case scenario=b strategy=third_party_dma direction=h2d size_bytes=4096 hw_skip=needs%20FPGA\n"
    "case scenario=c strategy=peer direction=h2d size_bytes=4096 peer_access=1 repetitions=5 warmup=1\n"
    "case scenario=d strategy=pageable direction=d2h size_bytes=1048576 repetitions=5 warmup=1\n"
    "case scenario=e strategy=pinned direction=h2d size_bytes=4096 link_generation=6 repetitions=5 warmup=1\n";

MachineInfo one_gen5_gpu() {
    MachineInfo m;
    m.device_count = 1;
    m.link_generation = 5;
    m.link_lanes = 16;
    m.link_source = "sysfs";
    m.peer_capable = {{false}};
    return m;
}

TEST(DmaprobeRunner, RunsRunnableCasesAndWritesSkippedRowsInPlanOrder) {
    Options opt;
    FakeBackend fake;
    fake.machine = one_gen5_gpu();
    std::ostringstream log;
    const RunSummary r = run_plan(decisions(kPlan, opt), fake, opt, log);
    EXPECT_EQ(fake.measured, (std::vector<std::string>{"a", "d"}));
    EXPECT_EQ(r.run, 2U);
    EXPECT_EQ(r.skipped, 3U);
    EXPECT_EQ(r.filtered, 0U);
    ASSERT_EQ(r.rows.size(), 7U);
    EXPECT_EQ(r.rows[0].scenario, "a");
    EXPECT_EQ(r.rows[1].variant, "setup=x");
    EXPECT_EQ(r.rows[2].scenario, "b");
    EXPECT_EQ(r.rows[2].status, "skipped");
    EXPECT_EQ(r.rows[2].note, "hw_skip: needs FPGA");
    EXPECT_EQ(r.rows[3].scenario, "c");
    EXPECT_EQ(r.rows[3].status, "skipped");
    EXPECT_EQ(r.rows[3].note, "peer needs two GPUs; this machine has 1");
    EXPECT_EQ(r.rows[4].scenario, "d");
    EXPECT_EQ(r.rows[6].scenario, "e");
    EXPECT_EQ(r.rows[6].status, "skipped");
    EXPECT_NE(r.rows[6].note.find("Gen6"), std::string::npos);
    for (const auto& row : r.rows) EXPECT_EQ(row.source, "hw");
    // Progress names each case.
    const std::string text = log.str();
    EXPECT_NE(text.find("[1/5] pinned/h2d 4KiB (a)"), std::string::npos) << text;
    EXPECT_NE(text.find("skipped: peer needs two GPUs"), std::string::npos) << text;
}

TEST(DmaprobeRunner, QuietAndFilters) {
    Options opt;
    opt.quiet = true;
    opt.only = "pinned";
    FakeBackend fake;
    fake.machine = one_gen5_gpu();
    std::ostringstream log;
    const RunSummary r = run_plan(decisions(kPlan, opt), fake, opt, log);
    EXPECT_TRUE(log.str().empty());
    EXPECT_EQ(fake.measured, (std::vector<std::string>{"a"}));
    EXPECT_EQ(r.filtered, 3U);
    EXPECT_EQ(r.skipped, 1U);  // e: link mismatch
}

TEST(DmaprobeRunner, BackendErrorsNameTheCase) {
    Options opt;
    FakeBackend fake;
    fake.machine = one_gen5_gpu();
    fake.fail_on = "d";
    std::ostringstream log;
    try {
        run_plan(decisions(kPlan, opt), fake, opt, log);
        FAIL() << "no error";
    } catch (const std::runtime_error& e) {
        const std::string what = e.what();
        EXPECT_NE(what.find("case 4 (scenario d, pageable/d2h 1MiB)"), std::string::npos) << what;
        EXPECT_NE(what.find("verification failed"), std::string::npos) << what;
    }
}

TEST(DmaprobeRunner, ListSaysWhatRunsWhatIsSkippedAndWhy) {
    Options opt;
    opt.max_size = 65536;
    std::ostringstream out;
    list_plan(decisions(kPlan, opt), "p.txt", out);
    const std::string text = out.str();
    EXPECT_NE(text.find("5 cases: 3 to run, 1 skipped, 1 filtered out"), std::string::npos) << text;
    EXPECT_NE(text.find("run     pinned/h2d 4KiB  scenario=a"), std::string::npos) << text;
    EXPECT_NE(text.find("skip    third_party_dma/h2d 4KiB  scenario=b  -- hw_skip: needs FPGA"), std::string::npos) << text;
    EXPECT_NE(text.find("[needs two GPUs"), std::string::npos) << text;
    EXPECT_NE(text.find("filter  pageable/d2h 1MiB"), std::string::npos) << text;
    EXPECT_NE(text.find("[needs the GPU link to run at PCIe Gen6]"), std::string::npos) << text;
}

}  // namespace
}  // namespace dmaprobe
