// Measured data taken on several separately started machines ("leases") of one kind, and the
// cross-lease statistics that compare, calibrate and spread use (docs/results.md, "Leases").
//
// A machine's measured folder holds one folder per lease; a lease holds one or more runs of the
// plan (its own measured.csv, or run1/measured.csv, run2/, ...) and, optionally, lease.json.
// One lease is not enough to tell a property of the machine kind from a property of one
// machine, so values are taken lease by lease and only then across leases.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "dmasim/config/scenario.h"
#include "dmasim/core/results.h"
#include "dmasim/topology/import.h"

namespace dmasim::app {

// One run of the plan: one measured.csv.
struct MeasuredRun {
    std::string name;  // "run1", or "measured.csv" for a lease's own measured.csv
    std::string csv_path;
    std::vector<core::ResultRow> rows;
};

// What lease.json may say. A flat JSON object; every key is optional, any other key is refused.
struct LeaseInfo {
    bool legacy = false;  // measured with an older method (e.g. no CPU pinning, plan order)
    std::string note;
    std::string date;
    std::string commit;
    // Scenarios whose rows in this lease were measured with a method fixed since: their rows
    // are kept, with status "excluded", and give no value. lease.json spells it as one string,
    // names separated by commas ("exclude_scenarios": "a,b"); `note` must say why.
    std::vector<std::string> exclude_scenarios;
};

struct Lease {
    std::string name;  // the folder's name
    std::string path;
    LeaseInfo info;
    std::vector<MeasuredRun> runs;
    // How the machine's GPUs were joined: the "## nvidia-smi topo -m" section of the lease's
    // machine.txt (what the device run script records), when there is one.
    std::optional<topology::SmiTopology> gpu_topology;
    std::string gpu_topology_origin;  // "<lease>/machine.txt"
    // The harness's empty kernel, timed as its kernels are (gated, events around it): dmaprobe's
    // metadata.json, kernel_calibration.overhead_us, where the lease has one that ran it.
    std::optional<double> kernel_overhead_us;
};

struct MeasuredSet {
    std::string path;  // as given
    std::vector<Lease> leases;
    // Every measured.csv read, in lease and run order.
    std::vector<std::string> files() const;
};

// Parses the text of a lease.json. Malformed JSON, a key other than legacy/note/date/commit or
// a value of the wrong type throws core::InputError naming `origin` (and the key).
LeaseInfo parse_lease_json(const std::string& text, const std::string& origin);

// kernel_calibration.overhead_us of a dmaprobe metadata.json's text: none where the object is
// null or absent (no synthetic kernel ran). Text that is not JSON, or an overhead that is not a
// number between 0 and 1 s, throws core::InputError naming `origin` and the key.
std::optional<double> parse_kernel_overhead(const std::string& text, const std::string& origin);

// The median over `leases` of their kernel_overhead_us, and how many had one (0: none).
struct KernelOverhead {
    double median_us = 0.0;
    std::size_t leases = 0;
};
KernelOverhead median_kernel_overhead(const std::vector<Lease>& leases);

// Reads `path`, which is one of:
//  - a measured.csv: one lease of one run;
//  - a lease folder: it has measured.csv and/or run<N>/measured.csv (and maybe lease.json);
//  - a machine's measured folder: every sub-folder that is a lease folder is a lease (sorted
//    by name); other sub-folders are ignored.
// Throws core::InputError naming the path when nothing measured is found.
MeasuredSet read_measured_set(const std::string& path);

// Keeps only the leases `names` names, each by its folder name or by what follows its last '-'
// (the boot id's first part: "220b65eb" for 2026-11-24-220b65eb); empty keeps them all. A training
// split of machines, and a machine held out, are named this way (docs/calibration.md). A name that
// matches no lease throws core::InputError naming `option` and the name.
void keep_leases(MeasuredSet& set, const std::vector<std::string>& names, const std::string& option = "--leases");

// A peer copy measures the path between its two GPUs on the machine it ran on. Where a lease's
// machine joins them differently from the platform the scenario models (NVLink measured, a
// PCIe switch modelled), the lease's rows of that scenario measure another machine: they are
// marked "excluded", with a note that says both paths, and give no value. Leases without a
// recorded topology are kept as they are. Returns the number of rows excluded.
std::size_t exclude_other_gpu_paths(MeasuredSet& set, const std::vector<config::Scenario>& scenarios);

// One lease's value of one row: the median over its runs' medians.
struct LeaseValue {
    std::string lease;
    double time_us = 0.0;
    double p10_us = 0.0;  // median over the runs
    double p90_us = 0.0;
    double width_pct = 0.0;  // within-lease spread: median over the runs of (p90 - p10) / time_us
    std::size_t runs = 0;    // runs with the row ok
};

// A spread above this many percent across leases flags the row.
constexpr double kSpreadFlagPct = 5.0;

// One row key (result_key) across leases.
struct CrossLeaseRow {
    std::string key;
    // The row as compare and calibrate use it: time_us is the cross-lease median, p10/p90 and cv
    // the medians over leases, min/max the extremes of every run, repetitions their sum; variant
    // normalised as result_key does. A row ok in no lease keeps the status and note of its first
    // occurrence (e.g. skipped, "peer needs two GPUs").
    core::ResultRow row;
    std::vector<LeaseValue> per_lease;  // leases with the row ok, in lease order
    double median_us = 0.0;
    double min_us = 0.0;  // lowest and highest lease value
    double max_us = 0.0;
    double spread_pct = 0.0;          // (max_us / min_us - 1) * 100
    double within_p10_p90_pct = 0.0;  // median over leases of their width_pct
    bool flagged = false;             // spread_pct > kSpreadFlagPct
    bool ok() const { return !per_lease.empty(); }
};

// Every row key of the leases, in first-seen order. Within a run the first row of a key
// counts; rows whose status is not ok, or whose time is not positive, give no value.
std::vector<CrossLeaseRow> cross_lease(const std::vector<Lease>& leases);

// The rows of cross_lease(), as measured rows.
std::vector<core::ResultRow> cross_lease_rows(const std::vector<CrossLeaseRow>& rows);

// The category a row's spread is summarised under (docs/results.md): the setup call for
// setup=* rows, "periodic p50|p99|sustained", "peer on|off|refused", "kernel", else the strategy
// and the size class ("pinned <64KiB", "pageable >=64KiB").
std::string spread_category(const core::ResultRow& row);

}  // namespace dmasim::app
