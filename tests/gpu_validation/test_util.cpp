#include "test_util.h"

#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <sys/stat.h>
#include <sys/wait.h>
#include <vector>

namespace dmaprobe::test {

TempDir::TempDir() {
    const char* base = std::getenv("TMPDIR");
    std::string tmpl = std::string(base && *base ? base : "/tmp") + "/dmaprobe_test_XXXXXX";
    std::vector<char> buf(tmpl.begin(), tmpl.end());
    buf.push_back('\0');
    if (::mkdtemp(buf.data()) == nullptr) throw std::runtime_error("mkdtemp failed for " + tmpl);
    path_ = buf.data();
}

TempDir::~TempDir() {
    const std::string cmd = "rm -rf '" + path_ + "'";
    if (std::system(cmd.c_str()) != 0) {
        // Nothing to do: a leftover temporary directory is harmless.
    }
}

std::string TempDir::write(const std::string& relative, const std::string& content) const {
    const std::string full = path_ + "/" + relative;
    for (std::size_t pos = path_.size() + 1; (pos = full.find('/', pos)) != std::string::npos; ++pos) {
        ::mkdir(full.substr(0, pos).c_str(), 0755);
    }
    std::ofstream out(full, std::ios::binary);
    out << content;
    if (!out) throw std::runtime_error("cannot write " + full);
    return full;
}

bool file_exists(const std::string& path) {
    struct stat st {};
    return ::stat(path.c_str(), &st) == 0;
}

std::string read_file(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::ostringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

dmasim::core::PlanCase plan_case(const std::string& line) {
    std::istringstream in("dmasim-plan 1\n" + line + "\n");
    const auto plan = dmasim::core::read_plan(in, "test");
    if (plan.cases.size() != 1) throw std::runtime_error("expected one case: " + line);
    return plan.cases[0];
}

CommandResult run_command(const std::string& command) {
    CommandResult r;
    FILE* p = ::popen((command + " 2>&1").c_str(), "r");
    if (p == nullptr) return r;
    char buf[4096];
    std::size_t got = 0;
    while ((got = std::fread(buf, 1, sizeof buf, p)) > 0) r.output.append(buf, got);
    const int status = ::pclose(p);
    r.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    return r;
}

bool Json::has(const std::string& key) const {
    for (const auto& [k, v] : object) {
        if (k == key) return true;
    }
    return false;
}

const Json& Json::operator[](const std::string& key) const {
    for (const auto& [k, v] : object) {
        if (k == key) return v;
    }
    throw std::out_of_range("JSON object has no key '" + key + "'");
}

namespace {

class JsonParser {
public:
    explicit JsonParser(const std::string& t) : t_(t) {}

    Json document() {
        Json v = value();
        space();
        if (i_ != t_.size()) fail("text after the document");
        return v;
    }

private:
    [[noreturn]] void fail(const std::string& why) const {
        throw std::runtime_error("malformed JSON at offset " + std::to_string(i_) + ": " + why);
    }
    void space() {
        while (i_ < t_.size() && (t_[i_] == ' ' || t_[i_] == '\n' || t_[i_] == '\r' || t_[i_] == '\t')) ++i_;
    }
    bool eat(char c) {
        space();
        if (i_ < t_.size() && t_[i_] == c) {
            ++i_;
            return true;
        }
        return false;
    }
    void expect(char c) {
        if (!eat(c)) fail(std::string("expected '") + c + "'");
    }
    bool word(const char* w) {
        const std::string s(w);
        if (t_.compare(i_, s.size(), s) != 0) return false;
        i_ += s.size();
        return true;
    }

    Json value() {
        space();
        if (i_ >= t_.size()) fail("unexpected end");
        Json v;
        const char c = t_[i_];
        if (c == '{') {
            ++i_;
            v.type = Json::Type::object;
            if (eat('}')) return v;
            do {
                space();
                if (i_ >= t_.size() || t_[i_] != '"') fail("expected a key");
                std::string key = str();
                expect(':');
                v.object.emplace_back(std::move(key), value());
            } while (eat(','));
            expect('}');
        } else if (c == '[') {
            ++i_;
            v.type = Json::Type::array;
            if (eat(']')) return v;
            do {
                v.array.push_back(value());
            } while (eat(','));
            expect(']');
        } else if (c == '"') {
            v.type = Json::Type::string;
            v.string = str();
        } else if (word("true")) {
            v.type = Json::Type::boolean;
            v.boolean = true;
        } else if (word("false")) {
            v.type = Json::Type::boolean;
        } else if (word("null")) {
            v.type = Json::Type::null;
        } else {
            v.type = Json::Type::number;
            v.number = number();
        }
        return v;
    }

    std::string str() {
        ++i_;  // opening quote
        std::string out;
        while (true) {
            if (i_ >= t_.size()) fail("unterminated string");
            const char c = t_[i_++];
            if (c == '"') return out;
            if (static_cast<unsigned char>(c) < 0x20) fail("control character in a string");
            if (c != '\\') {
                out += c;
                continue;
            }
            if (i_ >= t_.size()) fail("unterminated escape");
            const char e = t_[i_++];
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
                    if (i_ + 4 > t_.size()) fail("short \\u escape");
                    for (int k = 0; k < 4; ++k) {
                        if (!std::isxdigit(static_cast<unsigned char>(t_[i_ + k]))) fail("bad \\u escape");
                    }
                    const long cp = std::strtol(t_.substr(i_, 4).c_str(), nullptr, 16);
                    i_ += 4;
                    out += cp < 0x80 ? static_cast<char>(cp) : '?';  // enough for shape checks
                    break;
                }
                default: fail(std::string("bad escape \\") + e);
            }
        }
    }

    double number() {
        const std::size_t start = i_;
        if (i_ < t_.size() && t_[i_] == '-') ++i_;
        auto digits = [&] {
            const std::size_t b = i_;
            while (i_ < t_.size() && std::isdigit(static_cast<unsigned char>(t_[i_]))) ++i_;
            return i_ - b;
        };
        const std::size_t int_start = i_;
        if (digits() == 0) fail("expected a value");
        if (t_[int_start] == '0' && i_ - int_start > 1) fail("leading zero");
        if (i_ < t_.size() && t_[i_] == '.') {
            ++i_;
            if (digits() == 0) fail("digits expected after '.'");
        }
        if (i_ < t_.size() && (t_[i_] == 'e' || t_[i_] == 'E')) {
            ++i_;
            if (i_ < t_.size() && (t_[i_] == '+' || t_[i_] == '-')) ++i_;
            if (digits() == 0) fail("digits expected in the exponent");
        }
        return std::strtod(t_.substr(start, i_ - start).c_str(), nullptr);
    }

    const std::string& t_;
    std::size_t i_ = 0;
};

}  // namespace

Json parse_json(const std::string& text) { return JsonParser(text).document(); }

}  // namespace dmaprobe::test
