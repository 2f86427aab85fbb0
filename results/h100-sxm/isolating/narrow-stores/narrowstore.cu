// Why zero-copy stores of 1 byte at stride 1 are 7-15 % slower than 4-byte ones
// (../zero-copy-grid-shape: 344-346 us for 16 MiB from 132 to 528 blocks, 357 at 66, 364 at 1056,
// 377 in 66 blocks of 1024 threads, against 321 for 4-byte stores at every grid; 2-byte 325-336).
// A warp's 1-byte store covers one 32-byte sector, so each 128-byte line gets its four sectors
// from four warps; a 4-byte store covers the line at once. Two explanations predict different
// things:
//  - a rate of sector-sized store requests (the SMs' or the L2's): the time follows the number
//    of requests, whoever sends them and however far apart a line's sectors are sent;
//  - lines leaving for host memory before all their sectors arrived (partial lines on the link,
//    each a PCIe write of its own): the time follows how far apart in time a line's sectors come,
//    and a line written sector by sector by one warp, back to back, goes out whole.
//
// Kernels (each writes every byte of the destination once, host_out[i] = dev_in[i]):
//   full16, full4, b2, b1  dmaprobe's zero-copy store kernel at stride 1 with 16/4/2/1-byte
//                          elements (a warp's store: 512/128/64/32 bytes)
//   w4s8                   4-byte stores from 8 lanes of each warp: one sector a store, the four
//                          sectors of a line from four consecutive warps (b1's layout, 4-byte lanes)
//   b1own                  1-byte stores, each warp writing its line's four sectors in four
//                          stores back to back (one sector a store, one warp a line)
//   b1pass                 1-byte stores in four passes: every warp writes sector 0 of each of its
//                          lines, then sector 1 of each, ... (a line's sectors far apart in time)
// Grids: 33, 66, 132, 264, 1056 blocks of 256 threads and 66 of 1024; 16 MiB, and 64 MiB at 264.
// The source in GPU memory is rewritten by a kernel before each repetition (as dmaprobe does);
// 2 warm-ups and 15 repetitions a cell, event-timed; the destination verified against the source
// after each cell (the source's pattern changes from cell to cell). Every CUDA call checked.
//
// Mode `lag`: b1lag (b1's layout, blocks in step at a barrier each iteration, sector s of a line
// `lag` iterations after sector s - 1; lag 0, 1, 2, 4, 16) beside b1 and full4 at 132, 264 and
// 1056 blocks: do a line's sectors merge when they come a few iterations (microseconds) apart?
// Mode `warps`: full4, b1, b1own, b2 at 132 and 264 blocks of 128-1024 threads, and b1smsp (a line's
// sectors from four warps of one scheduler) at 512 and 1024: the warps a block against the merge.
// Mode `loads`: the same layouts as loads of mapped host memory into GPU memory (l4, l1, l1own,
// l1lag0/1/4) at 66, 264 and 1056 blocks; the host source is written by a GPU kernel once a cell.
// Mode `blocks`: full4, b1, b2 and dmaprobe's own kernel at 1 and 2 bytes (zc1, zc2) with 32 and 64
// warps on each SM in blocks of 256, 512 and 1024 threads: the warps a block or the warps an SM?
// Build: nvcc -O3 -arch=sm_90 narrowstore.cu -o narrowstore
// Run: ./narrowstore [layouts|lag|warps|blocks] > MODE.csv   (layouts: the kernels and grids above)
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

#define CHECK(call)                                                                                      \
    do {                                                                                                 \
        const cudaError_t e_ = (call);                                                                   \
        if (e_ != cudaSuccess) {                                                                         \
            std::fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call, cudaGetErrorString(e_)); \
            std::exit(1);                                                                                \
        }                                                                                                \
    } while (0)

constexpr std::size_t kMiB = std::size_t{1} << 20;
constexpr std::size_t kMax = 64 * kMiB;
constexpr std::size_t kLine = 128;
constexpr std::size_t kSector = 32;
constexpr int kWarp = 32;
constexpr int kWarmups = 2;
constexpr int kReps = 15;

template <class T>
__global__ void stride1(const T* __restrict__ dev_in, T* __restrict__ host_out, std::size_t elems) {
    const std::size_t step = static_cast<std::size_t>(gridDim.x) * blockDim.x;
    for (std::size_t k = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; k < elems; k += step) {
        host_out[k] = dev_in[k];
    }
}

__device__ __forceinline__ std::size_t global_warp() {
    return (static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x) / kWarp;
}

__device__ __forceinline__ std::size_t warps_in_grid() {
    return static_cast<std::size_t>(gridDim.x) * blockDim.x / kWarp;
}

// One sector a store from lanes 0-7 (4 bytes each); sector s by global warp s mod warps.
__global__ void w4s8(const std::uint32_t* __restrict__ dev_in, std::uint32_t* __restrict__ host_out, std::size_t bytes) {
    const unsigned lane = threadIdx.x % kWarp;
    if (lane >= kSector / sizeof(std::uint32_t)) return;
    const std::size_t sectors = bytes / kSector;
    for (std::size_t s = global_warp(); s < sectors; s += warps_in_grid()) {
        const std::size_t e = s * (kSector / sizeof(std::uint32_t)) + lane;
        host_out[e] = dev_in[e];
    }
}

// A warp's line, sector by sector: four 1-byte stores of 32 contiguous bytes, back to back.
__global__ void b1own(const unsigned char* __restrict__ dev_in, unsigned char* __restrict__ host_out, std::size_t bytes) {
    const unsigned lane = threadIdx.x % kWarp;
    const std::size_t lines = bytes / kLine;
    for (std::size_t l = global_warp(); l < lines; l += warps_in_grid()) {
#pragma unroll
        for (std::size_t s = 0; s < kLine / kSector; ++s) {
            const std::size_t e = l * kLine + s * kSector + lane;
            host_out[e] = dev_in[e];
        }
    }
}

// Sector s of every line of the warp, then sector s + 1: a line's sectors a pass apart.
__global__ void b1pass(const unsigned char* __restrict__ dev_in, unsigned char* __restrict__ host_out, std::size_t bytes) {
    const unsigned lane = threadIdx.x % kWarp;
    const std::size_t lines = bytes / kLine;
    for (std::size_t s = 0; s < kLine / kSector; ++s) {
        for (std::size_t l = global_warp(); l < lines; l += warps_in_grid()) {
            const std::size_t e = l * kLine + s * kSector + lane;
            host_out[e] = dev_in[e];
        }
    }
}

// b1's layout from blocks in step: each iteration every warp of the block stores a sector and the
// block waits at a barrier; a line's four sectors come from four warps of one block, sector s
// `lag` iterations after sector s - 1 (lag 0: together, as b1 but in step).
__global__ void b1lag(const unsigned char* __restrict__ dev_in, unsigned char* __restrict__ host_out, std::size_t bytes, int lag) {
    const unsigned lane = threadIdx.x % kWarp;
    const unsigned warp = threadIdx.x / kWarp;
    const std::size_t sectors_a_line = kLine / kSector;
    const std::size_t groups = blockDim.x / kWarp / sectors_a_line;
    const std::size_t group = warp / sectors_a_line;
    const std::size_t s = warp % sectors_a_line;
    const std::size_t lines = bytes / kLine;
    const std::size_t lines_an_iteration = groups * gridDim.x;
    const std::size_t iters = (lines + lines_an_iteration - 1) / lines_an_iteration;
    for (std::size_t i = 0; i < iters + (sectors_a_line - 1) * static_cast<std::size_t>(lag); ++i) {
        const std::size_t back = s * static_cast<std::size_t>(lag);
        if (i >= back && i - back < iters) {
            const std::size_t l = ((i - back) * gridDim.x + blockIdx.x) * groups + group;
            if (l < lines) {
                const std::size_t e = l * kLine + s * kSector + lane;
                host_out[e] = dev_in[e];
            }
        }
        __syncthreads();
    }
}

// b1's sectors a line from four warps of one scheduler (warps w, w + 4, w + 8, w + 12 of a block,
// where b1 has w to w + 3, one on each of the SM's four schedulers); blocks of 16k warps.
__global__ void b1smsp(const unsigned char* __restrict__ dev_in, unsigned char* __restrict__ host_out, std::size_t bytes) {
    const unsigned lane = threadIdx.x % kWarp;
    const unsigned warp = threadIdx.x / kWarp;
    const std::size_t sectors_a_line = kLine / kSector;
    const std::size_t r = warp % 16;
    const std::size_t local = (warp / 16) * 4 + r % 4;
    const std::size_t s = r / 4;
    const std::size_t lines_a_block = blockDim.x / kWarp / sectors_a_line;
    const std::size_t lines = bytes / kLine;
    for (std::size_t it = 0;; ++it) {
        const std::size_t l = (it * gridDim.x + blockIdx.x) * lines_a_block + local;
        if (l >= lines) break;
        const std::size_t e = l * kLine + s * kSector + lane;
        host_out[e] = dev_in[e];
    }
}

// dmaprobe's zero-copy kernel as it is (gpu_validation/src/cuda/kernels.cu: the strided index and
// the mode flags), stores only (mode 2) at stride 1: b1 with dmaprobe's instructions.
__device__ __forceinline__ std::size_t strided_element(std::size_t k, std::size_t q, std::size_t stride) {
    if (stride == 1 || k >= q * stride) return k;
    return (k % q) * stride + k / q;
}

template <class T>
__global__ void dmaprobe_zc(const T* __restrict__ host_in, T* __restrict__ dev_out, const T* __restrict__ dev_in,
                            T* __restrict__ host_out, std::size_t elems, std::size_t stride, int mode) {
    const std::size_t step = static_cast<std::size_t>(gridDim.x) * blockDim.x;
    const std::size_t q = elems / stride;
    for (std::size_t k = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; k < elems; k += step) {
        const std::size_t e = strided_element(k, q, stride);
        if (mode & 1) dev_out[e] = host_in[e];
        if (mode & 2) host_out[e] = dev_in[e];
    }
}

__global__ void fill(std::uint32_t* p, std::size_t words, unsigned seed) {
    const std::size_t step = static_cast<std::size_t>(gridDim.x) * blockDim.x;
    for (std::size_t k = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; k < words; k += step) {
        p[k] = static_cast<unsigned>(k) * 2654435761u ^ seed;
    }
}

struct Grid {
    int blocks;
    int threads;
};

double quantile(std::vector<double> v, double q) {
    std::sort(v.begin(), v.end());
    return v[static_cast<std::size_t>(q * static_cast<double>(v.size() - 1) + 0.5)];
}

// Launches `kernel` over `bytes` from src to dst (stores: GPU memory to host memory; loads, l*: the
// other way).
void launch(const std::string& kernel, const Grid& g, const void* src, void* dst, std::size_t bytes) {
    if (kernel == "full16") {
        stride1<<<g.blocks, g.threads>>>(static_cast<const uint4*>(src), static_cast<uint4*>(dst), bytes / sizeof(uint4));
    } else if (kernel == "full4") {
        stride1<<<g.blocks, g.threads>>>(static_cast<const std::uint32_t*>(src), static_cast<std::uint32_t*>(dst), bytes / 4);
    } else if (kernel == "b2") {
        stride1<<<g.blocks, g.threads>>>(static_cast<const std::uint16_t*>(src), static_cast<std::uint16_t*>(dst), bytes / 2);
    } else if (kernel == "b1") {
        stride1<<<g.blocks, g.threads>>>(static_cast<const unsigned char*>(src), static_cast<unsigned char*>(dst), bytes);
    } else if (kernel == "w4s8") {
        w4s8<<<g.blocks, g.threads>>>(static_cast<const std::uint32_t*>(src), static_cast<std::uint32_t*>(dst), bytes);
    } else if (kernel == "b1own") {
        b1own<<<g.blocks, g.threads>>>(static_cast<const unsigned char*>(src), static_cast<unsigned char*>(dst), bytes);
    } else if (kernel.rfind("b1lag", 0) == 0) {
        b1lag<<<g.blocks, g.threads>>>(static_cast<const unsigned char*>(src), static_cast<unsigned char*>(dst), bytes,
                                       std::atoi(kernel.c_str() + 5));
    } else if (kernel == "b1smsp") {
        b1smsp<<<g.blocks, g.threads>>>(static_cast<const unsigned char*>(src), static_cast<unsigned char*>(dst), bytes);
    } else if (kernel == "zc1") {
        dmaprobe_zc<<<g.blocks, g.threads>>>(static_cast<const unsigned char*>(nullptr), static_cast<unsigned char*>(nullptr),
                                             static_cast<const unsigned char*>(src), static_cast<unsigned char*>(dst), bytes,
                                             std::size_t{1}, 2);
    } else if (kernel == "zc2") {
        dmaprobe_zc<<<g.blocks, g.threads>>>(static_cast<const std::uint16_t*>(nullptr), static_cast<std::uint16_t*>(nullptr),
                                             static_cast<const std::uint16_t*>(src), static_cast<std::uint16_t*>(dst), bytes / 2,
                                             std::size_t{1}, 2);
    } else if (kernel == "l4") {
        // Loads (l*): the store kernels with the host buffer as the source and GPU memory as the
        // destination (the caller swaps them), so a load's layout is its store's.
        stride1<<<g.blocks, g.threads>>>(static_cast<const std::uint32_t*>(src), static_cast<std::uint32_t*>(dst), bytes / 4);
    } else if (kernel == "l1") {
        stride1<<<g.blocks, g.threads>>>(static_cast<const unsigned char*>(src), static_cast<unsigned char*>(dst), bytes);
    } else if (kernel == "l1own") {
        b1own<<<g.blocks, g.threads>>>(static_cast<const unsigned char*>(src), static_cast<unsigned char*>(dst), bytes);
    } else if (kernel.rfind("l1lag", 0) == 0) {
        b1lag<<<g.blocks, g.threads>>>(static_cast<const unsigned char*>(src), static_cast<unsigned char*>(dst), bytes,
                                       std::atoi(kernel.c_str() + 5));
    } else if (kernel == "b1pass") {
        b1pass<<<g.blocks, g.threads>>>(static_cast<const unsigned char*>(src), static_cast<unsigned char*>(dst), bytes);
    } else {
        std::fprintf(stderr, "unknown kernel %s\n", kernel.c_str());
        std::exit(2);
    }
    CHECK(cudaGetLastError());
}

}  // namespace

int main(int argc, char** argv) {
    const std::string mode = argc > 1 ? argv[1] : "layouts";
    if (mode != "layouts" && mode != "lag" && mode != "warps" && mode != "blocks" && mode != "loads") {
        std::fprintf(stderr, "usage: narrowstore [layouts|lag|warps|blocks|loads]\n");
        return 2;
    }
    unsigned char* hbuf = nullptr;
    CHECK(cudaHostAlloc(&hbuf, kMax, cudaHostAllocMapped));
    unsigned char* hdev = nullptr;
    CHECK(cudaHostGetDevicePointer(reinterpret_cast<void**>(&hdev), hbuf, 0));
    unsigned char* dbuf = nullptr;
    CHECK(cudaMalloc(&dbuf, kMax));
    std::vector<unsigned char> want(kMax);
    cudaEvent_t a{}, b{};
    CHECK(cudaEventCreate(&a));
    CHECK(cudaEventCreate(&b));

    const std::vector<std::string> kernels{"full16", "full4", "b2", "b1", "w4s8", "b1own", "b1pass"};
    const std::vector<Grid> grids{{33, 256}, {66, 256}, {132, 256}, {264, 256}, {1056, 256}, {66, 1024}};
    struct Cell {
        std::string kernel;
        Grid grid;
        std::size_t bytes;
    };
    std::vector<Cell> cells;
    if (mode == "layouts") {
        for (const Grid& g : grids) {
            for (const std::string& k : kernels) cells.push_back({k, g, 16 * kMiB});
        }
        for (const std::string& k : kernels) cells.push_back({k, Grid{264, 256}, 64 * kMiB});
    } else if (mode == "lag") {
        for (const Grid& g : {Grid{132, 256}, Grid{264, 256}, Grid{1056, 256}}) {
            cells.push_back({"b1", g, 16 * kMiB});
            cells.push_back({"full4", g, 16 * kMiB});
            for (const int lag : {0, 1, 2, 4, 16}) cells.push_back({"b1lag" + std::to_string(lag), g, 16 * kMiB});
        }
    } else if (mode == "loads") {
        for (const Grid& g : {Grid{66, 256}, Grid{264, 256}, Grid{1056, 256}}) {
            for (const std::string k : {"l4", "l1", "l1own", "l1lag0", "l1lag1", "l1lag4"}) cells.push_back({k, g, 16 * kMiB});
        }
    } else if (mode == "blocks") {
        for (const Grid& g : {Grid{528, 256}, Grid{264, 512}, Grid{132, 1024}, Grid{1056, 256}, Grid{528, 512}, Grid{264, 1024}}) {
            for (const std::string k : {"full4", "b1", "zc1", "b2", "zc2"}) cells.push_back({k, g, 16 * kMiB});
        }
    } else {
        for (const int threads : {128, 256, 512, 1024}) {
            for (const int blocks : {132, 264}) {
                for (const std::string k : {"full4", "b1", "b1own", "b2"}) cells.push_back({k, Grid{blocks, threads}, 16 * kMiB});
                if (threads >= 512) cells.push_back({"b1smsp", Grid{blocks, threads}, 16 * kMiB});
            }
        }
    }

    std::printf("kernel,blocks,threads,size_bytes,median_us,p10_us,p90_us,min_us,reps\n");
    unsigned seed = 11;
    for (const Cell& c : cells) {
        ++seed;
        const std::size_t words = c.bytes / sizeof(std::uint32_t);
        std::vector<double> us;
        const bool loads = c.kernel[0] == 'l';
        if (loads) {
            // The host source written by the GPU, so no CPU cache holds its lines modified.
            fill<<<264, 256>>>(reinterpret_cast<std::uint32_t*>(hdev), words, seed);
            CHECK(cudaGetLastError());
            CHECK(cudaDeviceSynchronize());
        }
        for (int r = 0; r < kWarmups + kReps; ++r) {
            if (!loads) {
                fill<<<264, 256>>>(reinterpret_cast<std::uint32_t*>(dbuf), words, seed);
                CHECK(cudaGetLastError());
            }
            CHECK(cudaEventRecord(a));
            if (loads) {
                launch(c.kernel, c.grid, hdev, dbuf, c.bytes);
            } else {
                launch(c.kernel, c.grid, dbuf, hdev, c.bytes);
            }
            CHECK(cudaEventRecord(b));
            CHECK(cudaDeviceSynchronize());
            float ms = 0;
            CHECK(cudaEventElapsedTime(&ms, a, b));
            if (r >= kWarmups) us.push_back(1000.0 * ms);
        }
        CHECK(cudaMemcpy(want.data(), dbuf, c.bytes, cudaMemcpyDeviceToHost));
        if (std::memcmp(want.data(), hbuf, c.bytes) != 0) {
            std::fprintf(stderr, "%s at %d x %d, %zu bytes: host memory differs from the source\n", c.kernel.c_str(),
                         c.grid.blocks, c.grid.threads, c.bytes);
            return 1;
        }
        std::printf("%s,%d,%d,%zu,%.2f,%.2f,%.2f,%.2f,%d\n", c.kernel.c_str(), c.grid.blocks, c.grid.threads, c.bytes,
                    quantile(us, 0.5), quantile(us, 0.1), quantile(us, 0.9), quantile(us, 0.0), kReps);
        std::fflush(stdout);
    }
    CHECK(cudaEventDestroy(a));
    CHECK(cudaEventDestroy(b));
    CHECK(cudaFree(dbuf));
    CHECK(cudaFreeHost(hbuf));
    return 0;
}
