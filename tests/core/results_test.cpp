#include "dmasim/core/results.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>
#include <dirent.h>
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

TEST(Results, SpeedupIsAmongTheLastColumnsAndTimeOnlyRowsHaveNoRate) {
    const std::string tail = ",calibration,speedup,host_read_bytes,host_written_bytes";
    EXPECT_EQ(results_csv_header().substr(results_csv_header().size() - tail.size()), tail);
    ResultRow overlap = sample_row();
    overlap.strategy = "async_overlap";
    overlap.speedup = 1.9596;
    ResultRow setup = sample_row();
    setup.variant = "setup=mallochost";
    const ResultRow copy = sample_row();
    EXPECT_TRUE(overlap.time_only());
    EXPECT_TRUE(setup.time_only());
    EXPECT_FALSE(copy.time_only());
    // The gbps field (the 7th) is empty where a rate means nothing; the speed-up only where set.
    const auto field = [](const std::string& line, std::size_t n) {
        std::stringstream in(line);
        std::string f;
        for (std::size_t i = 0; i <= n; ++i) std::getline(in, f, ',');
        return f;
    };
    EXPECT_EQ(field(format_result_row(setup), 6), "");
    EXPECT_EQ(field(format_result_row(overlap), 6), "");
    EXPECT_NE(field(format_result_row(copy), 6), "");
    EXPECT_EQ(format_result_row(copy).substr(format_result_row(copy).size() - 3), ",,,");  // no speed-up, no host bytes
    std::stringstream ss;
    write_results_csv(ss, {overlap, setup, copy});
    const auto rows = read_results_csv(ss, "mem");
    ASSERT_EQ(rows.size(), 3U);
    EXPECT_NEAR(rows[0].speedup, 1.9596, 1e-9);
    EXPECT_EQ(rows[1].speedup, 0.0);
    EXPECT_NEAR(rows[1].time_us, setup.time_us, 1e-6);  // the time is still there
}

TEST(Results, CvAndCalibrationAreAmongTheLastColumnsAndRoundTrip) {
    const std::string tail = ",note,cv,calibration,speedup,host_read_bytes,host_written_bytes";
    EXPECT_EQ(results_csv_header().substr(results_csv_header().size() - tail.size()), tail);
    ResultRow r = sample_row();
    r.cv = 0.0123;
    r.calibration = "results/x,y/calibration.yaml";  // quoted like any other field
    ResultRow model = sample_row();
    model.calibration = "h100-sxm";
    std::stringstream ss;
    write_results_csv(ss, {r, model});
    const auto rows = read_results_csv(ss, "mem");
    ASSERT_EQ(rows.size(), 2U);
    EXPECT_NEAR(rows[0].cv, 0.0123, 1e-9);
    EXPECT_EQ(rows[1].cv, 0.0);  // the simulator's rows: deterministic
    EXPECT_EQ(rows[0].calibration, "results/x,y/calibration.yaml");
    EXPECT_EQ(rows[1].calibration, "h100-sxm");
    EXPECT_EQ(rows[0].note, "has \"quotes\"");  // the columns before them are intact
}

// Issue 15: a model row says how much host memory its program read and wrote; measured rows and
// rows of no one program leave both empty, and files written before the columns still load.
TEST(Results, HostMemoryBytesRoundTripAndStayEmptyWhereUnknown) {
    ResultRow model = sample_row();
    model.host_read_bytes = 4194304;
    model.host_written_bytes = 64;
    const ResultRow measured = sample_row();
    std::stringstream ss;
    write_results_csv(ss, {model, measured});
    const std::string text = ss.str();
    const auto rows = read_results_csv(ss, "mem");
    ASSERT_EQ(rows.size(), 2U);
    EXPECT_EQ(rows[0].host_read_bytes, 4194304);
    EXPECT_EQ(rows[0].host_written_bytes, 64);
    EXPECT_EQ(rows[1].host_read_bytes, -1);
    EXPECT_EQ(rows[1].host_written_bytes, -1);
    EXPECT_NE(text.find(",4194304,64\n"), std::string::npos) << text;
    std::stringstream bad(results_csv_header() + "\n" + format_result_row(measured) + "-5\n");
    try {
        (void)read_results_csv(bad, "bad.csv");
        ADD_FAILURE() << "a negative byte count was read";
    } catch (const InputError& e) {
        EXPECT_EQ(e.key(), "host_written_bytes");
    }
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
    EXPECT_EQ(rows[0].calibration, "");  // a measurement: no calibration behind it
}

TEST(Results, CommittedMeasurementsStillLoad) {
    // Measurements committed before the cv column existed.
    int read = 0;
    for (const char* file : {"h100-sxm/measured-written-once/2026-11-21-legacy/run1/measured.csv",
                             "h100-sxm/measured-written-once/2026-11-21-legacy/smoke.csv",
                             "h200x2-nvlink/measured-written-once/2026-11-21-legacy/run1/measured.csv"}) {
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

TEST(Results, ReaderRangeChecksEveryValueAndNamesLineAndColumn) {
    const std::string header = results_csv_header() + "\n";
    const std::string good = "s,pinned,h2d,1,4096,7.5,0.5,hw,20,7.4,7.6,7.3,7.9,,ok,,0.01,,,,\n";
    // Each a field of the good row broken: (column, value, what the message must say).
    struct Case {
        int column;
        const char* value;
        const char* expect;
    };
    const Case cases[] = {
        {4, "-4096", "key 'size_bytes': '-4096' is not a whole number of bytes"},
        {4, "0", "key 'size_bytes'"},
        {4, "1e400", "key 'size_bytes'"},
        {4, "4096.5", "key 'size_bytes'"},
        {4, "68719476737", "key 'size_bytes'"},  // one byte above the largest copy
        {3, "1e20", "key 'directions': '1e20' is not 1 or 2"},
        {3, "0", "key 'directions'"},
        {3, "3", "key 'directions'"},
        {5, "nan", "key 'time_us': 'nan' is not a finite number"},
        {5, "inf", "key 'time_us'"},
        {5, "-3", "key 'time_us': '-3' is negative"},
        {5, "0", "key 'time_us': an ok row's time must be positive"},
        {8, "-1", "key 'repetitions'"},
        {8, "0", "key 'repetitions'"},
        {9, "nan", "key 'p10_us'"},
        {12, "-inf", "key 'max_us'"},
        {16, "nan", "key 'cv'"},
        {16, "-0.5", "key 'cv'"},
        {19, "-1", "key 'host_read_bytes': '-1' is not a whole number of bytes"},
        {20, "1.5", "key 'host_written_bytes'"},
    };
    for (const auto& c : cases) {
        std::vector<std::string> f;
        std::stringstream fields(good.substr(0, good.size() - 1));
        for (std::string cell; std::getline(fields, cell, ',');) f.push_back(cell);
        f.resize(static_cast<std::size_t>(std::count(header.begin(), header.end(), ',') + 1));
        f[static_cast<std::size_t>(c.column)] = c.value;
        std::string row;
        for (std::size_t i = 0; i < f.size(); ++i) row += (i ? "," : "") + f[i];
        std::stringstream ss(header + good + row + "\n");
        try {
            read_results_csv(ss, "m.csv");
            ADD_FAILURE() << "accepted " << c.value << " in column " << c.column;
        } catch (const InputError& e) {
            const std::string what = e.what();
            EXPECT_EQ(what.rfind("m.csv:3: ", 0), 0U) << what;  // the line of the bad row
            EXPECT_NE(what.find(c.expect), std::string::npos) << what;
        }
    }
    // Rows that are not ok carry no time and may have run no repetition.
    std::stringstream skipped(header + "s,peer,h2d,1,4096,0,0,hw,0,0,0,0,0,,skipped,needs two GPUs,0,,,,\n");
    const auto rows = read_results_csv(skipped, "m.csv");
    ASSERT_EQ(rows.size(), 1U);
    EXPECT_EQ(rows[0].repetitions, 0);
    EXPECT_EQ(rows[0].status, "skipped");
}

std::string temp_dir() {
    char tmpl[] = "/tmp/dmasim-out-XXXXXX";
    EXPECT_NE(::mkdtemp(tmpl), nullptr);
    return tmpl;
}

std::string slurp(const std::string& path) {
    std::stringstream ss;
    ss << std::ifstream(path).rdbuf();
    return ss.str();
}

// Entries of a directory whose name starts with '.': the writer's temporary files.
std::vector<std::string> hidden_entries(const std::string& dir) {
    std::vector<std::string> out;
    DIR* d = ::opendir(dir.c_str());
    if (d == nullptr) return out;
    while (const dirent* e = ::readdir(d)) {
        const std::string n = e->d_name;
        if (n != "." && n != ".." && n[0] == '.') out.push_back(n);
    }
    ::closedir(d);
    return out;
}

bool exists(const std::string& path) {
    struct stat st {};
    return ::stat(path.c_str(), &st) == 0;
}

TEST(Results, OutputFilesAppearOnlyOnCommit) {
    const std::string dir = temp_dir() + "/nested/out";
    OutputFiles files(dir);
    files.add("a.csv", "x\n");
    files.add("b.json", "{}\n");
    files.check();
    EXPECT_FALSE(exists(dir)) << "nothing may exist before commit, not even the directory";
    const auto written = files.commit();
    ASSERT_EQ(written.size(), 2U);
    EXPECT_EQ(slurp(dir + "/a.csv"), "x\n");
    EXPECT_EQ(slurp(dir + "/b.json"), "{}\n");
    EXPECT_TRUE(hidden_entries(dir).empty());
    EXPECT_TRUE(hidden_entries(dir + "/..").empty());
}

TEST(Results, OutputFilesReplaceEveryFileOrNone) {
    const std::string base = temp_dir();
    const std::string dir = base + "/out";
    auto run = [&](const std::string& tag) {
        OutputFiles files(dir);
        files.add("a.csv", tag + " a");
        files.add("b.csv", tag + " b");
        return files.commit();
    };
    run("first");
    // A directory holding only this set's files is replaced as a whole (a new directory in one
    // rename), so that no reader sees a.csv of one run beside b.csv of another.
    struct stat first {}, second {};
    ASSERT_EQ(::stat(dir.c_str(), &first), 0);
    run("second");
    ASSERT_EQ(::stat(dir.c_str(), &second), 0);
    EXPECT_NE(first.st_ino, second.st_ino);
    EXPECT_EQ(slurp(dir + "/a.csv"), "second a");
    EXPECT_EQ(slurp(dir + "/b.csv"), "second b");
    EXPECT_TRUE(hidden_entries(base).empty());

    // One file that cannot be written (a name longer than any filesystem allows): the other
    // is not replaced either, and no temporary file is left.
    {
        OutputFiles files(dir);
        files.add("a.csv", "third a");
        files.add(std::string(300, 'b'), "third b");
        EXPECT_THROW(files.commit(), InputError);
    }
    EXPECT_EQ(slurp(dir + "/a.csv"), "second a");
    EXPECT_TRUE(hidden_entries(base).empty());
    EXPECT_TRUE(hidden_entries(dir).empty());

    // A file of someone else's in the directory stays, and so does the directory.
    std::ofstream(dir + "/notes.txt") << "mine";
    struct stat before {}, after {};
    ASSERT_EQ(::stat(dir.c_str(), &before), 0);
    run("fourth");
    ASSERT_EQ(::stat(dir.c_str(), &after), 0);
    EXPECT_EQ(before.st_ino, after.st_ino);
    EXPECT_EQ(slurp(dir + "/notes.txt"), "mine");
    EXPECT_EQ(slurp(dir + "/b.csv"), "fourth b");
    EXPECT_TRUE(hidden_entries(dir).empty());
}

TEST(Results, OutputFilesRefuseTargetsTheyCannotWriteBeforeWritingAny) {
    const std::string base = temp_dir();
    std::ofstream(base + "/afile") << "x";
    ASSERT_EQ(::mkdir((base + "/out").c_str(), 0755), 0);
    ASSERT_EQ(::mkdir((base + "/out/b.csv").c_str(), 0755), 0);
    std::ofstream(base + "/out/a.csv") << "old";
    struct Case {
        std::string dir;
        std::vector<std::string> names;
        std::string extra;  // add_path
        std::string expect;
    };
    const Case cases[] = {
        {base + "/afile", {"a.csv"}, "", "afile: is a file, not a directory"},
        {base + "/afile/sub", {"a.csv"}, "", "afile/sub: cannot create it: " + base + "/afile is a file"},
        {base + "/out", {"a.csv", "b.csv"}, "", "out/b.csv: is a directory"},
        {base + "/new", {"a.csv"}, base + "/new/a.csv", "new/a.csv: is named for two outputs"},
        {base + "/new", {"a.csv"}, base + "/afile/t.json", "afile/t.json: cannot write it: "},
        {base + "/new", {"a.csv"}, base + "/out", "out: is a directory"},
    };
    for (const auto& c : cases) {
        OutputFiles files(c.dir);
        for (const auto& n : c.names) files.add(n, "new");
        if (!c.extra.empty()) files.add_path(c.extra, "new");
        for (int pass = 0; pass < 2; ++pass) {
            try {
                pass == 0 ? files.check() : (void)files.commit();
                ADD_FAILURE() << c.expect;
            } catch (const InputError& e) {
                EXPECT_NE(std::string(e.what()).find(c.expect), std::string::npos) << e.what();
            }
        }
    }
    EXPECT_EQ(slurp(base + "/out/a.csv"), "old");
    EXPECT_FALSE(exists(base + "/new"));
    EXPECT_TRUE(hidden_entries(base).empty());
    EXPECT_TRUE(hidden_entries(base + "/out").empty());
}

TEST(Results, OutputFilesAreReadableAsAnyNewFile) {
    const mode_t old = ::umask(022);
    const std::string dir = temp_dir() + "/out";
    OutputFiles files(dir);
    files.add("a.csv", "x");
    files.commit();
    ::umask(old);
    struct stat st {};
    ASSERT_EQ(::stat((dir + "/a.csv").c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 0777, 0644U);
    ASSERT_EQ(::stat(dir.c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 0777, 0755U);
}

}  // namespace
}  // namespace dmasim::core
