#include "dmasim/config/param_io.h"

#include <cerrno>
#include <cstdlib>
#include <sstream>

#include "dmasim/core/error.h"

namespace dmasim::config {

void parse_field(const std::string& text, std::int64_t& out) {
    errno = 0;
    char* end = nullptr;
    const long long v = std::strtoll(text.c_str(), &end, 10);
    if (text.empty() || errno != 0 || *end != '\0') {
        throw core::UnitError("'" + text + "' is not an integer");
    }
    out = v;
}

void parse_field(const std::string& text, bool& out) {
    if (text == "true" || text == "yes" || text == "on") {
        out = true;
    } else if (text == "false" || text == "no" || text == "off") {
        out = false;
    } else {
        throw core::UnitError("'" + text + "' is not a boolean (true/false, yes/no, on/off)");
    }
}

void parse_field(const std::string& text, double& out) {
    char* end = nullptr;
    const double v = std::strtod(text.c_str(), &end);
    if (text.empty() || *end != '\0') throw core::UnitError("'" + text + "' is not a number");
    out = v;
}

void parse_field(const std::string& text, std::string& out) { out = text; }
void parse_field(const std::string& text, Bytes& out) { out = core::parse_bytes(text); }
void parse_field(const std::string& text, Duration& out) { out = core::parse_duration(text); }
void parse_field(const std::string& text, Bandwidth& out) { out = core::parse_bandwidth(text); }
void parse_field(const std::string& text, TransferRate& out) { out = core::parse_transfer_rate(text); }

std::string format_field(std::int64_t v) { return std::to_string(v); }
std::string format_field(bool v) { return v ? "true" : "false"; }
std::string format_field(double v) {
    std::ostringstream os;
    os.precision(12);
    os << v;
    return os.str();
}
std::string format_field(const std::string& v) { return v; }
std::string format_field(Bytes v) { return core::to_string(v); }
std::string format_field(Duration v) { return v.ps == 0 ? "0s" : core::to_string(v); }
std::string format_field(Bandwidth v) { return core::to_string(v); }
std::string format_field(TransferRate v) { return core::to_string(v); }

namespace {

struct DocCollector {
    std::vector<ParamDoc>* out;
    std::string prefix;
    template <class T>
    void operator()(const FieldInfo& fi, T& field) {
        out->push_back(ParamDoc{prefix + fi.key, fi.unit, format_field(field), fi.doc});
    }
    template <class S>
    void section(const char* name, const char* /*doc*/, S& s) {
        DocCollector inner{out, std::string(name) + "."};
        s.visit(inner);
    }
};

}  // namespace

std::vector<ParamDoc> describe(ModelParams params, StrategyOptions options) {
    std::vector<ParamDoc> out;
    DocCollector c{&out, ""};
    params.visit_sections(c);
    options.visit_sections(c);
    return out;
}

void write_config_json(core::JsonWriter& json, const Scenario& scenario, const std::string& platform_json,
                       const std::string& fidelity) {
    Scenario s = scenario;  // visit() takes non-const references
    json.begin_object();
    json.value("name", s.name);
    json.value("file", s.file);
    json.value("description", s.description);
    json.value("platform", s.platform);
    json.value("calibration", s.calibration);
    json.begin_array("strategy");
    for (const auto& st : s.strategies) json.value("", st);
    json.end_array();
    json.begin_array("direction");
    for (const auto& d : s.directions) json.value("", d);
    json.end_array();
    json.begin_array("sizes");
    for (auto b : s.sizes) json.value("", b);
    json.end_array();
    json.value("repetitions", s.repetitions);
    json.value("warmup", s.warmup);
    json.value("link_explicit", s.link_explicit);
    if (!s.device_links.empty()) {
        // What the scenario set on single devices' links (platform_effective has the result).
        json.begin_array("links");
        for (const auto& d : s.device_links) {
            json.begin_object();
            json.value("device", d.device);
            json.value("key", d.key);
            json.value("value", d.value);
            json.end_object();
        }
        json.end_array();
    }
    if (!fidelity.empty()) json.value("fidelity", fidelity);
    JsonFieldWriter d{&json};
    s.params.visit_sections(d);
    s.options.visit_sections(d);
    if (!platform_json.empty()) json.raw("platform_effective", platform_json);
    json.end_object();
}

}  // namespace dmasim::config
