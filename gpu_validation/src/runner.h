// Runs the decided cases of a plan on a Backend (the CUDA one, or a fake in tests) and
// collects the rows; prints --list. Plain C++.
#pragma once

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
    std::vector<dmasim::core::ResultRow> rows;
    std::size_t run = 0;       // cases measured
    std::size_t skipped = 0;   // cases written as status=skipped
    std::size_t filtered = 0;  // cases left out by --only / --max-size
    double seconds = 0;
};

// Measures every runnable case in plan order; skipped cases become skipped rows. Progress lines
// go to `log` unless opt.quiet. An exception from the backend is rethrown with the case named.
RunSummary run_plan(const std::vector<CaseDecision>& decisions, Backend& backend, const Options& opt,
                    std::ostream& log);

// The --list report: one line per case with its action and reason, and a summary line.
void list_plan(const std::vector<CaseDecision>& decisions, const std::string& plan_path, std::ostream& out);

}  // namespace dmaprobe
