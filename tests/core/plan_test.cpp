#include "dmasim/core/plan.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sstream>

#include "dmasim/core/error.h"
#include "dmasim/core/limits.h"

namespace dmasim::core {
namespace {

TEST(Plan, RoundTripKeepsEveryValueIncludingAwkwardCharacters) {
    Plan plan;
    PlanCase c;
    c.set("scenario", std::string("radar frames=4MiB #1 100%"));
    c.set("strategy", std::string("periodic"));
    c.set("size_bytes", std::uint64_t{4194304});
    c.set("period_ns", std::int64_t{8000000});
    c.set("ratio", 0.125);
    plan.cases.push_back(c);
    std::stringstream ss;
    write_plan(ss, plan);
    const Plan back = read_plan(ss, "mem");
    ASSERT_EQ(back.cases.size(), 1U);
    EXPECT_EQ(back.cases[0].str("scenario"), "radar frames=4MiB #1 100%");
    EXPECT_EQ(back.cases[0].integer("size_bytes"), 4194304);
    EXPECT_EQ(back.cases[0].integer("period_ns"), 8000000);
    EXPECT_DOUBLE_EQ(back.cases[0].real("ratio"), 0.125);
    EXPECT_EQ(back.cases[0].items().size(), 5U);
}

// The limits dmasim and dmaprobe share (limits.h) travel through the plan as signed 64-bit
// integers, in the units the plan uses (bytes, nanoseconds): each must survive the round trip.
TEST(Plan, TheSharedLimitsRoundTripAsPlanIntegers) {
    namespace lim = limits;
    PlanCase c;
    c.set("size_bytes", lim::kMaxCopyBytes);
    c.set("compute_bytes", lim::kMaxComputeBytes);
    c.set("kernel_ns", lim::kMaxDurationNs);
    c.set("blocks", lim::kMaxGridBlocks);
    Plan plan;
    plan.cases.push_back(c);
    std::stringstream ss;
    write_plan(ss, plan);
    const PlanCase back = read_plan(ss, "mem").cases.at(0);
    EXPECT_EQ(static_cast<std::uint64_t>(back.integer("size_bytes")), lim::kMaxCopyBytes);
    EXPECT_EQ(static_cast<std::uint64_t>(back.integer("compute_bytes")), lim::kMaxComputeBytes);
    EXPECT_EQ(back.integer("kernel_ns"), lim::kMaxDurationNs);
    EXPECT_EQ(back.integer("blocks"), lim::kMaxGridBlocks);
    // dmaprobe multiplies frames by the period (ns) and by the size: neither product overflows.
    EXPECT_LT(static_cast<double>(lim::kMaxFrames) * static_cast<double>(lim::kMaxDurationNs), 9.2e18);
    EXPECT_LT(static_cast<double>(lim::kMaxFrames) * static_cast<double>(lim::kMaxCopyBytes), 1.8e19);
    // One case moves both directions of the largest copy.
    EXPECT_EQ(lim::kMaxCaseBytes, 2 * lim::kMaxCopyBytes);
}

TEST(Plan, RejectsMissingHeaderAndMalformedTokens) {
    std::stringstream no_header("case a=1\n");
    EXPECT_THROW(read_plan(no_header, "p"), InputError);
    std::stringstream wrong_version("dmasim-plan 99\n");
    EXPECT_THROW(read_plan(wrong_version, "p"), InputError);
    std::stringstream bad_token("dmasim-plan 1\ncase a=1 oops\n");
    try {
        read_plan(bad_token, "p.txt");
        FAIL();
    } catch (const InputError& e) {
        EXPECT_NE(std::string(e.what()).find("p.txt:2"), std::string::npos) << e.what();
    }
    std::stringstream dup("dmasim-plan 1\ncase a=1 a=2\n");
    EXPECT_THROW(read_plan(dup, "p"), InputError);
    std::stringstream bad_escape("dmasim-plan 1\ncase a=%G1\n");
    EXPECT_THROW(read_plan(bad_escape, "p"), InputError);
    std::stringstream truncated("dmasim-plan 1\ncase a=x%4\n");
    EXPECT_THROW(read_plan(truncated, "p"), InputError);
}

TEST(Plan, TypedAccessorsNameTheKey) {
    PlanCase c;
    c.set("n", std::string("12x"));
    try {
        (void)c.integer("n");
        FAIL();
    } catch (const std::runtime_error& e) {
        EXPECT_NE(std::string(e.what()).find("'n'"), std::string::npos);
    }
    EXPECT_THROW((void)c.integer("missing"), std::runtime_error);
    EXPECT_EQ(c.integer_or("missing", 7), 7);
}

TEST(Plan, CommentsAndBlankLinesAreIgnored) {
    std::stringstream ss("# hello\n\ndmasim-plan 1\n# mid\ncase x=1\n\ncase x=2\n");
    const Plan p = read_plan(ss, "p");
    ASSERT_EQ(p.cases.size(), 2U);
    EXPECT_EQ(p.cases[1].integer("x"), 2);
}

TEST(PlanFile, AFifoOrDirectoryIsRefusedWithoutBlocking) {
    char tmpl[] = "/tmp/dmasim-plan-XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    const std::string fifo = std::string(tmpl) + "/plan.txt";
    ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
    // dmaprobe reads its plan through here: a FIFO must not make it wait for a writer.
    try {
        read_plan_file(fifo);
        ADD_FAILURE() << "a FIFO was read as a plan";
    } catch (const InputError& e) {
        EXPECT_STREQ(e.what(), (fifo + ": is a FIFO: the plan file must be a regular file").c_str());
    }
    EXPECT_THROW(read_plan_file(tmpl), InputError);
    ::unlink(fifo.c_str());
    ::rmdir(tmpl);
}

}  // namespace
}  // namespace dmasim::core
