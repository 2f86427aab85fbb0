// Cases of a sweep on worker processes (dmasim/app/parallel.h, docs/scaling.md).
#include "dmasim/app/parallel.h"

#include <fmt/format.h>
#include <poll.h>
#include <sched.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <iostream>
#include <map>
#include <memory>
#include <numeric>
#include <sstream>
#include <stdexcept>

#include "dmasim/app/processes.h"
#include "dmasim/core/error.h"
#include "dmasim/core/units.h"
#include "dmasim/pcie/wire.h"
#include "dmasim/sim/host_band.h"
#include "dmasim/sim/simulator.h"
#include "dmasim/topology/platform.h"
#include "dmasim/topology/platform_file.h"

namespace dmasim::app {

int default_jobs() {
    cpu_set_t set;
    CPU_ZERO(&set);
    if (::sched_getaffinity(0, sizeof set, &set) != 0) return 1;
    return std::clamp(CPU_COUNT(&set), 1, kMaxJobs);
}

namespace {

std::string human_size(std::uint64_t b) { return core::to_string(core::Bytes{b}); }

std::string human_time(double us) {
    if (us >= 1e6) return fmt::format("{:.3f} s", us * 1e-6);
    if (us >= 1e3) return fmt::format("{:.3f} ms", us * 1e-3);
    return fmt::format("{:.3f} us", us);
}

// A case's fixed part, in bytes of transfer: elaboration-free work such as configuring the
// model, and the many small cases of a sweep, are not free.
constexpr double kCaseOverheadBytes = 1 << 20;

}  // namespace

Workload make_workload(const std::vector<config::Scenario>& scenarios) {
    Workload w;
    w.scenarios = &scenarios;
    std::vector<std::size_t> platform_of(scenarios.size());
    for (std::size_t si = 0; si < scenarios.size(); ++si) {
        const std::string platform = config::resolve_platform(scenarios[si].platform, scenarios[si].file);
        auto it = std::find(w.platforms.begin(), w.platforms.end(), platform);
        platform_of[si] = static_cast<std::size_t>(it - w.platforms.begin());
        if (it == w.platforms.end()) w.platforms.push_back(platform);
    }
    std::vector<std::size_t> order;  // scenarios platform by platform
    for (std::size_t pi = 0; pi < w.platforms.size(); ++pi) {
        for (std::size_t si = 0; si < scenarios.size(); ++si) {
            if (platform_of[si] == pi) order.push_back(si);
        }
    }
    for (const std::size_t si : order) {
        const config::Scenario& s = scenarios[si];
        const std::size_t pi = platform_of[si];
        if (!s.flows.empty()) {
            WorkCase c;
            c.scenario = si;
            c.platform = pi;
            c.flows = true;
            c.cost = kCaseOverheadBytes;
            for (const auto& f : s.flows) c.cost += static_cast<double>(f.size) * (f.direction == "both" ? 2.0 : 1.0);
            c.label = s.name + " flows";
            w.cases.push_back(std::move(c));
            continue;
        }
        for (const auto& strategy : s.strategies) {
            for (const auto& direction : s.directions) {
                const bool periodic = strategy == "periodic";
                const std::vector<std::uint64_t> sizes =
                    periodic ? std::vector<std::uint64_t>{s.options.periodic.size.value} : s.sizes;
                for (const auto size : sizes) {
                    WorkCase c;
                    c.scenario = si;
                    c.platform = pi;
                    c.strategy = strategy;
                    c.direction = direction;
                    c.size = size;
                    double bytes = static_cast<double>(size) * (direction == "both" ? 2.0 : 1.0);
                    if (periodic) bytes *= static_cast<double>(std::max<std::int64_t>(1, s.options.periodic.count));
                    c.cost = kCaseOverheadBytes + (sim::strategy_modelled(strategy) ? bytes : 0.0);
                    c.label = s.name + " " + strategy + " " + direction + " " + human_size(size);
                    w.cases.push_back(std::move(c));
                }
            }
        }
    }
    return w;
}

std::string links_csv_header() {
    return "scenario_row,link,tlps,mem_writes,mem_reads,completions,payload_bytes,tlp_overhead_bytes,dllps,"
           "ack_dllps,updatefc_dllps,dllp_bytes,busy_fraction,credit_stall_fraction,raw_gbps\n";
}

namespace {

// ---------------------------------------------------------------------------------------------
// One case on an elaborated model.

// The PCIe link of the platform's first GPU, as the rows' note names it: on a platform file it
// can differ from the scenario's `link` section.
std::string gpu_link_description(const topology::Platform& p, const config::LinkParams& fallback) {
    const auto gpus = topology::gpus(p);
    const config::LinkParams* own = gpus.empty() ? nullptr : topology::device_pcie_link(p, gpus.front());
    return pcie::describe_link(own != nullptr ? *own : fallback);
}

// What the links' busy fractions are over: the simulated time their statistics cover.
double links_interval(const sim::CaseResult& res) { return res.links_interval_ps > 0 ? res.links_interval_ps : res.time_ps; }

std::string link_lines(const std::string& key, const std::vector<sim::LinkReport>& links, double time_ps) {
    std::string out;
    for (const auto& l : links) {
        const auto& s = l.stats;
        out += fmt::format("{},{},{},{},{},{},{},{},{},{},{},{},{:.4f},{:.4f},{:.3f}\n", key, l.label, s.tlps,
                           s.tlps_by_kind[0], s.tlps_by_kind[1], s.tlps_by_kind[2], s.payload_bytes,
                           s.tlp_overhead_bytes, s.dllps, s.ack_dllps, s.updatefc_dllps, s.dllp_bytes,
                           time_ps > 0 ? s.busy_ps / time_ps : 0.0, time_ps > 0 ? s.credit_stall_ps / time_ps : 0.0,
                           l.gbps_raw);
    }
    return out;
}

std::string explain_lines(const std::vector<sim::LinkReport>& links, double time_ps) {
    std::string out;
    for (const auto& l : links) {
        const auto& s = l.stats;
        const double busy = time_ps > 0 ? s.busy_ps / time_ps : 0.0;
        const double wire = static_cast<double>(s.payload_bytes + s.tlp_overhead_bytes + s.dllp_bytes);
        out += fmt::format(
            "    {:<10} {:5.1f}% busy: {:>9} writes, {:>8} read requests, {:>9} completions; wire bytes: "
            "{:5.1f}% payload, {:4.1f}% TLP overhead, {:4.1f}% DLLPs ({} Ack, {} UpdateFC)\n",
            l.label, busy * 100, s.tlps_by_kind[0], s.tlps_by_kind[1], s.tlps_by_kind[2],
            wire > 0 ? 100.0 * s.payload_bytes / wire : 0.0, wire > 0 ? 100.0 * s.tlp_overhead_bytes / wire : 0.0,
            wire > 0 ? 100.0 * s.dllp_bytes / wire : 0.0, s.ack_dllps, s.updatefc_dllps);
    }
    return out;
}

// What a worker keeps per scenario: its own load of the platform (its link settings).
struct ScenarioLinks {
    std::unique_ptr<topology::Platform> platform;
    std::string note;
};

class CaseRunner {
public:
    CaseRunner(const Workload& w, bool explain) : w_(&w), explain_(explain) {}

    // Another step's workload, with the same platforms: the simulator stays elaborated, the
    // scenarios' own platform copies (their link settings) are made again.
    void rebind(const Workload& w) {
        w_ = &w;
        links_.clear();
    }

    CaseOutput run(const WorkCase& c) {
        const config::Scenario& s = (*w_->scenarios)[c.scenario];
        if (!sim_) {
            // Elaborated with the parameters of the platform's first scenario, as dmasim always
            // did; each case then applies its own.
            const config::Scenario* first = &s;
            for (const auto& other : *w_->scenarios) {
                if (config::resolve_platform(other.platform, other.file) == w_->platforms[c.platform]) {
                    first = &other;
                    break;
                }
            }
            sim_ = std::make_unique<sim::Simulator>(topology::load_platform(*first), first->params);
        }
        ScenarioLinks& links = links_[c.scenario];
        if (!links.platform) {
            links.platform = std::make_unique<topology::Platform>(topology::load_platform(s));
            links.note = gpu_link_description(*links.platform, s.params.link);
        }
        CaseOutput out;
        if (c.flows) {
            // Contention: all flows in one simulation, a row each.
            const sim::CaseResult res = sim_->run_flows(s.params, s.flows, links.platform.get(), s.name + ": flows", s.file);
            for (std::size_t i = 0; i < s.flows.size(); ++i) {
                core::ResultRow r;
                r.scenario = s.name;
                r.strategy = s.flows[i].strategy;
                r.direction = s.flows[i].direction;
                r.size_bytes = s.flows[i].size;
                r.source = "sim";
                r.calibration = s.calibration;
                r.variant = res.rows[i].variant;
                r.time_us = r.p10_us = r.p90_us = r.min_us = r.max_us = res.rows[i].time_ps * 1e-6;
                r.note = res.rows[i].note;
                out.rows.push_back(r);
            }
            out.links_csv = link_lines(s.name + "/flows", res.links, links_interval(res));
            return finish(c, std::move(out));
        }
        core::ResultRow base;
        base.scenario = s.name;
        base.strategy = c.strategy;
        base.direction = c.direction;
        base.directions = c.direction == "both" ? 2 : 1;
        base.size_bytes = c.size;
        base.source = "sim";
        base.calibration = s.calibration;
        if (!sim::strategy_modelled(c.strategy)) {
            base.status = "skipped";
            base.note = std::string("strategy not modelled in this version (modelled: ") + sim::modelled_strategies() + ")";
            out.rows.push_back(base);
            return finish(c, std::move(out));
        }
        const sim::BandedCase banded = sim::run_with_host_band(
            *sim_, s.params,
            sim::CaseSpec{c.strategy, c.direction, c.size, s.options,
                          s.name + ": " + c.strategy + " " + c.direction + " " + human_size(c.size), links.platform.get(),
                          s.file});
        const sim::CaseResult& res = banded.result;
        // Which rows' p10/p90 are the machines' band, and how it was found (docs/model.md).
        const std::string band_note =
            banded.method == sim::BandMethod::kNone
                ? std::string()
                : fmt::format("band of {} machines ({})", banded.machines, sim::to_string(banded.method));
        core::ResultRow first_row;
        for (std::size_t i = 0; i < res.rows.size(); ++i) {
            const auto& rr = res.rows[i];
            core::ResultRow r = base;
            r.variant = rr.variant;
            r.directions = rr.directions;
            r.time_us = rr.time_ps * 1e-6;
            r.p10_us = rr.p10_ps * 1e-6;
            r.p90_us = rr.p90_ps * 1e-6;
            r.min_us = rr.min_ps * 1e-6;
            r.max_us = rr.max_ps * 1e-6;
            r.status = rr.status;
            if (rr.host_bytes) {
                r.host_read_bytes = static_cast<std::int64_t>(rr.host_read_bytes);
                r.host_written_bytes = static_cast<std::int64_t>(rr.host_written_bytes);
            }
            r.note = rr.status == "ok" ? links.note + (rr.note.empty() ? "" : "; " + rr.note) : rr.note;
            if (!band_note.empty() && banded.banded.at(i)) r.note += "; " + band_note;
            if (!banded.model_error.empty() && banded.model_error.at(i) > 0.0) {
                r.note += fmt::format("; widened by the model's error (model_error sigma {:.3f})", banded.model_error[i]);
            }
            out.rows.push_back(r);
            if (i == 0) first_row = r;
        }
        // An overlap row's worth is its speed-up over the same work on one stream.
        const auto serial = std::find_if(out.rows.begin(), out.rows.end(),
                                         [](const core::ResultRow& r) { return r.variant == "serial" && r.status == "ok"; });
        if (c.strategy == "async_overlap" && serial != out.rows.end()) {
            for (auto& r : out.rows) {
                if (r.variant != "serial" && r.status == "ok" && r.time_us > 0) r.speedup = serial->time_us / r.time_us;
            }
        }
        const std::string key = s.name + "/" + c.strategy + "/" + c.direction + "/" + std::to_string(c.size);
        out.links_csv = link_lines(key, res.links, links_interval(res));
        if (explain_) {
            out.explain = fmt::format("{} {} {} {}: {} = {:.2f} GB/s\n", s.name, c.strategy, c.direction,
                                      human_size(c.size), human_time(first_row.time_us), first_row.gbps()) +
                          explain_lines(res.links, links_interval(res));
        }
        return finish(c, std::move(out));
    }

private:
    // The rows as dmasim has always written them (CaseOutput).
    CaseOutput finish(const WorkCase& c, CaseOutput out) const {
        const bool last = c.platform + 1 == w_->platforms.size();
        if (!last) {
            std::string csv = core::results_csv_header() + '\n';
            for (const auto& r : out.rows) csv += core::format_result_row(r) + '\n';
            std::istringstream in(csv);
            out.rows = core::read_results_csv(in, "the rows of " + c.label);
        }
        for (const auto& r : out.rows) out.rows_csv += core::format_result_row(r) + '\n';
        return out;
    }

    const Workload* w_;
    bool explain_;
    std::unique_ptr<sim::Simulator> sim_;
    std::map<std::size_t, ScenarioLinks> links_;
};

void put_rows(ByteWriter& w, const std::vector<core::ResultRow>& rows) {
    w.u64(rows.size());
    for (const auto& r : rows) {
        w.str(r.scenario).str(r.strategy).str(r.direction).u64(static_cast<std::uint64_t>(r.directions)).u64(r.size_bytes);
        w.f64(r.time_us).str(r.source).u64(static_cast<std::uint64_t>(r.repetitions));
        w.f64(r.p10_us).f64(r.p90_us).f64(r.min_us).f64(r.max_us).str(r.variant).str(r.status).str(r.note).f64(r.cv);
        w.str(r.calibration).f64(r.speedup);
        // -1 (empty) travels as 2^64 - 1.
        w.u64(static_cast<std::uint64_t>(r.host_read_bytes)).u64(static_cast<std::uint64_t>(r.host_written_bytes));
    }
}

std::vector<core::ResultRow> get_rows(ByteReader& in) {
    std::vector<core::ResultRow> rows(static_cast<std::size_t>(in.u64()));
    for (auto& r : rows) {
        r.scenario = in.str();
        r.strategy = in.str();
        r.direction = in.str();
        r.directions = static_cast<int>(in.u64());
        r.size_bytes = in.u64();
        r.time_us = in.f64();
        r.source = in.str();
        r.repetitions = static_cast<int>(in.u64());
        r.p10_us = in.f64();
        r.p90_us = in.f64();
        r.min_us = in.f64();
        r.max_us = in.f64();
        r.variant = in.str();
        r.status = in.str();
        r.note = in.str();
        r.cv = in.f64();
        r.calibration = in.str();
        r.speedup = in.f64();
        r.host_read_bytes = static_cast<std::int64_t>(in.u64());
        r.host_written_bytes = static_cast<std::int64_t>(in.u64());
    }
    return rows;
}

void put_output(ByteWriter& w, const CaseOutput& o) {
    put_rows(w, o.rows);
    w.str(o.rows_csv).str(o.links_csv).str(o.explain);
}

CaseOutput get_output(ByteReader& in) {
    CaseOutput o;
    o.rows = get_rows(in);
    o.rows_csv = in.str();
    o.links_csv = in.str();
    o.explain = in.str();
    return o;
}

// ---------------------------------------------------------------------------------------------
// Talking to a child: a socket pair, messages framed by their length.

constexpr std::uint64_t kStop = ~std::uint64_t{0};

bool send_all(int fd, const char* data, std::size_t n) {
    while (n > 0) {
        // MSG_NOSIGNAL: a child that died must show as an error here, not kill this process
        // with SIGPIPE.
        const ssize_t k = ::send(fd, data, n, MSG_NOSIGNAL);
        if (k < 0) {
            if (errno == EINTR) continue;
            return false;
        }
        data += k;
        n -= static_cast<std::size_t>(k);
    }
    return true;
}

bool recv_all(int fd, char* data, std::size_t n) {
    while (n > 0) {
        const ssize_t k = ::read(fd, data, n);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) return false;
        data += k;
        n -= static_cast<std::size_t>(k);
    }
    return true;
}

bool send_frame(int fd, const std::string& payload) {
    const std::uint64_t n = payload.size();
    std::string frame(reinterpret_cast<const char*>(&n), sizeof n);
    frame += payload;
    return send_all(fd, frame.data(), frame.size());
}

// One frame, read whole (a worker waiting for its parent's next message).
bool recv_frame(int fd, std::string& payload) {
    std::uint64_t n = 0;
    if (!recv_all(fd, reinterpret_cast<char*>(&n), sizeof n)) return false;
    payload.assign(n, '\0');
    return n == 0 || recv_all(fd, payload.data(), n);
}

// A complete frame at the front of `buf`: moved to `payload`.
bool take_frame(std::string& buf, std::string& payload) {
    std::uint64_t n = 0;
    if (buf.size() < sizeof n) return false;
    std::memcpy(&n, buf.data(), sizeof n);
    if (buf.size() - sizeof n < n) return false;
    payload = buf.substr(sizeof n, n);
    buf.erase(0, sizeof n + n);
    return true;
}

// What a child sends: a result or the error that ended it.
enum class Kind : std::uint64_t { kResult = 1, kFailure = 2, kInputFailure = 3 };

std::string failure_payload(const std::exception& e) {
    const bool input = dynamic_cast<const core::InputError*>(&e) != nullptr;
    return ByteWriter{}.u64(static_cast<std::uint64_t>(input ? Kind::kInputFailure : Kind::kFailure)).u64(0).str(e.what()).bytes();
}

// A child's bad-input error, thrown again here with the child's message as it was.
class RelayedInputError : public core::InputError {
public:
    explicit RelayedInputError(std::string message) : core::InputError("", "", message), message_(std::move(message)) {}
    const char* what() const noexcept override { return message_.c_str(); }

private:
    std::string message_;
};

// Thrown in the parent for a child's error: keeps the child's message and whether it was bad input.
[[noreturn]] void rethrow_child_failure(Kind kind, const std::string& message) {
    if (kind == Kind::kInputFailure) throw RelayedInputError(message);
    throw std::runtime_error(message);
}

struct Child {
    pid_t pid = -1;
    int fd = -1;
    std::size_t platform = 0;
    long current = -1;  // the position it works on, -1: none
    std::string inbuf;
};

// Every child still running is ended when the pool is left (an error, a signal's unwinding).
class ChildSet {
public:
    ChildSet() = default;
    ChildSet(const ChildSet&) = delete;
    ChildSet& operator=(const ChildSet&) = delete;
    ~ChildSet() {
        for (auto& c : children) {
            if (c.pid > 0) ::kill(c.pid, SIGTERM);
        }
        for (auto& c : children) close_child(c);
    }
    // Starts a child that runs body(fd) and leaves with its status; returns its slot.
    std::size_t start(const std::function<int(int)>& body) {
        int sv[2];
        if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) {
            throw std::runtime_error(std::string("cannot create a socket pair: ") + std::strerror(errno));
        }
        pid_t pid = 0;
        try {
            pid = fork_child();
        } catch (...) {
            ::close(sv[0]);
            ::close(sv[1]);
            throw;
        }
        if (pid == 0) {
            // The other children's sockets are the parent's: holding them would keep those
            // children from seeing the parent close them.
            for (const auto& c : children) {
                if (c.fd >= 0) ::close(c.fd);
            }
            ::close(sv[0]);
            int status = 1;
            try {
                status = body(sv[1]);
            } catch (...) {
                // Unwinding further would run the parent's code in this process.
                status = 1;
            }
            std::_Exit(status);
        }
        ::close(sv[1]);
        Child c;
        c.pid = pid;
        c.fd = sv[0];
        children.push_back(c);
        return children.size() - 1;
    }
    // Waits for the child (its socket closed) and returns its wait status.
    int close_child(Child& c) {
        if (c.fd >= 0) ::close(c.fd);
        c.fd = -1;
        int status = 0;
        if (c.pid > 0) status = wait_child(c.pid);
        c.pid = -1;
        return status;
    }
    std::size_t live() const {
        return static_cast<std::size_t>(std::count_if(children.begin(), children.end(), [](const Child& c) { return c.pid > 0; }));
    }
    std::vector<Child> children;
};

std::string describe_status(int status) {
    if (WIFSIGNALED(status)) return fmt::format("ended by signal {} ({})", WTERMSIG(status), ::strsignal(WTERMSIG(status)));
    if (WIFEXITED(status)) return fmt::format("exited with status {}", WEXITSTATUS(status));
    return "ended";
}

// Reads what a readable child sent. Returns false at its end of file.
bool fill(Child& c) {
    char buf[65536];
    for (;;) {
        const ssize_t k = ::read(c.fd, buf, sizeof buf);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) return false;
        c.inbuf.append(buf, static_cast<std::size_t>(k));
        return true;
    }
}

// A worker's answer for the case at position `pos`.
bool send_result(int fd, std::uint64_t pos, const CaseOutput& out) {
    ByteWriter msg;
    msg.u64(static_cast<std::uint64_t>(Kind::kResult)).u64(pos);
    put_output(msg, out);
    return send_frame(fd, msg.bytes());
}

// A worker's message, which must answer the case at position `expected`: its output, or the
// worker's error thrown here.
CaseOutput read_result(const std::string& payload, long expected) {
    ByteReader in(payload, "a worker's message");
    const auto kind = static_cast<Kind>(in.u64());
    const std::uint64_t pos = in.u64();
    if (kind != Kind::kResult) rethrow_child_failure(kind, in.str());
    if (static_cast<long>(pos) != expected) throw std::logic_error("a worker answered another case");
    return get_output(in);
}

// The body of a worker: elaborates its platform at the first case, then runs what it is sent.
int worker_main(int fd, const Workload& w, const std::vector<std::size_t>& selected, bool explain) {
    CaseRunner runner(w, explain);
    try {
        for (;;) {
            std::uint64_t pos = 0;
            if (!recv_all(fd, reinterpret_cast<char*>(&pos), sizeof pos) || pos == kStop) return 0;
            const CaseOutput out = runner.run(w.cases[selected.at(pos)]);
            if (!send_result(fd, pos, out)) return 1;
        }
    } catch (const std::exception& e) {
        send_frame(fd, failure_payload(e));
        return 1;
    }
}

}  // namespace

std::vector<CaseOutput> run_cases(const Workload& w, const std::vector<std::size_t>& selected, const RunSettings& s) {
    std::vector<CaseOutput> results(selected.size());
    if (selected.empty()) return results;
    const std::size_t last_platform = w.platforms.size() - 1;
    const bool one_at_a_time = s.jobs <= 1 || s.in_process_last;
    // Per platform, the positions (into `selected`) not yet handed out. One at a time they go in
    // sweep order, as dmasim always ran them; otherwise the case expected to take longest goes
    // first, so that the last case to end is a short one.
    std::vector<std::vector<std::size_t>> pending(w.platforms.size());
    std::vector<std::size_t> here;  // run in this process
    double total_cost = 0.0;
    // What a case costs is learnt as the run goes: seconds per unit of estimated cost, per kind
    // of case (its strategy, or flows). The estimate alone (bytes) is far off between kinds (a
    // peer copy takes many times a pinned one of the same size).
    std::vector<std::string> kinds;
    std::vector<std::size_t> kind_of(selected.size(), 0);
    for (std::size_t pos = 0; pos < selected.size(); ++pos) {
        const WorkCase& c = w.cases.at(selected[pos]);
        total_cost += c.cost;
        const std::string kind = c.flows ? std::string("flows") : c.strategy;
        const auto k = std::find(kinds.begin(), kinds.end(), kind);
        kind_of[pos] = static_cast<std::size_t>(k - kinds.begin());
        if (k == kinds.end()) kinds.push_back(kind);
        if (s.in_process_last && c.platform == last_platform) {
            here.push_back(pos);
            continue;
        }
        pending[c.platform].push_back(pos);
    }
    std::vector<double> seen_seconds(kinds.size(), 0.0), seen_cost(kinds.size(), 0.0), rate(kinds.size(), 1.0);
    bool learnt = false;
    auto relearn = [&] {
        // A kind not seen yet counts as the slowest seen: started early, it is soon known.
        double slowest = 0.0;
        for (std::size_t k = 0; k < kinds.size(); ++k) {
            if (seen_cost[k] > 0) slowest = std::max(slowest, seen_seconds[k] / seen_cost[k]);
        }
        for (std::size_t k = 0; k < kinds.size(); ++k) {
            rate[k] = seen_cost[k] > 0 ? seen_seconds[k] / seen_cost[k] : (slowest > 0 ? slowest : 1.0);
        }
    };
    auto expected = [&](std::size_t pos) { return w.cases[selected[pos]].cost * rate[kind_of[pos]]; };
    auto remaining = [&](std::size_t p) {
        double sum = 0.0;
        for (const std::size_t pos : pending[p]) sum += expected(pos);
        return sum;
    };
    // Takes the platform's next case out of `pending`.
    auto take = [&](std::size_t p) {
        std::vector<std::size_t>& q = pending[p];
        std::size_t at = 0;
        if (!one_at_a_time) {
            for (std::size_t i = 1; i < q.size(); ++i) {
                if (expected(q[i]) > expected(q[at])) at = i;
            }
        }
        const std::size_t pos = q[at];
        q.erase(q.begin() + static_cast<std::ptrdiff_t>(at));
        return pos;
    };
    if (s.progress) s.progress->start(selected.size(), total_cost);

    std::size_t outstanding = selected.size() - here.size();
    const std::size_t jobs = one_at_a_time ? 1 : static_cast<std::size_t>(s.jobs);
    ChildSet pool;
    std::vector<std::size_t> workers_on(w.platforms.size(), 0);
    std::vector<std::chrono::steady_clock::time_point> handed(selected.size());
    auto hand_out = [&](Child& c, bool stop) {
        std::uint64_t msg = kStop;
        if (!stop && !pending[c.platform].empty()) {
            c.current = static_cast<long>(take(c.platform));
            handed[static_cast<std::size_t>(c.current)] = std::chrono::steady_clock::now();
            msg = static_cast<std::uint64_t>(c.current);
        } else {
            c.current = -1;
        }
        if (!send_all(c.fd, reinterpret_cast<const char*>(&msg), sizeof msg) && msg != kStop) {
            throw std::runtime_error("simulating platform " + w.platforms[c.platform] + " failed: its worker process ended");
        }
    };
    while (outstanding > 0) {
        // Start workers while there are free slots: for the platform with the most expected
        // work left per worker, so that platforms end at about the same time.
        while (pool.live() < jobs) {
            long best = -1;
            double best_share = 0.0;
            for (std::size_t p = 0; p < w.platforms.size(); ++p) {
                if (pending[p].empty()) continue;
                // One at a time: the platforms in sweep order.
                const double share = one_at_a_time ? static_cast<double>(w.platforms.size() - p)
                                                   : remaining(p) / static_cast<double>(workers_on[p] + 1);
                if (best < 0 || share > best_share) {
                    best = static_cast<long>(p);
                    best_share = share;
                }
            }
            if (best < 0) break;
            const auto platform = static_cast<std::size_t>(best);
            const std::size_t slot = pool.start([&w, &selected, &s](int fd) { return worker_main(fd, w, selected, s.explain); });
            pool.children[slot].platform = platform;
            ++workers_on[platform];
            hand_out(pool.children[slot], false);
        }
        std::vector<pollfd> fds;
        std::vector<std::size_t> slots;
        for (std::size_t i = 0; i < pool.children.size(); ++i) {
            if (pool.children[i].pid <= 0) continue;
            fds.push_back(pollfd{pool.children[i].fd, POLLIN, 0});
            slots.push_back(i);
        }
        if (fds.empty()) throw std::logic_error("cases left but no worker to run them");
        const int ready = ::poll(fds.data(), fds.size(), 500);
        if (ready < 0 && errno != EINTR) throw std::runtime_error(std::string("poll: ") + std::strerror(errno));
        if (s.progress) s.progress->tick();
        for (std::size_t k = 0; k < fds.size(); ++k) {
            if (fds[k].revents == 0) continue;
            Child& c = pool.children[slots[k]];
            const bool open = fill(c);
            std::string payload;
            while (take_frame(c.inbuf, payload)) {
                const auto pos = static_cast<std::size_t>(c.current);
                results[pos] = read_result(payload, c.current);
                --outstanding;
                const WorkCase& done = w.cases[selected[pos]];
                seen_seconds[kind_of[pos]] +=
                    std::chrono::duration<double>(std::chrono::steady_clock::now() - handed[pos]).count();
                seen_cost[kind_of[pos]] += done.cost;
                learnt = true;
                bool stop = false;
                if (!one_at_a_time) relearn();
                // Only when every slot is taken: a free one gets a worker for that platform anyway.
                if (!one_at_a_time && pool.live() >= jobs) {
                    // A platform with no worker and much more work left than this worker has
                    // gets this slot: the worker stops, and one for that platform starts.
                    const double mine = remaining(c.platform) / static_cast<double>(workers_on[c.platform]);
                    for (std::size_t p = 0; p < w.platforms.size() && !stop; ++p) {
                        stop = p != c.platform && workers_on[p] == 0 && !pending[p].empty() && remaining(p) > 2.0 * mine;
                    }
                }
                if (s.progress) {
                    if (learnt && !one_at_a_time) {
                        double left = 0.0;
                        for (std::size_t p = 0; p < w.platforms.size(); ++p) left += remaining(p);
                        s.progress->expect(left / static_cast<double>(jobs));
                    }
                    s.progress->done(done.cost, done.label);
                }
                hand_out(c, stop);
            }
            if (!open) {
                const bool busy = c.current >= 0;
                const std::size_t platform = c.platform;
                const int status = pool.close_child(c);
                --workers_on[platform];
                if (busy || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
                    throw std::runtime_error("simulating platform " + w.platforms[platform] + " failed: its worker " +
                                             describe_status(status));
                }
            }
        }
    }
    // Workers told to stop end on their own; wait for them so that none is left behind.
    for (auto& c : pool.children) {
        if (c.pid > 0) pool.close_child(c);
    }
    if (!here.empty()) {
        CaseRunner runner(w, s.explain);
        for (const std::size_t pos : here) {
            results[pos] = runner.run(w.cases[selected[pos]]);
            if (s.progress) s.progress->done(w.cases[selected[pos]].cost, w.cases[selected[pos]].label);
        }
    }
    if (s.progress) s.progress->finish();
    return results;
}

// ---------------------------------------------------------------------------------------------
// Workers kept across steps.

namespace {

// What the parent sends a step worker: a step's description, or a case of the current step.
enum class StepMessage : std::uint64_t { kStep = 1, kCase = 2 };

// The body of a step worker: elaborates its platform at its first case, builds each step's
// workload as the step begins, and runs the cases it is sent until its parent closes the socket.
int step_worker_main(int fd, const StepWorkers::Build& build) {
    std::unique_ptr<CaseRunner> runner;
    const Workload* w = nullptr;
    try {
        for (;;) {
            std::string payload;
            if (!recv_frame(fd, payload)) return 0;
            ByteReader in(payload, "the parent's message");
            const auto what = static_cast<StepMessage>(in.u64());
            if (what == StepMessage::kStep) {
                w = &build(in.str());
                if (runner) {
                    runner->rebind(*w);
                } else {
                    runner = std::make_unique<CaseRunner>(*w, false);
                }
                continue;
            }
            const std::uint64_t pos = in.u64();
            const std::uint64_t index = in.u64();
            if (w == nullptr || what != StepMessage::kCase) throw std::logic_error("a case before its step");
            const CaseOutput out = runner->run(w->cases.at(index));
            if (!send_result(fd, pos, out)) return 1;
        }
    } catch (const std::exception& e) {
        send_frame(fd, failure_payload(e));
        return 1;
    }
}

}  // namespace

struct StepWorkers::Pool {
    ChildSet children;
    std::vector<std::string> platforms;  // the workload's, when the workers started
};

StepWorkers::StepWorkers(Build build, int jobs) : build_(std::move(build)), jobs_(std::max(1, jobs)) {}

StepWorkers::~StepWorkers() = default;

std::vector<CaseOutput> StepWorkers::run(const std::string& step, const std::vector<std::size_t>& selected) {
    try {
        return run_step(step, selected);
    } catch (...) {
        // Workers in the middle of a case or gone: none is reused.
        pool_.reset();
        throw;
    }
}

std::vector<CaseOutput> StepWorkers::run_step(const std::string& step, const std::vector<std::size_t>& selected) {
    const Workload& w = build_(step);
    if (w.platforms.size() > static_cast<std::size_t>(jobs_)) {
        RunSettings rs;
        rs.jobs = jobs_;
        return run_cases(w, selected, rs);
    }
    std::vector<CaseOutput> results(selected.size());
    if (selected.empty()) return results;
    // Per platform, the positions (into `selected`) not yet handed out, the costliest last (taken
    // first), so that the step ends on a short case.
    std::vector<std::vector<std::size_t>> pending(w.platforms.size());
    for (std::size_t pos = 0; pos < selected.size(); ++pos) pending[w.cases.at(selected[pos]).platform].push_back(pos);
    for (auto& q : pending) {
        std::stable_sort(q.begin(), q.end(), [&](std::size_t a, std::size_t b) {
            return w.cases[selected[a]].cost < w.cases[selected[b]].cost;
        });
    }
    if (!pool_) {
        // One worker per platform, the rest where the most cases are per worker. They are forked
        // once, from this process as it is now.
        pool_ = std::make_unique<Pool>();
        pool_->platforms = w.platforms;
        std::vector<std::size_t> workers(w.platforms.size(), 1);
        for (std::size_t extra = w.platforms.size(); extra < static_cast<std::size_t>(jobs_); ++extra) {
            std::size_t best = 0;
            for (std::size_t p = 1; p < w.platforms.size(); ++p) {
                if (pending[p].size() * workers[best] > pending[best].size() * workers[p]) best = p;
            }
            ++workers[best];
        }
        for (std::size_t p = 0; p < w.platforms.size(); ++p) {
            for (std::size_t k = 0; k < workers[p]; ++k) {
                const Build& build = build_;
                const std::size_t slot = pool_->children.start([&build](int fd) { return step_worker_main(fd, build); });
                pool_->children.children[slot].platform = p;
            }
        }
    } else if (pool_->platforms != w.platforms) {
        throw std::logic_error("a step's workload has other platforms than the first step's");
    }
    auto& children = pool_->children.children;
    const std::string step_message = ByteWriter{}.u64(static_cast<std::uint64_t>(StepMessage::kStep)).str(step).bytes();
    auto hand_out = [&](Child& c) {
        c.current = -1;
        auto& q = pending[c.platform];
        if (q.empty()) return;
        const std::size_t pos = q.back();
        q.pop_back();
        c.current = static_cast<long>(pos);
        const std::string msg =
            ByteWriter{}.u64(static_cast<std::uint64_t>(StepMessage::kCase)).u64(pos).u64(selected[pos]).bytes();
        if (!send_frame(c.fd, msg)) {
            throw std::runtime_error("simulating platform " + w.platforms[c.platform] + " failed: its worker process ended");
        }
    };
    for (auto& c : children) {
        if (!send_frame(c.fd, step_message)) {
            throw std::runtime_error("simulating platform " + w.platforms[c.platform] + " failed: its worker process ended");
        }
        hand_out(c);
    }
    std::size_t outstanding = selected.size();
    while (outstanding > 0) {
        std::vector<pollfd> fds;
        for (const auto& c : children) fds.push_back(pollfd{c.fd, POLLIN, 0});
        const int ready = ::poll(fds.data(), fds.size(), -1);
        if (ready < 0 && errno != EINTR) throw std::runtime_error(std::string("poll: ") + std::strerror(errno));
        for (std::size_t k = 0; k < fds.size(); ++k) {
            if (fds[k].revents == 0) continue;
            Child& c = children[k];
            const bool open = fill(c);
            std::string payload;
            while (take_frame(c.inbuf, payload)) {
                results[static_cast<std::size_t>(c.current)] = read_result(payload, c.current);
                --outstanding;
                hand_out(c);
            }
            if (!open) {
                const std::size_t platform = c.platform;
                const int status = pool_->children.close_child(c);
                throw std::runtime_error("simulating platform " + w.platforms[platform] + " failed: its worker " +
                                         describe_status(status));
            }
        }
    }
    return results;
}

std::vector<std::string> run_tasks(const std::vector<std::size_t>& order, std::size_t n, int jobs,
                                   const std::function<std::string(std::size_t)>& task,
                                   const std::function<void(std::size_t, const std::string&)>& on_done) {
    std::vector<std::string> results(n);
    ChildSet pool;
    std::vector<long> task_of;  // per child slot
    std::size_t started = 0;
    std::size_t finished = 0;
    while (finished < order.size()) {
        while (pool.live() < static_cast<std::size_t>(std::max(1, jobs)) && started < order.size()) {
            const std::size_t i = order[started++];
            const std::size_t slot = pool.start([&task, i](int fd) {
                try {
                    const std::string r = task(i);
                    return send_frame(fd, ByteWriter{}.u64(static_cast<std::uint64_t>(Kind::kResult)).u64(i).str(r).bytes()) ? 0 : 1;
                } catch (const std::exception& e) {
                    send_frame(fd, failure_payload(e));
                    return 1;
                }
            });
            task_of.resize(pool.children.size(), -1);
            task_of[slot] = static_cast<long>(i);
            pool.children[slot].current = static_cast<long>(i);
        }
        std::vector<pollfd> fds;
        std::vector<std::size_t> slots;
        for (std::size_t k = 0; k < pool.children.size(); ++k) {
            if (pool.children[k].pid <= 0) continue;
            fds.push_back(pollfd{pool.children[k].fd, POLLIN, 0});
            slots.push_back(k);
        }
        const int ready = ::poll(fds.data(), fds.size(), -1);
        if (ready < 0 && errno != EINTR) throw std::runtime_error(std::string("poll: ") + std::strerror(errno));
        for (std::size_t k = 0; k < fds.size(); ++k) {
            if (fds[k].revents == 0) continue;
            Child& c = pool.children[slots[k]];
            const bool open = fill(c);
            std::string payload;
            while (take_frame(c.inbuf, payload)) {
                ByteReader in(payload, "a child's message");
                const auto kind = static_cast<Kind>(in.u64());
                const std::uint64_t i = in.u64();
                if (kind != Kind::kResult) rethrow_child_failure(kind, in.str());
                results[i] = in.str();
                c.current = -1;
            }
            if (!open) {
                const long i = task_of[slots[k]];
                const bool answered = c.current < 0;
                const int status = pool.close_child(c);
                if (!answered || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
                    throw std::runtime_error("a child process " + describe_status(status));
                }
                ++finished;
                if (on_done) on_done(static_cast<std::size_t>(i), results[static_cast<std::size_t>(i)]);
            }
        }
    }
    return results;
}

std::vector<core::ResultRow> rows_of(const std::vector<CaseOutput>& outputs) {
    std::vector<core::ResultRow> rows;
    for (const auto& o : outputs) rows.insert(rows.end(), o.rows.begin(), o.rows.end());
    return rows;
}

std::vector<core::ResultRow> parsed_rows_of(const std::vector<CaseOutput>& outputs, const std::string& origin) {
    std::string csv = core::results_csv_header() + '\n';
    for (const auto& o : outputs) csv += o.rows_csv;
    std::istringstream in(csv);
    return core::read_results_csv(in, origin);
}

// ---------------------------------------------------------------------------------------------
// Progress.

bool stderr_is_terminal(const std::ostream& err) { return &err == &std::cerr && ::isatty(STDERR_FILENO) == 1; }

Progress::Progress(std::ostream& err, bool enabled, bool tty, std::string what, std::chrono::steady_clock::duration interval)
    : err_(err), enabled_(enabled), tty_(tty), what_(std::move(what)), interval_(interval) {}

void Progress::start(std::size_t cases, double cost) {
    cases_ = cases;
    cost_ = cost;
    cases_done_ = 0;
    cost_done_ = 0.0;
    expected_left_ = -1.0;
    t0_ = last_ = std::chrono::steady_clock::now();
}

namespace {
std::string clock_text(double s) {
    const auto t = static_cast<long long>(s + 0.5);
    if (t >= 3600) return fmt::format("{}:{:02d}:{:02d}", t / 3600, static_cast<int>(t / 60 % 60), static_cast<int>(t % 60));
    return fmt::format("{}:{:02d}", t / 60, static_cast<int>(t % 60));
}
}  // namespace

void Progress::draw(bool final) {
    const auto now = std::chrono::steady_clock::now();
    const double elapsed = std::chrono::duration<double>(now - t0_).count();
    const double frac = cost_ > 0 ? std::min(1.0, cost_done_ / cost_) : 1.0;
    std::string eta = "?";
    if (final) {
        eta = "0:00";
    } else if (expected_left_ >= 0) {
        eta = clock_text(std::max(0.0, expected_left_ - std::chrono::duration<double>(now - expected_at_).count()));
    } else if (cost_done_ > 0 && elapsed > 0) {
        eta = clock_text((cost_ - cost_done_) / (cost_done_ / elapsed));
    }
    if (tty_) {
        constexpr int kWidth = 30;
        const int filled = static_cast<int>(frac * kWidth);
        std::string bar(static_cast<std::size_t>(filled), '#');
        bar.append(static_cast<std::size_t>(kWidth - filled), '.');
        // \r and a cleared line: the bar is redrawn in place.
        err_ << fmt::format("\r\x1b[K{} [{}] {:3.0f}% {}/{} cases, {} elapsed, ETA {}", what_, bar, frac * 100,
                            cases_done_, cases_, clock_text(elapsed), eta);
        if (final) err_ << '\n';
    } else {
        err_ << fmt::format("dmasim: [{}/{}] {} {:.0f}% after {}, ETA {}{}\n", cases_done_, cases_, what_, frac * 100,
                            clock_text(elapsed), eta, label_.empty() || final ? std::string() : " (last: " + label_ + ")");
    }
    err_.flush();
    printed_ = true;
    last_ = now;
}

void Progress::expect(double seconds_left) {
    expected_left_ = seconds_left;
    expected_at_ = std::chrono::steady_clock::now();
}

void Progress::done(double cost, const std::string& label) {
    ++cases_done_;
    cost_done_ += cost;
    label_ = label;
    tick();
}

void Progress::tick() {
    if (!enabled_) return;
    const auto now = std::chrono::steady_clock::now();
    // A terminal's bar follows every case (but not faster than the eye); plain lines go to logs.
    const auto every = tty_ ? std::chrono::steady_clock::duration(std::chrono::milliseconds(200)) : interval_;
    if (now - last_ >= every) draw(false);
}

void Progress::finish() {
    if (!enabled_) return;
    // A short run that printed nothing stays silent; a bar is always closed.
    if (printed_ || tty_) draw(true);
}

// ---------------------------------------------------------------------------------------------
// Shards and bytes.

Shard parse_shard(const std::string& text) {
    const auto slash = text.find('/');
    auto number = [&](const std::string& part, std::size_t& out) {
        if (part.empty() || part.size() > 6 || part.find_first_not_of("0123456789") != std::string::npos) return false;
        out = std::stoul(part);
        return true;
    };
    Shard s;
    if (slash == std::string::npos || !number(text.substr(0, slash), s.index) || !number(text.substr(slash + 1), s.count)) {
        throw core::InputError("--shard", text, "must be I/N: shard I (from 0) of N, e.g. 0/4");
    }
    if (s.count < 1 || s.count > 100000) throw core::InputError("--shard", text, "N must be from 1 to 100000");
    if (s.index >= s.count) {
        throw core::InputError("--shard", text, "I must be from 0 to N-1 (" + std::to_string(s.count - 1) + ")");
    }
    return s;
}

std::vector<std::size_t> shard_cases(std::size_t total, std::size_t index, std::size_t count) {
    std::vector<std::size_t> out;
    for (std::size_t i = index; i < total; i += count) out.push_back(i);
    return out;
}

ByteWriter& ByteWriter::u64(std::uint64_t v) {
    out_.append(reinterpret_cast<const char*>(&v), sizeof v);
    return *this;
}
ByteWriter& ByteWriter::f64(double v) {
    out_.append(reinterpret_cast<const char*>(&v), sizeof v);
    return *this;
}
ByteWriter& ByteWriter::str(const std::string& v) {
    u64(v.size());
    out_ += v;
    return *this;
}
void ByteReader::need(std::size_t n) const {
    if (in_.size() - pos_ < n) throw std::runtime_error(origin_ + ": message cut short");
}
std::uint64_t ByteReader::u64() {
    need(sizeof(std::uint64_t));
    std::uint64_t v = 0;
    std::memcpy(&v, in_.data() + pos_, sizeof v);
    pos_ += sizeof v;
    return v;
}
double ByteReader::f64() {
    need(sizeof(double));
    double v = 0;
    std::memcpy(&v, in_.data() + pos_, sizeof v);
    pos_ += sizeof v;
    return v;
}
std::string ByteReader::str() {
    const std::uint64_t n = u64();
    need(static_cast<std::size_t>(n));
    std::string v = in_.substr(pos_, static_cast<std::size_t>(n));
    pos_ += static_cast<std::size_t>(n);
    return v;
}

std::string encode_outputs(const std::vector<std::size_t>& cases, const std::vector<CaseOutput>& outputs) {
    ByteWriter w;
    w.u64(cases.size());
    for (std::size_t i = 0; i < cases.size(); ++i) {
        w.u64(cases[i]);
        put_output(w, outputs[i]);
    }
    return w.bytes();
}

void decode_outputs(const std::string& bytes, std::vector<std::size_t>& cases, std::vector<CaseOutput>& outputs,
                    const std::string& origin) {
    ByteReader r(bytes, origin);
    const std::uint64_t n = r.u64();
    for (std::uint64_t i = 0; i < n; ++i) {
        cases.push_back(static_cast<std::size_t>(r.u64()));
        outputs.push_back(get_output(r));
    }
}

}  // namespace dmasim::app
