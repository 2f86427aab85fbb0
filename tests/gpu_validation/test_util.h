// Helpers shared by the dmaprobe test suites.
#pragma once

#include <string>
#include <utility>
#include <vector>

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

// A parsed JSON value: just enough to check the shape of the documents dmaprobe writes.
struct Json {
    enum class Type { null, boolean, number, string, array, object };
    Type type = Type::null;
    bool boolean = false;
    double number = 0;
    std::string string;
    std::vector<Json> array;
    std::vector<std::pair<std::string, Json>> object;  // in document order

    bool has(const std::string& key) const;
    // The member `key` of an object; throws std::out_of_range naming the key if absent.
    const Json& operator[](const std::string& key) const;
    const Json& operator[](std::size_t i) const { return array.at(i); }
};
// Parses a whole document (RFC 8259, no extensions); throws std::runtime_error with the
// offset of the first error, so a malformed document fails the test that reads it.
Json parse_json(const std::string& text);

}  // namespace dmaprobe::test
