#include "dmasim/sim/fast_forward.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <numeric>

namespace dmasim::sim {

std::optional<Levels> choose_levels(std::uint64_t target, std::uint64_t min_level, std::uint64_t step,
                                    double max_cost_fraction) {
    if (target == 0 || min_level == 0 || step == 0 || target < min_level) return std::nullopt;
    Levels l;
    l.step = step;
    // m1 in the target's residue class modulo the step: then target - m1 is a whole number of
    // steps and integer counts extrapolate exactly.
    l.first = min_level + (target - min_level) % step;
    l.target = target;
    if (target <= l.at(2)) return std::nullopt;
    const double cost = static_cast<double>(l.at(0) + l.at(1) + l.at(2));
    if (cost > max_cost_fraction * static_cast<double>(target)) return std::nullopt;
    return l;
}

std::uint64_t lcm_capped(std::uint64_t a, std::uint64_t b, std::uint64_t cap) {
    if (a == 0 || b == 0) return 0;
    const std::uint64_t g = std::gcd(a, b);
    const std::uint64_t a_over = a / g;
    if (a_over > cap / b) return 0;
    const std::uint64_t l = a_over * b;
    return l > cap ? 0 : l;
}

namespace {

// Fits one quantity after another; the first that is not affine ends the fit and says why.
class Fit {
public:
    Fit(const Tolerance& tol, std::uint64_t jumps) : tol_(tol), jumps_(static_cast<double>(jumps)), n_(jumps) {}

    double real(double q1, double q2, double q3, const std::string& what, double relative = -1.0) {
        if (!why_.empty()) return 0.0;
        const double d1 = q2 - q1;
        const double d2 = q3 - q2;
        const double rel = relative >= 0.0 ? relative : tol_.relative;
        const double allowed = std::max(tol_.absolute_ps, rel * std::max(std::fabs(d1), std::fabs(d2)));
        if (!(std::fabs(d2 - d1) <= allowed)) {
            refuse(what, d1, d2);
            return 0.0;
        }
        // The slope over the outer levels: a wobble of the middle one does not enter it.
        const double v = q3 + jumps_ * (q3 - q1) / 2.0;
        if (!(v >= 0.0) || !std::isfinite(v)) refuse(what, d1, d2);
        return v;
    }

    std::uint64_t count(std::uint64_t q1, std::uint64_t q2, std::uint64_t q3, const std::string& what) {
        if (!why_.empty()) return 0;
        constexpr auto kMax = static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max());
        if (q1 > kMax || q2 > kMax || q3 > kMax) {
            refuse(what, 0, 0);
            return 0;
        }
        const std::int64_t d1 = static_cast<std::int64_t>(q2) - static_cast<std::int64_t>(q1);
        const std::int64_t d2 = static_cast<std::int64_t>(q3) - static_cast<std::int64_t>(q2);
        if (d1 == d2) {
            // Exactly affine: whole numbers all the way.
            if (d1 < 0 && static_cast<std::uint64_t>(-d1) > q3 / std::max<std::uint64_t>(n_, 1)) {
                refuse(what, static_cast<double>(d1), static_cast<double>(d2));
                return 0;
            }
            if (d1 > 0 && n_ > 0 && static_cast<std::uint64_t>(d1) > (kMax - q3) / n_) {
                refuse(what, static_cast<double>(d1), static_cast<double>(d2));
                return 0;
            }
            return d1 >= 0 ? q3 + n_ * static_cast<std::uint64_t>(d1) : q3 - n_ * static_cast<std::uint64_t>(-d1);
        }
        const double a1 = std::fabs(static_cast<double>(d1));
        const double a2 = std::fabs(static_cast<double>(d2));
        const double allowed = std::max(tol_.absolute_count, tol_.relative * std::max(a1, a2));
        if (!(std::fabs(static_cast<double>(d2 - d1)) <= allowed)) {
            refuse(what, static_cast<double>(d1), static_cast<double>(d2));
            return 0;
        }
        const double v = static_cast<double>(q3) + jumps_ * (static_cast<double>(q3) - static_cast<double>(q1)) / 2.0;
        if (!(v >= 0.0) || !(v < 9.0e18)) {
            refuse(what, static_cast<double>(d1), static_cast<double>(d2));
            return 0;
        }
        return static_cast<std::uint64_t>(std::llround(v));
    }

    // A quantity of the steady state alone: the same at every level, within `relative` of it.
    double same(double q1, double q2, double q3, const std::string& what, double relative) {
        if (!why_.empty()) return 0.0;
        const double allowed = std::max(tol_.absolute_ps, relative * std::max({std::fabs(q1), std::fabs(q2), std::fabs(q3)}));
        if (!(std::fabs(q2 - q1) <= allowed && std::fabs(q3 - q2) <= allowed)) {
            refuse(what, q2 - q1, q3 - q2, "is not the same at every level");
            return 0.0;
        }
        return q3;
    }

    void refuse_text(const std::string& why) {
        if (why_.empty()) why_ = why;
    }
    const std::string& why() const { return why_; }

private:
    void refuse(const std::string& what, double d1, double d2, const char* how = "is not affine in the size") {
        char buf[200];
        std::snprintf(buf, sizeof buf, "%s %s: steps %.17g and %.17g", what.c_str(), how, d1, d2);
        why_ = buf;
    }
    const Tolerance& tol_;
    double jumps_;
    std::uint64_t n_;
    std::string why_;
};

}  // namespace

Extrapolation extrapolate(const std::array<ProgramOutcome, 3>& at, const Levels& levels, const Tolerance& tol) {
    Extrapolation x;
    Fit fit(tol, levels.jumps());
    ProgramOutcome out;
    out.elapsed_ps = fit.real(at[0].elapsed_ps, at[1].elapsed_ps, at[2].elapsed_ps, "elapsed time");
    out.read_requests = fit.count(at[0].read_requests, at[1].read_requests, at[2].read_requests, "read requests");
    out.writes = fit.count(at[0].writes, at[1].writes, at[2].writes, "writes");
    out.host_memory_bytes =
        fit.count(at[0].host_memory_bytes, at[1].host_memory_bytes, at[2].host_memory_bytes, "host memory bytes");
    out.host_read_bytes = fit.count(at[0].host_read_bytes, at[1].host_read_bytes, at[2].host_read_bytes, "host memory bytes read");
    out.host_written_bytes =
        fit.count(at[0].host_written_bytes, at[1].host_written_bytes, at[2].host_written_bytes, "host memory bytes written");
    out.memory_wait_ps = fit.real(at[0].memory_wait_ps, at[1].memory_wait_ps, at[2].memory_wait_ps, "reads' wait for host memory");
    out.longest_release_hold_ps = fit.same(at[0].longest_release_hold_ps, at[1].longest_release_hold_ps,
                                           at[2].longest_release_hold_ps, "a release's longest hold", tol.relative_hold);
    out.peak_outstanding_reads = static_cast<std::uint32_t>(
        fit.count(at[0].peak_outstanding_reads, at[1].peak_outstanding_reads, at[2].peak_outstanding_reads,
                  "peak outstanding reads"));
    if (at[0].links.size() != at[1].links.size() || at[1].links.size() != at[2].links.size()) {
        fit.refuse_text("the links differ between levels");
    }
    for (std::size_t i = 0; fit.why().empty() && i < at[2].links.size(); ++i) {
        const LinkStats& a = at[0].links[i].stats;
        const LinkStats& b = at[1].links[i].stats;
        const LinkStats& c = at[2].links[i].stats;
        LinkReport r = at[2].links[i];
        const std::string& name = r.label;
        LinkStats& s = r.stats;
        s.tlps = fit.count(a.tlps, b.tlps, c.tlps, name + " tlps");
        for (std::size_t k = 0; k < 3; ++k) {
            s.tlps_by_kind[k] = fit.count(a.tlps_by_kind[k], b.tlps_by_kind[k], c.tlps_by_kind[k], name + " tlps by kind");
        }
        s.payload_bytes = fit.count(a.payload_bytes, b.payload_bytes, c.payload_bytes, name + " payload bytes");
        s.tlp_overhead_bytes =
            fit.count(a.tlp_overhead_bytes, b.tlp_overhead_bytes, c.tlp_overhead_bytes, name + " TLP overhead bytes");
        s.dllps = fit.count(a.dllps, b.dllps, c.dllps, name + " DLLPs");
        s.ack_dllps = fit.count(a.ack_dllps, b.ack_dllps, c.ack_dllps, name + " Ack DLLPs");
        s.updatefc_dllps = fit.count(a.updatefc_dllps, b.updatefc_dllps, c.updatefc_dllps, name + " UpdateFC DLLPs");
        s.dllp_bytes = fit.count(a.dllp_bytes, b.dllp_bytes, c.dllp_bytes, name + " DLLP bytes");
        s.busy_ps = fit.real(a.busy_ps, b.busy_ps, c.busy_ps, name + " busy time");
        s.credit_stall_ps = fit.real(a.credit_stall_ps, b.credit_stall_ps, c.credit_stall_ps, name + " credit stall time",
                                     tol.relative_stall);
        out.links.push_back(r);
    }
    const bool same_ops = at[0].timings.size() == at[1].timings.size() && at[1].timings.size() == at[2].timings.size();
    if (same_ops) {
        for (std::size_t i = 0; fit.why().empty() && i < at[2].timings.size(); ++i) {
            const std::string op = "op " + std::to_string(i);
            OpTiming t;
            t.issued_ps = fit.real(at[0].timings[i].issued_ps, at[1].timings[i].issued_ps, at[2].timings[i].issued_ps,
                                   op + " issue time");
            t.start_ps = fit.real(at[0].timings[i].start_ps, at[1].timings[i].start_ps, at[2].timings[i].start_ps,
                                  op + " start time");
            t.end_ps = fit.real(at[0].timings[i].end_ps, at[1].timings[i].end_ps, at[2].timings[i].end_ps, op + " end time");
            out.timings.push_back(t);
        }
    }
    if (!fit.why().empty()) {
        x.why_not = fit.why();
        return x;
    }
    x.outcome = std::move(out);
    return x;
}

namespace {

std::vector<double> events_of(const ProgramOutcome& o) {
    std::vector<double> e;
    e.reserve(o.timings.size() * 3);
    for (const auto& t : o.timings) {
        e.push_back(t.issued_ps);
        e.push_back(t.start_ps);
        e.push_back(t.end_ps);
    }
    return e;
}

int order(double a, double b, double tie_ps) {
    const double d = a - b;
    if (std::fabs(d) <= tie_ps / 2) return 0;
    return d < 0 ? -1 : 1;
}

}  // namespace

bool same_event_order(const std::array<ProgramOutcome, 3>& at, const ProgramOutcome& target, double tie_ps) {
    const std::array<std::vector<double>, 4> ev{events_of(at[0]), events_of(at[1]), events_of(at[2]), events_of(target)};
    const std::size_t n = ev[3].size();
    for (const auto& e : ev) {
        if (e.size() != n) return false;
    }
    // Quadratic in the operations; programs with that many operations are not this kind.
    constexpr std::size_t kMaxEvents = 3000;
    if (n > kMaxEvents) return false;
    for (std::size_t i = 0; i < n; ++i) {
        for (std::size_t j = i + 1; j < n; ++j) {
            const int o = order(ev[3][i], ev[3][j], tie_ps);
            for (std::size_t k = 0; k < 3; ++k) {
                if (order(ev[k][i], ev[k][j], tie_ps) != o) return false;
            }
        }
    }
    return true;
}

}  // namespace dmasim::sim
