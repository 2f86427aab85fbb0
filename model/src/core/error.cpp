#include "dmasim/core/error.h"

#include <cstdio>

namespace dmasim::core {

namespace {

// Input echoed into a message (a key, a value, a file name) may hold control characters; printed
// raw they could end the line early or drive the terminal. Every error stays one line of text.
// Bytes that are not UTF-8 are escaped too: a file of another encoding, or a corrupt one, must
// not put invalid text on the user's terminal.
std::size_t utf8_length(const std::string& text, std::size_t i) {
    const auto u = static_cast<unsigned char>(text[i]);
    const std::size_t n = u >= 0xf0 && u <= 0xf4 ? 4 : u >= 0xe0 ? 3 : u >= 0xc2 && u < 0xe0 ? 2 : 0;
    if (n == 0 || i + n > text.size()) return 0;
    for (std::size_t k = 1; k < n; ++k) {
        if ((static_cast<unsigned char>(text[i + k]) & 0xc0) != 0x80) return 0;
    }
    return n;
}

std::string escape(const std::string& text) {
    std::string out;
    out.reserve(text.size());
    for (std::size_t i = 0; i < text.size(); ++i) {
        const char c = text[i];
        const auto u = static_cast<unsigned char>(c);
        if (u >= 0x80) {
            const std::size_t n = utf8_length(text, i);
            if (n > 0) {
                out.append(text, i, n);
                i += n - 1;
                continue;
            }
        }
        if (c == '\n') {
            out += "\\n";
        } else if (c == '\r') {
            out += "\\r";
        } else if (c == '\t') {
            out += "\\t";
        } else if (u < 0x20 || u >= 0x7f) {
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
