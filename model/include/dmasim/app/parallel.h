// Running the cases of a sweep on several processes (docs/scaling.md).
//
// A sweep is cut into cases: one (scenario, strategy, direction, size), or one scenario's flows
// (they run together). SystemC elaborates one platform per process, so cases run in worker
// processes, each elaborating one platform once and then running every case of that platform
// the parent hands it, the one expected to take longest first. Each case's rows are formatted in the worker, and the
// parent puts the cases back in sweep order: the files are the same whatever the number of
// workers, and the same as the cases of a shard (--shard I/N) or of an MPI rank put together.
// The model itself carries nothing from one case to the next (tests/sim/invariants_test.cpp,
// RowsDoNotDependOnWhatRanBefore), which is what makes the order of execution free.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <iosfwd>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "dmasim/config/scenario.h"
#include "dmasim/core/results.h"

namespace dmasim::app {

// The CPUs this process may run on (its affinity mask; at least 1): the default of --jobs.
int default_jobs();
// The largest --jobs: each worker is a process the termination handler tracks.
constexpr int kMaxJobs = 256;

struct WorkCase {
    std::size_t scenario = 0;  // index into the sweep's scenarios
    std::size_t platform = 0;  // index into Workload::platforms
    bool flows = false;        // the scenario's flows, all in one simulation
    std::string strategy;
    std::string direction;
    std::uint64_t size = 0;
    // A relative estimate of the simulation's work (bytes moved, plus a fixed part per case),
    // which run_cases scales by the time cases of the same kind took so far: the order in which
    // workers take cases, and the progress ETA. Only an estimate.
    double cost = 0.0;
    std::string label;  // "scenario strategy direction size", for progress lines
};

struct Workload {
    const std::vector<config::Scenario>* scenarios = nullptr;
    std::vector<std::string> platforms;  // resolved platform files, in first-seen order
    // In the order of the output files, which is dmasim's order of old: platform by platform
    // (in first-seen order), within one the scenarios in order, then strategy, direction, size.
    std::vector<WorkCase> cases;
};
Workload make_workload(const std::vector<config::Scenario>& scenarios);

// What one case contributes to each output.
//
// The rows of every platform but the sweep's last are the rows as read back from their CSV
// lines, and their lines are written from those: dmasim has always handed those platforms' rows
// from a child process to the parent through a results CSV (gbps is recomputed from the time as
// printed), and the committed results and reference numbers are those bytes. The last
// platform's rows are the simulation's own. Either way it depends on the case alone, not on
// which process ran it.
struct CaseOutput {
    std::vector<core::ResultRow> rows;
    std::string rows_csv;   // its lines of results.csv (each ending in '\n')
    std::string links_csv;  // its lines of links.csv
    std::string explain;    // its --explain text
};

// The header line of links.csv (with newline).
std::string links_csv_header();

// Progress on stderr: a bar redrawn in place when stderr is a terminal, otherwise a plain line
// at most every `interval` (and one at the end of a run that printed any). The ETA is what the
// scheduler last expected (expect()), counted down; before that, the remaining cases at the rate
// (in estimated cost per second) of those done so far.
class Progress {
public:
    // `enabled`: false prints nothing (--quiet). `tty`: draw a bar.
    Progress(std::ostream& err, bool enabled, bool tty, std::string what,
             std::chrono::steady_clock::duration interval = std::chrono::seconds(5));
    void start(std::size_t cases, double cost);
    void done(double cost, const std::string& label);  // one case finished
    void expect(double seconds_left);                  // the scheduler's estimate of the time left
    void tick();                                       // time passed: redraw the bar
    void finish();                                     // the end of the run: the bar is closed
    bool tty() const { return tty_; }

private:
    void draw(bool final);
    std::ostream& err_;
    bool enabled_;
    bool tty_;
    std::string what_;
    std::chrono::steady_clock::duration interval_;
    std::chrono::steady_clock::time_point t0_{};
    std::chrono::steady_clock::time_point last_{};
    std::size_t cases_ = 0;
    std::size_t cases_done_ = 0;
    double cost_ = 0.0;
    double cost_done_ = 0.0;
    std::string label_;
    bool printed_ = false;
    double expected_left_ = -1.0;
    std::chrono::steady_clock::time_point expected_at_{};
};

// Whether `err` is this process's standard error and that is a terminal.
bool stderr_is_terminal(const std::ostream& err);

struct RunSettings {
    int jobs = 1;
    bool explain = false;
    // jobs 1: the last platform is simulated in this process (as dmasim always did), every
    // other one in a child; the timeline of --trace needs this process's simulation.
    bool in_process_last = false;
    Progress* progress = nullptr;
};

// Simulates the cases `selected` (indices into w.cases, any order) and returns their outputs in
// the order of `selected`. At most s.jobs worker processes at a time (at most one with
// in_process_last). A failed case stops every worker and throws std::runtime_error with the
// worker's message (core::InputError where the worker's error was one).
std::vector<CaseOutput> run_cases(const Workload& w, const std::vector<std::size_t>& selected, const RunSettings& s);

// Worker processes kept from one run to the next, for the same cases simulated again and again
// with other parameter values (calibrate's optimiser steps). Each worker elaborates its platform
// once; at each step it builds the step's workload itself, from the step's description, with
// the function this process uses (it was forked from this process, so it has what that function
// needs). Forking and elaborating workers anew at every step cost about 800 page faults each, a
// third of a calibration's time. The outputs are those of run_cases on the same workload.
class StepWorkers {
public:
    // The workload of a step, from its description; the reference stays valid until the next
    // call. Called here and in the workers.
    using Build = std::function<const Workload&(const std::string& step)>;
    // At most `jobs` workers (at least one per platform: with more platforms than jobs every
    // step runs through run_cases instead).
    StepWorkers(Build build, int jobs);
    ~StepWorkers();
    StepWorkers(const StepWorkers&) = delete;
    StepWorkers& operator=(const StepWorkers&) = delete;
    // Simulates the cases `selected` of the step's workload; outputs in the order of `selected`.
    // Throws as run_cases does.
    std::vector<CaseOutput> run(const std::string& step, const std::vector<std::size_t>& selected);

private:
    struct Pool;
    std::vector<CaseOutput> run_step(const std::string& step, const std::vector<std::size_t>& selected);
    Build build_;
    int jobs_;
    std::unique_ptr<Pool> pool_;
};

// Runs task(i) for every i in `order` in child processes, at most `jobs` at a time (each in the
// order given), and returns what each returned, indexed by i. on_done(i, result) runs in this
// process as each ends. A task that throws stops the others and its message is thrown here
// (core::InputError where it was one). Forked children are why a task may elaborate SystemC.
std::vector<std::string> run_tasks(const std::vector<std::size_t>& order, std::size_t n, int jobs,
                                   const std::function<std::string(std::size_t)>& task,
                                   const std::function<void(std::size_t, const std::string&)>& on_done = {});

// The rows of outputs, in order (for the table and compare).
std::vector<core::ResultRow> rows_of(const std::vector<CaseOutput>& outputs);
// The same as read back from results.csv (calibrate reads its steps' predictions so).
std::vector<core::ResultRow> parsed_rows_of(const std::vector<CaseOutput>& outputs, const std::string& origin);

// --shard I/N: parsed and checked (0 <= I < N <= 100000); InputError naming --shard otherwise.
struct Shard {
    std::size_t index = 0;
    std::size_t count = 1;
};
Shard parse_shard(const std::string& text);
// The cases of shard `index` of `count`: every case whose position in the sweep is index
// modulo count (round robin, so that each shard gets a like share of small and large sizes).
std::vector<std::size_t> shard_cases(std::size_t total, std::size_t index, std::size_t count);

// Byte strings between processes of one build (workers, fits, MPI ranks): lengths and numbers
// in the machine's own representation, so doubles arrive bit for bit.
class ByteWriter {
public:
    ByteWriter& u64(std::uint64_t v);
    ByteWriter& f64(double v);
    ByteWriter& str(const std::string& v);
    const std::string& bytes() const { return out_; }

private:
    std::string out_;
};
class ByteReader {
public:
    // `origin` names the source in the std::runtime_error a short or malformed string throws.
    ByteReader(const std::string& bytes, std::string origin) : in_(bytes), origin_(std::move(origin)) {}
    std::uint64_t u64();
    double f64();
    std::string str();
    bool at_end() const { return pos_ == in_.size(); }

private:
    void need(std::size_t n) const;
    const std::string& in_;
    std::string origin_;
    std::size_t pos_ = 0;
};

// Case outputs (with their case indices) as one byte string and back: MPI ranks send theirs
// to rank 0.
std::string encode_outputs(const std::vector<std::size_t>& cases, const std::vector<CaseOutput>& outputs);
void decode_outputs(const std::string& bytes, std::vector<std::size_t>& cases, std::vector<CaseOutput>& outputs,
                    const std::string& origin);

}  // namespace dmasim::app
