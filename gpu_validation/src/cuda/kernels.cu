#include <cstring>

#include "../datagen.h"
#include "cuda_check.h"
#include "kernels.cuh"

namespace dmaprobe {

void throw_cuda_error(cudaError_t e, const char* call, const char* file, int line) {
    const char* base = std::strrchr(file, '/');
    throw CudaError(std::string(base ? base + 1 : file) + ":" + std::to_string(line) + ": " + call +
                    " failed: " + cudaGetErrorName(e) + " (" + cudaGetErrorString(e) + ")");
}

namespace {

constexpr int kThreads = 256;

__device__ __forceinline__ unsigned long long global_timer_ns() {
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}

__global__ void fill_kernel(unsigned char* p, std::size_t n, std::uint64_t seed) {
    const std::size_t words = n / 8;
    auto* w = reinterpret_cast<std::uint64_t*>(p);
    const std::size_t step = static_cast<std::size_t>(gridDim.x) * blockDim.x;
    for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < words; i += step) {
        w[i] = pattern_word(seed, i);
    }
    if (blockIdx.x == 0 && threadIdx.x == 0) {
        for (std::size_t i = words * 8; i < n; ++i) p[i] = pattern_byte(seed, i);
    }
}

__device__ __forceinline__ void report_bad(unsigned long long* result, unsigned long long count,
                                           unsigned long long first) {
    atomicAdd(&result[0], count);
    atomicMin(&result[1], first);
}

__global__ void verify_kernel(const unsigned char* p, std::size_t n, std::uint64_t seed, std::uint64_t mask,
                              unsigned long long* result) {
    const std::size_t words = n / 8;
    const auto* w = reinterpret_cast<const std::uint64_t*>(p);
    const std::size_t step = static_cast<std::size_t>(gridDim.x) * blockDim.x;
    for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < words; i += step) {
        const std::uint64_t diff = w[i] ^ (pattern_word(seed, i) ^ mask);
        if (diff != 0) {
            unsigned bytes = 0;
            unsigned first = 8;
            for (unsigned k = 0; k < 8; ++k) {
                if ((diff >> (8 * k)) & 0xFF) {
                    ++bytes;
                    if (first == 8) first = k;
                }
            }
            report_bad(result, bytes, i * 8 + first);
        }
    }
    if (blockIdx.x == 0 && threadIdx.x == 0) {
        for (std::size_t i = words * 8; i < n; ++i) {
            const auto want = static_cast<unsigned char>(pattern_byte(seed, i) ^ static_cast<unsigned char>(mask >> (8 * (i & 7))));
            if (p[i] != want) report_bad(result, 1, i);
        }
    }
}

__global__ void verify_value_kernel(const unsigned char* p, std::size_t n, unsigned char value,
                                    unsigned long long* result) {
    const std::size_t step = static_cast<std::size_t>(gridDim.x) * blockDim.x;
    unsigned long long bad = 0;
    unsigned long long first = ~0ULL;
    for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += step) {
        if (p[i] != value) {
            ++bad;
            if (first == ~0ULL) first = i;
        }
    }
    if (bad != 0) report_bad(result, bad, first);
}

__global__ void chase_kernel(const unsigned char* base, unsigned long long start, long long hops,
                             unsigned long long* end) {
    unsigned long long off = start;
    for (long long h = 0; h < hops; ++h) {
        off = __ldcv(reinterpret_cast<const unsigned long long*>(base + off));
    }
    *end = off;
}

__global__ void compute_kernel(uint4* buf, std::size_t elems, long long duration_ns) {
    __shared__ unsigned long long until;
    if (threadIdx.x == 0) until = global_timer_ns() + static_cast<unsigned long long>(duration_ns);
    __syncthreads();
    const std::size_t step = static_cast<std::size_t>(gridDim.x) * blockDim.x;
    std::size_t i = (static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x) % elems;
    // Check the clock every few elements so that the kernel stops close to its time.
    for (;;) {
        for (int k = 0; k < 16; ++k) {
            uint4 v = buf[i];
            v.x = v.x * 1664525u + 1013904223u;
            v.y ^= v.x;
            v.z += v.y;
            v.w ^= v.z;
            buf[i] = v;
            i += step;
            if (i >= elems) i %= elems;
        }
        if (global_timer_ns() >= until) break;
    }
}

__global__ void work_kernel(const unsigned char* in, unsigned char* out, std::size_t n, std::uint64_t mask,
                            long long spin_ns) {
    __shared__ unsigned long long block_start;
    if (threadIdx.x == 0) block_start = global_timer_ns();
    __syncthreads();
    const std::size_t words = n / 8;
    const auto* wi = reinterpret_cast<const std::uint64_t*>(in);
    auto* wo = reinterpret_cast<std::uint64_t*>(out);
    const std::size_t step = static_cast<std::size_t>(gridDim.x) * blockDim.x;
    for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < words; i += step) {
        wo[i] = wi[i] ^ mask;
    }
    if (blockIdx.x == 0 && threadIdx.x == 0) {
        for (std::size_t i = words * 8; i < n; ++i) {
            out[i] = static_cast<unsigned char>(in[i] ^ static_cast<unsigned char>(mask >> (8 * (i & 7))));
        }
    }
    if (threadIdx.x == 0 && spin_ns > 0) {
        const auto until = block_start + static_cast<unsigned long long>(spin_ns);
        while (global_timer_ns() < until) {
        }
    }
}

// k: the k-th access in coalesced order (thread-major within an iteration); returns the
// element it touches so that consecutive k are `stride` elements apart and every element is
// touched once: the first q*stride elements are read column by column of a q x stride
// table (q = elems / stride), the remainder in order.
__device__ __forceinline__ std::size_t strided_element(std::size_t k, std::size_t q, std::size_t stride) {
    if (stride == 1 || k >= q * stride) return k;
    return (k % q) * stride + k / q;
}

template <class T>
__global__ void zero_copy_kernel(const T* __restrict__ host_in, T* __restrict__ dev_out, const T* __restrict__ dev_in,
                                 T* __restrict__ host_out, std::size_t elems, std::size_t stride, int mode) {
    const std::size_t step = static_cast<std::size_t>(gridDim.x) * blockDim.x;
    const std::size_t q = elems / stride;
    for (std::size_t k = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; k < elems; k += step) {
        const std::size_t e = strided_element(k, q, stride);
        if (mode & 1) dev_out[e] = host_in[e];
        if (mode & 2) host_out[e] = dev_in[e];
    }
}

__global__ void store_until_kernel(const uint4* __restrict__ dev_in, uint4* __restrict__ host_out, std::size_t elems,
                                   const volatile int* stop, unsigned long long max_ns) {
    const unsigned long long t0 = global_timer_ns();
    const std::size_t step = static_cast<std::size_t>(gridDim.x) * blockDim.x;
    for (;;) {
        for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < elems; i += step) {
            host_out[i] = dev_in[i];
        }
        if (*stop != 0 || global_timer_ns() - t0 > max_ns) return;
    }
}

__global__ void gate_kernel(volatile int* flag, unsigned long long timeout_ns) {
    const unsigned long long t0 = global_timer_ns();
    while (flag[0] == 0) {
        if (global_timer_ns() - t0 > timeout_ns) {
            flag[1] = 1;
            return;
        }
    }
}

int grid_for(std::size_t words, int max_blocks) {
    const std::size_t need = (words + kThreads - 1) / kThreads;
    const std::size_t cap = static_cast<std::size_t>(max_blocks > 0 ? max_blocks : 1);
    return static_cast<int>(need == 0 ? 1 : (need < cap ? need : cap));
}

}  // namespace

void launch_fill(void* p, std::size_t n, std::uint64_t seed, int blocks, cudaStream_t s) {
    fill_kernel<<<grid_for(n / 8, blocks), kThreads, 0, s>>>(static_cast<unsigned char*>(p), n, seed);
    CUDA_CHECK_LAUNCH("fill_kernel");
}

void launch_verify(const void* p, std::size_t n, std::uint64_t seed, std::uint64_t mask,
                   unsigned long long* result, int blocks, cudaStream_t s) {
    verify_kernel<<<grid_for(n / 8, blocks), kThreads, 0, s>>>(static_cast<const unsigned char*>(p), n, seed,
                                                               mask, result);
    CUDA_CHECK_LAUNCH("verify_kernel");
}

std::size_t prepare_work_kernel(const cudaDeviceProp& prop) {
    // The opt-in limit covers static and dynamic shared memory together.
    cudaFuncAttributes attr{};
    CUDA_CHECK(cudaFuncGetAttributes(&attr, work_kernel));
    const std::size_t optin = prop.sharedMemPerBlockOptin;
    const std::size_t dynamic = optin > attr.sharedSizeBytes ? optin - attr.sharedSizeBytes : 0;
    if (attr.sharedSizeBytes + dynamic <= prop.sharedMemPerMultiprocessor / 2 || dynamic == 0) return 0;
    CUDA_CHECK(cudaFuncSetAttribute(work_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                    static_cast<int>(dynamic)));
    return dynamic;
}

void launch_work(const void* in, void* out, std::size_t n, std::uint64_t mask, long long spin_ns, int blocks,
                 int threads, std::size_t smem, cudaStream_t s) {
    work_kernel<<<blocks, threads, smem, s>>>(static_cast<const unsigned char*>(in), static_cast<unsigned char*>(out),
                                              n, mask, spin_ns);
    CUDA_CHECK_LAUNCH("work_kernel");
}

void launch_verify_value(const void* p, std::size_t n, unsigned char value, unsigned long long* result,
                         int blocks, cudaStream_t s) {
    verify_value_kernel<<<grid_for(n, blocks), kThreads, 0, s>>>(static_cast<const unsigned char*>(p), n, value,
                                                                  result);
    CUDA_CHECK_LAUNCH("verify_value_kernel");
}

void launch_chase(const void* base, unsigned long long start, long long hops, unsigned long long* end,
                  cudaStream_t s) {
    chase_kernel<<<1, 1, 0, s>>>(static_cast<const unsigned char*>(base), start, hops, end);
    CUDA_CHECK_LAUNCH("chase_kernel");
}

void launch_compute(void* buf, std::size_t n_bytes, long long duration_ns, int blocks, int threads, cudaStream_t s) {
    compute_kernel<<<blocks, threads, 0, s>>>(static_cast<uint4*>(buf), n_bytes / sizeof(uint4), duration_ns);
    CUDA_CHECK_LAUNCH("compute_kernel");
}

void launch_store_until(const void* dev_in, void* host_out, std::size_t n_bytes, const int* stop,
                        unsigned long long max_ns, int blocks, cudaStream_t s) {
    store_until_kernel<<<blocks, kThreads, 0, s>>>(static_cast<const uint4*>(dev_in), static_cast<uint4*>(host_out),
                                                   n_bytes / sizeof(uint4), stop, max_ns);
    CUDA_CHECK_LAUNCH("store_until_kernel");
}

void launch_gate(int* flag_dev, unsigned long long timeout_ns, cudaStream_t s) {
    gate_kernel<<<1, 1, 0, s>>>(flag_dev, timeout_ns);
    CUDA_CHECK_LAUNCH("gate_kernel");
}

void launch_zero_copy(int access_bytes, const void* host_in, void* dev_out, const void* dev_in, void* host_out,
                      std::size_t n_bytes, std::size_t stride, int mode, int blocks, int threads, cudaStream_t s) {
    switch (access_bytes) {
        case 16:
            zero_copy_kernel<uint4><<<blocks, threads, 0, s>>>(
                static_cast<const uint4*>(host_in), static_cast<uint4*>(dev_out), static_cast<const uint4*>(dev_in),
                static_cast<uint4*>(host_out), n_bytes / 16, stride, mode);
            break;
        case 8:
            zero_copy_kernel<unsigned long long><<<blocks, threads, 0, s>>>(
                static_cast<const unsigned long long*>(host_in), static_cast<unsigned long long*>(dev_out),
                static_cast<const unsigned long long*>(dev_in), static_cast<unsigned long long*>(host_out), n_bytes / 8,
                stride, mode);
            break;
        case 2:
            zero_copy_kernel<unsigned short><<<blocks, threads, 0, s>>>(
                static_cast<const unsigned short*>(host_in), static_cast<unsigned short*>(dev_out),
                static_cast<const unsigned short*>(dev_in), static_cast<unsigned short*>(host_out), n_bytes / 2, stride,
                mode);
            break;
        case 4:
            zero_copy_kernel<unsigned int><<<blocks, threads, 0, s>>>(
                static_cast<const unsigned int*>(host_in), static_cast<unsigned int*>(dev_out),
                static_cast<const unsigned int*>(dev_in), static_cast<unsigned int*>(host_out), n_bytes / 4, stride,
                mode);
            break;
        default:
            zero_copy_kernel<unsigned char><<<blocks, threads, 0, s>>>(
                static_cast<const unsigned char*>(host_in), static_cast<unsigned char*>(dev_out),
                static_cast<const unsigned char*>(dev_in), static_cast<unsigned char*>(host_out), n_bytes, stride,
                mode);
            break;
    }
    CUDA_CHECK_LAUNCH("zero_copy_kernel");
}

}  // namespace dmaprobe
