// Leases: reading a machine's measured folder, the cross-lease statistics, and `dmasim spread`.
#include "dmasim/app/leases.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <unistd.h>

#include "cli_helpers.h"
#include "dmasim/config/scenario.h"
#include "dmasim/core/error.h"
#include "dmasim/core/results.h"

namespace dmasim::app {
namespace {

namespace fs = std::filesystem;
using testing::cli;
using testing::Outcome;
using testing::read_csv;

std::string temp_dir() {
    char tmpl[] = "/tmp/dmasim-leases-XXXXXX";
    EXPECT_NE(::mkdtemp(tmpl), nullptr);
    return tmpl;
}

core::ResultRow row(const std::string& scenario, const std::string& strategy, std::uint64_t size, double time_us,
                    double p10_us, double p90_us, const std::string& variant = "", const std::string& status = "ok",
                    const std::string& note = "") {
    core::ResultRow r;
    r.scenario = scenario;
    r.strategy = strategy;
    r.direction = "h2d";
    r.size_bytes = size;
    r.time_us = time_us;
    r.source = "hw";
    r.repetitions = 10;
    r.p10_us = p10_us;
    r.p90_us = p90_us;
    r.min_us = p10_us * 0.99;
    r.max_us = p90_us * 1.01;
    r.variant = variant;
    r.status = status;
    r.note = note;
    return r;
}

core::ResultRow skipped(const std::string& scenario) {
    core::ResultRow r = row(scenario, "peer", 1 << 20, 0, 0, 0, "peer=on", "skipped", "peer needs two GPUs; this machine has 1");
    r.repetitions = 0;
    return r;
}

void write_csv(const fs::path& file, const std::vector<core::ResultRow>& rows) {
    fs::create_directories(file.parent_path());
    std::ofstream out(file);
    core::write_results_csv(out, rows);
}

void write_text(const fs::path& file, const std::string& text) {
    fs::create_directories(file.parent_path());
    std::ofstream(file) << text;
}

// Three leases with known numbers (docs/results.md: a lease's value is the median over its
// runs; across leases the median, min, max and spread of those values):
//   x: a = median(100, 110) = 105, b = 98, c = 120  -> median 105, spread 120/98 - 1 = 22.45 %
//   y: a = 50, b = 51                                -> spread 2 %, not flagged
//   w: ok in a only, skipped in b                    -> one lease
//   z: skipped everywhere                            -> reported skipped, with the reason
std::string machine_fixture() {
    const fs::path m = fs::path(temp_dir()) / "gpu" / "measured";
    write_csv(m / "a" / "run1" / "measured.csv",
              {row("x", "pinned", 1 << 20, 100, 95, 105), row("y", "pinned", 4096, 50, 49, 51),
               row("w", "pageable", 1 << 20, 10, 9, 11), skipped("z")});
    write_csv(m / "a" / "run2" / "measured.csv",
              {row("x", "pinned", 1 << 20, 110, 104.5, 115.5), row("x", "pinned", 1 << 20, 999, 999, 999),
               skipped("z")});
    write_text(m / "a" / "lease.json", "{\"legacy\": true, \"note\": \"plan order, \\\"no\\\" pinning\", \"date\": \"2026-11-21\"}\n");
    write_csv(m / "b" / "measured.csv",
              {row("x", "pinned", 1 << 20, 98, 97, 99), row("y", "pinned", 4096, 51, 50, 52),
               row("w", "pageable", 1 << 20, 0, 0, 0, "", "skipped", "not run"), skipped("z")});
    write_csv(m / "c" / "run1" / "measured.csv", {row("x", "pinned", 1 << 20, 120, 108, 132), skipped("z")});
    write_text(m / "notes" / "readme.txt", "not a lease\n");
    write_text(m / "machine.txt", "nvidia-smi says\n");
    return m.string();
}

const CrossLeaseRow& find(const std::vector<CrossLeaseRow>& rows, const std::string& scenario) {
    for (const auto& r : rows) {
        if (r.row.scenario == scenario) return r;
    }
    throw std::runtime_error("no row for " + scenario);
}

TEST(Leases, ReadsEveryLeaseItsRunsAndTheLegacyFlag) {
    const std::string m = machine_fixture();
    const MeasuredSet set = read_measured_set(m);
    ASSERT_EQ(set.leases.size(), 3U) << "a, b, c; the folder without measured data is not a lease";
    EXPECT_EQ(set.leases[0].name, "a");
    ASSERT_EQ(set.leases[0].runs.size(), 2U);
    EXPECT_EQ(set.leases[0].runs[1].name, "run2");
    EXPECT_TRUE(set.leases[0].info.legacy);
    EXPECT_EQ(set.leases[0].info.note, "plan order, \"no\" pinning");
    EXPECT_EQ(set.leases[0].info.date, "2026-11-21");
    EXPECT_EQ(set.leases[1].name, "b");
    EXPECT_FALSE(set.leases[1].info.legacy);
    EXPECT_EQ(set.leases[1].runs.size(), 1U);
    EXPECT_EQ(set.files().size(), 4U);

    // A lease folder on its own, and a CSV on its own, are one lease each.
    const MeasuredSet one = read_measured_set(m + "/a");
    ASSERT_EQ(one.leases.size(), 1U);
    EXPECT_EQ(one.leases[0].runs.size(), 2U);
    const MeasuredSet file = read_measured_set(m + "/b/measured.csv");
    ASSERT_EQ(file.leases.size(), 1U);
    EXPECT_EQ(file.leases[0].name, "b");
    EXPECT_EQ(file.leases[0].runs.at(0).rows.size(), 4U);

    EXPECT_THROW(read_measured_set(m + "/notes"), core::InputError);
    EXPECT_THROW(read_measured_set(m + "/nothing-here"), core::InputError);
}

// A training split of machines and the ones held out are named by folder or by the boot id's part.
TEST(Leases, KeepLeasesKeepsThoseNamedAndRefusesANameOfNone) {
    const std::string m = machine_fixture();
    MeasuredSet set = read_measured_set(m);
    keep_leases(set, {"a", "c"});
    ASSERT_EQ(set.leases.size(), 2U);
    EXPECT_EQ(set.leases[0].name, "a");
    EXPECT_EQ(set.leases[1].name, "c");
    EXPECT_EQ(set.files().size(), 3U);  // a's two runs and c's one: what a calibration fingerprints
    MeasuredSet all = read_measured_set(m);
    keep_leases(all, {});
    EXPECT_EQ(all.leases.size(), 3U);

    const fs::path dated = fs::path(temp_dir()) / "dated" / "measured";
    write_csv(dated / "2026-11-24-220b65eb" / "measured.csv", {row("x", "pinned", 1 << 20, 100, 95, 105)});
    write_csv(dated / "2026-11-26-0ab95efe" / "measured.csv", {row("x", "pinned", 1 << 20, 101, 95, 105)});
    MeasuredSet by_id = read_measured_set(dated.string());
    keep_leases(by_id, {"0ab95efe"});
    ASSERT_EQ(by_id.leases.size(), 1U);
    EXPECT_EQ(by_id.leases[0].name, "2026-11-26-0ab95efe");
    MeasuredSet wrong = read_measured_set(dated.string());
    try {
        keep_leases(wrong, {"220b65eb", "ffffffff"}, "--leases");
        FAIL() << "a name that matches no lease was accepted";
    } catch (const core::InputError& e) {
        EXPECT_NE(std::string(e.what()).find("--leases"), std::string::npos) << e.what();
        EXPECT_NE(std::string(e.what()).find("ffffffff"), std::string::npos) << e.what();
    }
}

TEST(Leases, BadLeaseJsonNamesTheFileAndKey) {
    const std::string m = machine_fixture();
    const std::string file = m + "/b/lease.json";
    struct Case {
        std::string text;
        std::string expect;
    };
    const Case cases[] = {
        {"{\"legacy\": true,}", file + ": malformed JSON"},
        {"{\"legacy\": true", file + ": malformed JSON"},
        {"[true]", file + ": malformed JSON"},
        {"{\"colour\": \"red\"}", file + ": key 'colour': unknown key"},
        {"{\"legacy\": \"yes\"}", file + ": key 'legacy': expected true or false"},
        {"{\"note\": 3}", file + ": key 'note': expected a string"},
        {"{\"note\": \"a\", \"note\": \"b\"}", file + ": key 'note': given twice"},
        {"{\"note\": {\"nested\": 1}}", file + ": key 'note': nested"},
    };
    for (const auto& c : cases) {
        write_text(file, c.text);
        try {
            read_measured_set(m);
            ADD_FAILURE() << "accepted: " << c.text;
        } catch (const core::InputError& e) {
            EXPECT_NE(std::string(e.what()).find(c.expect), std::string::npos) << e.what();
        }
    }
    EXPECT_EQ(parse_lease_json(" { } ", "x").legacy, false);
    EXPECT_EQ(parse_lease_json("{\"note\": \"caf\\u00e9 \\ud83d\\ude00\"}", "x").note, "caf\xc3\xa9 \xf0\x9f\x98\x80");
}

// dmaprobe's metadata.json: the empty kernel's interval, none where no synthetic kernel ran; a
// file that is not JSON or an overhead that is no time is refused, naming the file and key.
TEST(Leases, TheEmptyKernelComesFromTheLeasesMetadata) {
    EXPECT_DOUBLE_EQ(*parse_kernel_overhead("{\"a\": {\"b\": [1, 2]}, \"kernel_calibration\": {\"overhead_us\": 3.392}}", "m"), 3.392);
    EXPECT_FALSE(parse_kernel_overhead("{\"kernel_calibration\": null}", "m"));
    EXPECT_FALSE(parse_kernel_overhead("{\"gpu\": \"H100\"}", "m"));
    for (const std::string bad : {"{\"kernel_calibration\": {\"overhead_us\": -1}}", "{\"kernel_calibration\": {\"overhead_us\": \"x\"}}",
                                  "{\"kernel_calibration\": {}}", "{\"kernel_calibration\": {\"overhead_us\": 2e6}}"}) {
        try {
            parse_kernel_overhead(bad, "l/metadata.json");
            ADD_FAILURE() << "accepted: " << bad;
        } catch (const core::InputError& e) {
            EXPECT_NE(std::string(e.what()).find("l/metadata.json"), std::string::npos) << e.what();
            EXPECT_NE(std::string(e.what()).find("kernel_calibration.overhead_us"), std::string::npos) << e.what();
        }
    }
    EXPECT_THROW(parse_kernel_overhead("{\"kernel_calibration\": ", "m"), core::InputError);
    EXPECT_THROW(parse_kernel_overhead("[1, 2]", "m"), core::InputError);
    // Read with the lease; the median over the leases that have one.
    const std::string m = machine_fixture();
    write_text(m + "/a/metadata.json", "{\"kernel_calibration\": {\"overhead_us\": 4.5}}");
    write_text(m + "/c/metadata.json", "{\"kernel_calibration\": {\"overhead_us\": 3.5}}");
    const MeasuredSet set = read_measured_set(m);
    EXPECT_EQ(set.leases[0].kernel_overhead_us, 4.5);
    EXPECT_FALSE(set.leases[1].kernel_overhead_us);
    const KernelOverhead k = median_kernel_overhead(set.leases);
    EXPECT_EQ(k.leases, 2U);
    EXPECT_DOUBLE_EQ(k.median_us, 4.0);
    write_text(m + "/b/metadata.json", "{\"kernel_calibration\": {\"overhead_us\": true}}");
    EXPECT_THROW(read_measured_set(m), core::InputError);
}

TEST(Leases, ExcludedScenariosOfALeaseGiveNoValue) {
    const std::string m = machine_fixture();
    write_text(m + "/c/lease.json", "{\"note\": \"x measured with a method fixed since\", \"exclude_scenarios\": \"x,q\"}");
    const MeasuredSet set = read_measured_set(m);
    ASSERT_EQ(set.leases[2].info.exclude_scenarios, (std::vector<std::string>{"x", "q"}));
    EXPECT_EQ(set.leases[2].runs[0].rows[0].status, "excluded");
    EXPECT_NE(set.leases[2].runs[0].rows[0].note.find("fixed since"), std::string::npos);
    // Without c's 120, x's leases are a = 105 and b = 98.
    const std::vector<CrossLeaseRow> across = cross_lease(set.leases);  // `x` refers into it
    const CrossLeaseRow& x = find(across, "x");
    EXPECT_EQ(x.per_lease.size(), 2U);
    EXPECT_DOUBLE_EQ(x.max_us, 105.0);
    EXPECT_THROW(parse_lease_json("{\"exclude_scenarios\": \"x\"}", "l.json"), core::InputError);  // no note
    EXPECT_THROW(parse_lease_json("{\"note\": \"n\", \"exclude_scenarios\": \"x,,y\"}", "l.json"), core::InputError);
}

// What the device run script writes to machine.txt: sections headed "## <command>"; the matrix
// is the "## nvidia-smi topo -m" one (with the escape codes nvidia-smi prints).
std::string machine_txt(const std::string& gpu_pair) {
    return "## lease x (boot id y)\n## nvidia-smi\n| GPU0 | H200 |\n## nvidia-smi topo -m\n"
           "\t\x1b[4mGPU0\tGPU1\tCPU Affinity\tNUMA Affinity\tGPU NUMA ID\x1b[0m\n"
           "GPU0\t X \t" + gpu_pair + "\t0-31\t0\t\tN/A\n"
           "GPU1\t" + gpu_pair + "\t X \t0-31\t0\t\tN/A\n\nLegend:\n\n  X    = Self\n"
           "## nvidia-smi -q (PCIe)\n    Bus : 0x00\n";
}

TEST(Leases, PeerRowsMeasuredOverAnotherPathThanTheScenarioModelsGiveNoValue) {
    // Two GPUs joined by 18 NVLinks measured a peer copy that one scenario models over NVLink
    // (its platform is that machine) and another through a PCIe switch (PIX): only the first
    // measures what its scenario models. A copy within one GPU has no path to check.
    const std::vector<config::Scenario> scenarios = config::parse_scenarios(
        "name: nv\nplatform: h200x2-nvlink\nstrategy: peer\nsizes: [1MiB]\n---\n"
        "name: sw\nplatform: workstation-2gpu-switch\nstrategy: peer\nsizes: [1MiB]\n---\n"
        "name: local\nplatform: h200x2-nvlink\nstrategy: peer\nsizes: [1MiB]\npeer: { access: on, src_device: 0, dst_device: 0 }\n",
        "peer.yaml");
    const fs::path m = fs::path(temp_dir()) / "measured";
    const std::vector<core::ResultRow> rows = {
        row("nv", "peer", 1 << 20, 3, 3, 3, "peer=on"), row("sw", "peer", 1 << 20, 3, 3, 3, "peer=on"),
        row("sw", "peer", 1 << 20, 30, 30, 30, "peer=off"), row("local", "peer", 1 << 20, 1, 1, 1),
        row("x", "pinned", 1 << 20, 20, 20, 20)};
    write_csv(m / "nvlink" / "measured.csv", rows);
    write_text(m / "nvlink" / "machine.txt", machine_txt("NV18"));
    write_csv(m / "unknown" / "measured.csv", rows);  // no machine.txt: nothing to check against
    MeasuredSet set = read_measured_set(m.string());
    ASSERT_TRUE(set.leases[0].gpu_topology.has_value());
    EXPECT_EQ(set.leases[0].gpu_topology->route_class("GPU0", "GPU1"), "NV18");
    EXPECT_FALSE(set.leases[1].gpu_topology.has_value());

    EXPECT_EQ(exclude_other_gpu_paths(set, scenarios), 2U) << "sw, peer on and off, in the NVLink lease";
    const auto& got = set.leases[0].runs[0].rows;
    EXPECT_EQ(got[0].status, "ok");
    EXPECT_EQ(got[1].status, "excluded");
    EXPECT_EQ(got[2].status, "excluded");
    EXPECT_NE(got[1].note.find("GPU0 and GPU1 are NV18"), std::string::npos) << got[1].note;
    EXPECT_NE(got[1].note.find("workstation-2gpu-switch joins them by PIX"), std::string::npos) << got[1].note;
    EXPECT_EQ(got[3].status, "ok");
    EXPECT_EQ(got[4].status, "ok");
    for (const auto& r : set.leases[1].runs[0].rows) EXPECT_EQ(r.status, "ok");
    // The cross-lease value of sw now comes from the lease that did not contradict it.
    const std::vector<CrossLeaseRow> across = cross_lease(set.leases);
    EXPECT_EQ(find(across, "sw").per_lease.size(), 1U);
    EXPECT_EQ(find(across, "nv").per_lease.size(), 2U);

    // The same machine seen through PCIe: the switch scenario is the one that matches.
    write_text(m / "nvlink" / "machine.txt", machine_txt("PIX"));
    MeasuredSet pix = read_measured_set(m.string());
    EXPECT_EQ(exclude_other_gpu_paths(pix, scenarios), 1U) << "nv, peer on";
    EXPECT_EQ(pix.leases[0].runs[0].rows[0].status, "excluded");

    // A machine.txt without the section says nothing; a broken matrix is an error naming the file.
    write_text(m / "nvlink" / "machine.txt", "## nvidia-smi\nno topology here\n");
    EXPECT_FALSE(read_measured_set(m.string()).leases[0].gpu_topology.has_value());
    write_text(m / "nvlink" / "machine.txt", "## nvidia-smi topo -m\n\tGPU0\tGPU1\tCPU Affinity\nGPU0\t X \tNV18\nGPU1\tNV18\n");
    try {
        read_measured_set(m.string());
        ADD_FAILURE() << "a ragged matrix was accepted";
    } catch (const core::InputError& e) {
        EXPECT_NE(std::string(e.what()).find((m / "nvlink" / "machine.txt").string()), std::string::npos) << e.what();
        EXPECT_NE(std::string(e.what()).find("ragged"), std::string::npos) << e.what();
    }
}

TEST(Leases, CrossLeaseMedianSpreadAndFlag) {
    const MeasuredSet set = read_measured_set(machine_fixture());
    const auto rows = cross_lease(set.leases);
    ASSERT_EQ(rows.size(), 4U);

    const CrossLeaseRow& x = find(rows, "x");
    ASSERT_EQ(x.per_lease.size(), 3U);
    EXPECT_DOUBLE_EQ(x.per_lease[0].time_us, 105.0) << "median of the runs; the repeated row in run2 does not count";
    EXPECT_EQ(x.per_lease[0].runs, 2U);
    EXPECT_DOUBLE_EQ(x.median_us, 105.0);
    EXPECT_DOUBLE_EQ(x.min_us, 98.0);
    EXPECT_DOUBLE_EQ(x.max_us, 120.0);
    EXPECT_NEAR(x.spread_pct, (120.0 / 98.0 - 1.0) * 100.0, 1e-9);
    EXPECT_TRUE(x.flagged);
    // Widths: a 10 % (both runs), b 2/98, c 24/120 = 20 %: the median is 10 %.
    EXPECT_NEAR(x.per_lease[1].width_pct, 2.0 / 98.0 * 100.0, 1e-9);
    EXPECT_NEAR(x.within_p10_p90_pct, 10.0, 1e-9);
    EXPECT_DOUBLE_EQ(x.row.time_us, 105.0);
    EXPECT_DOUBLE_EQ(x.row.p10_us, 99.75) << "median over leases of (99.75, 97, 108)";

    const CrossLeaseRow& y = find(rows, "y");
    EXPECT_EQ(y.per_lease.size(), 2U);
    EXPECT_NEAR(y.spread_pct, 2.0, 1e-9);
    EXPECT_FALSE(y.flagged);
    EXPECT_DOUBLE_EQ(y.median_us, 50.5);

    const CrossLeaseRow& w = find(rows, "w");
    ASSERT_EQ(w.per_lease.size(), 1U);
    EXPECT_EQ(w.per_lease[0].lease, "a");
    EXPECT_DOUBLE_EQ(w.spread_pct, 0.0);

    const CrossLeaseRow& z = find(rows, "z");
    EXPECT_FALSE(z.ok());
    EXPECT_EQ(z.row.status, "skipped");
    EXPECT_EQ(z.row.note, "peer needs two GPUs; this machine has 1");

    // A single CSV passes through unchanged.
    const auto single = cross_lease_rows(cross_lease(read_measured_set(set.leases[1].runs[0].csv_path).leases));
    ASSERT_EQ(single.size(), 4U);
    EXPECT_DOUBLE_EQ(single[0].time_us, 98.0);
    EXPECT_DOUBLE_EQ(single[0].p90_us, 99.0);
    EXPECT_EQ(single[2].status, "skipped");
}

TEST(Leases, Categories) {
    EXPECT_EQ(spread_category(row("s", "pinned", 4096, 1, 1, 1)), "pinned <64KiB");
    EXPECT_EQ(spread_category(row("s", "pinned", 65536, 1, 1, 1)), "pinned >=64KiB");
    EXPECT_EQ(spread_category(row("s", "pinned", 4096, 1, 1, 1, "setup=mallochost")), "setup=mallochost");
    EXPECT_EQ(spread_category(row("s", "periodic", 4 << 20, 1, 1, 1, "p99")), "periodic p99");
    EXPECT_EQ(spread_category(row("s", "periodic", 4 << 20, 1, 1, 1)), "periodic p50");
    EXPECT_EQ(spread_category(row("s", "peer", 1 << 20, 1, 1, 1, "peer=off")), "peer off");
    EXPECT_EQ(spread_category(row("s", "zero_copy", 1 << 26, 1, 1, 1)), "zero_copy >=64KiB");
}


TEST(Spread, WritesOneLinePerRowWithLeaseColumnsAndASummary) {
    const std::string m = machine_fixture();
    const std::string out = temp_dir() + "/spread";
    const Outcome r = cli({"spread", "--measured", m, "--out", out, "--quiet"});
    ASSERT_EQ(r.code, 0) << r.err;
    const auto csv = read_csv(out + "/spread.csv");
    ASSERT_EQ(csv.size(), 1U + 4U);
    const std::vector<std::string> head{"scenario", "strategy", "direction", "size_bytes", "variant", "leases",
                                        "median_us", "min_us", "max_us", "spread_pct", "within_p10_p90_pct",
                                        "flagged", "category", "status", "note", "a", "b", "c"};
    EXPECT_EQ(csv[0], head);
    std::map<std::string, std::vector<std::string>> by;
    for (std::size_t i = 1; i < csv.size(); ++i) by[csv[i][0]] = csv[i];
    EXPECT_EQ(by["x"][5], "3");
    EXPECT_EQ(by["x"][6], "105.0000");
    EXPECT_EQ(by["x"][9], "22.45");
    EXPECT_EQ(by["x"][10], "10.00");
    EXPECT_EQ(by["x"][11], "1");
    EXPECT_EQ(by["x"][12], "pinned >=64KiB");
    EXPECT_EQ(by["x"][15], "105.0000");
    EXPECT_EQ(by["x"][16], "98.0000");
    EXPECT_EQ(by["x"][17], "120.0000");
    EXPECT_EQ(by["y"][11], "0");
    EXPECT_EQ(by["y"][17], "") << "lease c has no y";
    EXPECT_EQ(by["z"][13], "skipped");
    EXPECT_EQ(by["z"][14], "peer needs two GPUs; this machine has 1");
    EXPECT_EQ(by["z"][6], "");

    const auto summary = read_csv(out + "/spread_summary.csv");
    ASSERT_GE(summary.size(), 3U);
    EXPECT_EQ(summary[0][0], "category");
    const auto& all = summary.back();
    EXPECT_EQ(all[0], "all");
    EXPECT_EQ(all[1], "3") << "x, y, w measured";
    EXPECT_EQ(all[2], "2") << "x and y in two leases or more";
    EXPECT_EQ(all[3], "1") << "y within 5 %";
    EXPECT_NE(r.out.find("3 leases"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("1 skipped in every lease"), std::string::npos) << r.out;

    // Bad input: one line naming the file and key, exit status 2, nothing written.
    write_text(m + "/c/lease.json", "{\"legacy\": 1}");
    const std::string out2 = temp_dir() + "/never";
    const Outcome bad = cli({"spread", "--measured", m, "--out", out2});
    EXPECT_EQ(bad.code, 2);
    EXPECT_NE(bad.err.find("c/lease.json: key 'legacy'"), std::string::npos) << bad.err;
    EXPECT_EQ(std::count(bad.err.begin(), bad.err.end(), '\n'), 1) << bad.err;
    EXPECT_FALSE(fs::exists(out2));
}

TEST(Spread, DefaultOutputIsNotTheCommittedFolder) {
    const Outcome help = cli({"spread", "--help"});
    EXPECT_EQ(help.code, 0);
    EXPECT_NE(help.out.find("out/spread"), std::string::npos) << help.out;
}

}  // namespace
}  // namespace dmasim::app
