// Physical quantities with units, and their text form ("4KiB", "750ns", "32GT/s", "25GB/s").
//
// Dependency-free (C++17 standard library only): the CUDA harness compiles this file with nvcc
// and nothing else, so it must not pull in fmt, yaml-cpp, Boost or SystemC.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace dmasim::core {

// A byte count. Sizes in scenarios, MPS/MRRS, buffer capacities.
struct Bytes {
    std::uint64_t value = 0;
    constexpr bool operator==(const Bytes& o) const { return value == o.value; }
    constexpr bool operator!=(const Bytes& o) const { return value != o.value; }
};

// A duration, kept in integer picoseconds: SystemC's default time resolution is 1 ps, so a
// duration converts to sc_time without rounding and sweeps stay bit-for-bit reproducible.
struct Duration {
    std::int64_t ps = 0;
    constexpr double ns() const { return static_cast<double>(ps) * 1e-3; }
    constexpr double us() const { return static_cast<double>(ps) * 1e-6; }
    constexpr double seconds() const { return static_cast<double>(ps) * 1e-12; }
    constexpr bool operator==(const Duration& o) const { return ps == o.ps; }
    constexpr bool operator!=(const Duration& o) const { return ps != o.ps; }
};

// A data rate in bytes per second (memory bandwidth, CPU copy rate).
struct Bandwidth {
    double bytes_per_s = 0.0;
    constexpr double gb_per_s() const { return bytes_per_s * 1e-9; }
    bool operator==(const Bandwidth& o) const { return bytes_per_s == o.bytes_per_s; }
};

// A signalling rate per lane in gigatransfers per second (PCIe: 2.5 .. 64 GT/s).
struct TransferRate {
    double gt_per_s = 0.0;
    bool operator==(const TransferRate& o) const { return gt_per_s == o.gt_per_s; }
};

constexpr Bytes operator""_B(unsigned long long v) { return Bytes{v}; }
constexpr Bytes operator""_KiB(unsigned long long v) { return Bytes{v << 10}; }
constexpr Bytes operator""_MiB(unsigned long long v) { return Bytes{v << 20}; }
constexpr Bytes operator""_GiB(unsigned long long v) { return Bytes{v << 30}; }
constexpr Duration operator""_ps(unsigned long long v) { return Duration{static_cast<std::int64_t>(v)}; }
constexpr Duration operator""_ns(unsigned long long v) {
    return Duration{static_cast<std::int64_t>(v) * 1000};
}
constexpr Duration operator""_us(unsigned long long v) {
    return Duration{static_cast<std::int64_t>(v) * 1000 * 1000};
}
constexpr Duration operator""_ms(unsigned long long v) {
    return Duration{static_cast<std::int64_t>(v) * 1000 * 1000 * 1000};
}

// Parsers. Each accepts a number followed by an optional unit (whitespace allowed between).
// They throw UnitError with a message that says what was expected; callers add file and key.
// Bytes: B, KB, MB, GB, TB (powers of 1000), KiB, MiB, GiB, TiB (powers of 1024); a bare
// integer is bytes. Fractions are allowed when they give a whole number of bytes ("1.5KiB").
Bytes parse_bytes(std::string_view text);
// Durations: ps, ns, us, ms, s. A unit is required (a bare number is ambiguous).
Duration parse_duration(std::string_view text);
// Bandwidth: B/s, KB/s, MB/s, GB/s, TB/s, KiB/s, MiB/s, GiB/s, TiB/s. Unit required.
Bandwidth parse_bandwidth(std::string_view text);
// Transfer rate: GT/s or MT/s. Unit required.
TransferRate parse_transfer_rate(std::string_view text);

// Canonical text forms, readable and accepted back by the parsers: an exact binary unit where
// one fits ("4KiB", "1GiB"), else bytes; the largest time unit that keeps an exact value.
std::string to_string(Bytes b);
std::string to_string(Duration d);
std::string to_string(Bandwidth bw);
std::string to_string(TransferRate r);

}  // namespace dmasim::core
