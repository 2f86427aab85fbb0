#include "dmasim/core/input_file.h"

#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include "dmasim/core/error.h"

namespace dmasim::core {

namespace {

const char* kind_of(mode_t mode) {
    if (S_ISDIR(mode)) return "a directory";
    if (S_ISFIFO(mode)) return "a FIFO";
    if (S_ISCHR(mode)) return "a character device";
    if (S_ISBLK(mode)) return "a block device";
    if (S_ISSOCK(mode)) return "a socket";
    return "not a regular file";
}

}  // namespace

bool is_regular_file(const std::string& path) {
    struct stat st {};
    return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

std::string read_input_file(const std::string& path, const std::string& what, std::uint64_t max_bytes) {
    struct stat st {};
    if (path.empty()) throw InputError(path, "", "no " + what + " file named");
    if (::stat(path.c_str(), &st) != 0) {
        const int err = errno;
        throw InputError(path, "", "cannot open " + what + " file: " + std::strerror(err));
    }
    if (!S_ISREG(st.st_mode)) {
        throw InputError(path, "", std::string("is ") + kind_of(st.st_mode) + ": the " + what + " file must be a regular file");
    }
    if (static_cast<std::uint64_t>(st.st_size) > max_bytes) {
        throw InputError(path, "", what + " file is " + std::to_string(st.st_size) + " bytes; the limit is " +
                                       std::to_string(max_bytes));
    }
    std::ifstream in(path, std::ios::binary);
    if (!in) {
        const int err = errno;
        throw InputError(path, "", "cannot read " + what + " file: " + std::strerror(err));
    }
    std::ostringstream buf;
    buf << in.rdbuf();
    if (in.bad()) throw InputError(path, "", "error while reading " + what + " file");
    std::string text = buf.str();
    // The file may have grown since stat(); the bound is on what we hold, not on what stat said.
    if (text.size() > max_bytes) {
        throw InputError(path, "", what + " file is larger than the limit of " + std::to_string(max_bytes) + " bytes");
    }
    return text;
}

}  // namespace dmasim::core
