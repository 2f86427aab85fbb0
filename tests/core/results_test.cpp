#include "dmasim/core/results.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <sstream>
#include <sys/stat.h>
#include <unistd.h>

#include "dmasim/core/error.h"

namespace dmasim::core {
namespace {

ResultRow sample_row() {
    ResultRow r;
    r.scenario = "pinned";
    r.strategy = "pinned";
    r.direction = "both";
    r.directions = 2;
    r.size_bytes = 1U << 30;
    r.time_us = 20000.0;
    r.source = "sim";
    r.variant = "a,b";
    r.note = "has \"quotes\"";
    return r;
}

TEST(Results, GbpsCountsBothDirections) {
    const ResultRow r = sample_row();
    // 2 GiB moved in 20 ms.
    EXPECT_NEAR(r.gbps(), 2.0 * 1073741824.0 / 20000.0 / 1e3, 1e-9);
    ResultRow zero;
    EXPECT_EQ(zero.gbps(), 0.0);
}

TEST(Results, CsvRoundTripWithQuoting) {
    std::stringstream ss;
    write_results_csv(ss, {sample_row()});
    const std::string text = ss.str();
    EXPECT_EQ(text.rfind("scenario,strategy,direction,directions,size_bytes,time_us,gbps,source", 0), 0U);
    const auto rows = read_results_csv(ss, "mem");
    ASSERT_EQ(rows.size(), 1U);
    EXPECT_EQ(rows[0].variant, "a,b");
    EXPECT_EQ(rows[0].note, "has \"quotes\"");
    EXPECT_EQ(rows[0].directions, 2);
    EXPECT_EQ(rows[0].size_bytes, 1U << 30);
    EXPECT_NEAR(rows[0].time_us, 20000.0, 1e-6);
}

TEST(Results, ReaderRejectsMissingColumns) {
    std::stringstream ss("scenario,strategy\nx,y\n");
    EXPECT_THROW(read_results_csv(ss, "r.csv"), InputError);
}

TEST(Results, JsonWriterNestsAndEscapes) {
    JsonWriter j;
    j.begin_object().value("name", "a\"b").begin_object("link").value("lanes", 16).end_object();
    j.begin_array("xs").value("", 1.5).value("", true).end_array().end_object();
    const std::string s = j.str();
    EXPECT_NE(s.find("\"a\\\"b\""), std::string::npos);
    EXPECT_NE(s.find("\"lanes\": 16"), std::string::npos);
    EXPECT_NE(s.find("1.5"), std::string::npos);
    EXPECT_NE(s.find("true"), std::string::npos);
}

TEST(Results, JsonWriterIndentsANestedDocumentToItsDepth) {
    JsonWriter inner;
    inner.begin_object().value("k", 1).end_object();
    JsonWriter outer;
    outer.begin_object().raw("in", inner.str()).value("after", 2).end_object();
    EXPECT_EQ(outer.str(), "{\n  \"in\": {\n    \"k\": 1\n  },\n  \"after\": 2\n}\n");
}

TEST(Results, Percentiles) {
    EXPECT_DOUBLE_EQ(percentile({3, 1, 2}, 0.5), 2.0);
    EXPECT_DOUBLE_EQ(percentile({1, 2, 3, 4}, 0.5), 2.5);
    EXPECT_DOUBLE_EQ(percentile({1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}, 0.1), 2.0);
}

TEST(Results, OutputFilesAppearOnlyOnCommit) {
    char tmpl[] = "/tmp/dmasim-out-XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    const std::string dir = std::string(tmpl) + "/nested/out";
    OutputFiles files(dir);
    files.add("a.csv", "x\n");
    files.add("b.json", "{}\n");
    struct stat st {};
    EXPECT_NE(::stat(dir.c_str(), &st), 0) << "nothing may exist before commit";
    const auto written = files.commit();
    ASSERT_EQ(written.size(), 2U);
    std::ifstream in(dir + "/a.csv");
    std::string line;
    std::getline(in, line);
    EXPECT_EQ(line, "x");
    std::remove((dir + "/a.csv").c_str());
    std::remove((dir + "/b.json").c_str());
}

}  // namespace
}  // namespace dmasim::core
