// Where a gated copy's tries fall, two modes (the argument):
//
//  tails   Where in a call does a stream's submission restart its channel's count of tries? A copy into
//          the GPU behind the gate kernel on stream s1 waits for the kernel by retrying a semaphore every
//          ~8.1 us, counted from the latest submission to s1 (../duplex-phase-anchor: dmaprobe's copy into
//          the GPU counts from the stop event's call, four calls after its own). Here the copy is followed
//          by its event (e1, which submits nothing: it takes the copy's release) and then by a tail of
//          calls; a host delay D (0 to 8.5 us by 0.25) follows the tail, then the gate opens. The copy's
//          end after the start event is a sawtooth in D whose jump falls where the time from the
//          restarting submission to the gate is a whole number of periods: a tail whose submission
//          restarts the count at its end moves the jump by nothing against the bare copy, one that
//          restarts it at its start by the call's own time, one that does not restart it by the whole
//          tail's time. Tails: none; cudaStreamWaitEvent(s1, e2) on an event of s2 still behind the gate;
//          that wait and then the stop event on s1 (dmaprobe's duplex pair ends so); an event on s2 (a
//          call that submits to another stream only); an empty kernel on s1; a 4-byte copy into the GPU
//          on s1; a busy-wait of 1.5 us (no call). 4 KiB; 5 warm-ups and 100 timed repetitions a cell; the
//          copy's data verified per cell; every CUDA call checked; the gate gives up after 1 s.
//
//  shapes  Is the offset between dmaprobe's two gated copies' poll phases (../duplex-phase-anchor: the
//          copy into the GPU behind the gate kernel on its own stream tries ~1.6-1.9 us earlier against
//          its last submission than the copy out of the GPU behind a wait for the start event on another
//          stream) a matter of the copy's direction or of what it waits for? One gated 4 KiB copy in four
//          shapes: into or out of the GPU, on the gate kernel's stream s1 (behind the kernel and the start
//          event) or on s2 behind cudaStreamWaitEvent(s2, start); its end event right behind it (which
//          submits nothing); a host delay D (0 to 8.5 us by 0.25) after the copy's event, then the gate
//          opens. The copy's end after the start event is a sawtooth in D: its jump gives where the
//          copy's tries fall against its call, its floor what follows the try. 5 warm-ups and 100 timed
//          repetitions a cell; data verified per cell; every CUDA call checked; the gate gives up after 1 s.
//
// (The leases ran the two modes as two programs, submitpoint.cu and pollpath.cu, since folded
// into one.)
//
// Build: nvcc -O3 -arch=sm_90 submitpoint.cu -o submitpoint
// Run:   ./submitpoint tails > submitpoint.csv 2> calls.csv; ./submitpoint shapes > pollpath.csv 2> pollpath-calls.csv
#include <cuda_runtime.h>
#include <immintrin.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
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

constexpr int kWarmup = 5;
constexpr int kReps = 100;
constexpr unsigned long long kGateTimeoutNs = 1'000'000'000;

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

__global__ void empty_kernel() {}

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

double quantile(std::vector<double> v, double q) {
    std::sort(v.begin(), v.end());
    return v[static_cast<std::size_t>(q * static_cast<double>(v.size() - 1) + 0.5)];
}


// A copy engine's gated copy and what comes around it, 4 KiB each way, with the CPU's time in each
// call (all cells).
class Gated {
public:
    static constexpr std::size_t kBytes = 4096;

    Gated() {
        CHECK(cudaSetDevice(0));
        CHECK(cudaMallocHost(&hsrc_, kBytes));
        CHECK(cudaMallocHost(&hdst_, kBytes));
        CHECK(cudaMallocHost(&back_, kBytes));
        CHECK(cudaMalloc(&dsrc_, kBytes));
        CHECK(cudaMalloc(&ddst_, kBytes));
        CHECK(cudaMalloc(&dsmall_, 64));
        CHECK(cudaHostAlloc(&flag_, sizeof(int), cudaHostAllocMapped));
        CHECK(cudaHostAlloc(&timed_out_, sizeof(int), cudaHostAllocMapped));
        CHECK(cudaHostGetDevicePointer(&dflag_, flag_, 0));
        CHECK(cudaHostGetDevicePointer(&dtimed_out_, timed_out_, 0));
        *timed_out_ = 0;
        for (std::size_t i = 0; i < kBytes; ++i) {
            hsrc_[i] = static_cast<unsigned char>((i * 131u + 7u) % 251u + 1u);
            back_[i] = static_cast<unsigned char>((i * 17u + 3u) % 253u + 1u);
        }
        CHECK(cudaMemcpy(dsrc_, back_, kBytes, cudaMemcpyHostToDevice));
        CHECK(cudaStreamCreateWithFlags(&s1_, cudaStreamNonBlocking));
        CHECK(cudaStreamCreateWithFlags(&s2_, cudaStreamNonBlocking));
        for (cudaEvent_t* e : {&start_, &stop_, &e1_, &e2_, &e3_}) CHECK(cudaEventCreate(e));
    }
    ~Gated() {
        for (cudaEvent_t e : {start_, stop_, e1_, e2_, e3_}) cudaEventDestroy(e);
        cudaStreamDestroy(s1_);
        cudaStreamDestroy(s2_);
        cudaFree(dsrc_);
        cudaFree(ddst_);
        cudaFree(dsmall_);
        cudaFreeHost(hsrc_);
        cudaFreeHost(hdst_);
        cudaFreeHost(back_);
        cudaFreeHost(flag_);
        cudaFreeHost(timed_out_);
    }

    // submitpoint's tail `tail` (0-6), D = delay: the copy's end after the start event, and the
    // tail's CPU time, per repetition.
    void tail_cell(int tail, double delay, std::vector<double>& ends, std::vector<double>& tail_us) {
        for (int r = 0; r < kWarmup + kReps; ++r) {
            const bool keep = r >= kWarmup;
            close_gate();
            // s2's event e2 stays behind the gate: s2 waits for the start event first.
            CHECK(cudaStreamWaitEvent(s2_, start_, 0));
            CHECK(cudaEventRecord(e2_, s2_));
            timed(keep, "memcpy_async_h2d", [&] { CHECK(cudaMemcpyAsync(ddst_, hsrc_, kBytes, cudaMemcpyHostToDevice, s1_)); });
            timed(keep, "event_record_behind_copy", [&] { CHECK(cudaEventRecord(e1_, s1_)); });
            double t = 0.0;
            switch (tail) {
                case 1: t = timed(keep, "stream_wait_event", [&] { CHECK(cudaStreamWaitEvent(s1_, e2_, 0)); }); break;
                case 2:
                    t = timed(keep, "stream_wait_event", [&] { CHECK(cudaStreamWaitEvent(s1_, e2_, 0)); });
                    t += timed(keep, "event_record_behind_wait", [&] { CHECK(cudaEventRecord(stop_, s1_)); });
                    break;
                case 3: t = timed(keep, "event_record_other_stream", [&] { CHECK(cudaEventRecord(e3_, s2_)); }); break;
                case 4:
                    t = timed(keep, "kernel_launch", [&] {
                        empty_kernel<<<1, 1, 0, s1_>>>();
                        CHECK(cudaGetLastError());
                    });
                    break;
                case 5:
                    t = timed(keep, "memcpy_async_h2d_4B", [&] { CHECK(cudaMemcpyAsync(dsmall_, hsrc_, 4, cudaMemcpyHostToDevice, s1_)); });
                    break;
                case 6: t = timed(keep, "busy_wait_1.5us", [&] { busy_wait_us(1.5); }); break;
                default: break;
            }
            open_gate(delay);
            if (keep) {
                ends.push_back(elapsed_us(start_, e1_));
                tail_us.push_back(t);
            }
        }
        verify(true);
    }

    // pollpath's shape: a copy into (up) or out of the GPU, on the gate's stream or behind a wait
    // for the start event on s2; its event; D = delay: the copy's end after the start event.
    void shape_cell(bool up, bool after_wait, double delay, std::vector<double>& ends) {
        std::memset(hdst_, 0, kBytes);
        for (std::size_t i = 0; i < kBytes; i += 64) _mm_clflush(hdst_ + i);
        _mm_mfence();
        for (int r = 0; r < kWarmup + kReps; ++r) {
            const bool keep = r >= kWarmup;
            close_gate();
            cudaStream_t s = s1_;
            if (after_wait) {
                s = s2_;
                timed(keep, "stream_wait_event", [&] { CHECK(cudaStreamWaitEvent(s2_, start_, 0)); });
            }
            if (up) {
                timed(keep, "memcpy_async_h2d", [&] { CHECK(cudaMemcpyAsync(ddst_, hsrc_, kBytes, cudaMemcpyHostToDevice, s)); });
            } else {
                timed(keep, "memcpy_async_d2h", [&] { CHECK(cudaMemcpyAsync(hdst_, dsrc_, kBytes, cudaMemcpyDeviceToHost, s)); });
            }
            timed(keep, "event_record_behind_copy", [&] { CHECK(cudaEventRecord(e1_, s)); });
            open_gate(delay);
            if (keep) ends.push_back(elapsed_us(start_, e1_));
        }
        verify(up);
    }

    void print_calls() const {
        std::fprintf(stderr, "call,median_us,p10_us,p90_us,n\n");
        for (const auto& [what, v] : calls_) {
            std::fprintf(stderr, "%s,%.4f,%.4f,%.4f,%zu\n", what.c_str(), quantile(v, 0.5), quantile(v, 0.1), quantile(v, 0.9), v.size());
        }
    }

private:
    // A clean start, the gate kernel on s1 and the start event behind it.
    void close_gate() {
        CHECK(cudaMemset(ddst_, 0, kBytes));
        CHECK(cudaDeviceSynchronize());
        *reinterpret_cast<volatile int*>(flag_) = 0;
        gate_kernel<<<1, 1, 0, s1_>>>(dflag_, dtimed_out_);
        CHECK(cudaGetLastError());
        CHECK(cudaEventRecord(start_, s1_));
    }
    void open_gate(double delay) {
        busy_wait_us(delay);
        *reinterpret_cast<volatile int*>(flag_) = 1;
        CHECK(cudaDeviceSynchronize());
        if (*timed_out_ != 0) {
            std::fprintf(stderr, "the gate timed out\n");
            std::exit(1);
        }
    }
    template <class F>
    double timed(bool keep, const char* what, F&& f) {
        const auto t0 = Clock::now();
        f();
        const double us = std::chrono::duration<double, std::micro>(Clock::now() - t0).count();
        if (keep) calls_[what].push_back(us);
        return us;
    }
    void verify(bool up) {
        if (up) {
            CHECK(cudaMemcpy(back_, ddst_, kBytes, cudaMemcpyDeviceToHost));
            if (std::memcmp(back_, hsrc_, kBytes) == 0) return;
        } else {
            std::vector<unsigned char> want(kBytes);
            CHECK(cudaMemcpy(want.data(), dsrc_, kBytes, cudaMemcpyDeviceToHost));
            if (std::memcmp(hdst_, want.data(), kBytes) == 0) return;
        }
        std::fprintf(stderr, "verification failed: the copy %s the GPU\n", up ? "into" : "out of");
        std::exit(1);
    }

    unsigned char *hsrc_ = nullptr, *hdst_ = nullptr, *back_ = nullptr, *dsrc_ = nullptr, *ddst_ = nullptr, *dsmall_ = nullptr;
    int *flag_ = nullptr, *timed_out_ = nullptr, *dflag_ = nullptr, *dtimed_out_ = nullptr;
    cudaStream_t s1_{}, s2_{};
    cudaEvent_t start_{}, stop_{}, e1_{}, e2_{}, e3_{};
    std::map<std::string, std::vector<double>> calls_;
};

double mean(const std::vector<double>& v) {
    double s = 0.0;
    for (const double x : v) s += x;
    return s / static_cast<double>(v.size());
}

void tails(Gated& g) {
    std::printf("tail,bytes,delay_us,median_us,mean_us,p25_us,p75_us,tail_call_us\n");
    const char* names[] = {"none", "wait", "wait_record", "record_other_stream", "kernel", "copy_4B", "cpu_1.5us"};
    for (int tail = 0; tail < 7; ++tail) {
        for (double d = 0.0; d <= 8.5 + 1e-9; d += 0.25) {
            std::vector<double> ends, tail_us;
            g.tail_cell(tail, d, ends, tail_us);
            std::printf("%s,%zu,%.2f,%.4f,%.4f,%.4f,%.4f,%.4f\n", names[tail], Gated::kBytes, d, quantile(ends, 0.5), mean(ends),
                        quantile(ends, 0.25), quantile(ends, 0.75), quantile(tail_us, 0.5));
            std::fflush(stdout);
        }
    }
}

void shapes(Gated& g) {
    std::printf("shape,bytes,delay_us,median_us,mean_us,p25_us,p75_us\n");
    const char* names[] = {"h2d_gate_stream", "d2h_gate_stream", "h2d_after_wait", "d2h_after_wait"};
    for (int shape = 0; shape < 4; ++shape) {
        for (double d = 0.0; d <= 8.5 + 1e-9; d += 0.25) {
            std::vector<double> ends;
            g.shape_cell(shape % 2 == 0, shape >= 2, d, ends);
            std::printf("%s,%zu,%.2f,%.4f,%.4f,%.4f,%.4f\n", names[shape], Gated::kBytes, d, quantile(ends, 0.5), mean(ends),
                        quantile(ends, 0.25), quantile(ends, 0.75));
            std::fflush(stdout);
        }
    }
}

}  // namespace

int main(int argc, char** argv) {
    const std::string mode = argc > 1 ? argv[1] : "";
    if (mode != "tails" && mode != "shapes") {
        std::fprintf(stderr, "usage: %s tails|shapes\n", argv[0]);
        return 2;
    }
    Gated g;
    if (mode == "tails") tails(g);
    if (mode == "shapes") shapes(g);
    g.print_calls();
    return 0;
}
