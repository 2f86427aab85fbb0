#include "dmasim/sim/trace.h"

#include <cmath>
#include <cstdio>

#include "dmasim/core/results.h"
#include "dmasim/sim/tlp.h"

namespace dmasim::sim {

namespace {

// Link-occupancy counters grow with the simulated time over the resolution, or with the TLPs
// once a window is shorter than one: a 1 GiB copy at 1 ns windows makes tens of millions, and
// the events and their JSON then take gigabytes, which looked like a hang. Past this many events
// (some 100 MB of JSON, what Perfetto opens without trouble) counters are dropped; spans (calls,
// copies, kernels) are few and all kept.
constexpr std::size_t kMaxEvents = 1'000'000;
// The process that marks where the counters stop; `dmasim run` looks for its name.
constexpr const char* kTruncated = "timeline truncated: link counters stop here (use a coarser --trace-resolution)";

std::string us(double ps) {
    char buf[48];
    std::snprintf(buf, sizeof buf, "%.6f", ps * 1e-6);
    return buf;
}
}  // namespace


int Tracer::pid_of(const std::string& process) {
    const auto it = pids_.find(process);
    if (it != pids_.end()) return it->second;
    const int pid = static_cast<int>(pids_.size()) + 1;
    pids_.emplace(process, pid);
    return pid;
}

int Tracer::track(const std::string& process, const std::string& thread) {
    const int pid = pid_of(process);
    const auto key = std::make_pair(pid, thread);
    const auto it = tids_.find(key);
    if (it != tids_.end()) return it->second;
    const int tid = static_cast<int>(thread_names_.size()) + 1;
    tids_.emplace(key, tid);
    thread_names_.emplace_back(pid, thread);
    return tid;
}

void Tracer::span(int track, const std::string& name, double start_ps, double end_ps, const std::string& args_json) {
    const int pid = thread_names_[static_cast<std::size_t>(track - 1)].first;
    // Callers give case times (tlp.h, now_ps); the timeline runs on across the process's cases.
    events_.push_back(
        Event{'X', pid, track, start_ps + case_origin_ps(), std::max(0.0, end_ps - start_ps), name, args_json});
}

bool Tracer::truncated() const { return pids_.count(kTruncated) > 0; }

void Tracer::counter(const std::string& process, const std::string& name, double case_t_ps, double value) {
    const double t_ps = case_t_ps + case_origin_ps();
    if (events_.size() >= kMaxEvents) {
        static const std::string truncated(kTruncated);
        if (pids_.count(truncated) == 0) events_.push_back(Event{'i', pid_of(truncated), 0, t_ps, 0.0, "counters stop", ""});
        return;
    }
    char buf[64];
    std::snprintf(buf, sizeof buf, "{\"%s\": %.3f}", "percent", value);
    events_.push_back(Event{'C', pid_of(process), 0, t_ps, 0.0, name, buf});
}

std::string Tracer::json() const {
    std::string out = "{\"displayTimeUnit\": \"ns\", \"traceEvents\": [\n";
    bool first = true;
    auto sep = [&] {
        if (!first) out += ",\n";
        first = false;
    };
    for (const auto& [name, pid] : pids_) {
        sep();
        out += "{\"ph\": \"M\", \"name\": \"process_name\", \"pid\": " + std::to_string(pid) +
               ", \"args\": {\"name\": \"" + core::json_escape(name) + "\"}}";
    }
    for (std::size_t i = 0; i < thread_names_.size(); ++i) {
        sep();
        out += "{\"ph\": \"M\", \"name\": \"thread_name\", \"pid\": " + std::to_string(thread_names_[i].first) +
               ", \"tid\": " + std::to_string(i + 1) + ", \"args\": {\"name\": \"" +
               core::json_escape(thread_names_[i].second) + "\"}}";
    }
    // Appended piece by piece: a trace near the event bound is some 100 MB, and temporaries per
    // piece doubled the time it took to write.
    out.reserve(out.size() + events_.size() * 112);
    for (const auto& e : events_) {
        sep();
        out += "{\"ph\": \"";
        out += e.phase;
        out += "\", \"name\": \"";
        out += core::json_escape(e.name);
        out += "\", \"pid\": ";
        out += std::to_string(e.pid);
        out += ", \"tid\": ";
        out += std::to_string(e.tid);
        out += ", \"ts\": ";
        out += us(e.ts_ps);
        if (e.phase == 'X') {
            out += ", \"dur\": ";
            out += us(e.dur_ps);
        }
        if (e.phase == 'i') out += ", \"s\": \"g\"";  // a line across every track
        if (!e.args.empty()) {
            out += ", \"args\": ";
            out += e.args;
        }
        out += '}';
    }
    out += "\n]}\n";
    return out;
}

void OccupancyProbe::busy(const std::string& process, double start_ps, double duration_ps) {
    Tracer* t = Tracer::active();
    if (t == nullptr) return;
    const double res = t->resolution_ps();
    const auto bucket = static_cast<std::int64_t>(std::floor(start_ps / res));
    if (bucket != bucket_) {
        if (bucket_ >= 0) {
            t->counter(process, "busy", static_cast<double>(bucket_) * res, std::min(100.0, 100.0 * busy_ps_ / res));
            // An idle stretch reads as zero until the next busy window.
            if (bucket > bucket_ + 1) t->counter(process, "busy", static_cast<double>(bucket_ + 1) * res, 0.0);
        }
        bucket_ = bucket;
        busy_ps_ = 0.0;
    }
    busy_ps_ += duration_ps;
}

void OccupancyProbe::flush(const std::string& process) {
    Tracer* t = Tracer::active();
    if (t == nullptr || bucket_ < 0) return;
    const double res = t->resolution_ps();
    t->counter(process, "busy", static_cast<double>(bucket_) * res, std::min(100.0, 100.0 * busy_ps_ / res));
    t->counter(process, "busy", static_cast<double>(bucket_ + 1) * res, 0.0);
    bucket_ = -1;
    busy_ps_ = 0.0;
}

}  // namespace dmasim::sim
