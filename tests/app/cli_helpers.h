// Runs the dmasim command line in-process for the CLI tests.
#pragma once

#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <system_error>
#include <vector>

#include "dmasim/app/commands.h"

namespace dmasim::app::testing {

struct Outcome {
    int code;
    std::string out;
    std::string err;
};

inline Outcome cli(std::vector<std::string> args) {
    args.insert(args.begin(), "dmasim");
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    std::ostringstream out, err;
    const int code = run_cli(static_cast<int>(argv.size()), argv.data(), out, err);
    return {code, out.str(), err.str()};
}

// A fresh directory under the system's temporary directory, removed with everything in it when
// the test ends. `path` is empty if it could not be made.
class TempDir {
public:
    explicit TempDir(const std::string& prefix = "dmasim-test-") {
        std::string pattern = (std::filesystem::temp_directory_path() / (prefix + "XXXXXX")).string();
        if (::mkdtemp(pattern.data()) != nullptr) path = pattern;
    }
    ~TempDir() {
        std::error_code ec;
        if (!path.empty()) std::filesystem::remove_all(path, ec);
    }
    TempDir(const TempDir&) = delete;
    TempDir& operator=(const TempDir&) = delete;
    std::string path;
};

// The cells of every line of a CSV the CLI wrote; a comma inside double quotes stays in its cell.
inline std::vector<std::vector<std::string>> read_csv(const std::string& path) {
    std::ifstream in(path);
    std::vector<std::vector<std::string>> rows;
    std::string line;
    while (std::getline(in, line)) {
        std::vector<std::string> cells;
        std::string cell;
        bool quoted = false;
        for (const char c : line) {
            if (c == '"') quoted = !quoted;
            else if (c == ',' && !quoted) {
                cells.push_back(cell);
                cell.clear();
            } else {
                cell += c;
            }
        }
        cells.push_back(cell);
        rows.push_back(cells);
    }
    return rows;
}

}  // namespace dmasim::app::testing
