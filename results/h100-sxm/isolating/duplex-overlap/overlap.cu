// dmaprobe's gated duplex pair, issued call for call as dmaprobe does (gate kernel on s1, start
// event, s2 waits for it, the copy into the GPU on s1 and the one out of it on s2, an event behind
// each, s1 waits for s2's event, the stop event), then a host delay D, then the gate opens. Each
// copy's end and the stop event's are timed from the start event. Three modes (the argument):
//
//  overlap  Does the copy into the GPU slow the copy out of it? In the main plan the pair's copy
//           out of the GPU grows by 2-3 us more from 16 to 256 KiB than the same copy alone
//           (stream-handoffs/duplexphase.cu: its floor over a host delay grows at 18 GB/s from 4
//           to 64 KiB, where a blocking copy out of the GPU grows at 53). D from 0 to 8.5 us by
//           0.5; three shapes: both copies, the copy out of the GPU alone (no call for the copy
//           into it, every other call kept), the copy into the GPU alone; 4 KiB, 64 KiB, 256 KiB
//           and 1 MiB. Medians, and p10/p90 of each copy, over 60 repetitions after 5 warm-ups.
//  share    How much does a copy the other way cost a 1 MiB copy, by its size? The copy into the
//           GPU of A bytes and the one out of it of B bytes: B = 1 MiB with A = 0 (no call), 4 KiB,
//           64 KiB, 256 KiB, 1 MiB, and A = 1 MiB with B = 0, 4, 64, 256 KiB; D from 0 to 8 us by 1
//           (the mean over D averages where the polls put the copies). A loss that does not grow
//           with the other copy's size is its start's; one that does, a share of a rate.
//  reps     Every repetition as the main plan runs it (no delay), both copies, 4 KiB-1 MiB, 500
//           repetitions after 10 warm-ups: the distribution within one machine that a median of
//           the main plan summarises, with the CPU's time from the end of the call of each copy,
//           and from the start and the end of the stop event's call, to its store to the gate's
//           flag (where each copy's tries count from: ../submit-point).
//  alone    Do a copy's repetitions fall in the same clusters without the other copy? `reps`'
//           calls with one copy (the other's call left out, every other call kept), each way
//           alone and both, 4, 64 and 256 KiB, 500 repetitions after 10 warm-ups: where a copy
//           alone ends spreads over its channel's tries; what the pair adds is the other copy's.
//  behind   Is the copy into the GPU's two ways to go its place behind the gate kernel? `alone`'s
//           copy into the GPU alone, behind the gate kernel on its stream as dmaprobe has it, and
//           behind a wait for the start event recorded behind the gate kernel on a third stream
//           (as the copy out of the GPU waits); 4 and 64 KiB, 500 repetitions after 10 warm-ups.
//  source   Is it where the copy into the GPU reads? That copy alone behind the gate kernel, 4 and
//           64 KiB, 500 repetitions after 10 warm-ups, reading the same source every time, a
//           fresh one each time (2 MiB apart), or the same one read by a blocking copy just before.
//  idle     Does a copy into the GPU go two ways on an idle stream too? Each way, 1, 4 and 64 KiB,
//           with events on an idle stream (no gate), 500 repetitions after 10 warm-ups; and the
//           copy into the GPU of 1 KiB behind the gate (the front end writes copies that small).
//  sweep    Where each copy's tries fall, repetition by repetition: `overlap`'s host delay D before
//           the gate (0 to 8.5 us by 0.5) with each copy alone, 4 KiB, 100 repetitions after 5
//           warm-ups, every repetition written: the copy into the GPU's two ways apart, so that a
//           group's sawtooth in D is not a median jumping between them.
//  sizes    How does each copy alone behind the gate grow with its size? (Against the model's
//           pair, the copy into the GPU alone grows 2.4 us from 4 to 64 KiB, in the model 1.1;
//           event-timed copies on an idle stream grow 1.5, ../command-fetch.) The shapes of
//           `overlap` without the other copy: 4, 8, 16, 32, 64, 128 and 256 KiB, D from 0 to 8 us
//           by 0.5; medians and p10/p90 over 60 repetitions after 5 warm-ups.
//
//  overlap-large, reps-large (added 2026-11-29): `overlap` and `reps` at the main plan's other
//           pair sizes below 16 MiB, 16 KiB and 4 MiB: is a 4 MiB pair's copy out of the GPU still
//           first to end as at 1 MiB, and does the mean over D match the model's mean over phases?
//  growth   (added 2026-11-29) How does the pair grow per MiB from 1 to 16 MiB, against each copy
//           alone? Both copies and each alone, 1, 2, 4, 8, 16 MiB, D from 0 to 7 us by 1, medians
//           over 30 repetitions after 3 warm-ups.
//  reps-fill (added 2026-11-29) `reps` with the copy out of the GPU's source rewritten by a kernel
//           before every repetition, as dmaprobe does: does that set where the pair falls?
//
// Data verified per cell; every CUDA call checked; the gate gives up after 1 s; the CPU's time in
// each call (all cells) to stderr. (The leases before 94db115 ran these as overlap.cu, share.cu
// and reps.cu; lease bad95ebe's reps.csv lacks the CPU's columns.)
//
// Build: nvcc -O3 -arch=sm_90 overlap.cu -o overlap
// Run:   ./overlap overlap > overlap.csv 2> calls.csv; ./overlap share > share.csv 2> share-calls.csv;
//        ./overlap reps > reps.csv 2> reps-calls.csv; ./overlap sizes > sizes.csv 2> sizes-calls.csv
#include <cuda_runtime.h>
#include <immintrin.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <initializer_list>
#include <map>
#include <string>
#include <utility>
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

constexpr unsigned long long kGateTimeoutNs = 1'000'000'000;
constexpr std::size_t kMax = std::size_t{1} << 20;
// The buffers hold the largest copy of any mode (`growth`: 16 MiB).
constexpr std::size_t kAlloc = std::size_t{16} << 20;

__global__ void gate_kernel(volatile int* flag, int* timed_out) {
    unsigned long long t0;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
    while (*flag == 0) {
        unsigned long long t;
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
        if (t - t0 > kGateTimeoutNs) {
            *timed_out = 1;
            return;
        }
    }
}

// dmaprobe rewrites a copy's device source before every repetition with a kernel on the legacy
// stream and waits for it (CudaBackend::device_fill); `reps-fill` does the same to the copy out
// of the GPU's source, with the values it holds from the start.
__global__ void fill_source(unsigned char* p, std::size_t n) {
    for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < n;
         i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
        p[i] = static_cast<unsigned char>((i * 17u + 3u) % 253u + 1u);
    }
}

using Clock = std::chrono::steady_clock;

void busy_wait_us(double us) {
    const auto t0 = Clock::now();
    while (std::chrono::duration<double, std::micro>(Clock::now() - t0).count() < us) {
    }
}

float elapsed_us(cudaEvent_t a, cudaEvent_t b) {
    float ms = 0;
    CHECK(cudaEventElapsedTime(&ms, a, b));
    return ms * 1000.0f;
}

// v[q n] of the sorted values (the median: v[n / 2]).
double quantile(std::vector<double> v, double q) {
    std::sort(v.begin(), v.end());
    return v[std::min(v.size() - 1, static_cast<std::size_t>(q * static_cast<double>(v.size())))];
}

// One repetition's times, µs: from the start event to each copy's end and to the stop event, and
// from the CPU's end of each copy's call and the start and end of the stop event's call to the
// store to the gate's flag.
struct Rep {
    double pair, up, down, up_call_to_gate, down_call_to_gate, stop_start_to_gate, stop_end_to_gate;
};

// The buffers, streams and events of the pair, and the CPU's time in each call.
class Pair {
public:
    Pair() {
        CHECK(cudaSetDevice(0));
        CHECK(cudaMallocHost(&hsrc_, kAlloc));
        CHECK(cudaMallocHost(&hdst_, kAlloc));
        CHECK(cudaMallocHost(&back_, kAlloc));
        CHECK(cudaMalloc(&dsrc_, kAlloc));
        CHECK(cudaMalloc(&ddst_, kAlloc));
        CHECK(cudaMalloc(&dscratch_, kAlloc));
        CHECK(cudaHostAlloc(&flag_, sizeof(int), cudaHostAllocMapped));
        CHECK(cudaHostAlloc(&timed_out_, sizeof(int), cudaHostAllocMapped));
        CHECK(cudaHostGetDevicePointer(&dflag_, flag_, 0));
        CHECK(cudaHostGetDevicePointer(&dtimed_out_, timed_out_, 0));
        *timed_out_ = 0;
        for (std::size_t i = 0; i < kAlloc; ++i) {
            hsrc_[i] = static_cast<unsigned char>((i * 131u + 7u) % 251u + 1u);
            back_[i] = static_cast<unsigned char>((i * 17u + 3u) % 253u + 1u);
        }
        for (std::size_t i = 0; i < kAlloc; i += 64) _mm_clflush(hsrc_ + i);
        _mm_mfence();
        CHECK(cudaMemcpy(dsrc_, back_, kAlloc, cudaMemcpyHostToDevice));
        CHECK(cudaStreamCreateWithFlags(&s1_, cudaStreamNonBlocking));
        CHECK(cudaStreamCreateWithFlags(&s2_, cudaStreamNonBlocking));
        CHECK(cudaStreamCreateWithFlags(&s3_, cudaStreamNonBlocking));
        for (cudaEvent_t* e : {&start_, &stop_, &e1_, &e2_}) CHECK(cudaEventCreate(e));
    }
    ~Pair() {
        for (cudaEvent_t e : {start_, stop_, e1_, e2_}) cudaEventDestroy(e);
        cudaStreamDestroy(s1_);
        cudaStreamDestroy(s2_);
        cudaStreamDestroy(s3_);
        cudaFree(dsrc_);
        cudaFree(ddst_);
        cudaFree(dscratch_);
        if (far_ != nullptr) cudaFreeHost(far_);
        cudaFreeHost(hsrc_);
        cudaFreeHost(hdst_);
        cudaFreeHost(back_);
        cudaFreeHost(flag_);
        cudaFreeHost(timed_out_);
    }

    // Where a cell's copy into the GPU reads: the same source every repetition; a fresh one, 2 MiB
    // further on in a 1.1 GiB buffer each time (pages the copy engine has not read before); or the
    // same one read by a blocking copy just before the repetition's calls.
    enum class Source { kSame, kFresh, kWarmed };

    // A cell: `warmup` then `reps` repetitions with a copy into the GPU of `up` bytes and one out
    // of it of `down` bytes (0: no call), D = `delay` µs; the copies' data verified.
    // With `behind_wait` the gate kernel and the start event go on a third stream and the first
    // stream waits for the start event as the second does: its copy waits behind a wait, not a kernel.
    std::vector<Rep> cell(std::size_t up, std::size_t down, double delay, int warmup, int reps, bool behind_wait = false,
                          Source source = Source::kSame, bool refill_source = false) {
        std::vector<Rep> out;
        const unsigned char* src = hsrc_;
        if (source == Source::kFresh && far_ == nullptr) {
            CHECK(cudaMallocHost(&far_, kFarStride * (kFarPieces + 1)));
            for (std::size_t i = 0; i < kFarStride * (kFarPieces + 1); ++i) far_[i] = static_cast<unsigned char>((i * 29u + 11u) % 247u + 1u);
        }
        if (source == Source::kFresh && static_cast<std::size_t>(warmup + reps) > kFarPieces) {
            std::fprintf(stderr, "a fresh source for each of %d repetitions: at most %zu\n", warmup + reps, kFarPieces);
            std::exit(1);
        }
        // The D2H destination is cleared once per cell and flushed from the CPU's caches: a DMA
        // write into lines the CPU has just written is several times slower.
        std::memset(hdst_, 0, kAlloc);
        for (std::size_t i = 0; i < kAlloc; i += 64) _mm_clflush(hdst_ + i);
        _mm_mfence();
        for (int r = 0; r < warmup + reps; ++r) {
            const bool keep = r >= warmup;
            CHECK(cudaMemset(ddst_, 0, std::max<std::size_t>(up, 1)));
            CHECK(cudaDeviceSynchronize());
            if (refill_source && down > 0) {
                fill_source<<<264, 256>>>(dsrc_, down);
                CHECK(cudaGetLastError());
                CHECK(cudaDeviceSynchronize());
            }
            if (source == Source::kFresh) src = far_ + kFarStride * static_cast<std::size_t>(r);
            if (source == Source::kWarmed && up > 0) CHECK(cudaMemcpy(dscratch_, src, up, cudaMemcpyHostToDevice));
            *reinterpret_cast<volatile int*>(flag_) = 0;
            const auto timed = [&](const char* what, auto&& f) {
                const auto t0 = Clock::now();
                f();
                if (keep) calls_[what].push_back(std::chrono::duration<double, std::micro>(Clock::now() - t0).count());
            };
            cudaStream_t gate_stream = behind_wait ? s3_ : s1_;
            gate_kernel<<<1, 1, 0, gate_stream>>>(dflag_, dtimed_out_);
            CHECK(cudaGetLastError());
            timed("event_record", [&] { CHECK(cudaEventRecord(start_, gate_stream)); });
            if (behind_wait) timed("stream_wait_event", [&] { CHECK(cudaStreamWaitEvent(s1_, start_, 0)); });
            timed("stream_wait_event", [&] { CHECK(cudaStreamWaitEvent(s2_, start_, 0)); });
            if (up > 0) timed("memcpy_async_h2d", [&] { CHECK(cudaMemcpyAsync(ddst_, src, up, cudaMemcpyHostToDevice, s1_)); });
            const auto up_end = Clock::now();
            if (down > 0) timed("memcpy_async_d2h", [&] { CHECK(cudaMemcpyAsync(hdst_, dsrc_, down, cudaMemcpyDeviceToHost, s2_)); });
            const auto down_end = Clock::now();
            timed("event_record", [&] { CHECK(cudaEventRecord(e1_, s1_)); });
            timed("event_record", [&] { CHECK(cudaEventRecord(e2_, s2_)); });
            timed("stream_wait_event", [&] { CHECK(cudaStreamWaitEvent(s1_, e2_, 0)); });
            const auto stop_start = Clock::now();
            timed("event_record", [&] { CHECK(cudaEventRecord(stop_, s1_)); });
            const auto stop_end = Clock::now();
            busy_wait_us(delay);
            const auto gate = Clock::now();
            *reinterpret_cast<volatile int*>(flag_) = 1;
            CHECK(cudaEventSynchronize(stop_));
            if (*timed_out_ != 0) {
                std::fprintf(stderr, "the gate timed out\n");
                std::exit(1);
            }
            const auto to_gate = [&](Clock::time_point t) { return std::chrono::duration<double, std::micro>(gate - t).count(); };
            if (keep) {
                out.push_back(Rep{elapsed_us(start_, stop_), elapsed_us(start_, e1_), elapsed_us(start_, e2_), to_gate(up_end),
                                  to_gate(down_end), to_gate(stop_start), to_gate(stop_end)});
            }
        }
        if (up > 0) {
            CHECK(cudaMemcpy(back_, ddst_, up, cudaMemcpyDeviceToHost));
            if (std::memcmp(back_, src, up) != 0) fail("H2D", up);
        }
        if (down > 0) {
            std::vector<unsigned char> want(down);
            CHECK(cudaMemcpy(want.data(), dsrc_, down, cudaMemcpyDeviceToHost));
            if (std::memcmp(hdst_, want.data(), down) != 0) fail("D2H", down);
        }
        return out;
    }

    // One copy on an idle stream with no gate: a start event, the copy, a stop event, the CPU
    // waiting for the stop event; `reps` times after `warmup`, each repetition's interval (µs).
    std::vector<double> idle_copy(bool into_gpu, std::size_t n, int warmup, int reps) {
        std::vector<double> out;
        for (int r = 0; r < warmup + reps; ++r) {
            CHECK(cudaDeviceSynchronize());
            CHECK(cudaEventRecord(start_, s1_));
            if (into_gpu) {
                CHECK(cudaMemcpyAsync(ddst_, hsrc_, n, cudaMemcpyHostToDevice, s1_));
            } else {
                CHECK(cudaMemcpyAsync(hdst_, dsrc_, n, cudaMemcpyDeviceToHost, s1_));
            }
            CHECK(cudaEventRecord(stop_, s1_));
            CHECK(cudaEventSynchronize(stop_));
            if (r >= warmup) out.push_back(elapsed_us(start_, stop_));
        }
        CHECK(cudaMemcpy(back_, into_gpu ? ddst_ : dsrc_, n, cudaMemcpyDeviceToHost));
        if (std::memcmp(back_, into_gpu ? hsrc_ : hdst_, n) != 0) fail(into_gpu ? "H2D" : "D2H", n);
        return out;
    }

    void print_calls() const {
        std::fprintf(stderr, "call,median_us,p10_us,p90_us,n\n");
        for (const auto& [what, v] : calls_) {
            std::fprintf(stderr, "%s,%.4f,%.4f,%.4f,%zu\n", what.c_str(), quantile(v, 0.5), quantile(v, 0.1), quantile(v, 0.9), v.size());
        }
    }

private:
    [[noreturn]] static void fail(const char* what, std::size_t n) {
        std::fprintf(stderr, "verification failed: %s of %zu bytes\n", what, n);
        std::exit(1);
    }

    static constexpr std::size_t kFarStride = std::size_t{2} << 20, kFarPieces = 550;
    unsigned char *hsrc_ = nullptr, *hdst_ = nullptr, *back_ = nullptr, *dsrc_ = nullptr, *ddst_ = nullptr;
    unsigned char *dscratch_ = nullptr, *far_ = nullptr;
    int *flag_ = nullptr, *timed_out_ = nullptr, *dflag_ = nullptr, *dtimed_out_ = nullptr;
    cudaStream_t s1_{}, s2_{}, s3_{};
    cudaEvent_t start_{}, stop_{}, e1_{}, e2_{};
    std::map<std::string, std::vector<double>> calls_;
};

std::vector<double> column(const std::vector<Rep>& reps, double Rep::*field) {
    std::vector<double> v;
    for (const Rep& r : reps) v.push_back(r.*field);
    return v;
}

void overlap(Pair& pair, std::initializer_list<std::size_t> sizes) {
    std::printf("shape,bytes,delay_us,interval_us,h2d_us,d2h_us,d2h_p10_us,d2h_p90_us,h2d_p10_us,h2d_p90_us\n");
    const char* shapes[] = {"both", "d2h_only", "h2d_only"};
    for (const std::size_t n : sizes) {
        for (int shape = 0; shape < 3; ++shape) {
            for (double d = 0.0; d <= 8.5 + 1e-9; d += 0.5) {
                const auto reps = pair.cell(shape != 1 ? n : 0, shape != 2 ? n : 0, d, 5, 60);
                const auto up = column(reps, &Rep::up), down = column(reps, &Rep::down);
                std::printf("%s,%zu,%.1f,%.4f,%.4f,%.4f,%.4f,%.4f,%.4f,%.4f\n", shapes[shape], n, d, quantile(column(reps, &Rep::pair), 0.5),
                            quantile(up, 0.5), quantile(down, 0.5), quantile(down, 0.1), quantile(down, 0.9), quantile(up, 0.1),
                            quantile(up, 0.9));
                std::fflush(stdout);
            }
        }
    }
}

void sizes(Pair& pair) {
    std::printf("shape,bytes,delay_us,interval_us,h2d_us,d2h_us,d2h_p10_us,d2h_p90_us,h2d_p10_us,h2d_p90_us\n");
    const char* shapes[] = {"d2h_only", "h2d_only"};
    for (std::size_t n = 4096; n <= 262144; n *= 2) {
        for (int shape = 0; shape < 2; ++shape) {
            for (double d = 0.0; d <= 8.0 + 1e-9; d += 0.5) {
                const auto reps = pair.cell(shape == 1 ? n : 0, shape == 0 ? n : 0, d, 5, 60);
                const auto up = column(reps, &Rep::up), down = column(reps, &Rep::down);
                std::printf("%s,%zu,%.1f,%.4f,%.4f,%.4f,%.4f,%.4f,%.4f,%.4f\n", shapes[shape], n, d, quantile(column(reps, &Rep::pair), 0.5),
                            quantile(up, 0.5), quantile(down, 0.5), quantile(down, 0.1), quantile(down, 0.9), quantile(up, 0.1),
                            quantile(up, 0.9));
                std::fflush(stdout);
            }
        }
    }
}

void share(Pair& pair) {
    std::printf("h2d_bytes,d2h_bytes,delay_us,interval_us,h2d_us,d2h_us,d2h_p10_us,d2h_p90_us,h2d_p10_us,h2d_p90_us\n");
    const std::size_t M = kMax;
    const std::size_t sizes[][2] = {{0, M}, {4096, M}, {65536, M}, {262144, M}, {M, M}, {M, 0}, {M, 4096}, {M, 65536}, {M, 262144}};
    for (const auto& ab : sizes) {
        for (double d = 0.0; d <= 8.0 + 1e-9; d += 1.0) {
            const auto reps = pair.cell(ab[0], ab[1], d, 5, 60);
            const auto up = column(reps, &Rep::up), down = column(reps, &Rep::down);
            std::printf("%zu,%zu,%.1f,%.4f,%.4f,%.4f,%.4f,%.4f,%.4f,%.4f\n", ab[0], ab[1], d, quantile(column(reps, &Rep::pair), 0.5),
                        quantile(up, 0.5), quantile(down, 0.5), quantile(down, 0.1), quantile(down, 0.9), quantile(up, 0.1), quantile(up, 0.9));
            std::fflush(stdout);
        }
    }
}

void alone(Pair& pair) {
    std::printf("shape,bytes,rep,interval_us,h2d_us,d2h_us,h2d_call_to_gate_us,d2h_call_to_gate_us,stop_start_to_gate_us,stop_end_to_gate_us\n");
    const char* shapes[] = {"d2h_only", "h2d_only", "both"};
    for (const std::size_t n : {std::size_t{4096}, std::size_t{65536}, std::size_t{262144}}) {
        for (int shape = 0; shape < 3; ++shape) {
            const auto reps = pair.cell(shape != 0 ? n : 0, shape != 1 ? n : 0, 0.0, 10, 500);
            for (std::size_t i = 0; i < reps.size(); ++i) {
                const Rep& r = reps[i];
                std::printf("%s,%zu,%zu,%.4f,%.4f,%.4f,%.4f,%.4f,%.4f,%.4f\n", shapes[shape], n, i, r.pair, r.up, r.down, r.up_call_to_gate,
                            r.down_call_to_gate, r.stop_start_to_gate, r.stop_end_to_gate);
            }
            std::fflush(stdout);
        }
    }
}

void behind(Pair& pair) {
    std::printf("shape,bytes,rep,interval_us,h2d_us,d2h_us,h2d_call_to_gate_us,d2h_call_to_gate_us,stop_start_to_gate_us,stop_end_to_gate_us\n");
    for (const std::size_t n : {std::size_t{4096}, std::size_t{65536}}) {
        for (const bool wait : {false, true}) {
            const auto reps = pair.cell(n, 0, 0.0, 10, 500, wait);
            for (std::size_t i = 0; i < reps.size(); ++i) {
                const Rep& r = reps[i];
                std::printf("%s,%zu,%zu,%.4f,%.4f,%.4f,%.4f,%.4f,%.4f,%.4f\n", wait ? "h2d_behind_wait" : "h2d_behind_kernel", n, i, r.pair,
                            r.up, r.down, r.up_call_to_gate, r.down_call_to_gate, r.stop_start_to_gate, r.stop_end_to_gate);
            }
            std::fflush(stdout);
        }
    }
}

void sources(Pair& pair) {
    std::printf("shape,bytes,rep,interval_us,h2d_us,d2h_us,h2d_call_to_gate_us,d2h_call_to_gate_us,stop_start_to_gate_us,stop_end_to_gate_us\n");
    const std::pair<const char*, Pair::Source> kinds[] = {
        {"h2d_same", Pair::Source::kSame}, {"h2d_fresh", Pair::Source::kFresh}, {"h2d_warmed", Pair::Source::kWarmed}};
    for (const std::size_t n : {std::size_t{4096}, std::size_t{65536}}) {
        for (const auto& [name, source] : kinds) {
            const auto reps = pair.cell(n, 0, 0.0, 10, 500, false, source);
            for (std::size_t i = 0; i < reps.size(); ++i) {
                const Rep& r = reps[i];
                std::printf("%s,%zu,%zu,%.4f,%.4f,%.4f,%.4f,%.4f,%.4f,%.4f\n", name, n, i, r.pair, r.up, r.down, r.up_call_to_gate,
                            r.down_call_to_gate, r.stop_start_to_gate, r.stop_end_to_gate);
            }
            std::fflush(stdout);
        }
    }
}

void idle(Pair& pair) {
    std::printf("shape,bytes,rep,interval_us,h2d_us,d2h_us,h2d_call_to_gate_us,d2h_call_to_gate_us,stop_start_to_gate_us,stop_end_to_gate_us\n");
    for (const std::size_t n : {std::size_t{1024}, std::size_t{4096}, std::size_t{65536}}) {
        for (const bool into : {true, false}) {
            const auto v = pair.idle_copy(into, n, 10, 500);
            for (std::size_t i = 0; i < v.size(); ++i) {
                std::printf("%s,%zu,%zu,%.4f,%.4f,%.4f,0,0,0,0\n", into ? "h2d_idle" : "d2h_idle", n, i, v[i], into ? v[i] : 0.0,
                            into ? 0.0 : v[i]);
            }
        }
        if (n == 1024) {
            const auto reps = pair.cell(n, 0, 0.0, 10, 500);
            for (std::size_t i = 0; i < reps.size(); ++i) {
                const Rep& r = reps[i];
                std::printf("h2d_gated,%zu,%zu,%.4f,%.4f,%.4f,%.4f,%.4f,%.4f,%.4f\n", n, i, r.pair, r.up, r.down, r.up_call_to_gate,
                            r.down_call_to_gate, r.stop_start_to_gate, r.stop_end_to_gate);
            }
        }
        std::fflush(stdout);
    }
}

void sweep(Pair& pair) {
    std::printf("shape,bytes,delay_us,rep,interval_us,h2d_us,d2h_us,h2d_call_to_gate_us,d2h_call_to_gate_us,stop_start_to_gate_us,stop_end_to_gate_us\n");
    const std::size_t n = 4096;
    for (int shape = 0; shape < 2; ++shape) {
        for (int i = 0; i <= 17; ++i) {
            const double d = 0.5 * i;
            const auto reps = pair.cell(shape == 1 ? n : 0, shape == 0 ? n : 0, d, 5, 100);
            for (std::size_t k = 0; k < reps.size(); ++k) {
                const Rep& r = reps[k];
                std::printf("%s,%zu,%.1f,%zu,%.4f,%.4f,%.4f,%.4f,%.4f,%.4f,%.4f\n", shape == 0 ? "d2h_only" : "h2d_only", n, d, k, r.pair, r.up,
                            r.down, r.up_call_to_gate, r.down_call_to_gate, r.stop_start_to_gate, r.stop_end_to_gate);
            }
            std::fflush(stdout);
        }
    }
}

// How the pair grows with its size past 1 MiB: both copies, 1-16 MiB, D from 0 to 7 us by 1 (the
// mean over D averages where the polls put the copies), medians over 30 repetitions after 3
// warm-ups; each copy alone too (the other's call left out).
void growth(Pair& pair) {
    std::printf("shape,bytes,delay_us,interval_us,h2d_us,d2h_us\n");
    const char* shapes[] = {"both", "d2h_only", "h2d_only"};
    for (std::size_t n = std::size_t{1} << 20; n <= kAlloc; n *= 2) {
        for (int shape = 0; shape < 3; ++shape) {
            for (double d = 0.0; d <= 7.0 + 1e-9; d += 1.0) {
                const auto reps = pair.cell(shape != 1 ? n : 0, shape != 2 ? n : 0, d, 3, 30);
                std::printf("%s,%zu,%.1f,%.4f,%.4f,%.4f\n", shapes[shape], n, d, quantile(column(reps, &Rep::pair), 0.5),
                            quantile(column(reps, &Rep::up), 0.5), quantile(column(reps, &Rep::down), 0.5));
                std::fflush(stdout);
            }
        }
    }
}

void repetitions(Pair& pair, std::initializer_list<std::size_t> sizes, bool refill_source = false) {
    std::printf("bytes,rep,interval_us,h2d_us,d2h_us,h2d_call_to_gate_us,d2h_call_to_gate_us,stop_start_to_gate_us,stop_end_to_gate_us\n");
    for (const std::size_t n : sizes) {
        const auto reps = pair.cell(n, n, 0.0, 10, 500, false, Pair::Source::kSame, refill_source);
        for (std::size_t i = 0; i < reps.size(); ++i) {
            const Rep& r = reps[i];
            std::printf("%zu,%zu,%.4f,%.4f,%.4f,%.4f,%.4f,%.4f,%.4f\n", n, i, r.pair, r.up, r.down, r.up_call_to_gate, r.down_call_to_gate,
                        r.stop_start_to_gate, r.stop_end_to_gate);
        }
        std::fflush(stdout);
    }
}

}  // namespace

int main(int argc, char** argv) {
    const std::string mode = argc > 1 ? argv[1] : "";
    if (mode != "overlap" && mode != "share" && mode != "reps" && mode != "sizes" && mode != "alone" &&
        mode != "behind" && mode != "source" && mode != "idle" && mode != "sweep" && mode != "overlap-large" &&
        mode != "reps-large" && mode != "growth" && mode != "reps-fill") {
        std::fprintf(stderr, "usage: %s overlap|share|reps|sizes|alone|behind|source|idle|sweep|overlap-large|reps-large|growth|reps-fill\n", argv[0]);
        return 2;
    }
    Pair pair;
    const std::size_t kLarge = std::size_t{4} << 20;
    if (mode == "overlap") overlap(pair, {4096, 65536, 262144, kMax});
    if (mode == "overlap-large") overlap(pair, {16384, kLarge});
    if (mode == "share") share(pair);
    if (mode == "reps") repetitions(pair, {4096, 65536, 262144, kMax});
    if (mode == "reps-large") repetitions(pair, {16384, kLarge});
    if (mode == "growth") growth(pair);
    if (mode == "reps-fill") repetitions(pair, {4096, 65536, 262144, kMax}, true);
    if (mode == "sizes") sizes(pair);
    if (mode == "alone") alone(pair);
    if (mode == "behind") behind(pair);
    if (mode == "source") sources(pair);
    if (mode == "idle") idle(pair);
    if (mode == "sweep") sweep(pair);
    pair.print_calls();
    return 0;
}
