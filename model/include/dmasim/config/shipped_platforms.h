// The platform files shipped in platforms/ and the committed calibrations in
// results/<machine>/calibration.yaml, compiled in: name -> YAML text.
#pragma once

#include <map>
#include <string>

namespace dmasim::config {

const std::map<std::string, std::string>& shipped_platforms();
// Named by machine folder: "h100-sxm" is results/h100-sxm/calibration.yaml.
const std::map<std::string, std::string>& shipped_calibrations();

}  // namespace dmasim::config
