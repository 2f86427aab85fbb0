// Does a wait across GPUs take longer while a copy engine streams data through the GPUs' PCIe
// ports? Two staged peer copies at once (peer access off, ../staged-both, gated) each take
// 1.164-1.175 times one way at 64-256 MiB, the model 1.146-1.148: its pieces move as measured
// beside each other, but its handoffs between the GPUs (runtime.cross_device_wait, a semaphore
// in host memory that the other GPU polls) cost the same whatever the ports carry. A poll is a
// read of host memory, and on the 2xH200 a copy engine's read request leaves the GPU behind the
// writes queued before it (dma.egress_queue).
//
// Measured: streams on GPU 0 and GPU 1 wait for each other's events in turn, K times (a round
// trip is two cross-device waits; ../cross-device-wait pingpong), all calls queued behind a spin
// kernel on GPU 0, timed by GPU 0's events. Beside it, on other streams, a long copy that starts
// before the spin and outlasts the round trips:
//   idle   nothing
//   d2h0   a copy out of GPU 0 into pinned memory (GPU 0's port carries writes to the host)
//   d2h1   the same out of GPU 1
//   h2d0   a copy into GPU 0 from pinned memory (its port carries read requests out, data in)
//   h2d1   the same into GPU 1
//   d2h01  copies out of both GPUs
//   peer01 a peer copy GPU 0 -> GPU 1 over NVLink (peer access on; no PCIe traffic)
//   kern0  a spin kernel on GPU 0 (its SMs busy, no copy)
// With `same` the round trips run between two streams of GPU 0 (same-device waits,
// runtime.stream_wait_latency) beside the same backgrounds. With `seen`, one wait at a time,
// seen by the CPU: GPU 0 records E behind a 30 us spin, GPU 1's stream waits for E and records F,
// and the CPU, spinning on cudaEventQuery, notes when it sees E and then F done (trip_us: F - E,
// the wait on GPU 1 and F's release): which GPU's busy engine slows a wait, the waiting one's
// (h2d1) or the releasing one's (h2d0). With `records`, no waits: K event records back to back
// on one stream of GPU 0 behind the spin (trip_us: their spacing), beside the same backgrounds
// as `same`: whether the releases themselves are what a busy engine slows. With `hop`, one wait
// within GPU 0 at a time: stream A runs a 20 us spin and records E, stream B waits for E and records
// F (trip_us: F - E, from the two events' stamps): whether a wait on the same GPU sees an event
// recorded beside a busy engine late, apart from the spacing of one stream's records; `hop d2h`
// (`hop h2d`) records E right behind a 4 KiB copy out of (into) GPU 0 on its stream, after the
// spin: whether a record behind a copy on its own stream is held too. `peer10`
// (in the modes within GPU 0): a peer copy GPU 1 -> GPU 0 over NVLink, GPU 0 receiving.
// Each repetition records when the background copy started and ended against the round trips
// (bg_start_us, bg_end_us from the first round trip's start event, GPU 0's copies only): a
// repetition whose round trips were not all inside the copy is reported (inside = 0).
// 3 warm-ups and 20 repetitions a case; every repetition in the CSV; the copied data verified
// once a case; every CUDA call checked.
//
// Build: nvcc -O3 -arch=sm_90 busywait.cu -o busywait
// Run:   ./busywait [K [same|seen|records|hop [d2h|h2d]]] > busywait.csv   (K round trips, or waits seen, a repetition,
//        default 100; two GPUs)
#include <cuda_runtime.h>

#include <chrono>
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

constexpr int kWarmup = 3;
constexpr int kReps = 20;
// The background copy: about 4.9 ms at 55 GB/s over PCIe, 0.7 ms over NVLink (the peer case
// copies four times as much), against K round trips of about 11.3 us after a 600 us spin.
constexpr std::size_t kBackground = std::size_t{256} << 20;
constexpr double kSpinUs = 600.0;

__device__ unsigned long long globaltimer_ns() {
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}

__global__ void spin(unsigned long long ns) {
    const unsigned long long t0 = globaltimer_ns();
    while (globaltimer_ns() - t0 < ns) {
    }
}

__global__ void fill(unsigned int* p, std::size_t words, unsigned int seed) {
    for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < words;
         i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
        p[i] = static_cast<unsigned int>(i) * 2654435761u + seed;
    }
}

float elapsed_us(cudaEvent_t a, cudaEvent_t b) {
    float ms = 0;
    CHECK(cudaEventElapsedTime(&ms, a, b));
    return ms * 1000.0f;
}

struct Side {
    unsigned int* dev = nullptr;      // the background copy's device buffer (source or destination)
    unsigned int* peer_dst = nullptr; // GPU 1's buffer for the peer case (on GPU 1)
    unsigned int* host = nullptr;     // pinned
    cudaStream_t ping{}, bg{};
    cudaEvent_t bg_start{}, bg_end{};
};

bool check_host(const unsigned int* h, std::size_t words, unsigned int seed) {
    for (std::size_t i = 0; i < words; i += 4099) {
        if (h[i] != static_cast<unsigned int>(i) * 2654435761u + seed) return false;
    }
    return h[words - 1] == static_cast<unsigned int>(words - 1) * 2654435761u + seed;
}

}  // namespace

int main(int argc, char** argv) {
    int count = 0;
    CHECK(cudaGetDeviceCount(&count));
    const int k_trips = argc > 1 ? std::atoi(argv[1]) : 100;
    const bool same = argc > 2 && std::string(argv[2]) == "same";
    const bool seen = argc > 2 && std::string(argv[2]) == "seen";
    const bool records = argc > 2 && std::string(argv[2]) == "records";
    const bool hop = argc > 2 && std::string(argv[2]) == "hop";
    if (argc > 2 && !same && !seen && !records && !hop) {
        std::fprintf(stderr, "mode %s: not `same`, `seen`, `records` or `hop`\n", argv[2]);
        return 2;
    }
    // hop: what E is recorded behind on its stream besides the spin (nothing, or a 4 KiB copy).
    const std::string behind = hop && argc > 3 ? argv[3] : "";
    if (!behind.empty() && behind != "d2h" && behind != "h2d") {
        std::fprintf(stderr, "hop %s: not d2h or h2d\n", behind.c_str());
        return 2;
    }
    // `same`, `records` and `hop` run on one GPU (the H100's kind of host has one), leaving out the peer cases.
    const bool one_gpu = same || records || hop;
    const int gpus = count >= 2 ? 2 : count;
    if (gpus < (one_gpu ? 1 : 2)) {
        std::fprintf(stderr, "needs %s, found %d\n", one_gpu ? "a GPU" : "two GPUs", count);
        return 1;
    }
    // The device the second side of each round trip waits on.
    const int other = one_gpu ? 0 : 1;
    if (k_trips < 1 || k_trips > 10000) {
        std::fprintf(stderr, "K = %s: not in 1..10000\n", argv[1]);
        return 2;
    }
    const std::size_t words = kBackground / sizeof(unsigned int);
    Side g[2];
    for (int d = 0; d < gpus; ++d) {
        CHECK(cudaSetDevice(d));
        CHECK(cudaMalloc(&g[d].dev, kBackground));
        CHECK(cudaMallocHost(&g[d].host, kBackground));
        CHECK(cudaStreamCreateWithFlags(&g[d].ping, cudaStreamNonBlocking));
        CHECK(cudaStreamCreateWithFlags(&g[d].bg, cudaStreamNonBlocking));
        CHECK(cudaEventCreate(&g[d].bg_start));
        CHECK(cudaEventCreate(&g[d].bg_end));
    }
    // hop's small copy: its own buffers, so that it does not touch the background copy's.
    constexpr std::size_t kSmall = 4096;
    unsigned char* small_dev = nullptr;
    unsigned char* small_host = nullptr;
    CHECK(cudaSetDevice(0));
    CHECK(cudaMalloc(&small_dev, kSmall));
    CHECK(cudaMallocHost(&small_host, kSmall));
    std::memset(small_host, 0x5a, kSmall);
    unsigned int* peer_src = nullptr;
    int can = 0;
    if (gpus == 2) {
        CHECK(cudaSetDevice(1));
        CHECK(cudaMalloc(&g[1].peer_dst, 4 * kBackground));
        CHECK(cudaSetDevice(0));
        CHECK(cudaMalloc(&peer_src, 4 * kBackground));
        CHECK(cudaDeviceCanAccessPeer(&can, 0, 1));
    }
    CHECK(cudaSetDevice(0));
    if (can) {
        const cudaError_t e = cudaDeviceEnablePeerAccess(1, 0);
        if (e == cudaErrorPeerAccessAlreadyEnabled) {
            (void)cudaGetLastError();
        } else {
            CHECK(e);
        }
    }
    int can10 = 0;
    if (gpus == 2) {
        CHECK(cudaDeviceCanAccessPeer(&can10, 1, 0));
        if (can10) {
            CHECK(cudaSetDevice(1));
            const cudaError_t e = cudaDeviceEnablePeerAccess(0, 0);
            if (e == cudaErrorPeerAccessAlreadyEnabled) {
                (void)cudaGetLastError();
            } else {
                CHECK(e);
            }
            CHECK(cudaSetDevice(0));
        }
    }
    // Round-trip events: GPU 0 records K + 1 (timed), GPU 1 records K.
    // (`hop`: E and F of each hop, 2K.)
    std::vector<cudaEvent_t> e0(2 * static_cast<std::size_t>(k_trips) + 1), e1(static_cast<std::size_t>(k_trips));
    CHECK(cudaSetDevice(0));
    for (auto& e : e0) CHECK(cudaEventCreate(&e));
    CHECK(cudaSetDevice(other));
    for (auto& e : e1) CHECK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
    cudaStream_t pong{};  // the second side's stream (GPU 1's ping, or a second stream of GPU 0)
    if (one_gpu) {
        CHECK(cudaSetDevice(0));
        CHECK(cudaStreamCreateWithFlags(&pong, cudaStreamNonBlocking));
    } else {
        pong = g[1].ping;
    }

    std::printf("mode,case,rep,trips,trip_us,bg_start_us,bg_end_us,inside\n");
    const std::vector<std::string> cases = seen   ? std::vector<std::string>{"idle", "h2d0", "h2d1", "d2h0", "d2h1", "peer01"}
                                           : one_gpu ? std::vector<std::string>{"idle", "d2h0", "h2d0", "peer01", "peer10", "kern0"}
                                                : std::vector<std::string>{"idle", "d2h0", "d2h1", "h2d0", "h2d1", "d2h01", "peer01", "kern0"};
    for (const std::string& c : cases) {
        if ((c == "peer01" && !can) || (c == "peer10" && !can10)) {
            std::fprintf(stderr, "%s: no peer access that way (or no second GPU); left out\n", c.c_str());
            continue;
        }
        const bool out0 = c == "d2h0" || c == "d2h01", out1 = c == "d2h1" || c == "d2h01";
        const bool in0 = c == "h2d0", in1 = c == "h2d1", peer = c == "peer01", kern = c == "kern0", peer_in = c == "peer10";
        // Sources with a pattern: device buffers for copies out, host buffers for copies in.
        for (int d = 0; d < gpus; ++d) {
            CHECK(cudaSetDevice(d));
            fill<<<1024, 256>>>(g[d].dev, words, 11u + static_cast<unsigned>(d));
            CHECK(cudaGetLastError());
            CHECK(cudaDeviceSynchronize());
            for (std::size_t i = 0; i < words; ++i) g[d].host[i] = static_cast<unsigned int>(i) * 2654435761u + 21u + static_cast<unsigned>(d);
        }
        if (peer) {
            CHECK(cudaSetDevice(0));
            fill<<<1024, 256>>>(peer_src, 4 * words, 31u);
            CHECK(cudaGetLastError());
            CHECK(cudaDeviceSynchronize());
        }
        if (peer_in) {
            CHECK(cudaSetDevice(1));
            fill<<<1024, 256>>>(g[1].peer_dst, 4 * words, 41u);
            CHECK(cudaGetLastError());
            CHECK(cudaDeviceSynchronize());
        }
        for (int r = 0; r < kWarmup + kReps; ++r) {
            for (int d = 0; d < gpus; ++d) {
                CHECK(cudaSetDevice(d));
                CHECK(cudaDeviceSynchronize());
            }
            // Background first, so that it runs before the spin ends and outlasts the round trips.
            for (int d = 0; d < gpus; ++d) {
                const bool out = d == 0 ? out0 : out1, in = d == 0 ? in0 : in1, pr = peer && d == 0, kr = kern && d == 0,
                           pi = peer_in && d == 1;
                if (!out && !in && !pr && !kr && !pi) continue;
                CHECK(cudaSetDevice(d));
                CHECK(cudaEventRecord(g[d].bg_start, g[d].bg));
                if (out) CHECK(cudaMemcpyAsync(g[d].host, g[d].dev, kBackground, cudaMemcpyDeviceToHost, g[d].bg));
                if (in) CHECK(cudaMemcpyAsync(g[d].dev, g[d].host, kBackground, cudaMemcpyHostToDevice, g[d].bg));
                if (pr) CHECK(cudaMemcpyPeerAsync(g[1].peer_dst, 1, peer_src, 0, 4 * kBackground, g[0].bg));
                // GPU 1 -> GPU 0: GPU 1's engine writes into GPU 0 (its 1 GiB buffer), GPU 0 receiving.
                if (pi) CHECK(cudaMemcpyPeerAsync(peer_src, 0, g[1].peer_dst, 1, 4 * kBackground, g[1].bg));
                if (kr) {
                    spin<<<1, 1, 0, g[0].bg>>>(static_cast<unsigned long long>(4e6));
                    CHECK(cudaGetLastError());
                }
                CHECK(cudaEventRecord(g[d].bg_end, g[d].bg));
            }
            if (hop) {
                // One hop at a time within GPU 0: E behind a spin on one stream, F behind the other
                // stream's wait for it; the hops queued behind one another (K x ~20 us, inside the copy).
                CHECK(cudaSetDevice(0));
                for (int k = 0; k < k_trips; ++k) {
                    spin<<<1, 1, 0, g[0].ping>>>(static_cast<unsigned long long>(20e3));
                    CHECK(cudaGetLastError());
                    // The small copy has buffers of its own; its data is not checked (a fixed pattern
                    // one way, whatever GPU memory holds the other), the background copy's is.
                    if (behind == "d2h") CHECK(cudaMemcpyAsync(small_host, small_dev, kSmall, cudaMemcpyDeviceToHost, g[0].ping));
                    if (behind == "h2d") CHECK(cudaMemcpyAsync(small_dev, small_host, kSmall, cudaMemcpyHostToDevice, g[0].ping));
                    CHECK(cudaEventRecord(e0[2 * static_cast<std::size_t>(k)], g[0].ping));
                    CHECK(cudaStreamWaitEvent(pong, e0[2 * static_cast<std::size_t>(k)], 0));
                    CHECK(cudaEventRecord(e0[2 * static_cast<std::size_t>(k) + 1], pong));
                }
                for (int d = 0; d < gpus; ++d) {
                    CHECK(cudaSetDevice(d));
                    CHECK(cudaDeviceSynchronize());
                }
                CHECK(cudaSetDevice(0));
                if (r < kWarmup) continue;
                double sum = 0;
                for (int k = 0; k < k_trips; ++k) {
                    sum += elapsed_us(e0[2 * static_cast<std::size_t>(k)], e0[2 * static_cast<std::size_t>(k) + 1]);
                }
                std::printf("%s,%s,%d,%d,%.3f,0,0,1\n", behind.empty() ? "hop" : ("hop-" + behind).c_str(), c.c_str(), r - kWarmup, k_trips,
                            sum / k_trips);
                continue;
            }
            if (seen) {
                // One wait at a time: E behind a spin on GPU 0, F behind GPU 1's wait for it; the
                // CPU sees each done. The background copy outlasts the K waits (about 40 us each).
                double sum = 0;
                for (int k = 0; k < k_trips; ++k) {
                    CHECK(cudaSetDevice(0));
                    spin<<<1, 1, 0, g[0].ping>>>(static_cast<unsigned long long>(30e3));
                    CHECK(cudaGetLastError());
                    CHECK(cudaEventRecord(e0[0], g[0].ping));
                    CHECK(cudaSetDevice(1));
                    CHECK(cudaStreamWaitEvent(g[1].ping, e0[0], 0));
                    CHECK(cudaEventRecord(e1[0], g[1].ping));
                    const auto t0 = std::chrono::steady_clock::now();
                    double te = -1, tf = -1;
                    while (tf < 0) {
                        const auto now_us = [&] { return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count(); };
                        if (te < 0) {
                            const cudaError_t e = cudaEventQuery(e0[0]);
                            if (e == cudaSuccess) te = now_us();
                            else if (e != cudaErrorNotReady) CHECK(e);
                            continue;
                        }
                        const cudaError_t e = cudaEventQuery(e1[0]);
                        if (e == cudaSuccess) tf = now_us();
                        else if (e != cudaErrorNotReady) CHECK(e);
                    }
                    sum += tf - te;
                }
                for (int d = 0; d < gpus; ++d) {
                    CHECK(cudaSetDevice(d));
                    CHECK(cudaDeviceSynchronize());
                }
                CHECK(cudaSetDevice(0));
                if (r < kWarmup) continue;
                std::printf("seen,%s,%d,%d,%.3f,0,0,1\n", c.c_str(), r - kWarmup, k_trips, sum / k_trips);
                continue;
            }
            CHECK(cudaSetDevice(0));
            spin<<<1, 1, 0, g[0].ping>>>(static_cast<unsigned long long>(kSpinUs * 1e3));
            CHECK(cudaGetLastError());
            CHECK(cudaEventRecord(e0[0], g[0].ping));
            for (int k = 0; k < k_trips && records; ++k) CHECK(cudaEventRecord(e0[static_cast<std::size_t>(k) + 1], g[0].ping));
            for (int k = 0; k < k_trips && !records; ++k) {
                CHECK(cudaSetDevice(other));
                CHECK(cudaStreamWaitEvent(pong, e0[static_cast<std::size_t>(k)], 0));
                CHECK(cudaEventRecord(e1[static_cast<std::size_t>(k)], pong));
                CHECK(cudaSetDevice(0));
                CHECK(cudaStreamWaitEvent(g[0].ping, e1[static_cast<std::size_t>(k)], 0));
                CHECK(cudaEventRecord(e0[static_cast<std::size_t>(k) + 1], g[0].ping));
            }
            for (int d = 0; d < gpus; ++d) {
                CHECK(cudaSetDevice(d));
                CHECK(cudaDeviceSynchronize());
            }
            CHECK(cudaSetDevice(0));
            if (r < kWarmup) continue;
            const double trips = elapsed_us(e0[0], e0[static_cast<std::size_t>(k_trips)]);
            double bs = 0, be = 0;
            int inside = 1;
            if (out0 || in0 || peer || kern) {
                bs = -elapsed_us(g[0].bg_start, e0[0]);
                be = elapsed_us(e0[0], g[0].bg_end);
                inside = bs <= 0.0 && be >= trips ? 1 : 0;
            }
            std::printf("%s,%s,%d,%d,%.3f,%.3f,%.3f,%d\n", records ? "records" : same ? "same" : "cross", c.c_str(), r - kWarmup, k_trips, trips / k_trips, bs, be, inside);
        }
        // The background copies' data, once a case.
        for (int d = 0; d < gpus; ++d) {
            const bool out = d == 0 ? out0 : out1, in = d == 0 ? in0 : in1;
            CHECK(cudaSetDevice(d));
            if (out && !check_host(g[d].host, words, 11u + static_cast<unsigned>(d))) {
                std::fprintf(stderr, "%s: GPU %d's copy out: wrong data\n", c.c_str(), d);
                return 1;
            }
            if (in) {
                std::vector<unsigned int> back(words);
                CHECK(cudaMemcpy(back.data(), g[d].dev, kBackground, cudaMemcpyDeviceToHost));
                if (!check_host(back.data(), words, 21u + static_cast<unsigned>(d))) {
                    std::fprintf(stderr, "%s: GPU %d's copy in: wrong data\n", c.c_str(), d);
                    return 1;
                }
            }
        }
        if (peer || peer_in) {
            std::vector<unsigned int> a(4 * words), b(4 * words);
            CHECK(cudaSetDevice(0));
            CHECK(cudaMemcpy(a.data(), peer_src, 4 * kBackground, cudaMemcpyDeviceToHost));
            CHECK(cudaSetDevice(1));
            CHECK(cudaMemcpy(b.data(), g[1].peer_dst, 4 * kBackground, cudaMemcpyDeviceToHost));
            if (std::memcmp(a.data(), b.data(), a.size() * sizeof(unsigned int)) != 0) {
                std::fprintf(stderr, "%s: wrong data\n", c.c_str());
                return 1;
            }
        }
        std::fprintf(stderr, "%s done\n", c.c_str());
    }
    return 0;
}
