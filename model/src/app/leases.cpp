// Reading a machine's leases and the cross-lease statistics (dmasim/app/leases.h).
#include "dmasim/app/leases.h"

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "dmasim/app/commands.h"
#include "dmasim/core/error.h"
#include "dmasim/core/input_file.h"
#include "dmasim/topology/platform_file.h"

#include <yaml-cpp/yaml.h>

namespace dmasim::app {

namespace {

namespace fs = std::filesystem;

// lease.json is one flat object written by hand or by a script; a full JSON library would be a
// new dependency for five keys, so this reads exactly that: an object of string, boolean, number
// or null values.
class FlatJson {
public:
    FlatJson(const std::string& text, const std::string& origin) : s_(text), origin_(origin) {}

    struct Value {
        enum class Kind { kString, kBool, kNumber, kNull } kind = Kind::kNull;
        std::string text;
        bool flag = false;
    };

    std::vector<std::pair<std::string, Value>> parse() {
        std::vector<std::pair<std::string, Value>> out;
        skip_ws();
        expect('{');
        skip_ws();
        if (peek() == '}') {
            ++i_;
        } else {
            for (;;) {
                skip_ws();
                if (peek() != '"') fail("expected a key in double quotes");
                std::string key = string();
                skip_ws();
                expect(':');
                skip_ws();
                for (const auto& kv : out) {
                    if (kv.first == key) throw core::InputError(origin_, key, "given twice");
                }
                out.emplace_back(key, value(key));
                skip_ws();
                if (peek() == ',') {
                    ++i_;
                    continue;
                }
                expect('}');
                break;
            }
        }
        skip_ws();
        if (i_ != s_.size()) fail("text after the closing '}'");
        return out;
    }

private:
    [[noreturn]] void fail(const std::string& what) const {
        throw core::InputError(origin_, "", "malformed JSON at offset " + std::to_string(i_) + ": " + what);
    }
    char peek() const { return i_ < s_.size() ? s_[i_] : '\0'; }
    void skip_ws() {
        while (i_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[i_]))) ++i_;
    }
    void expect(char c) {
        if (peek() != c) fail(std::string("expected '") + c + "'");
        ++i_;
    }
    bool literal(const char* word) {
        const std::string w(word);
        if (s_.compare(i_, w.size(), w) != 0) return false;
        i_ += w.size();
        return true;
    }
    static void append_utf8(std::string& out, std::uint32_t cp) {
        if (cp < 0x80) {
            out += static_cast<char>(cp);
        } else if (cp < 0x800) {
            out += static_cast<char>(0xC0 | (cp >> 6));
            out += static_cast<char>(0x80 | (cp & 0x3F));
        } else if (cp < 0x10000) {
            out += static_cast<char>(0xE0 | (cp >> 12));
            out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
            out += static_cast<char>(0x80 | (cp & 0x3F));
        } else {
            out += static_cast<char>(0xF0 | (cp >> 18));
            out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
            out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
            out += static_cast<char>(0x80 | (cp & 0x3F));
        }
    }
    std::uint32_t hex4() {
        if (i_ + 4 > s_.size()) fail("short \\u escape");
        std::uint32_t v = 0;
        for (int k = 0; k < 4; ++k) {
            const char c = s_[i_++];
            v <<= 4;
            if (c >= '0' && c <= '9') v |= static_cast<std::uint32_t>(c - '0');
            else if (c >= 'a' && c <= 'f') v |= static_cast<std::uint32_t>(c - 'a' + 10);
            else if (c >= 'A' && c <= 'F') v |= static_cast<std::uint32_t>(c - 'A' + 10);
            else fail("bad \\u escape");
        }
        return v;
    }
    std::string string() {
        expect('"');
        std::string out;
        for (;;) {
            if (i_ >= s_.size()) fail("unterminated string");
            const char c = s_[i_++];
            if (c == '"') return out;
            if (static_cast<unsigned char>(c) < 0x20) fail("control character in a string");
            if (c != '\\') {
                out += c;
                continue;
            }
            if (i_ >= s_.size()) fail("unterminated string");
            const char e = s_[i_++];
            switch (e) {
                case '"': out += '"'; break;
                case '\\': out += '\\'; break;
                case '/': out += '/'; break;
                case 'b': out += '\b'; break;
                case 'f': out += '\f'; break;
                case 'n': out += '\n'; break;
                case 'r': out += '\r'; break;
                case 't': out += '\t'; break;
                case 'u': {
                    std::uint32_t cp = hex4();
                    if (cp >= 0xD800 && cp < 0xDC00) {
                        if (!literal("\\u")) fail("lone surrogate in \\u escape");
                        const std::uint32_t lo = hex4();
                        if (lo < 0xDC00 || lo >= 0xE000) fail("bad surrogate pair");
                        cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
                    } else if (cp >= 0xDC00 && cp < 0xE000) {
                        fail("lone surrogate in \\u escape");
                    }
                    append_utf8(out, cp);
                    break;
                }
                default: fail(std::string("unknown escape \\") + e);
            }
        }
    }
    Value value(const std::string& key) {
        Value v;
        const char c = peek();
        if (c == '"') {
            v.kind = Value::Kind::kString;
            v.text = string();
        } else if (literal("true")) {
            v.kind = Value::Kind::kBool;
            v.flag = true;
        } else if (literal("false")) {
            v.kind = Value::Kind::kBool;
        } else if (literal("null")) {
            v.kind = Value::Kind::kNull;
        } else if (c == '-' || std::isdigit(static_cast<unsigned char>(c))) {
            const std::size_t start = i_;
            while (i_ < s_.size() && std::strchr("+-.eE0123456789", s_[i_]) != nullptr) ++i_;
            v.kind = Value::Kind::kNumber;
            v.text = s_.substr(start, i_ - start);
            char* end = nullptr;
            std::strtod(v.text.c_str(), &end);
            if (end != v.text.c_str() + v.text.size()) fail("bad number for '" + key + "'");
        } else if (c == '{' || c == '[') {
            throw core::InputError(origin_, key, "nested objects and arrays are not allowed (lease.json is flat)");
        } else {
            fail("expected a value for '" + key + "'");
        }
        return v;
    }

    const std::string& s_;
    std::string origin_;
    std::size_t i_ = 0;
};

std::string slurp_file(const std::string& path) { return core::read_input_file(path, "lease"); }

MeasuredRun read_run(const std::string& name, const fs::path& csv) {
    std::istringstream in(core::read_input_file(csv.string(), "measured results"));
    return MeasuredRun{name, csv.string(), core::read_results_csv(in, csv.string())};
}

// run<N> folders, by N: run2 comes before run10.
long run_number(const std::string& name) {
    if (name.size() <= 3 || name.compare(0, 3, "run") != 0) return -1;
    for (std::size_t i = 3; i < name.size(); ++i) {
        if (!std::isdigit(static_cast<unsigned char>(name[i]))) return -1;
    }
    return std::strtol(name.c_str() + 3, nullptr, 10);
}

std::vector<fs::path> run_folders(const fs::path& dir) {
    std::vector<std::pair<long, fs::path>> found;
    for (const auto& e : fs::directory_iterator(dir)) {
        const long n = run_number(e.path().filename().string());
        if (n >= 0 && e.is_directory() && fs::is_regular_file(e.path() / "measured.csv")) found.emplace_back(n, e.path());
    }
    std::sort(found.begin(), found.end());
    std::vector<fs::path> out;
    for (auto& f : found) out.push_back(std::move(f.second));
    return out;
}

bool is_lease_folder(const fs::path& dir) {
    return fs::is_regular_file(dir / "measured.csv") || fs::is_regular_file(dir / "lease.json") ||
           !run_folders(dir).empty();
}

// machine.txt is a list of "## <command>" sections; the matrix is the one headed
// "## nvidia-smi topo -m", up to the next heading. The lines before it stay as empty lines, so
// the line numbers in the matrix parser's errors are machine.txt's; "" when there is no such
// section.
std::string smi_topo_section(const std::string& text) {
    static const std::string kHeading = "## nvidia-smi topo -m";
    std::istringstream in(text);
    std::string line;
    std::string out;
    bool inside = false;
    bool found = false;
    while (std::getline(in, line)) {
        if (line.rfind("## ", 0) == 0) {
            if (inside) break;
            inside = line.find_last_not_of(" \t\r") + 1 == kHeading.size() && line.rfind(kHeading, 0) == 0;
            found = found || inside;
            out += '\n';
            continue;
        }
        out += inside ? line + '\n' : std::string("\n");
    }
    return found ? out : std::string();
}

Lease read_lease(const fs::path& dir) {
    Lease lease;
    lease.path = dir.string();
    lease.name = fs::path(dir).lexically_normal().filename().string();
    if (lease.name.empty()) lease.name = fs::path(dir).lexically_normal().parent_path().filename().string();
    const fs::path info = dir / "lease.json";
    if (fs::is_regular_file(info)) lease.info = parse_lease_json(slurp_file(info.string()), info.string());
    if (fs::is_regular_file(dir / "measured.csv")) lease.runs.push_back(read_run("measured.csv", dir / "measured.csv"));
    for (const auto& r : run_folders(dir)) lease.runs.push_back(read_run(r.filename().string(), r / "measured.csv"));
    if (lease.runs.empty()) {
        throw core::InputError(info.string(), "", "a lease folder without measured.csv or run<N>/measured.csv");
    }
    const fs::path machine = dir / "machine.txt";
    if (fs::is_regular_file(machine)) {
        lease.gpu_topology_origin = machine.string();
        const std::string section = smi_topo_section(core::read_input_file(machine.string(), "machine description"));
        if (!section.empty()) lease.gpu_topology = topology::read_nvidia_smi_topo(section, machine.string() + " (nvidia-smi topo -m)");
    }
    const fs::path metadata = dir / "metadata.json";
    if (fs::is_regular_file(metadata)) {
        lease.kernel_overhead_us = parse_kernel_overhead(core::read_input_file(metadata.string(), "lease metadata"), metadata.string());
    }
    const auto& excluded = lease.info.exclude_scenarios;
    for (auto& run : lease.runs) {
        for (auto& r : run.rows) {
            if (std::find(excluded.begin(), excluded.end(), r.scenario) == excluded.end()) continue;
            r.status = "excluded";
            r.note = "excluded by " + info.string() + ": " + lease.info.note;
        }
    }
    return lease;
}

double median(std::vector<double> v) { return core::percentile(std::move(v), 0.5); }

}  // namespace

std::vector<std::string> MeasuredSet::files() const {
    std::vector<std::string> out;
    for (const auto& l : leases) {
        for (const auto& r : l.runs) out.push_back(r.csv_path);
    }
    return out;
}

LeaseInfo parse_lease_json(const std::string& text, const std::string& origin) {
    LeaseInfo info;
    for (const auto& [key, v] : FlatJson(text, origin).parse()) {
        using Kind = FlatJson::Value::Kind;
        if (key == "legacy") {
            if (v.kind != Kind::kBool) throw core::InputError(origin, key, "expected true or false");
            info.legacy = v.flag;
        } else if (key == "note" || key == "date" || key == "commit") {
            if (v.kind != Kind::kString) throw core::InputError(origin, key, "expected a string");
            (key == "note" ? info.note : key == "date" ? info.date : info.commit) = v.text;
        } else if (key == "exclude_scenarios") {
            if (v.kind != Kind::kString) throw core::InputError(origin, key, "expected a string of comma-separated scenario names");
            std::stringstream names(v.text);
            std::string name;
            while (std::getline(names, name, ',')) {
                if (name.empty()) throw core::InputError(origin, key, "an empty scenario name");
                info.exclude_scenarios.push_back(name);
            }
        } else {
            throw core::InputError(origin, key, "unknown key (lease.json knows legacy, note, date, commit, exclude_scenarios)");
        }
    }
    if (!info.exclude_scenarios.empty() && info.note.empty()) {
        throw core::InputError(origin, "note", "exclude_scenarios needs a note saying why");
    }
    return info;
}

std::optional<double> parse_kernel_overhead(const std::string& text, const std::string& origin) {
    // JSON is YAML (flow style): yaml-cpp reads dmaprobe's metadata as it is.
    YAML::Node root;
    try {
        root = YAML::Load(text);
    } catch (const YAML::Exception& e) {
        throw core::InputError(origin, "", std::string("not JSON: ") + e.what());
    }
    if (!root.IsMap()) throw core::InputError(origin, "", "not a JSON object");
    const YAML::Node k = root["kernel_calibration"];
    if (!k || k.IsNull()) return std::nullopt;
    const YAML::Node v = k.IsMap() ? k["overhead_us"] : YAML::Node();
    double us = -1.0;
    try {
        if (v && v.IsScalar()) us = v.as<double>();
    } catch (const YAML::Exception&) {
        us = -1.0;
    }
    if (!(us > 0.0 && us <= 1e6)) {
        throw core::InputError(origin, "kernel_calibration.overhead_us", "must be a number of microseconds above 0 and at most 1 s");
    }
    return us;
}

KernelOverhead median_kernel_overhead(const std::vector<Lease>& leases) {
    std::vector<double> v;
    for (const auto& l : leases) {
        if (l.kernel_overhead_us) v.push_back(*l.kernel_overhead_us);
    }
    KernelOverhead k;
    k.leases = v.size();
    if (!v.empty()) k.median_us = median(std::move(v));
    return k;
}

MeasuredSet read_measured_set(const std::string& path) {
    MeasuredSet set;
    set.path = path;
    const fs::path p(path);
    if (fs::is_regular_file(p)) {
        // A CSV on its own: a lease of one run, named after its folder.
        Lease lease;
        lease.path = p.parent_path().string();
        lease.name = p.parent_path().filename().string();
        if (lease.name.empty()) lease.name = p.filename().string();
        lease.runs.push_back(read_run(p.filename().string(), p));
        set.leases.push_back(std::move(lease));
        return set;
    }
    if (!fs::is_directory(p)) throw core::InputError(path, "", "cannot open measured results (no such file or folder)");
    if (is_lease_folder(p)) {
        set.leases.push_back(read_lease(p));
        return set;
    }
    std::vector<fs::path> dirs;
    for (const auto& e : fs::directory_iterator(p)) {
        if (e.is_directory() && is_lease_folder(e.path())) dirs.push_back(e.path());
    }
    std::sort(dirs.begin(), dirs.end());
    for (const auto& d : dirs) set.leases.push_back(read_lease(d));
    if (set.leases.empty()) {
        throw core::InputError(path, "", "no measured.csv, run<N>/measured.csv or lease folder holding them");
    }
    return set;
}

void keep_leases(MeasuredSet& set, const std::vector<std::string>& names, const std::string& option) {
    if (names.empty()) return;
    const auto named = [](const Lease& l, const std::string& n) {
        const auto dash = l.name.find_last_of('-');
        return l.name == n || (dash != std::string::npos && l.name.substr(dash + 1) == n);
    };
    std::string all;
    for (const auto& l : set.leases) all += (all.empty() ? "" : ", ") + l.name;
    for (const auto& n : names) {
        if (std::none_of(set.leases.begin(), set.leases.end(), [&](const Lease& l) { return named(l, n); })) {
            throw core::InputError(option, n, "no lease of " + set.path + " is named so (it has: " + all + ")");
        }
    }
    std::vector<Lease> kept;
    for (auto& l : set.leases) {
        if (std::any_of(names.begin(), names.end(), [&](const std::string& n) { return named(l, n); })) {
            kept.push_back(std::move(l));
        }
    }
    set.leases = std::move(kept);
}

std::size_t exclude_other_gpu_paths(MeasuredSet& set, const std::vector<config::Scenario>& scenarios) {
    // The modelled path of each peer scenario between two GPUs: the route class of its platform.
    struct Modelled {
        std::string platform;
        std::string src;  // GPU<n>, as nvidia-smi numbers them
        std::string dst;
        std::string route;
    };
    std::map<std::string, Modelled> peer;
    for (const auto& s : scenarios) {
        const config::PeerOptions& po = s.options.peer;
        if (std::find(s.strategies.begin(), s.strategies.end(), "peer") == s.strategies.end() ||
            po.src_device == po.dst_device) {
            continue;
        }
        const topology::Platform p = topology::load_platform(s);
        const auto gpus = topology::gpus(p);
        const auto in_range = [&](std::int64_t d) { return d >= 0 && static_cast<std::size_t>(d) < gpus.size(); };
        if (!in_range(po.src_device) || !in_range(po.dst_device)) continue;
        peer[s.name] = Modelled{p.name(), "GPU" + std::to_string(po.src_device), "GPU" + std::to_string(po.dst_device),
                                topology::route_class(p, gpus[static_cast<std::size_t>(po.src_device)],
                                                      gpus[static_cast<std::size_t>(po.dst_device)])};
    }
    std::size_t excluded = 0;
    for (auto& lease : set.leases) {
        if (!lease.gpu_topology) continue;
        for (auto& run : lease.runs) {
            for (auto& r : run.rows) {
                const auto it = peer.find(r.scenario);
                if (it == peer.end() || r.status != "ok") continue;
                const Modelled& m = it->second;
                const std::string measured = lease.gpu_topology->route_class(m.src, m.dst);
                if (measured.empty() || measured == m.route) continue;
                r.status = "excluded";
                r.note = "measured on a machine whose " + m.src + " and " + m.dst + " are " + measured + " (" +
                         lease.gpu_topology_origin + "), but platform " + m.platform + " joins them by " + m.route;
                ++excluded;
            }
        }
    }
    return excluded;
}

std::vector<CrossLeaseRow> cross_lease(const std::vector<Lease>& leases) {
    struct Acc {
        core::ResultRow first;      // first occurrence, any status
        bool have_ok = false;
        core::ResultRow first_ok;   // note and shape of the first ok row
        double min_us = 0.0;
        double max_us = 0.0;
        int repetitions = 0;
        // per lease: the run rows with the row ok
        std::map<std::size_t, std::vector<core::ResultRow>> by_lease;
    };
    std::vector<std::string> order;
    std::map<std::string, Acc> acc;
    for (std::size_t li = 0; li < leases.size(); ++li) {
        for (const auto& run : leases[li].runs) {
            std::set<std::string> seen;  // the first row of a key in a run counts
            for (const auto& r : run.rows) {
                const std::string key = result_key(r);
                if (!seen.insert(key).second) continue;
                auto [it, fresh] = acc.try_emplace(key);
                Acc& a = it->second;
                if (fresh) {
                    order.push_back(key);
                    a.first = r;
                }
                if (r.status != "ok" || !(r.time_us > 0.0)) continue;
                if (!a.have_ok) {
                    a.have_ok = true;
                    a.first_ok = r;
                    a.min_us = r.min_us;
                    a.max_us = r.max_us;
                }
                a.min_us = std::min(a.min_us, r.min_us);
                a.max_us = std::max(a.max_us, r.max_us);
                a.repetitions += r.repetitions;
                a.by_lease[li].push_back(r);
            }
        }
    }
    std::vector<CrossLeaseRow> out;
    out.reserve(order.size());
    for (const auto& key : order) {
        const Acc& a = acc.at(key);
        CrossLeaseRow c;
        c.key = key;
        // The variant as the key has it (old peer rows carried the mode in the note only).
        const std::string variant = key.substr(key.find_last_of('|') + 1);
        if (!a.have_ok) {
            c.row = a.first;
            c.row.variant = variant;
            out.push_back(std::move(c));
            continue;
        }
        std::vector<double> values, p10s, p90s, widths, cvs;
        for (const auto& [li, rows] : a.by_lease) {
            LeaseValue v;
            v.lease = leases[li].name;
            v.runs = rows.size();
            std::vector<double> t, lo, hi, w, cv;
            for (const auto& r : rows) {
                t.push_back(r.time_us);
                cv.push_back(r.cv);
                lo.push_back(r.p10_us);
                hi.push_back(r.p90_us);
                w.push_back((r.p90_us - r.p10_us) / r.time_us * 100.0);
            }
            v.time_us = median(t);
            v.p10_us = median(lo);
            v.p90_us = median(hi);
            v.width_pct = median(w);
            values.push_back(v.time_us);
            p10s.push_back(v.p10_us);
            p90s.push_back(v.p90_us);
            widths.push_back(v.width_pct);
            cvs.push_back(median(cv));
            c.per_lease.push_back(std::move(v));
        }
        c.median_us = median(values);
        c.min_us = *std::min_element(values.begin(), values.end());
        c.max_us = *std::max_element(values.begin(), values.end());
        c.spread_pct = (c.max_us / c.min_us - 1.0) * 100.0;
        c.within_p10_p90_pct = median(widths);
        c.flagged = c.spread_pct > kSpreadFlagPct;
        c.row = a.first_ok;
        c.row.variant = variant;
        c.row.time_us = c.median_us;
        c.row.p10_us = median(p10s);
        c.row.p90_us = median(p90s);
        c.row.min_us = a.min_us;
        c.row.max_us = a.max_us;
        c.row.repetitions = a.repetitions;
        c.row.cv = median(cvs);
        out.push_back(std::move(c));
    }
    return out;
}

std::vector<core::ResultRow> cross_lease_rows(const std::vector<CrossLeaseRow>& rows) {
    std::vector<core::ResultRow> out;
    out.reserve(rows.size());
    for (const auto& r : rows) out.push_back(r.row);
    return out;
}

std::string spread_category(const core::ResultRow& row) {
    const std::string& v = row.variant;
    if (v.rfind("setup=", 0) == 0) return v;
    if (v == "kernel") return "kernel";
    if (row.strategy == "periodic") return "periodic " + (v.empty() ? std::string("p50") : v);
    if (row.strategy == "peer" && v.rfind("peer=", 0) == 0) return "peer " + v.substr(5);
    return row.strategy + (row.size_bytes >= 65536 ? " >=64KiB" : " <64KiB");
}

}  // namespace dmasim::app
