// Range and consistency checks of the model parameters, one function per parameter struct.
//
// A scenario sets a struct through its section (`link.lanes`); a platform file sets the same
// struct per node or link (`links[3].lanes`). Both call these functions with their own key
// prefix, so one bad value gets the same message wherever it was written, and a bound added here
// holds for both. The bounds are documented in each field's FieldInfo (params.h), which
// `dmasim params` and docs/scenarios.md print.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "dmasim/config/params.h"

namespace dmasim::config {

// Reports one invalid value: the full key ("links[3].lanes") and a one-line message saying what
// is wrong and what is allowed. It must not return (callers throw core::InputError); if it does,
// the check throws std::logic_error rather than go on with a value it knows is bad.
using FailFn = std::function<void(const std::string& key, const std::string& message)>;

// Bounds shared by several structs. Wire and bridge latencies are nanoseconds in real machines;
// 1 ms leaves room for any what-if (200 km of fibre) while keeping a typo such as "80ms" out.
inline constexpr Duration kMaxHardwareLatency{1'000'000'000};       // 1 ms
inline constexpr Duration kMaxPerItemTime{1'000'000};             // 1 us: a cost per packet, line or loop iteration
inline constexpr Duration kMaxSoftwareLatency{1'000'000'000'000};   // 1 s: runtime and OS costs
inline constexpr double kMaxBandwidth = 100e12;                     // 100 TB/s
inline constexpr double kMaxNvlinkLinkRate = 1e12;                  // 1 TB/s per link (NVLink 5: 50 GB/s)

// Each checks the fields of one struct; `prefix` is prepended to the field's key ("link.",
// "links[3].", "nodes[1].").
void check_link(const LinkParams& p, const std::string& prefix, const FailFn& fail);
void check_root_complex(const RootComplexParams& p, const std::string& prefix, const FailFn& fail);
void check_memory(const MemoryParams& p, const std::string& prefix, const FailFn& fail);
void check_dma(const DmaParams& p, const std::string& prefix, const FailFn& fail);
void check_card_dma(const CardDmaParams& p, const std::string& prefix, const FailFn& fail);
void check_runtime(const RuntimeParams& p, const std::string& prefix, const FailFn& fail);
void check_cpu(const CpuParams& p, const std::string& prefix, const FailFn& fail);
void check_pageable(const PageableParams& p, const std::string& prefix, const FailFn& fail);
void check_host_spread(const HostSpreadParams& p, const std::string& prefix, const FailFn& fail);
void check_gpu(const GpuParams& p, const std::string& prefix, const FailFn& fail);
void check_nvlink(const NvlinkParams& p, const std::string& prefix, const FailFn& fail);
// A socket link (UPI/xGMI) of a platform file: its `bandwidth` (carried as one link of
// NvlinkParams::link_rate) and `latency`.
void check_socket_link(const NvlinkParams& p, const std::string& prefix, const FailFn& fail);

// A bridge's completions against the Read Completion Boundary of one of its ports. `link_prefix`
// names where that link's values were set ("link.", "links[2].") for the message.
void check_completion_size(const RootComplexParams& rc, const std::string& rc_prefix, const LinkParams& link,
                           const std::string& link_prefix, const FailFn& fail);

// Every section of a scenario's parameters under its section name ("link.lanes"), and the checks
// between sections.
void check_model_params(const ModelParams& p, const FailFn& fail);

}  // namespace dmasim::config
