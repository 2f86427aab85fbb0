// Command-line options of dmaprobe. Plain C++ (no CUDA): unit-tested without a GPU.
#pragma once

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace dmaprobe {

inline constexpr const char* kVersion = "0.1.0";

// Bad command line: main prints what() and a pointer to --help, and exits with status 2.
class UsageError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

// In which order the runnable cases are measured (rows are always written in plan order).
enum class CaseOrder { shuffle, plan };
const char* to_string(CaseOrder o);

// How the harness waits for a periodic frame's release: sleep until shortly before it and spin
// (a producer thread that blocks), or spin the whole period (a core that never idles; isolates
// what idling the CPU costs the next frame).
enum class FrameWait { sleep, spin };
const char* to_string(FrameWait w);

struct Options {
    bool help = false;
    bool version = false;
    bool list = false;
    bool quiet = false;
    bool fresh_host_data = false;            // --fresh-host-data
    bool flush_host_data = false;            // --flush-host-data
    std::string plan;                        // --plan FILE
    std::string out;                         // --out DIR
    std::optional<int> device;               // --device N (default 0)
    std::optional<int> peer_device;          // --peer-device M (peer cases)
    std::optional<std::string> only;         // --only STRATEGY
    std::optional<std::uint64_t> max_size;   // --max-size BYTES
    std::optional<int> repetitions;          // --repetitions N (overrides the plan)
    std::optional<int> warmup;               // --warmup N (overrides the plan)
    double budget_s = 2.0;                   // --budget-ms MS (0: never reduce repetitions)
    std::optional<std::string> commit;       // --commit HASH (overrides the built-in commit)
    CaseOrder order = CaseOrder::shuffle;    // --order shuffle|plan
    FrameWait frame_wait = FrameWait::sleep; // --frame-wait sleep|spin
    int host_stalls_s = 0;                   // --host-stalls SECONDS (0: no stall probe)
    std::optional<std::uint64_t> seed;       // --seed N (default: drawn at start, recorded)
    bool pin_cpus = true;                    // off with --no-pin
    std::optional<std::string> json;         // --json FILE (nvbandwidth-style results)
    std::string command_line;                // as typed, for metadata.json

    int measuring_device() const { return device.value_or(0); }
};

// Parses the arguments after argv[0]. Accepts "--opt value" and "--opt=value".
// Throws UsageError with a message that names the option.
Options parse_options(const std::vector<std::string>& args);

// The --help text: every option, one paragraph each.
std::string usage_text();

// Joins argv into one line, quoting arguments that contain spaces or shell characters.
std::string join_command_line(int argc, const char* const* argv);

}  // namespace dmaprobe
