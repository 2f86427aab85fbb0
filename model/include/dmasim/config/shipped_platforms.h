// The platform files shipped in platforms/, compiled in: name -> YAML text.
#pragma once

#include <map>
#include <string>

namespace dmasim::config {

const std::map<std::string, std::string>& shipped_platforms();

}  // namespace dmasim::config
