#include "dmasim/core/results.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <sys/stat.h>
#include <unistd.h>

#include "dmasim/core/error.h"

namespace dmasim::core {

namespace {

std::string csv_field(const std::string& s) {
    if (s.find_first_of(",\"\n\r") == std::string::npos) return s;
    std::string out = "\"";
    for (char c : s) {
        if (c == '"') out += '"';
        out += c;
    }
    out += '"';
    return out;
}

std::string fmt_double(double v) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.6g", v);
    return buf;
}

std::string fmt_time(double us) {
    // Times span picoseconds to seconds; keep 4 decimals below 1 s of microseconds and
    // enough significant digits above it.
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.4f", us);
    return buf;
}

std::vector<std::string> split_csv_line(const std::string& line, const std::string& where) {
    std::vector<std::string> out;
    std::string cur;
    bool quoted = false;
    for (std::size_t i = 0; i < line.size(); ++i) {
        const char c = line[i];
        if (quoted) {
            if (c == '"') {
                if (i + 1 < line.size() && line[i + 1] == '"') {
                    cur += '"';
                    ++i;
                } else {
                    quoted = false;
                }
            } else {
                cur += c;
            }
        } else if (c == '"') {
            quoted = true;
        } else if (c == ',') {
            out.push_back(cur);
            cur.clear();
        } else {
            cur += c;
        }
    }
    if (quoted) throw InputError(where, "", "unterminated quoted field");
    out.push_back(cur);
    return out;
}

double parse_double(const std::string& s, const std::string& where, const std::string& col) {
    char* end = nullptr;
    const double v = std::strtod(s.c_str(), &end);
    if (s.empty() || *end != '\0') throw InputError(where, col, "'" + s + "' is not a number");
    return v;
}

}  // namespace

double ResultRow::gbps() const {
    if (time_us <= 0.0) return 0.0;
    return static_cast<double>(size_bytes) * directions / time_us / 1e3;
}

const std::string& results_csv_header() {
    static const std::string header =
        "scenario,strategy,direction,directions,size_bytes,time_us,gbps,source,repetitions,"
        "p10_us,p90_us,min_us,max_us,variant,status,note,cv";
    return header;
}

std::string format_result_row(const ResultRow& r) {
    std::string s;
    s += csv_field(r.scenario) + ',' + csv_field(r.strategy) + ',' + csv_field(r.direction) + ',';
    s += std::to_string(r.directions) + ',' + std::to_string(r.size_bytes) + ',';
    s += fmt_time(r.time_us) + ',' + fmt_double(r.gbps()) + ',' + csv_field(r.source) + ',';
    s += std::to_string(r.repetitions) + ',' + fmt_time(r.p10_us) + ',' + fmt_time(r.p90_us) + ',';
    s += fmt_time(r.min_us) + ',' + fmt_time(r.max_us) + ',';
    s += csv_field(r.variant) + ',' + csv_field(r.status) + ',' + csv_field(r.note) + ',';
    s += fmt_double(r.cv);
    return s;
}

void write_results_csv(std::ostream& out, const std::vector<ResultRow>& rows) {
    out << results_csv_header() << '\n';
    for (const auto& r : rows) out << format_result_row(r) << '\n';
}

std::vector<ResultRow> read_results_csv(std::istream& in, const std::string& origin) {
    std::string line;
    if (!std::getline(in, line)) throw InputError(origin, "", "empty results file");
    if (!line.empty() && line.back() == '\r') line.pop_back();
    const auto header = split_csv_line(line, origin + ":1");
    auto col = [&](const std::string& name) -> int {
        const auto it = std::find(header.begin(), header.end(), name);
        return it == header.end() ? -1 : static_cast<int>(it - header.begin());
    };
    static const char* required[] = {"scenario", "strategy", "direction", "directions",
                                     "size_bytes", "time_us", "gbps", "source"};
    for (const char* name : required) {
        if (col(name) < 0) throw InputError(origin, name, "results file lacks this column");
    }
    std::vector<ResultRow> rows;
    int lineno = 1;
    while (std::getline(in, line)) {
        ++lineno;
        if (!line.empty() && line.back() == '\r') line.pop_back();
        if (line.empty()) continue;
        const std::string where = origin + ":" + std::to_string(lineno);
        const auto f = split_csv_line(line, where);
        if (f.size() != header.size()) {
            throw InputError(where, "", "has " + std::to_string(f.size()) + " fields, header has " +
                                            std::to_string(header.size()));
        }
        auto get = [&](const char* name) -> std::string {
            const int i = col(name);
            return i < 0 ? std::string() : f[static_cast<std::size_t>(i)];
        };
        auto num = [&](const char* name, double fallback) {
            const std::string v = get(name);
            return v.empty() ? fallback : parse_double(v, where, name);
        };
        ResultRow r;
        r.scenario = get("scenario");
        r.strategy = get("strategy");
        r.direction = get("direction");
        r.directions = static_cast<int>(num("directions", 1));
        r.size_bytes = static_cast<std::uint64_t>(num("size_bytes", 0));
        r.time_us = num("time_us", 0);
        r.source = get("source");
        r.repetitions = static_cast<int>(num("repetitions", 1));
        r.p10_us = num("p10_us", r.time_us);
        r.p90_us = num("p90_us", r.time_us);
        r.min_us = num("min_us", r.time_us);
        r.max_us = num("max_us", r.time_us);
        r.variant = get("variant");
        const std::string status = get("status");
        r.status = status.empty() ? "ok" : status;
        r.note = get("note");
        r.cv = num("cv", 0);
        rows.push_back(std::move(r));
    }
    return rows;
}

std::string json_escape(const std::string& s) {
    std::string out;
    out.reserve(s.size() + 2);
    for (char c : s) {
        switch (c) {
            case '"': out += "\\\""; break;
            case '\\': out += "\\\\"; break;
            case '\n': out += "\\n"; break;
            case '\r': out += "\\r"; break;
            case '\t': out += "\\t"; break;
            default:
                if (static_cast<unsigned char>(c) < 0x20) {
                    char buf[8];
                    std::snprintf(buf, sizeof buf, "\\u%04x", c);
                    out += buf;
                } else {
                    out += c;
                }
        }
    }
    return out;
}

void JsonWriter::prefix(const std::string& key) {
    if (!first_.empty()) {
        if (!first_.back()) out_ += ',';
        first_.back() = false;
        out_ += '\n';
        out_.append(2 * first_.size(), ' ');
    }
    if (!key.empty()) out_ += '"' + json_escape(key) + "\": ";
}

JsonWriter& JsonWriter::begin_object(const std::string& key) {
    prefix(key);
    out_ += '{';
    first_.push_back(true);
    return *this;
}

JsonWriter& JsonWriter::end_object() {
    const bool empty = first_.back();
    first_.pop_back();
    if (!empty) {
        out_ += '\n';
        out_.append(2 * first_.size(), ' ');
    }
    out_ += '}';
    return *this;
}

JsonWriter& JsonWriter::begin_array(const std::string& key) {
    prefix(key);
    out_ += '[';
    first_.push_back(true);
    return *this;
}

JsonWriter& JsonWriter::end_array() {
    const bool empty = first_.back();
    first_.pop_back();
    if (!empty) {
        out_ += '\n';
        out_.append(2 * first_.size(), ' ');
    }
    out_ += ']';
    return *this;
}

JsonWriter& JsonWriter::value(const std::string& key, const std::string& v) {
    prefix(key);
    out_ += '"' + json_escape(v) + '"';
    return *this;
}

JsonWriter& JsonWriter::value(const std::string& key, double v) {
    prefix(key);
    if (!std::isfinite(v)) {
        out_ += "null";
    } else {
        char buf[64];
        std::snprintf(buf, sizeof buf, "%.17g", v);
        out_ += buf;
    }
    return *this;
}

JsonWriter& JsonWriter::value(const std::string& key, std::int64_t v) {
    prefix(key);
    out_ += std::to_string(v);
    return *this;
}

JsonWriter& JsonWriter::value(const std::string& key, std::uint64_t v) {
    prefix(key);
    out_ += std::to_string(v);
    return *this;
}

JsonWriter& JsonWriter::value(const std::string& key, bool v) {
    prefix(key);
    out_ += v ? "true" : "false";
    return *this;
}

JsonWriter& JsonWriter::null_value(const std::string& key) {
    prefix(key);
    out_ += "null";
    return *this;
}

JsonWriter& JsonWriter::raw(const std::string& key, const std::string& json) {
    prefix(key);
    // A newline in valid JSON is always layout (strings cannot hold one): indent the nested
    // document to this depth so that the file reads as one.
    const std::size_t end = json.find_last_not_of(" \n");
    for (std::size_t i = 0; end != std::string::npos && i <= end; ++i) {
        out_ += json[i];
        if (json[i] == '\n') out_.append(2 * first_.size(), ' ');
    }
    return *this;
}

std::string JsonWriter::str() const { return out_ + '\n'; }

OutputFiles::OutputFiles(std::string dir) : dir_(std::move(dir)) {}

void OutputFiles::add(const std::string& name, std::string content) {
    files_.emplace_back(name, std::move(content));
}

namespace {
void make_dirs(const std::string& dir) {
    if (dir.empty()) return;
    std::string partial;
    std::size_t pos = 0;
    while (pos != std::string::npos) {
        pos = dir.find('/', pos + 1);
        partial = dir.substr(0, pos);
        if (partial.empty()) continue;
        if (::mkdir(partial.c_str(), 0755) != 0 && errno != EEXIST) {
            throw std::runtime_error(dir + ": cannot create directory '" + partial + "'");
        }
    }
    struct stat st {};
    if (::stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
        throw std::runtime_error(dir + ": is not a directory");
    }
}
}  // namespace

std::vector<std::string> OutputFiles::commit() const {
    make_dirs(dir_);
    std::vector<std::string> temps;
    std::vector<std::string> finals;
    const std::string base = dir_.empty() ? std::string(".") : dir_;
    auto cleanup = [&] {
        for (const auto& t : temps) std::remove(t.c_str());
    };
    for (const auto& [name, content] : files_) {
        const std::string final_path = base + "/" + name;
        const std::string temp_path = base + "/." + name + ".tmp" + std::to_string(::getpid());
        temps.push_back(temp_path);
        std::ofstream out(temp_path, std::ios::binary | std::ios::trunc);
        out << content;
        out.close();
        if (!out) {
            cleanup();
            throw std::runtime_error(final_path + ": cannot write");
        }
        finals.push_back(final_path);
    }
    for (std::size_t i = 0; i < temps.size(); ++i) {
        if (std::rename(temps[i].c_str(), finals[i].c_str()) != 0) {
            cleanup();
            throw std::runtime_error(finals[i] + ": cannot rename into place");
        }
    }
    return finals;
}

double percentile(std::vector<double> sample, double q) {
    if (sample.empty()) return 0.0;
    std::sort(sample.begin(), sample.end());
    const double pos = q * static_cast<double>(sample.size() - 1);
    const auto lo = static_cast<std::size_t>(std::floor(pos));
    const auto hi = std::min(lo + 1, sample.size() - 1);
    const double frac = pos - static_cast<double>(lo);
    return sample[lo] + (sample[hi] - sample[lo]) * frac;
}

}  // namespace dmasim::core
