#include "dmasim/core/plan.h"

#include <cerrno>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "dmasim/core/error.h"
#include "dmasim/core/input_file.h"

namespace dmasim::core {

namespace {

// Every control character, not only the usual whitespace: the reader splits fields on all
// that std::isspace calls space (form feed and vertical tab too; found by the plan fuzz target).
bool needs_escape(char c) {
    const auto u = static_cast<unsigned char>(c);
    return c == '%' || c == '=' || c == ' ' || c == '#' || u < 0x20 || u == 0x7f;
}

std::string encode(const std::string& v) {
    static constexpr char hex[] = "0123456789ABCDEF";
    std::string out;
    out.reserve(v.size());
    for (char c : v) {
        if (needs_escape(c)) {
            const auto u = static_cast<unsigned char>(c);
            out += '%';
            out += hex[u >> 4];
            out += hex[u & 0xF];
        } else {
            out += c;
        }
    }
    return out;
}

int hex_value(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    return -1;
}

std::string decode(const std::string& v, const std::string& where) {
    std::string out;
    out.reserve(v.size());
    for (std::size_t i = 0; i < v.size(); ++i) {
        if (v[i] != '%') {
            out += v[i];
            continue;
        }
        if (i + 2 >= v.size()) {
            throw InputError(where, "", "truncated %-escape in '" + v + "'");
        }
        const int hi = hex_value(v[i + 1]);
        const int lo = hex_value(v[i + 2]);
        if (hi < 0 || lo < 0) throw InputError(where, "", "bad %-escape in '" + v + "'");
        out += static_cast<char>(hi * 16 + lo);
        i += 2;
    }
    return out;
}

const std::string* find(const std::vector<std::pair<std::string, std::string>>& items,
                        const std::string& key) {
    for (const auto& [k, v] : items) {
        if (k == key) return &v;
    }
    return nullptr;
}

}  // namespace

void PlanCase::set(const std::string& key, const std::string& value) {
    for (auto& [k, v] : items_) {
        if (k == key) {
            v = value;
            return;
        }
    }
    items_.emplace_back(key, value);
}

void PlanCase::set(const std::string& key, std::int64_t value) { set(key, std::to_string(value)); }
void PlanCase::set(const std::string& key, std::uint64_t value) { set(key, std::to_string(value)); }
void PlanCase::set(const std::string& key, double value) {
    std::ostringstream os;
    os.precision(17);
    os << value;
    set(key, os.str());
}

bool PlanCase::has(const std::string& key) const { return find(items_, key) != nullptr; }

const std::string& PlanCase::str(const std::string& key) const {
    const std::string* v = find(items_, key);
    if (v == nullptr) throw std::runtime_error("plan case has no key '" + key + "'");
    return *v;
}

std::int64_t PlanCase::integer(const std::string& key) const {
    const std::string& v = str(key);
    errno = 0;
    char* end = nullptr;
    const long long r = std::strtoll(v.c_str(), &end, 10);
    if (v.empty() || errno != 0 || *end != '\0') {
        throw std::runtime_error("plan key '" + key + "' is not an integer: '" + v + "'");
    }
    return r;
}

double PlanCase::real(const std::string& key) const {
    const std::string& v = str(key);
    char* end = nullptr;
    const double r = std::strtod(v.c_str(), &end);
    if (v.empty() || *end != '\0') {
        throw std::runtime_error("plan key '" + key + "' is not a number: '" + v + "'");
    }
    return r;
}

std::string PlanCase::str_or(const std::string& key, const std::string& fallback) const {
    return has(key) ? str(key) : fallback;
}
std::int64_t PlanCase::integer_or(const std::string& key, std::int64_t fallback) const {
    return has(key) ? integer(key) : fallback;
}
double PlanCase::real_or(const std::string& key, double fallback) const {
    return has(key) ? real(key) : fallback;
}

std::string format_plan_case(const PlanCase& c) {
    std::string line = "case";
    for (const auto& [k, v] : c.items()) {
        line += ' ';
        line += encode(k);
        line += '=';
        line += encode(v);
    }
    return line;
}

void write_plan(std::ostream& out, const Plan& plan) {
    out << "# flat measurement plan written by dmasim; read by gpu_validation/dmaprobe\n";
    out << kPlanMagic << ' ' << kPlanVersion << '\n';
    for (const auto& c : plan.cases) out << format_plan_case(c) << '\n';
}

Plan read_plan(std::istream& in, const std::string& origin) {
    Plan plan;
    std::string line;
    int lineno = 0;
    bool header_seen = false;
    while (std::getline(in, line)) {
        ++lineno;
        const std::string where = origin + ":" + std::to_string(lineno);
        if (!line.empty() && line.back() == '\r') line.pop_back();
        std::istringstream tokens(line);
        std::string word;
        if (!(tokens >> word) || word[0] == '#') continue;
        if (!header_seen) {
            int version = 0;
            if (word != kPlanMagic || !(tokens >> version)) {
                throw InputError(where, "", std::string("not a plan file: expected '") + kPlanMagic +
                                                " " + std::to_string(kPlanVersion) + "' first");
            }
            if (version != kPlanVersion) {
                throw InputError(where, "", "plan version " + std::to_string(version) +
                                                " is not supported (this build reads version " +
                                                std::to_string(kPlanVersion) + ")");
            }
            header_seen = true;
            continue;
        }
        if (word != "case") throw InputError(where, "", "expected a 'case' line, found '" + word + "'");
        PlanCase c;
        while (tokens >> word) {
            const auto eq = word.find('=');
            if (eq == std::string::npos || eq == 0) {
                throw InputError(where, "", "token '" + word + "' is not key=value");
            }
            const std::string key = decode(word.substr(0, eq), where);
            if (c.has(key)) throw InputError(where, key, "appears twice in one case");
            c.set(key, decode(word.substr(eq + 1), where));
        }
        plan.cases.push_back(std::move(c));
    }
    if (!header_seen) throw InputError(origin, "", "empty plan: no header line");
    return plan;
}

Plan read_plan_file(const std::string& path) {
    std::istringstream in(read_input_file(path, "plan"));
    return read_plan(in, path);
}

}  // namespace dmasim::core
