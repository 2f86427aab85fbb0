#include "host_stalls.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <thread>
#include <unistd.h>

#include "dmasim/core/results.h"

namespace dmaprobe {

std::optional<std::uint64_t> steal_ticks(const std::string& proc_stat) {
    std::istringstream in(proc_stat);
    std::string line;
    while (std::getline(in, line)) {
        if (line.rfind("cpu ", 0) != 0) continue;
        std::istringstream fields(line.substr(4));
        std::uint64_t v = 0;
        // user nice system idle iowait irq softirq steal
        for (int i = 0; i < 8; ++i) {
            if (!(fields >> v)) return std::nullopt;
        }
        return v;
    }
    return std::nullopt;
}

namespace {

std::optional<std::uint64_t> read_steal() {
    std::ifstream f("/proc/stat");
    if (!f) return std::nullopt;
    std::ostringstream s;
    s << f.rdbuf();
    return steal_ticks(s.str());
}

}  // namespace

StallReport measure_host_stalls(double seconds) {
    using Clock = std::chrono::steady_clock;
    const auto before = read_steal();
    StallReport r = probe_stalls(seconds, kStallThresholdUs, [] {
        return static_cast<std::int64_t>(
            std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now().time_since_epoch()).count());
    });
    const auto after = read_steal();
    const long hz = sysconf(_SC_CLK_TCK);
    if (before && after && hz > 0 && *after >= *before) {
        r.steal_ms = static_cast<double>(*after - *before) * 1e3 / static_cast<double>(hz);
    }
    // The waking half, as dmaprobe's wait_until waits for a frame's release.
    r.wake_period_us = kWakePeriodUs;
    const auto period = std::chrono::nanoseconds(static_cast<std::int64_t>(kWakePeriodUs * 1e3));
    const auto lead = std::chrono::microseconds(200);
    const auto wakes = static_cast<std::int64_t>(seconds * 1e6 / kWakePeriodUs);
    // Two sources in turn, as the frames alternate between two buffers; every byte written once
    // before, so that no first touch is timed.
    std::vector<unsigned char> src0(kWakeCopyBytes, 0x5A), src1(kWakeCopyBytes, 0xA5), dst(kWakeCopyBytes, 1);
    r.copy_bytes = kWakeCopyBytes;
    const auto t0 = Clock::now() + period;
    r.wake_late_us.reserve(static_cast<std::size_t>(std::max<std::int64_t>(wakes, 0)));
    r.wake_copy_us.reserve(r.wake_late_us.capacity());
    for (std::int64_t k = 0; k < wakes; ++k) {
        const auto release = t0 + period * k;
        if (Clock::now() < release - lead) std::this_thread::sleep_until(release - lead);
        auto now = Clock::now();
        while (now < release) now = Clock::now();
        r.wake_late_us.push_back(std::chrono::duration<double, std::micro>(now - release).count());
        std::memcpy(dst.data(), (k % 2 == 0 ? src0 : src1).data(), kWakeCopyBytes);
        r.wake_copy_us.push_back(std::chrono::duration<double, std::micro>(Clock::now() - now).count());
    }
    // Keeps the copies from being optimised away.
    if (dst[kWakeCopyBytes / 2] == 0) r.wake_copy_us.push_back(0.0);
    r.wake_seconds = static_cast<double>(wakes) * kWakePeriodUs * 1e-6;
    return r;
}

StallSummary summarize_stalls(const StallReport& r) {
    StallSummary s;
    s.count = r.stalls.size() + r.dropped;
    s.per_second = r.seconds > 0 ? static_cast<double>(s.count) / r.seconds : 0.0;
    if (!r.wake_late_us.empty()) {
        std::vector<double> late = r.wake_late_us;
        std::sort(late.begin(), late.end());
        s.wakes = late.size();
        s.wake_p50_us = dmasim::core::percentile_sorted(late, 0.50);
        s.wake_p90_us = dmasim::core::percentile_sorted(late, 0.90);
        s.wake_p99_us = dmasim::core::percentile_sorted(late, 0.99);
        s.wake_max_us = late.back();
    }
    if (!r.wake_copy_us.empty()) {
        std::vector<double> copy = r.wake_copy_us;
        std::sort(copy.begin(), copy.end());
        s.copy_p50_us = dmasim::core::percentile_sorted(copy, 0.50);
        s.copy_p90_us = dmasim::core::percentile_sorted(copy, 0.90);
        s.copy_p99_us = dmasim::core::percentile_sorted(copy, 0.99);
        s.copy_max_us = copy.back();
    }
    if (r.stalls.empty()) return s;
    std::vector<double> us;
    us.reserve(r.stalls.size());
    for (const Stall& x : r.stalls) {
        us.push_back(x.us);
        s.stalled_ms += x.us * 1e-3;
    }
    std::sort(us.begin(), us.end());
    s.p50_us = dmasim::core::percentile_sorted(us, 0.50);
    s.p90_us = dmasim::core::percentile_sorted(us, 0.90);
    s.p99_us = dmasim::core::percentile_sorted(us, 0.99);
    s.max_us = us.back();
    return s;
}

std::string stalls_csv(const StallReport& r) {
    std::string out = "kind,at_s,us,copy_us\n";
    char buf[96];
    for (const Stall& x : r.stalls) {
        std::snprintf(buf, sizeof buf, "spin,%.6f,%.3f,\n", x.at_s, x.us);
        out += buf;
    }
    for (std::size_t k = 0; k < r.wake_late_us.size(); ++k) {
        const double copy = k < r.wake_copy_us.size() ? r.wake_copy_us[k] : 0.0;
        std::snprintf(buf, sizeof buf, "wake,%.6f,%.3f,%.3f\n", static_cast<double>(k + 1) * r.wake_period_us * 1e-6,
                      r.wake_late_us[k], copy);
        out += buf;
    }
    return out;
}

}  // namespace dmaprobe
