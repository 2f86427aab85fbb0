// Helpers shared by the dmaprobe test suites.
#pragma once

#include <string>

#include "dmasim/core/plan.h"

namespace dmaprobe::test {

// A fresh directory under $TMPDIR (or /tmp), removed with its contents on destruction.
class TempDir {
public:
    TempDir();
    ~TempDir();
    TempDir(const TempDir&) = delete;
    TempDir& operator=(const TempDir&) = delete;
    const std::string& path() const { return path_; }
    // Writes a file (creating parent directories) and returns its path.
    std::string write(const std::string& relative, const std::string& content) const;

private:
    std::string path_;
};

bool file_exists(const std::string& path);
std::string read_file(const std::string& path);

// Parses one "case k=v ..." line (the plan header is added).
dmasim::core::PlanCase plan_case(const std::string& line);

struct CommandResult {
    int status = -1;   // exit status, or -1 if it did not exit normally
    std::string output;  // stdout and stderr together
};
// Runs a shell command line, capturing its output.
CommandResult run_command(const std::string& command);

}  // namespace dmaprobe::test
