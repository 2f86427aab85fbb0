// Upper bounds on what a scenario may ask for, shared by `dmasim validate/run/plan` and by
// dmaprobe's plan-case checks: a plan `dmasim plan` writes is always one dmaprobe accepts, and a
// value either side refuses the other refuses too (docs/scenarios.md, "Limits").
//
// Dependency-free and header-only: the CUDA harness includes it with the toolkit alone.
//
// Why bounds at all: an unbounded value passed validation and then made `dmasim run` hang or
// exhaust memory (a 1 TiB copy, a billion frames, a size range of 10^12 sizes). Every bound
// here keeps one simulated case within minutes and its program within tens of megabytes, and
// keeps simulated time far below what SystemC's 64-bit picosecond clock (about 213 days) and
// the model's double-precision picosecond arithmetic (exact to 2^53 ps, about 2.5 hours) hold.
#pragma once

#include <cstdint>

namespace dmasim::core::limits {

// The largest copy, per direction. 64 GiB fits as a copy's destination in the smallest GPU
// that dmaprobe is run on (H100, 80 GB) and in the lent machines' host memory (128 GiB); the
// model simulates a GiB in about three seconds, so a case of this size takes minutes.
inline constexpr std::uint64_t kMaxCopyBytes = std::uint64_t{64} << 30;
// Bytes one simulated case moves in all: both directions of the largest copy. Bounds the
// work of cases that repeat a transfer (frames) or run several at once (flows).
inline constexpr std::uint64_t kMaxCaseBytes = 2 * kMaxCopyBytes;
// Sizes in one scenario, counted before a range is expanded.
inline constexpr std::uint64_t kMaxSizes = 10000;

// Hardware repetitions: the model does not repeat (it is deterministic); dmaprobe runs them.
inline constexpr std::int64_t kMaxRepetitions = 1000000;
inline constexpr std::int64_t kMaxWarmup = 1000000;
// registered: copies per registration.
inline constexpr std::int64_t kMaxReuses = 1000000;

// Any one duration a case gives (a kernel, a compute kernel, a frame period or deadline, a
// flow's start), in nanoseconds as the plan writes it: one hour.
inline constexpr std::int64_t kMaxDurationNs = std::int64_t{3600} * 1000 * 1000 * 1000;
// A frame stream (frame.count x frame.period) lasts at most this long: one hour of simulated
// time keeps picosecond arithmetic exact.
inline constexpr std::int64_t kMaxStreamNs = kMaxDurationNs;
// periodic: frames M. The model builds up to four operations per frame.
inline constexpr std::int64_t kMaxFrames = 100000;

// async_overlap: streams N (dmaprobe creates one CUDA stream each). A size below N would leave
// a stream an empty chunk, so sizes must be at least N bytes.
inline constexpr std::int64_t kMaxStreams = 64;

// zero_copy: distance between neighbouring threads' accesses, in elements.
inline constexpr std::int64_t kMaxStride = std::int64_t{1} << 20;
// A CUDA grid's x dimension.
inline constexpr std::int64_t kMaxGridBlocks = 2147483647;
inline constexpr std::int64_t kMaxThreadsPerBlock = 1024;
// zero_copy pattern chase: dependent loads per run, and the bytes of one chase node (one
// 8-byte pointer per 64-byte line, so no two hops share a sector or a line).
inline constexpr std::int64_t kMaxHops = 100000000;
inline constexpr std::uint64_t kChaseNodeBytes = 64;
// A chase with stores beside it (zero_copy.stores_beside): blocks of 256 threads, at most what an
// H100 holds at once less a block's room for the chase (132 SMs x 8); and its hops, which the
// model simulates with every store the grid makes (up to 100 us a hop behind 1024 blocks), or
// every TLP of the copy beside it (zero_copy.copy_beside), meanwhile.
inline constexpr std::int64_t kMaxStoresBesideBlocks = 1024;
inline constexpr std::int64_t kMaxHopsBesideStores = 2000;
// A chase with stores or a copy beside it starts this long after them, once their queue has filled.
inline constexpr std::int64_t kStoresBesideSettleNs = 300000;
// A chase with a copy beside it (zero_copy.copy_beside): the copy is as many pinned copies of this
// many bytes, back to back on one stream, as keep a link of kCopyBesideChaseRate busy for the
// settling time and kCopyBesideChaseHopNs a hop (loads beside a copy into the GPU measured
// 3.4-3.5 us, results/h100-sxm/isolating/zero-copy-exchange; a run of 5 us a hop fell short on a
// 2xH200), so that it outlasts the chase.
inline constexpr std::uint64_t kCopyBesideChaseChunk = std::uint64_t{64} << 20;
inline constexpr std::int64_t kCopyBesideChaseHopNs = 10000;
inline constexpr double kCopyBesideChaseRate = 64e9;  // bytes/s: above any PCIe Gen5 x16 link's
// The chunks that many bytes take.
constexpr std::uint64_t copy_beside_chase_chunks(std::int64_t hops) {
    const double bytes = static_cast<double>(kStoresBesideSettleNs + hops * kCopyBesideChaseHopNs) * 1e-9 * kCopyBesideChaseRate;
    return static_cast<std::uint64_t>(bytes / static_cast<double>(kCopyBesideChaseChunk)) + 1;
}

// compute: the kernel beside a transfer.
inline constexpr std::int64_t kMaxComputeBlocks = 1000000;
inline constexpr std::uint64_t kMinComputeBytes = 4096;
inline constexpr std::uint64_t kMaxComputeBytes = std::uint64_t{1} << 40;

// host_buffer.offset: how far past a page boundary the host buffer starts.
inline constexpr std::uint64_t kMaxHostOffset = std::uint64_t{1} << 30;

// duplex.burst: the copies each way one repetition of a duplex burst makes (burst / size, rounded
// up), all queued behind the gate before it opens. On a 2xH200 768 copies each way queued, 1024
// blocked the CPU's calls (the streams' command queues full) until the gate timed out
// (results/h200x2-nvlink/isolating/duplex-burst/depth); nvbandwidth's loops run 16 to 64.
inline constexpr std::int64_t kMaxBurstCopies = 512;

// GPU ordinals (peer, flows).
inline constexpr std::int64_t kMaxDeviceOrdinal = 1023;

// flows: transfers that run together in one case.
inline constexpr std::int64_t kMaxFlows = 64;

// The pieces the model cuts one case into, each an operation of its program: pageable staging
// chunks (size / pageable.bounce_size, times the frames of a frame stream) and BAR windows of
// third_party_dma (size / gpu.bar_aperture). 2^18 operations stay within tens of megabytes.
inline constexpr std::uint64_t kMaxCasePieces = std::uint64_t{1} << 18;

}  // namespace dmasim::core::limits
