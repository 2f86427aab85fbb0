// Why one block of zero-copy stores slows past 16 MiB (../host-cache-and-store-size: 18.3 GB/s up
// to 16 MiB, 14.4 at 32, 10.4 at 64, 9.8 from 128 MiB on, H100; loads do not slow): each thread of
// dmaprobe's store kernel loads its word from GPU memory and stores it to mapped host memory, so
// a round of the block waits for a load of GPU memory. Is that load an L2 hit while the source
// still sits in the L2 from the repetition before, and a trip to HBM once it does not?
//
// Modes (all on GPU 0; 3 warm-ups and 10 repetitions a cell unless said; medians):
//  chase  one thread's dependent 8-byte loads through device buffers of 4 KiB to 1 GiB (one
//         pointer per 128-byte line, a random single cycle, 20000 hops after a pass that warms
//         it), timed by %globaltimer in the kernel: ns a hop, the L2 hit and the HBM trip.
//  stores dmaprobe's store kernel (host_out[i] = dev_in[i], uint4, one block of 256 threads)
//         over 4 MiB to 256 MiB, event-timed: `warm` as dmaprobe runs it (the source written by
//         a kernel before the first repetition only, so each repetition finds what the one before
//         left in the L2), `evicted` with 512 MiB of other GPU memory streamed through between
//         repetitions (the source in HBM only), and `filled` with the source rewritten by a
//         kernel before each repetition (dmaprobe's fill before a case). GB/s.
//  loads  the same for one block of loads (dev_out[i] = host_in[i]): warm and evicted.
//  start  dmaprobe's store kernel as the SMs' traffic (16, 66, 264 and 1056 blocks over 256 MiB, its
//         source left in the L2 as far as it goes), started 20 us before a gate on a second stream
//         opens; behind the gate one thread's __threadfence_system() (timed inside, `fence`), an
//         empty kernel and a 4 KiB copy into the GPU (event-timed): how long work that starts
//         beside the model's own kind of store grid waits, against what a fence waits
//         (../reads-behind-writes, `startwhy`, did this beside a store loop that never waits).
//
// Every CUDA call checked; the stored and loaded data verified per cell.
// Build: nvcc -O3 -arch=sm_90 storesrc.cu -o storesrc    Run: ./storesrc chase; ./storesrc stores; ./storesrc loads; ./storesrc start
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <numeric>
#include <random>
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
constexpr std::size_t kMax = 256 * kMiB;
constexpr std::size_t kEvict = 512 * kMiB;
constexpr std::size_t kLine = 128;
constexpr int kHops = 20000;

__device__ __forceinline__ std::uint64_t globaltimer() {
    std::uint64_t t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}

__global__ void chase(const std::uint64_t* head, int hops, std::uint64_t* out) {
    const std::uint64_t* p = head;
    for (int i = 0; i < hops; ++i) p = reinterpret_cast<const std::uint64_t*>(*reinterpret_cast<const volatile std::uint64_t*>(p));
    const std::uint64_t t0 = globaltimer();
    for (int i = 0; i < hops; ++i) p = reinterpret_cast<const std::uint64_t*>(*reinterpret_cast<const volatile std::uint64_t*>(p));
    out[0] = globaltimer() - t0;
    out[1] = reinterpret_cast<std::uint64_t>(p);
}

// dmaprobe's zero-copy kernel, stores (mode 2) and loads (mode 1), stride 1.
__global__ void zc(const uint4* __restrict__ host_in, uint4* __restrict__ dev_out, const uint4* __restrict__ dev_in,
                   uint4* __restrict__ host_out, std::size_t elems, int mode) {
    const std::size_t step = static_cast<std::size_t>(gridDim.x) * blockDim.x;
    for (std::size_t k = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; k < elems; k += step) {
        if (mode & 1) dev_out[k] = host_in[k];
        if (mode & 2) host_out[k] = dev_in[k];
    }
}

__global__ void spin(std::uint64_t ns) {
    const std::uint64_t t0 = globaltimer();
    while (globaltimer() - t0 < ns) {
    }
}

__global__ void fence_time(std::uint64_t* out) {
    const std::uint64_t t0 = globaltimer();
    __threadfence_system();
    out[0] = globaltimer() - t0;
}

__global__ void empty_kernel() {}

__global__ void fill(uint4* p, std::size_t elems, unsigned seed) {
    const std::size_t step = static_cast<std::size_t>(gridDim.x) * blockDim.x;
    for (std::size_t k = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; k < elems; k += step) {
        const auto v = static_cast<unsigned>(k) * 2654435761u ^ seed;
        p[k] = make_uint4(v, v + 1, v + 2, v + 3);
    }
}

__global__ void touch(uint4* p, std::size_t elems) {
    const std::size_t step = static_cast<std::size_t>(gridDim.x) * blockDim.x;
    for (std::size_t k = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; k < elems; k += step) {
        uint4 v = p[k];
        v.w += 1u;
        p[k] = v;
    }
}

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

void chase_mode() {
    std::printf("mode,case,size_bytes,value,unit\n");
    for (const std::size_t bytes : {std::size_t{4096}, 1 * kMiB, 8 * kMiB, 16 * kMiB, 24 * kMiB, 32 * kMiB, 48 * kMiB, 64 * kMiB,
                                    96 * kMiB, 128 * kMiB, 256 * kMiB, 1024 * kMiB}) {
        const std::size_t lines = bytes / kLine;
        std::vector<std::uint64_t> host(bytes / sizeof(std::uint64_t), 0);
        std::uint64_t* dev = nullptr;
        CHECK(cudaMalloc(&dev, bytes));
        std::vector<std::size_t> order(lines);
        std::iota(order.begin(), order.end(), std::size_t{0});
        std::mt19937_64 rng(7);
        std::shuffle(order.begin() + 1, order.end(), rng);
        const auto base = reinterpret_cast<std::uint64_t>(dev);
        for (std::size_t i = 0; i < lines; ++i) {
            host[order[i] * (kLine / 8)] = base + order[(i + 1) % lines] * kLine;
        }
        CHECK(cudaMemcpy(dev, host.data(), bytes, cudaMemcpyHostToDevice));
        std::uint64_t* out = nullptr;
        CHECK(cudaMalloc(&out, 2 * sizeof(std::uint64_t)));
        std::vector<double> ns;
        for (int r = 0; r < 3 + 10; ++r) {
            chase<<<1, 1>>>(dev, kHops, out);
            CHECK(cudaGetLastError());
            CHECK(cudaDeviceSynchronize());
            std::uint64_t got[2];
            CHECK(cudaMemcpy(got, out, sizeof got, cudaMemcpyDeviceToHost));
            if (r >= 3) ns.push_back(static_cast<double>(got[0]) / kHops);
        }
        std::printf("chase,device,%zu,%.2f,ns a hop\n", bytes, median(ns));
        std::fflush(stdout);
        CHECK(cudaFree(out));
        CHECK(cudaFree(dev));
    }
}

void zc_mode(bool stores) {
    std::printf("mode,case,size_bytes,value,unit\n");
    uint4* hbuf = nullptr;
    CHECK(cudaHostAlloc(&hbuf, kMax, cudaHostAllocMapped));
    uint4* hdev = nullptr;
    CHECK(cudaHostGetDevicePointer(reinterpret_cast<void**>(&hdev), hbuf, 0));
    uint4* dbuf = nullptr;
    CHECK(cudaMalloc(&dbuf, kMax));
    uint4* evict = nullptr;
    CHECK(cudaMalloc(&evict, kEvict));
    CHECK(cudaMemset(evict, 1, kEvict));
    cudaEvent_t a{}, b{};
    CHECK(cudaEventCreate(&a));
    CHECK(cudaEventCreate(&b));
    const std::vector<std::string> cases = stores ? std::vector<std::string>{"warm", "evicted", "filled"} : std::vector<std::string>{"warm", "evicted"};
    unsigned seed = 1;
    for (const std::size_t bytes : {4 * kMiB, 8 * kMiB, 16 * kMiB, 24 * kMiB, 32 * kMiB, 40 * kMiB, 48 * kMiB, 56 * kMiB, 64 * kMiB,
                                    96 * kMiB, 128 * kMiB, 256 * kMiB}) {
        const std::size_t elems = bytes / sizeof(uint4);
        for (const std::string& c : cases) {
            ++seed;
            // The source: device memory for stores (a kernel writes it), host memory for loads.
            if (stores) {
                fill<<<264, 256>>>(dbuf, elems, seed);
                CHECK(cudaGetLastError());
            } else {
                for (std::size_t k = 0; k < elems; ++k) {
                    const auto v = static_cast<unsigned>(k) * 2654435761u ^ seed;
                    hbuf[k] = make_uint4(v, v + 1, v + 2, v + 3);
                }
            }
            CHECK(cudaDeviceSynchronize());
            std::vector<double> gbps;
            for (int r = 0; r < 3 + 10; ++r) {
                if (c == "evicted") {
                    touch<<<264, 256>>>(evict, kEvict / sizeof(uint4));
                    CHECK(cudaGetLastError());
                }
                if (c == "filled") {
                    fill<<<264, 256>>>(dbuf, elems, seed);
                    CHECK(cudaGetLastError());
                }
                CHECK(cudaEventRecord(a));
                if (stores) {
                    zc<<<1, 256>>>(nullptr, nullptr, dbuf, hdev, elems, 2);
                } else {
                    zc<<<1, 256>>>(hdev, dbuf, nullptr, nullptr, elems, 1);
                }
                CHECK(cudaGetLastError());
                CHECK(cudaEventRecord(b));
                CHECK(cudaDeviceSynchronize());
                float ms = 0;
                CHECK(cudaEventElapsedTime(&ms, a, b));
                if (r >= 3) gbps.push_back(static_cast<double>(bytes) / (ms * 1e6));
            }
            // Verify: what landed is the source.
            std::vector<uint4> got(elems);
            if (stores) {
                CHECK(cudaMemcpy(got.data(), dbuf, bytes, cudaMemcpyDeviceToHost));
                if (std::memcmp(got.data(), hbuf, bytes) != 0) {
                    std::fprintf(stderr, "stores of %zu bytes: host memory differs from the source\n", bytes);
                    std::exit(1);
                }
            } else {
                CHECK(cudaMemcpy(got.data(), dbuf, bytes, cudaMemcpyDeviceToHost));
                if (std::memcmp(got.data(), hbuf, bytes) != 0) {
                    std::fprintf(stderr, "loads of %zu bytes: GPU memory differs from the source\n", bytes);
                    std::exit(1);
                }
            }
            std::printf("%s,%s,%zu,%.3f,GB/s\n", stores ? "stores" : "loads", c.c_str(), bytes, median(gbps));
            std::fflush(stdout);
        }
    }
    CHECK(cudaEventDestroy(a));
    CHECK(cudaEventDestroy(b));
    CHECK(cudaFree(evict));
    CHECK(cudaFree(dbuf));
    CHECK(cudaFreeHost(hbuf));
}

void start_mode() {
    std::printf("mode,case,size_bytes,value,unit\n");
    constexpr std::size_t kBytes = 256 * kMiB;
    constexpr std::uint64_t kGateNs = 300000, kHeadNs = 20000;
    uint4* hbuf = nullptr;
    CHECK(cudaHostAlloc(&hbuf, kBytes, cudaHostAllocMapped));
    uint4* hdev = nullptr;
    CHECK(cudaHostGetDevicePointer(reinterpret_cast<void**>(&hdev), hbuf, 0));
    uint4* dbuf = nullptr;
    CHECK(cudaMalloc(&dbuf, kBytes));
    fill<<<264, 256>>>(dbuf, kBytes / sizeof(uint4), 99u);
    CHECK(cudaGetLastError());
    unsigned char* hsmall = nullptr;
    unsigned char* dsmall = nullptr;
    constexpr std::size_t y = 4096;
    CHECK(cudaMallocHost(&hsmall, y));
    CHECK(cudaMalloc(&dsmall, y));
    for (std::size_t i = 0; i < y; ++i) hsmall[i] = static_cast<unsigned char>(i * 13u + 5u);
    std::uint64_t* dfence = nullptr;
    CHECK(cudaMalloc(&dfence, sizeof(std::uint64_t)));
    cudaStream_t s1{}, s2{};
    CHECK(cudaStreamCreateWithFlags(&s1, cudaStreamNonBlocking));
    CHECK(cudaStreamCreateWithFlags(&s2, cudaStreamNonBlocking));
    cudaEvent_t a{}, b{};
    CHECK(cudaEventCreate(&a));
    CHECK(cudaEventCreate(&b));
    for (const int blocks : {0, 16, 66, 264, 1056}) {
        for (const std::string what : {"fence", "empty-kernel", "h2d"}) {
            std::vector<double> us;
            for (int r = 0; r < 3 + 10; ++r) {
                CHECK(cudaDeviceSynchronize());
                CHECK(cudaMemset(dsmall, 0, y));
                spin<<<1, 1, 0, s1>>>(kGateNs - kHeadNs);
                CHECK(cudaGetLastError());
                spin<<<1, 1, 0, s2>>>(kGateNs);
                CHECK(cudaGetLastError());
                if (blocks > 0) {
                    zc<<<blocks, 256, 0, s1>>>(nullptr, nullptr, dbuf, hdev, kBytes / sizeof(uint4), 2);
                    CHECK(cudaGetLastError());
                }
                CHECK(cudaEventRecord(a, s2));
                if (what == "fence") {
                    fence_time<<<1, 1, 0, s2>>>(dfence);
                } else if (what == "empty-kernel") {
                    empty_kernel<<<1, 1, 0, s2>>>();
                } else {
                    CHECK(cudaMemcpyAsync(dsmall, hsmall, y, cudaMemcpyHostToDevice, s2));
                }
                CHECK(cudaGetLastError());
                CHECK(cudaEventRecord(b, s2));
                CHECK(cudaDeviceSynchronize());
                if (r < 3) continue;
                if (what == "fence") {
                    std::uint64_t ns = 0;
                    CHECK(cudaMemcpy(&ns, dfence, sizeof ns, cudaMemcpyDeviceToHost));
                    us.push_back(static_cast<double>(ns) / 1000.0);
                } else {
                    float ms = 0;
                    CHECK(cudaEventElapsedTime(&ms, a, b));
                    us.push_back(ms * 1000.0);
                }
            }
            if (what == "h2d") {
                std::vector<unsigned char> got(y);
                CHECK(cudaMemcpy(got.data(), dsmall, y, cudaMemcpyDeviceToHost));
                if (std::memcmp(got.data(), hsmall, y) != 0) {
                    std::fprintf(stderr, "the 4 KiB copy into the GPU differs\n");
                    std::exit(1);
                }
            }
            const std::string side = blocks == 0 ? std::string("alone") : "beside-" + std::to_string(blocks) + "-block-stores";
            std::printf("start,%s-%s,%zu,%.3f,us\n", what.c_str(), side.c_str(), what == "h2d" ? y : std::size_t{0}, median(us));
            std::fflush(stdout);
        }
    }
    // The stores landed: the last repetition's host buffer is the source.
    std::vector<uint4> src(kBytes / sizeof(uint4));
    CHECK(cudaMemcpy(src.data(), dbuf, kBytes, cudaMemcpyDeviceToHost));
    if (std::memcmp(src.data(), hbuf, kBytes) != 0) {
        std::fprintf(stderr, "the stores' host buffer differs from their source\n");
        std::exit(1);
    }
    CHECK(cudaEventDestroy(a));
    CHECK(cudaEventDestroy(b));
    CHECK(cudaStreamDestroy(s1));
    CHECK(cudaStreamDestroy(s2));
    CHECK(cudaFree(dfence));
    CHECK(cudaFree(dsmall));
    CHECK(cudaFreeHost(hsmall));
    CHECK(cudaFree(dbuf));
    CHECK(cudaFreeHost(hbuf));
}

}  // namespace

int main(int argc, char** argv) {
    const std::string mode = argc > 1 ? argv[1] : "";
    if (mode != "chase" && mode != "stores" && mode != "loads" && mode != "start") {
        std::fprintf(stderr, "usage: storesrc chase|stores|loads|start\n");
        return 2;
    }
    CHECK(cudaSetDevice(0));
    if (mode == "chase") chase_mode();
    if (mode == "stores") zc_mode(true);
    if (mode == "loads") zc_mode(false);
    if (mode == "start") start_mode();
    return 0;
}
