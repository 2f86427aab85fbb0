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
                                 // 0 for the deterministic model. Last column: older files lack it

    // gbps = size_bytes * directions / time_us / 1e3 (decimal GB/s); 0 when time is 0.
    double gbps() const;
};

// The CSV header line, without newline.
const std::string& results_csv_header();
// One CSV row (RFC 4180 quoting where needed), without newline.
std::string format_result_row(const ResultRow& r);
void write_results_csv(std::ostream& out, const std::vector<ResultRow>& rows);
// Reads a results CSV written by write_results_csv (or any CSV with the same leading columns).
// Columns are found by name; optional ones that are absent (older files have no cv) take
// their defaults.
std::vector<ResultRow> read_results_csv(std::istream& in, const std::string& origin);

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

// Collects output files in memory and writes them all at once: each goes to a temporary name
// in the target directory and is renamed into place only after every file was written.
class OutputFiles {
public:
    explicit OutputFiles(std::string dir);
    void add(const std::string& name, std::string content);
    // Creates the directory if needed. Throws std::runtime_error (removing any temporary file)
    // if a file cannot be written; files renamed before the failure stay.
    std::vector<std::string> commit() const;
    const std::string& dir() const { return dir_; }

private:
    std::string dir_;
    std::vector<std::pair<std::string, std::string>> files_;
};

// Percentile of an unsorted sample (linear interpolation between order statistics), q in [0,1].
double percentile(std::vector<double> sample, double q);

}  // namespace dmasim::core
