#include "dmasim/core/error.h"

namespace dmasim::core {

namespace {
std::string compose(const std::string& file, const std::string& key, const std::string& message) {
    std::string out = file.empty() ? std::string("<input>") : file;
    if (!key.empty()) out += ": key '" + key + "'";
    out += ": " + message;
    return out;
}
}  // namespace

InputError::InputError(const std::string& file, const std::string& key, const std::string& message)
    : std::runtime_error(compose(file, key, message)), file_(file), key_(key) {}

}  // namespace dmasim::core
