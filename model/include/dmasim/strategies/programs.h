// What the strategies build their programs and rows from: the runtime operations an
// application's calls become, and rows over the intervals dmaprobe times.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "dmasim/config/params.h"
#include "dmasim/config/scenario.h"
#include "dmasim/sim/fast_forward.h"
#include "dmasim/sim/host_runtime.h"
#include "dmasim/sim/simulator.h"
#include "dmasim/strategies/strategy.h"

namespace dmasim::strategies {

using sim::CaseResult;
using sim::CaseSpec;
using sim::CopyDirection;
using sim::Op;
using sim::Program;
using sim::ProgramFamily;
using sim::ProgramOutcome;
using sim::RowResult;

// `fixed` plus `per_page` for every page `bytes` touches.
core::Duration pages_cost(std::uint64_t bytes, const config::CpuParams& cpu, core::Duration fixed,
                          core::Duration per_page);
// What cudaMallocHost(bytes) costs, repeated at one size: from the driver's pinned pool below
// cpu.alloc_pinned_pool (whole pages), else from the OS page by page, each page the allocation
// finds out of the cache (cpu.alloc_pinned_cache) dearer by cpu.alloc_pinned_cold_per_page.
// `pooled` says which.
core::Duration pinned_alloc_cost(std::uint64_t bytes, const config::CpuParams& cpu, bool* pooled = nullptr);

// cudaMemcpy(Async) of pinned memory on `stream`; `blocking`: the thread waits for it.
Op copy_op(CopyDirection dir, std::uint64_t bytes, int stream, bool blocking);
// A pageable copy, staged by the calling thread. `cached`: the user buffer fits in the CPU's
// last-level cache. It is decided by the case's size, not by `bytes`, so that a fast-forward
// level at a smaller size stays on the same path.
// `fresh`: the user buffer was mapped and never touched, so the runtime's copy faults in each
// page (cpu.first_touch_read, first_touch_write).
Op staged_op(CopyDirection dir, std::uint64_t bytes, bool cached, bool fresh = false, std::uint32_t page_offset = 0);
Op kernel_op(core::Duration d, int stream);
Op simple_op(Op::Kind kind, core::Duration d = {});

RowResult make_row(std::string variant, double ps, int directions, std::string note);
// A row the model cannot back with a mechanism yet: no time, status not_modelled.
RowResult not_modelled(std::string variant, int directions, std::string why);
// A row of a path the platform refuses (a bridge that refuses peer-to-peer traffic): no time,
// status refused.
RowResult refused_row(std::string variant, int directions, std::string why);
// `note`, ending with how the program was fast-forwarded when it was.
std::string with_note(std::string note, const std::string& fast_forward);
// A row of a simulated program: its note says how the program was computed.
RowResult sim_row(std::string variant, double ps, int directions, std::string note, const ProgramOutcome& o);

// Rows whose interval ends at a channel's poll, whose phase against the work it waits for the
// machine's calls set (dmaprobe's gated duplex pair against the gate's opening, peer copies both
// ways against the other GPU's copy) are simulated at this many phases spread evenly over one
// runtime.poll_period.
inline constexpr int kPollPhases = 8;
// Such a row: the phases' mean, and their spread as the row's own band (p10-p90, min-max; the mean
// alone when `deterministic`, one machine). Which phase a machine's calls give it is where machines
// differ here, so a band of drawn machines, which scales the calls, has nothing to add.
RowResult phase_row(std::string variant, std::vector<double> ps, int directions, std::string note, const ProgramOutcome& o,
                    bool deterministic);

// The same program with a compute kernel beside it on a stream of its own (compute.duration >
// 0), put first. Kernels in this version take no SMs or memory bandwidth, so it changes nothing
// by construction; the row says so, and the measured rows show what it costs on a GPU.
void add_compute(Program& prog, const config::ComputeOptions& c);

// What dmaprobe's events measure of a gated program (Op::Kind::kOpenGate): from the gate
// opening to the end of operation `last`. The CPU's calls before it are outside.
double gated_ps(const Program& prog, const ProgramOutcome& o, std::size_t last);

// h2d, d2h or both; throws std::invalid_argument for anything else.
std::vector<CopyDirection> directions_of(const std::string& direction);

// Pinned copies: one blocking cudaMemcpy, or, for both directions, two cudaMemcpyAsync on two
// streams and a synchronize (that is what duplex is).
Program pinned_program(const std::vector<CopyDirection>& dirs, std::uint64_t bytes);
// Pageable copies are synchronous for the calling thread, so two directions from one thread
// run one after the other.
Program pageable_program(const std::vector<CopyDirection>& dirs, std::uint64_t bytes, bool cached, bool fresh = false,
                         std::uint32_t page_offset = 0);

// A zero-copy kernel: its warps' loads coalesce into requests (gpu/coalescing.h), each resident
// warp running its loop (sim::WarpLoop: an access's lines leave one after another, the warp
// waits for its last), within the GPU's limit on outstanding host-memory reads; its stores are
// merged per line in the L2 and posted one write per contiguous run (gpu::store_traffic), at
// the pace of the loads from GPU memory that feed them and the SMs' store limit.
// `source_bytes` is the size of the buffers the kernel works on (0: `bytes`), where `bytes` may be
// a part of them that a sample simulates: what the L2 holds of its source goes by the buffers.
Op mapped_kernel_op(const std::vector<CopyDirection>& dirs, std::uint64_t bytes, const config::ZeroCopyOptions& z,
                    const config::GpuParams& g, core::Bytes host_line, std::uint64_t source_bytes = 0);

// Host buffers off a page boundary and never-touched memory, where the strategy has no mechanism
// for them: for such a case of a strategy that places host buffers, adds the not_modelled row and
// returns true.
// `fresh_modelled`: the strategy prices never-touched memory itself (pageable: a fault a page).
// `offset_modelled`: the strategy prices a buffer off a page itself (pinned: its TLPs as on a page,
// which the main plans' copies 1 and 64 bytes off hold within 1.6 % at 16 MiB; pageable: the
// runtime's way out of its staging buffers into an unaligned destination).
bool host_buffer_not_modelled(Case& c, bool fresh_modelled = false, bool offset_modelled = false);

// A transfer through a BAR window of `aperture` bytes (gpu.bar_aperture; 0: the whole buffer at
// once): one operation per window, `window_op(bytes)`, with the driver's remap (gpu.bar_remap)
// between windows, simulated at levels of whole windows. Throws std::invalid_argument past the
// case's piece limit.
struct BarTransfer {
    std::uint64_t windows = 1;
    ProgramOutcome outcome;
};
// `bar`: the window (0 = the whole buffer at once) and what remapping it costs.
BarTransfer run_through_bar(Engine& engine, const config::ModelParams& params, std::uint64_t bytes,
                            const config::GpuBarParams& bar, const std::function<Op(std::uint64_t)>& window_op);
// A GPU's BAR1 as its platform node gives it, and the refusal of a mapping of `bytes` that does
// not fit it where that GPU does not remap windows (empty: it goes).
config::GpuBarParams bar_of(Engine& engine, const config::ModelParams& params, int gpu);
std::string bar_refusal(Engine& engine, const config::ModelParams& params, int gpu, std::uint64_t bytes);

// The copy rows of pinned memory (pinned, and duplex of pinned buffers).
void run_pinned_copy(Engine& engine, Case& c);
// The copy row of pageable memory (pageable, and duplex of pageable buffers).
void run_pageable_copy(Engine& engine, Case& c, const std::string& note);

}  // namespace dmasim::strategies
