// The dmasim command line: run, validate, plan, compare, calibrate, spread, topo, params.
// main() only forwards here so that the commands can be tested in-process.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

#include "dmasim/config/scenario.h"
#include "dmasim/core/results.h"

namespace dmasim::app {

// Runs the CLI. Returns the process exit status: 0 success, 1 a failure while running,
// 2 bad input (command line, scenario or measured files, an output path that cannot be
// written). Errors go to `err` as one line each. Output paths are checked before any
// simulation, and a command's files appear all together or not at all (core::OutputFiles).
// While it runs, SIGINT, SIGTERM and SIGHUP end its child processes, remove its temporary files
// and exit with 128 + the signal (dmasim/app/processes.h).
int run_cli(int argc, char** argv, std::ostream& out, std::ostream& err);

// Shared by compare and calibrate.
// Every scenario file under `dir`, with `sets` applied; checked against its platform.
// `calibration` as --calibration takes it: empty for each platform's own, "none", a name or a file.
std::vector<config::Scenario> load_scenario_dir(const std::string& dir, const std::vector<config::SetOverride>& sets,
                                               const std::string& calibration = "");
// The scenarios that measured rows name, cut down to the measured directions and sizes.
// --set texts as they apply to the scenarios the measured rows name: one without a scenario
// prefix applies to each of them, leaving alone the scenarios not measured (some of which the
// platform it names may not run).
std::vector<config::SetOverride> sets_for_measured(const std::vector<std::string>& texts,
                                                   const std::vector<config::Scenario>& scenarios,
                                                   const std::vector<core::ResultRow>& hw);
std::vector<config::Scenario> restrict_to_measured(const std::vector<config::Scenario>& scenarios,
                                                   const std::vector<core::ResultRow>& measured);
// Simulates scenarios without progress output, as `run` does (jobs 1: a child per platform but
// the last, which runs in this process).
std::vector<core::ResultRow> simulate_quietly(const std::vector<config::Scenario>& scenarios, int jobs = 1);
// The key a measured and a simulated row share: scenario|strategy|direction|size|variant.
std::string result_key(const core::ResultRow& r);
// FNV-1a (64-bit) of a text: a stable fingerprint of inputs (shards, calibration data, folds).
std::uint64_t fnv1a64(const std::string& text);
// The measured rows of a measured.csv, a lease folder or a machine's measured folder
// (dmasim/app/leases.h): each row's time is the median over leases of each lease's median over
// its runs, which for a single CSV is the row itself. `resolved`: the path read.
std::vector<core::ResultRow> read_measured(const std::string& path, std::string* resolved = nullptr);

// `dmasim calibrate` (model/src/app/calibrate.cpp).
struct CalibrateOptions {
    std::string measured;
    std::string scenarios_dir = "scenarios";
    std::string out_file;
    std::vector<std::string> free;  // subset of the free parameters; empty: all
    std::vector<std::string> sets;  // --set overrides for the measured scenarios (platform=...)
    std::vector<std::string> leases;  // only these leases of `measured` (keep_leases); empty: all
    std::uint64_t max_size = 4u << 20;
    int max_evaluations = 200;
    // A calibration file whose values of the free parameters the fit starts from (empty: the
    // model's defaults). After a change to the model, the fit from the calibration it replaces
    // stays near that optimum instead of finding another from the defaults.
    std::string start_file;
    int folds = 0;  // k-fold cross-validation on top of the fixed split; 0: none
    bool leave_one_lease_out = true;  // one more fit per lease; needs at least two leases
    bool band = true;                 // fit model_error from every measured row (docs/calibration.md, "The band")
    double band_coverage = 0.8;       // the share of lease medians the p10-p90 band is to hold
    bool quiet = false;
    int jobs = 1;  // processes that simulate at once; the result does not depend on it
};
int cmd_calibrate(const CalibrateOptions& o, int argc, char** argv, std::ostream& out, std::ostream& err);

// `dmasim merge`: the folders of `dmasim run --shard I/N` (every shard of one run) put together
// into the files one run writes (docs/scaling.md).
int cmd_merge(const std::vector<std::string>& dirs, const std::string& out_dir, int argc, char** argv, std::ostream& out);

// `dmasim spread` (model/src/app/spread.cpp): how far the leases of one machine kind agree.
struct SpreadOptions {
    std::string measured;
    // Not results/: the committed spread.csv is only replaced when asked for by name.
    std::string out_dir = "out/spread";
    bool quiet = false;
};
int cmd_spread(const SpreadOptions& o, std::ostream& out, std::ostream& err);

}  // namespace dmasim::app
