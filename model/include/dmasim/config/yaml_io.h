// Loading YAML the way every dmasim input needs it: strictly.
//
// yaml-cpp accepts things a user never means: a key given twice (the first wins, silently), a
// quote that is never closed (the rest of the file becomes one string, and the error that
// follows names a key that is "missing"), an alias that contains itself, or a few lines of
// aliases that expand to billions of nodes. Every file the tools read in YAML comes through here,
// so each of those is one error naming the file, the key and the line.
#pragma once

#include <yaml-cpp/yaml.h>

#include <string>
#include <vector>

namespace dmasim::config {

// Bounds on the shape of a document. Real inputs are a few levels deep and a few thousand nodes.
inline constexpr int kMaxYamlDepth = 64;
inline constexpr long kMaxYamlNodes = 1'000'000;

// One document. Throws core::InputError naming `origin` on a syntax error (line and column), a
// duplicate key (both lines), an unclosed quote, an alias cycle or a document beyond the bounds.
YAML::Node load_yaml(const std::string& text, const std::string& origin);

// Every document of a multi-document stream, each checked as load_yaml does.
std::vector<YAML::Node> load_yaml_all(const std::string& text, const std::string& origin);

// "malformed YAML at line L, column C: what" for an exception yaml-cpp threw.
std::string yaml_error_message(const YAML::Exception& e);

}  // namespace dmasim::config
