#include "metadata.h"

#include <cstdlib>

#include "dmasim/core/results.h"
#include "stats.h"

namespace dmaprobe {

using dmasim::core::JsonWriter;

namespace {

void int_or_unknown(JsonWriter& w, const std::string& key, int v) {
    if (v > 0) {
        w.value(key, v);
    } else {
        w.value(key, "unknown");
    }
}

void link_fields(JsonWriter& w, const PcieLink& l) {
    w.value("source", l.source);
    int_or_unknown(w, "gen_current", l.gen_current);
    int_or_unknown(w, "width_current", l.width_current);
    int_or_unknown(w, "gen_max", l.gen_max);
    int_or_unknown(w, "width_max", l.width_max);
    w.value("speed_current", l.speed_current.empty() ? std::string("unknown") : l.speed_current);
    w.value("speed_max", l.speed_max.empty() ? std::string("unknown") : l.speed_max);
}

void gpu_object(JsonWriter& w, const std::string& key, const GpuInfo& g) {
    w.begin_object(key);
    w.value("index", g.index);
    w.value("name", g.name);
    w.value("pci_bus_id", g.pci_bus_id);
    w.value("uuid", g.uuid);
    w.value("compute_capability", std::to_string(g.cc_major) + "." + std::to_string(g.cc_minor));
    w.value("sm_count", g.sm_count);
    w.value("memory_bytes", static_cast<std::uint64_t>(g.memory_bytes));
    w.value("clock_khz", g.clock_khz);
    w.value("memory_clock_khz", g.memory_clock_khz);
    w.value("memory_bus_width_bits", g.memory_bus_width_bits);
    w.value("l2_bytes", g.l2_bytes);
    w.value("async_engine_count", g.async_engine_count);
    w.value("can_map_host_memory", g.can_map_host_memory);
    w.value("unified_addressing", g.unified_addressing);
    if (g.numa_node >= 0) {
        w.value("numa_node", g.numa_node);
    } else {
        w.value("numa_node", "unknown");
    }
    w.begin_object("pcie");
    link_fields(w, g.link_under_load);
    w.value("read", "under load (copies running)");
    w.begin_object("idle");
    link_fields(w, g.link_idle);
    w.end_object();
    w.end_object();
    w.end_object();
}

void string_array(JsonWriter& w, const std::string& key, const std::vector<std::string>& v) {
    w.begin_array(key);
    for (const auto& x : v) w.value("", x);
    w.end_array();
}

void affinity_object(JsonWriter& w, const std::optional<CpuAffinity>& a) {
    w.begin_object("cpu_affinity");
    if (!a) {
        w.value("requested", false);
        w.value("applied", false);
        w.value("reason", "not attempted");
        w.end_object();
        return;
    }
    w.value("requested", a->requested);
    w.value("applied", a->applied);
    w.value("gpu_pci_bus_id", a->bus_id.empty() ? std::string("unknown") : a->bus_id);
    if (a->numa_node >= 0) {
        w.value("numa_node", a->numa_node);
    } else {
        w.value("numa_node", "unknown");
    }
    w.value("local_cpulist", a->local_cpulist.empty() ? std::string("unknown") : a->local_cpulist);
    w.value("allowed_before", a->allowed_before.empty() ? std::string("unknown") : a->allowed_before);
    w.value("cpus", a->applied ? format_cpulist(a->cpus) : std::string());
    w.value("cpu_count", static_cast<std::uint64_t>(a->applied ? a->cpus.size() : 0));
    w.value("threads_pinned", a->threads_pinned);
    w.value("reason", a->reason);
    w.end_object();
}

void system_fields(JsonWriter& w, const SystemFacts& f) {
    w.value("boot_id", f.boot_id);
    w.value("kernel_release", f.kernel_release);
    w.value("nvidia_driver", f.nvidia_driver);
    w.begin_object("transparent_hugepage");
    w.value("enabled", f.thp_enabled);
    w.value("defrag", f.thp_defrag);
    w.end_object();
    w.begin_object("iommu");
    w.value("mode", f.iommu.mode);
    string_array(w, "devices", f.iommu.devices);
    if (f.iommu.groups >= 0) {
        w.value("groups", f.iommu.groups);
    } else {
        w.value("groups", "unknown");
    }
    w.value("gpu_group", f.iommu.gpu_group);
    w.value("gpu_group_type", f.iommu.gpu_group_type);
    string_array(w, "cmdline", f.iommu.cmdline);
    w.end_object();
}

}  // namespace

const GpuInfo* measured_gpu(const Metadata& m) {
    for (const auto& g : m.gpus) {
        if (g.index == m.device) return &g;
    }
    return nullptr;
}

std::string cuda_version_string(int v) {
    if (v <= 0) return "unknown";
    return std::to_string(v / 1000) + "." + std::to_string((v % 1000) / 10);
}

void fill_host_metadata(Metadata& m) {
    m.hostname = host_name();
    m.date_utc = utc_now_iso8601();
    m.cpu_model = read_cpu_model();
    m.cpu_logical_cores = logical_cpu_count();
    m.host_memory_bytes = read_mem_total();
    if (const char* c = std::getenv("CUDA_DEVICE_MAX_CONNECTIONS")) m.max_connections = c;
}

std::string metadata_json(const Metadata& m, const Options& opt) {
    JsonWriter w;
    w.begin_object();
    w.value("tool", "dmaprobe");
    w.value("tool_version", m.tool_version);
    w.value("source", "hw");
    w.value("date_utc", m.date_utc);
    w.value("run_seconds", m.run_seconds);
    w.value("hostname", m.hostname);
    w.value("commit", m.commit);
    w.value("command_line", m.command_line);

    w.begin_object("plan");
    w.value("path", m.plan_path);
    w.value("cases", static_cast<std::uint64_t>(m.plan_cases));
    w.value("run", static_cast<std::uint64_t>(m.cases_run));
    w.value("skipped", static_cast<std::uint64_t>(m.cases_skipped));
    w.value("filtered", static_cast<std::uint64_t>(m.cases_filtered));
    w.end_object();
    w.value("rows", static_cast<std::uint64_t>(m.rows));
    // Case numbers as --list and error messages give them (1-based), in the order measured.
    w.begin_array("run_order");
    for (std::size_t i : m.run_order) w.value("", static_cast<std::uint64_t>(i + 1));
    w.end_array();

    w.begin_object("options");
    w.value("device", opt.measuring_device());
    if (opt.peer_device) w.value("peer_device", *opt.peer_device); else w.null_value("peer_device");
    if (opt.only) w.value("only", *opt.only); else w.null_value("only");
    if (opt.max_size) w.value("max_size", static_cast<std::uint64_t>(*opt.max_size)); else w.null_value("max_size");
    if (opt.repetitions) w.value("repetitions", *opt.repetitions); else w.null_value("repetitions");
    if (opt.warmup) w.value("warmup", *opt.warmup); else w.null_value("warmup");
    w.value("budget_ms", opt.budget_s * 1e3);
    w.value("fresh_host_data", opt.fresh_host_data);
    w.value("flush_host_data", opt.flush_host_data);
    w.value("order", to_string(opt.order));
    w.value("frame_wait", to_string(opt.frame_wait));
    w.value("host_stalls_s", opt.host_stalls_s);
    w.value("seed", m.seed);
    w.value("seed_from", m.seed_given ? "--seed" : "drawn at start");
    w.value("pin_cpus", opt.pin_cpus);
    if (opt.json) w.value("json", *opt.json); else w.null_value("json");
    w.end_object();

    w.begin_object("method");
    w.value("statistic", "median of timed repetitions; spread p10/p90/min/max and cv (sample stddev / mean)");
    w.value("case_order", opt.order == CaseOrder::shuffle
                              ? "runnable cases measured in a shuffled order (Fisher-Yates, mt19937_64, seed in "
                                "options.seed); rows written in plan order"
                              : "cases measured in plan order");
    w.value("cpu_pinning", opt.pin_cpus ? "every thread pinned to the measured GPU's local_cpulist (see cpu_affinity)"
                                        : "off (--no-pin)");
    w.value("min_repetitions", kMinRepetitions);
    w.value("host_clock", "std::chrono::steady_clock around blocking calls");
    w.value("gpu_clock", "CUDA events around asynchronous work");
    std::string data = opt.fresh_host_data
                           ? "counter-based splitmix64 pattern, non-zero words; host sources rewritten by the CPU before "
                             "every repetition (--fresh-host-data); device sources refilled per repetition; last "
                             "repetition verified in full"
                           : "counter-based splitmix64 pattern, non-zero words; host sources written by the CPU once per "
                             "case; device sources refilled and device destinations poisoned per repetition; last "
                             "repetition verified in full";
    if (opt.flush_host_data) data += "; host sources flushed from the CPU caches after every write (--flush-host-data)";
    w.value("data", data);
    w.end_object();

    w.begin_object("cuda");
    w.value("driver_version", cuda_version_string(m.driver_version));
    w.value("driver_version_raw", m.driver_version);
    w.value("runtime_version", cuda_version_string(m.runtime_version));
    w.value("runtime_version_raw", m.runtime_version);
    w.value("device_max_connections",
            m.max_connections.empty() ? std::string("unset (8)") : m.max_connections);
    w.end_object();

    w.begin_object("host");
    w.value("cpu_model", m.cpu_model);
    w.value("cpu_logical_cores", m.cpu_logical_cores);
    w.value("memory_bytes", static_cast<std::uint64_t>(m.host_memory_bytes));
    system_fields(w, m.system);
    w.end_object();
    affinity_object(w, m.cpu_affinity);
    if (m.host_stalls) {
        const StallReport& r = *m.host_stalls;
        const StallSummary st = summarize_stalls(r);
        w.begin_object("host_stalls");
        w.value("method", "before the cases: one core spinning on steady_clock for `seconds` (a stall is a gap between two reads over threshold_us), then a thread that sleeps until 200 us before each release every wake_period_us and spins to it for wake_seconds (wake_*: its lateness at the releases), copying copy_bytes with memcpy at each release (copy_*: its time)");
        w.value("file", "host-stalls.csv");
        w.value("seconds", r.seconds);
        w.value("threshold_us", r.threshold_us);
        w.value("reads", r.reads);
        w.value("count", st.count);
        w.value("per_second", st.per_second);
        w.value("stalled_ms", st.stalled_ms);
        w.value("p50_us", st.p50_us);
        w.value("p90_us", st.p90_us);
        w.value("p99_us", st.p99_us);
        w.value("max_us", st.max_us);
        w.value("listed", static_cast<std::uint64_t>(r.stalls.size()));
        if (r.steal_ms) w.value("steal_ms", *r.steal_ms); else w.value("steal_ms", "unknown");
        w.value("wake_period_us", r.wake_period_us);
        w.value("wake_seconds", r.wake_seconds);
        w.value("wakes", st.wakes);
        w.value("wake_p50_us", st.wake_p50_us);
        w.value("wake_p90_us", st.wake_p90_us);
        w.value("wake_p99_us", st.wake_p99_us);
        w.value("wake_max_us", st.wake_max_us);
        w.value("copy_bytes", r.copy_bytes);
        w.value("copy_p50_us", st.copy_p50_us);
        w.value("copy_p90_us", st.copy_p90_us);
        w.value("copy_p99_us", st.copy_p99_us);
        w.value("copy_max_us", st.copy_max_us);
        w.end_object();
    }

    w.value("gpu_count", m.gpu_count);
    w.value("device", m.device);
    const GpuInfo* measured = measured_gpu(m);
    if (measured != nullptr) {
        gpu_object(w, "gpu", *measured);
    } else {
        w.null_value("gpu");
    }
    w.begin_array("gpus");
    for (const auto& g : m.gpus) gpu_object(w, "", g);
    w.end_array();
    w.begin_array("peer_access");
    for (const auto& row : m.peer_access) {
        w.begin_array();
        for (bool b : row) w.value("", b);
        w.end_array();
    }
    w.end_array();

    if (m.calibration.done) {
        w.begin_object("kernel_calibration");
        w.value("timer", "%globaltimer spin, one block per SM");
        w.value("overhead_us", m.calibration.overhead_us);
        w.value("slope", m.calibration.slope);
        w.begin_array("points");
        for (const auto& [req, got] : m.calibration.points) {
            w.begin_object();
            w.value("requested_us", req);
            w.value("measured_us", got);
            w.end_object();
        }
        w.end_array();
        w.end_object();
    } else {
        w.null_value("kernel_calibration");
    }
    w.begin_array("notes");
    for (const auto& n : m.notes) w.value("", n);
    w.end_array();
    w.end_object();
    return w.str();
}

}  // namespace dmaprobe
