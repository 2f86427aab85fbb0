#include "nvbjson.h"

#include <algorithm>
#include <cstdio>
#include <map>

#include "dmasim/core/units.h"

namespace dmaprobe {

using dmasim::core::JsonWriter;
using dmasim::core::ResultRow;

namespace {

// nvbandwidth writes matrix cells as strings in the stream's default format (6 significant
// digits), "N/A" where a pair was not measured; keep that, so that its readers parse ours.
std::string cell(double v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.6g", v);
    return buf;
}

std::vector<std::string> variant_parts(const std::string& variant) {
    std::vector<std::string> parts;
    std::size_t pos = 0;
    while (pos <= variant.size() && !variant.empty()) {
        const std::size_t semi = std::min(variant.find(';', pos), variant.size());
        parts.push_back(variant.substr(pos, semi - pos));
        pos = semi + 1;
    }
    return parts;
}

std::string gpu_display(const Metadata& m, int index) {
    for (const auto& g : m.gpus) {
        if (g.index == index) return std::to_string(index) + ": " + g.name + " (" + g.pci_bus_id + ")";
    }
    return std::to_string(index) + ": unknown";
}

// The GPUs a row involves: the source (or only) GPU, and the destination of a peer copy.
struct RowDevices {
    int gpu = 0;
    int peer_dst = -1;
};

RowDevices devices_of(const MeasurementSpec* spec, const Metadata& m) {
    RowDevices d;
    d.gpu = spec != nullptr ? spec->src_device : m.device;
    if (spec != nullptr && spec->strategy == Strategy::peer) d.peer_dst = resolve_peer_destination(*spec, m.gpu_count);
    return d;
}

// nvbandwidth's picture of a transfer: CPU(row) and GPU(column) for host transfers, GPU(row)
// and GPU(column) for peer copies. One cell holds the row's value; the others are "N/A".
void matrix(JsonWriter& w, const std::string& key, const RowDevices& d, int columns, double value) {
    const bool peer = d.peer_dst >= 0;
    const int rows = peer ? columns : 1;
    w.begin_array(key);
    for (int i = 0; i < rows; ++i) {
        w.begin_array();
        for (int j = 0; j < columns; ++j) {
            const bool here = peer ? (i == d.gpu && j == d.peer_dst) : j == d.gpu;
            w.value("", here ? cell(value) : std::string("N/A"));
        }
        w.end_array();
    }
    w.end_array();
}

std::string arrow(const ResultRow& r, bool peer) {
    if (peer) return r.direction == "both" ? "GPU(row) <-> GPU(column)" : "GPU(row) -> GPU(column)";
    if (r.direction == "d2h") return "CPU(row) <- GPU(column)";
    if (r.direction == "both") return "CPU(row) <-> GPU(column)";
    return "CPU(row) -> GPU(column)";
}

void testcase(JsonWriter& w, const ResultRow& r, const MeasurementSpec* spec, const Metadata& m) {
    const RowDevices d = devices_of(spec, m);
    const int columns = std::max({m.gpu_count, d.gpu + 1, d.peer_dst + 1, 1});
    const bool peer = d.peer_dst >= 0;
    const bool latency = is_latency_row(r);
    const std::string size = dmasim::core::to_string(dmasim::core::Bytes{r.size_bytes});

    w.begin_object();
    w.value("name", testcase_name(r));
    const bool ok = r.status == "ok";
    w.value("status", ok ? "Passed" : r.status == "skipped" ? "Skipped" : "Error");
    if (r.status == "skipped") w.value("reason", r.note);
    if (!ok && r.status != "skipped") w.value("error", r.note);
    if (ok) {
        const std::string what = r.strategy + " " + arrow(r, peer) + (latency ? " latency (us)" : " bandwidth (GB/s)") +
                                 ", " + size + (r.directions == 2 ? " each way" : "") +
                                 (r.variant.empty() ? std::string() : ", " + r.variant) + ", median of " +
                                 std::to_string(r.repetitions);
        const double v = latency ? r.time_us : r.gbps();
        w.value(latency ? "latency_description" : "bandwidth_description", what);
        matrix(w, latency ? "latency_matrix" : "bandwidth_matrix", d, columns, v);
        // Over the measured cells, as nvbandwidth's verbose output; one cell here.
        w.value("sum", v);
        w.value("min", v);
        w.value("max", v);
        w.value("average", v);
    }
    w.value("scenario", r.scenario);
    w.value("strategy", r.strategy);
    w.value("direction", r.direction);
    w.value("directions", r.directions);
    w.value("size_bytes", static_cast<std::uint64_t>(r.size_bytes));
    w.value("variant", r.variant);
    w.value("repetitions", r.repetitions);
    w.begin_object("time_us");
    w.value("median", r.time_us);
    w.value("p10", r.p10_us);
    w.value("p90", r.p90_us);
    w.value("min", r.min_us);
    w.value("max", r.max_us);
    w.value("cv", r.cv);
    if (!r.samples_us.empty()) {
        w.begin_array("samples");
        for (const double t : r.samples_us) w.value("", t);
        w.end_array();
    }
    w.end_object();
    w.value("gbps", r.gbps());
    w.begin_object("units");
    w.value("time", "us");
    w.value("bandwidth", "GB/s (1e9 bytes/s, all directions together)");
    w.value("size", "bytes per direction");
    w.end_object();
    w.begin_array("devices");
    if (!peer) w.value("", "CPU");
    w.value("", "GPU " + gpu_display(m, d.gpu));
    if (peer) w.value("", "GPU " + gpu_display(m, d.peer_dst));
    w.end_array();
    w.value("note", r.note);
    w.end_object();
}

}  // namespace

std::string testcase_name(const ResultRow& r) {
    std::string name = r.scenario + "/" + r.strategy + "/" + r.direction + "/" + std::to_string(r.size_bytes);
    if (!r.variant.empty()) name += "/" + r.variant;
    return name;
}

bool is_latency_row(const ResultRow& r) {
    if (r.strategy == "periodic") return true;
    for (const auto& part : variant_parts(r.variant)) {
        if (part.rfind("setup=", 0) == 0) return true;
        if (r.strategy == "async_overlap" && part == "kernel") return true;
    }
    return false;
}

std::string nvbandwidth_json(const std::vector<ResultRow>& rows, const std::vector<std::size_t>& row_case,
                             const std::vector<CaseDecision>& decisions, const Metadata& m) {
    std::map<std::size_t, const MeasurementSpec*> spec_of;
    for (const auto& d : decisions) spec_of[d.spec.index] = &d.spec;

    JsonWriter w;
    w.begin_object();
    w.begin_object("nvbandwidth");
    w.value("tool", "dmaprobe");
    w.value("version", m.tool_version);
    w.value("git_version", m.commit);
    w.value("Hostname", m.hostname);
    w.value("date_utc", m.date_utc);
    w.value("CUDA Runtime Version", m.runtime_version);
    w.value("CUDA Driver Version", m.driver_version);
    w.value("Driver Version", m.system.nvidia_driver);
    w.begin_array("GPU Device list");
    for (const auto& g : m.gpus) w.value("", gpu_display(m, g.index) + ": (" + m.hostname + ")");
    w.end_array();
    w.value("measured_device", m.device);
    if (!m.notes.empty()) {
        std::string joined;
        for (const auto& n : m.notes) joined += (joined.empty() ? "" : "; ") + n;
        w.value("warning", joined);
    }
    w.begin_array("testcases");
    for (std::size_t i = 0; i < rows.size(); ++i) {
        const MeasurementSpec* spec = nullptr;
        if (i < row_case.size()) {
            const auto it = spec_of.find(row_case[i]);
            if (it != spec_of.end()) spec = it->second;
        }
        testcase(w, rows[i], spec, m);
    }
    w.end_array();
    w.end_object();
    w.end_object();
    return w.str();
}

}  // namespace dmaprobe
