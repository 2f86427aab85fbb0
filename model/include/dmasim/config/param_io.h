// Text form of parameter values, and the walks over parameter structs that the parser,
// config.json and `dmasim params` share.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "dmasim/config/params.h"
#include "dmasim/config/scenario.h"
#include "dmasim/core/results.h"

namespace dmasim::config {

// Parse a scalar into a field of the given type. Throw core::UnitError saying what was expected.
void parse_field(const std::string& text, std::int64_t& out);
void parse_field(const std::string& text, bool& out);
void parse_field(const std::string& text, double& out);
void parse_field(const std::string& text, std::string& out);
void parse_field(const std::string& text, Bytes& out);
void parse_field(const std::string& text, Duration& out);
void parse_field(const std::string& text, Bandwidth& out);
void parse_field(const std::string& text, TransferRate& out);

// Canonical text of a value, accepted back by parse_field.
std::string format_field(std::int64_t v);
std::string format_field(bool v);
std::string format_field(double v);
std::string format_field(const std::string& v);
std::string format_field(Bytes v);
std::string format_field(Duration v);
std::string format_field(Bandwidth v);
std::string format_field(TransferRate v);

// One documented parameter, as `dmasim params` and docs/scenarios.md list them.
struct ParamDoc {
    std::string path;   // dotted: "link.mps"
    std::string unit;
    std::string value;  // default (or current) value in canonical text
    std::string doc;
};
std::vector<ParamDoc> describe(ModelParams params, StrategyOptions options);

// The full effective configuration of one scenario, as a JSON object (gem5's config.json).
void write_config_json(core::JsonWriter& json, const Scenario& scenario);

}  // namespace dmasim::config
