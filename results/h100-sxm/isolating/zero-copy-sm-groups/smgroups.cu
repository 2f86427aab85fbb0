// Which SMs a few blocks of zero-copy loads run on, and does it set their rate? dmaprobe's zero-copy
// loads of host memory (zero_copy_kernel, 256 threads a block, 16 bytes a thread) reach 3.0 / 11.7 /
// 22.4 / 41 / 50 GB/s at 1 / 4 / 8 / 16 / 32 blocks on the H100 (results/h100-sxm/measured, zc-grid-*):
// linear in the lines the warps keep in flight up to 4 blocks, then 4 % and 11 % below it at 8 and 16
// blocks, where the link (50 GB/s) is not yet full. If the blocks of a small grid share a group of SMs
// (a GPC, its crossbar port) whose way to the host carries less than the link, where they run sets
// their rate.
//
// Cells, each moving 16 MiB of pinned mapped host memory into GPU memory with dmaprobe's loop body:
//   plain:B     B blocks of 256 threads, launched as dmaprobe does (B = 4, 8, 16, 32); `where` records
//               which SM each block ran on
//   ids:A-Z     one block of 256 threads on each SM whose id is in A..Z (16 or 8 or 32 SMs), placed by
//               launching one block per SM, each holding so much shared memory that no SM takes two,
//               and letting the blocks on other SMs return at once; the rest split the data
//   stride:S+O  the same on SMs O, O+S, O+2S, ... (as many as the ids cell beside it)
// 3 warm-ups, then ITERATIONS (default 20) repetitions of every cell in turn, timed with events;
// medians. The copied data are checked once.
//
// With `curve` as the second argument, how the loads' rate and a load's round trip grow with the
// loads in flight: plain:B for B = 1..32 blocks of 256 threads (32 lines of 128 bytes in flight a
// block), each beside a probe, one thread on another stream chasing pointers through 16 MiB of
// pinned mapped host memory (each load's address in the word the one before read, lines in a random
// cycle), whose round trip a hop it times itself (globaltimer) while the loads run; and the probe
// alone. The loads move 64 MiB here, so that the probe's 400 hops fall inside them. Then throttle:D
// cells (8, 16 and 32 blocks, each warp spinning D ns after each load; 16 MiB): as many lines in
// flight as the plain grid of as many blocks while they load, at a lower rate; and store:B cells (1-4
// blocks storing GPU memory into host memory, 16 MiB): writes at a rate, no reads in flight.
//
// Usage: smgroups [ITERATIONS [curve]]        Build: nvcc -O3 -arch=sm_90 smgroups.cu -o smgroups
// Output (stdout): `where B: ids...` lines, then CSV: cell,sms,gbps,p10_gbps,p90_gbps,reps (with
// `curve`: cell,blocks,gbps,p10_gbps,p90_gbps,hop_us,hop_p10_us,hop_p90_us,reps)
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
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

constexpr int kWarmup = 3;
constexpr int kThreads = 256;
constexpr std::size_t kBytes = std::size_t{16} << 20;
constexpr std::size_t kElems = kBytes / sizeof(uint4);

__device__ unsigned smid() {
    unsigned id = 0;
    asm volatile("mov.u32 %0, %%smid;" : "=r"(id));
    return id;
}

__global__ void where(unsigned* sm_of_block) {
    if (threadIdx.x == 0) sm_of_block[blockIdx.x] = smid();
}

// dmaprobe's zero_copy_kernel with stride 1, mode 1 (host in, GPU memory out).
__global__ void plain_load(const uint4* __restrict__ host_in, uint4* __restrict__ dev_out, std::size_t elems) {
    const std::size_t step = static_cast<std::size_t>(gridDim.x) * blockDim.x;
    for (std::size_t k = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; k < elems; k += step) {
        dev_out[k] = host_in[k];
    }
}

// The same loop on the blocks whose SM is wanted, ranked as they arrive; the others return.
__global__ void placed_load(const uint4* __restrict__ host_in, uint4* __restrict__ dev_out, std::size_t elems,
                            const unsigned char* want, unsigned active, unsigned* arrived) {
    extern __shared__ unsigned char hold[];  // only its size matters: one block an SM
    __shared__ unsigned rank;
    if (!want[smid()]) return;
    if (threadIdx.x == 0) {
        rank = atomicAdd(arrived, 1u);
        hold[0] = 0;
    }
    __syncthreads();
    const std::size_t step = static_cast<std::size_t>(active) * blockDim.x;
    for (std::size_t k = static_cast<std::size_t>(rank) * blockDim.x + threadIdx.x; k < elems; k += step) {
        dev_out[k] = host_in[k];
    }
}

// curve, throttle:B:D: the plain loop, each warp spinning D ns after each load before the next, so
// that as many lines are in flight at a time as in plain:B but their rate is lower.
__global__ void throttled_load(const uint4* __restrict__ host_in, uint4* __restrict__ dev_out, std::size_t elems,
                               long long spin_ns) {
    const std::size_t step = static_cast<std::size_t>(gridDim.x) * blockDim.x;
    for (std::size_t k = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; k < elems; k += step) {
        dev_out[k] = host_in[k];
        long long t0 = 0, t = 0;
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
        do {
            asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
        } while (t - t0 < spin_ns);
    }
}

// curve, store:B: B blocks of 256 threads storing GPU memory into host memory, 16 bytes a thread
// (dmaprobe's zero_copy_kernel in mode 2): posted writes, no reads in flight.
__global__ void plain_store(const uint4* __restrict__ dev_in, uint4* __restrict__ host_out, std::size_t elems) {
    const std::size_t step = static_cast<std::size_t>(gridDim.x) * blockDim.x;
    for (std::size_t k = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; k < elems; k += step) {
        host_out[k] = dev_in[k];
    }
}

// curve: the probe. One thread follows `hops` links of a cycle through host memory and writes the
// nanoseconds a hop took, from its first load to its last.
__global__ void chase(const unsigned* __restrict__ cycle, int hops, double* ns_a_hop, unsigned* sink) {
    unsigned at = 0;
    long long t0 = 0, t1 = 0;
    at = *reinterpret_cast<const volatile unsigned*>(cycle + at);
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
    for (int k = 0; k < hops; ++k) at = *reinterpret_cast<const volatile unsigned*>(cycle + at);
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t1));
    *ns_a_hop = static_cast<double>(t1 - t0) / hops;
    if (at == 0xffffffffu) *sink = at;
}

double quantile(std::vector<double> v, double q) {
    std::sort(v.begin(), v.end());
    return v[static_cast<std::size_t>(q * static_cast<double>(v.size() - 1) + 0.5)];
}

struct Cell {
    std::string name;
    int blocks = 0;                   // plain: the grid; 0: placed
    std::vector<unsigned char> want;  // placed: per SM
    unsigned active = 0;
    std::vector<double> gbps;
};

constexpr std::size_t kCurveBytes = std::size_t{64} << 20;
constexpr std::size_t kCycleBytes = std::size_t{16} << 20;
constexpr int kHops = 400;

int run_curve(int iterations) {
    uint4* host = nullptr;
    uint4* host_dev = nullptr;
    uint4* dev = nullptr;
    unsigned* cycle = nullptr;
    unsigned* cycle_dev = nullptr;
    double* hop = nullptr;
    unsigned* sink = nullptr;
    CHECK(cudaHostAlloc(&host, kCurveBytes, cudaHostAllocMapped));
    CHECK(cudaHostGetDevicePointer(reinterpret_cast<void**>(&host_dev), host, 0));
    CHECK(cudaHostAlloc(&cycle, kCycleBytes, cudaHostAllocMapped));
    CHECK(cudaHostGetDevicePointer(reinterpret_cast<void**>(&cycle_dev), cycle, 0));
    CHECK(cudaMalloc(&dev, kCurveBytes));
    CHECK(cudaMalloc(&hop, sizeof(double)));
    CHECK(cudaMalloc(&sink, sizeof(unsigned)));
    auto* words = reinterpret_cast<unsigned*>(host);
    for (std::size_t i = 0; i < kCurveBytes / sizeof(unsigned); ++i) words[i] = static_cast<unsigned>(i * 2654435761u) | 1u;
    // One word a 128-byte line, the lines in one random cycle (a fixed seed).
    const std::size_t lines = kCycleBytes / 128;
    std::vector<std::size_t> order(lines);
    for (std::size_t i = 0; i < lines; ++i) order[i] = i;
    unsigned long long x = 88172645463325252ull;
    for (std::size_t i = lines - 1; i > 0; --i) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        std::swap(order[i], order[x % (i + 1)]);
    }
    for (std::size_t i = 0; i < lines; ++i) cycle[order[i] * 32] = static_cast<unsigned>(order[(i + 1) % lines] * 32);
    cudaStream_t loads = nullptr, probe = nullptr;
    CHECK(cudaStreamCreateWithFlags(&loads, cudaStreamNonBlocking));
    CHECK(cudaStreamCreateWithFlags(&probe, cudaStreamNonBlocking));
    cudaEvent_t a = nullptr, b = nullptr;
    CHECK(cudaEventCreate(&a));
    CHECK(cudaEventCreate(&b));
    const std::vector<int> grids = {0, 1, 2, 3, 4, 5, 6, 8, 10, 12, 14, 16, 18, 20, 24, 28, 32};  // 0: the probe alone
    // throttle:B:D cells after the plain ones: {blocks, spin ns}.
    const std::vector<std::pair<int, long long>> throttled = {{16, 700}, {16, 2000}, {16, 5000}, {32, 1500},
                                                              {32, 4000}, {32, 10000}, {8, 2000}};
    const std::vector<int> stores = {1, 2, 3, 4};  // store:B cells after those
    const std::size_t cells = grids.size() + throttled.size() + stores.size();
    uint4* store_host = nullptr;
    uint4* store_host_dev = nullptr;
    CHECK(cudaHostAlloc(&store_host, kCurveBytes / 4, cudaHostAllocMapped));
    CHECK(cudaHostGetDevicePointer(reinterpret_cast<void**>(&store_host_dev), store_host, 0));
    std::vector<std::vector<double>> gbps(cells), hops(cells);
    for (int it = 0; it < kWarmup + iterations; ++it) {
        for (std::size_t g = 0; g < cells; ++g) {
            const bool plain = g < grids.size();
            const bool store = g >= grids.size() + throttled.size();
            const int blocks = plain ? grids[g] : store ? stores[g - grids.size() - throttled.size()] : throttled[g - grids.size()].first;
            // A throttled or store cell moves a quarter of the data: it runs 2-10 times longer a byte.
            const std::size_t bytes = plain ? kCurveBytes : kCurveBytes / 4;
            CHECK(cudaEventRecord(a, loads));
            if (store) {
                plain_store<<<blocks, kThreads, 0, loads>>>(dev, store_host_dev, bytes / sizeof(uint4));
                CHECK(cudaGetLastError());
            } else if (!plain) {
                throttled_load<<<blocks, kThreads, 0, loads>>>(host_dev, dev, bytes / sizeof(uint4),
                                                               throttled[g - grids.size()].second);
                CHECK(cudaGetLastError());
            } else if (blocks > 0) {
                plain_load<<<blocks, kThreads, 0, loads>>>(host_dev, dev, kCurveBytes / sizeof(uint4));
                CHECK(cudaGetLastError());
            }
            CHECK(cudaEventRecord(b, loads));
            chase<<<1, 1, 0, probe>>>(cycle_dev, kHops, hop, sink);
            CHECK(cudaGetLastError());
            CHECK(cudaDeviceSynchronize());
            float ms = 0;
            CHECK(cudaEventElapsedTime(&ms, a, b));
            double h = 0;
            CHECK(cudaMemcpy(&h, hop, sizeof(double), cudaMemcpyDeviceToHost));
            if (it < kWarmup) continue;
            gbps[g].push_back(blocks > 0 ? static_cast<double>(bytes) / (1e6 * ms) : 0.0);
            hops[g].push_back(h / 1000.0);
        }
    }
    std::vector<unsigned> got(kCurveBytes / sizeof(unsigned));
    CHECK(cudaMemcpy(got.data(), dev, kCurveBytes, cudaMemcpyDeviceToHost));
    for (std::size_t i = 0; i < got.size(); ++i) {
        if (got[i] != words[i]) {
            std::fprintf(stderr, "smgroups: curve copied wrong data at word %zu\n", i);
            return 1;
        }
    }
    std::printf("cell,blocks,gbps,p10_gbps,p90_gbps,hop_us,hop_p10_us,hop_p90_us,reps\n");
    for (std::size_t g = 0; g < cells; ++g) {
        const bool plain = g < grids.size();
        const bool store = g >= grids.size() + throttled.size();
        const std::string name = plain ? (grids[g] ? "plain" : "probe-alone")
                                 : store ? "store"
                                         : "throttle:" + std::to_string(throttled[g - grids.size()].second);
        const int blocks = plain ? grids[g] : store ? stores[g - grids.size() - throttled.size()] : throttled[g - grids.size()].first;
        std::printf("%s,%d,%.3f,%.3f,%.3f,%.4f,%.4f,%.4f,%zu\n", name.c_str(), blocks,
                    quantile(gbps[g], 0.5), quantile(gbps[g], 0.1), quantile(gbps[g], 0.9), quantile(hops[g], 0.5),
                    quantile(hops[g], 0.1), quantile(hops[g], 0.9), gbps[g].size());
    }
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    const int iterations = argc > 1 ? std::atoi(argv[1]) : 20;
    const bool curve = argc > 2 && std::string(argv[2]) == "curve";
    if (iterations < 5 || (argc > 2 && !curve) || argc > 3) {
        std::fprintf(stderr, "usage: smgroups [ITERATIONS >= 5 [curve]]\n");
        return 2;
    }
    if (curve) return run_curve(iterations);
    CHECK(cudaSetDevice(0));
    cudaDeviceProp prop{};
    CHECK(cudaGetDeviceProperties(&prop, 0));
    const int sms = prop.multiProcessorCount;
    // More than half an SM's shared memory: no SM runs two of these blocks.
    const int hold = static_cast<int>(prop.sharedMemPerMultiprocessor / 2 + 1024);
    if (hold > static_cast<int>(prop.sharedMemPerBlockOptin)) {
        std::fprintf(stderr, "smgroups: a block cannot hold %d bytes of shared memory here\n", hold);
        return 1;
    }
    CHECK(cudaFuncSetAttribute(placed_load, cudaFuncAttributeMaxDynamicSharedMemorySize, hold));

    uint4* host = nullptr;
    uint4* host_dev = nullptr;
    uint4* dev = nullptr;
    unsigned* sm_of_block = nullptr;
    unsigned* arrived = nullptr;
    unsigned char* want_dev = nullptr;
    CHECK(cudaHostAlloc(&host, kBytes, cudaHostAllocMapped));
    CHECK(cudaHostGetDevicePointer(reinterpret_cast<void**>(&host_dev), host, 0));
    CHECK(cudaMalloc(&dev, kBytes));
    CHECK(cudaMalloc(&sm_of_block, 1024 * sizeof(unsigned)));
    CHECK(cudaMalloc(&arrived, sizeof(unsigned)));
    CHECK(cudaMalloc(&want_dev, static_cast<std::size_t>(sms)));
    auto* words = reinterpret_cast<unsigned*>(host);
    for (std::size_t i = 0; i < kBytes / sizeof(unsigned); ++i) words[i] = static_cast<unsigned>(i * 2654435761u) | 1u;

    // Where plain grids run.
    for (const int b : {4, 8, 16, 32}) {
        where<<<b, kThreads>>>(sm_of_block);
        CHECK(cudaGetLastError());
        std::vector<unsigned> ids(static_cast<std::size_t>(b));
        CHECK(cudaMemcpy(ids.data(), sm_of_block, ids.size() * sizeof(unsigned), cudaMemcpyDeviceToHost));
        std::printf("where %d:", b);
        for (const unsigned id : ids) std::printf(" %u", id);
        std::printf("\n");
    }

    std::vector<Cell> cells;
    for (const int b : {4, 8, 16, 32}) cells.push_back({"plain:" + std::to_string(b), b, {}, 0, {}});
    const auto placed = [&](const std::string& name, const std::vector<int>& ids) {
        Cell c{name, 0, std::vector<unsigned char>(static_cast<std::size_t>(sms), 0), 0, {}};
        for (const int id : ids) {
            if (id < sms && !c.want[static_cast<std::size_t>(id)]) {
                c.want[static_cast<std::size_t>(id)] = 1;
                ++c.active;
            }
        }
        cells.push_back(c);
    };
    const auto range = [](int from, int count, int stride) {
        std::vector<int> v;
        for (int k = 0; k < count; ++k) v.push_back(from + k * stride);
        return v;
    };
    for (const int n : {8, 16, 32}) {
        for (const int from : {0, sms / 2, sms - n}) {
            placed("ids:" + std::to_string(from) + "-" + std::to_string(from + n - 1), range(from, n, 1));
        }
        const int stride = sms / n;
        for (const int off : {0, 1}) {
            placed("stride:" + std::to_string(stride) + "+" + std::to_string(off), range(off, n, stride));
        }
    }

    cudaEvent_t a = nullptr, b = nullptr;
    CHECK(cudaEventCreate(&a));
    CHECK(cudaEventCreate(&b));
    const auto run = [&](const Cell& c) {
        if (c.blocks == 0) {
            CHECK(cudaMemcpy(want_dev, c.want.data(), c.want.size(), cudaMemcpyHostToDevice));
            CHECK(cudaMemset(arrived, 0, sizeof(unsigned)));
        }
        CHECK(cudaMemset(dev, 0, kBytes));
        CHECK(cudaEventRecord(a));
        if (c.blocks > 0) {
            plain_load<<<c.blocks, kThreads>>>(host_dev, dev, kElems);
        } else {
            placed_load<<<sms, kThreads, hold>>>(host_dev, dev, kElems, want_dev, c.active, arrived);
        }
        CHECK(cudaGetLastError());
        CHECK(cudaEventRecord(b));
        CHECK(cudaEventSynchronize(b));
        float ms = 0;
        CHECK(cudaEventElapsedTime(&ms, a, b));
        return static_cast<double>(kBytes) / (1e6 * ms);
    };
    std::vector<unsigned> got(kBytes / sizeof(unsigned));
    for (int it = 0; it < kWarmup + iterations; ++it) {
        for (Cell& c : cells) {
            const double gbps = run(c);
            if (it >= kWarmup) c.gbps.push_back(gbps);
            if (it == 0) {
                // Every cell moves all of the data.
                CHECK(cudaMemcpy(got.data(), dev, kBytes, cudaMemcpyDeviceToHost));
                for (std::size_t i = 0; i < got.size(); ++i) {
                    if (got[i] != words[i]) {
                        std::fprintf(stderr, "smgroups: %s copied wrong data at word %zu\n", c.name.c_str(), i);
                        return 1;
                    }
                }
            }
        }
    }
    std::printf("cell,sms,gbps,p10_gbps,p90_gbps,reps\n");
    for (const Cell& c : cells) {
        std::printf("%s,%u,%.3f,%.3f,%.3f,%zu\n", c.name.c_str(), c.blocks > 0 ? static_cast<unsigned>(c.blocks) : c.active,
                    quantile(c.gbps, 0.5), quantile(c.gbps, 0.1), quantile(c.gbps, 0.9), c.gbps.size());
    }
    return 0;
}
