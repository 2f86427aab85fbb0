// Does a read the GPU sends to host memory wait behind the posted writes the GPU is sending at
// the same time? (../behind-reads, sweep.csv: a 4 KiB copy into the GPU issued while a long copy
// out of it runs takes 0.7-0.9 us longer on the H100 and 2.1 us longer on an H200, copies of
// 64 KiB-1 MiB 1.5-2 us (H100) and 3-4.6 us (H200); the model gives 0.1-0.5 and 1.5.) PCIe lets
// no read request pass a posted write sent before it; whoever keeps that order (the GPU's
// transmit path, the root port) holds the read until the writes before it are done. Which reads
// pay, and how much: a load's round trip, or only a copy's start?
//
// Modes (the argument):
//  chase   one thread's dependent 8-byte loads through 64 KiB of mapped pinned host memory (one
//          pointer per 64-byte line, a random single cycle), 2000 hops timed by %globaltimer in the
//          kernel: alone, beside a copy out of the GPU of 512 MiB (started first, the chase
//          launched 200 us later on another stream), beside a copy into the GPU of 512 MiB (reads
//          beside reads), and beside a kernel whose 132 x 256 threads store 16 bytes each to
//          mapped host memory in a loop (the SMs' posted writes, no copy engine). Kernels before
//          and after the long copy stamp %globaltimer, so each repetition checks the chase ran
//          inside it. 15 repetitions after 2 warm-ups; ns a hop.
//  copies  a copy into the GPU of 4 KiB, 64 KiB, 256 KiB, 1 MiB on its own stream, event-timed,
//          issued 200 us after the same long copy out of the GPU or store kernel started, and
//          alone; a copy out of the GPU of the same sizes beside the store kernel and alone (a copy
//          out of the GPU beside another would queue on its engine). 40 repetitions after 3
//          warm-ups; the copied data verified per cell.
//  gated   as copies, but the copy's stream first runs a 300 us spin kernel, so that the copy's
//          work is fetched before it can start (its event interval leaves the fetch out): a copy
//          into the GPU alone and beside the long copy out of it, a copy out of the GPU alone and
//          beside a long copy into it (512 MiB); with two GPUs, also a copy into GPU 0 beside GPU 1's
//          long copy out of it (into host memory of its own), and beside GPU 0's copy of 2 GiB to
//          GPU 1 with peer access (over NVLink: GPU 0's engines busy, its PCIe writes not). The CPU
//          clears a copy's host destination before the first repetition only (in `copies`, before each).
//  lead    a copy into the GPU (4 KiB, 1 MiB) behind a 300 us gate, and a copy out of the GPU of
//          128 MiB (or, with peer access, 2 GiB to GPU 1) behind a gate D us shorter on another
//          stream, D from -20 to 100 us; and a copy out of the GPU against a 128 MiB copy into it
//          (or the peer copy); each alone (D = 0): the loss against how long the other copy has
//          run, and whether copies released together (D = 0) pay it. 30 repetitions after 3 warm-ups.
//  partner as lead, a copy each way and size (4 KiB, 1 MiB) against a copy the other way of 4 KiB to
//          128 MiB started 0, 2, 10, 20 or 40 us before it: whether a short partner costs as much as a
//          long one, and a partner nearly done as much as one just started.
//  landing a copy into the GPU (4 KiB, 64 KiB, 1 MiB) behind a 300 us gate that stamps when it opens,
//          beside another stream's work started 20 us before: none, a 128 MiB copy out of the GPU,
//          a 256 MiB copy within GPU 0's memory (an engine busy, no PCIe or NVLink traffic), a
//          kernel of 66 blocks storing to mapped host memory (PCIe writes, no engine), and with
//          peer access the 2 GiB copy to GPU 1. A one-thread kernel started before the gates polls
//          the destination's last word and stamps when the copy's last bytes are there; a kernel
//          behind the copy stamps when its stream goes on. Rows per case: `event` (the copy's
//          event interval), `data` (gate to last bytes seen), `done` (gate to the stamp behind it):
//          whether what the copy loses beside the others is before its data lands or after it.
//  chain   8 MiB into the GPU behind a 300 us gate, as one copy, as 16 copies of 512 KiB and as 128 of
//          64 KiB back to back on one stream, event-timed from before the first to after the last:
//          alone, beside a 128 MiB copy out of the GPU and beside the 2 GiB peer copy, each started
//          20 us before. Whether what a copy into the GPU loses beside the other is paid once (a
//          start beside it) or by every copy of a chain (each one's reads behind the other's
//          writes), as the runtime's staged pieces would.
//  share   a copy into or out of the GPU of 4 KiB, 1 MiB and 16 MiB behind a 300 us gate, alone and
//          beside 1, 4, 16, 66 and 132 blocks of 256 threads storing 16 bytes each to mapped host
//          memory, or loading them (eight passes over 64 MiB), started 20 us before the copy: what
//          a copy pays at its start (4 KiB) and the share of the way out it gets while it runs
//          (the slope from 1 to 16 MiB). Rows `copy` (the copy's event interval), and for the 16 MiB
//          copy `kernel` (the SM kernel's, alone and beside it). 10 repetitions after 2 warm-ups.
//  drain   N blocks (1, 2, 4, 8, 16, 66, 132) store one pass of 64 MiB to mapped host memory, and on the
//          same stream a 4 KiB copy into the GPU follows: the kernel's event interval (`kernel`), and
//          from the kernel's end event to the copy's (`after`; alone, the copy behind an empty kernel):
//          whether stores the kernel issued are still in the GPU when it ends, ahead of what follows.
//          20 repetitions after 3 warm-ups.
//  startwhy beside 0, 1, 4, 16 and 66 blocks of stores (or 66 and 132 blocks of loads) started 20 us
//          before the gate opens, behind the gate on another stream: a 4 KiB copy into the GPU (as
//          in `share`), a 4 KiB copy within GPU memory, an empty kernel (each its event interval),
//          and a one-thread kernel's __threadfence_system() (its own %globaltimer interval, `fence`);
//          and the copy into the GPU with the stores started 100 and 1000 us before: which work
//          waits behind the SMs' traffic (a copy engine's start, any work's, or a fence), and
//          whether the wait grows with how long the stores have run. 10 repetitions after 2 warm-ups.
//  parts   beside 0, 4, 16 and 66 blocks of the store loop (started 200 us before, on its own
//          stream), on an idle stream, no gate: two event records back to back (`records`), a record,
//          an empty kernel, a record (`kernel`), and a record, a wait for an event of the store stream
//          recorded before the stores, a record (`wait`), each the interval between the two records:
//          which of a stream's steps wait behind the SMs' traffic. 10 repetitions after 2 warm-ups.
//
// Every CUDA call checked. Prints CSV: mode,case,size_bytes,median,p10,p90,inside (inside: the
// repetitions whose chase or copy ended before the long traffic did).
//
// Build: nvcc -O3 -arch=sm_90 rbw.cu -o rbw       Run: ./rbw chase; ./rbw copies; ./rbw gated; ./rbw lead; ./rbw partner; ./rbw landing; ./rbw chain; ./rbw chainstores; ./rbw share; ./rbw drain; ./rbw startwhy; ./rbw parts
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
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

constexpr std::size_t kLong = std::size_t{512} << 20;  // the long copy: about 10 ms at the link's rate
constexpr std::size_t kChaseBytes = 64 << 10;
constexpr std::size_t kLine = 64;
constexpr int kHops = 2000;
constexpr std::size_t kStoreBytes = std::size_t{64} << 20;
constexpr int kStorePasses = 8;  // 512 MiB of stores: about 10 ms at the SMs' store rate
constexpr double kLead = 200.0;  // us between the long traffic's start and what it is beside

__device__ __forceinline__ std::uint64_t globaltimer() {
    std::uint64_t t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}

__global__ void stamp(std::uint64_t* out) { *out = globaltimer(); }

// A gate that stamps when it opens.
__global__ void spin_stamp(std::uint64_t ns, std::uint64_t* out) {
    const std::uint64_t t0 = globaltimer();
    while (globaltimer() - t0 < ns) {
    }
    *out = globaltimer();
}

// One thread polls a word of GPU memory until it holds `want` and stamps when it saw it (0 when
// it gave up after timeout_ns): when a copy's last bytes landed, apart from when its semaphore
// let the stream go on.
__global__ void watch(const volatile std::uint64_t* word, std::uint64_t want, std::uint64_t timeout_ns, std::uint64_t* out) {
    const std::uint64_t t0 = globaltimer();
    std::uint64_t t = t0;
    while (*word != want) {
        t = globaltimer();
        if (t - t0 > timeout_ns) {
            *out = 0;
            return;
        }
    }
    *out = globaltimer();
}

__global__ void spin(std::uint64_t ns) {
    const std::uint64_t t0 = globaltimer();
    while (globaltimer() - t0 < ns) {
    }
}

// One thread follows the cycle; t[0], t[1]: start and end; sink keeps the loads alive.
__global__ void chase(const std::uint64_t* volatile head, int hops, std::uint64_t* t, std::uint64_t* sink) {
    const std::uint64_t* p = const_cast<const std::uint64_t*>(head);
    const std::uint64_t t0 = globaltimer();
    for (int i = 0; i < hops; ++i) p = reinterpret_cast<const std::uint64_t*>(*reinterpret_cast<const volatile std::uint64_t*>(p));
    const std::uint64_t t1 = globaltimer();
    t[0] = t0;
    t[1] = t1;
    *sink = reinterpret_cast<std::uint64_t>(p);
}

__global__ void store_stream(uint4* dst, std::size_t n, int passes, std::uint32_t seed) {
    const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
    for (int pass = 0; pass < passes; ++pass) {
        for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < n; i += stride) {
            const auto v = static_cast<std::uint32_t>(i) ^ seed ^ static_cast<std::uint32_t>(pass);
            dst[i] = make_uint4(v, v + 1, v + 2, v + 3);
        }
    }
}

// One thread times a system-scope fence (what it waits for: the GPU's writes to host memory
// before it, and whatever orders them), ns into `out`.
__global__ void fence_time(std::uint64_t* out) {
    const std::uint64_t t0 = globaltimer();
    __threadfence_system();
    out[0] = globaltimer() - t0;
}

__global__ void empty_kernel() {}

// Loads from mapped host memory: every thread reads its uint4s, `passes` times (the SMs' read
// requests and the host's completions; the sum goes to `sink` only if impossible).
__global__ void load_stream(const uint4* src, std::size_t n, int passes, unsigned* sink) {
    const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
    unsigned acc = 0;
    for (int pass = 0; pass < passes; ++pass) {
        for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < n; i += stride) {
            const uint4 v = __ldcv(src + i);  // from host memory every pass, not a cache
            acc ^= v.x + v.y + v.z + v.w + static_cast<unsigned>(pass);
        }
    }
    if (acc == 0xfffffffeu) *sink = acc;
}

// Streams through GPU memory: every thread reads and rewrites its uint4s, `passes` times; no
// copy engine and no PCIe traffic, the GPU's memory system busy.
__global__ void hbm_stream(uint4* buf, std::size_t n, int passes) {
    const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
    for (int pass = 0; pass < passes; ++pass) {
        for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < n; i += stride) {
            uint4 v = buf[i];
            v.x += 1u;
            buf[i] = v;
        }
    }
}

void busy_wait_us(double us) {
    const auto t0 = std::chrono::steady_clock::now();
    while (std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count() < us) {
    }
}

double quantile(std::vector<double> v, double q) {
    std::sort(v.begin(), v.end());
    return v[static_cast<std::size_t>(q * static_cast<double>(v.size() - 1) + 0.5)];
}

void row(const char* mode, const std::string& what, std::size_t bytes, const std::vector<double>& v, int inside) {
    std::printf("%s,%s,%zu,%.4f,%.4f,%.4f,%d\n", mode, what.c_str(), bytes, quantile(v, 0.5), quantile(v, 0.1), quantile(v, 0.9), inside);
    std::fflush(stdout);
}

enum class Beside { kNone, kCopyOut, kCopyIn, kStores, kOtherCopyOut, kPeerCopyOut };
const char* name(Beside b) {
    switch (b) {
        case Beside::kNone: return "alone";
        case Beside::kCopyOut: return "beside-copy-out";
        case Beside::kCopyIn: return "beside-copy-in";
        case Beside::kStores: return "beside-sm-stores";
        case Beside::kOtherCopyOut: return "beside-other-gpus-copy-out";
        case Beside::kPeerCopyOut: return "beside-peer-copy-out";
    }
    return "?";
}

class Rig {
public:
    Rig() {
        CHECK(cudaSetDevice(0));
        CHECK(cudaMallocHost(&hlong_, kLong));
        CHECK(cudaMalloc(&dlong_, kLong));
        CHECK(cudaMemset(dlong_, 0x5a, kLong));
        std::memset(hlong_, 0x3c, kLong);
        CHECK(cudaHostAlloc(&hstore_, kStoreBytes, cudaHostAllocMapped));
        CHECK(cudaHostGetDevicePointer(reinterpret_cast<void**>(&dstore_), hstore_, 0));
        // The chase: a random single cycle over the lines.
        CHECK(cudaHostAlloc(&hchase_, kChaseBytes, cudaHostAllocMapped));
        CHECK(cudaHostGetDevicePointer(reinterpret_cast<void**>(&dchase_), hchase_, 0));
        const std::size_t lines = kChaseBytes / kLine;
        std::vector<std::size_t> order(lines);
        std::iota(order.begin(), order.end(), std::size_t{0});
        std::mt19937_64 rng(12345);
        std::shuffle(order.begin() + 1, order.end(), rng);
        const auto base = reinterpret_cast<std::uint64_t>(dchase_);
        for (std::size_t i = 0; i < lines; ++i) {
            const std::size_t from = order[i], to = order[(i + 1) % lines];
            *reinterpret_cast<std::uint64_t*>(reinterpret_cast<char*>(hchase_) + from * kLine) = base + to * kLine;
        }
        CHECK(cudaMalloc(&dt_, 8 * sizeof(std::uint64_t)));
        // Small copies' buffers, their own (the long copy's are not touched).
        CHECK(cudaMallocHost(&hsmall_src_, kSmall));
        CHECK(cudaMallocHost(&hsmall_dst_, kSmall));
        CHECK(cudaMalloc(&dsmall_src_, kSmall));
        CHECK(cudaMalloc(&dsmall_dst_, kSmall));
        pattern_.resize(kSmall);
        for (std::size_t i = 0; i < kSmall; ++i) {
            hsmall_src_[i] = static_cast<unsigned char>((i * 131u + 7u) % 251u + 1u);
            pattern_[i] = static_cast<unsigned char>((i * 17u + 3u) % 253u + 1u);
        }
        CHECK(cudaMemcpy(dsmall_src_, pattern_.data(), kSmall, cudaMemcpyHostToDevice));
        CHECK(cudaStreamCreateWithFlags(&s1_, cudaStreamNonBlocking));
        CHECK(cudaStreamCreateWithFlags(&s2_, cudaStreamNonBlocking));
        CHECK(cudaEventCreate(&ea_));
        CHECK(cudaEventCreate(&eb_));
        CHECK(cudaDeviceSynchronize());
        int n = 0;
        CHECK(cudaGetDeviceCount(&n));
        if (n >= 2) {
            // The other GPU's long copy out of it, into host memory of its own.
            CHECK(cudaSetDevice(1));
            CHECK(cudaMalloc(&dother_, kLong));
            CHECK(cudaMemset(dother_, 0x66, kLong));
            CHECK(cudaMallocHost(&hother_, kLong));
            CHECK(cudaStreamCreateWithFlags(&sother_, cudaStreamNonBlocking));
            CHECK(cudaDeviceSynchronize());
            CHECK(cudaSetDevice(0));
            // GPU 0 writing GPU 1's memory over their link (NVLink on the 2xH200), not over PCIe.
            int can = 0;
            CHECK(cudaDeviceCanAccessPeer(&can, 0, 1));
            if (can) {
                CHECK(cudaDeviceEnablePeerAccess(1, 0));
                peer_ = true;
            }
        }
    }
    bool two_gpus() const { return dother_ != nullptr; }

    // Starts the long traffic on s1 between two stamps (dt_[2], dt_[3]); nothing for kNone.
    void start(Beside b) {
        if (b == Beside::kNone) return;
        if (b == Beside::kOtherCopyOut) {
            // On the other GPU; it takes about 10 ms, so what runs 200 us after it starts runs inside it.
            CHECK(cudaSetDevice(1));
            CHECK(cudaStreamSynchronize(sother_));  // the last repetition's
            CHECK(cudaMemcpyAsync(hother_, dother_, kLong, cudaMemcpyDeviceToHost, sother_));
            CHECK(cudaSetDevice(0));
            busy_wait_us(kLead);
            return;
        }
        stamp<<<1, 1, 0, s1_>>>(dt_ + 2);
        CHECK(cudaGetLastError());
        if (b == Beside::kCopyOut) CHECK(cudaMemcpyAsync(hlong_, dlong_, kLong, cudaMemcpyDeviceToHost, s1_));
        if (b == Beside::kCopyIn) CHECK(cudaMemcpyAsync(dlong_, hlong_, kLong, cudaMemcpyHostToDevice, s1_));
        if (b == Beside::kPeerCopyOut) {
            for (int k = 0; k < kPeerRounds; ++k) CHECK(cudaMemcpyPeerAsync(dother_, 1, dlong_, 0, kLong, s1_));
        }
        if (b == Beside::kStores) {
            store_stream<<<132, 256, 0, s1_>>>(dstore_, kStoreBytes / sizeof(uint4), kStorePasses, ++seed_);
            CHECK(cudaGetLastError());
        }
        stamp<<<1, 1, 0, s1_>>>(dt_ + 3);
        CHECK(cudaGetLastError());
        busy_wait_us(kLead);
    }

    // Whether what ran on s2 (ending at `end`, globaltimer ns) ended inside the long traffic.
    bool inside(Beside b, std::uint64_t end) {
        if (b == Beside::kNone || b == Beside::kOtherCopyOut) return true;
        std::uint64_t t[4];
        CHECK(cudaMemcpy(t, dt_, sizeof t, cudaMemcpyDeviceToHost));
        return end < t[3];
    }

    void chase_mode() {
        for (Beside b : {Beside::kNone, Beside::kCopyOut, Beside::kCopyIn, Beside::kStores}) {
            std::vector<double> ns;
            int in = 0;
            for (int r = 0; r < 2 + 15; ++r) {
                CHECK(cudaDeviceSynchronize());
                start(b);
                chase<<<1, 1, 0, s2_>>>(dchase_, kHops, dt_, dt_ + 4);
                CHECK(cudaGetLastError());
                CHECK(cudaDeviceSynchronize());
                std::uint64_t t[2];
                CHECK(cudaMemcpy(t, dt_, sizeof t, cudaMemcpyDeviceToHost));
                if (r < 2) continue;
                ns.push_back(static_cast<double>(t[1] - t[0]) / kHops);
                in += inside(b, t[1]) ? 1 : 0;
            }
            row("chase", name(b), kChaseBytes, ns, in);
        }
    }

    void copies_mode(bool gated) {
        const std::size_t sizes[] = {4 << 10, 64 << 10, 256 << 10, 1 << 20};
        struct Case {
            bool up;
            Beside b;
        };
        const Case ungated_cases[] = {{true, Beside::kNone},  {true, Beside::kCopyOut}, {true, Beside::kStores},
                                      {false, Beside::kNone}, {false, Beside::kStores}};
        const Case gated_cases[] = {{true, Beside::kNone}, {true, Beside::kCopyOut}, {false, Beside::kNone}, {false, Beside::kCopyIn}};
        std::vector<Case> cases = gated ? std::vector<Case>(std::begin(gated_cases), std::end(gated_cases))
                                        : std::vector<Case>(std::begin(ungated_cases), std::end(ungated_cases));
        // With a second GPU: the copy into GPU 0 beside GPU 1's copy out of it (the host's path, not GPU 0's engines).
        if (gated && two_gpus()) cases.push_back({true, Beside::kOtherCopyOut});
        // And beside GPU 0's copy out of it to GPU 1 over their link: GPU 0's engines busy, its PCIe writes not.
        if (gated && peer_) cases.push_back({true, Beside::kPeerCopyOut});
        for (const Case& c : cases) {
            for (std::size_t y : sizes) {
                std::vector<double> us;
                int in = 0;
                for (int r = 0; r < 3 + 40; ++r) {
                    // Ungated, the CPU clears the destination before every repetition (the lines are
                    // then in its cache when the copy writes them); gated, only before the first.
                    if (!c.up && (!gated || r == 0)) std::memset(hsmall_dst_, 0, y);
                    CHECK(cudaDeviceSynchronize());
                    if (gated) {
                        // The long traffic starts once the spin is queued, so that it runs when the gate opens.
                        spin<<<1, 1, 0, s2_>>>(kGateNs);
                        CHECK(cudaGetLastError());
                    }
                    start(c.b);
                    CHECK(cudaEventRecord(ea_, s2_));
                    small_copy(c.up, y, s2_);
                    CHECK(cudaEventRecord(eb_, s2_));
                    stamp<<<1, 1, 0, s2_>>>(dt_ + 5);
                    CHECK(cudaGetLastError());
                    CHECK(cudaDeviceSynchronize());
                    if (r < 3) continue;
                    float ms = 0;
                    CHECK(cudaEventElapsedTime(&ms, ea_, eb_));
                    us.push_back(ms * 1000.0);
                    std::uint64_t end = 0;
                    CHECK(cudaMemcpy(&end, dt_ + 5, sizeof end, cudaMemcpyDeviceToHost));
                    in += inside(c.b, end) ? 1 : 0;
                }
                verify_small(c.up, y);
                row(gated ? "gated" : "copies", std::string(c.up ? "h2d-" : "d2h-") + name(c.b), y, us, in);
            }
        }
    }

    // `lead`: both streams behind spin kernels launched together; the long copy out of the GPU
    // (or, with peer access, the copy to GPU 1) starts D us before the gate of the copy into the
    // GPU opens (D < 0: after it). How the copy into the GPU's loss depends on how long the other
    // copy has run: a queue that fills, a turn that comes round, or a fixed start.
    void lead_mode() {
        const int leads[] = {-20, -10, -5, -3, -2, -1, 0, 1, 2, 3, 5, 10, 20, 50, 100};
        const std::size_t sizes[] = {4 << 10, 1 << 20};
        enum class Other { kNone, kCopyOut, kCopyIn, kPeer };
        struct Case {
            bool up;  // the measured copy: into the GPU, else out of it
            Other other;
            const char* name;
        };
        const Case cases[] = {{true, Other::kNone, "h2d-alone"},           {true, Other::kCopyOut, "h2d-after-copy-out"},
                              {true, Other::kPeer, "h2d-after-peer-copy"},  {false, Other::kNone, "d2h-alone"},
                              {false, Other::kCopyIn, "d2h-after-copy-in"}, {false, Other::kPeer, "d2h-after-peer-copy"}};
        for (const Case& c : cases) {
            if (c.other == Other::kPeer && !peer_) continue;
            for (std::size_t y : sizes) {
                for (const int d : leads) {
                    if (c.other == Other::kNone && d != 0) continue;
                    const std::vector<double> us = behind_head_start(c.up, y, d, [&] {
                        if (c.other == Other::kPeer) {
                            for (int k = 0; k < kPeerRounds; ++k) CHECK(cudaMemcpyPeerAsync(dother_, 1, dlong_, 0, kLong, s1_));
                        } else if (c.other == Other::kCopyOut) {
                            CHECK(cudaMemcpyAsync(hlong_, dlong_, kLong / 4, cudaMemcpyDeviceToHost, s1_));
                        } else if (c.other == Other::kCopyIn) {
                            CHECK(cudaMemcpyAsync(dlong_, hlong_, kLong / 4, cudaMemcpyHostToDevice, s1_));
                        }
                    });
                    row("lead", std::string(c.name) + "-" + std::to_string(d) + "us", y, us, 30);
                }
            }
        }
    }

    // `partner`: as lead, the other copy the other way of P bytes (4 KiB to 128 MiB) started D =
    // 0-40 us before the measured one: does a short partner, or one nearly done, cost as much?
    void partner_mode() {
        const std::size_t partners[] = {4 << 10, 64 << 10, 256 << 10, 1 << 20, 4 << 20, 128 << 20};
        const std::size_t sizes[] = {4 << 10, 1 << 20};
        for (const bool up : {true, false}) {
            for (std::size_t y : sizes) {
                for (std::size_t p : partners) {
                    for (const int d : {0, 2, 10, 20, 40}) {
                        // The partner goes the other way, from the long buffers' start.
                        const std::vector<double> us = behind_head_start(up, y, d, [&] {
                            if (up) {
                                CHECK(cudaMemcpyAsync(hlong_, dlong_, p, cudaMemcpyDeviceToHost, s1_));
                            } else {
                                CHECK(cudaMemcpyAsync(dlong_, hlong_, p, cudaMemcpyHostToDevice, s1_));
                            }
                        });
                        row("partner", std::string(up ? "h2d" : "d2h") + "-partner-" + std::to_string(p >> 10) + "KiB-" + std::to_string(d) + "us", y,
                            us, 30);
                    }
                }
            }
        }
    }

    // `landing`: see the header. Each repetition's source carries a new last word, so the watcher
    // cannot see an earlier repetition's.
    void landing_mode() {
        enum class Other { kNone, kCopyOut, kDeviceCopy, kStores, kPeer };
        const std::pair<Other, const char*> others[] = {{Other::kNone, "alone"},
                                                        {Other::kCopyOut, "beside-copy-out"},
                                                        {Other::kDeviceCopy, "beside-device-copy"},
                                                        {Other::kStores, "beside-sm-stores"},
                                                        {Other::kPeer, "beside-peer-copy"}};
        const std::size_t sizes[] = {4 << 10, 64 << 10, 1 << 20};
        constexpr int kHeadStartUs = 20;
        constexpr std::uint64_t kWatchTimeoutNs = 3000000;
        cudaStream_t s3{};
        CHECK(cudaStreamCreateWithFlags(&s3, cudaStreamNonBlocking));
        for (const auto& [other, other_name] : others) {
            if (other == Other::kPeer && !peer_) continue;
            for (std::size_t y : sizes) {
                std::vector<double> event_us, data_us, done_us;
                for (int r = 0; r < 3 + 30; ++r) {
                    CHECK(cudaDeviceSynchronize());
                    const std::uint64_t want = 0x5eed000000000000ull + (++tag_);
                    std::memcpy(hsmall_src_ + y - sizeof want, &want, sizeof want);
                    watch<<<1, 1, 0, s3>>>(reinterpret_cast<const std::uint64_t*>(dsmall_dst_ + y - sizeof want), want, kWatchTimeoutNs, dt_ + 6);
                    CHECK(cudaGetLastError());
                    spin<<<1, 1, 0, s1_>>>(kGateNs - kHeadStartUs * 1000);
                    CHECK(cudaGetLastError());
                    spin_stamp<<<1, 1, 0, s2_>>>(kGateNs, dt_);
                    CHECK(cudaGetLastError());
                    if (other == Other::kCopyOut) CHECK(cudaMemcpyAsync(hlong_, dlong_, kLong / 4, cudaMemcpyDeviceToHost, s1_));
                    if (other == Other::kDeviceCopy) CHECK(cudaMemcpyAsync(dlong_ + kLong / 2, dlong_, kLong / 2, cudaMemcpyDeviceToDevice, s1_));
                    if (other == Other::kStores) {
                        store_stream<<<66, 256, 0, s1_>>>(dstore_, kStoreBytes / sizeof(uint4), 2, ++seed_);
                        CHECK(cudaGetLastError());
                    }
                    if (other == Other::kPeer) {
                        for (int k = 0; k < kPeerRounds; ++k) CHECK(cudaMemcpyPeerAsync(dother_, 1, dlong_, 0, kLong, s1_));
                    }
                    CHECK(cudaEventRecord(ea_, s2_));
                    small_copy(true, y, s2_);
                    CHECK(cudaEventRecord(eb_, s2_));
                    stamp<<<1, 1, 0, s2_>>>(dt_ + 1);
                    CHECK(cudaGetLastError());
                    CHECK(cudaDeviceSynchronize());
                    if (r < 3) continue;
                    float ms = 0;
                    CHECK(cudaEventElapsedTime(&ms, ea_, eb_));
                    std::uint64_t t[7];
                    CHECK(cudaMemcpy(t, dt_, sizeof t, cudaMemcpyDeviceToHost));
                    if (t[6] == 0) {
                        std::fprintf(stderr, "landing: the watcher did not see the last bytes of a %zu-byte copy within %llu ns\n", y,
                                     static_cast<unsigned long long>(kWatchTimeoutNs));
                        std::exit(1);
                    }
                    event_us.push_back(ms * 1000.0);
                    data_us.push_back(static_cast<double>(static_cast<std::int64_t>(t[6] - t[0])) / 1000.0);
                    done_us.push_back(static_cast<double>(static_cast<std::int64_t>(t[1] - t[0])) / 1000.0);
                }
                verify_small(true, y);
                const std::string base = std::string("h2d-") + other_name;
                row("landing", base + "-event", y, event_us, 30);
                row("landing", base + "-data", y, data_us, 30);
                row("landing", base + "-done", y, done_us, 30);
            }
        }
        CHECK(cudaStreamDestroy(s3));
    }

    // `chain`: see the header. The chain reads from the long host buffer's upper half, which the
    // copy out of the GPU (its first quarter) never writes, into the long device buffer's last
    // 8 MiB, which neither other copy writes.
    // `chainstores`: the same chains alone and beside 1, 4, 16 and 66 blocks of stores to mapped
    // host memory (one pass of 64 MiB, four from 16 blocks on): how what a copy pays grows with
    // the SMs' write traffic.
    void chain_mode(bool sweep_stores) {
        constexpr std::size_t kTotal = std::size_t{8} << 20;
        constexpr int kHeadStartUs = 20;
        unsigned char* src = hlong_ + kLong / 2;
        unsigned char* dst = dlong_ + kLong - kTotal;
        for (std::size_t i = 0; i < kTotal; ++i) src[i] = static_cast<unsigned char>((i * 29u + 11u) % 249u + 1u);
        enum class Other { kNone, kCopyOut, kPeer, kMemory, kStores };
        struct Case {
            Other other;
            int blocks;  // kStores: the store kernel's grid
            std::string name;
        };
        std::vector<Case> others = {{Other::kNone, 0, "alone"}};
        if (sweep_stores) {
            for (const int b : {1, 4, 16, 66}) others.push_back({Other::kStores, b, "beside-" + std::to_string(b) + "-block-stores"});
        } else {
            others.push_back({Other::kCopyOut, 0, "beside-copy-out"});
            others.push_back({Other::kPeer, 0, "beside-peer-copy"});
            others.push_back({Other::kMemory, 0, "beside-memory-kernel"});
            others.push_back({Other::kStores, 1, "beside-one-block-stores"});
        }
        for (const auto& [other, blocks, other_name] : others) {
            if (other == Other::kPeer && !peer_) continue;
            for (const std::size_t piece : {kTotal, std::size_t{512} << 10, std::size_t{64} << 10}) {
                std::vector<double> us;
                for (int r = 0; r < 3 + 20; ++r) {
                    CHECK(cudaDeviceSynchronize());
                    CHECK(cudaMemset(dst, 0, kTotal));
                    CHECK(cudaDeviceSynchronize());
                    spin<<<1, 1, 0, s1_>>>(kGateNs - kHeadStartUs * 1000);
                    CHECK(cudaGetLastError());
                    spin<<<1, 1, 0, s2_>>>(kGateNs);
                    CHECK(cudaGetLastError());
                    if (other == Other::kCopyOut) CHECK(cudaMemcpyAsync(hlong_, dlong_, kLong / 4, cudaMemcpyDeviceToHost, s1_));
                    if (other == Other::kPeer) {
                        for (int k = 0; k < kPeerRounds; ++k) CHECK(cudaMemcpyPeerAsync(dother_, 1, dlong_, 0, kLong, s1_));
                    }
                    if (other == Other::kMemory) {
                        // 128 MiB of the long device buffer's second quarter, 16 passes: some ms.
                        hbm_stream<<<66, 256, 0, s1_>>>(reinterpret_cast<uint4*>(dlong_ + kLong / 4), (kLong / 4) / sizeof(uint4), 16);
                        CHECK(cudaGetLastError());
                    }
                    if (other == Other::kStores) {
                        store_stream<<<blocks, 256, 0, s1_>>>(dstore_, kStoreBytes / sizeof(uint4), blocks >= 16 ? 4 : 1, ++seed_);
                        CHECK(cudaGetLastError());
                    }
                    CHECK(cudaEventRecord(ea_, s2_));
                    for (std::size_t off = 0; off < kTotal; off += piece) {
                        CHECK(cudaMemcpyAsync(dst + off, src + off, piece, cudaMemcpyHostToDevice, s2_));
                    }
                    CHECK(cudaEventRecord(eb_, s2_));
                    CHECK(cudaDeviceSynchronize());
                    if (r < 3) continue;
                    float ms = 0;
                    CHECK(cudaEventElapsedTime(&ms, ea_, eb_));
                    us.push_back(ms * 1000.0);
                }
                std::vector<unsigned char> got(kTotal);
                CHECK(cudaMemcpy(got.data(), dst, kTotal, cudaMemcpyDeviceToHost));
                if (std::memcmp(got.data(), src, kTotal) != 0) fail("into the GPU (chain)", kTotal);
                row(sweep_stores ? "chainstores" : "chain", std::string("h2d-") + other_name + "-" + std::to_string(kTotal / piece) + "x" + std::to_string(piece >> 10) + "KiB",
                    kTotal, us, 20);
            }
        }
    }

    // `share`: see the header. The copy moves between the long buffers' last 16 MiB (host) and
    // first 16 MiB (device); the SM kernel uses the mapped store buffer only.
    void share_mode() {
        constexpr std::size_t kMax = std::size_t{16} << 20;
        constexpr int kHeadStartUs = 20;
        unsigned char* host = hlong_ + kLong - kMax;
        unsigned char* dev = dlong_;
        unsigned* sink = nullptr;
        CHECK(cudaMalloc(&sink, sizeof(unsigned)));
        cudaEvent_t ka{}, kb{};
        CHECK(cudaEventCreate(&ka));
        CHECK(cudaEventCreate(&kb));
        struct Side {
            int blocks;  // 0: alone
            bool loads;
        };
        std::vector<Side> sides = {{0, false}};
        for (const bool loads : {false, true}) {
            for (const int b : {1, 4, 16, 66, 132}) sides.push_back({b, loads});
        }
        for (const bool up : {true, false}) {
            for (const auto& [blocks, loads] : sides) {
                const std::string side = blocks == 0 ? std::string("alone")
                                                     : "beside-" + std::to_string(blocks) + "-block-" + (loads ? "loads" : "stores");
                for (const std::size_t y : {std::size_t{4} << 10, std::size_t{1} << 20, kMax}) {
                    std::vector<double> copy_us, kernel_us;
                    for (int r = 0; r < 2 + 10; ++r) {
                        CHECK(cudaDeviceSynchronize());
                        for (std::size_t i = 0; i < y; i += 4096) {
                            // A fresh pattern per repetition at every page: what lands is this copy's.
                            const auto v = static_cast<unsigned char>((i / 4096 + static_cast<std::size_t>(r) * 7u) % 251u + 1u);
                            if (up) {
                                std::memset(host + i, v, std::min<std::size_t>(4096, y - i));
                            }
                        }
                        if (!up) {
                            CHECK(cudaMemset(dev, (r * 7 + 3) % 251 + 1, y));
                        }
                        CHECK(cudaDeviceSynchronize());
                        spin<<<1, 1, 0, s1_>>>(kGateNs - kHeadStartUs * 1000);
                        CHECK(cudaGetLastError());
                        spin<<<1, 1, 0, s2_>>>(kGateNs);
                        CHECK(cudaGetLastError());
                        if (blocks > 0) {
                            CHECK(cudaEventRecord(ka, s1_));
                            if (loads) {
                                load_stream<<<blocks, 256, 0, s1_>>>(dstore_, kStoreBytes / sizeof(uint4), kStorePasses, sink);
                            } else {
                                store_stream<<<blocks, 256, 0, s1_>>>(dstore_, kStoreBytes / sizeof(uint4), kStorePasses, ++seed_);
                            }
                            CHECK(cudaGetLastError());
                            CHECK(cudaEventRecord(kb, s1_));
                        }
                        CHECK(cudaEventRecord(ea_, s2_));
                        if (up) {
                            CHECK(cudaMemcpyAsync(dev, host, y, cudaMemcpyHostToDevice, s2_));
                        } else {
                            CHECK(cudaMemcpyAsync(host, dev, y, cudaMemcpyDeviceToHost, s2_));
                        }
                        CHECK(cudaEventRecord(eb_, s2_));
                        CHECK(cudaDeviceSynchronize());
                        if (r < 2) continue;
                        float ms = 0;
                        CHECK(cudaEventElapsedTime(&ms, ea_, eb_));
                        copy_us.push_back(ms * 1000.0);
                        if (blocks > 0) {
                            CHECK(cudaEventElapsedTime(&ms, ka, kb));
                            kernel_us.push_back(ms * 1000.0);
                        }
                    }
                    // The last repetition's data, both ways.
                    std::vector<unsigned char> got(y);
                    if (up) {
                        CHECK(cudaMemcpy(got.data(), dev, y, cudaMemcpyDeviceToHost));
                        if (std::memcmp(got.data(), host, y) != 0) fail("into the GPU (share)", y);
                    } else {
                        const auto v = static_cast<unsigned char>((11 * 7 + 3) % 251 + 1);
                        for (std::size_t i = 0; i < y; ++i) {
                            if (host[i] != v) fail("out of the GPU (share)", y);
                        }
                    }
                    const std::string base = std::string(up ? "h2d-" : "d2h-") + side;
                    row("share", base + "-copy", y, copy_us, 10);
                    if (blocks > 0 && y == kMax) row("share", base + "-kernel", y, kernel_us, 10);
                }
            }
        }
        // Each SM kernel alone: its event interval.
        for (const bool loads : {false, true}) {
            for (const int b : {1, 4, 16, 66, 132}) {
                std::vector<double> us;
                for (int r = 0; r < 2 + 5; ++r) {
                    CHECK(cudaDeviceSynchronize());
                    spin<<<1, 1, 0, s1_>>>(kGateNs);
                    CHECK(cudaGetLastError());
                    CHECK(cudaEventRecord(ka, s1_));
                    if (loads) {
                        load_stream<<<b, 256, 0, s1_>>>(dstore_, kStoreBytes / sizeof(uint4), kStorePasses, sink);
                    } else {
                        store_stream<<<b, 256, 0, s1_>>>(dstore_, kStoreBytes / sizeof(uint4), kStorePasses, ++seed_);
                    }
                    CHECK(cudaGetLastError());
                    CHECK(cudaEventRecord(kb, s1_));
                    CHECK(cudaDeviceSynchronize());
                    if (r < 2) continue;
                    float ms = 0;
                    CHECK(cudaEventElapsedTime(&ms, ka, kb));
                    us.push_back(ms * 1000.0);
                }
                row("share", std::string("kernel-alone-") + std::to_string(b) + "-block-" + (loads ? "loads" : "stores"),
                    kStoreBytes * kStorePasses, us, 5);
            }
        }
        CHECK(cudaEventDestroy(ka));
        CHECK(cudaEventDestroy(kb));
        CHECK(cudaFree(sink));
    }

    // `startwhy`: see the header.
    void startwhy_mode() {
        std::uint64_t* dfence = nullptr;
        CHECK(cudaMalloc(&dfence, sizeof(std::uint64_t)));
        unsigned* sink = nullptr;
        CHECK(cudaMalloc(&sink, sizeof(unsigned)));
        constexpr std::size_t y = 4096;
        enum class What { kH2d, kD2d, kEmpty, kFence };
        struct Side {
            int blocks;
            bool loads;
            int head_us;
        };
        const std::vector<Side> sides = {{0, false, 20},  {1, false, 20},  {4, false, 20},   {16, false, 20},
                                         {66, false, 20}, {66, true, 20},  {132, true, 20},  {16, false, 100},
                                         {16, false, 1000}, {66, false, 100}, {66, false, 1000}};
        for (const auto& [blocks, loads, head] : sides) {
            for (const What what : {What::kH2d, What::kD2d, What::kEmpty, What::kFence}) {
                if (head != 20 && what != What::kH2d) continue;
                std::vector<double> us;
                for (int r = 0; r < 2 + 10; ++r) {
                    CHECK(cudaDeviceSynchronize());
                    // A gate long enough for the longest head start.
                    const std::uint64_t gate = std::max<std::uint64_t>(kGateNs, (static_cast<std::uint64_t>(head) + 100) * 1000);
                    spin<<<1, 1, 0, s1_>>>(gate - static_cast<std::uint64_t>(head) * 1000);
                    CHECK(cudaGetLastError());
                    spin<<<1, 1, 0, s2_>>>(gate);
                    CHECK(cudaGetLastError());
                    if (blocks > 0) {
                        if (loads) {
                            load_stream<<<blocks, 256, 0, s1_>>>(dstore_, kStoreBytes / sizeof(uint4), kStorePasses, sink);
                        } else {
                            store_stream<<<blocks, 256, 0, s1_>>>(dstore_, kStoreBytes / sizeof(uint4), kStorePasses, ++seed_);
                        }
                        CHECK(cudaGetLastError());
                    }
                    CHECK(cudaEventRecord(ea_, s2_));
                    switch (what) {
                        case What::kH2d: small_copy(true, y, s2_); break;
                        case What::kD2d: CHECK(cudaMemcpyAsync(dsmall_dst_, dsmall_src_, y, cudaMemcpyDeviceToDevice, s2_)); break;
                        case What::kEmpty: empty_kernel<<<1, 1, 0, s2_>>>(); CHECK(cudaGetLastError()); break;
                        case What::kFence: fence_time<<<1, 1, 0, s2_>>>(dfence); CHECK(cudaGetLastError()); break;
                    }
                    CHECK(cudaEventRecord(eb_, s2_));
                    CHECK(cudaDeviceSynchronize());
                    if (r < 2) continue;
                    if (what == What::kFence) {
                        std::uint64_t ns = 0;
                        CHECK(cudaMemcpy(&ns, dfence, sizeof ns, cudaMemcpyDeviceToHost));
                        us.push_back(static_cast<double>(ns) / 1000.0);
                    } else {
                        float ms = 0;
                        CHECK(cudaEventElapsedTime(&ms, ea_, eb_));
                        us.push_back(ms * 1000.0);
                    }
                }
                if (what == What::kH2d) verify_small(true, y);
                const char* name = what == What::kH2d ? "h2d" : what == What::kD2d ? "d2d" : what == What::kEmpty ? "empty-kernel" : "fence";
                const std::string side = blocks == 0 ? std::string("alone")
                                                     : "beside-" + std::to_string(blocks) + "-block-" + (loads ? "loads" : "stores") +
                                                           (head != 20 ? "-after-" + std::to_string(head) + "us" : std::string());
                row("startwhy", std::string(name) + "-" + side, y, us, 10);
            }
        }
        CHECK(cudaFree(dfence));
        CHECK(cudaFree(sink));
    }

    // `parts`: see the header.
    void parts_mode() {
        cudaEvent_t before{};
        CHECK(cudaEventCreate(&before));
        for (const int blocks : {0, 4, 16, 66}) {
            for (const std::string what : {"records", "kernel", "wait"}) {
                std::vector<double> us;
                for (int r = 0; r < 2 + 10; ++r) {
                    CHECK(cudaDeviceSynchronize());
                    CHECK(cudaEventRecord(before, s1_));
                    if (blocks > 0) {
                        store_stream<<<blocks, 256, 0, s1_>>>(dstore_, kStoreBytes / sizeof(uint4), kStorePasses, ++seed_);
                        CHECK(cudaGetLastError());
                    }
                    busy_wait_us(200.0);
                    CHECK(cudaEventRecord(ea_, s2_));
                    if (what == "kernel") {
                        empty_kernel<<<1, 1, 0, s2_>>>();
                        CHECK(cudaGetLastError());
                    }
                    if (what == "wait") CHECK(cudaStreamWaitEvent(s2_, before, 0));
                    CHECK(cudaEventRecord(eb_, s2_));
                    CHECK(cudaDeviceSynchronize());
                    if (r < 2) continue;
                    float ms = 0;
                    CHECK(cudaEventElapsedTime(&ms, ea_, eb_));
                    us.push_back(ms * 1000.0);
                }
                const std::string side = blocks == 0 ? std::string("alone") : "beside-" + std::to_string(blocks) + "-block-stores";
                row("parts", what + "-" + side, 0, us, 10);
            }
        }
        CHECK(cudaEventDestroy(before));
    }

    // `drain`: see the header.
    void drain_mode() {
        cudaEvent_t k0{}, k1{};
        CHECK(cudaEventCreate(&k0));
        CHECK(cudaEventCreate(&k1));
        constexpr std::size_t y = 4096;
        for (const int b : {0, 1, 2, 4, 8, 16, 66, 132}) {
            std::vector<double> kernel_us, after_us;
            for (int r = 0; r < 3 + 20; ++r) {
                CHECK(cudaDeviceSynchronize());
                spin<<<1, 1, 0, s2_>>>(kGateNs);
                CHECK(cudaGetLastError());
                CHECK(cudaEventRecord(k0, s2_));
                // b = 0: an empty kernel (no stores), the reference.
                store_stream<<<b > 0 ? b : 1, 256, 0, s2_>>>(dstore_, b > 0 ? kStoreBytes / sizeof(uint4) : 0, 1, ++seed_);
                CHECK(cudaGetLastError());
                CHECK(cudaEventRecord(k1, s2_));
                small_copy(true, y, s2_);
                CHECK(cudaEventRecord(eb_, s2_));
                CHECK(cudaDeviceSynchronize());
                if (r < 3) continue;
                float ms = 0;
                CHECK(cudaEventElapsedTime(&ms, k0, k1));
                kernel_us.push_back(ms * 1000.0);
                CHECK(cudaEventElapsedTime(&ms, k1, eb_));
                after_us.push_back(ms * 1000.0);
            }
            verify_small(true, y);
            const std::string base = b > 0 ? std::to_string(b) + "-block-stores" : std::string("empty-kernel");
            row("drain", base + "-kernel", b > 0 ? kStoreBytes : 0, kernel_us, 20);
            row("drain", base + "-after", y, after_us, 20);
        }
        CHECK(cudaEventDestroy(k0));
        CHECK(cudaEventDestroy(k1));
    }

    // The measured copy (into the GPU: up) of y bytes on s2 behind a kGateNs gate, and on s1 behind
    // a gate d us shorter whatever `other` enqueues there; 30 repetitions after 3 warm-ups, the
    // copy's event interval each (us), its data verified.
    template <typename Other>
    std::vector<double> behind_head_start(bool up, std::size_t y, int d, Other&& other) {
        std::vector<double> us;
        for (int r = 0; r < 3 + 30; ++r) {
            CHECK(cudaDeviceSynchronize());
            spin<<<1, 1, 0, s1_>>>(static_cast<std::uint64_t>(static_cast<std::int64_t>(kGateNs) - d * 1000));
            CHECK(cudaGetLastError());
            spin<<<1, 1, 0, s2_>>>(kGateNs);
            CHECK(cudaGetLastError());
            other();
            CHECK(cudaEventRecord(ea_, s2_));
            small_copy(up, y, s2_);
            CHECK(cudaEventRecord(eb_, s2_));
            CHECK(cudaDeviceSynchronize());
            if (r < 3) continue;
            float ms = 0;
            CHECK(cudaEventElapsedTime(&ms, ea_, eb_));
            us.push_back(ms * 1000.0);
        }
        verify_small(up, y);
        return us;
    }

    void small_copy(bool up, std::size_t y, cudaStream_t s) {
        if (up) {
            CHECK(cudaMemcpyAsync(dsmall_dst_, hsmall_src_, y, cudaMemcpyHostToDevice, s));
        } else {
            CHECK(cudaMemcpyAsync(hsmall_dst_, dsmall_src_, y, cudaMemcpyDeviceToHost, s));
        }
    }

    void verify_small(bool up, std::size_t y) {
        std::vector<unsigned char> got(y);
        if (up) {
            CHECK(cudaMemcpy(got.data(), dsmall_dst_, y, cudaMemcpyDeviceToHost));
            if (std::memcmp(got.data(), hsmall_src_, y) != 0) fail("into the GPU", y);
        } else if (std::memcmp(hsmall_dst_, pattern_.data(), y) != 0) {
            fail("out of the GPU", y);
        }
    }

private:
    static constexpr std::size_t kSmall = 1 << 20;
    static constexpr std::uint64_t kGateNs = 300000;
    [[noreturn]] static void fail(const char* what, std::size_t y) {
        std::fprintf(stderr, "copy %s of %zu bytes: data differ\n", what, y);
        std::exit(1);
    }
    unsigned char* hlong_ = nullptr;
    unsigned char* dlong_ = nullptr;
    uint4* hstore_ = nullptr;
    uint4* dstore_ = nullptr;
    std::uint64_t* hchase_ = nullptr;
    std::uint64_t* dchase_ = nullptr;
    std::uint64_t* dt_ = nullptr;
    unsigned char* hsmall_src_ = nullptr;
    unsigned char* hsmall_dst_ = nullptr;
    unsigned char* dsmall_src_ = nullptr;
    unsigned char* dsmall_dst_ = nullptr;
    std::vector<unsigned char> pattern_;
    cudaStream_t s1_{}, s2_{};
    static constexpr int kPeerRounds = 4;  // 2 GiB over NVLink: about 5 ms
    bool peer_ = false;
    unsigned char* dother_ = nullptr;
    unsigned char* hother_ = nullptr;
    cudaStream_t sother_{};
    cudaEvent_t ea_{}, eb_{};
    std::uint32_t seed_ = 0;
    std::uint64_t tag_ = 0;
};

}  // namespace

int main(int argc, char** argv) {
    const std::string mode = argc > 1 ? argv[1] : "";
    if (mode != "chase" && mode != "copies" && mode != "gated" && mode != "lead" && mode != "partner" &&
        mode != "landing" && mode != "chain" &&
        mode != "chainstores" && mode != "share" && mode != "drain" && mode != "startwhy" && mode != "parts") {
        std::fprintf(stderr, "usage: rbw chase|copies|gated|lead|partner|landing|chain|chainstores|share|drain|startwhy|parts\n");
        return 2;
    }
    Rig rig;
    std::printf("mode,case,size_bytes,median,p10,p90,inside\n");
    if (mode == "chase") rig.chase_mode();
    if (mode == "copies" || mode == "gated") rig.copies_mode(mode == "gated");
    if (mode == "lead") rig.lead_mode();
    if (mode == "partner") rig.partner_mode();
    if (mode == "landing") rig.landing_mode();
    if (mode == "chain" || mode == "chainstores") rig.chain_mode(mode == "chainstores");
    if (mode == "share") rig.share_mode();
    if (mode == "drain") rig.drain_mode();
    if (mode == "startwhy") rig.startwhy_mode();
    if (mode == "parts") rig.parts_mode();
    return 0;
}
