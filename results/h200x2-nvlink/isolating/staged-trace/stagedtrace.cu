// What does a staged peer copy (peer access off) put on the two GPUs, piece by piece, alone and
// beside the other way's staged copy as dmaprobe issues them? ../staged-both and ../staged-loss
// time the copies with events from the outside: the second of two staged copies issued within
// ~20 us of each other loses 4-8 us, and nothing they could time explains it. Here CUPTI's
// activity records give each piece's copies (engine, channel, start and end on the GPU's clock),
// the runtime's and the driver's calls on the CPU and the spin kernels, on one timeline.
//
// Cases (peer access off both ways; S bytes; streams of GPU 0 and GPU 1):
//   alone01  start event on GPU 0, cudaMemcpyPeerAsync 0 -> 1, end event;
//   alone10  the same on GPU 1, 1 -> 0;
//   both     dmaprobe's sequence: start event on GPU 0; GPU 1's stream waits for it, records
//            start1, copies 1 -> 0, records end1; GPU 0 copies 0 -> 1, records end0, waits for
//            end1, records stop;
//   gated    each GPU's stream first runs a spin of 200 us, then GPU 1's copy and GPU 0's are
//            issued (no waits): both queued before either starts.
// Each case: 3 warm-ups, R repetitions (default 10); the data verified after each case.
// Output (to OUTDIR): trace.csv, one row per activity record of a repetition, times in us from the
// CPU's timestamp at the repetition's first call; events.csv, the events' intervals per repetition.
//
// With PEER 1 peer access is enabled both ways first (copies over NVLink, not staged) and `gated`
// is left out: the same sequence for the peer rows with peer access on.
//
// Build: nvcc -O3 -arch=sm_90 stagedtrace.cu -o stagedtrace -lcupti   (CUDA toolkit only)
// Run:   ./stagedtrace OUTDIR [SIZES_KIB [REPS [API [PEER]]]]   API 0 leaves the calls' records off
#include <cuda_runtime.h>
#include <cupti.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <sstream>
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

#define CUPTI(call)                                                                  \
    do {                                                                             \
        const CUptiResult r_ = (call);                                               \
        if (r_ != CUPTI_SUCCESS) {                                                   \
            const char* s_ = nullptr;                                                \
            cuptiGetResultString(r_, &s_);                                           \
            std::fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call, s_);   \
            std::exit(1);                                                            \
        }                                                                            \
    } while (0)

constexpr int kWarmup = 3;
constexpr double kSpinUs = 200.0;
constexpr std::size_t kActivityBuffer = 8u << 20;

struct Record {
    std::string kind, name;
    int device = -1;
    std::uint32_t stream = 0, channel = 0, channel_type = 0, correlation = 0;
    int copy_kind = -1, src_kind = -1, dst_kind = -1;
    std::uint64_t bytes = 0, start = 0, end = 0;
};

std::mutex g_mutex;
std::vector<Record> g_records;

void CUPTIAPI buffer_requested(uint8_t** buffer, size_t* size, size_t* max_records) {
    *size = kActivityBuffer;
    *buffer = static_cast<uint8_t*>(std::aligned_alloc(8, kActivityBuffer));
    *max_records = 0;
    if (*buffer == nullptr) {
        std::fprintf(stderr, "out of memory for CUPTI's buffer\n");
        std::exit(1);
    }
}

std::string callback_name(CUpti_CallbackDomain domain, CUpti_CallbackId cbid) {
    const char* name = nullptr;
    if (cuptiGetCallbackName(domain, cbid, &name) != CUPTI_SUCCESS || name == nullptr) return "cbid" + std::to_string(cbid);
    return name;
}

void CUPTIAPI buffer_completed(CUcontext, uint32_t, uint8_t* buffer, size_t, size_t valid) {
    CUpti_Activity* rec = nullptr;
    std::vector<Record> got;
    while (cuptiActivityGetNextRecord(buffer, valid, &rec) == CUPTI_SUCCESS) {
        Record r;
        switch (rec->kind) {
            case CUPTI_ACTIVITY_KIND_MEMCPY: {
                const auto* m = reinterpret_cast<const CUpti_ActivityMemcpy6*>(rec);
                r.kind = "memcpy";
                r.device = static_cast<int>(m->deviceId);
                r.stream = m->streamId;
                r.channel = m->channelID;
                r.channel_type = static_cast<std::uint32_t>(m->channelType);
                r.correlation = m->correlationId;
                r.copy_kind = m->copyKind;
                r.src_kind = m->srcKind;
                r.dst_kind = m->dstKind;
                r.bytes = m->bytes;
                r.start = m->start;
                r.end = m->end;
                break;
            }
            case CUPTI_ACTIVITY_KIND_MEMCPY2: {
                const auto* m = reinterpret_cast<const CUpti_ActivityMemcpyPtoP4*>(rec);
                r.kind = "memcpy_ptop";
                r.device = static_cast<int>(m->deviceId);
                r.stream = m->streamId;
                r.channel = m->channelID;
                r.channel_type = static_cast<std::uint32_t>(m->channelType);
                r.correlation = m->correlationId;
                r.copy_kind = m->copyKind;
                r.src_kind = m->srcKind;
                r.dst_kind = m->dstKind;
                r.bytes = m->bytes;
                r.start = m->start;
                r.end = m->end;
                r.name = "src" + std::to_string(m->srcDeviceId) + "_dst" + std::to_string(m->dstDeviceId);
                break;
            }
            case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
            case CUPTI_ACTIVITY_KIND_KERNEL: {
                const auto* k = reinterpret_cast<const CUpti_ActivityKernel10*>(rec);
                r.kind = "kernel";
                r.device = static_cast<int>(k->deviceId);
                r.stream = k->streamId;
                r.channel = k->channelID;
                r.channel_type = static_cast<std::uint32_t>(k->channelType);
                r.correlation = k->correlationId;
                r.start = k->start;
                r.end = k->end;
                r.name = k->name ? k->name : "";
                break;
            }
            case CUPTI_ACTIVITY_KIND_RUNTIME:
            case CUPTI_ACTIVITY_KIND_DRIVER: {
                const auto* a = reinterpret_cast<const CUpti_ActivityAPI*>(rec);
                const bool runtime = rec->kind == CUPTI_ACTIVITY_KIND_RUNTIME;
                r.kind = runtime ? "runtime" : "driver";
                r.name = callback_name(runtime ? CUPTI_CB_DOMAIN_RUNTIME_API : CUPTI_CB_DOMAIN_DRIVER_API, a->cbid);
                r.correlation = a->correlationId;
                r.start = a->start;
                r.end = a->end;
                break;
            }
            default:
                continue;
        }
        got.push_back(std::move(r));
    }
    size_t dropped = 0;
    cuptiActivityGetNumDroppedRecords(nullptr, 0, &dropped);
    if (dropped) std::fprintf(stderr, "CUPTI dropped %zu records\n", dropped);
    std::free(buffer);
    const std::lock_guard<std::mutex> lock(g_mutex);
    g_records.insert(g_records.end(), got.begin(), got.end());
}

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

__global__ void fill(unsigned int* p, std::size_t words, unsigned int salt) {
    for (std::size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < words; i += gridDim.x * blockDim.x) {
        p[i] = static_cast<unsigned int>(i) * 2654435761u + salt;
    }
}

struct Gpu {
    cudaStream_t s = nullptr;
    cudaEvent_t start = nullptr, end = nullptr, stop = nullptr;
    unsigned int* src = nullptr;
    unsigned int* dst = nullptr;
};

float elapsed_us(cudaEvent_t a, cudaEvent_t b) {
    float ms = 0;
    CHECK(cudaEventElapsedTime(&ms, a, b));
    return ms * 1000.0f;
}

// dst on GPU `d` holds what src on the other GPU was filled with (salt of that GPU).
void verify(const Gpu& g, int d, std::size_t bytes, unsigned int salt_of_source) {
    std::vector<unsigned int> host(bytes / 4);
    CHECK(cudaSetDevice(d));
    CHECK(cudaMemcpy(host.data(), g.dst, bytes, cudaMemcpyDeviceToHost));
    for (std::size_t i = 0; i < host.size(); ++i) {
        if (host[i] != static_cast<unsigned int>(i) * 2654435761u + salt_of_source) {
            std::fprintf(stderr, "GPU %d: word %zu of the copy is wrong\n", d, i);
            std::exit(1);
        }
    }
    CHECK(cudaMemset(g.dst, 0, bytes));
}

struct Rep {
    std::string kase;
    std::size_t bytes;
    int rep;
    std::uint64_t t0, t1;
};

}  // namespace

int main(int argc, char** argv) {
    if (argc < 2) {
        std::fprintf(stderr, "usage: %s OUTDIR [SIZES_KIB [REPS [API [PEER]]]]\n", argv[0]);
        return 2;
    }
    const std::string outdir = argv[1];
    std::vector<std::size_t> sizes;
    {
        std::stringstream ss(argc > 2 ? argv[2] : "1024");
        for (std::string x; std::getline(ss, x, ',');) {
            const long kib = std::atol(x.c_str());
            if (kib < 4 || kib > (1 << 20) || kib % 4) {
                std::fprintf(stderr, "size %s KiB: not a multiple of 4 in 4..1048576\n", x.c_str());
                return 2;
            }
            sizes.push_back(static_cast<std::size_t>(kib) << 10);
        }
    }
    const int reps = argc > 3 ? std::atoi(argv[3]) : 10;
    if (reps < 1 || reps > 1000) {
        std::fprintf(stderr, "REPS %s: not in 1..1000\n", argv[3]);
        return 2;
    }
    const bool api = argc > 4 ? std::atoi(argv[4]) != 0 : true;
    const bool peer = argc > 5 ? std::atoi(argv[5]) != 0 : false;

    CUPTI(cuptiActivityRegisterCallbacks(buffer_requested, buffer_completed));
    CUPTI(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_MEMCPY));
    CUPTI(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_MEMCPY2));
    CUPTI(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL));
    if (api) {
        CUPTI(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_RUNTIME));
        CUPTI(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_DRIVER));
    }

    int count = 0;
    CHECK(cudaGetDeviceCount(&count));
    if (count < 2) {
        std::fprintf(stderr, "needs two GPUs, found %d\n", count);
        return 1;
    }
    const std::size_t max_bytes = *std::max_element(sizes.begin(), sizes.end());
    Gpu g[2];
    for (int d = 0; d < 2; ++d) {
        CHECK(cudaSetDevice(d));
        CHECK(cudaStreamCreateWithFlags(&g[d].s, cudaStreamNonBlocking));
        CHECK(cudaEventCreate(&g[d].start));
        CHECK(cudaEventCreate(&g[d].end));
        CHECK(cudaEventCreate(&g[d].stop));
        CHECK(cudaMalloc(&g[d].src, max_bytes));
        CHECK(cudaMalloc(&g[d].dst, max_bytes));
        fill<<<256, 256>>>(g[d].src, max_bytes / 4, 17u + static_cast<unsigned int>(d));
        CHECK(cudaGetLastError());
        CHECK(cudaMemset(g[d].dst, 0, max_bytes));
        CHECK(cudaDeviceSynchronize());
    }
    // Peer access off (the default): the runtime stages every peer copy through host memory.
    if (peer) {
        for (int d = 0; d < 2; ++d) {
            int can = 0;
            CHECK(cudaDeviceCanAccessPeer(&can, d, 1 - d));
            if (!can) {
                std::fprintf(stderr, "GPU %d cannot access GPU %d\n", d, 1 - d);
                return 1;
            }
            CHECK(cudaSetDevice(d));
            CHECK(cudaDeviceEnablePeerAccess(1 - d, 0));
        }
    }
    const std::string events_path = outdir + "/events.csv";
    std::FILE* ev = std::fopen(events_path.c_str(), "w");
    if (!ev) {
        std::fprintf(stderr, "cannot write %s\n", events_path.c_str());
        return 1;
    }
    std::fprintf(ev, "case,bytes,rep,gpu0_us,gpu1_us,row_us\n");
    std::vector<Rep> marks;
    const char* cases[] = {"alone01", "alone10", "both", "gated"};
    for (const std::size_t n : sizes) {
        for (const char* kase : cases) {
            const std::string c = kase;
            if (peer && c == "gated") continue;
            const bool from0 = c != "alone10";
            const bool from1 = c != "alone01";
            for (int r = 0; r < kWarmup + reps; ++r) {
                for (int d : {1, 0}) {
                    CHECK(cudaSetDevice(d));
                    CHECK(cudaDeviceSynchronize());
                }
                std::uint64_t t0 = 0;
                CUPTI(cuptiGetTimestamp(&t0));
                if (c == "gated") {
                    for (int d : {1, 0}) {
                        CHECK(cudaSetDevice(d));
                        spin<<<1, 1, 0, g[d].s>>>(static_cast<unsigned long long>(kSpinUs * 1e3));
                        CHECK(cudaGetLastError());
                    }
                }
                CHECK(cudaSetDevice(0));
                if (from0) CHECK(cudaEventRecord(g[0].start, g[0].s));
                if (from1) {
                    CHECK(cudaSetDevice(1));
                    if (c == "both") CHECK(cudaStreamWaitEvent(g[1].s, g[0].start, 0));
                    CHECK(cudaEventRecord(g[1].start, g[1].s));
                    CHECK(cudaMemcpyPeerAsync(g[0].dst, 0, g[1].src, 1, n, g[1].s));
                    CHECK(cudaEventRecord(g[1].end, g[1].s));
                }
                if (from0) {
                    CHECK(cudaSetDevice(0));
                    CHECK(cudaMemcpyPeerAsync(g[1].dst, 1, g[0].src, 0, n, g[0].s));
                    CHECK(cudaEventRecord(g[0].end, g[0].s));
                    if (c == "both") {
                        CHECK(cudaStreamWaitEvent(g[0].s, g[1].end, 0));
                        CHECK(cudaEventRecord(g[0].stop, g[0].s));
                    }
                }
                for (int d : {1, 0}) {
                    CHECK(cudaSetDevice(d));
                    CHECK(cudaDeviceSynchronize());
                }
                std::uint64_t t1 = 0;
                CUPTI(cuptiGetTimestamp(&t1));
                if (r < kWarmup) continue;
                const double e0 = from0 ? elapsed_us(g[0].start, g[0].end) : 0.0;
                const double e1 = from1 ? elapsed_us(g[1].start, g[1].end) : 0.0;
                const double row = c == "both" ? elapsed_us(g[0].start, g[0].stop) : 0.0;
                std::fprintf(ev, "%s,%zu,%d,%.3f,%.3f,%.3f\n", kase, n, r - kWarmup, e0, e1, row);
                marks.push_back(Rep{c, n, r - kWarmup, t0, t1});
            }
            if (from0) verify(g[1], 1, n, 17u);
            if (from1) verify(g[0], 0, n, 18u);
        }
    }
    std::fclose(ev);
    CHECK(cudaDeviceSynchronize());
    CUPTI(cuptiActivityFlushAll(1));

    const std::string trace_path = outdir + "/trace.csv";
    std::FILE* tr = std::fopen(trace_path.c_str(), "w");
    if (!tr) {
        std::fprintf(stderr, "cannot write %s\n", trace_path.c_str());
        return 1;
    }
    std::fprintf(tr, "case,bytes,rep,kind,name,device,stream,channel,channel_type,copy_kind,src_kind,dst_kind,rec_bytes,correlation,start_us,end_us\n");
    std::size_t written = 0;
    {
        const std::lock_guard<std::mutex> lock(g_mutex);
        std::sort(g_records.begin(), g_records.end(), [](const Record& a, const Record& b) { return a.start < b.start; });
        for (const Rep& m : marks) {
            for (const Record& x : g_records) {
                if (x.start < m.t0 || x.start > m.t1) continue;
                std::fprintf(tr, "%s,%zu,%d,%s,%s,%d,%u,%u,%u,%d,%d,%d,%llu,%u,%.3f,%.3f\n", m.kase.c_str(), m.bytes, m.rep, x.kind.c_str(),
                             x.name.c_str(), x.device, x.stream, x.channel, x.channel_type, x.copy_kind, x.src_kind, x.dst_kind,
                             static_cast<unsigned long long>(x.bytes), x.correlation, (static_cast<double>(x.start) - m.t0) * 1e-3,
                             (static_cast<double>(x.end) - m.t0) * 1e-3);
                ++written;
            }
        }
    }
    std::fclose(tr);
    std::fprintf(stderr, "%zu records of %zu repetitions written to %s\n", written, marks.size(), trace_path.c_str());
    return written > 0 ? 0 : 1;
}
