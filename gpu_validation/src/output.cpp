#include "output.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <stdexcept>
#include <sys/stat.h>
#include <unistd.h>

namespace dmaprobe {

namespace {

void make_dirs(const std::string& dir) {
    if (dir.empty()) return;
    for (std::size_t pos = dir.find('/', 1);; pos = dir.find('/', pos + 1)) {
        const std::string partial = dir.substr(0, pos);
        if (::mkdir(partial.c_str(), 0755) != 0 && errno != EEXIST) {
            throw std::runtime_error(dir + ": cannot create directory '" + partial + "' (" + std::strerror(errno) + ")");
        }
        if (pos == std::string::npos) break;
    }
    struct stat st {};
    if (::stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) throw std::runtime_error(dir + ": is not a directory");
}

}  // namespace

std::vector<std::string> write_all_or_nothing(const std::vector<OutputFile>& files) {
    std::vector<std::string> temps;
    auto cleanup = [&] {
        for (const auto& t : temps) std::remove(t.c_str());
    };
    std::vector<std::string> finals;
    try {
        for (const auto& f : files) {
            const auto slash = f.path.find_last_of('/');
            const std::string dir = slash == std::string::npos ? std::string() : f.path.substr(0, slash == 0 ? 1 : slash);
            const std::string name = slash == std::string::npos ? f.path : f.path.substr(slash + 1);
            if (name.empty()) throw std::runtime_error(f.path + ": not a file name");
            make_dirs(dir);
            const std::string prefix = dir.empty() ? std::string() : dir == "/" ? dir : dir + "/";
            const std::string temp = prefix + "." + name + ".tmp" + std::to_string(::getpid());
            temps.push_back(temp);
            std::ofstream out(temp, std::ios::binary | std::ios::trunc);
            out << f.content;
            out.close();
            if (!out) throw std::runtime_error(f.path + ": cannot write");
            finals.push_back(f.path);
        }
    } catch (...) {
        cleanup();
        throw;
    }
    for (std::size_t i = 0; i < temps.size(); ++i) {
        if (std::rename(temps[i].c_str(), finals[i].c_str()) != 0) {
            const std::string why = std::strerror(errno);
            cleanup();
            throw std::runtime_error(finals[i] + ": cannot rename into place (" + why + ")");
        }
    }
    return finals;
}

}  // namespace dmaprobe
