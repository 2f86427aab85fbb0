// dmaprobe: measures the cases of a flat plan (docs/plan.md) on this machine's GPU(s) and
// writes measured.csv (dmasim's results schema, source=hw) and metadata.json (and, with
// --json, an nvbandwidth-style JSON document).
// docs/harness.md is the manual.
#include <exception>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "cuda/cuda_backend.h"
#include "dmasim/core/error.h"
#include "dmasim/core/plan.h"
#include "dmasim/core/results.h"
#include "affinity.h"
#include "host_stalls.h"
#include "metadata.h"
#include "nvbjson.h"
#include "options.h"
#include "output.h"
#include "runner.h"
#include "spec.h"

#ifndef DMAPROBE_COMMIT
#define DMAPROBE_COMMIT "unknown"
#endif

int main(int argc, char** argv) {
    using namespace dmaprobe;
    Options opt;
    try {
        opt = parse_options(std::vector<std::string>(argv + 1, argv + argc));
    } catch (const UsageError& e) {
        std::cerr << "dmaprobe: " << e.what() << "\n(dmaprobe --help lists the options)\n";
        return 2;
    }
    if (opt.help) {
        std::cout << usage_text();
        return 0;
    }
    if (opt.version) {
        std::cout << "dmaprobe " << kVersion << " (commit " << DMAPROBE_COMMIT << ")\n";
        return 0;
    }
    opt.command_line = join_command_line(argc, argv);

    bool committing = false;
    try {
        const dmasim::core::Plan plan = dmasim::core::read_plan_file(opt.plan);
        const std::vector<CaseDecision> decisions = decide_all(plan, opt.plan, opt);
        if (opt.list) {
            list_plan(decisions, opt.plan, std::cout);
            return 0;
        }

        Metadata md;
        fill_host_metadata(md);  // date: when the run started
        auto backend = make_cuda_backend(opt, decisions);
        if (!opt.quiet) {
            const MachineInfo m = backend->machine_info();
            std::cerr << "dmaprobe: " << decisions.size() << " cases from " << opt.plan << " on GPU " << m.device
                      << " of " << m.device_count << " (PCIe link "
                      << (m.link_generation > 0 ? "Gen" + std::to_string(m.link_generation) : std::string("Gen?"))
                      << " x" << (m.link_lanes > 0 ? std::to_string(m.link_lanes) : std::string("?")) << ", "
                      << m.link_source << ")" << std::endl;
        }
        // Pin once the measuring GPU's context exists (the CUDA driver's helper threads start
        // with it, and the pinning must cover them) and before any buffer is allocated and
        // touched, so that first-touch places host buffers on the GPU's node too.
        std::string bus_id;
        {
            Metadata probe;  // the backend's GPU list, for the bus id; its notes are dropped
            backend->describe(probe);
            if (const GpuInfo* g = measured_gpu(probe)) bus_id = g->pci_bus_id;
        }
        md.cpu_affinity = pin_to_gpu_numa_node(kSysfsPciDevices, bus_id, opt.pin_cpus);
        md.system = read_system_facts("", bus_id);
        const CpuAffinity& pin = *md.cpu_affinity;
        if (pin.requested && !pin.applied) md.notes.push_back("CPU pinning not applied: " + pin.reason);
        if (!opt.quiet) {
            if (pin.applied) {
                std::cerr << "dmaprobe: pinned " << pin.threads_pinned << " threads to CPUs " << format_cpulist(pin.cpus)
                          << " (local to GPU " << pin.bus_id << ", NUMA node "
                          << (pin.numa_node >= 0 ? std::to_string(pin.numa_node) : std::string("unknown")) << ")"
                          << (pin.reason.empty() ? "" : "; " + pin.reason) << std::endl;
            } else {
                std::cerr << "dmaprobe: CPU pinning " << (pin.requested ? "not applied: " : "") << pin.reason
                          << std::endl;
            }
        }

        if (opt.host_stalls_s > 0) {
            // Before any case, so that no copy or kernel of ours is among what it catches.
            if (!opt.quiet) std::cerr << "dmaprobe: probing host stalls for 2 x " << opt.host_stalls_s << " s" << std::endl;
            md.host_stalls = measure_host_stalls(opt.host_stalls_s);
            if (!opt.quiet) {
                const StallSummary st = summarize_stalls(*md.host_stalls);
                std::cerr << "dmaprobe: host stalls over " << kStallThresholdUs << " us: " << st.count << " ("
                          << st.per_second << "/s), p50 " << st.p50_us << " us, p99 " << st.p99_us << " us, max "
                          << st.max_us << " us; steal "
                          << (md.host_stalls->steal_ms ? std::to_string(*md.host_stalls->steal_ms) + " ms" : std::string("unknown"))
                          << "; " << st.wakes << " wakes every " << kWakePeriodUs << " us late by p50 " << st.wake_p50_us
                          << " us, p99 " << st.wake_p99_us << " us, max " << st.wake_max_us << " us; their 4 MiB memcpy p50 "
                          << st.copy_p50_us << " us, p99 " << st.copy_p99_us << " us, max " << st.copy_max_us << " us" << std::endl;
            }
        }
        const RunSummary run = run_plan(decisions, *backend, opt, std::cerr);

        md.commit = opt.commit ? *opt.commit : std::string(DMAPROBE_COMMIT);
        md.command_line = opt.command_line;
        md.plan_path = opt.plan;
        md.plan_cases = decisions.size();
        md.cases_run = run.run;
        md.cases_skipped = run.skipped;
        md.cases_filtered = run.filtered;
        md.rows = run.rows.size();
        md.run_seconds = run.seconds;
        md.seed = run.seed;
        md.seed_given = opt.seed.has_value();
        md.run_order = run.run_order;
        backend->describe(md);

        std::ostringstream csv;
        dmasim::core::write_results_csv(csv, run.rows);
        std::vector<OutputFile> files = {{opt.out + "/measured.csv", csv.str()},
                                         {opt.out + "/metadata.json", metadata_json(md, opt)}};
        if (md.host_stalls) files.push_back({opt.out + "/host-stalls.csv", stalls_csv(*md.host_stalls)});
        if (opt.json) files.push_back({*opt.json, nvbandwidth_json(run.rows, run.row_case, decisions, md)});
        committing = true;
        const auto written = write_all_or_nothing(files);
        if (!opt.quiet) {
            std::cerr << "dmaprobe: " << run.run << " cases measured, " << run.skipped << " skipped, " << run.filtered
                      << " filtered out in " << static_cast<int>(run.seconds + 0.5) << " s; wrote";
            for (const auto& f : written) std::cerr << ' ' << f;
            std::cerr << std::endl;
        }
        return 0;
    } catch (const std::exception& e) {
        std::cerr << "dmaprobe: error: " << e.what() << std::endl;
        if (!opt.list && !committing) std::cerr << "dmaprobe: no results were written" << std::endl;
        return 1;
    }
}
