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

TEST(Results, CvIsTheLastColumnAndRoundTrips) {
    EXPECT_EQ(results_csv_header().substr(results_csv_header().size() - 8), ",note,cv");
    ResultRow r = sample_row();
    r.cv = 0.0123;
    std::stringstream ss;
    write_results_csv(ss, {r, sample_row()});
    const auto rows = read_results_csv(ss, "mem");
    ASSERT_EQ(rows.size(), 2U);
    EXPECT_NEAR(rows[0].cv, 0.0123, 1e-9);
    EXPECT_EQ(rows[1].cv, 0.0);  // the simulator's rows: deterministic
    EXPECT_EQ(rows[0].note, "has \"quotes\"");  // the column before it is intact
}

TEST(Results, ReadsFilesWrittenBeforeTheCvColumn) {
    std::stringstream ss(
        "scenario,strategy,direction,directions,size_bytes,time_us,gbps,source,repetitions,p10_us,p90_us,min_us,"
        "max_us,variant,status,note\n"
        "smoke-pageable,pageable,h2d,1,4096,7.4355,0.550871,hw,50,7.2330,7.9637,6.9720,17.1640,,ok,\n");
    const auto rows = read_results_csv(ss, "old.csv");
    ASSERT_EQ(rows.size(), 1U);
    EXPECT_EQ(rows[0].cv, 0.0);
    EXPECT_EQ(rows[0].repetitions, 50);
    EXPECT_NEAR(rows[0].max_us, 17.164, 1e-9);
    EXPECT_EQ(rows[0].status, "ok");
    EXPECT_EQ(rows[0].note, "");
}

TEST(Results, CommittedMeasurementsStillLoad) {
    // Measurements committed before the cv column existed.
    int read = 0;
    for (const char* file : {"h100-sxm/measured/2026-11-21-legacy/run1/measured.csv",
                             "h100-sxm/measured/2026-11-21-legacy/smoke.csv",
                             "h200x2-nvlink/measured/2026-11-21-legacy/run1/measured.csv"}) {
        const std::string path = std::string(DMASIM_SOURCE_DIR) + "/results/" + file;
        std::ifstream in(path);
        if (!in) continue;
        std::string header;
        std::getline(in, header);
        in.seekg(0);
        const auto rows = read_results_csv(in, path);
        ASSERT_FALSE(rows.empty()) << path;
        for (const auto& row : rows) {
            EXPECT_EQ(row.source, "hw") << path;
            if (header.find(",cv") == std::string::npos) {
                EXPECT_EQ(row.cv, 0.0) << path;
            }
        }
        ++read;
    }
    if (read == 0) GTEST_SKIP() << "no committed measurements in this checkout";
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
