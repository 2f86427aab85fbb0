// The band's calibration (docs/calibration.md, "The band"): how wide the model's p10-p90 band must
// be, beyond the machines' spread, to hold the share of the leases' medians a p10-p90 band
// should hold. The machines' band (config::HostSpreadParams) covers what the host does from
// machine to machine; what is left outside it is the model's own error, which differs by kind of
// row (config::ModelErrorParams). This is the pure part: rows already simulated in, sigmas and
// coverage out, so that tests can give it rows whose answer is known.
#pragma once

#include <cstddef>
#include <array>
#include <cstdint>
#include <string>
#include <utility>
#include <tuple>
#include <vector>

namespace dmasim::app {

// One measured row the model predicts, with the machines' band around it.
struct BandFitRow {
    std::string key;   // result_key
    std::string kind;  // config::ModelErrorParams::kind
    bool train = true; // false: held out by the calibration's fixed split
    double time_us = 0.0;
    double p10_us = 0.0;  // the machines' band (equal to time_us where it has none)
    double p90_us = 0.0;
    std::vector<std::pair<std::string, double>> leases;  // each lease's own median of the row
};

struct BandKindFit {
    std::string kind;
    std::size_t train_rows = 0, held_rows = 0;  // rows of the fixed split's training and held-out parts
    double sigma = 0.0;  // the fitted model_error sigma (log); -1: no training row to fit it on
    // Shares of lease medians inside the band (0..1; -1 where there were none).
    double machines_only = -1.0;  // the machines' band alone, training rows
    double train = -1.0;          // with sigma, training rows (at least the target unless sigma hit 2)
    double held_out_rows = -1.0;  // with sigma, the held-out rows
    double held_out_leases = -1.0;// each lease L against a sigma fitted without L's values, every row
    double band_width_pct = 0.0;      // median over the rows of (p90 - p10) / time, with sigma
    double measured_spread_pct = 0.0; // median over the rows of the leases' (p90 - p10) / median
    // The same, each row's divided by the share of the population's p10-p90 that as many leases
    // show on average (expected_p10_p90_width(n) / 2.5631: 0.80 for eight): the machines'
    // spread as the band is meant to cover it, not as a handful of leases samples it.
    double population_spread_pct = 0.0;
    std::size_t values = 0;           // lease medians of the kind's rows
};

struct BandFit {
    double target = 0.8;
    std::vector<BandKindFit> kinds;  // by kind, sorted
    // Over every kind: as in BandKindFit.
    double machines_only = -1.0, train = -1.0, held_out_rows = -1.0, held_out_leases = -1.0;
    double band_width_pct = 0.0, measured_spread_pct = 0.0, population_spread_pct = 0.0;
};

// The band of a row widened by `sigma` as sim::run_with_host_band widens it (log space,
// sqrt(machines^2 + (1.2816 sigma)^2) below and above the time).
std::pair<double, double> widened(const BandFitRow& r, double sigma);

// For each kind: the least sigma in [0, 2] whose band holds at least `target` of the lease
// medians of its training rows (to 1e-4), and the coverage it gives on the held-out rows and on
// each lease left out of the fit. A kind with held-out rows only gets no sigma (-1): nothing was
// fitted, and its coverage is that of the machines' band. `target` is 0.5..0.99.
BandFit fit_band(const std::vector<BandFitRow>& rows, double target);

// The host's spread between machines (config::HostSpreadParams) from the leases' own medians: for a
// row, sigma is the p10-p90 width of log(lease median / median over leases) divided by the width
// that n draws of N(0, 1) give on average (Blom's scores, interpolated the same way: with eight
// leases the sample's p10-p90 is 0.8 of the population's, so dividing by 2.563 would understate
// it); a kind's sigma is the median over its rows of four leases or more, and a group's:
//   calls      <- pinned copies under 64 KiB (a call and a wait around a few us of GPU)
//   cpu_copies <- pageable copies of 64 KiB and more (the CPU's own copies)
//   setup      <- the median of the four setup kinds (cudaMallocHost, cudaFreeHost,
//                 cudaHostRegister, cudaHostUnregister)
struct SpreadRow {
    std::string strategy;
    std::string variant;
    std::uint64_t size_bytes = 0;
    std::vector<double> leases;  // each lease's median of the row
};
struct HostSpreadGroup {
    std::string group;        // calls, cpu_copies, setup
    double sigma = -1.0;      // -1: no row to fit it from
    std::size_t rows = 0;
    std::vector<std::pair<std::string, double>> kinds;  // each kind's sigma ("setup=register", ...)
};
std::vector<HostSpreadGroup> fit_host_spread(const std::vector<SpreadRow>& rows);

// The p10-p90 width (linear interpolation between ranks) of n standard normal draws, on average:
// 2.563 as n grows, less for few.
double expected_p10_p90_width(std::size_t n);

// One stream of periodic frames the leases measured (pinned frames, no processing): each lease's
// p10, p50, p90, p99 and max frame latency, in us.
struct FrameStream {
    std::string name;
    double period_us = 0.0;
    std::int64_t frames = 0;
    std::vector<std::array<double, 5>> leases;
    std::vector<std::size_t> lease;  // each entry's lease (its index in the measured set), where known
};
struct FrameJitterFit {
    double body_us = 0.0, body_sigma = 0.0, slow_probability = 0.0, slow_us = 0.0, slow_sigma = 0.0;
    double rms_log_error = 0.0;  // weighted, over the statistics below
    struct Line {
        std::string stream;
        // p50 - p10, p90 - p50, p99 - p50, max - p50: the median over leases, and the model's.
        std::array<double, 4> measured{}, model{};
    };
    std::vector<Line> lines;
    // Pageable streams (fit_cold_sigma, which the calibration runs after): each one's name, the
    // model's excess of its frames over a warm copy (us) and the cold_sigma fitted to it.
    std::vector<std::tuple<std::string, double, double>> cold;
};
// config::FrameJitterParams from the leases' frames: the model's lateness (body on every frame,
// the slow mode with probability slow_probability (1 - exp(-idle / idle_time_us)), idle = period -
// p50) simulated on 300 leases of each stream's frame count, with fixed draws; each statistic the
// median over those leases, as measured; least squares in log with the p99 weighted 4, p10 and
// p90 1, the max 1/4 (one frame in 500 or 1000 only shapes the slow mode's tail); coordinate
// descent on a log scale. Throws std::invalid_argument with no stream of two leases or more.
FrameJitterFit fit_frame_jitter(const std::vector<FrameStream>& streams, double idle_time_us);

// config::FrameJitterParams::cold_sigma from a stream of pageable frames, the rest of the jitter
// as fitted: each frame's lateness as above plus cold_us (exp(cold_sigma z) - 1), cold_us the
// model's excess of a frame over a warm copy; the same statistics, weights and leases as above,
// a one-dimensional search on a log scale from 0.01 to 3. `line` gets the stream's statistics.
// Throws std::invalid_argument for a stream of fewer than two leases or no excess to draw.
double fit_cold_sigma(const FrameStream& stream, const FrameJitterFit& jitter, double idle_time_us, double cold_us,
                      FrameJitterFit::Line& line);

// Which leases are noisy (config::NoisyHostParams), from their streams of pageable frames, where a
// noisy host shows most (the CPU copies through the whole frame, and its copy stalls): a lease's
// score is the mean over those streams of log(p99 / p50). Sorted, the scores split at the widest
// gap between neighbours when that gap is at least log(kNoisyGap), the leases above it noisy;
// else, and for fewer than four leases, none is. A lease that measured no such stream is quiet.
// `leases`: how many leases the set has (FrameStream::lease indexes them).
inline constexpr double kNoisyGap = 1.5;
std::vector<bool> noisy_leases(const std::vector<FrameStream>& pageable, std::size_t leases);

// The stream with only the leases whose `noisy` entry is `which`.
FrameStream leases_of_kind(const FrameStream& s, const std::vector<bool>& noisy, bool which);

// config::NoisyHostParams (all but noisy_share) from the noisy leases' streams: on top of the quiet
// machines' jitter as fitted, and each pageable stream's cold excess as fitted (`cold`: stream,
// cold_us, cold_sigma), a frame wakes late by the wake mode with probability wake_probability
// times (1 - exp(-idle / idle_time_us)), as the slow mode (lognormal, wake_us and wake_sigma), and a pageable frame's copy, taking the stream's median
// frame, meets Poisson(median / busy_interval_us) stalls of lognormal length (busy_us,
// busy_sigma). The same statistics, weights and simulated leases as fit_frame_jitter;
// coordinate descent on a log scale. Throws std::invalid_argument with no stream of two noisy
// leases or more.
struct NoisyHostFit {
    double wake_probability = 0.0, wake_us = 0.0, wake_sigma = 0.0;
    double busy_interval_us = 0.0, busy_us = 0.0, busy_sigma = 0.0;
    double rms_log_error = 0.0;
    std::vector<FrameJitterFit::Line> lines;
};
NoisyHostFit fit_noisy_host(const std::vector<FrameStream>& pinned, const std::vector<FrameStream>& pageable,
                            const std::vector<std::tuple<std::string, double, double>>& cold, const FrameJitterFit& quiet,
                            double idle_time_us);

}  // namespace dmasim::app
