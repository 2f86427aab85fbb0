#include "dmasim/config/scenario.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "dmasim/config/param_checks.h"
#include "dmasim/config/param_io.h"
#include "dmasim/config/shipped_platforms.h"
#include "dmasim/config/yaml_io.h"
#include "dmasim/core/input_file.h"
#include "dmasim/core/error.h"
#include "dmasim/core/limits.h"

namespace dmasim::config {

namespace {

using core::InputError;

// Keys a scenario document may have at its top level, besides the parameter and strategy
// sections (which come from the visitors so that they cannot drift from the structs).
const std::vector<std::string>& run_keys() {
    static const std::vector<std::string> keys{"name",  "description", "platform", "strategy", "direction",
                                               "sizes", "repetitions", "warmup",   "flows",    "links"};
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

std::string over_max_copy(std::uint64_t bytes) {
    return core::to_string(Bytes{bytes}) + " is over the largest copy, " +
           core::to_string(Bytes{core::limits::kMaxCopyBytes}) + " (docs/scenarios.md, Limits)";
}

// How many sizes a range holds, worked out without expanding it: a range of 10^12 sizes must be
// refused before it is built, not after.
std::uint64_t range_count(std::uint64_t from, std::uint64_t to, double factor, std::uint64_t step) {
    if (step > 0) return (to - from) / step + 1;
    // Geometric: from * factor^k <= to. The count of k bounds the sizes from above (rounding
    // may merge neighbours); a factor so close to 1 that log() cannot tell is "too many".
    const double steps = std::log(static_cast<double>(to) / static_cast<double>(from)) / std::log(factor);
    if (!std::isfinite(steps) || steps > static_cast<double>(core::limits::kMaxSizes)) return core::limits::kMaxSizes + 1;
    return static_cast<std::uint64_t>(steps + 1e-9) + 1;
}

std::uint64_t size_value(const YAML::Node& node, const std::string& file, const std::string& key) {
    if (!node.IsScalar()) throw InputError(file, key, "expected a size such as 4KiB");
    try {
        const auto b = core::parse_bytes(node.Scalar());
        if (b.value == 0) throw InputError(file, key, "a size must be positive");
        if (b.value > core::limits::kMaxCopyBytes) throw InputError(file, key, over_max_copy(b.value));
        return b.value;
    } catch (const core::UnitError& e) {
        throw InputError(file, key, e.what());
    }
}

std::vector<std::uint64_t> read_sizes(const YAML::Node& node, const std::string& file) {
    if (node.IsScalar()) return {size_value(node, file, "sizes")};
    if (node.IsSequence()) {
        std::vector<std::uint64_t> out;
        if (node.size() > core::limits::kMaxSizes) {
            throw InputError(file, "sizes", "a list of " + std::to_string(node.size()) + " sizes; at most " +
                                                std::to_string(core::limits::kMaxSizes));
        }
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
    const std::uint64_t count = range_count(from, to, factor, step);
    if (count > core::limits::kMaxSizes) {
        const std::string held = step > 0 ? std::to_string(count) : "more than " + std::to_string(core::limits::kMaxSizes);
        throw InputError(file, "sizes", "the range holds " + held + " sizes; at most " +
                                            std::to_string(core::limits::kMaxSizes) + " (use a larger step or factor)");
    }
    return expand_size_range(from, to, factor, step);
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

std::vector<std::string> default_directions(const std::string& strategy) {
    if (strategy == "duplex" || strategy == "async_overlap") return {"both"};
    if (strategy == "periodic" || strategy == "third_party_dma") return {"h2d"};
    if (strategy == "peer") return {"h2d", "both"};
    return {"h2d", "d2h"};
}

// Checks that involve the cases a scenario expands to: a size against a strategy's options, and
// what one case costs to simulate. Each is a case `dmasim run` would otherwise deadlock on, run
// for hours, or one dmaprobe would refuse (gpu_validation/src/spec.cpp).
template <class Fail>
void check_cases(const Scenario& s, const Fail& fail) {
    namespace lim = core::limits;
    const StrategyOptions& o = s.options;
    const auto has = [&](const char* st) { return std::find(s.strategies.begin(), s.strategies.end(), st) != s.strategies.end(); };
    const auto size_text = [](std::uint64_t b) { return core::to_string(Bytes{b}); };
    const auto pieces = [](std::uint64_t bytes, std::uint64_t piece) { return (bytes + piece - 1) / std::max<std::uint64_t>(piece, 1); };
    const std::string max_pieces = std::to_string(lim::kMaxCasePieces);

    if (has("async_overlap")) {
        // A stream whose chunk is empty never finishes: the whole run used to hang on it.
        const auto n = static_cast<std::uint64_t>(o.async_overlap.streams);
        for (const auto size : s.sizes) {
            if (size < n) {
                fail("sizes", size_text(size) + " is below async_overlap.streams (" + std::to_string(n) +
                                  "): every stream needs a chunk of at least one byte");
            }
        }
    }
    if (has("zero_copy")) {
        const auto& z = o.zero_copy;
        for (const auto size : s.sizes) {
            if (size % z.access.value != 0) {
                fail("sizes", size_text(size) + " is not a multiple of zero_copy.access (" + core::to_string(z.access) +
                                  "): every thread moves whole accesses");
            }
            if (z.pattern == "chase" && size < lim::kChaseNodeBytes) {
                fail("sizes", size_text(size) + " holds no chase node: a pointer chase needs at least " +
                                  size_text(lim::kChaseNodeBytes));
            }
        }
        if (z.pattern == "chase" && o.compute.duration.ps > 0) {
            fail("compute.duration", "a compute kernel beside a pointer chase is not a case the harness runs");
        }
        if (z.copy_beside != "none" && z.pattern == "chase" && z.memory != "host") {
            fail("zero_copy.copy_beside", "a copy beside a pointer chase is for a chase through host memory (memory: host)");
        }
        if (z.copy_beside != "none" && z.stores_beside > 0) {
            fail("zero_copy.copy_beside", "a chase has stores or a copy beside it, not both (zero_copy.stores_beside is set)");
        }
        if (z.stores_beside > 0 && (z.pattern != "chase" || z.memory != "host")) {
            fail("zero_copy.stores_beside", "stores beside a kernel are for a chase through host memory (pattern: chase, memory: host)");
        }
        if (z.copy_beside != "none" && o.compute.duration.ps > 0) {
            fail("zero_copy.copy_beside", "a copy and a compute kernel beside one zero-copy kernel is not a case the harness runs");
        }
        // Strided or narrow accesses move whole 32-byte sectors for fewer useful bytes: the
        // simulated work is the sectors, up to 32 times the size.
        const auto waste = static_cast<std::uint64_t>(
            std::min<std::int64_t>(z.stride, std::max<std::int64_t>(1, 32 / static_cast<std::int64_t>(z.access.value))));
        for (const auto& dir : s.directions) {
            const std::uint64_t ways = dir == "both" ? 2 : 1;
            const std::uint64_t copies = z.copy_beside == "none" ? 0 : 1;
            for (const auto size : s.sizes) {
                const std::uint64_t moved = size * waste * ways + size * copies;
                if (z.pattern == "stream" && moved > lim::kMaxCaseBytes) {
                    fail("sizes", size_text(size) + " " + dir + " with zero_copy.access " + core::to_string(z.access) +
                                      " and stride " + std::to_string(z.stride) + (copies ? " and the copy beside" : "") +
                                      " moves " + size_text(moved) + " in 32-byte sectors; one case may move " +
                                      size_text(lim::kMaxCaseBytes));
                }
            }
        }
    }
    if (has("cpu_mapped")) {
        // Every uncached load is a round trip of its own, however few bytes it reads.
        const std::uint64_t load = s.params.cpu.mmio_read_bytes.value;
        for (const auto size : s.sizes) {
            const std::uint64_t work = pieces(size, load) * 64;
            if (std::find(s.directions.begin(), s.directions.end(), "d2h") != s.directions.end() && work > lim::kMaxCaseBytes) {
                fail("sizes", size_text(size) + " d2h in " + core::to_string(Bytes{load}) + " loads is " +
                                  std::to_string(pieces(size, load)) + " round trips, as much work as moving " +
                                  size_text(work) + "; one case may move " + size_text(lim::kMaxCaseBytes));
            }
        }
    }
    if (has("duplex") && o.compute.duration.ps > 0 && o.duplex.one_way_beside) {
        fail("duplex.one_way_beside", "not with a compute kernel beside the pair: the blocking copies would run without it");
    }
    if (has("duplex") && o.duplex.burst.value > 0) {
        if (o.compute.duration.ps > 0) {
            fail("duplex.burst", "not with a compute kernel beside the copies: the one-way bursts would run without it");
        }
        if (o.duplex.one_way_beside) {
            fail("duplex.burst", "not with duplex.one_way_beside: a burst times its one-way copies itself");
        }
        for (const auto size : s.sizes) {
            const std::uint64_t copies = o.duplex.burst_copies(size);
            if (copies > static_cast<std::uint64_t>(lim::kMaxBurstCopies)) {
                fail("duplex.burst", core::to_string(o.duplex.burst) + " of " + size_text(size) + " copies is " +
                                         std::to_string(copies) + " copies each way; at most " +
                                         std::to_string(lim::kMaxBurstCopies));
            }
            if (copies * size > lim::kMaxCaseBytes) {
                fail("duplex.burst", std::to_string(copies) + " copies of " + size_text(size) + " move " +
                                         size_text(copies * size) + " each way; one case may move " +
                                         size_text(lim::kMaxCaseBytes));
            }
        }
    }
    if (has("duplex") && o.compute.duration.ps > 0 && o.duplex.host_memory == "pageable") {
        fail("compute.duration", "a compute kernel beside duplex needs duplex.host_memory: pinned (the harness times "
                                 "the copies with CUDA events)");
    }
    if (o.host_buffer.fresh) {
        for (const char* st : {"pinned", "registered"}) {
            if (has(st)) {
                fail("host_buffer.fresh", std::string("never-touched memory is a pageable case: ") + st +
                                              " memory is touched when it is pinned");
            }
        }
    }
    if (has("peer") && o.peer.src_device == o.peer.dst_device) {
        for (const auto& dir : s.directions) {
            if (dir != "h2d") {
                fail("direction", "a copy within one GPU (peer.src_device = peer.dst_device) goes one way: h2d, not " + dir);
            }
        }
    }

    // Pieces of a case: each becomes an operation (or a staging job) of its program.
    const bool peer_staged = has("peer");
    // A pageable copy's smaller pieces (into the GPU, unless set larger) bound its count.
    const bool h2d_smaller = s.params.pageable.h2d_piece.value < s.params.pageable.bounce_size.value;
    const std::uint64_t bounce = peer_staged  ? s.params.runtime.peer_staging_piece.value
                                 : h2d_smaller ? s.params.pageable.h2d_piece.value
                                               : s.params.pageable.bounce_size.value;
    const char* bounce_key = peer_staged ? "runtime.peer_staging_piece" : h2d_smaller ? "pageable.h2d_piece" : "pageable.bounce_size";
    const bool staged = has("pageable") || peer_staged || (has("duplex") && o.duplex.host_memory == "pageable");
    for (const auto size : s.sizes) {
        if (staged && pieces(size, bounce) > lim::kMaxCasePieces) {
            fail(bounce_key, size_text(size) + " staged through " + core::to_string(Bytes{bounce}) + " buffers is " +
                                 std::to_string(pieces(size, bounce)) + " chunks; at most " + max_pieces);
        }
        const std::uint64_t aperture = s.params.gpu.bar_aperture.value;
        if (has("third_party_dma") && aperture > 0 && pieces(size, aperture) > lim::kMaxCasePieces) {
            fail("gpu.bar_aperture", size_text(size) + " through a BAR window of " + core::to_string(Bytes{aperture}) +
                                         " is " + std::to_string(pieces(size, aperture)) + " windows; at most " +
                                         max_pieces);
        }
    }
    if (has("periodic") && o.periodic.via == "pageable") {
        const std::uint64_t chunks = pieces(o.periodic.size.value, bounce) * static_cast<std::uint64_t>(o.periodic.count);
        if (chunks > lim::kMaxCasePieces) {
            fail("frame.count", std::to_string(o.periodic.count) + " pageable frames of " + core::to_string(o.periodic.size) +
                                    " in " + core::to_string(Bytes{bounce}) + " chunks are " + std::to_string(chunks) +
                                    " chunks; at most " + max_pieces);
        }
    }
}

void validate(Scenario& s) {
    const std::string& f = s.file;
    auto fail = [&](const std::string& key, const std::string& msg) { throw InputError(f, key, msg); };
    // Model parameters: the same checks as a platform file's nodes and links get (param_checks.h).
    check_model_params(s.params, fail);
    const auto& z = s.options.zero_copy;
    if (z.access.value != 1 && z.access.value != 2 && z.access.value != 4 && z.access.value != 8 && z.access.value != 16) {
        fail("zero_copy.access", "must be 1B, 2B, 4B, 8B or 16B");
    }
    if (z.pattern != "stream" && z.pattern != "chase") fail("zero_copy.pattern", "must be stream or chase");
    if (z.copy_beside != "none" && z.copy_beside != "h2d" && z.copy_beside != "d2h") {
        fail("zero_copy.copy_beside", "must be none, h2d or d2h");
    }
    if (z.memory != "host" && z.memory != "device") fail("zero_copy.memory", "must be host or device");
    if (z.memory == "device" && z.pattern != "chase") {
        fail("zero_copy.memory", "device memory is a reference for the chase only (pattern: chase)");
    }
    namespace lim = core::limits;
    auto in_range = [&](const char* key, std::int64_t v, std::int64_t lo, std::int64_t hi) {
        if (v < lo || v > hi) fail(key, "must be " + std::to_string(lo) + ".." + std::to_string(hi));
    };
    // Durations go to the harness in whole nanoseconds (docs/plan.md).
    const Duration max_duration{lim::kMaxDurationNs * 1000};
    auto duration_at_most = [&](const char* key, Duration d) {
        if (d.ps < 0) fail(key, "must not be negative");
        if (d.ps > max_duration.ps) fail(key, core::to_string(d) + " is over " + core::to_string(max_duration));
    };
    in_range("zero_copy.hops", z.hops, 1, lim::kMaxHops);
    // A grid the GPU holds at once beside the chase's own block (1056 blocks of 256 threads fill
    // an H100); the model simulates every store while the chase runs, so its hops are bounded.
    in_range("zero_copy.stores_beside", z.stores_beside, 0, lim::kMaxStoresBesideBlocks);
    if ((z.stores_beside > 0 || z.copy_beside != "none") && z.pattern == "chase") {
        in_range("zero_copy.hops", z.hops, 1, lim::kMaxHopsBesideStores);
    }
    const auto& c = s.options.compute;
    duration_at_most("compute.duration", c.duration);
    in_range("compute.blocks", c.blocks, 1, lim::kMaxComputeBlocks);
    if (c.threads < 32 || c.threads > 1024 || c.threads % 32 != 0) {
        fail("compute.threads", "must be a multiple of 32 from 32 to 1024");
    }
    if (c.bytes.value < lim::kMinComputeBytes || c.bytes.value > lim::kMaxComputeBytes) {
        fail("compute.bytes", "must be " + core::to_string(Bytes{lim::kMinComputeBytes}) + ".." +
                                  core::to_string(Bytes{lim::kMaxComputeBytes}));
    }
    const auto& hb = s.options.host_buffer;
    if (hb.offset.value > lim::kMaxHostOffset) {
        fail("host_buffer.offset", "must be at most " + core::to_string(Bytes{lim::kMaxHostOffset}));
    }
    const auto& ai = s.options.async_overlap.issue;
    if (ai != "depth_first" && ai != "breadth_first") fail("async_overlap.issue", "must be depth_first or breadth_first");
    in_range("zero_copy.stride", z.stride, 1, lim::kMaxStride);
    in_range("zero_copy.blocks", z.blocks, 1, lim::kMaxGridBlocks);
    if (z.threads < 32 || z.threads > 1024 || z.threads % 32 != 0) {
        fail("zero_copy.threads", "must be a multiple of 32 from 32 to 1024");
    }
    in_range("async_overlap.streams", s.options.async_overlap.streams, 1, lim::kMaxStreams);
    duration_at_most("async_overlap.kernel", s.options.async_overlap.kernel);
    const auto& fr = s.options.periodic;
    if (fr.size.value == 0) fail("frame.size", "must be positive");
    if (fr.size.value > lim::kMaxCopyBytes) fail("frame.size", over_max_copy(fr.size.value));
    // The harness takes periods and deadlines in whole nanoseconds, and 0 means none.
    if (fr.period.ps < 1000) fail("frame.period", "must be at least 1ns");
    duration_at_most("frame.period", fr.period);
    if (fr.deadline.ps != 0 && fr.deadline.ps < 1000) fail("frame.deadline", "must be 0s (the period) or at least 1ns");
    duration_at_most("frame.deadline", fr.deadline);
    duration_at_most("frame.kernel", fr.kernel);
    in_range("frame.count", fr.count, 1, lim::kMaxFrames);
    // count x period would overflow 64 bits (10^5 x 3.6e15 ps); count x size cannot (10^5 x 2^36).
    if (fr.count > lim::kMaxStreamNs * 1000 / fr.period.ps) {
        fail("frame.count", std::to_string(fr.count) + " frames of " + core::to_string(fr.period) + " last over " +
                                core::to_string(Duration{lim::kMaxStreamNs * 1000}));
    }
    if (static_cast<std::uint64_t>(fr.count) * fr.size.value > lim::kMaxCaseBytes) {
        fail("frame.count", std::to_string(fr.count) + " frames of " + core::to_string(fr.size) + " move over " +
                                core::to_string(Bytes{lim::kMaxCaseBytes}) + ", the most one case may move");
    }
    if (fr.via != "pinned" && fr.via != "pageable" && fr.via != "zero_copy" && fr.via != "fpga_direct" &&
        fr.via != "fpga_via_host") {
        fail("frame.via", "'" + fr.via + "' is not one of: pinned, pageable, zero_copy, fpga_direct, fpga_via_host");
    }
    if (fr.covers != "processing" && fr.covers != "transfer") {
        fail("frame.covers", "'" + fr.covers + "' is not one of: processing, transfer");
    }
    const auto& p = s.options.peer;
    if (p.access != "on" && p.access != "off" && p.access != "both") fail("peer.access", "must be on, off or both");
    in_range("peer.src_device", p.src_device, 0, lim::kMaxDeviceOrdinal);
    in_range("peer.dst_device", p.dst_device, 0, lim::kMaxDeviceOrdinal);
    if (p.src_device == p.dst_device && p.access != "on") {
        fail("peer.access", "a copy within one GPU (src_device = dst_device) has no peer access to turn off: use on");
    }
    if (p.refused != "staged" && p.refused != "error") fail("peer.refused", "must be staged or error");
    if (p.enable != "both_ways" && p.enable != "one_way") fail("peer.enable", "must be both_ways or one_way");
    if (s.options.cpu_mapped.target != "gpu" && s.options.cpu_mapped.target != "card") {
        fail("cpu_mapped.target", "must be gpu or card");
    }
    in_range("registered.reuses", s.options.registered.reuses, 1, lim::kMaxReuses);
    const auto& du = s.options.duplex.host_memory;
    if (du != "pinned" && du != "pageable") fail("duplex.host_memory", "must be pinned or pageable");
    if (s.options.duplex.burst.value > 0 && du != "pinned") {
        fail("duplex.burst", "needs duplex.host_memory: pinned (a burst's copies are queued on streams and timed with events)");
    }
    if (s.options.duplex.one_way_beside && du != "pinned") {
        fail("duplex.one_way_beside", "needs duplex.host_memory: pinned (the pair is timed with events, the blocking copies beside it on the host clock)");
    }

    in_range("repetitions", s.repetitions, 1, lim::kMaxRepetitions);
    in_range("warmup", s.warmup, 0, lim::kMaxWarmup);
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
            if (st == "periodic" && dir != "h2d") {
                fail("direction", st + " moves data towards the GPU: its direction is 'h2d'");
            }
            if (st == "third_party_dma" && dir == "both") {
                fail("direction", "third_party_dma moves one way between the card and the GPU: h2d (the card's frames into "
                                  "the GPU) or d2h (the GPU's memory out to the card), not 'both'");
            }
            // dmaprobe measures these one way only (docs/plan.md): d2h is no peer direction, and a
            // chase is a chain of loads.
            if (st == "peer" && dir == "d2h") {
                fail("direction", "peer goes one way (h2d: src_device to dst_device) or both ways (both), not 'd2h'");
            }
            if (st == "cpu_mapped" && dir == "both") {
                fail("direction", "cpu_mapped is the CPU storing (h2d) or loading (d2h), one at a time, not 'both'");
            }
            if (st == "zero_copy" && s.options.zero_copy.pattern == "chase" && dir != "h2d") {
                fail("direction", "a pointer chase is a chain of loads: its direction is 'h2d', not '" + dir + "'");
            }
        }
    }
    check_cases(s, fail);
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

// One setting of a device's own link: the key must be a link.* key and the value parse as it
// does there (bounds are checked with the platform, as for link.*).
void set_device_link(Scenario& s, const std::string& device, const std::string& key, const std::string& value,
                     const std::string& where) {
    LinkParams probe;
    bool found = false;
    probe.visit([&](const FieldInfo& fi, auto& field) {
        if (found || key != fi.key) return;
        found = true;
        try {
            parse_field(value, field);
        } catch (const core::UnitError& e) {
            throw InputError(s.file, where, e.what());
        }
    });
    if (!found) {
        std::string keys;
        probe.visit([&](const FieldInfo& fi, auto&) { keys += std::string(keys.empty() ? "" : ", ") + fi.key; });
        throw InputError(s.file, where, "not a link setting; a device's link takes: " + keys);
    }
    for (auto& d : s.device_links) {
        if (d.device == device && d.key == key) {
            d.value = value;
            return;
        }
    }
    s.device_links.push_back(Scenario::DeviceLink{device, key, value});
}

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
    if (const YAML::Node links = doc["links"]) {
        if (!links.IsMap()) throw InputError(file, "links", "expected a map of devices, e.g. links: { fpga0: { generation: 3, lanes: 8 } }");
        for (const auto& dev : links) {
            const std::string device = dev.first.as<std::string>();
            const std::string where = "links." + device;
            if (!dev.second.IsMap() || dev.second.size() == 0) {
                throw InputError(file, where, "expected a map of link settings, e.g. { generation: 3, lanes: 8 }");
            }
            for (const auto& kv : dev.second) {
                const std::string key = kv.first.as<std::string>();
                if (!kv.second.IsScalar()) throw InputError(file, where + "." + key, "expected a single value");
                set_device_link(s, device, key, kv.second.Scalar(), where + "." + key);
            }
        }
    }

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
            // A copy within one GPU goes one way only, and a pointer chase loads.
            const bool one_way = (st == "peer" && s.options.peer.src_device == s.options.peer.dst_device) ||
                                 (st == "zero_copy" && s.options.zero_copy.pattern == "chase");
            for (const auto& d : one_way ? std::vector<std::string>{"h2d"} : default_directions(st)) {
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
    if (node.size() > static_cast<std::size_t>(core::limits::kMaxFlows)) {
        throw InputError(file, "flows", std::to_string(node.size()) + " flows; at most " +
                                            std::to_string(core::limits::kMaxFlows) + " run together");
    }
    std::uint64_t total_bytes = 0;
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
        if (flow.size > core::limits::kMaxCopyBytes) throw InputError(file, where + ".size", over_max_copy(flow.size));
        total_bytes += flow.size;
        if (total_bytes > core::limits::kMaxCaseBytes) {
            throw InputError(file, where + ".size", "the flows move over " + core::to_string(Bytes{core::limits::kMaxCaseBytes}) +
                                                        " together, the most one case may move");
        }
        const Duration max_start{core::limits::kMaxDurationNs * 1000};
        if (flow.start.ps < 0 || flow.start.ps > max_start.ps) {
            throw InputError(file, where + ".start", "must be 0s.." + core::to_string(max_start));
        }
        for (const auto& [key, v] : {std::pair<const char*, std::int64_t>{".device", flow.device}, {".peer_device", flow.peer_device}}) {
            if (v < 0 || v > core::limits::kMaxDeviceOrdinal) {
                throw InputError(file, where + key, "must be 0.." + std::to_string(core::limits::kMaxDeviceOrdinal));
            }
        }
        if (flow.strategy == "peer" && flow.device == flow.peer_device) {
            throw InputError(file, where + ".peer_device", "a peer flow needs two different GPUs");
        }
        for (const auto& other : s.flows) {
            if (other.name == flow.name) throw InputError(file, where + ".name", "two flows are named '" + flow.name + "'");
        }
        s.flows.push_back(flow);
    }
}

// The platform a scenario document names once the overrides are applied, for its calibration.
std::string platform_of(const YAML::Node& doc) {
    const YAML::Node p = doc["platform"];
    return p && p.IsScalar() ? p.Scalar() : Scenario{}.platform;
}

std::vector<Scenario> read_all(std::vector<YAML::Node> docs, const std::string& origin,
                               const std::vector<SetOverride>& sets, const CalibrationChoice& choice) {
    std::vector<Scenario> out;
    std::set<std::string> names;
    std::map<std::string, Calibration> loaded;  // by reference: a file is read once per file of scenarios
    std::map<std::string, PlatformHost> hosts;  // by platform reference, likewise (a sweep names one thousands of times)
    for (std::size_t i = 0; i < docs.size(); ++i) {
        if (docs[i].IsNull()) continue;
        if (!docs[i].IsMap()) throw InputError(origin, "", "a scenario must be a YAML map of settings");
        // The name as the file gives it: an override scoped to a scenario finds it by that name.
        const YAML::Node name = docs[i]["name"];
        const std::string own_name = name && name.IsScalar() ? name.Scalar() : std::string();
        const auto apply_overrides = [&] {
            for (const auto& set : sets) {
                if (set.scenario.empty() || set.scenario == own_name) apply_set(docs[i], set);
            }
        };
        // The overrides first, since one may name the platform; the calibration's parameters
        // then, and the overrides again on top of them: --set wins over a calibration.
        apply_overrides();
        std::string ref = choice.ref;
        std::string referrer = "--calibration";
        std::string relative_to;
        if (choice.from_platform) {
            const std::string platform = platform_of(docs[i]);
            // A platform that is not there is refused by read_document, naming the scenario's key.
            ref = is_platform(platform, origin) ? platform_calibration(platform, origin) : "none";
            const std::string resolved = resolve_platform(platform, origin);
            referrer = shipped_platforms().count(resolved) ? "platforms/" + resolved + ".yaml" : resolved;
            relative_to = shipped_platforms().count(resolved) ? "" : resolved;
        }
        // Keyed by where the reference was found too: two platform files may each name a
        // calibration.yaml of their own folder.
        const std::string cache_key = relative_to + "\n" + ref;
        auto it = loaded.find(cache_key);
        if (it == loaded.end()) {
            it = loaded.emplace(cache_key, load_calibration(ref, referrer, choice.from_platform ? "calibration" : ref, relative_to))
                     .first;
        }
        // The platform's own host values go with the calibration it names: over it, under --set.
        PlatformHost host;
        if (choice.from_platform) {
            const std::string platform = platform_of(docs[i]);
            auto h = hosts.find(platform);
            if (h == hosts.end()) {
                h = hosts.emplace(platform, is_platform(platform, origin) ? platform_host(platform, origin) : PlatformHost{}).first;
            }
            host = h->second;
        }
        if (!it->second.parameters.empty() || !host.parameters.empty()) {
            for (const auto& p : it->second.parameters) apply_set(docs[i], p);
            for (const auto& p : host.parameters) apply_set(docs[i], p);
            apply_overrides();
        }
        Scenario s = read_document(docs[i], origin, i);
        s.calibration = it->second.label;
        if (!host.parameters.empty()) s.calibration += kHostOf + host.origin;
        if (!names.insert(s.name).second) throw InputError(origin, "name", "two scenarios are named '" + s.name + "'");
        out.push_back(std::move(s));
    }
    if (out.empty()) throw InputError(origin, "", "no scenario in file");
    return out;
}

Calibration read_calibration_text(const std::string& text, const std::string& file, const std::string& label) {
    const YAML::Node doc = load_yaml(text, file);
    if (!doc.IsMap() || !doc["parameters"] || !doc["parameters"].IsMap()) {
        throw InputError(file, "parameters", "missing: a map of dotted parameter keys to values");
    }
    // Every key must be a model parameter, and its value must parse as that parameter does.
    Calibration out;
    out.label = label;
    const auto docs = describe(ModelParams{}, StrategyOptions{});
    for (const auto& kv : doc["parameters"]) {
        const std::string key = kv.first.as<std::string>();
        if (!kv.second.IsScalar()) throw InputError(file, "parameters." + key, "expected a single value");
        const bool known = std::any_of(docs.begin(), docs.end(), [&](const ParamDoc& d) { return d.path == key; });
        if (!known) throw InputError(file, "parameters." + key, "not a model parameter (dmasim params lists them)");
        out.parameters.push_back(SetOverride{key, kv.second.Scalar(), ""});
    }
    // Values go through the scenario checks; errors name this file and the parameter.
    parse_scenarios("strategy: pinned\nsizes: 4KiB\n", file, out.parameters);
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
    SetOverride s{trim(text.substr(0, eq)), trim(text.substr(eq + 1)), ""};
    // Key paths have no ':'; one before the '=' names the scenario the override is for.
    if (const auto colon = s.path.find(':'); colon != std::string::npos) {
        s.scenario = trim(s.path.substr(0, colon));
        s.path = trim(s.path.substr(colon + 1));
        if (s.scenario.empty()) {
            throw InputError("--set", text, "expected NAME:KEY=VALUE, e.g. --set pinned:link.generation=4");
        }
    }
    if (s.path.empty() || s.path.front() == '.' || s.path.back() == '.' ||
        s.path.find("..") != std::string::npos) {
        throw InputError("--set", s.path, "is not a dotted key path such as link.lanes");
    }
    return s;
}

std::vector<std::uint64_t> expand_size_range(std::uint64_t from, std::uint64_t to, double factor,
                                             std::uint64_t step) {
    // Scenarios count a range before expanding it; the caps here keep a direct call from
    // exhausting memory or wrapping `v` past `to` all the same.
    std::vector<std::uint64_t> out;
    if (from > to) return out;
    if (step > 0) {
        for (std::uint64_t v = from;; v += step) {
            out.push_back(v);
            if (to - v < step || out.size() > core::limits::kMaxSizes) break;
        }
        return out;
    }
    if (!(factor > 1.0)) return {from};
    // Geometric: from * factor^k, rounded to whole bytes, while within `to`.
    for (std::uint64_t k = 0; k <= core::limits::kMaxSizes; ++k) {
        const double v = std::round(static_cast<double>(from) * std::pow(factor, static_cast<double>(k)));
        if (v > static_cast<double>(to) * (1.0 + 1e-12)) break;
        const auto b = static_cast<std::uint64_t>(v);
        if (out.empty() || out.back() != b) out.push_back(b);
        if (out.size() > core::limits::kMaxSizes) break;
    }
    return out;
}

std::vector<Scenario> parse_scenarios(const std::string& yaml_text, const std::string& origin,
                                      const std::vector<SetOverride>& sets, const CalibrationChoice& calibration) {
    std::vector<YAML::Node> docs = load_yaml_all(yaml_text, origin);
    try {
        return read_all(std::move(docs), origin, sets, calibration);
    } catch (const YAML::Exception& e) {
        throw InputError(origin, "", yaml_error_message(e));
    }
}

CalibrationChoice calibration_choice(const std::string& option) {
    return option.empty() ? CalibrationChoice::platform() : CalibrationChoice::fixed(option);
}

std::vector<std::string> calibration_names() {
    std::vector<std::string> names;
    for (const auto& [name, text] : shipped_calibrations()) names.push_back(name);
    return names;
}

Calibration load_calibration(const std::string& ref, const std::string& referrer, const std::string& key,
                             const std::string& relative_to) {
    if (ref == "none") return Calibration{};
    if (const auto it = shipped_calibrations().find(ref); it != shipped_calibrations().end()) {
        // Built in, so read and checked once per process (every scenario file names one).
        static std::map<std::string, Calibration> checked;
        auto c = checked.find(ref);
        if (c == checked.end()) {
            c = checked.emplace(ref, read_calibration_text(it->second, "results/" + ref + "/calibration.yaml (built in)", ref))
                    .first;
        }
        return c->second;
    }
    std::string path = ref;
    const auto slash = relative_to.find_last_of('/');
    if (slash != std::string::npos && !ref.empty() && ref.front() != '/') {
        const std::string beside = relative_to.substr(0, slash + 1) + ref;
        if (core::is_regular_file(beside)) path = beside;
    }
    std::error_code ec;
    if (ref.empty() || !std::filesystem::exists(path, ec)) {
        throw InputError(referrer, key.empty() ? ref : key,
                         "'" + ref + "' is neither a built-in calibration (" + join(calibration_names()) +
                             "), none, nor a calibration file");
    }
    return read_calibration_text(core::read_input_file(path, "calibration"), path, path);
}

std::string platform_calibration(const std::string& platform_ref, const std::string& scenario_file) {
    const std::string resolved = resolve_platform(platform_ref, scenario_file);
    const auto it = shipped_platforms().find(resolved);
    const std::string origin = it != shipped_platforms().end() ? "platforms/" + resolved + ".yaml" : resolved;
    const YAML::Node doc =
        load_yaml(it != shipped_platforms().end() ? it->second : core::read_input_file(resolved, "platform"), origin);
    if (!doc.IsMap() || !doc["calibration"]) return "none";
    const YAML::Node c = doc["calibration"];
    if (!c.IsScalar() || c.Scalar().empty()) {
        throw InputError(origin, "calibration", "expected the name of a built-in calibration (" +
                                                    join(calibration_names()) + "), a calibration file, or none");
    }
    return c.Scalar();
}

PlatformHost platform_host(const std::string& platform_ref, const std::string& scenario_file) {
    const std::string resolved = resolve_platform(platform_ref, scenario_file);
    const auto it = shipped_platforms().find(resolved);
    PlatformHost out;
    out.origin = it != shipped_platforms().end() ? "platforms/" + resolved + ".yaml" : resolved;
    const YAML::Node doc =
        load_yaml(it != shipped_platforms().end() ? it->second : core::read_input_file(resolved, "platform"), out.origin);
    if (!doc.IsMap() || !doc["host"]) return out;
    const YAML::Node host = doc["host"];
    if (!host.IsMap()) {
        throw InputError(out.origin, "host", "expected a map of sections, e.g. host: { cpu: { memcpy_bandwidth: 6GB/s } }");
    }
    const auto docs = describe(ModelParams{}, StrategyOptions{});
    for (const auto& section : host) {
        const std::string name = section.first.as<std::string>();
        if (std::find(kHostSections.begin(), kHostSections.end(), name) == kHostSections.end()) {
            throw InputError(out.origin, "host." + name,
                             "not a host section; host takes: " + join(std::vector<std::string>(kHostSections.begin(), kHostSections.end())));
        }
        if (!section.second.IsMap()) throw InputError(out.origin, "host." + name, "expected a map of " + name + ".* keys");
        for (const auto& kv : section.second) {
            const std::string path = name + "." + kv.first.as<std::string>();
            if (!kv.second.IsScalar()) throw InputError(out.origin, "host." + path, "expected a single value");
            const bool known = std::any_of(docs.begin(), docs.end(), [&](const ParamDoc& d) { return d.path == path; });
            if (!known) throw InputError(out.origin, "host." + path, "not a model parameter (dmasim params lists them)");
            out.parameters.push_back(SetOverride{path, kv.second.Scalar(), ""});
        }
    }
    // Each value through the scenario checks, one at a time so that an error names its key.
    for (const auto& p : out.parameters) {
        try {
            parse_scenarios("strategy: pinned\nsizes: 4KiB\n", out.origin, {p});
        } catch (const InputError& e) {
            throw InputError(out.origin, "host." + p.path, e.what());
        }
    }
    return out;
}

std::vector<SetOverride> read_calibration(const std::string& file) { return load_calibration(file).parameters; }

namespace {

// Finds `section.key` among the model parameters and sets it from text.
struct ParameterSetter {
    const SetOverride& set;
    const std::string& file;
    bool found = false;

    template <class S>
    void section(const char* name, const char* /*doc*/, S& params) {
        const std::string prefix = std::string(name) + ".";
        if (set.path.compare(0, prefix.size(), prefix) != 0) return;
        const std::string key = set.path.substr(prefix.size());
        params.visit([&](const FieldInfo& fi, auto& field) {
            if (found || key != fi.key) return;
            found = true;
            try {
                parse_field(set.value, field);
            } catch (const core::UnitError& e) {
                throw InputError(file, set.path, e.what());
            }
        });
    }
};

}  // namespace

void apply_parameter(Scenario& s, const SetOverride& set) {
    if (set.path.compare(0, 6, "links.") == 0) {
        // links.DEVICE.KEY: one device's own link.
        const std::string rest = set.path.substr(6);
        const auto dot = rest.find('.');
        if (dot == std::string::npos || dot == 0 || dot + 1 == rest.size()) {
            throw InputError(s.file, set.path, "a device's link is set as links.DEVICE.KEY, e.g. links.fpga0.lanes=8");
        }
        set_device_link(s, rest.substr(0, dot), rest.substr(dot + 1), set.value, set.path);
        validate(s);
        return;
    }
    ParameterSetter setter{set, s.file};
    s.params.visit_sections(setter);
    if (!setter.found) throw InputError(s.file, set.path, "not a model parameter (section.key, see dmasim params)");
    if (std::find(s.explicit_keys.begin(), s.explicit_keys.end(), set.path) == s.explicit_keys.end()) {
        s.explicit_keys.push_back(set.path);
    }
    if (set.path.compare(0, 5, "link.") == 0) s.link_explicit = true;
    validate(s);
}

std::vector<Scenario> load_scenarios(const std::string& file, const std::vector<SetOverride>& sets,
                                     const CalibrationChoice& calibration) {
    return parse_scenarios(core::read_input_file(file, "scenario"), file, sets, calibration);
}

}  // namespace dmasim::config
