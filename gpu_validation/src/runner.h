// Runs the decided cases of a plan on a Backend (the CUDA one, or a fake in tests) and
// collects the rows; prints --list. Plain C++.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

#include "dmasim/core/results.h"
#include "metadata.h"
#include "spec.h"

namespace dmaprobe {

// What measures. The CUDA implementation lives in cuda/; tests use a fake.
class Backend {
public:
    virtual ~Backend() = default;
    // Device count, PCIe link, peer capabilities: the facts machine_skip_reason needs.
    virtual MachineInfo machine_info() const = 0;
    // Measures one runnable case and returns its rows (status ok). Throws on any error
    // (CUDA error, failed verification); the run then stops and writes nothing.
    virtual std::vector<dmasim::core::ResultRow> measure(const MeasurementSpec& spec) = 0;
    // Adds what it knows (GPUs, driver, calibration) to the metadata.
    virtual void describe(Metadata& m) const = 0;
};

struct RunSummary {
    // In plan order (by case index; a case's rows in the order the backend returned them),
    // whatever order the cases ran in, so that CSVs of different runs diff cleanly.
    std::vector<dmasim::core::ResultRow> rows;
    std::vector<std::size_t> row_case;  // plan index (0-based) of each row
    std::size_t run = 0;       // cases measured
    std::size_t skipped = 0;   // cases written as status=skipped
    std::size_t filtered = 0;  // cases left out by --only / --max-size
    double seconds = 0;
    CaseOrder order = CaseOrder::shuffle;
    std::uint64_t seed = 0;              // the shuffle's seed (opt.seed, else drawn)
    std::vector<std::size_t> run_order;  // plan indices (0-based) of the measured cases, as run
};

// A permutation of 0..n-1: Fisher-Yates driven by std::mt19937_64(seed), with its own
// unbiased bounded draw (std::uniform_int_distribution differs between standard libraries),
// so that a seed gives the same order everywhere.
std::vector<std::size_t> shuffled_indices(std::size_t n, std::uint64_t seed);

// A seed from std::random_device mixed with the clock, below 2^53 so that it survives any
// JSON reader (metadata.json records it).
std::uint64_t random_seed();

// Skipped cases become skipped rows first (in plan order), then the runnable cases are
// measured in opt.order (shuffled with opt.seed, or a drawn seed); rows come back in plan
// order. Progress lines go to `log` unless opt.quiet. An exception from the backend is
// rethrown with the case named.
RunSummary run_plan(const std::vector<CaseDecision>& decisions, Backend& backend, const Options& opt,
                    std::ostream& log);

// The --list report: one line per case with its action and reason, and a summary line.
void list_plan(const std::vector<CaseDecision>& decisions, const std::string& plan_path, std::ostream& out);

}  // namespace dmaprobe
