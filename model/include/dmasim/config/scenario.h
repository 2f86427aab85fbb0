// Scenario files (docs/scenarios.md): parsing, `--set` overrides, validation and expansion.
// Used by the simulator and, through the flat plan, by the CUDA harness: one schema, one parser.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "dmasim/config/params.h"

namespace dmasim::config {

// The strategy names, the same in model, harness, scenarios and results.
const std::vector<std::string>& strategy_names();
bool is_strategy(const std::string& name);
// The platforms shipped in platforms/ (by name), and whether `ref` names one or a file.
std::vector<std::string> platform_names();
bool is_platform(const std::string& ref, const std::string& scenario_file);
// The file a platform reference means: a shipped name stays as it is; a path is taken
// relative to the scenario file's directory when it exists there, else as given.
std::string resolve_platform(const std::string& ref, const std::string& scenario_file);

// Strategy options: one struct per strategy section of a scenario.
struct ZeroCopyOptions {
    Bytes access{4};
    std::int64_t stride = 1;
    std::int64_t blocks = 132;
    std::int64_t threads = 256;
    std::string pattern = "stream";
    std::string memory = "host";
    std::int64_t hops = 10000;
    std::string copy_beside = "none";
    std::int64_t stores_beside = 0;

    template <class V>
    void visit(V&& v) {
        v(FieldInfo{"access", "bytes", "bytes per load/store per thread: 1B, 2B, 4B, 8B or 16B"}, access);
        v(FieldInfo{"stride", "elements", "distance between neighbouring threads' accesses; 1 = coalesced"}, stride);
        v(FieldInfo{"blocks", "count", "thread blocks in the grid"}, blocks);
        v(FieldInfo{"threads", "count", "threads per block: 32..1024, a multiple of 32"}, threads);
        v(FieldInfo{"pattern", "name", "stream: the grid moves size bytes; chase: one thread follows a random chain of 8-byte pointers (one per 64-byte line) through size bytes, each load uncached and dependent on the last: the load round trip"}, pattern);
        v(FieldInfo{"memory", "name", "chase only: host (mapped pinned host memory) or device (GPU memory, for reference)"}, memory);
        v(FieldInfo{"hops", "count", "chase only: dependent loads per run; the row's time is one load's"}, hops);
        v(FieldInfo{"copy_beside", "name", "none, h2d or d2h: a pinned cudaMemcpyAsync of size bytes in that direction on a stream of its own, started with the kernel, so that copy-engine and SM traffic share the path (rows copy and kernel give each one's end); beside a chase through host memory, pinned copies of 64 MiB back to back that outlast it, the chase starting 300 us after them: what a load waits beside a copy"}, copy_beside);
        v(FieldInfo{"stores_beside", "count", "chase through host memory only: 0, or blocks of 256 threads that store 16 bytes each over and over to a mapped host buffer of size bytes, on a stream of their own, while the chase runs (it starts 300 us after them): what a load waits behind the SMs' stores"}, stores_beside);
    }
};

// A compute kernel that runs beside a transfer (duplex, zero_copy): it keeps `blocks` x
// `threads` resident and streams over `bytes` of GPU memory until `duration` has passed, so it
// takes SMs and GPU-memory bandwidth from the transfer. The transfer's time is what is timed.
struct ComputeOptions {
    Duration duration{0};
    std::int64_t blocks = 132;
    std::int64_t threads = 512;
    Bytes bytes{std::uint64_t{1} << 30};

    template <class V>
    void visit(V&& v) {
        v(FieldInfo{"duration", "time", "how long each of its blocks runs from its own start; it should outlast the transfer; 0s = no kernel"}, duration);
        v(FieldInfo{"blocks", "count", "thread blocks of the compute kernel: with threads, the SM room it takes (gpu.max_warps_per_sm, gpu.max_blocks_per_sm), which a zero-copy kernel beside it shares; blocks that do not fit start when room comes free (results/h100-sxm/isolating/sm-sharing)"}, blocks);
        v(FieldInfo{"threads", "count", "threads per block: 32..1024, a multiple of 32"}, threads);
        v(FieldInfo{"bytes", "bytes", "GPU memory it reads and writes over and over, as fast as the memory serves it: it takes its turns at GPU memory with every other access (a copy engine's among them), so each waits for as much of the kernel's first"}, bytes);
    }
};

// Where the host side of a pinned, pageable or registered copy sits.
struct HostBufferOptions {
    Bytes offset{0};
    bool fresh = false;

    template <class V>
    void visit(V&& v) {
        v(FieldInfo{"offset", "bytes", "the host buffer starts this far past a page boundary (1B, 64B, 4KiB). A pageable copy out of the GPU into a buffer off a cache line takes the runtime's slower way out of its staging buffers (pageable.copy_out_alignment, unaligned_pass_bandwidth; a buffer from malloc() is 16 B off a line); copies into the GPU and pinned copies cost as on a page; registered buffers off a page are not modelled"}, offset);
        v(FieldInfo{"fresh", "bool", "pageable only: every copy uses newly mapped memory that was never touched (page faults during the copy)"}, fresh);
    }
};

struct PinnedOptions {
    bool setup_only = false;

    template <class V>
    void visit(V&& v) {
        v(FieldInfo{"setup_only", "bool", "time only cudaMallocHost and cudaFreeHost of size bytes, no copy"}, setup_only);
    }
};

struct CpuMappedOptions {
    std::string target = "gpu";

    template <class V>
    void visit(V&& v) {
        v(FieldInfo{"target", "name", "whose memory the CPU maps and loads or stores: gpu (GPU memory through BAR1, gdrcopy style) or card (the capture card's memory window, a device BAR mapped into user space: the radar thread's copy loop)"}, target);
    }
};

struct AsyncOptions {
    std::int64_t streams = 4;
    Duration kernel{0};
    std::string issue = "depth_first";

    template <class V>
    void visit(V&& v) {
        v(FieldInfo{"streams", "count", "N streams; the data is split into N chunks"}, streams);
        v(FieldInfo{"kernel", "time", "kernel time for the whole size (each chunk runs kernel/N); 0s = none"}, kernel);
        v(FieldInfo{"issue", "name", "launch order: depth_first (chunk by chunk: H2D, kernel, D2H) or breadth_first (every H2D, then every kernel, then every D2H)"}, issue);
    }
};

struct FrameOptions {
    Bytes size{4 << 20};
    Duration period{8'000'000'000};
    std::int64_t count = 500;
    std::string via = "pinned";
    Duration deadline{0};
    Duration kernel{0};
    std::string covers = "processing";

    template <class V>
    void visit(V&& v) {
        v(FieldInfo{"size", "bytes", "bytes per frame"}, size);
        v(FieldInfo{"period", "time", "one frame is released every period"}, period);
        v(FieldInfo{"count", "count", "number of frames M"}, count);
        v(FieldInfo{"via", "name", "how each frame moves: pinned, pageable, zero_copy, or from a capture card: fpga_direct (into GPU memory), fpga_via_host"}, via);
        v(FieldInfo{"deadline", "time", "a frame later than this after its release is a miss; 0s = the period"}, deadline);
        v(FieldInfo{"kernel", "time", "a processing kernel per frame, behind its copy on the same stream; 0s = none"}, kernel);
        v(FieldInfo{"covers", "name", "what a frame's latency and deadline run to: processing (the end of its kernel) or transfer (its data in GPU memory)"}, covers);
    }
};

struct PeerOptions {
    std::string access = "both";
    std::int64_t src_device = 0;
    std::int64_t dst_device = 1;
    std::string refused = "staged";
    std::string enable = "both_ways";

    template <class V>
    void visit(V&& v) {
        v(FieldInfo{"access", "name", "peer access: on, off (staged through host) or both"}, access);
        v(FieldInfo{"src_device", "ordinal", "source GPU device ordinal"}, src_device);
        v(FieldInfo{"dst_device", "ordinal", "destination GPU device ordinal; the source's own ordinal: a copy within one GPU"}, dst_device);
        v(FieldInfo{"refused", "name", "when the platform refuses peer traffic: staged (copy through host) or error"}, refused);
        v(FieldInfo{"enable", "name", "with peer access on, which way it was enabled (cudaDeviceEnablePeerAccess): both_ways, or one_way, from the source to the destination only, so that the destination's copy into the source in a both-ways row is staged through host memory; model only (dmaprobe enables both ways)"}, enable);
    }
};

struct RegisteredOptions {
    std::int64_t reuses = 1;
    bool setup_only = false;

    template <class V>
    void visit(V&& v) {
        v(FieldInfo{"reuses", "count", "K copies per registration: the setup cost is amortised over K"}, reuses);
        v(FieldInfo{"setup_only", "bool", "time only cudaHostRegister and cudaHostUnregister of size bytes, no copy"}, setup_only);
    }
};

struct DuplexOptions {
    std::string host_memory = "pinned";
    bool one_way_beside = false;
    Bytes burst{0};

    // The copies each way of one burst of `size`-byte copies: burst / size rounded up, 0 = no burst.
    std::uint64_t burst_copies(std::uint64_t size) const {
        if (burst.value == 0 || size == 0) return 0;
        return (burst.value + size - 1) / size;
    }

    template <class V>
    void visit(V&& v) {
        v(FieldInfo{"host_memory", "name", "host buffers: pinned or pageable"}, host_memory);
        v(FieldInfo{"one_way_beside", "bool",
                    "pinned only: every repetition also times a blocking cudaMemcpy each way of the same size (rows "
                    "blocking_h2d, blocking_d2h) right after the pair, so that the pair's aggregate over one way "
                    "compares copies of the same moments: a host's driver calls drift by 40-70 % within seconds "
                    "(results/h200x2-nvlink/isolating/copy-levels), more than the 3 % the aggregate is judged by"},
          one_way_beside);
        v(FieldInfo{"burst", "bytes",
                    "pinned only: each repetition copies size bytes again and again each way, back to back on the "
                    "pair's two streams, until burst bytes have gone each way (burst / size copies, rounded up; at "
                    "most 512, what the streams' command queues take behind the gate), and times the same burst one "
                    "way with the other direction's calls left out (rows burst_h2d, burst_d2h), all behind the gate "
                    "as nvbandwidth's bidirectional copies are: the aggregate over one way of a stream of copies "
                    "rather than of one pair, whose ends the channels' polls place; the rows' GB/s count one copy each "
                    "way (the times are the bursts'); 0B = one pair"},
          burst);
    }
};

struct StrategyOptions {
    ZeroCopyOptions zero_copy;
    AsyncOptions async_overlap;
    FrameOptions periodic;
    PeerOptions peer;
    RegisteredOptions registered;
    DuplexOptions duplex;
    ComputeOptions compute;
    HostBufferOptions host_buffer;
    PinnedOptions pinned;
    CpuMappedOptions cpu_mapped;

    template <class V>
    void visit_sections(V&& v) {
        v.section("zero_copy", "zero_copy: kernel access pattern", zero_copy);
        v.section("async_overlap", "async_overlap: streams and kernel", async_overlap);
        v.section("frame", "periodic: the frame stream", periodic);
        v.section("peer", "peer: devices and peer access", peer);
        v.section("registered", "registered: reuse of one registration", registered);
        v.section("duplex", "duplex: host buffers", duplex);
        v.section("compute", "duplex, zero_copy: a compute kernel beside the transfer", compute);
        v.section("host_buffer", "pinned, pageable, registered: placement of the host buffer", host_buffer);
        v.section("pinned", "pinned: what is timed", pinned);
        v.section("cpu_mapped", "cpu_mapped: whose memory the CPU maps", cpu_mapped);
    }
};

// One of several transfers that run at the same time (contention scenarios).
struct FlowSpec {
    std::string name;
    std::string strategy = "pinned";  // pinned, peer or third_party_dma
    std::int64_t device = 0;          // GPU ordinal (third_party_dma: the capture card writes into it)
    std::int64_t peer_device = 1;     // peer: the destination GPU
    std::string direction = "h2d";    // pinned: h2d or d2h
    std::uint64_t size = 0;
    Duration start{0};
};

struct Scenario {
    std::string file;          // where it came from (error messages, metadata)
    std::string name;
    std::string description;
    std::string platform = "h100-sxm";
    std::vector<std::string> strategies;
    std::vector<std::string> directions;  // h2d, d2h, both
    std::vector<std::uint64_t> sizes;     // bytes per direction
    std::int64_t repetitions = 20;        // hardware repetitions (the model is deterministic)
    std::int64_t warmup = 3;
    ModelParams params;
    StrategyOptions options;
    bool link_explicit = false;           // the scenario (or --set) chose the link itself
    std::vector<std::string> explicit_keys;  // dotted keys the file or --set gave (override platform files)
    std::vector<FlowSpec> flows;             // when given: the scenario is these flows, run together
    // `links: { fpga0: { generation: 3, lanes: 8 } }` or `--set links.fpga0.lanes=8`: settings of
    // one device's own PCIe link, over the platform file's and the scenario's link.* (the card on
    // Gen3 x8 while the GPU stays on Gen5). Checked against the platform when it is loaded.
    struct DeviceLink {
        std::string device;
        std::string key;    // a link.* key
        std::string value;  // as written
    };
    std::vector<DeviceLink> device_links;
    // Which calibration its parameters start from: a built-in name ("h100-sxm"), a file as
    // given, or "none" (the defaults). Written beside every number it produced.
    std::string calibration = "none";
};

// One `--set key.path=value` override.
struct SetOverride {
    std::string path;
    std::string value;
    std::string scenario;  // "NAME:a.b=c" applies to scenario NAME only; empty: to every scenario
};
// Parses "a.b=c" or "NAME:a.b=c"; throws InputError naming the text when there is no '=', no key
// or an empty scenario name.
SetOverride parse_set(const std::string& text);

// Which calibration the scenarios of a run start from (docs/calibration.md).
struct CalibrationChoice {
    // Each scenario's platform's: the `calibration` key of its platform file, "none" where the
    // platform names none. Otherwise `ref` for every scenario.
    bool from_platform = false;
    std::string ref = "none";  // "none", a built-in calibration's name, or a calibration file
    static CalibrationChoice platform() { return CalibrationChoice{true, "none"}; }
    static CalibrationChoice fixed(std::string r) { return CalibrationChoice{false, std::move(r)}; }
};
// The CLI's --calibration value: empty means each platform's own.
CalibrationChoice calibration_choice(const std::string& option);

// Loads every scenario in a YAML file (one per YAML document, separated by ---), applies the
// calibration's parameters and then the overrides (which therefore win), validates, and expands
// defaults. Throws InputError naming the file and the key.
std::vector<Scenario> load_scenarios(const std::string& file, const std::vector<SetOverride>& sets = {},
                                     const CalibrationChoice& calibration = {});
// The same from text (tests); `origin` names it in errors.
std::vector<Scenario> parse_scenarios(const std::string& yaml_text, const std::string& origin,
                                      const std::vector<SetOverride>& sets = {},
                                      const CalibrationChoice& calibration = {});

// Sets one model parameter (`section.key`, not a strategy option) of a scenario already read,
// with the checks reading its file with the same --set applies, and with the same result: the
// value, the key counted as given by the scenario (it overrides the platform file), `link.*`
// making the link explicit. Throws InputError naming the scenario's file and the key. What a
// calibration step does to every scenario, without reading the files again.
void apply_parameter(Scenario& s, const SetOverride& set);

// A calibration's parameter values (`parameters:` map of dotted keys), as overrides, and the
// name it goes by in results.
struct Calibration {
    std::string label = "none";  // "none", the built-in name, or the file as given
    std::vector<SetOverride> parameters;
};
// `ref`: "none"; a built-in calibration (shipped_calibrations(): "h100-sxm" is
// results/h100-sxm/calibration.yaml as built); or a calibration file, relative to `relative_to`'s
// folder when that is given and the file is there. Throws InputError naming the file and the key
// for an unknown parameter or a bad value, and naming `referrer` and `key` when `ref` is
// neither.
Calibration load_calibration(const std::string& ref, const std::string& referrer = "--calibration",
                             const std::string& key = "", const std::string& relative_to = "");
// The calibration a platform names (its `calibration` key), "none" when it names none.
// `platform_ref` and `scenario_file` as a scenario gives them (resolve_platform).
std::string platform_calibration(const std::string& platform_ref, const std::string& scenario_file);
// A platform's `host:` values (cpu.*, host_memory.*: the machine's host where its calibration was
// fitted on another), as overrides applied over the calibration the platform names, and the
// platform file they come from. Throws InputError naming the file and `host.SECTION.KEY`.
struct PlatformHost {
    std::string origin;
    std::vector<SetOverride> parameters;
};
inline constexpr std::array<const char*, 2> kHostSections{"cpu", "host_memory"};
// What a scenario's calibration label gains when its platform's host values apply:
// "h100-sxm, host of platforms/v100-gen3.yaml".
inline constexpr const char* kHostOf = ", host of ";
PlatformHost platform_host(const std::string& platform_ref, const std::string& scenario_file);
// The names of the built-in calibrations, for messages and --help.
std::vector<std::string> calibration_names();

// The parameter values of a calibration file, as overrides (load_calibration(file).parameters).
std::vector<SetOverride> read_calibration(const std::string& file);

// The sizes a `sizes:` range expands to, for docs and tests.
std::vector<std::uint64_t> expand_size_range(std::uint64_t from, std::uint64_t to, double factor,
                                             std::uint64_t step);

}  // namespace dmasim::config
