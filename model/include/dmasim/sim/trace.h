// A timeline of the simulated run in the Chrome trace event format (JSON), which Perfetto
// (ui.perfetto.dev) and chrome://tracing open: one process per component (CPU, each GPU, each
// link), one track per thread of activity (a stream, a copy engine, the compute engine), spans
// for what happened and counters for link occupancy.
//
// Modules report to the active tracer, if any; with none, tracing costs one pointer test.
// Spans are coarse (API calls, copies, kernels, CPU copies); per-TLP activity is folded into a
// link-occupancy counter sampled every `resolution`.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace dmasim::sim {

class Tracer {
public:
    explicit Tracer(double resolution_ps = 1e6) : resolution_ps_(resolution_ps) {}

    // Inline: links ask on every packet whether a timeline is being recorded.
    static Tracer* active() { return active_; }
    static void set_active(Tracer* tracer) { active_ = tracer; }

    // A track: `process` groups tracks ("gpu0"), `thread` names one ("ce0", "stream 1").
    int track(const std::string& process, const std::string& thread);
    void span(int track, const std::string& name, double start_ps, double end_ps, const std::string& args_json = {});
    void counter(const std::string& process, const std::string& name, double t_ps, double value);
    double resolution_ps() const { return resolution_ps_; }
    std::size_t events() const { return events_.size(); }
    // True once the event bound was reached and link counters stopped being recorded.
    bool truncated() const;

    std::string json() const;

private:
    static inline Tracer* active_ = nullptr;
    struct Event {
        char phase;  // 'X' span, 'C' counter
        int pid;
        int tid;
        double ts_ps;
        double dur_ps;
        std::string name;
        std::string args;  // JSON object text, may be empty
    };
    int pid_of(const std::string& process);

    double resolution_ps_;
    std::map<std::string, int> pids_;
    std::map<std::pair<int, std::string>, int> tids_;
    std::vector<std::pair<int, std::string>> thread_names_;  // by tid index: (pid, name)
    std::vector<Event> events_;
};

// Folds a link's per-packet busy time into an occupancy counter (percent per resolution window).
class OccupancyProbe {
public:
    void busy(const std::string& process, double start_ps, double duration_ps);
    void flush(const std::string& process);

private:
    std::int64_t bucket_ = -1;
    double busy_ps_ = 0.0;
};

}  // namespace dmasim::sim
