// From a plan case (docs/plan.md) to a validated measurement spec, and the decisions whether a
// case is run, skipped (a row with status=skipped and the reason) or filtered out by an option
// (no row). Plain C++: unit-tested without a GPU.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "dmasim/core/limits.h"
#include "dmasim/core/plan.h"
#include "options.h"

namespace dmaprobe {

enum class Strategy {
    pageable,
    pinned,
    registered,
    duplex,
    async_overlap,
    zero_copy,
    peer,
    periodic,
    third_party_dma,
    cpu_mapped,
};

enum class Direction { h2d, d2h, both };

// A pointer chase puts one 8-byte pointer at the start of every 64-byte line of its buffer, so
// no two hops share a 32-byte sector or a cache line. dmasim refuses chases smaller than a node.
inline constexpr std::uint64_t kChaseNodeBytes = dmasim::core::limits::kChaseNodeBytes;

// How a host buffer is allocated (duplex, periodic's `via`).
enum class HostMemory { pinned, pageable, zero_copy };

const char* to_string(Strategy s);
const char* to_string(Direction d);
const char* to_string(HostMemory m);
std::optional<Strategy> strategy_from_name(const std::string& name);
// "pageable, pinned, ..." for messages.
std::string strategy_name_list();
// False for the strategies this harness cannot run on a plain GPU machine.
bool harness_can_run(Strategy s);

// Everything one case needs, checked. Fields that a strategy does not use keep their defaults.
struct MeasurementSpec {
    std::size_t index = 0;        // position in the plan, 0-based
    std::string scenario;
    Strategy strategy = Strategy::pinned;
    Direction direction = Direction::h2d;
    std::uint64_t size_bytes = 0;
    int repetitions = 1;          // timed repetitions (for periodic: frames)
    int warmup = 0;               // untimed repetitions (for periodic: warm-up frames)
    bool repetitions_fixed = false;  // set by --repetitions: no automatic reduction
    std::string variant;          // the plan's `variant` label ("" if none)

    HostMemory host_memory = HostMemory::pinned;  // duplex; periodic (`via`)
    bool one_way_beside = false;  // duplex (pinned): a blocking copy each way beside the pair, every repetition
    int burst_copies = 0;         // duplex (pinned): copies each way back to back per repetition (0: one pair)
    int reuses = 1;               // registered: K
    int streams = 1;              // async_overlap: N
    std::int64_t kernel_ns = 0;   // async_overlap, periodic: synthetic kernel for the whole size
    int access_bytes = 4;         // zero_copy: 1, 2, 4, 8 or 16
    std::int64_t stride = 1;      // zero_copy: elements between consecutive threads
    int blocks = 0;               // zero_copy
    int threads = 0;              // zero_copy
    bool chase = false;           // zero_copy pattern=chase: one thread's dependent uncached loads
    bool chase_device = false;    // chase through GPU memory (reference) instead of mapped host memory
    std::int64_t hops = 0;        // chase: dependent loads per run
    int stores_beside = 0;        // chase: blocks of 256 threads storing to host memory meanwhile (0: none)
    bool breadth_first = false;   // async_overlap: every H2D, then every kernel, then every D2H
    // zero_copy: a pinned cudaMemcpyAsync of size_bytes beside the kernel, in this direction
    // (h2d or d2h), on a stream of its own; `has_copy_beside` false: none.
    bool has_copy_beside = false;
    Direction copy_beside = Direction::h2d;
    std::int64_t compute_ns = 0;  // duplex, zero_copy: a compute kernel beside the transfer (0: none)
    int compute_blocks = 0;
    int compute_threads = 0;
    std::uint64_t compute_bytes = 0;
    std::uint64_t host_offset = 0;  // pinned, pageable, registered: host pointer past a page boundary
    bool host_fresh = false;      // pageable: never-touched memory for every copy
    bool setup_only = false;      // pinned, registered: only the allocation/registration rows
    bool local_copy = false;      // peer with src = dst: a copy within one GPU
    int copy_engines = 0;         // 0: any; else the GPU must have this many (asyncEngineCount)
    int connections = 0;          // 0: any; else the run's CUDA_DEVICE_MAX_CONNECTIONS must be this
    bool peer_access = true;      // peer
    int src_device = 0;           // peer: source GPU; every other strategy: the measuring GPU
    int dst_device = -1;          // peer: destination GPU (-1: first GPU other than src)
    std::int64_t period_ns = 0;   // periodic
    int frames = 0;               // periodic: M
    std::int64_t deadline_ns = 0; // periodic (defaults to period_ns)
    int link_generation = 0;      // 0: the plan names no link
    int link_lanes = 0;
    // The link is the one the scenario's platform gives the GPU (the scenario did not set it):
    // a GPU whose link cannot be read runs the case; one set by the scenario must be confirmed.
    bool link_from_platform = false;
    std::string platform;         // the scenario's platform, as the plan names it
    std::string peer_route;       // peer: the route class the platform has between the GPUs ("" any)

    int directions() const { return direction == Direction::both ? 2 : 1; }
    // "pinned/h2d 64MiB" for progress lines and messages.
    std::string label() const;
};

enum class CaseAction { run, skip, filter };

struct CaseDecision {
    CaseAction action = CaseAction::run;
    MeasurementSpec spec;   // for skip/filter: the common keys only
    std::string reason;     // skip: the row's note; filter: why it is left out
};

// Checks one plan case. Throws dmasim::core::InputError naming the plan, the case number, the
// scenario and the key when a key is missing or has a bad value. `origin` is the plan path.
CaseDecision decide_case(const dmasim::core::PlanCase& c, std::size_t index,
                         const std::string& origin, const Options& opt);
std::vector<CaseDecision> decide_all(const dmasim::core::Plan& plan, const std::string& origin,
                                     const Options& opt);

// Facts about the GPU machine that decide whether a runnable case can run here.
struct MachineInfo {
    int device_count = 0;
    int device = 0;                       // the measuring GPU
    int link_generation = -1;             // measured under load; -1 unknown
    int link_lanes = -1;
    std::string link_source = "unknown";  // sysfs, nvidia-smi or unknown
    int copy_engines = -1;                // asyncEngineCount of the measuring GPU; -1 unknown
    // CUDA_DEVICE_MAX_CONNECTIONS as the process started (8, CUDA's default, when unset); the
    // runtime reads it once, when the context is created.
    int connections = 8;
    // peer_capable[i][j]: cudaDeviceCanAccessPeer(i, j)
    std::vector<std::vector<bool>> peer_capable;
    // routes[i][j]: route class between GPU i and GPU j (nvidia-smi topo -m); empty if unknown
    std::vector<std::vector<std::string>> routes;
};

// CUDA_DEVICE_MAX_CONNECTIONS's value as CUDA takes it: unset (nullptr or empty) is 8; a whole
// number from 1 to 32 is itself; anything else -1 (unknown: a case that sets connections skips).
int max_connections_from_env(const char* value);

// Peer destination once the device count is known (dst_device -1 → first other GPU).
int resolve_peer_destination(const MeasurementSpec& spec, int device_count);

// Empty when the case can run on this machine, else the reason (the skipped row's note).
std::string machine_skip_reason(const MeasurementSpec& spec, const MachineInfo& machine);

// What --list prints about conditions checked only on the GPU machine ("" if none).
std::string machine_conditions(const MeasurementSpec& spec);

}  // namespace dmaprobe
