#include "dmasim/core/error.h"

#include <cstdio>

namespace dmasim::core {

namespace {

// Input echoed into a message (a key, a value, a file name) may hold control characters; printed
// raw they could end the line early or drive the terminal. Every error stays one line of text.
std::string escape(const std::string& text) {
    std::string out;
    out.reserve(text.size());
    for (const char c : text) {
        const auto u = static_cast<unsigned char>(c);
        if (c == '\n') {
            out += "\\n";
        } else if (c == '\r') {
            out += "\\r";
        } else if (c == '\t') {
            out += "\\t";
        } else if (u < 0x20 || u == 0x7f) {
            char hex[8];
            std::snprintf(hex, sizeof hex, "\\x%02x", u);
            out += hex;
        } else {
            out += c;
        }
    }
    return out;
}

std::string compose(const std::string& file, const std::string& key, const std::string& message) {
    std::string out = file.empty() ? std::string("<input>") : escape(file);
    if (!key.empty()) out += ": key '" + escape(key) + "'";
    out += ": " + escape(message);
    return out;
}

}  // namespace

InputError::InputError(const std::string& file, const std::string& key, const std::string& message)
    : std::runtime_error(compose(file, key, message)), file_(file), key_(key) {}

}  // namespace dmasim::core
