#include "spec.h"

#include <algorithm>
#include <sstream>

#include "dmasim/core/error.h"
#include "dmasim/core/limits.h"
#include "dmasim/core/units.h"

namespace dmaprobe {

using dmasim::core::InputError;
using dmasim::core::PlanCase;
// The bounds `dmasim validate` applies to scenarios: a plan dmasim writes always passes here.
namespace lim = dmasim::core::limits;

namespace {

struct StrategyName {
    Strategy strategy;
    const char* name;
};

constexpr StrategyName kStrategies[] = {
    {Strategy::pageable, "pageable"},
    {Strategy::pinned, "pinned"},
    {Strategy::registered, "registered"},
    {Strategy::async_overlap, "async_overlap"},
    {Strategy::duplex, "duplex"},
    {Strategy::zero_copy, "zero_copy"},
    {Strategy::peer, "peer"},
    {Strategy::third_party_dma, "third_party_dma"},
    {Strategy::cpu_mapped, "cpu_mapped"},
    {Strategy::periodic, "periodic"},
};

// Reads typed keys of one case and reports problems with the plan, case and key named.
class CaseReader {
public:
    CaseReader(const PlanCase& c, std::string where) : c_(c), where_(std::move(where)) {}

    const std::string& where() const { return where_; }
    void set_where(std::string w) { where_ = std::move(w); }

    [[noreturn]] void fail(const std::string& key, const std::string& message) const {
        throw InputError(where_, key, message);
    }

    bool has(const std::string& key) const { return c_.has(key); }

    std::string str(const std::string& key, const std::string& why) const {
        if (!c_.has(key)) fail(key, "missing (" + why + ")");
        const std::string& v = c_.str(key);
        if (v.empty()) fail(key, "empty value");
        return v;
    }

    std::int64_t integer(const std::string& key, std::int64_t lo, std::int64_t hi,
                         const std::string& why) const {
        if (!c_.has(key)) fail(key, "missing (" + why + ")");
        return checked(key, lo, hi);
    }

    std::int64_t integer_or(const std::string& key, std::int64_t fallback, std::int64_t lo,
                            std::int64_t hi) const {
        if (!c_.has(key)) return fallback;
        return checked(key, lo, hi);
    }

private:
    std::int64_t checked(const std::string& key, std::int64_t lo, std::int64_t hi) const {
        std::int64_t v = 0;
        try {
            v = c_.integer(key);
        } catch (const std::exception&) {
            fail(key, "'" + c_.str(key) + "' is not an integer");
        }
        if (v < lo || v > hi) {
            std::ostringstream os;
            os << v << " is out of range (" << lo << " to " << hi << ")";
            fail(key, os.str());
        }
        return v;
    }

    const PlanCase& c_;
    std::string where_;
};

constexpr std::int64_t kMaxNs = lim::kMaxDurationNs;

Direction parse_direction(const CaseReader& r) {
    const std::string d = r.str("direction", "every case has one");
    if (d == "h2d") return Direction::h2d;
    if (d == "d2h") return Direction::d2h;
    if (d == "both") return Direction::both;
    r.fail("direction", "'" + d + "' is not one of h2d, d2h, both");
}

void require_direction(const CaseReader& r, const MeasurementSpec& s, bool h2d, bool d2h, bool both,
                       const std::string& hint) {
    const bool ok = (s.direction == Direction::h2d && h2d) || (s.direction == Direction::d2h && d2h) ||
                    (s.direction == Direction::both && both);
    if (!ok) {
        r.fail("direction", std::string("'") + to_string(s.direction) + "' is not valid for strategy " +
                                to_string(s.strategy) + ": " + hint);
    }
}

HostMemory parse_host_memory(const CaseReader& r, const std::string& key, bool allow_zero_copy) {
    const std::string v = r.str(key, std::string("needed by this strategy"));
    if (v == "pinned") return HostMemory::pinned;
    if (v == "pageable") return HostMemory::pageable;
    if (v == "zero_copy" && allow_zero_copy) return HostMemory::zero_copy;
    r.fail(key, "'" + v + "' is not one of pinned, pageable" + (allow_zero_copy ? ", zero_copy" : ""));
}

std::string unsupported_reason(Strategy s) {
    switch (s) {
        case Strategy::third_party_dma:
            return "third_party_dma needs a third-party PCIe device (capture card/FPGA) writing into "
                   "GPU memory through its BAR; this machine has none and the harness cannot emulate it";
        case Strategy::cpu_mapped:
            return "cpu_mapped needs GPU memory mapped into the CPU's address space through the BAR "
                   "(GDRCopy-style kernel driver support), which the CUDA runtime alone does not give";
        default:
            return "the harness cannot run this strategy";
    }
}

void parse_host_buffer(const CaseReader& r, MeasurementSpec& s) {
    s.host_offset = static_cast<std::uint64_t>(r.integer_or("host_offset", 0, 0, static_cast<std::int64_t>(lim::kMaxHostOffset)));
    s.host_fresh = r.integer_or("host_fresh", 0, 0, 1) == 1;
}

void parse_compute(const CaseReader& r, MeasurementSpec& s) {
    s.compute_ns = r.integer_or("compute_ns", 0, 0, kMaxNs);
    if (s.compute_ns == 0) return;
    s.compute_blocks = static_cast<int>(r.integer("compute_blocks", 1, lim::kMaxComputeBlocks, "compute kernel: grid size"));
    s.compute_threads = static_cast<int>(r.integer("compute_threads", 32, lim::kMaxThreadsPerBlock, "compute kernel: threads per block"));
    s.compute_bytes = static_cast<std::uint64_t>(
        r.integer("compute_bytes", static_cast<std::int64_t>(lim::kMinComputeBytes),
                  static_cast<std::int64_t>(lim::kMaxComputeBytes), "compute kernel: GPU memory it streams over"));
    if (s.chase) r.fail("compute_ns", "a compute kernel beside a pointer chase is not a case of the harness");
}

void parse_strategy_keys(const CaseReader& r, MeasurementSpec& s, const Options& opt) {
    switch (s.strategy) {
        case Strategy::pageable:
        case Strategy::pinned:
            require_direction(r, s, true, true, false,
                              "use h2d or d2h (both directions at once is strategy duplex)");
            parse_host_buffer(r, s);
            if (s.strategy == Strategy::pinned) s.setup_only = r.integer_or("setup_only", 0, 0, 1) == 1;
            if (s.host_fresh && s.strategy != Strategy::pageable) {
                r.fail("host_fresh", "never-touched memory is a pageable case (pinned memory is touched when pinned)");
            }
            break;
        case Strategy::registered:
            require_direction(r, s, true, true, false,
                              "use h2d or d2h (both directions at once is strategy duplex)");
            s.reuses = static_cast<int>(r.integer("reuses", 1, lim::kMaxReuses, "registered: K reuses of one registration"));
            s.setup_only = r.integer_or("setup_only", 0, 0, 1) == 1;
            parse_host_buffer(r, s);
            if (s.host_fresh) r.fail("host_fresh", "registration touches every page: use pageable");
            break;
        case Strategy::duplex:
            require_direction(r, s, false, false, true, "duplex moves both directions at once");
            s.host_memory = parse_host_memory(r, "host_memory", false);
            parse_compute(r, s);
            if (s.compute_ns > 0 && s.host_memory != HostMemory::pinned) {
                r.fail("compute_ns", "a compute kernel beside duplex needs pinned host memory (the copies are event-timed)");
            }
            s.one_way_beside = r.integer_or("one_way_beside", 0, 0, 1) == 1;
            if (s.one_way_beside && s.host_memory != HostMemory::pinned) {
                r.fail("one_way_beside", "blocking copies beside the pair need pinned host memory");
            }
            if (s.one_way_beside && s.compute_ns > 0) {
                r.fail("one_way_beside", "not with a compute kernel beside the pair: the blocking copies would run without it");
            }
            s.burst_copies = static_cast<int>(r.integer_or("burst_copies", 0, 0, lim::kMaxBurstCopies));
            if (s.burst_copies > 0 && s.host_memory != HostMemory::pinned) {
                r.fail("burst_copies", "a burst's copies are queued on streams and timed with events: pinned host memory only");
            }
            if (s.burst_copies > 0 && s.compute_ns > 0) {
                r.fail("burst_copies", "not with a compute kernel beside the copies: the one-way bursts would run without it");
            }
            if (static_cast<std::uint64_t>(s.burst_copies) * s.size_bytes > lim::kMaxCaseBytes) {
                r.fail("burst_copies", std::to_string(s.burst_copies) + " copies of " + std::to_string(s.size_bytes) +
                                           " bytes each way is more than one case may move");
            }
            if (s.burst_copies > 0 && s.one_way_beside) {
                r.fail("burst_copies", "not with one_way_beside: a burst times its one-way copies itself");
            }
            break;
        case Strategy::async_overlap: {
            s.streams = static_cast<int>(r.integer("streams", 1, lim::kMaxStreams, "async_overlap: number of streams N"));
            if (s.size_bytes < static_cast<std::uint64_t>(s.streams)) {
                r.fail("size_bytes", std::to_string(s.size_bytes) + " is below streams=" + std::to_string(s.streams) +
                                         ": every stream needs a chunk of at least one byte");
            }
            s.kernel_ns = r.integer_or("kernel_ns", 0, 0, kMaxNs);
            const std::string issue = r.has("issue") ? r.str("issue", "") : std::string("depth_first");
            if (issue != "depth_first" && issue != "breadth_first") {
                r.fail("issue", "'" + issue + "' is not depth_first or breadth_first");
            }
            s.breadth_first = issue == "breadth_first";
            break;
        }
        case Strategy::zero_copy: {
            s.access_bytes = static_cast<int>(r.integer("access_bytes", 1, 16, "zero_copy: bytes per access, 1, 2, 4, 8 or 16"));
            if (s.access_bytes != 1 && s.access_bytes != 2 && s.access_bytes != 4 && s.access_bytes != 8 &&
                s.access_bytes != 16) {
                r.fail("access_bytes", std::to_string(s.access_bytes) + " is not 1, 2, 4, 8 or 16");
            }
            s.stride = r.integer("stride", 1, lim::kMaxStride, "zero_copy: elements between consecutive threads");
            s.blocks = static_cast<int>(r.integer("blocks", 1, lim::kMaxGridBlocks, "zero_copy: grid size"));
            s.threads = static_cast<int>(r.integer("threads", 1, lim::kMaxThreadsPerBlock, "zero_copy: threads per block"));
            if (s.size_bytes % static_cast<std::uint64_t>(s.access_bytes) != 0) {
                r.fail("size_bytes", std::to_string(s.size_bytes) + " is not a multiple of access_bytes=" +
                                         std::to_string(s.access_bytes));
            }
            const std::string pattern = r.has("pattern") ? r.str("pattern", "") : std::string("stream");
            if (pattern != "stream" && pattern != "chase") r.fail("pattern", "'" + pattern + "' is not stream or chase");
            s.chase = pattern == "chase";
            if (s.chase) {
                require_direction(r, s, true, false, false, "a pointer chase loads: h2d");
                const std::string memory = r.str("memory", "zero_copy chase: host or device");
                if (memory != "host" && memory != "device") r.fail("memory", "'" + memory + "' is not host or device");
                s.chase_device = memory == "device";
                s.hops = r.integer("hops", 1, lim::kMaxHops, "zero_copy chase: dependent loads per run");
                if (s.size_bytes < kChaseNodeBytes) {
                    r.fail("size_bytes", "a chase needs at least one " + std::to_string(kChaseNodeBytes) + "-byte node");
                }
                s.stores_beside = static_cast<int>(r.integer_or("stores_beside", 0, 0, lim::kMaxStoresBesideBlocks));
                if (s.stores_beside > 0 && s.chase_device) {
                    r.fail("stores_beside", "stores beside a chase are for a chase through host memory");
                }
                if (s.stores_beside > 0 && s.size_bytes % 16 != 0) {
                    r.fail("size_bytes", "the stores beside a chase move 16-byte elements over size_bytes");
                }
            } else if (r.has("stores_beside")) {
                r.fail("stores_beside", "stores beside are for a chase (pattern=chase)");
            }
            parse_compute(r, s);
            if (r.has("copy_beside")) {
                const std::string beside = r.str("copy_beside", "zero_copy: h2d or d2h");
                if (beside != "h2d" && beside != "d2h") r.fail("copy_beside", "'" + beside + "' is not h2d or d2h");
                if (s.chase && s.chase_device) r.fail("copy_beside", "a copy beside a chase is for a chase through host memory");
                if (s.chase && s.stores_beside > 0) r.fail("copy_beside", "a chase has stores or a copy beside it, not both");
                if (s.chase && s.hops > lim::kMaxHopsBesideStores) {
                    r.fail("hops", "a chase with a copy beside it takes at most " + std::to_string(lim::kMaxHopsBesideStores) + " hops");
                }
                if (s.compute_ns > 0) r.fail("copy_beside", "a copy and a compute kernel beside one zero-copy kernel is not a case of the harness");
                s.has_copy_beside = true;
                s.copy_beside = beside == "h2d" ? Direction::h2d : Direction::d2h;
            }
            break;
        }
        case Strategy::peer: {
            require_direction(r, s, true, false, true, "use h2d (one way, src -> dst) or both (both ways at once)");
            const auto pa = r.integer("peer_access", 0, 1, "peer: 1 enabled, 0 disabled (staged through host)");
            s.peer_access = pa == 1;
            const int plan_src = static_cast<int>(r.integer_or("src_device", 0, 0, lim::kMaxDeviceOrdinal));
            const int plan_dst = static_cast<int>(r.integer_or("dst_device", -1, 0, lim::kMaxDeviceOrdinal));
            // A copy within one GPU (the plan's src = dst) stays on the measuring GPU.
            s.local_copy = plan_dst == plan_src;
            s.src_device = opt.device ? *opt.device : plan_src;
            s.dst_device = s.local_copy ? s.src_device : opt.peer_device ? *opt.peer_device : plan_dst;
            if (s.local_copy && (s.direction != Direction::h2d || !s.peer_access)) {
                r.fail("dst_device", "a copy within one GPU (src_device = dst_device) goes one way with peer_access=1");
            }
            if (!s.local_copy && s.dst_device == s.src_device) {
                r.fail("dst_device",
                       "source and destination are the same GPU (" + std::to_string(s.src_device) +
                           "); check --device/--peer-device and the plan's src_device/dst_device");
            }
            break;
        }
        case Strategy::periodic: {
            require_direction(r, s, true, true, false, "a frame goes one way: h2d or d2h");
            s.period_ns = r.integer("period_ns", 1, kMaxNs, "periodic: one frame every period_ns");
            s.frames = static_cast<int>(r.integer("frames", 1, lim::kMaxFrames, "periodic: number of frames M"));
            // Both products fit in 64 bits: frames <= 10^5, period <= 3.6e12 ns, size <= 2^36.
            if (s.frames * s.period_ns > lim::kMaxStreamNs) {
                r.fail("frames", std::to_string(s.frames) + " frames of " + std::to_string(s.period_ns) +
                                     " ns last over " + std::to_string(lim::kMaxStreamNs) + " ns");
            }
            if (static_cast<std::uint64_t>(s.frames) * s.size_bytes > lim::kMaxCaseBytes) {
                r.fail("frames", std::to_string(s.frames) + " frames of " + std::to_string(s.size_bytes) +
                                     " bytes move over " + std::to_string(lim::kMaxCaseBytes) + " bytes");
            }
            s.deadline_ns = r.integer_or("deadline_ns", s.period_ns, 1, kMaxNs);
            s.kernel_ns = r.integer_or("kernel_ns", 0, 0, kMaxNs);
            if (r.has("via")) {
                s.host_memory = parse_host_memory(r, "via", true);
            } else if (r.has("host_memory")) {
                s.host_memory = parse_host_memory(r, "host_memory", true);
            } else {
                r.fail("via", "missing (periodic: pinned, pageable or zero_copy)");
            }
            s.repetitions = s.frames;
            s.repetitions_fixed = true;  // frames are the experiment; never reduced
            break;
        }
        case Strategy::third_party_dma:
        case Strategy::cpu_mapped:
            break;
    }
}

std::string gen_lanes(int gen, int lanes) {
    std::string s;
    if (gen > 0) s += "Gen" + std::to_string(gen);
    if (lanes > 0) s += (s.empty() ? "x" : " x") + std::to_string(lanes);
    return s;
}

}  // namespace

const char* to_string(Strategy s) {
    for (const auto& e : kStrategies) {
        if (e.strategy == s) return e.name;
    }
    return "?";
}

const char* to_string(Direction d) {
    switch (d) {
        case Direction::h2d: return "h2d";
        case Direction::d2h: return "d2h";
        case Direction::both: return "both";
    }
    return "?";
}

const char* to_string(HostMemory m) {
    switch (m) {
        case HostMemory::pinned: return "pinned";
        case HostMemory::pageable: return "pageable";
        case HostMemory::zero_copy: return "zero_copy";
    }
    return "?";
}

std::optional<Strategy> strategy_from_name(const std::string& name) {
    for (const auto& e : kStrategies) {
        if (name == e.name) return e.strategy;
    }
    return std::nullopt;
}

std::string strategy_name_list() {
    std::string out;
    for (const auto& e : kStrategies) {
        if (!out.empty()) out += ", ";
        out += e.name;
    }
    return out;
}

bool harness_can_run(Strategy s) { return s != Strategy::third_party_dma && s != Strategy::cpu_mapped; }

std::string MeasurementSpec::label() const {
    return std::string(to_string(strategy)) + "/" + to_string(direction) + " " +
           dmasim::core::to_string(dmasim::core::Bytes{size_bytes});
}

CaseDecision decide_case(const PlanCase& c, std::size_t index, const std::string& origin,
                         const Options& opt) {
    CaseDecision d;
    MeasurementSpec& s = d.spec;
    s.index = index;
    CaseReader r(c, origin + " case " + std::to_string(index + 1));
    s.scenario = r.str("scenario", "every case has one");
    r.set_where(r.where() + " (scenario " + s.scenario + ")");

    const std::string strategy = r.str("strategy", "every case has one");
    const auto st = strategy_from_name(strategy);
    if (!st) r.fail("strategy", "unknown strategy '" + strategy + "' (known: " + strategy_name_list() + ")");
    s.strategy = *st;
    s.direction = parse_direction(r);
    s.size_bytes = static_cast<std::uint64_t>(
        r.integer("size_bytes", 1, static_cast<std::int64_t>(lim::kMaxCopyBytes), "every case has one"));
    if (c.has("variant")) s.variant = c.str("variant");
    s.src_device = opt.measuring_device();
    s.link_generation = static_cast<int>(r.integer_or("link_generation", 0, 1, 7));
    s.link_lanes = static_cast<int>(r.integer_or("link_lanes", 0, 1, 32));
    const std::string link_from = c.str_or("link_from", "scenario");
    if (link_from != "scenario" && link_from != "platform") r.fail("link_from", "must be scenario or platform");
    s.link_from_platform = link_from == "platform";
    s.platform = c.str_or("platform", "");
    s.peer_route = c.str_or("peer_route", "");
    s.copy_engines = static_cast<int>(r.integer_or("copy_engines", 0, 1, 64));
    s.connections = static_cast<int>(r.integer_or("connections", 0, 1, 32));

    const bool hw_skip = c.has("hw_skip");
    const bool runnable = !hw_skip && harness_can_run(s.strategy);
    if (runnable) {
        if (s.strategy != Strategy::periodic) {
            if (opt.repetitions) {
                s.repetitions = *opt.repetitions;
                s.repetitions_fixed = true;
            } else {
                s.repetitions = static_cast<int>(r.integer("repetitions", 1, lim::kMaxRepetitions, "every case has one"));
            }
        }
        s.warmup = opt.warmup ? *opt.warmup
                              : static_cast<int>(r.integer("warmup", 0, lim::kMaxWarmup, "every case has one"));
        parse_strategy_keys(r, s, opt);
    }

    if (opt.only && *opt.only != to_string(s.strategy)) {
        d.action = CaseAction::filter;
        d.reason = "not selected by --only " + *opt.only;
    } else if (opt.max_size && s.size_bytes > *opt.max_size) {
        d.action = CaseAction::filter;
        d.reason = "size_bytes " + std::to_string(s.size_bytes) + " is over --max-size " +
                   std::to_string(*opt.max_size);
    } else if (hw_skip) {
        d.action = CaseAction::skip;
        const std::string why = c.str("hw_skip");
        d.reason = "hw_skip: " + (why.empty() ? std::string("dmasim marked this case as not runnable on a GPU machine") : why);
    } else if (!harness_can_run(s.strategy)) {
        d.action = CaseAction::skip;
        d.reason = unsupported_reason(s.strategy);
    } else {
        d.action = CaseAction::run;
    }
    return d;
}

std::vector<CaseDecision> decide_all(const dmasim::core::Plan& plan, const std::string& origin,
                                     const Options& opt) {
    std::vector<CaseDecision> out;
    out.reserve(plan.cases.size());
    for (std::size_t i = 0; i < plan.cases.size(); ++i) {
        out.push_back(decide_case(plan.cases[i], i, origin, opt));
    }
    return out;
}

int resolve_peer_destination(const MeasurementSpec& spec, int device_count) {
    if (spec.dst_device >= 0) return spec.dst_device;
    for (int i = 0; i < device_count; ++i) {
        if (i != spec.src_device) return i;
    }
    return -1;
}

std::string machine_skip_reason(const MeasurementSpec& s, const MachineInfo& m) {
    if (s.link_generation > 0 || s.link_lanes > 0) {
        const std::string wanted = gen_lanes(s.link_generation, s.link_lanes);
        const bool gen_unknown = s.link_generation > 0 && m.link_generation <= 0;
        const bool lanes_unknown = s.link_lanes > 0 && m.link_lanes <= 0;
        const std::string whose = s.link_from_platform ? "platform " + s.platform + " gives GPU " +
                                                             std::to_string(m.device) + " PCIe " + wanted
                                                       : "scenario sets PCIe " + wanted;
        if ((gen_unknown || lanes_unknown) && !s.link_from_platform) {
            return "scenario sets PCIe " + wanted + " but GPU " + std::to_string(m.device) +
                   "'s link could not be read (no sysfs link files, no nvidia-smi), so it cannot be confirmed";
        }
        const bool gen_differs = s.link_generation > 0 && !gen_unknown && s.link_generation != m.link_generation;
        const bool lanes_differ = s.link_lanes > 0 && !lanes_unknown && s.link_lanes != m.link_lanes;
        if (gen_differs || lanes_differ) {
            return whose + "; GPU " + std::to_string(m.device) +
                   "'s link runs at " + gen_lanes(m.link_generation, m.link_lanes) + " (read from " +
                   m.link_source + " under load)";
        }
    }
    if (s.copy_engines > 0 && s.copy_engines != m.copy_engines) {
        return "scenario sets " + std::to_string(s.copy_engines) + " copy engine(s); GPU " + std::to_string(m.device) +
               " has " + (m.copy_engines < 0 ? std::string("an unknown number") : std::to_string(m.copy_engines)) +
               " (asyncEngineCount), which software cannot change";
    }
    if (s.connections > 0 && s.connections != m.connections) {
        return "scenario sets runtime.connections " + std::to_string(s.connections) + "; this run has " +
               std::to_string(m.connections) +
               " hardware work queues (CUDA_DEVICE_MAX_CONNECTIONS, read once at start): run dmaprobe again with "
               "CUDA_DEVICE_MAX_CONNECTIONS=" + std::to_string(s.connections);
    }
    if (s.strategy == Strategy::peer && !s.local_copy) {
        if (m.device_count < 2) {
            return "peer needs two GPUs; this machine has " + std::to_string(m.device_count);
        }
        const int dst = resolve_peer_destination(s, m.device_count);
        for (int dev : {s.src_device, dst}) {
            if (dev < 0 || dev >= m.device_count) {
                return "peer: GPU " + std::to_string(dev) + " does not exist (this machine has " +
                       std::to_string(m.device_count) + " GPUs)";
            }
        }
        // The platform joins the GPUs otherwise than this machine does (a switch, not NVLink):
        // measuring here would time another path than the one modelled.
        const auto route = [&](int a, int b) {
            return static_cast<std::size_t>(a) < m.routes.size() && static_cast<std::size_t>(b) < m.routes[a].size()
                       ? m.routes[a][b]
                       : std::string();
        };
        const std::string here = route(s.src_device, dst);
        if (!s.peer_route.empty() && !here.empty() && here != s.peer_route) {
            return "platform " + s.platform + " joins GPUs " + std::to_string(s.src_device) + " and " +
                   std::to_string(dst) + " by " + s.peer_route + "; this machine by " + here + " (nvidia-smi topo -m)";
        }
        if (s.peer_access) {
            const auto cap = [&](int a, int b) {
                return static_cast<std::size_t>(a) < m.peer_capable.size() &&
                       static_cast<std::size_t>(b) < m.peer_capable[a].size() && m.peer_capable[a][b];
            };
            if (!cap(s.src_device, dst) || !cap(dst, s.src_device)) {
                return "peer_access=1 but GPUs " + std::to_string(s.src_device) + " and " + std::to_string(dst) +
                       " cannot access each other as peers (cudaDeviceCanAccessPeer)";
            }
        }
    }
    return {};
}

int max_connections_from_env(const char* value) {
    if (value == nullptr || *value == '\0') return 8;
    const std::string v(value);
    if (v.size() > 2 || !std::all_of(v.begin(), v.end(), [](char ch) { return ch >= '0' && ch <= '9'; })) return -1;
    const int n = std::stoi(v);
    return n >= 1 && n <= 32 ? n : -1;
}

std::string machine_conditions(const MeasurementSpec& s) {
    std::string out;
    if (s.link_generation > 0 || s.link_lanes > 0) {
        out = "needs the GPU link to run at PCIe " + gen_lanes(s.link_generation, s.link_lanes) +
              (s.link_from_platform ? " (platform " + s.platform + ")" : "");
    }
    if (s.copy_engines > 0) {
        if (!out.empty()) out += "; ";
        out += "needs a GPU with " + std::to_string(s.copy_engines) + " copy engine(s)";
    }
    if (s.connections > 0) {
        if (!out.empty()) out += "; ";
        out += "needs CUDA_DEVICE_MAX_CONNECTIONS=" + std::to_string(s.connections);
    }
    if (s.strategy == Strategy::peer && !s.local_copy) {
        if (!out.empty()) out += "; ";
        out += "needs two GPUs (" + std::to_string(s.src_device) + " -> " +
               (s.dst_device >= 0 ? std::to_string(s.dst_device) : std::string("first other GPU")) + ")";
        if (s.peer_access) out += " that can access each other as peers";
        if (!s.peer_route.empty()) out += ", joined by " + s.peer_route + " (platform " + s.platform + ")";
    }
    return out;
}

}  // namespace dmaprobe
