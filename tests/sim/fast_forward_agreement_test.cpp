// Fast-forward against TLP level on every shipped scenario (scenarios/*.yaml, scenarios/*/*.yaml),
// at reduced sizes: each case is simulated at both fidelities and every row's time and every
// link's bytes must agree within 0.1 %. The sizes are large enough for fast-forward to engage,
// and the test requires that it did for the cases it applies to (so a fast mode that never
// engages cannot pass by simulating everything at TLP level).
//
// SystemC elaborates one platform per process: each TEST forks a child that elaborates its
// platform and writes what disagreed into a file, which the parent reads and reports.
#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "dmasim/config/scenario.h"
#include "dmasim/sim/simulator.h"
#include "dmasim/topology/platform_file.h"

namespace dmasim {
namespace {

namespace fs = std::filesystem;

constexpr std::uint64_t kMiB = 1 << 20;
// Not a multiple of any period of a transfer, so that the levels carry a remainder.
constexpr std::uint64_t kSize = 24 * kMiB + 4099;
// Pageable staging settles over several bounce buffers (2 MiB each by default).
constexpr std::uint64_t kStagedSize = 80 * kMiB + 4099;
constexpr std::uint64_t kSmallSize = 8 * kMiB + 4099;
constexpr std::uint64_t kZeroCopySize = 16 * kMiB + 4099;
// Two directions at once settle later (levels of 8 to 12 MiB): the case must be worth them.
constexpr std::uint64_t kDuplexSize = 64 * kMiB + 4099;
// Contention flows: one starts 100 us after the other, which the reduced levels must pass.
constexpr std::uint64_t kFlowSize = 64 * kMiB + 4099;
// Frame streams: enough frames for the reuse to be worth it, also where the frames settle over
// more of them (pageable frames whose cold share depends on the frame before: runs of 8, 9 and
// 10 frames, which a stream of more than 27 gets).
constexpr std::int64_t kFrames = 30;
constexpr double kAgreement = 1e-3;

std::vector<config::Scenario> shipped() {
    std::vector<std::string> files;
    for (const auto& e : fs::recursive_directory_iterator(std::string(DMASIM_SOURCE_DIR) + "/scenarios")) {
        if (e.is_regular_file() && e.path().extension() == ".yaml") files.push_back(e.path().string());
    }
    std::sort(files.begin(), files.end());
    std::vector<config::Scenario> all;
    for (const auto& f : files) {
        for (auto& s : config::load_scenarios(f)) all.push_back(std::move(s));
    }
    return all;
}

std::string platform_of(const config::Scenario& s) {
    return fs::path(config::resolve_platform(s.platform, s.file)).filename().string();
}

bool staged(const config::Scenario& s, const std::string& strategy) {
    return strategy == "pageable" || (strategy == "duplex" && s.options.duplex.host_memory == "pageable");
}

// The sizes a case runs at here: reduced, except where the size does not scale the run.
std::vector<std::uint64_t> sizes_for(const config::Scenario& s, const std::string& strategy) {
    if (strategy == "periodic") return {s.options.periodic.size.value};
    const bool setup_only = (strategy == "pinned" && s.options.pinned.setup_only) ||
                            (strategy == "registered" && s.options.registered.setup_only);
    const bool chase = strategy == "zero_copy" && s.options.zero_copy.pattern == "chase";
    // Setup rows are formulas; a chase and CPU accesses through the BAR are small by nature.
    if (setup_only || chase || strategy == "cpu_mapped") return {s.sizes.front()};
    // Not asserted to engage (its kernels may set the pace at reduced sizes): kept small.
    if (strategy == "async_overlap") return {kSmallSize};
    // Strided accesses move several times the size: smaller than the others, still worth it.
    if (strategy == "zero_copy") return {kZeroCopySize};
    if (staged(s, strategy)) return {kStagedSize};
    if (strategy == "duplex") return {kDuplexSize};
    return {kSize};
}

// The smallest I/O cache of a root port whose write-backs cost something, or none.
std::uint64_t evicting_io_cache(const topology::Platform& links) {
    std::uint64_t smallest = std::numeric_limits<std::uint64_t>::max();
    for (auto [v, end] = boost::vertices(links.graph()); v != end; ++v) {
        const config::RootComplexParams& rc = links.node(*v).bridge;
        if (rc.memory_bandwidth.bytes_per_s > 0.0 && rc.io_cache.value > 0) smallest = std::min(smallest, rc.io_cache.value);
    }
    return smallest;
}

// Where fast-forward must engage: every transfer that grows with its size and runs alone or
// beside kernels that outlast it, and frame streams that come to rest between frames.
bool must_engage(const config::Scenario& s, const std::string& strategy, const std::string& direction,
                 const sim::CaseResult& tlp,
                 const topology::Platform& links) {
    if (tlp.rows.empty() || tlp.rows.front().status != "ok") return false;  // not modelled: nothing ran
    if (strategy == "async_overlap" || strategy == "cpu_mapped") return false;  // may rightly fall back
    if ((strategy == "pinned" && s.options.pinned.setup_only) ||
        (strategy == "registered" && s.options.registered.setup_only)) {
        return false;  // formulas only
    }
    if (strategy == "zero_copy" && s.options.zero_copy.pattern == "chase") return false;
    // A capture card reading GPU memory (third_party_dma d2h) with its default 64 reads in flight
    // and its descriptor reads between them does not settle at these reduced sizes with the
    // default parameters (it does with the H100 calibration, or with 16 reads in flight); it is
    // cheap at TLP level and must still agree.
    if (strategy == "third_party_dma" && direction == "d2h") return false;
    // A duplex copy whose writes fill a root port's I/O cache (root_complex.io_cache, with a
    // memory_bandwidth that write-backs share) settles only once the reads' queue to memory
    // behind the write-backs has grown past what the engines' reads in flight hide: 16-20 MiB
    // past the cache's 40 MiB on h100-sxm, beyond the reduced size here. At TLP level such a
    // run costs 0.8 s at 256 MiB; it must still agree.
    if (strategy == "duplex" && kDuplexSize > evicting_io_cache(links)) return false;
    // A few blocks of warps keep few reads in flight, each warp waiting for its own lines
    // (sim::WarpLoop): the warps' phases against one another and against the Acks drift for
    // longer than these reduced sizes allow levels for. Such runs are latency-bound and cheap at
    // TLP level (up to 8 blocks: 64 warps, at most 256 reads in flight).
    if (strategy == "zero_copy" && s.options.zero_copy.blocks < 16) return false;
    // An exchange's loads and stores leave through one queue in the order the warps issued them
    // (gpu.sysmem_in_order): each load waits for the stores before it, each store for the loads
    // before it, and the two settle into their steady interleaving only over tens of MiB (its
    // steps at 16 MiB are 2 % apart). At TLP level 256 MiB costs 2-3 s; it must still agree.
    if (strategy == "zero_copy" && direction == "both" && s.params.gpu.sysmem_in_order) return false;
    // Peer copies both ways end at the source's wait for the other GPU's copy, which its channel
    // tries at the polls of the wait's call (CrossDeviceWait): the row steps with the size by up
    // to a poll period, so levels do not extrapolate it. It must still agree.
    if (strategy == "peer" && direction == "both") return false;
    if (strategy == "periodic") {
        return tlp.rows.front().max_ps < static_cast<double>(s.options.periodic.period.ps);
    }
    return true;
}

std::uint64_t wire_bytes(const sim::LinkStats& st) { return st.payload_bytes + st.tlp_overhead_bytes + st.dllp_bytes; }

bool near(double a, double b) { return std::fabs(a - b) <= kAgreement * std::fabs(b); }

// Compares one case's two results; appends what disagrees to `report`.
void compare(const std::string& what, const sim::CaseResult& fast, const sim::CaseResult& tlp, bool engage,
             std::ostringstream& report, int& engaged) {
    if (!fast.fast_forward.empty()) ++engaged;
    if (engage && fast.fast_forward.empty()) report << what << ": fast-forward did not engage\n";
    if (fast.rows.size() != tlp.rows.size()) {
        report << what << ": " << fast.rows.size() << " rows fast, " << tlp.rows.size() << " at TLP level\n";
        return;
    }
    for (std::size_t i = 0; i < tlp.rows.size(); ++i) {
        const auto& f = fast.rows[i];
        const auto& t = tlp.rows[i];
        if (f.status != t.status || !near(f.time_ps, t.time_ps) || !near(f.p10_ps, t.p10_ps) ||
            !near(f.p90_ps, t.p90_ps) || !near(f.max_ps, t.max_ps)) {
            report << what << " row '" << t.variant << "': " << f.time_ps << " ps fast, " << t.time_ps
                   << " ps at TLP level (" << fast.fast_forward << ")\n";
        }
    }
    if (fast.links.size() != tlp.links.size()) {
        report << what << ": links differ\n";
        return;
    }
    for (std::size_t i = 0; i < tlp.links.size(); ++i) {
        const double f = static_cast<double>(wire_bytes(fast.links[i].stats));
        const double t = static_cast<double>(wire_bytes(tlp.links[i].stats));
        const double fp = static_cast<double>(fast.links[i].stats.payload_bytes);
        const double tp = static_cast<double>(tlp.links[i].stats.payload_bytes);
        if (!near(f, t) || !near(fp, tp)) {
            report << what << " link " << tlp.links[i].label << ": " << f << " bytes fast, " << t << " at TLP level\n";
        }
    }
}

// Runs `body` in a child process; returns what it wrote to the report file.
std::string in_child(const std::function<std::string()>& body) {
    char path[] = "/tmp/dmasim-ff-XXXXXX";
    const int fd = ::mkstemp(path);
    if (fd < 0) return "cannot create a temporary file";
    ::close(fd);
    std::fflush(nullptr);
    const pid_t pid = ::fork();
    if (pid == 0) {
        std::string text;
        try {
            text = body();
        } catch (const std::exception& e) {
            text = std::string("exception: ") + e.what() + "\n";
        }
        std::ofstream(path) << text;
        std::fflush(nullptr);
        ::_exit(0);
    }
    int status = 0;
    ::waitpid(pid, &status, 0);
    std::stringstream ss;
    ss << std::ifstream(path).rdbuf();
    ::unlink(path);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) return "child ended abnormally\n" + ss.str();
    return ss.str();
}

// Every case of the scenarios of `file` (relative to the source tree) on `platform`, at both
// fidelities; of those, every `parts`-th from the `part`-th.
std::string agreement_on(const std::string& file, const std::string& platform, int part, int parts) {
    std::vector<config::Scenario> group;
    int index = 0;
    for (auto& s : config::load_scenarios(std::string(DMASIM_SOURCE_DIR) + "/" + file)) {
        if (platform_of(s) != platform) continue;
        if (index++ % parts == part) group.push_back(std::move(s));
    }
    if (group.empty()) return "no scenario of " + file + " runs on " + platform + "\n";
    sim::Simulator simulator(topology::load_platform(group.front()), group.front().params);
    std::ostringstream report;
    int engaged = 0;
    int cases = 0;
    auto both = [&](const std::function<sim::CaseResult()>& one) {
        simulator.set_fidelity(sim::Fidelity::kFast);
        sim::CaseResult fast = one();
        simulator.set_fidelity(sim::Fidelity::kTlp);
        sim::CaseResult tlp = one();
        return std::make_pair(std::move(fast), std::move(tlp));
    };
    for (auto& s : group) {
        const topology::Platform links = topology::load_platform(s);
        if (!s.flows.empty()) {
            for (auto& f : s.flows) f.size = kFlowSize;
            const auto [fast, tlp] = both([&] { return simulator.run_flows(s.params, s.flows, &links, s.name, s.file); });
            compare(s.name + " flows", fast, tlp, true, report, engaged);
            ++cases;
            continue;
        }
        s.options.periodic.count = std::min(s.options.periodic.count, kFrames);
        for (const auto& strategy : s.strategies) {
            for (const auto& direction : s.directions) {
                for (const auto size : sizes_for(s, strategy)) {
                    const std::string what = s.name + " " + strategy + " " + direction + " " + std::to_string(size);
                    const sim::CaseSpec spec{strategy, direction, size, s.options, what, &links, s.file};
                    const auto [fast, tlp] = both([&] { return simulator.run(s.params, spec); });
                    compare(what, fast, tlp, must_engage(s, strategy, direction, tlp, links), report, engaged);
                    ++cases;
                }
            }
        }
    }
    (void)cases;
    return report.str();
}

// Each shipped scenario file with each platform its scenarios use: a child process each (one
// elaboration per process), and CTest runs them in parallel. A new file or platform fails
// FastForwardCoverage.EveryShippedFileAndPlatformIsListed until it is added here. "|i/n": the
// file's i-th of every n scenarios, so that no one test runs for long under the sanitizers.
const char* const kCases[] = {
    "scenarios/async_overlap.yaml|h100-sxm",
    "scenarios/compute_beside.yaml|h100-sxm",
    "scenarios/duplex.yaml|h100-sxm",
    "scenarios/host_buffers.yaml|h100-sxm",
    "scenarios/latency.yaml|h100-sxm",
    "scenarios/pageable.yaml|h100-sxm",
    "scenarios/peer.yaml|2gpu-rootports",
    "scenarios/peer.yaml|h200x2-nvlink",
    "scenarios/peer.yaml|workstation-2gpu-switch",
    "scenarios/peer.yaml|h100-sxm",
    "scenarios/periodic.yaml|h100-sxm",
    "scenarios/pinned.yaml|h100-sxm",
    "scenarios/registered.yaml|h100-sxm",
    "scenarios/setup_costs.yaml|h100-sxm",
    "scenarios/third_party.yaml|radar-rootports",
    "scenarios/third_party.yaml|radar-switch",
    "scenarios/third_party.yaml|h100-sxm",
    "scenarios/timeline-example.yaml|h100-sxm",
    "scenarios/zero_copy.yaml|h100-sxm|0/2",
    "scenarios/zero_copy.yaml|h100-sxm|1/2",
    "scenarios/zero_copy_latency.yaml|h100-sxm",
    // Six parts: with loads of one sector a line held by line entries (gpu.sysmem_max_outstanding_lines),
    // two parts of four took 283-292 s of CTest's 300 s under ASan.
    "scenarios/zero_copy_patterns.yaml|h100-sxm|0/6",
    "scenarios/zero_copy_patterns.yaml|h100-sxm|1/6",
    "scenarios/zero_copy_patterns.yaml|h100-sxm|2/6",
    "scenarios/zero_copy_patterns.yaml|h100-sxm|3/6",
    "scenarios/zero_copy_patterns.yaml|h100-sxm|4/6",
    "scenarios/zero_copy_patterns.yaml|h100-sxm|5/6",
    "scenarios/contention/shared-uplink.yaml|2gpu-rootports",
    "scenarios/contention/shared-uplink.yaml|radar-switch",
    "scenarios/contention/shared-uplink.yaml|workstation-2gpu-switch",
    "scenarios/whatif/host-eras.yaml|a100-gen4",
    "scenarios/whatif/host-eras.yaml|h100-sxm",
    "scenarios/whatif/host-eras.yaml|v100-gen3",
    "scenarios/whatif/pcie-links.yaml|h100-sxm",
    "scenarios/whatif/peer-links.yaml|workstation-2gpu-switch",
    "scenarios/whatif/peer-pcie-pairs.yaml|dgx-h100-pcie",
    "scenarios/whatif/radar.yaml|radar-rootports",
    "scenarios/whatif/radar.yaml|radar-switch",
};

struct Part {
    std::string file, platform;
    int part = 0, parts = 1;
};

Part split(const std::string& c) {
    Part p;
    const auto bar = c.find('|');
    p.file = c.substr(0, bar);
    p.platform = c.substr(bar + 1);
    const auto second = p.platform.find('|');
    if (second != std::string::npos) {
        const std::string frac = p.platform.substr(second + 1);
        p.platform = p.platform.substr(0, second);
        p.part = std::stoi(frac.substr(0, frac.find('/')));
        p.parts = std::stoi(frac.substr(frac.find('/') + 1));
    }
    return p;
}

TEST(FastForwardCoverage, EveryShippedFileAndPlatformIsListed) {
    const std::string root = std::string(DMASIM_SOURCE_DIR) + "/";
    for (const auto& s : shipped()) {
        const std::string file = fs::relative(s.file, root).generic_string();
        const std::string listed = file + "|" + platform_of(s);
        const bool known = std::any_of(std::begin(kCases), std::end(kCases), [&](const char* c) {
            const Part p = split(c);
            return p.file + "|" + p.platform == listed;
        });
        EXPECT_TRUE(known) << "scenario '" << s.name << "': add \"" << listed << "\" to kCases";
    }
}

class FastForwardAgreement : public ::testing::TestWithParam<const char*> {};

TEST_P(FastForwardAgreement, EveryCaseAgreesWithTlpLevel) {
    const Part p = split(GetParam());
    EXPECT_EQ(in_child([&] { return agreement_on(p.file, p.platform, p.part, p.parts); }), "");
}

INSTANTIATE_TEST_SUITE_P(Shipped, FastForwardAgreement, ::testing::ValuesIn(kCases),
                         [](const ::testing::TestParamInfo<const char*>& info) {
                             std::string n = info.param;
                             n = n.substr(n.find('/') + 1);
                             for (auto& c : n) {
                                 if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
                             }
                             return n;
                         });

}  // namespace
}  // namespace dmasim
