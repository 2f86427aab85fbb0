// Error types shared by every part of dmasim. Dependency-free (used by the CUDA harness too).
#pragma once

#include <stdexcept>
#include <string>

namespace dmasim::core {

// A value that does not parse as the quantity it should be ("12 parsecs" for a size).
class UnitError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

// Any user-input problem: names the file and, where there is one, the key. The CLI prints
// what() alone and exits non-zero, so the message must stand on its own.
class InputError : public std::runtime_error {
public:
    InputError(const std::string& file, const std::string& key, const std::string& message);
    const std::string& file() const { return file_; }
    const std::string& key() const { return key_; }

private:
    std::string file_;
    std::string key_;
};

}  // namespace dmasim::core
