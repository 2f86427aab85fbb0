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

// Writes the fields of parameter structs into JSON objects, in their visit() order.
struct JsonFieldWriter {
    core::JsonWriter* json;
    void emit(const char* key, std::int64_t v) { json->value(key, v); }
    void emit(const char* key, bool v) { json->value(key, v); }
    void emit(const char* key, double v) { json->value(key, v); }
    template <class T>
    void emit(const char* key, const T& v) { json->value(key, format_field(v)); }
    template <class T>
    void operator()(const FieldInfo& fi, T& field) { emit(fi.key, field); }
    template <class S>
    void section(const char* name, const char* /*doc*/, S& s) {
        json->begin_object(name);
        s.visit(*this);
        json->end_object();
    }
};

// The full effective configuration of one scenario, as a JSON object (gem5's config.json).
// `platform_json`: the platform as this scenario's settings made it (every node and link with
// its own parameters), inserted as "platform_effective". `fidelity`: how the run simulated it
// ("fast" or "tlp", docs/fast-forward.md), written when given.
void write_config_json(core::JsonWriter& json, const Scenario& scenario, const std::string& platform_json = {},
                       const std::string& fidelity = {});

}  // namespace dmasim::config
