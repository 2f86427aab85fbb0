#include "dmasim/core/units.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <iomanip>
#include <limits>
#include <sstream>

#include "dmasim/core/error.h"

namespace dmasim::core {

namespace {

struct UnitScale {
    std::string_view suffix;
    double scale;
};

std::string_view trim(std::string_view s) {
    while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
    while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
    return s;
}

// Splits "12.5 KiB" into 12.5 and "KiB". The number must be a plain decimal: no hex, no
// leading '+', no exponent on a size (an exponent would hide typos like "1e").
struct Split {
    double number;
    std::string_view unit;
};

Split split_number(std::string_view text, std::string_view what) {
    const std::string_view s = trim(text);
    std::size_t i = 0;
    if (i < s.size() && s[i] == '-') ++i;
    const std::size_t digits_start = i;
    bool seen_digit = false;
    bool seen_dot = false;
    while (i < s.size() && (std::isdigit(static_cast<unsigned char>(s[i])) || s[i] == '.')) {
        if (s[i] == '.') {
            if (seen_dot) break;
            seen_dot = true;
        } else {
            seen_digit = true;
        }
        ++i;
    }
    if (!seen_digit || i == digits_start) {
        throw UnitError("'" + std::string(text) + "' is not a " + std::string(what) +
                        " (expected a number followed by a unit)");
    }
    const std::string num(s.substr(0, i));
    const double value = std::strtod(num.c_str(), nullptr);
    return Split{value, trim(s.substr(i))};
}

template <std::size_t N>
double find_scale(const std::array<UnitScale, N>& table, std::string_view unit,
                  std::string_view text, std::string_view what, std::string_view accepted) {
    for (const auto& u : table) {
        if (u.suffix == unit) return u.scale;
    }
    throw UnitError("'" + std::string(text) + "' is not a " + std::string(what) + ": unknown unit '" +
                    std::string(unit) + "' (accepted: " + std::string(accepted) + ")");
}

void require_non_negative(double v, std::string_view text, std::string_view what) {
    if (v < 0.0) {
        throw UnitError("'" + std::string(text) + "' is not a valid " + std::string(what) +
                        ": it must not be negative");
    }
}

// A number of some hundred digits parses to infinity; no quantity of the model is infinite.
void require_finite(double v, std::string_view text, std::string_view what) {
    if (!std::isfinite(v)) throw UnitError("'" + std::string(text) + "' is too large a " + std::string(what));
}

constexpr double kKi = 1024.0;

}  // namespace

Bytes parse_bytes(std::string_view text) {
    static constexpr std::array<UnitScale, 10> table{{
        {"", 1.0},
        {"B", 1.0},
        {"KB", 1e3},
        {"MB", 1e6},
        {"GB", 1e9},
        {"TB", 1e12},
        {"KiB", kKi},
        {"MiB", kKi * kKi},
        {"GiB", kKi * kKi * kKi},
        {"TiB", kKi * kKi * kKi * kKi},
    }};
    const Split sp = split_number(text, "size");
    require_non_negative(sp.number, text, "size");
    const double scale = find_scale(table, sp.unit, text, "size", "B, KB, MB, GB, TB, KiB, MiB, GiB, TiB");
    const double bytes = sp.number * scale;
    if (bytes > static_cast<double>(std::numeric_limits<std::uint64_t>::max() / 2)) {
        throw UnitError("'" + std::string(text) + "' is too large a size");
    }
    const double rounded = std::round(bytes);
    if (std::fabs(bytes - rounded) > 1e-6 * std::max(1.0, bytes)) {
        throw UnitError("'" + std::string(text) + "' is not a whole number of bytes");
    }
    return Bytes{static_cast<std::uint64_t>(rounded)};
}

Duration parse_duration(std::string_view text) {
    static constexpr std::array<UnitScale, 6> table{{
        {"ps", 1.0},
        {"ns", 1e3},
        {"us", 1e6},
        {"ms", 1e9},
        {"s", 1e12},
        {"µs", 1e6},
    }};
    const Split sp = split_number(text, "duration");
    require_non_negative(sp.number, text, "duration");
    if (sp.unit.empty()) {
        throw UnitError("'" + std::string(text) +
                        "' needs a time unit (ps, ns, us, ms or s): a bare number is ambiguous");
    }
    const double scale = find_scale(table, sp.unit, text, "duration", "ps, ns, us, ms, s");
    const double ps = sp.number * scale;
    if (ps > 9.0e18) throw UnitError("'" + std::string(text) + "' is too long a duration");
    return Duration{static_cast<std::int64_t>(std::llround(ps))};
}

Bandwidth parse_bandwidth(std::string_view text) {
    static constexpr std::array<UnitScale, 9> table{{
        {"B/s", 1.0},
        {"KB/s", 1e3},
        {"MB/s", 1e6},
        {"GB/s", 1e9},
        {"TB/s", 1e12},
        {"KiB/s", kKi},
        {"MiB/s", kKi * kKi},
        {"GiB/s", kKi * kKi * kKi},
        {"TiB/s", kKi * kKi * kKi * kKi},
    }};
    const Split sp = split_number(text, "bandwidth");
    require_non_negative(sp.number, text, "bandwidth");
    if (sp.unit.empty()) {
        throw UnitError("'" + std::string(text) + "' needs a bandwidth unit (e.g. GB/s)");
    }
    const double bytes_per_s = sp.number * find_scale(table, sp.unit, text, "bandwidth",
                                                      "B/s, KB/s, MB/s, GB/s, TB/s, KiB/s, MiB/s, GiB/s, TiB/s");
    require_finite(bytes_per_s, text, "bandwidth");
    return Bandwidth{bytes_per_s};
}

TransferRate parse_transfer_rate(std::string_view text) {
    static constexpr std::array<UnitScale, 2> table{{{"GT/s", 1.0}, {"MT/s", 1e-3}}};
    const Split sp = split_number(text, "transfer rate");
    require_non_negative(sp.number, text, "transfer rate");
    if (sp.unit.empty()) {
        throw UnitError("'" + std::string(text) + "' needs a unit (GT/s or MT/s)");
    }
    const double gt_per_s = sp.number * find_scale(table, sp.unit, text, "transfer rate", "GT/s, MT/s");
    require_finite(gt_per_s, text, "transfer rate");
    return TransferRate{gt_per_s};
}

std::string to_string(Bytes b) {
    static constexpr std::array<std::string_view, 4> names{"TiB", "GiB", "MiB", "KiB"};
    for (std::size_t i = 0; i < names.size(); ++i) {
        const unsigned shift = 10U * static_cast<unsigned>(names.size() - i);
        const std::uint64_t unit = std::uint64_t{1} << shift;
        if (b.value >= unit && b.value % unit == 0) {
            return std::to_string(b.value >> shift) + std::string(names[i]);
        }
    }
    return std::to_string(b.value) + "B";
}

std::string to_string(Duration d) {
    static constexpr std::array<std::pair<std::string_view, std::int64_t>, 4> units{{
        {"s", 1000LL * 1000 * 1000 * 1000},
        {"ms", 1000LL * 1000 * 1000},
        {"us", 1000LL * 1000},
        {"ns", 1000LL},
    }};
    for (const auto& [name, scale] : units) {
        if (d.ps != 0 && d.ps % scale == 0) return std::to_string(d.ps / scale) + std::string(name);
    }
    return std::to_string(d.ps) + "ps";
}

namespace {
// Twelve significant digits, never an exponent: what is printed (config.json, messages,
// calibration files) must parse again, and the unit parsers take plain decimals only.
std::string compact_double(double v) {
    std::ostringstream os;
    os.precision(12);
    os << v;
    std::string text = os.str();
    if (text.find_first_of("eE") == std::string::npos || !std::isfinite(v)) return text;
    std::ostringstream fixed;
    // Digits after the point: enough for twelve significant ones of a small value, none for a
    // large one (all its significant digits are before the point).
    const int exponent = static_cast<int>(std::floor(std::log10(std::fabs(v))));
    fixed << std::fixed << std::setprecision(std::max(0, 11 - exponent)) << v;
    text = fixed.str();
    if (text.find('.') != std::string::npos) {
        text.erase(text.find_last_not_of('0') + 1);
        if (text.back() == '.') text.pop_back();
    }
    return text;
}
}  // namespace

std::string to_string(Bandwidth bw) { return compact_double(bw.bytes_per_s * 1e-9) + "GB/s"; }

std::string to_string(TransferRate r) { return compact_double(r.gt_per_s) + "GT/s"; }

}  // namespace dmasim::core
