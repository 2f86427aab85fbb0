// The results schema (docs/results.md): long-format CSV, one row per
// (scenario, strategy, direction, size, variant), written by the simulator (source=sim) and by
// the CUDA harness (source=hw). Plus a small JSON writer for the metadata file beside it, and an
// all-or-nothing writer so that a failed run never leaves half-written output.
//
// Dependency-free: compiled into dmaprobe with nvcc alone.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <string>
#include <utility>
#include <vector>

#include "dmasim/core/limits.h"

namespace dmasim::core {

struct ResultRow {
    std::string scenario;
    std::string strategy;
    std::string direction;       // h2d, d2h, both, p2p, ...
    int directions = 1;          // 1 or 2: how many directions moved size_bytes each
    std::uint64_t size_bytes = 0;  // bytes per direction
    double time_us = 0.0;        // median time of one transfer (all directions together)
    std::string source;          // "sim" or "hw"
    int repetitions = 1;         // timed repetitions behind time_us (1 for the deterministic model)
    double p10_us = 0.0;         // spread: 10th/90th percentile and extremes of the timed reps
    double p90_us = 0.0;
    double min_us = 0.0;
    double max_us = 0.0;
    std::string variant;         // sub-case label, e.g. "streams=4" or "setup=register"; may be empty
    std::string status = "ok";   // ok, skipped or error
    std::string note;            // why a row was skipped, or a short remark
    double cv = 0.0;             // coefficient of variation of the timed reps (stddev / mean);
                                 // 0 for the deterministic model. Older files lack it
    std::string calibration;     // model rows: the calibration behind the number ("none": the
                                 // defaults); empty in measured rows. Older files lack it
    double speedup = 0.0;        // overlap rows: the serial variant's time over this row's; 0 (an
                                 // empty field) elsewhere. Older files lack it
    // Model rows of one program: the bytes host memory served it, read and written (-1: empty,
    // as in measured rows and rows that time no one program). Last columns: older files lack them.
    std::int64_t host_read_bytes = -1;
    std::int64_t host_written_bytes = -1;
    // Measured rows: every timed repetition's time in microseconds, in the order they ran
    // (dmaprobe writes them into its JSON, not the CSV). A row that is a mixture of clusters, as
    // the gated duplex pair's, is known only from these; its median alone hides the shares.
    std::vector<double> samples_us;

    // gbps = size_bytes * directions / time_us / 1e3 (decimal GB/s); 0 when time is 0.
    double gbps() const;
    // A row whose time is not a transfer's (a setup cost, a deadline, an overlapped pipeline of
    // copies and kernels): its gbps field is empty.
    bool time_only() const;
};

// The CSV header line, without newline.
const std::string& results_csv_header();
// One CSV row (RFC 4180 quoting where needed), without newline.
std::string format_result_row(const ResultRow& r);
void write_results_csv(std::ostream& out, const std::vector<ResultRow>& rows);
// Reads a results CSV written by write_results_csv (or any CSV with the same leading columns).
// Columns are found by name; optional ones that are absent (older files have no cv) take
// their defaults. Every value is range-checked as it is read, since compare and calibrate
// simulate what a measured file names and divide by its times: sizes are whole numbers of bytes
// from 1 B to kMaxResultSize, directions 1 or 2, repetitions a whole number (at least 1 in an
// ok row), times and cv finite and not negative, and an ok row's time positive. A bad value
// throws InputError naming "origin:line" and the column.
std::vector<ResultRow> read_results_csv(std::istream& in, const std::string& origin);

// The largest transfer a results file may name: the largest copy a scenario may ask for.
// compare and calibrate simulate the measured sizes, and a corrupt one would take years.
constexpr std::uint64_t kMaxResultSize = limits::kMaxCopyBytes;

// Minimal JSON document builder: objects, arrays, strings, numbers, booleans. Keys keep their
// insertion order so that config.json diffs stay readable.
class JsonWriter {
public:
    JsonWriter& begin_object(const std::string& key = {});
    JsonWriter& end_object();
    JsonWriter& begin_array(const std::string& key = {});
    JsonWriter& end_array();
    JsonWriter& value(const std::string& key, const std::string& v);
    JsonWriter& value(const std::string& key, const char* v) { return value(key, std::string(v)); }
    JsonWriter& value(const std::string& key, double v);
    JsonWriter& value(const std::string& key, std::int64_t v);
    JsonWriter& value(const std::string& key, std::uint64_t v);
    JsonWriter& value(const std::string& key, int v) { return value(key, static_cast<std::int64_t>(v)); }
    JsonWriter& value(const std::string& key, bool v);
    JsonWriter& null_value(const std::string& key);
    // Inserts already-formatted JSON (e.g. a nested document built elsewhere).
    JsonWriter& raw(const std::string& key, const std::string& json);
    std::string str() const;

private:
    void prefix(const std::string& key);
    std::string out_;
    std::vector<bool> first_;  // per open container: nothing written yet
};

std::string json_escape(const std::string& s);

// A command's output files, written all at once: a reader of the output directory sees every
// file of the previous run or every file of this one, never a mix, and a failed or interrupted
// write leaves the previous files as they were.
//
// The files are collected in memory and written under temporary names on the target's
// filesystem; only when all are complete are they moved into place. A directory that does not
// exist yet is written as a temporary directory beside it and renamed into place; one that
// holds nothing but files of this set is swapped with such a directory in one step (Linux
// renameat2 RENAME_EXCHANGE); any other (holding files of its own, or a symlink) gets each file
// renamed into place, after every one was written. SIGINT, SIGTERM and SIGHUP are held back
// while the files are written and moved, so that a signal never leaves temporary files behind.
//
// Every failure throws InputError naming the path, so that the command exits with status 2.
class OutputFiles {
public:
    // `dir`: where add()'s files go; "" is the current directory.
    explicit OutputFiles(std::string dir = {});
    void add(const std::string& name, std::string content);
    // A file outside `dir` (e.g. a timeline beside the results): committed with the others.
    void add_path(const std::string& path, std::string content);
    // Checks, writing nothing, that the files could be written: each directory exists or could
    // be created and is writable, no target is a directory, no two files share a path. The
    // contents need not be there yet (add empty ones), so a command calls it before its work.
    void check() const;
    // check(), then writes. Creates the directories if needed. Returns the paths written.
    std::vector<std::string> commit() const;
    const std::string& dir() const { return dir_; }

private:
    struct File {
        std::string path;
        std::string content;
        bool in_dir;  // added by add(): a problem with the directory is named as the directory's
    };
    std::string dir_;
    std::vector<File> files_;
};

// Percentile of an unsorted sample (linear interpolation between order statistics), q in [0,1].
double percentile(std::vector<double> sample, double q);
// The same on a sample already sorted ascending (no copy): for loops that ask several quantiles.
double percentile_sorted(const std::vector<double>& sorted, double q);
// The q-quantile of N(0, 1), q in (0, 1), by bisection on erfc: for the few quantiles the band of
// machines and its fits need, not for a hot path.
double normal_quantile(double q);

}  // namespace dmasim::core
