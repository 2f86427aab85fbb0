#include "test_util.h"

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

}  // namespace dmaprobe::test
