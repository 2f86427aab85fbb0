// When does each copy of dmaprobe's duplex burst move its data, in the pair and alone? (one GPU)
// results/h100-sxm/isolating/pair-ends: in the pair the two directions run in lockstep, each copy
// into the GPU 0.57 / 0.89 / 1.62 us slower than alone at 16 / 64 / 256 KiB (the model 0.34 / 0.35
// / 0.69), each copy out of it 1.55 / 1.96 / 2.76 (the model 1.29 / 1.18 / 0.99). Whether that is
// before a copy's data (its start), in its data (the port's share) or after it (its release) the
// events cannot say. Here a one-thread watcher kernel on a third stream, started before the gate,
// polls each copy into the GPU's first and last word in GPU memory and stamps %globaltimer as each
// lands; the gate kernel stamps when it ends. A CPU thread (on CPU 2) does the same for the copies
// out of the GPU in host memory (CLOCK_MONOTONIC_RAW), counted from when it sees a flag the gate
// kernel writes into host memory as it ends (a store of the GPU's to host memory, about a
// microsecond on its way: the two watchers' origins differ by that).
//
// The calls are pairends.cu's `last` (dmaprobe's pair exactly: stream 1 runs the gate kernel and
// records the start event, stream 2 waits for it; stream 1 copies into the GPU, stream 2 out of
// it, 1 MiB each way in copies of `bytes`; an event on each stream, stream 1 waits for stream 2's,
// the stop event). Modes: `pair`, `h2d` alone and `d2h` alone (the other direction's copies left
// out, every other call kept), each at 16, 64 and 256 KiB; and `mixed`, pairs of 16 KiB copies one
// way beside 64 or 256 KiB copies the other; `one_pair`, `one_h2d`, `one_d2h`: dmaprobe's single
// pair, one copy each way (the main plan's duplex rows), 4 KiB to 1 MiB; and `stamp_pair`,
// `stamp_h2d`, `stamp_mixed`: bursts whose copies into the GPU bring back, in their first and last
// word, the CPU's clock when the host served those words' reads (a CPU thread on CPU 4 writes it
// there over and over): rows `served_first`, `served_last`, us after the CPU saw the gate's flag,
// the clock of the copies out of the GPU. Every repetition writes new marker words at each copy's first and
// last word of the host source (the rest is written and flushed once per cell) and of the GPU
// source, so the watchers know the words of this repetition's copies.
//
// Build: nvcc -O3 -arch=sm_90 pairwatch.cu -o pairwatch      Run: ./pairwatch > pairwatch.csv
// 5 warm-ups and 40 repetitions per cell. Rows (`bytes`, `down_bytes`: the copies' sizes into and
// out of the GPU, 0 for a direction left out): per copy k the first and last word's landing
// (`first`, `last`: into the GPU, us after the gate kernel's end stamp; `down_first`, `down_last`:
// out of it, us after the CPU saw the gate's flag), and the events h2d_end, d2h_end and stop (us
// after the start event); p10, median, p90 over the repetitions. Both directions' data are
// verified after every cell; a watcher that waits more than 20 ms for a word stops the program.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include <immintrin.h>
#include <sched.h>
#include <time.h>

namespace {

#define CHECK(call)                                                                                      \
    do {                                                                                                 \
        const cudaError_t e_ = (call);                                                                   \
        if (e_ != cudaSuccess) {                                                                         \
            std::fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call, cudaGetErrorString(e_)); \
            std::exit(1);                                                                                \
        }                                                                                                \
    } while (0)

constexpr std::size_t kBurst = 1 << 20;  // bytes each way
constexpr std::size_t kMaxCopies = 64;   // 16 KiB copies
constexpr int kWarm = 5;
constexpr int kReps = 40;
constexpr int kRepsEach = 300;  // PAIRWATCH_MODE=reps: repetitions per cell, each one printed
constexpr unsigned long long kHoldNs = 1'000'000;    // longer than every call of a cell
constexpr unsigned long long kGiveUpNs = 20'000'000;  // a word that never lands

__device__ __forceinline__ unsigned long long now_ns() {
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}

// The gate: spins, then stamps its end.
__global__ void gate_kernel(unsigned long long ns, unsigned long long* end_stamp, volatile std::uint32_t* host_flag,
                            std::uint32_t token) {
    const unsigned long long t0 = now_ns();
    while (now_ns() - t0 < ns) {
    }
    *end_stamp = now_ns();
    *host_flag = token;
}

// This repetition's markers into the GPU source's first and last word of each copy.
__global__ void mark_kernel(std::uint32_t* src, std::size_t words_per_copy, std::size_t copies, const std::uint32_t* markers) {
    for (std::size_t k = threadIdx.x; k < copies; k += blockDim.x) {
        src[k * words_per_copy] = markers[2 * k];
        src[k * words_per_copy + words_per_copy - 1] = markers[2 * k + 1];
    }
}

long long cpu_ns() {
    timespec t{};
    clock_gettime(CLOCK_MONOTONIC_RAW, &t);
    return static_cast<long long>(t.tv_sec) * 1'000'000'000LL + t.tv_nsec;
}

// The CPU's watcher: the gate's flag, then each copy's first and last word in host memory.
// Stamps in ns after the flag; false if a word never came.
bool watch_host(const volatile std::uint32_t* flag, std::uint32_t token, const volatile std::uint32_t* dst,
                std::size_t words_per_copy, std::size_t copies, const std::uint32_t* markers, long long* stamps,
                long long* gate_at) {
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(2, &set);
    sched_setaffinity(0, sizeof(set), &set);
    const long long t0 = cpu_ns();
    const auto wait_for = [&](const volatile std::uint32_t* w, std::uint32_t want) {
        while (*w != want) {
            if (cpu_ns() - t0 > static_cast<long long>(kGiveUpNs)) return false;
        }
        return true;
    };
    if (!wait_for(flag, token)) return false;
    const long long gate = cpu_ns();
    *gate_at = gate;
    for (std::size_t k = 0; k < copies; ++k) {
        for (int end = 0; end < 2; ++end) {
            if (!wait_for(dst + k * words_per_copy + (end == 0 ? 0 : words_per_copy - 1), markers[2 * k + end])) return false;
            stamps[2 * k + end] = cpu_ns() - gate;
        }
    }
    return true;
}

// The `stamp_*` cells' CPU thread (on CPU 4): writes its clock, less `base`, into the first and last
// word of each copy's host source, over and over until told to stop. A copy engine's read of such a
// word brings the time the host served it (to within one pass, a few tens of ns).
void stamp_sources(std::uint32_t* src, std::size_t words_per_copy, std::size_t copies, long long base,
                   const volatile bool* stop) {
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(4, &set);
    sched_setaffinity(0, sizeof(set), &set);
    while (!*stop) {
        const auto v = static_cast<std::uint32_t>(cpu_ns() - base) | 1u;
        for (std::size_t k = 0; k < copies; ++k) {
            reinterpret_cast<volatile std::uint32_t*>(src)[k * words_per_copy] = v;
            reinterpret_cast<volatile std::uint32_t*>(src)[k * words_per_copy + words_per_copy - 1] = v;
        }
    }
}

// Per copy k: waits for its first, then its last word to hold this repetition's markers and
// stamps each. Volatile loads go to the L2, where the copy engine's writes land. Without markers
// (the `stamp_*` cells) it waits for the word to be other than 0 and keeps what it found in
// `values`: the CPU's clock when the host served that word's read.
__global__ void watch_kernel(const std::uint32_t* dst, std::size_t words_per_copy, std::size_t copies,
                             const std::uint32_t* markers, unsigned long long* stamps, int* gave_up, std::uint32_t* values) {
    const unsigned long long t0 = now_ns();
    for (std::size_t k = 0; k < copies; ++k) {
        for (int end = 0; end < 2; ++end) {
            const volatile std::uint32_t* w = dst + k * words_per_copy + (end == 0 ? 0 : words_per_copy - 1);
            const std::uint32_t want = markers != nullptr ? markers[2 * k + end] : 0;
            std::uint32_t seen = *w;
            while (markers != nullptr ? seen != want : seen == 0) {
                if (now_ns() - t0 > kGiveUpNs) {
                    *gave_up = 1;
                    return;
                }
                seen = *w;
            }
            stamps[2 * k + end] = now_ns();
            values[2 * k + end] = seen;
        }
    }
}

__device__ __host__ inline unsigned char pattern(std::size_t i, std::uint32_t seed) {
    return static_cast<unsigned char>((static_cast<std::uint32_t>(i) * 2654435761u ^ seed) >> 7);
}

__global__ void fill_kernel(unsigned char* p, std::size_t n, std::uint32_t seed) {
    for (std::size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += std::size_t{gridDim.x} * blockDim.x) p[i] = pattern(i, seed);
}

// A marker no earlier repetition of any cell wrote at that word, and never the pattern's; `down`
// for the copies out of the GPU.
std::uint32_t marker(std::uint32_t cell, int rep, std::size_t k, int end, bool down = false) {
    return 0x80000000u | (down ? 0x40000000u : 0u) | (cell << 20) | (static_cast<std::uint32_t>(rep) << 8) |
           (static_cast<std::uint32_t>(k) << 1) | static_cast<std::uint32_t>(end);
}

struct Stats {
    double p10, median, p90;
};

Stats stats(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    const auto at = [&](double q) { return v[static_cast<std::size_t>(q * static_cast<double>(v.size() - 1) + 0.5)]; };
    return {at(0.1), at(0.5), at(0.9)};
}

}  // namespace

int main() {
    // PAIRWATCH_MODE=reps: only dmaprobe's single pair and each of its copies alone, 4-256 KiB, every
    // repetition printed (the medians mix the copy into the GPU's two ways of starting).
    const char* mode_env = std::getenv("PAIRWATCH_MODE");
    const bool each = mode_env != nullptr && std::strcmp(mode_env, "reps") == 0;
    if (mode_env != nullptr && !each) {
        std::fprintf(stderr, "PAIRWATCH_MODE must be reps or unset, not '%s'\n", mode_env);
        return 2;
    }
    const int reps = each ? kRepsEach : kReps;
    CHECK(cudaSetDevice(0));
    unsigned char *h_src = nullptr, *h_dst = nullptr, *d_dst = nullptr, *d_src = nullptr, *back = nullptr;
    CHECK(cudaMallocHost(&h_src, kBurst));
    CHECK(cudaMallocHost(&h_dst, kBurst));
    CHECK(cudaMallocHost(&back, kBurst));
    CHECK(cudaMalloc(&d_dst, kBurst));
    CHECK(cudaMalloc(&d_src, kBurst));
    std::uint32_t* d_markers = nullptr;
    std::uint32_t* d_markers_down = nullptr;
    std::uint32_t* h_flag = nullptr;  // the gate's flag, in host memory
    CHECK(cudaMallocHost(&h_flag, 64));
    *h_flag = 0;
    CHECK(cudaMalloc(&d_markers_down, 2 * kMaxCopies * sizeof(std::uint32_t)));
    unsigned long long* d_stamps = nullptr;  // [0]: the gate's end; then 2 per copy
    int* d_gave_up = nullptr;
    std::uint32_t* d_values = nullptr;  // what the watcher found in each word
    CHECK(cudaMalloc(&d_values, 2 * kMaxCopies * sizeof(std::uint32_t)));
    CHECK(cudaMalloc(&d_markers, 2 * kMaxCopies * sizeof(std::uint32_t)));
    CHECK(cudaMalloc(&d_stamps, (1 + 2 * kMaxCopies) * sizeof(unsigned long long)));
    CHECK(cudaMalloc(&d_gave_up, sizeof(int)));
    CHECK(cudaMemset(d_gave_up, 0, sizeof(int)));
    cudaStream_t s1, s2, s3;
    CHECK(cudaStreamCreateWithFlags(&s1, cudaStreamNonBlocking));
    CHECK(cudaStreamCreateWithFlags(&s2, cudaStreamNonBlocking));
    CHECK(cudaStreamCreateWithFlags(&s3, cudaStreamNonBlocking));
    cudaEvent_t start, stop, end_up, end_down;
    CHECK(cudaEventCreate(&start));
    CHECK(cudaEventCreate(&stop));
    CHECK(cudaEventCreate(&end_up));
    CHECK(cudaEventCreate(&end_down));
    // Load every kernel before the first watcher runs: a kernel loaded lazily while the watcher
    // spins would wait for it.
    gate_kernel<<<1, 1>>>(0, d_stamps, h_flag, 0);
    watch_kernel<<<1, 1>>>(reinterpret_cast<const std::uint32_t*>(d_dst), 1, 0, d_markers, d_stamps + 1, d_gave_up, d_values);
    mark_kernel<<<1, 1>>>(reinterpret_cast<std::uint32_t*>(d_src), 1, 0, d_markers_down);
    CHECK(cudaGetLastError());
    CHECK(cudaDeviceSynchronize());
    std::printf(each ? "bytes,down_bytes,mode,rep,first_us,last_us,down_first_us,down_last_us,h2d_end_us,d2h_end_us,stop_us\n"
                     : "bytes,down_bytes,mode,what,k,p10_us,median_us,p90_us\n");
    std::uint32_t seed = 1, cell = 0;
    std::vector<std::uint32_t> markers(2 * kMaxCopies), markers_down(2 * kMaxCopies);
    std::vector<long long> host_stamps(2 * kMaxCopies);
    std::vector<std::uint32_t> values(2 * kMaxCopies);
    std::uint32_t token = 0;
    std::vector<unsigned long long> stamps(1 + 2 * kMaxCopies);
    // Each size each way, alone and in the pair; then pairs of unlike sizes (`mixed`), whose copies
    // cannot keep in step: whether what a copy loses in the pair follows its own size or the other's.
    // Last, dmaprobe's single pair (the main plan's duplex rows): one copy each way (`one_pair`), and
    // each alone (`one_h2d`, `one_d2h`), 4 KiB to 1 MiB. Then `stamp_*`: bursts whose copies into the
    // GPU bring back when the host served the reads of their first and last word (stamp_sources).
    struct Cell {
        std::size_t up, down;  // copy sizes into / out of the GPU; 0: that direction left out
        const char* mode;
        bool single = false;  // one copy each way instead of 1 MiB
        bool stamp = false;   // the host sources' first and last words carry the CPU's clock
    };
    constexpr std::size_t k16 = std::size_t{16} << 10, k64 = std::size_t{64} << 10, k256 = std::size_t{256} << 10;
    const Cell cells[] = {{k16, k16, "pair"},    {k16, 0, "h2d"},     {0, k16, "d2h"},     {k64, k64, "pair"},
                          {k64, 0, "h2d"},       {0, k64, "d2h"},     {k256, k256, "pair"}, {k256, 0, "h2d"},
                          {0, k256, "d2h"},      {k16, k256, "mixed"}, {k256, k16, "mixed"}, {k16, k64, "mixed"},
                          {k64, k16, "mixed"}};
    std::vector<Cell> all;
    if (!each) all.assign(std::begin(cells), std::end(cells));
    for (const std::size_t kib : {4, 16, 64, 256, 1024}) {
        if (each && kib > 256) continue;
        const std::size_t b = kib << 10;
        all.push_back({b, b, "one_pair", true});
        all.push_back({b, 0, "one_h2d", true});
        all.push_back({0, b, "one_d2h", true});
    }
    for (const Cell st : each ? std::vector<Cell>{} : std::vector<Cell>{Cell{k64, k64, "stamp_pair"}, Cell{k64, 0, "stamp_h2d"}, Cell{k256, k256, "stamp_pair"},
                          Cell{k256, 0, "stamp_h2d"}, Cell{k16, k256, "stamp_mixed"}, Cell{k16, 0, "stamp_h2d"}}) {
        all.push_back(st);
        all.back().stamp = true;
    }
    for (const Cell& c : all) {
        {
            const char* mode = c.mode;
            const bool do_up = c.up > 0;
            const bool do_down = c.down > 0;
            const std::size_t up_bytes = do_up ? c.up : c.down, down_bytes = do_down ? c.down : c.up;
            const std::size_t up_copies = c.single ? 1 : kBurst / up_bytes, down_copies = c.single ? 1 : kBurst / down_bytes;
            const std::size_t up_words = up_bytes / sizeof(std::uint32_t), down_words = down_bytes / sizeof(std::uint32_t);
            const std::size_t bytes = do_up ? up_bytes : down_bytes;
            ++seed;
            ++cell;
            for (std::size_t i = 0; i < kBurst; ++i) h_src[i] = pattern(i, seed);
            for (std::size_t off = 0; off < kBurst; off += 64) _mm_clflush(h_src + off);
            _mm_mfence();
            fill_kernel<<<264, 256>>>(d_src, kBurst, seed + 1000);
            CHECK(cudaGetLastError());
            CHECK(cudaMemset(d_dst, 0, kBurst));
            CHECK(cudaDeviceSynchronize());
            std::vector<std::vector<double>> first(up_copies), last(up_copies), down_first(down_copies), down_last(down_copies);
            std::vector<std::vector<double>> served_first(up_copies), served_last(up_copies);
            std::vector<double> t_stop, t_end_up, t_end_down;
            int rep = 0;
            for (; rep < kWarm + reps; ++rep) {
                auto* words_src = reinterpret_cast<std::uint32_t*>(h_src);
                for (std::size_t k = 0; k < up_copies; ++k) {
                    for (int end = 0; end < 2; ++end) {
                        markers[2 * k + end] = marker(cell, rep, k, end);
                        words_src[k * up_words + (end == 0 ? 0 : up_words - 1)] = markers[2 * k + end];
                    }
                }
                for (std::size_t k = 0; k < down_copies; ++k) {
                    for (int end = 0; end < 2; ++end) markers_down[2 * k + end] = marker(cell, rep, k, end, true);
                }
                CHECK(cudaMemcpy(d_markers, markers.data(), 2 * up_copies * sizeof(std::uint32_t), cudaMemcpyHostToDevice));
                CHECK(cudaMemcpy(d_markers_down, markers_down.data(), 2 * down_copies * sizeof(std::uint32_t), cudaMemcpyHostToDevice));
                mark_kernel<<<1, 64>>>(reinterpret_cast<std::uint32_t*>(d_src), down_words, down_copies, d_markers_down);
                CHECK(cudaGetLastError());
                CHECK(cudaDeviceSynchronize());
                ++token;
                bool host_seen = true;
                long long gate_at = 0;
                std::thread host_watcher;
                if (do_down || c.stamp) {
                    host_watcher = std::thread([&] {
                        host_seen = watch_host(h_flag, token, reinterpret_cast<const volatile std::uint32_t*>(h_dst), down_words,
                                               do_down ? down_copies : 0, markers_down.data(), host_stamps.data(), &gate_at);
                    });
                }
                // The stamp cells: the words the watcher waits for start at 0 and take the CPU's clock.
                volatile bool stop_stamping = false;
                const long long base = cpu_ns();
                std::thread stamper;
                if (c.stamp) {
                    CHECK(cudaMemset(d_dst, 0, up_copies * up_bytes));
                    CHECK(cudaDeviceSynchronize());  // the legacy stream's memset before the watcher's stream
                    stamper = std::thread(stamp_sources, words_src, up_words, up_copies, base, &stop_stamping);
                }
                if (do_up) {
                    watch_kernel<<<1, 1, 0, s3>>>(reinterpret_cast<const std::uint32_t*>(d_dst), up_words, up_copies,
                                                  c.stamp ? nullptr : d_markers, d_stamps + 1, d_gave_up, d_values);
                    CHECK(cudaGetLastError());
                }
                gate_kernel<<<1, 1, 0, s1>>>(kHoldNs, d_stamps, h_flag, token);
                CHECK(cudaGetLastError());
                CHECK(cudaEventRecord(start, s1));
                CHECK(cudaStreamWaitEvent(s2, start, 0));
                for (std::size_t k = 0; do_up && k < up_copies; ++k) {
                    CHECK(cudaMemcpyAsync(d_dst + k * up_bytes, h_src + k * up_bytes, up_bytes, cudaMemcpyHostToDevice, s1));
                }
                for (std::size_t k = 0; do_down && k < down_copies; ++k) {
                    CHECK(cudaMemcpyAsync(h_dst + k * down_bytes, d_src + k * down_bytes, down_bytes, cudaMemcpyDeviceToHost, s2));
                }
                CHECK(cudaEventRecord(end_up, s1));
                CHECK(cudaEventRecord(end_down, s2));
                CHECK(cudaStreamWaitEvent(s1, end_down, 0));
                CHECK(cudaEventRecord(stop, s1));
                CHECK(cudaEventSynchronize(stop));
                CHECK(cudaStreamSynchronize(s3));
                if (host_watcher.joinable()) host_watcher.join();
                stop_stamping = true;
                if (stamper.joinable()) stamper.join();
                int gave_up = 0;
                CHECK(cudaMemcpy(&gave_up, d_gave_up, sizeof(int), cudaMemcpyDeviceToHost));
                if (gave_up || !host_seen) {
                    std::fprintf(stderr, "watcher gave up: %zu / %zu B copies, %s, repetition %d\n", c.up, c.down, mode, rep);
                    return 1;
                }
                if (rep < kWarm) continue;
                CHECK(cudaMemcpy(stamps.data(), d_stamps, (1 + 2 * up_copies) * sizeof(unsigned long long), cudaMemcpyDeviceToHost));
                for (std::size_t k = 0; do_up && k < up_copies; ++k) {
                    first[k].push_back(static_cast<double>(static_cast<long long>(stamps[1 + 2 * k] - stamps[0])) / 1000.0);
                    last[k].push_back(static_cast<double>(static_cast<long long>(stamps[2 + 2 * k] - stamps[0])) / 1000.0);
                }
                if (c.stamp) {
                    CHECK(cudaMemcpy(values.data(), d_values, 2 * up_copies * sizeof(std::uint32_t), cudaMemcpyDeviceToHost));
                    for (std::size_t k = 0; k < up_copies; ++k) {
                        // The CPU's clock at the read, from the gate's flag seen (both less `base`).
                        const auto at = [&](int end) { return static_cast<double>(static_cast<long long>(values[2 * k + end]) - (gate_at - base)) / 1000.0; };
                        served_first[k].push_back(at(0));
                        served_last[k].push_back(at(1));
                    }
                }
                for (std::size_t k = 0; do_down && k < down_copies; ++k) {
                    down_first[k].push_back(static_cast<double>(host_stamps[2 * k]) / 1000.0);
                    down_last[k].push_back(static_cast<double>(host_stamps[2 * k + 1]) / 1000.0);
                }
                float ms = 0;
                CHECK(cudaEventElapsedTime(&ms, start, stop));
                t_stop.push_back(ms * 1000.0);
                CHECK(cudaEventElapsedTime(&ms, start, end_up));
                t_end_up.push_back(ms * 1000.0);
                CHECK(cudaEventElapsedTime(&ms, start, end_down));
                t_end_down.push_back(ms * 1000.0);
                if (each) {
                    const auto cell_of = [](bool on, const std::vector<double>& v) {
                        return on ? std::to_string(v.back()) : std::string();
                    };
                    std::printf("%zu,%zu,%s,%d,%s,%s,%s,%s,%s,%s,%.3f\n", c.up, c.down, mode, rep - kWarm,
                                cell_of(do_up, first[0]).c_str(), cell_of(do_up, last[0]).c_str(),
                                cell_of(do_down, down_first[0]).c_str(), cell_of(do_down, down_last[0]).c_str(),
                                cell_of(do_up, t_end_up).c_str(), cell_of(do_down, t_end_down).c_str(), t_stop.back());
                }
            }
            // The data: the pattern, but for the last repetition's markers.
            CHECK(cudaMemcpy(back, d_dst, kBurst, cudaMemcpyDeviceToHost));
            const auto* back_words = reinterpret_cast<const std::uint32_t*>(back);
            for (std::size_t i = 0; do_up && i < up_copies * up_bytes; ++i) {
                const std::size_t w = i / sizeof(std::uint32_t), in = w % up_words;
                if (in == 0 || in == up_words - 1) continue;
                if (back[i] != pattern(i, seed)) {
                    std::fprintf(stderr, "verification failed: into the GPU, %zu B copies, %s, byte %zu\n", bytes, mode, i);
                    return 1;
                }
            }
            for (std::size_t k = 0; do_up && !c.stamp && k < up_copies; ++k) {
                if (back_words[k * up_words] != marker(cell, rep - 1, k, 0) ||
                    back_words[k * up_words + up_words - 1] != marker(cell, rep - 1, k, 1)) {
                    std::fprintf(stderr, "verification failed: into the GPU, %zu B copies, %s, markers of copy %zu\n", bytes, mode, k);
                    return 1;
                }
            }
            const auto* dst_words = reinterpret_cast<const std::uint32_t*>(h_dst);
            for (std::size_t i = 0; do_down && i < down_copies * down_bytes; ++i) {
                const std::size_t w = i / sizeof(std::uint32_t), in = w % down_words;
                if (in == 0 || in == down_words - 1) continue;
                if (h_dst[i] != pattern(i, seed + 1000)) {
                    std::fprintf(stderr, "verification failed: out of the GPU, %zu B copies, %s, byte %zu\n", bytes, mode, i);
                    return 1;
                }
            }
            for (std::size_t k = 0; do_down && k < down_copies; ++k) {
                if (dst_words[k * down_words] != marker(cell, rep - 1, k, 0, true) ||
                    dst_words[k * down_words + down_words - 1] != marker(cell, rep - 1, k, 1, true)) {
                    std::fprintf(stderr, "verification failed: out of the GPU, %zu B copies, %s, markers of copy %zu\n", bytes, mode, k);
                    return 1;
                }
            }
            if (each) {
                std::fflush(stdout);
                continue;
            }
            const auto line = [&](const char* what, std::size_t k, const std::vector<double>& v) {
                const Stats s = stats(v);
                std::printf("%zu,%zu,%s,%s,%zu,%.3f,%.3f,%.3f\n", c.up, c.down, mode, what, k, s.p10, s.median, s.p90);
            };
            for (std::size_t k = 0; do_up && k < up_copies; ++k) {
                line("first", k, first[k]);
                line("last", k, last[k]);
                if (c.stamp) {
                    line("served_first", k, served_first[k]);
                    line("served_last", k, served_last[k]);
                }
            }
            for (std::size_t k = 0; do_down && k < down_copies; ++k) {
                line("down_first", k, down_first[k]);
                line("down_last", k, down_last[k]);
            }
            if (do_up) line("h2d_end", up_copies - 1, t_end_up);
            if (do_down) line("d2h_end", down_copies - 1, t_end_down);
            line("stop", 0, t_stop);
            std::fflush(stdout);
        }
    }
    CHECK(cudaEventDestroy(start));
    CHECK(cudaEventDestroy(stop));
    CHECK(cudaEventDestroy(end_up));
    CHECK(cudaEventDestroy(end_down));
    CHECK(cudaStreamDestroy(s1));
    CHECK(cudaStreamDestroy(s2));
    CHECK(cudaStreamDestroy(s3));
    CHECK(cudaFree(d_markers));
    CHECK(cudaFree(d_markers_down));
    CHECK(cudaFree(d_values));
    CHECK(cudaFreeHost(h_flag));
    CHECK(cudaFree(d_stamps));
    CHECK(cudaFree(d_gave_up));
    CHECK(cudaFree(d_dst));
    CHECK(cudaFree(d_src));
    CHECK(cudaFreeHost(h_src));
    CHECK(cudaFreeHost(h_dst));
    CHECK(cudaFreeHost(back));
    return 0;
}
