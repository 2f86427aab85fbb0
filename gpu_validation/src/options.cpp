#include "options.h"

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <sstream>

#include "dmasim/core/error.h"
#include "dmasim/core/units.h"
#include "spec.h"

namespace dmaprobe {

namespace {

long long parse_integer(const std::string& option, const std::string& text, long long lo, long long hi) {
    errno = 0;
    char* end = nullptr;
    const long long v = std::strtoll(text.c_str(), &end, 10);
    if (text.empty() || errno != 0 || *end != '\0') {
        throw UsageError(option + ": '" + text + "' is not an integer");
    }
    if (v < lo || v > hi) {
        std::ostringstream os;
        os << option << ": " << v << " is out of range (" << lo << " to " << hi << ")";
        throw UsageError(os.str());
    }
    return v;
}

std::uint64_t parse_u64(const std::string& option, const std::string& text) {
    const bool digits = !text.empty() && text.find_first_not_of("0123456789") == std::string::npos;
    errno = 0;
    const unsigned long long v = digits ? std::strtoull(text.c_str(), nullptr, 10) : 0;
    if (!digits || errno != 0) {
        throw UsageError(option + ": '" + text + "' is not an integer from 0 to 18446744073709551615");
    }
    return static_cast<std::uint64_t>(v);
}

// Options that take a value. Everything else is a flag.
bool takes_value(const std::string& name) {
    static const char* names[] = {"--plan",        "--out",    "--device", "--peer-device",
                                  "--only",        "--max-size", "--repetitions", "--warmup",
                                  "--budget-ms",   "--commit", "--order",       "--seed",
                                  "--json",        "--frame-wait", "--host-stalls"};
    for (const char* n : names) {
        if (name == n) return true;
    }
    return false;
}

}  // namespace

const char* to_string(CaseOrder o) { return o == CaseOrder::shuffle ? "shuffle" : "plan"; }
const char* to_string(FrameWait w) { return w == FrameWait::sleep ? "sleep" : "spin"; }

Options parse_options(const std::vector<std::string>& args) {
    Options o;
    for (std::size_t i = 0; i < args.size(); ++i) {
        std::string name = args[i];
        std::optional<std::string> value;
        const auto eq = name.find('=');
        if (name.rfind("--", 0) == 0 && eq != std::string::npos) {
            value = name.substr(eq + 1);
            name = name.substr(0, eq);
        }
        if (takes_value(name)) {
            if (!value) {
                if (i + 1 >= args.size()) throw UsageError(name + " needs a value");
                value = args[++i];
            }
        } else if (value) {
            throw UsageError(name + " takes no value");
        }

        if (name == "--help" || name == "-h") {
            o.help = true;
        } else if (name == "--version") {
            o.version = true;
        } else if (name == "--list") {
            o.list = true;
        } else if (name == "--quiet" || name == "-q") {
            o.quiet = true;
        } else if (name == "--fresh-host-data") {
            o.fresh_host_data = true;
        } else if (name == "--flush-host-data") {
            o.flush_host_data = true;
        } else if (name == "--plan") {
            if (value->empty()) throw UsageError("--plan: empty file name");
            o.plan = *value;
        } else if (name == "--out") {
            if (value->empty()) throw UsageError("--out: empty directory name");
            o.out = *value;
        } else if (name == "--device") {
            o.device = static_cast<int>(parse_integer(name, *value, 0, 1023));
        } else if (name == "--peer-device") {
            o.peer_device = static_cast<int>(parse_integer(name, *value, 0, 1023));
        } else if (name == "--only") {
            if (!strategy_from_name(*value)) {
                throw UsageError("--only: unknown strategy '" + *value + "' (known: " +
                                 strategy_name_list() + ")");
            }
            o.only = *value;
        } else if (name == "--max-size") {
            try {
                const auto b = dmasim::core::parse_bytes(*value);
                if (b.value == 0) throw UsageError("--max-size: must be at least 1 byte");
                o.max_size = b.value;
            } catch (const dmasim::core::UnitError& e) {
                throw UsageError("--max-size: " + std::string(e.what()));
            }
        } else if (name == "--repetitions") {
            o.repetitions = static_cast<int>(parse_integer(name, *value, 1, 1000000));
        } else if (name == "--warmup") {
            o.warmup = static_cast<int>(parse_integer(name, *value, 0, 1000000));
        } else if (name == "--budget-ms") {
            o.budget_s = static_cast<double>(parse_integer(name, *value, 0, 86400000)) / 1000.0;
        } else if (name == "--commit") {
            if (value->empty()) throw UsageError("--commit: empty value");
            o.commit = *value;
        } else if (name == "--order") {
            if (*value == "shuffle") {
                o.order = CaseOrder::shuffle;
            } else if (*value == "plan") {
                o.order = CaseOrder::plan;
            } else {
                throw UsageError("--order: '" + *value + "' is neither shuffle nor plan");
            }
        } else if (name == "--frame-wait") {
            if (*value == "sleep") {
                o.frame_wait = FrameWait::sleep;
            } else if (*value == "spin") {
                o.frame_wait = FrameWait::spin;
            } else {
                throw UsageError("--frame-wait: '" + *value + "' is neither sleep nor spin");
            }
        } else if (name == "--host-stalls") {
            o.host_stalls_s = static_cast<int>(parse_integer(name, *value, 0, 600));
        } else if (name == "--seed") {
            o.seed = parse_u64(name, *value);
        } else if (name == "--no-pin") {
            o.pin_cpus = false;
        } else if (name == "--json") {
            if (value->empty()) throw UsageError("--json: empty file name");
            o.json = *value;
        } else {
            throw UsageError("unknown option '" + args[i] + "'");
        }
    }
    if (o.help || o.version) return o;
    if (o.plan.empty()) throw UsageError("--plan FILE is required");
    if (!o.list && o.out.empty()) throw UsageError("--out DIR is required (or use --list)");
    if (o.device && o.peer_device && *o.device == *o.peer_device) {
        throw UsageError("--peer-device must differ from --device");
    }
    return o;
}

std::string usage_text() {
    return R"(dmaprobe - measures host<->GPU and GPU<->GPU transfers for dmasim

Usage:
  dmaprobe --plan FILE --out DIR [options]   measure every case of a flat plan
  dmaprobe --list --plan FILE [options]      show what would run and what would be
                                             skipped, and why; touches no GPU
  dmaprobe --help | --version

The plan is the flat format of docs/plan.md (written by `dmasim plan`). Results go to
DIR/measured.csv (the dmasim results schema, source=hw) and DIR/metadata.json (GPU,
driver, PCIe link, host, commit, command line), and with --json FILE to FILE too. They
are written only if the whole run succeeds; any CUDA error, failed data verification or bad plan stops the run with one
message and a non-zero exit status. docs/harness.md describes every row it writes.

Options:
  --plan FILE         the flat plan to run (required).
  --out DIR           directory for measured.csv and metadata.json (required unless
                      --list); created if missing, existing files are replaced.
  --list              print one line per case: run, skip (with the reason) or filtered,
                      then exit. Checks the plan fully but never calls CUDA, so it works
                      on a machine without a GPU. Conditions that need the GPU machine
                      (PCIe link of a scenario, two GPUs for peer) are shown as such.
  --device N          CUDA device to measure (default 0). Also the source GPU of peer
                      cases, overriding the plan's src_device.
  --peer-device M     destination GPU of peer cases, overriding the plan's dst_device
                      (default: the plan's dst_device, else the first other GPU).
  --only STRATEGY     run only cases of this strategy (pageable, pinned, registered,
                      duplex, async_overlap, zero_copy, peer, periodic, ...); other cases
                      are filtered out and leave no row.
  --max-size BYTES    leave out cases whose size_bytes is larger (no row). Accepts units:
                      65536, 64KiB, 64MiB, 1GiB.
  --repetitions N     timed repetitions for every case, instead of the plan's value;
                      also turns off the automatic reduction below. Periodic cases keep
                      their `frames`.
  --warmup N          untimed warm-up repetitions for every case, instead of the plan's.
  --budget-ms MS      time budget per measured row (default 2000). When the first timed
                      repetition shows that the plan's repetitions would take longer,
                      they are reduced to fit, but never below 5 (nor below the plan's own
                      number when that is smaller); the row's note says so. 0 = never
                      reduce.
  --fresh-host-data   have the CPU write new data into host source buffers before every
                      repetition (as a producer would leave it: hot and dirty in the CPU
                      caches, which makes host-to-device DMA much slower). By default they
                      are written once per case, and each repetition's destination is
                      poisoned on the GPU instead.
  --flush-host-data   after the CPU writes a host source (once per case, or with
                      --fresh-host-data before every repetition), flush its lines from the
                      CPU's caches (clflushopt; outside the timed interval), so that DMA and
                      zero-copy reads find it in DRAM only (periodic frames: before their
                      release; a pointer chase: its chain, which the CPU then never reads).
  --order ORDER       shuffle (default) or plan: the order in which runnable cases are
                      measured. Shuffled, slow drift of the machine (temperature, clocks,
                      other tenants) does not line up with one strategy or size. Rows are
                      written in plan order either way.
  --frame-wait WAIT   sleep (default) or spin: how periodic cases wait for a frame's
                      release. sleep: the thread sleeps until 200 us before it, then
                      spins on the clock (a producer that blocks between frames). spin:
                      it spins the whole period, so the CPU core never idles.
  --host-stalls S     before the cases, spin S seconds (0-600; default 0, off) on one
                      core reading the clock and record every gap over 10 us (the
                      times the core was taken away: another guest on it, interrupts),
                      then for S seconds sleep until 200 us before a release every
                      8 ms and spin to it, recording how late each release is reached.
                      Writes DIR/host-stalls.csv (kind,at_s,us) and a summary with the
                      machine's steal time in metadata.json ("host_stalls").
  --seed N            seed of the shuffle (default: drawn from the clock and
                      std::random_device). Always recorded in metadata.json; the same
                      seed and plan give the same order.
  --no-pin            do not pin the process to the CPUs of the GPU's NUMA node. By
                      default every thread (the CUDA driver's too) is pinned to the
                      GPU's local_cpulist once the GPU is opened; metadata.json says
                      what was applied.
  --json FILE         also write the results as a JSON document shaped like nvbandwidth's
                      --json output (one testcase per row); written only if the whole
                      run succeeds, like the other files.
  --commit HASH       project commit to record in metadata.json (default: the commit
                      baked in at build time from `git rev-parse`, or "unknown").
  --quiet, -q         no progress lines on stderr (errors are still printed).
  --help, -h          this text.
  --version           print the version and the built-in commit.

Exit status: 0 success, 1 error (bad plan, CUDA error, verification failure, cannot
write output), 2 bad command line.
)";
}

std::string join_command_line(int argc, const char* const* argv) {
    std::string out;
    for (int i = 0; i < argc; ++i) {
        if (i > 0) out += ' ';
        const std::string a = argv[i] ? argv[i] : "";
        const bool plain = !a.empty() && a.find_first_of(" \t\n'\"\\$`*?;&|<>()") == std::string::npos;
        if (plain) {
            out += a;
        } else {
            out += '\'';
            for (char c : a) {
                if (c == '\'') {
                    out += "'\\''";
                } else {
                    out += c;
                }
            }
            out += '\'';
        }
    }
    return out;
}

}  // namespace dmaprobe
