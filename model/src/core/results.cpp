#include "dmasim/core/results.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <climits>
#include <csignal>
#include <cstring>
#include <dirent.h>
#include <fcntl.h>
#include <pthread.h>
#include <sys/stat.h>
#include <unistd.h>

#include "dmasim/core/error.h"
#include "dmasim/core/units.h"

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

// A time or a ratio: strtod reads "nan" and "inf" as numbers, and either would travel through
// medians into compare.csv or the optimiser.
double parse_finite(const std::string& s, const std::string& where, const std::string& col) {
    const double v = parse_double(s, where, col);
    if (!std::isfinite(v)) throw InputError(where, col, "'" + s + "' is not a finite number");
    if (v < 0) throw InputError(where, col, "'" + s + "' is negative");
    return v;
}

// A count: digits only. Through a double, "-4096" or "1e20" would wrap or overflow the integer.
// `what` says what the column holds, for the message.
std::uint64_t parse_whole(const std::string& s, const std::string& where, const std::string& col, std::uint64_t lo,
                          std::uint64_t hi, const std::string& what) {
    std::uint64_t v = 0;
    bool ok = !s.empty() && s.size() <= 19;
    for (const char c : s) {
        if (c < '0' || c > '9') {
            ok = false;
            break;
        }
        v = v * 10 + static_cast<std::uint64_t>(c - '0');
    }
    if (!ok || v < lo || v > hi) throw InputError(where, col, "'" + s + "' is not " + what);
    return v;
}

}  // namespace

bool ResultRow::time_only() const {
    // An overlap row's bytes over its time would mix copies with the kernel between them: its
    // measure is the speed-up.
    return variant.rfind("setup=", 0) == 0 || variant == "misses" || strategy == "async_overlap";
}

double ResultRow::gbps() const {
    if (time_us <= 0.0) return 0.0;
    return static_cast<double>(size_bytes) * directions / time_us / 1e3;
}

const std::string& results_csv_header() {
    static const std::string header =
        "scenario,strategy,direction,directions,size_bytes,time_us,gbps,source,repetitions,"
        "p10_us,p90_us,min_us,max_us,variant,status,note,cv,calibration,speedup,host_read_bytes,host_written_bytes";
    return header;
}

std::string format_result_row(const ResultRow& r) {
    std::string s;
    s += csv_field(r.scenario) + ',' + csv_field(r.strategy) + ',' + csv_field(r.direction) + ',';
    s += std::to_string(r.directions) + ',' + std::to_string(r.size_bytes) + ',';
    s += fmt_time(r.time_us) + ',' + (r.time_only() ? std::string() : fmt_double(r.gbps())) + ',' + csv_field(r.source) + ',';
    s += std::to_string(r.repetitions) + ',' + fmt_time(r.p10_us) + ',' + fmt_time(r.p90_us) + ',';
    s += fmt_time(r.min_us) + ',' + fmt_time(r.max_us) + ',';
    s += csv_field(r.variant) + ',' + csv_field(r.status) + ',' + csv_field(r.note) + ',';
    s += fmt_double(r.cv) + ',' + csv_field(r.calibration) + ',' + (r.speedup > 0 ? fmt_double(r.speedup) : std::string());
    const auto count = [](std::int64_t v) { return v < 0 ? std::string() : std::to_string(v); };
    s += ',' + count(r.host_read_bytes) + ',' + count(r.host_written_bytes);
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
        auto time = [&](const char* name, double fallback) {
            const std::string v = get(name);
            return v.empty() ? fallback : parse_finite(v, where, name);
        };
        ResultRow r;
        r.scenario = get("scenario");
        r.strategy = get("strategy");
        r.direction = get("direction");
        const std::string status = get("status");
        r.status = status.empty() ? "ok" : status;
        const bool ok = r.status == "ok";
        r.directions = static_cast<int>(
            parse_whole(get("directions"), where, "directions", 1, 2, "1 or 2 (how many directions moved size_bytes)"));
        r.size_bytes = parse_whole(get("size_bytes"), where, "size_bytes", 1, kMaxResultSize,
                                   "a whole number of bytes from 1 to " + std::to_string(kMaxResultSize) + " (" +
                                       to_string(Bytes{kMaxResultSize}) + ")");
        r.time_us = time("time_us", 0);
        if (ok && !(r.time_us > 0)) throw InputError(where, "time_us", "an ok row's time must be positive");
        r.source = get("source");
        const std::string reps = get("repetitions");
        r.repetitions = reps.empty() ? 1
                                     : static_cast<int>(parse_whole(reps, where, "repetitions", ok ? 1 : 0, 1u << 30,
                                                                    ok ? "a whole number of repetitions, at least 1 in an ok row"
                                                                       : "a whole number of repetitions"));
        r.p10_us = time("p10_us", r.time_us);
        r.p90_us = time("p90_us", r.time_us);
        r.min_us = time("min_us", r.time_us);
        r.max_us = time("max_us", r.time_us);
        r.variant = get("variant");
        r.note = get("note");
        r.cv = time("cv", 0);
        r.calibration = get("calibration");
        r.speedup = time("speedup", 0);
        for (const auto& [name, field] : {std::pair<const char*, std::int64_t*>{"host_read_bytes", &r.host_read_bytes},
                                          {"host_written_bytes", &r.host_written_bytes}}) {
            const std::string v = get(name);
            if (!v.empty()) {
                *field = static_cast<std::int64_t>(
                    parse_whole(v, where, name, 0, std::uint64_t{1} << 62, "a whole number of bytes, or empty"));
            }
        }
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
    files_.push_back(File{(dir_.empty() ? std::string(".") : dir_) + "/" + name, std::move(content), true});
}

void OutputFiles::add_path(const std::string& path, std::string content) {
    files_.push_back(File{path, std::move(content), false});
}

namespace {

std::string error_text(int e) { return std::strerror(e); }

// "a/b" -> ("a", "b"); "b" -> (".", "b"); "a/b/" -> ("a/b", ""): the caller refuses the empty name.
std::pair<std::string, std::string> split_path(const std::string& path) {
    const auto slash = path.find_last_of('/');
    if (slash == std::string::npos) return {".", path};
    std::string dir = path.substr(0, slash);
    while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
    return {dir.empty() ? std::string("/") : dir, path.substr(slash + 1)};
}

bool exists(const std::string& path, struct stat& st) { return ::lstat(path.c_str(), &st) == 0; }

// The directory `dir` is, or would be once created, writable: checked before a command's work so
// that a bad -o costs nothing.
void check_dir(const std::string& dir) {
    struct stat st {};
    if (::stat(dir.c_str(), &st) == 0) {
        if (!S_ISDIR(st.st_mode)) throw InputError(dir, "", "is a file, not a directory");
        if (::access(dir.c_str(), W_OK | X_OK) != 0) throw InputError(dir, "", "cannot write here: " + error_text(errno));
        return;
    }
    if (errno != ENOENT && errno != ENOTDIR) throw InputError(dir, "", error_text(errno));
    // The nearest ancestor that exists is where the directory would be created.
    std::string up = dir;
    for (;;) {
        up = split_path(up).first;
        if (::stat(up.c_str(), &st) == 0) break;
        if (errno != ENOENT && errno != ENOTDIR) throw InputError(dir, "", "cannot create it: " + up + ": " + error_text(errno));
        if (up == "." || up == "/") throw InputError(dir, "", "cannot create it");
    }
    if (!S_ISDIR(st.st_mode)) throw InputError(dir, "", "cannot create it: " + up + " is a file, not a directory");
    if (::access(up.c_str(), W_OK | X_OK) != 0) {
        throw InputError(dir, "", "cannot create it in " + up + ": " + error_text(errno));
    }
}

void make_dirs(const std::string& dir) {
    struct stat st {};
    if (::stat(dir.c_str(), &st) == 0) {
        if (!S_ISDIR(st.st_mode)) throw InputError(dir, "", "is a file, not a directory");
        return;
    }
    const std::string parent = split_path(dir).first;
    if (parent != dir) make_dirs(parent);
    if (::mkdir(dir.c_str(), 0777) != 0 && errno != EEXIST) {
        throw InputError(dir, "", "cannot create the directory: " + error_text(errno));
    }
}

// What an ordinary open() or mkdir() would give: mkstemp's and mkdtemp's 0600 and 0700 would
// hide the results from other users.
mode_t creation_mask() {
    const mode_t mask = ::umask(0);
    ::umask(mask);
    return mask;
}

void write_fd(int fd, const std::string& content, const std::string& final_path) {
    const char* p = content.data();
    std::size_t left = content.size();
    while (left > 0) {
        const ssize_t n = ::write(fd, p, left);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) {
            const int e = errno;
            ::close(fd);
            throw InputError(final_path, "", "cannot write: " + error_text(e));
        }
        p += n;
        left -= static_cast<std::size_t>(n);
    }
    if (::close(fd) != 0) throw InputError(final_path, "", "cannot write: " + error_text(errno));
}

// Holds back the signals that end a command while files are written and moved: the command's
// handler (model/src/app) would otherwise exit between a temporary file and its rename.
class HoldTerminationSignals {
public:
    HoldTerminationSignals() {
        sigset_t set;
        sigemptyset(&set);
        for (const int sig : {SIGINT, SIGTERM, SIGHUP}) sigaddset(&set, sig);
        ::pthread_sigmask(SIG_BLOCK, &set, &old_);
    }
    ~HoldTerminationSignals() { ::pthread_sigmask(SIG_SETMASK, &old_, nullptr); }
    HoldTerminationSignals(const HoldTerminationSignals&) = delete;
    HoldTerminationSignals& operator=(const HoldTerminationSignals&) = delete;

private:
    sigset_t old_;
};

struct Target {
    std::string name;
    const std::string* content;
    std::string temp;  // once written
};

// The files of one directory and how they get there.
struct Group {
    std::string dir;
    std::vector<Target> files;
    std::string staging;  // a directory beside `dir` holding the new files, or empty: temps in `dir`
    bool exists = false;  // `dir` existed when staged
    bool swap = false;    // `dir` holds nothing but these files: exchange it with `staging`

    ~Group() {
        // Whatever was not moved into place.
        for (const auto& f : files) {
            if (!f.temp.empty()) ::unlink(f.temp.c_str());
        }
        if (!staging.empty()) ::rmdir(staging.c_str());
    }
};

// A real directory (not a symlink, not a mount point) whose entries are all among `files`.
bool only_these_files(const std::string& dir, const std::vector<Target>& files) {
    struct stat st {}, up {};
    const auto [parent, base] = split_path(dir);
    if (base.empty() || base == "." || base == "..") return false;
    if (!exists(dir, st) || !S_ISDIR(st.st_mode) || ::stat(parent.c_str(), &up) != 0 || up.st_dev != st.st_dev) return false;
    if (::access(parent.c_str(), W_OK | X_OK) != 0) return false;
    DIR* d = ::opendir(dir.c_str());
    if (d == nullptr) return false;
    bool only = true;
    while (const dirent* e = ::readdir(d)) {
        const std::string n = e->d_name;
        if (n == "." || n == "..") continue;
        struct stat fs {};
        const bool ours = std::any_of(files.begin(), files.end(), [&](const Target& t) { return t.name == n; });
        if (!ours || !exists(dir + "/" + n, fs) || !S_ISREG(fs.st_mode)) {
            only = false;
            break;
        }
    }
    ::closedir(d);
    return only;
}

void stage(Group& g) {
    make_dirs(g.dir == "/" ? g.dir : split_path(g.dir).first);
    struct stat st {};
    g.exists = ::stat(g.dir.c_str(), &st) == 0;
    if (g.exists && !S_ISDIR(st.st_mode)) throw InputError(g.dir, "", "is a file, not a directory");
    g.swap = g.exists && only_these_files(g.dir, g.files);
    const mode_t mask = creation_mask();
    const mode_t mode = 0666 & ~mask;
    if (!g.exists || g.swap) {
        const auto [parent, base] = split_path(g.dir);
        std::string tmpl = parent + "/." + base + ".tmp-XXXXXX";
        if (::mkdtemp(tmpl.data()) == nullptr) throw InputError(g.dir, "", "cannot write beside it: " + error_text(errno));
        g.staging = tmpl;
        ::chmod(g.staging.c_str(), 0777 & ~mask);
    }
    for (auto& f : g.files) {
        const std::string final_path = g.dir + "/" + f.name;
        int fd = -1;
        if (!g.staging.empty()) {
            f.temp = g.staging + "/" + f.name;
            fd = ::open(f.temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode);
        } else {
            std::string tmpl = g.dir + "/." + f.name + ".tmp-XXXXXX";
            fd = ::mkstemp(tmpl.data());
            if (fd >= 0) {
                f.temp = tmpl;
                ::fchmod(fd, mode);
            }
        }
        if (fd < 0) {
            f.temp.clear();
            throw InputError(final_path, "", "cannot write: " + error_text(errno));
        }
        write_fd(fd, *f.content, final_path);
    }
}

void move_each(Group& g) {
    for (auto& f : g.files) {
        const std::string final_path = g.dir + "/" + f.name;
        if (::rename(f.temp.c_str(), final_path.c_str()) != 0) {
            throw InputError(final_path, "", "cannot move into place: " + error_text(errno));
        }
        f.temp.clear();
    }
}

void publish(Group& g) {
    if (!g.staging.empty() && !g.exists && ::rename(g.staging.c_str(), g.dir.c_str()) == 0) {
        for (auto& f : g.files) f.temp.clear();
        g.staging.clear();
        return;
    }
#ifdef RENAME_EXCHANGE
    if (!g.staging.empty() && g.swap &&
        ::renameat2(AT_FDCWD, g.staging.c_str(), AT_FDCWD, g.dir.c_str(), RENAME_EXCHANGE) == 0) {
        // The staging path now holds the previous run's files (only these names, as checked).
        for (auto& f : g.files) {
            ::unlink(f.temp.c_str());
            f.temp.clear();
        }
        ::rmdir(g.staging.c_str());
        g.staging.clear();
        return;
    }
#endif
    // The directory appeared meanwhile, or the filesystem cannot exchange: file by file.
    move_each(g);
}

}  // namespace

void OutputFiles::check() const {
    std::vector<std::string> dirs;
    std::vector<std::string> seen;
    for (const auto& [path, content, in_dir] : files_) {
        const auto [dir, name] = split_path(path);
        if (name.empty() || name == "." || name == "..") throw InputError(path, "", "names a directory, not a file");
        if (std::find(dirs.begin(), dirs.end(), dir) == dirs.end()) {
            try {
                check_dir(dir);
            } catch (const InputError& e) {
                // A single output file is what the user named: the error names it.
                if (in_dir) throw;
                throw InputError(path, "", std::string("cannot write it: ") + e.what());
            }
            dirs.push_back(dir);
        }
        // The same file by two spellings ("out/a" and "./out/a") is caught by its real path.
        char real[PATH_MAX];
        const std::string id = ::realpath(dir.c_str(), real) != nullptr ? std::string(real) + "/" + name : path;
        if (std::find(seen.begin(), seen.end(), id) != seen.end()) throw InputError(path, "", "is named for two outputs");
        seen.push_back(id);
        struct stat st {};
        if (::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) {
            throw InputError(path, "", "is a directory; it cannot be replaced by a file");
        }
    }
}

std::vector<std::string> OutputFiles::commit() const {
    check();
    std::vector<std::unique_ptr<Group>> groups;
    for (const auto& [path, content, in_dir] : files_) {
        const auto [dir, name] = split_path(path);
        auto it = std::find_if(groups.begin(), groups.end(), [&d = dir](const auto& g) { return g->dir == d; });
        if (it == groups.end()) {
            groups.push_back(std::make_unique<Group>());
            groups.back()->dir = dir;
            it = groups.end() - 1;
        }
        (*it)->files.push_back(Target{name, &content, {}});
    }
    const HoldTerminationSignals hold;
    // Every file is written before any is moved: a failure leaves the previous output whole.
    for (auto& g : groups) stage(*g);
    for (auto& g : groups) publish(*g);
    std::vector<std::string> written;
    for (const auto& f : files_) written.push_back(f.path);
    return written;
}

double percentile(std::vector<double> sample, double q) {
    std::sort(sample.begin(), sample.end());
    return percentile_sorted(sample, q);
}

double percentile_sorted(const std::vector<double>& sorted, double q) {
    if (sorted.empty()) return 0.0;
    const double pos = q * static_cast<double>(sorted.size() - 1);
    const auto lo = static_cast<std::size_t>(std::floor(pos));
    const auto hi = std::min(lo + 1, sorted.size() - 1);
    const double frac = pos - static_cast<double>(lo);
    return sorted[lo] + (sorted[hi] - sorted[lo]) * frac;
}

double normal_quantile(double q) {
    double lo = -10.0, hi = 10.0;
    for (int i = 0; i < 200; ++i) {
        const double mid = 0.5 * (lo + hi);
        (0.5 * std::erfc(-mid / std::sqrt(2.0)) < q ? lo : hi) = mid;
    }
    return 0.5 * (lo + hi);
}

}  // namespace dmasim::core
