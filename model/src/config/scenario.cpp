#include "dmasim/config/scenario.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "dmasim/config/param_io.h"
#include "dmasim/config/shipped_platforms.h"
#include "dmasim/config/yaml_io.h"
#include "dmasim/core/input_file.h"
#include "dmasim/core/error.h"

namespace dmasim::config {

namespace {

using core::InputError;

// Keys a scenario document may have at its top level, besides the parameter and strategy
// sections (which come from the visitors so that they cannot drift from the structs).
const std::vector<std::string>& run_keys() {
    static const std::vector<std::string> keys{"name",  "description", "platform",    "strategy", "direction",
                                               "sizes", "repetitions", "warmup",      "flows"};
    return keys;
}

std::string join(const std::vector<std::string>& items) {
    std::string out;
    for (const auto& s : items) {
        if (!out.empty()) out += ", ";
        out += s;
    }
    return out;
}

std::string trim(const std::string& s) {
    const auto b = s.find_first_not_of(" \t");
    if (b == std::string::npos) return {};
    const auto e = s.find_last_not_of(" \t");
    return s.substr(b, e - b + 1);
}

// Fills one parameter section from its YAML map and rejects keys the struct does not have.
class SectionReader {
public:
    SectionReader(const YAML::Node& node, std::string file, std::string section)
        : node_(node), file_(std::move(file)), section_(std::move(section)) {}

    template <class T>
    void operator()(const FieldInfo& fi, T& field) {
        known_.push_back(fi.key);
        const YAML::Node child = node_[fi.key];
        if (!child) return;
        const std::string key = section_ + "." + fi.key;
        if (!child.IsScalar()) throw InputError(file_, key, "expected a single value (" + std::string(fi.unit) + ")");
        try {
            parse_field(child.Scalar(), field);
        } catch (const core::UnitError& e) {
            throw InputError(file_, key, e.what());
        }
    }

    void reject_unknown() const {
        for (const auto& kv : node_) {
            const std::string k = kv.first.as<std::string>();
            if (std::find(known_.begin(), known_.end(), k) == known_.end()) {
                throw InputError(file_, section_ + "." + k,
                                 "unknown key; '" + section_ + "' takes: " + join(known_));
            }
        }
    }

private:
    const YAML::Node& node_;
    std::string file_;
    std::string section_;
    std::vector<std::string> known_;
};

// Walks the sections of ModelParams / StrategyOptions for one document.
struct SectionsReader {
    const YAML::Node& doc;
    const std::string& file;
    std::vector<std::string>* section_names;
    std::vector<std::string>* explicit_keys;

    template <class S>
    void section(const char* name, const char* /*doc*/, S& s) {
        section_names->push_back(name);
        const YAML::Node node = doc[name];
        if (!node) return;
        if (!node.IsMap()) throw InputError(file, name, "expected a map of settings");
        SectionReader r(node, file, name);
        s.visit(r);
        r.reject_unknown();
        for (const auto& kv : node) explicit_keys->push_back(std::string(name) + "." + kv.first.as<std::string>());
    }
};

std::vector<std::string> string_list(const YAML::Node& node, const std::string& file, const std::string& key) {
    std::vector<std::string> out;
    if (node.IsScalar()) {
        out.push_back(node.Scalar());
    } else if (node.IsSequence()) {
        for (const auto& item : node) {
            if (!item.IsScalar()) throw InputError(file, key, "expected a list of names");
            out.push_back(item.Scalar());
        }
    } else {
        throw InputError(file, key, "expected a name or a list of names");
    }
    if (out.empty()) throw InputError(file, key, "must not be empty");
    return out;
}

std::uint64_t size_value(const YAML::Node& node, const std::string& file, const std::string& key) {
    if (!node.IsScalar()) throw InputError(file, key, "expected a size such as 4KiB");
    try {
        const auto b = core::parse_bytes(node.Scalar());
        if (b.value == 0) throw InputError(file, key, "a size must be positive");
        return b.value;
    } catch (const core::UnitError& e) {
        throw InputError(file, key, e.what());
    }
}

std::vector<std::uint64_t> read_sizes(const YAML::Node& node, const std::string& file) {
    if (node.IsScalar()) return {size_value(node, file, "sizes")};
    if (node.IsSequence()) {
        std::vector<std::uint64_t> out;
        for (const auto& item : node) out.push_back(size_value(item, file, "sizes"));
        if (out.empty()) throw InputError(file, "sizes", "must not be empty");
        return out;
    }
    if (!node.IsMap()) throw InputError(file, "sizes", "expected a size, a list of sizes or {from, to, factor}");
    for (const auto& kv : node) {
        const std::string k = kv.first.as<std::string>();
        if (k != "from" && k != "to" && k != "factor" && k != "step") {
            throw InputError(file, "sizes." + k, "unknown key; a size range takes: from, to, factor, step");
        }
    }
    if (!node["from"] || !node["to"]) throw InputError(file, "sizes", "a range needs both 'from' and 'to'");
    const std::uint64_t from = size_value(node["from"], file, "sizes.from");
    const std::uint64_t to = size_value(node["to"], file, "sizes.to");
    if (to < from) throw InputError(file, "sizes.to", "must not be below sizes.from");
    double factor = 0.0;
    std::uint64_t step = 0;
    if (node["factor"] && node["step"]) throw InputError(file, "sizes.step", "give either factor or step, not both");
    if (node["step"]) {
        step = size_value(node["step"], file, "sizes.step");
    } else {
        factor = 2.0;
        if (node["factor"]) {
            try {
                parse_field(node["factor"].Scalar(), factor);
            } catch (const core::UnitError& e) {
                throw InputError(file, "sizes.factor", e.what());
            }
            if (!(factor > 1.0)) throw InputError(file, "sizes.factor", "must be greater than 1");
        }
    }
    auto sizes = expand_size_range(from, to, factor, step);
    if (sizes.size() > 10000) throw InputError(file, "sizes", "the range expands to more than 10000 sizes");
    return sizes;
}

std::int64_t int_value(const YAML::Node& node, const std::string& file, const std::string& key) {
    if (!node.IsScalar()) throw InputError(file, key, "expected an integer");
    std::int64_t v = 0;
    try {
        parse_field(node.Scalar(), v);
    } catch (const core::UnitError& e) {
        throw InputError(file, key, e.what());
    }
    return v;
}

bool is_power_of_two(std::uint64_t v) { return v != 0 && (v & (v - 1)) == 0; }

std::vector<std::string> default_directions(const std::string& strategy) {
    if (strategy == "duplex" || strategy == "async_overlap") return {"both"};
    if (strategy == "periodic" || strategy == "third_party_dma") return {"h2d"};
    if (strategy == "peer") return {"h2d", "both"};
    return {"h2d", "d2h"};
}

void validate(Scenario& s) {
    const std::string& f = s.file;
    auto fail = [&](const std::string& key, const std::string& msg) { throw InputError(f, key, msg); };
    const LinkParams& l = s.params.link;
    if (l.generation < 1 || l.generation > 6) fail("link.generation", "must be 1..6");
    if (l.lanes != 1 && l.lanes != 2 && l.lanes != 4 && l.lanes != 8 && l.lanes != 16) {
        fail("link.lanes", std::to_string(l.lanes) + " lanes is not a PCIe width (1, 2, 4, 8 or 16)");
    }
    if (l.rate.gt_per_s != 0.0 && std::fabs(l.rate.gt_per_s - generation_rate_gt(l.generation)) > 1e-9) {
        fail("link.rate", core::to_string(l.rate) + " does not match generation " + std::to_string(l.generation) +
                              " (" + core::to_string(TransferRate{generation_rate_gt(l.generation)}) + ")");
    }
    auto check_pow2 = [&](const char* key, Bytes v) {
        if (!is_power_of_two(v.value) || v.value < 128 || v.value > 4096) {
            fail(key, core::to_string(v) + " is not valid: a power of two from 128B to 4096B");
        }
    };
    check_pow2("link.mps", l.mps);
    check_pow2("link.mrrs", l.mrrs);
    if (l.rcb.value != 64 && l.rcb.value != 128) fail("link.rcb", "must be 64B or 128B");
    if (l.latency.ps < 0) fail("link.latency", "must not be negative");
    if (l.ack_coalesce < 1) fail("link.ack_coalesce", "must be at least 1");
    if (l.updatefc_coalesce < 1) fail("link.updatefc_coalesce", "must be at least 1");
    const std::pair<const char*, std::int64_t> credits[] = {
        {"link.credits_posted_header", l.credits_posted_header},
        {"link.credits_posted_data", l.credits_posted_data},
        {"link.credits_nonposted_header", l.credits_nonposted_header},
        {"link.credits_completion_header", l.credits_completion_header},
        {"link.credits_completion_data", l.credits_completion_data}};
    for (const auto& [key, v] : credits) {
        if (v < 0) fail(key, "must not be negative (0 means infinite)");
    }
    if (l.credits_posted_data != 0 && l.credits_posted_data * 16 < static_cast<std::int64_t>(l.mps.value)) {
        fail("link.credits_posted_data", "too few for one MPS-sized write (" + core::to_string(l.mps) + ")");
    }
    const auto& rc = s.params.root_complex;
    if (rc.completion_size.value == 0 || rc.completion_size.value % l.rcb.value != 0) {
        fail("root_complex.completion_size", "must be a positive multiple of link.rcb");
    }
    for (const char* sec : {"host_memory", "gpu_memory"}) {
        const MemoryParams& m = std::string(sec) == "host_memory" ? s.params.host_memory : s.params.gpu_memory;
        if (!(m.bandwidth.bytes_per_s > 0)) fail(std::string(sec) + ".bandwidth", "must be positive");
    }
    const auto& d = s.params.dma;
    if (d.engines < 1 || d.engines > 16) fail("dma.engines", "must be 1..16");
    if (d.max_read_requests < 1 || d.max_read_requests > 16384) fail("dma.max_read_requests", "must be 1..16384");
    if (d.read_ahead.value < 64 * 1024) fail("dma.read_ahead", "must be at least 64KiB");
    if (d.semaphore_size.value == 0 || d.semaphore_size.value > l.mps.value) {
        fail("dma.semaphore_size", "must be 1 byte up to link.mps");
    }
    const auto& cpu = s.params.cpu;
    if (!(cpu.memcpy_bandwidth.bytes_per_s > 0)) fail("cpu.memcpy_bandwidth", "must be positive");
    if (!(cpu.memcpy_bandwidth_cached.bytes_per_s > 0)) fail("cpu.memcpy_bandwidth_cached", "must be positive");
    if (!is_power_of_two(cpu.page_size.value)) fail("cpu.page_size", "must be a power of two");
    if (!(cpu.wc_bandwidth.bytes_per_s > 0)) fail("cpu.wc_bandwidth", "must be positive");
    if (cpu.wc_buffers < 1) fail("cpu.wc_buffers", "must be at least 1");
    if (cpu.mmio_read_bytes.value < 1 || cpu.mmio_read_bytes.value > 64) fail("cpu.mmio_read_bytes", "must be 1B..64B");
    if (cpu.mmio_reads_in_flight < 1 || cpu.mmio_reads_in_flight > 64) fail("cpu.mmio_reads_in_flight", "must be 1..64");
    if (s.params.pageable.bounce_size.value < 4096) fail("pageable.bounce_size", "must be at least 4KiB");
    if (s.params.pageable.bounce_buffers < 1 || s.params.pageable.bounce_buffers > 64) {
        fail("pageable.bounce_buffers", "must be 1..64");
    }
    const auto& g = s.params.gpu;
    if (g.sms < 1) fail("gpu.sms", "must be at least 1");
    if (g.max_warps_per_sm < 1) fail("gpu.max_warps_per_sm", "must be at least 1");
    if (g.max_blocks_per_sm < 1) fail("gpu.max_blocks_per_sm", "must be at least 1");
    if (g.loads_in_flight < 1) fail("gpu.loads_in_flight", "must be at least 1");
    if (g.sysmem_max_outstanding_reads < 1 || g.sysmem_max_outstanding_reads > 16384) {
        fail("gpu.sysmem_max_outstanding_reads", "must be 1..16384");
    }
    const auto& nv = s.params.nvlink;
    if (nv.links < 1 || nv.links > 64) fail("nvlink.links", "must be 1..64");
    if (!(nv.link_rate.bytes_per_s > 0)) fail("nvlink.link_rate", "must be positive");
    if (nv.max_payload.value < 16 || nv.max_payload.value > 4096) fail("nvlink.max_payload", "must be 16B..4KiB");
    const auto& z = s.options.zero_copy;
    if (z.access.value != 1 && z.access.value != 2 && z.access.value != 4 && z.access.value != 8 && z.access.value != 16) {
        fail("zero_copy.access", "must be 1B, 2B, 4B, 8B or 16B");
    }
    if (z.pattern != "stream" && z.pattern != "chase") fail("zero_copy.pattern", "must be stream or chase");
    if (z.memory != "host" && z.memory != "device") fail("zero_copy.memory", "must be host or device");
    if (z.memory == "device" && z.pattern != "chase") {
        fail("zero_copy.memory", "device memory is a reference for the chase only (pattern: chase)");
    }
    if (z.hops < 1 || z.hops > 100'000'000) fail("zero_copy.hops", "must be 1..100000000");
    const auto& c = s.options.compute;
    if (c.duration.ps < 0) fail("compute.duration", "must not be negative");
    if (c.blocks < 1 || c.blocks > 1'000'000) fail("compute.blocks", "must be 1..1000000");
    if (c.threads < 32 || c.threads > 1024 || c.threads % 32 != 0) {
        fail("compute.threads", "must be a multiple of 32 from 32 to 1024");
    }
    if (c.bytes.value < 4096 || c.bytes.value > (std::uint64_t{1} << 40)) fail("compute.bytes", "must be 4KiB..1TiB");
    const auto& hb = s.options.host_buffer;
    if (hb.offset.value > (std::uint64_t{1} << 30)) fail("host_buffer.offset", "must be at most 1GiB");
    const auto& ai = s.options.async_overlap.issue;
    if (ai != "depth_first" && ai != "breadth_first") fail("async_overlap.issue", "must be depth_first or breadth_first");
    if (z.stride < 1) fail("zero_copy.stride", "must be at least 1");
    if (z.blocks < 1) fail("zero_copy.blocks", "must be at least 1");
    if (z.threads < 32 || z.threads > 1024 || z.threads % 32 != 0) {
        fail("zero_copy.threads", "must be a multiple of 32 from 32 to 1024");
    }
    if (s.options.async_overlap.streams < 1 || s.options.async_overlap.streams > 1024) {
        fail("async_overlap.streams", "must be 1..1024");
    }
    const auto& fr = s.options.periodic;
    if (fr.size.value == 0) fail("frame.size", "must be positive");
    if (fr.period.ps <= 0) fail("frame.period", "must be positive");
    if (fr.count < 1) fail("frame.count", "must be at least 1");
    if (fr.via != "pinned" && fr.via != "pageable" && fr.via != "zero_copy" && fr.via != "fpga_direct" &&
        fr.via != "fpga_via_host") {
        fail("frame.via", "'" + fr.via + "' is not one of: pinned, pageable, zero_copy, fpga_direct, fpga_via_host");
    }
    const auto& p = s.options.peer;
    if (p.access != "on" && p.access != "off" && p.access != "both") fail("peer.access", "must be on, off or both");
    if (p.src_device < 0 || p.dst_device < 0) fail("peer.dst_device", "device ordinals must not be negative");
    if (p.src_device == p.dst_device && p.access != "on") {
        fail("peer.access", "a copy within one GPU (src_device = dst_device) has no peer access to turn off: use on");
    }
    if (p.refused != "staged" && p.refused != "error") fail("peer.refused", "must be staged or error");
    if (s.options.registered.reuses < 1) fail("registered.reuses", "must be at least 1");
    const auto& du = s.options.duplex.host_memory;
    if (du != "pinned" && du != "pageable") fail("duplex.host_memory", "must be pinned or pageable");

    if (s.repetitions < 1) fail("repetitions", "must be at least 1");
    if (s.warmup < 0) fail("warmup", "must not be negative");
    for (const auto& st : s.strategies) {
        if (!is_strategy(st)) fail("strategy", "'" + st + "' is not a strategy; known: " + join(strategy_names()));
    }
    for (const auto& dir : s.directions) {
        if (dir != "h2d" && dir != "d2h" && dir != "both") {
            fail("direction", "'" + dir + "' is not a direction; use h2d, d2h or both");
        }
        for (const auto& st : s.strategies) {
            if ((st == "duplex" || st == "async_overlap") && dir != "both") {
                fail("direction", st + " moves data both ways at once: its direction is 'both', not '" + dir + "'");
            }
            if ((st == "periodic" || st == "third_party_dma") && dir != "h2d") {
                fail("direction", st + " moves data towards the GPU: its direction is 'h2d'");
            }
        }
    }
}

// Applies "--set a.b.c=v" to a document before it is read, so that overrides go through
// exactly the same checks as the file itself.
void apply_set(YAML::Node& doc, const SetOverride& set) {
    std::vector<std::string> parts;
    std::stringstream ss(set.path);
    std::string part;
    while (std::getline(ss, part, '.')) parts.push_back(part);
    YAML::Node cur = doc;
    for (std::size_t i = 0; i + 1 < parts.size(); ++i) {
        YAML::Node next = cur[parts[i]];
        if (!next || !next.IsMap()) {
            cur[parts[i]] = YAML::Node(YAML::NodeType::Map);
            next = cur[parts[i]];
        }
        cur.reset(next);
    }
    const std::string& leaf = parts.back();
    if (set.value.find(',') != std::string::npos) {
        YAML::Node seq(YAML::NodeType::Sequence);
        std::stringstream vs(set.value);
        std::string item;
        while (std::getline(vs, item, ',')) seq.push_back(trim(item));
        cur[leaf] = seq;
    } else {
        cur[leaf] = set.value;
    }
}

void read_flows(const YAML::Node& node, const std::string& file, Scenario& s);

Scenario read_document(const YAML::Node& doc, const std::string& file, std::size_t index) {
    Scenario s;
    s.file = file;
    if (!doc.IsMap()) throw InputError(file, "", "a scenario must be a YAML map of settings");

    std::vector<std::string> known = run_keys();
    SectionsReader sections{doc, file, &known, &s.explicit_keys};
    s.params.visit_sections(sections);
    s.options.visit_sections(sections);
    for (const auto& kv : doc) {
        const std::string k = kv.first.as<std::string>();
        if (std::find(known.begin(), known.end(), k) == known.end()) {
            throw InputError(file, k, "unknown key; a scenario takes: " + join(known));
        }
    }
    s.link_explicit = static_cast<bool>(doc["link"]);

    auto scalar = [&](const char* key) -> std::string {
        const YAML::Node n = doc[key];
        if (!n) return {};
        if (!n.IsScalar()) throw InputError(file, key, "expected a single value");
        return n.Scalar();
    };
    s.name = scalar("name");
    if (s.name.empty()) {
        // A file of one scenario is named after the file; documents after the first get an index.
        std::string base = file.substr(file.find_last_of('/') + 1);
        base = base.substr(0, base.find_last_of('.'));
        s.name = index == 0 ? base : base + "-" + std::to_string(index + 1);
    }
    s.description = scalar("description");
    if (doc["platform"]) s.platform = scalar("platform");
    if (!is_platform(s.platform, file)) {
        throw InputError(file, "platform", "'" + s.platform + "' is neither a shipped platform (" + join(platform_names()) +
                                               ") nor a platform file");
    }
    if (doc["flows"]) {
        read_flows(doc["flows"], file, s);
        if (doc["strategy"] || doc["sizes"] || doc["direction"]) {
            throw InputError(file, "flows", "a scenario of flows gives strategy, direction and size per flow, not at the top");
        }
        for (const auto& f : s.flows) {
            if (std::find(s.strategies.begin(), s.strategies.end(), f.strategy) == s.strategies.end()) {
                s.strategies.push_back(f.strategy);
            }
        }
        if (doc["repetitions"]) s.repetitions = int_value(doc["repetitions"], file, "repetitions");
        validate(s);
        return s;
    }
    if (!doc["strategy"]) throw InputError(file, "strategy", "missing: say which strategy (e.g. pinned)");
    s.strategies = string_list(doc["strategy"], file, "strategy");
    for (const auto& st : s.strategies) {
        if (!is_strategy(st)) {
            throw InputError(file, "strategy", "'" + st + "' is not a strategy; known: " + join(strategy_names()));
        }
    }
    if (doc["direction"]) {
        s.directions = string_list(doc["direction"], file, "direction");
    } else {
        for (const auto& st : s.strategies) {
            for (const auto& d : default_directions(st)) {
                if (std::find(s.directions.begin(), s.directions.end(), d) == s.directions.end()) {
                    s.directions.push_back(d);
                }
            }
        }
    }
    const bool only_periodic = std::all_of(s.strategies.begin(), s.strategies.end(),
                                           [](const std::string& st) { return st == "periodic"; });
    if (doc["sizes"]) {
        s.sizes = read_sizes(doc["sizes"], file);
    } else if (!only_periodic) {
        throw InputError(file, "sizes", "missing: give a size, a list, or {from, to, factor}");
    }
    if (doc["repetitions"]) s.repetitions = int_value(doc["repetitions"], file, "repetitions");
    if (doc["warmup"]) s.warmup = int_value(doc["warmup"], file, "warmup");
    validate(s);
    return s;
}

void read_flows(const YAML::Node& node, const std::string& file, Scenario& s) {
    if (!node.IsSequence() || node.size() == 0) throw InputError(file, "flows", "expected a non-empty list of flows");
    for (std::size_t i = 0; i < node.size(); ++i) {
        const YAML::Node f = node[i];
        const std::string where = "flows[" + std::to_string(i) + "]";
        if (!f.IsMap()) throw InputError(file, where, "a flow is a map of settings");
        FlowSpec flow;
        flow.name = "flow" + std::to_string(i);
        for (const auto& kv : f) {
            const std::string k = kv.first.as<std::string>();
            const std::string key = where + "." + k;
            if (!kv.second.IsScalar()) throw InputError(file, key, "expected a single value");
            const std::string v = kv.second.Scalar();
            try {
                if (k == "name") {
                    flow.name = v;
                } else if (k == "strategy") {
                    flow.strategy = v;
                } else if (k == "device") {
                    parse_field(v, flow.device);
                } else if (k == "peer_device") {
                    parse_field(v, flow.peer_device);
                } else if (k == "direction") {
                    flow.direction = v;
                } else if (k == "size") {
                    flow.size = core::parse_bytes(v).value;
                } else if (k == "start") {
                    flow.start = core::parse_duration(v);
                } else {
                    throw InputError(file, key,
                                     "unknown key; a flow takes: name, strategy, device, peer_device, direction, size, start");
                }
            } catch (const core::UnitError& e) {
                throw InputError(file, key, e.what());
            }
        }
        if (flow.strategy != "pinned" && flow.strategy != "peer" && flow.strategy != "third_party_dma") {
            throw InputError(file, where + ".strategy", "a flow is pinned, peer or third_party_dma, not '" + flow.strategy + "'");
        }
        if (flow.direction != "h2d" && flow.direction != "d2h") throw InputError(file, where + ".direction", "must be h2d or d2h");
        if (flow.size == 0) throw InputError(file, where + ".size", "missing or zero");
        if (flow.device < 0 || flow.peer_device < 0) throw InputError(file, where + ".device", "must not be negative");
        if (flow.strategy == "peer" && flow.device == flow.peer_device) {
            throw InputError(file, where + ".peer_device", "a peer flow needs two different GPUs");
        }
        for (const auto& other : s.flows) {
            if (other.name == flow.name) throw InputError(file, where + ".name", "two flows are named '" + flow.name + "'");
        }
        s.flows.push_back(flow);
    }
}

std::vector<Scenario> read_all(std::vector<YAML::Node> docs, const std::string& origin,
                               const std::vector<SetOverride>& sets) {
    std::vector<Scenario> out;
    std::set<std::string> names;
    for (std::size_t i = 0; i < docs.size(); ++i) {
        if (docs[i].IsNull()) continue;
        if (!docs[i].IsMap()) throw InputError(origin, "", "a scenario must be a YAML map of settings");
        for (const auto& set : sets) apply_set(docs[i], set);
        Scenario s = read_document(docs[i], origin, i);
        if (!names.insert(s.name).second) throw InputError(origin, "name", "two scenarios are named '" + s.name + "'");
        out.push_back(std::move(s));
    }
    if (out.empty()) throw InputError(origin, "", "no scenario in file");
    return out;
}

}  // namespace

const std::vector<std::string>& strategy_names() {
    static const std::vector<std::string> names{"pageable", "pinned",         "registered", "async_overlap",
                                                "duplex",   "zero_copy",      "peer",       "third_party_dma",
                                                "cpu_mapped", "periodic"};
    return names;
}

std::vector<std::string> platform_names() {
    std::vector<std::string> names;
    for (const auto& [name, text] : shipped_platforms()) names.push_back(name);
    return names;
}

std::string resolve_platform(const std::string& ref, const std::string& scenario_file) {
    if (shipped_platforms().count(ref)) return ref;
    const auto slash = scenario_file.find_last_of('/');
    if (slash != std::string::npos && !ref.empty() && ref.front() != '/') {
        const std::string beside = scenario_file.substr(0, slash + 1) + ref;
        if (core::is_regular_file(beside)) return beside;
    }
    return ref;
}

bool is_platform(const std::string& ref, const std::string& scenario_file) {
    if (shipped_platforms().count(ref)) return true;
    // Exists at all: a directory or FIFO is refused with its own message when it is read, and
    // opening a FIFO here would block.
    std::error_code ec;
    return std::filesystem::exists(resolve_platform(ref, scenario_file), ec);
}

bool is_strategy(const std::string& name) {
    const auto& n = strategy_names();
    return std::find(n.begin(), n.end(), name) != n.end();
}

SetOverride parse_set(const std::string& text) {
    const auto eq = text.find('=');
    if (eq == std::string::npos || eq == 0) {
        throw InputError("--set", text, "expected KEY=VALUE, e.g. --set link.generation=4");
    }
    SetOverride s{trim(text.substr(0, eq)), trim(text.substr(eq + 1))};
    if (s.path.empty() || s.path.front() == '.' || s.path.back() == '.' ||
        s.path.find("..") != std::string::npos) {
        throw InputError("--set", s.path, "is not a dotted key path such as link.lanes");
    }
    return s;
}

std::vector<std::uint64_t> expand_size_range(std::uint64_t from, std::uint64_t to, double factor,
                                             std::uint64_t step) {
    std::vector<std::uint64_t> out;
    if (step > 0) {
        for (std::uint64_t v = from; v <= to; v += step) out.push_back(v);
        return out;
    }
    // Geometric: from * factor^k, rounded to whole bytes, while within `to`.
    for (int k = 0;; ++k) {
        const double v = std::round(static_cast<double>(from) * std::pow(factor, k));
        if (v > static_cast<double>(to) * (1.0 + 1e-12)) break;
        const auto b = static_cast<std::uint64_t>(v);
        if (out.empty() || out.back() != b) out.push_back(b);
        if (out.size() > 10001) break;
    }
    return out;
}

std::vector<Scenario> parse_scenarios(const std::string& yaml_text, const std::string& origin,
                                      const std::vector<SetOverride>& sets) {
    std::vector<YAML::Node> docs = load_yaml_all(yaml_text, origin);
    try {
        return read_all(std::move(docs), origin, sets);
    } catch (const YAML::Exception& e) {
        throw InputError(origin, "", yaml_error_message(e));
    }
}

std::vector<SetOverride> read_calibration(const std::string& file) {
    const YAML::Node doc = load_yaml(core::read_input_file(file, "calibration"), file);
    if (!doc.IsMap() || !doc["parameters"] || !doc["parameters"].IsMap()) {
        throw InputError(file, "parameters", "missing: a map of dotted parameter keys to values");
    }
    // Every key must be a model parameter, and its value must parse as that parameter does.
    std::vector<SetOverride> out;
    const auto docs = describe(ModelParams{}, StrategyOptions{});
    for (const auto& kv : doc["parameters"]) {
        const std::string key = kv.first.as<std::string>();
        if (!kv.second.IsScalar()) throw InputError(file, "parameters." + key, "expected a single value");
        const bool known = std::any_of(docs.begin(), docs.end(), [&](const ParamDoc& d) { return d.path == key; });
        if (!known) throw InputError(file, "parameters." + key, "not a model parameter (dmasim params lists them)");
        out.push_back(SetOverride{key, kv.second.Scalar()});
    }
    // Values go through the scenario checks; errors name this file and the parameter.
    parse_scenarios("strategy: pinned\nsizes: 4KiB\n", file, out);
    return out;
}

std::vector<Scenario> load_scenarios(const std::string& file, const std::vector<SetOverride>& sets) {
    return parse_scenarios(core::read_input_file(file, "scenario"), file, sets);
}

}  // namespace dmasim::config
