// Kernels of dmaprobe and their launchers (each launcher checks the launch).
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

namespace dmaprobe {

// Fills [p, p+n) with the test pattern of `seed` (datagen.h). p must be 8-byte aligned.
void launch_fill(void* p, std::size_t n, std::uint64_t seed, int blocks, cudaStream_t s);

// Compares [p, p+n) with pattern(seed) ^ mask; result[0] += differing bytes, result[1] =
// min(result[1], first differing byte). result must be preset to {0, ~0}.
void launch_verify(const void* p, std::size_t n, std::uint64_t seed, std::uint64_t mask,
                   unsigned long long* result, int blocks, cudaStream_t s);

// The synthetic kernel: out = in ^ mask over n bytes (in/out may be null when n is 0), then
// each block's thread 0 spins on %globaltimer until spin_ns after the block started.
// Launched with `smem` bytes of dynamic shared memory so that one block fills an SM.
void launch_work(const void* in, void* out, std::size_t n, std::uint64_t mask, long long spin_ns,
                 int blocks, int threads, std::size_t smem, cudaStream_t s);
// Raises the work kernel's dynamic shared-memory limit; returns the bytes to launch it with
// so that only one block fits on an SM (0 if the device cannot be made to do that).
std::size_t prepare_work_kernel(const cudaDeviceProp& prop);

// Counts the bytes of [p, p+n) that differ from `value` (result as for launch_verify): the
// check of a copy whose source was never-touched (all-zero) memory.
void launch_verify_value(const void* p, std::size_t n, unsigned char value, unsigned long long* result,
                         int blocks, cudaStream_t s);

// One thread follows a chain of byte offsets through `base` (each node holds the offset of the
// next) from offset `start` for `hops` dependent loads, each uncached (ld.global.cv, as
// nvbandwidth's latency test), and stores the offset it ends at in *end.
void launch_chase(const void* base, unsigned long long start, long long hops, unsigned long long* end,
                  cudaStream_t s);

// A compute kernel beside a transfer: blocks x threads stream read-modify-write over the
// n_bytes of buf (16-byte elements) until duration_ns has passed since each block started.
void launch_compute(void* buf, std::size_t n_bytes, long long duration_ns, int blocks, int threads, cudaStream_t s);

// Zero-copy access: mode bit 1: dev_out[e] = host_in[e] (the kernel reads host memory);
// bit 2: host_out[e] = dev_in[e] (it writes host memory). Elements of access_bytes (1, 2, 4, 8
// or 16); consecutive threads' accesses are `stride` elements apart (docs/harness.md).
void launch_zero_copy(int access_bytes, const void* host_in, void* dev_out, const void* dev_in,
                      void* host_out, std::size_t n_bytes, std::size_t stride, int mode, int blocks,
                      int threads, cudaStream_t s);

// Stores of GPU memory to mapped host memory (16-byte elements, coalesced), pass after pass over
// n_bytes, until *stop is set (checked after each pass) or max_ns has passed: the SMs' store
// traffic beside a pointer chase (zero_copy stores_beside).
void launch_store_until(const void* dev_in, void* host_out, std::size_t n_bytes, const int* stop,
                        unsigned long long max_ns, int blocks, cudaStream_t s);

// Holds a stream until the host sets flag[0] (mapped pinned memory), so that everything
// enqueued behind it starts together once it is all enqueued (as nvbandwidth does). Gives up
// after timeout_ns and sets flag[1] so that the host can report it instead of hanging.
void launch_gate(int* flag_dev, unsigned long long timeout_ns, cudaStream_t s);

}  // namespace dmaprobe
