// The host's stalls, in two ways, before any case, to isolate what the periodic streams' rare
// late frames are made of on a machine (docs/harness.md, --host-stalls):
// - spinning: a core that spins reading the clock sees every time it was taken away (the
//   hypervisor running another guest on it, an interrupt) as a gap between two reads;
// - waking: a thread that sleeps until 200 us before each release of a stream and spins to it,
//   as dmaprobe's periodic cases do, is late at the release by however long its core took to
//   come back from the sleep (a virtual CPU that halts gives its physical core away); at each
//   release it then copies 4 MiB with memcpy, as a pageable frame's CPU copy does, and times it
//   (a copy that touches memory meets what a register-only spin does not).
// Plain C++: the detector is unit-tested with a scripted clock.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace dmaprobe {

// A gap between two consecutive clock reads longer than the probe's threshold.
struct Stall {
    double at_s = 0;  // when it began, from the probe's start
    double us = 0;    // how long the core was away
};

struct StallReport {
    double seconds = 0;          // how long the probe spun
    double threshold_us = 0;     // shorter gaps are not stalls
    std::uint64_t reads = 0;     // clock reads in all
    std::vector<Stall> stalls;   // in time order, at most kMaxStalls (then `dropped` counts)
    std::uint64_t dropped = 0;   // stalls past kMaxStalls (counted in the statistics' count only)
    std::optional<double> steal_ms;  // /proc/stat steal time over the probe, all CPUs (absent: unreadable)
    // The waking half: each release's lateness (us; 0 when reached on time), every period_us.
    double wake_period_us = 0;
    double wake_seconds = 0;
    std::vector<double> wake_late_us;
    std::vector<double> wake_copy_us;  // the memcpy after each release (us)
    std::uint64_t copy_bytes = 0;
};

// A spinning core on a machine that misbehaves can gap every few microseconds; the list stays
// bounded (memory and the CSV), the count does not.
inline constexpr std::size_t kMaxStalls = 200000;
// Gaps below this are the timer tick and ordinary interrupt handling (a few us), which every
// machine has and which no frame of the periodic streams notices.
inline constexpr double kStallThresholdUs = 10.0;

// Spins for `seconds`, reading `now_ns` (monotonic nanoseconds) back to back, and records every
// gap longer than threshold_us. Clock is any callable returning std::int64_t nanoseconds.
template <class Clock>
StallReport probe_stalls(double seconds, double threshold_us, Clock now_ns) {
    StallReport r;
    r.threshold_us = threshold_us;
    const std::int64_t start = now_ns();
    const auto end = start + static_cast<std::int64_t>(seconds * 1e9);
    const auto threshold = static_cast<std::int64_t>(threshold_us * 1e3);
    std::int64_t last = start;
    for (;;) {
        const std::int64_t t = now_ns();
        ++r.reads;
        if (t - last > threshold) {
            if (r.stalls.size() < kMaxStalls) {
                r.stalls.push_back({static_cast<double>(last - start) * 1e-9, static_cast<double>(t - last) * 1e-3});
            } else {
                ++r.dropped;
            }
        }
        last = t;
        if (t >= end) break;
    }
    r.seconds = static_cast<double>(last - start) * 1e-9;
    return r;
}

// The whole machine's steal time in clock ticks: the 8th number of /proc/stat's "cpu" line.
// nullopt when the text has no such line or it is short (kernels before 2.6.11).
std::optional<std::uint64_t> steal_ticks(const std::string& proc_stat);

// The release period of the waking half: the radar stream's.
inline constexpr double kWakePeriodUs = 8000.0;
// What the waking half copies at each release: the radar stream's frame.
inline constexpr std::size_t kWakeCopyBytes = 4u << 20;

// Runs the probe on the calling thread with the steady clock: `seconds` spinning (with
// /proc/stat's steal time over it), then `seconds` waking every kWakePeriodUs.
StallReport measure_host_stalls(double seconds);

// Summary statistics of a report, for metadata.json.
struct StallSummary {
    std::uint64_t count = 0;
    double per_second = 0;
    double stalled_ms = 0;  // sum of the recorded stalls
    double p50_us = 0, p90_us = 0, p99_us = 0, max_us = 0;  // over the recorded stalls; 0 when none
    std::uint64_t wakes = 0;
    double wake_p50_us = 0, wake_p90_us = 0, wake_p99_us = 0, wake_max_us = 0;  // lateness at the release
    double copy_p50_us = 0, copy_p90_us = 0, copy_p99_us = 0, copy_max_us = 0;  // the memcpy after it
};
StallSummary summarize_stalls(const StallReport& r);

// host-stalls.csv: kind,at_s,us,copy_us: one line a stall ("spin", its start and length) and one
// a release of the waking half ("wake", the release, its lateness and the copy's time).
std::string stalls_csv(const StallReport& r);

}  // namespace dmaprobe
