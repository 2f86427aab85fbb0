// The CUDA backend of dmaprobe: one method per strategy. docs/harness.md describes the method
// and every row; the comments here say how each number is taken.
#include "cuda_backend.h"

#include <cuda_runtime.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <future>
#include <map>
#include <stdexcept>
#include <thread>

#include <sys/mman.h>

#include "../chase.h"
#include "../datagen.h"
#include "dmasim/core/units.h"
#include "../stats.h"
#include "../sysinfo.h"
#include "cuda_check.h"
#include "kernels.cuh"

namespace dmaprobe {

namespace {

namespace lim = dmasim::core::limits;
// Stores beside a chase (zero_copy stores_beside): they stop by themselves after this long if
// the chase never tells them to; the kernel that waits for their queue to fill walks this much
// GPU memory.
constexpr unsigned long long kStoresBesideMaxNs = 60'000'000'000ULL;
constexpr std::size_t kSettleBytes = 4096;

using Clock = std::chrono::steady_clock;
using dmasim::core::ResultRow;

double us_since(Clock::time_point t0) {
    return std::chrono::duration<double, std::micro>(Clock::now() - t0).count();
}

// Buffers are allocated once, at the largest size any runnable case needs, on first use.
enum class Role { dev_a, dev_b, dev_compute, dev_copy, pinned_a, pinned_b, pageable_a, pageable_b, mapped_a, mapped_b };
enum class Kind { device, pinned, pageable, mapped };

Kind kind_of(Role r) {
    switch (r) {
        case Role::dev_a:
        case Role::dev_b:
        case Role::dev_compute:
        case Role::dev_copy: return Kind::device;
        case Role::pinned_a:
        case Role::pinned_b: return Kind::pinned;
        case Role::pageable_a:
        case Role::pageable_b: return Kind::pageable;
        case Role::mapped_a:
        case Role::mapped_b: return Kind::mapped;
    }
    return Kind::device;
}

Role host_role(HostMemory m, bool second) {
    switch (m) {
        case HostMemory::pinned: return second ? Role::pinned_b : Role::pinned_a;
        case HostMemory::pageable: return second ? Role::pageable_b : Role::pageable_a;
        case HostMemory::zero_copy: return second ? Role::mapped_b : Role::mapped_a;
    }
    return Role::pinned_a;
}

std::vector<Role> roles_of(const MeasurementSpec& s) {
    switch (s.strategy) {
        case Strategy::pageable: return {Role::dev_a, Role::pageable_a};
        case Strategy::pinned: return s.setup_only ? std::vector<Role>{} : std::vector<Role>{Role::dev_a, Role::pinned_a};
        case Strategy::registered: return {Role::dev_a, Role::pageable_a};
        case Strategy::duplex:
        case Strategy::periodic:
            return {Role::dev_a, Role::dev_b, host_role(s.host_memory, false), host_role(s.host_memory, true)};
        case Strategy::async_overlap: return {Role::dev_a, Role::dev_b, Role::pinned_a, Role::pinned_b};
        case Strategy::zero_copy:
            if (s.chase && s.has_copy_beside) {  // a chase through host memory (spec.cpp)
                return {Role::dev_b, Role::mapped_a, Role::dev_copy, s.copy_beside == Direction::h2d ? Role::pinned_a : Role::pinned_b};
            }
            if (s.has_copy_beside) {
                return {Role::dev_a, Role::dev_b, Role::mapped_a, Role::mapped_b, Role::dev_copy,
                        s.copy_beside == Direction::h2d ? Role::pinned_a : Role::pinned_b};
            }
            return {Role::dev_a, Role::dev_b, Role::mapped_a, Role::mapped_b};
        default: return {};
    }
}

// Bytes a case needs in a buffer of that role: its size, past the host offset for host
// buffers, and the compute kernel's own working set.
std::size_t bytes_needed(const MeasurementSpec& s, Role r) {
    if (r == Role::dev_compute) return s.compute_bytes;
    // A chase's copy beside it moves chunks of its own size, whatever the chase's working set.
    if (s.chase && s.has_copy_beside && (r == Role::dev_copy || r == Role::pinned_a || r == Role::pinned_b)) {
        return lim::kCopyBesideChaseChunk;
    }
    const bool host_side = kind_of(r) != Kind::device;
    return s.size_bytes + (host_side ? s.host_offset : 0);
}

std::string uuid_string(const cudaUUID_t& u) {
    const auto* b = reinterpret_cast<const unsigned char*>(u.bytes);
    char buf[64];
    std::snprintf(buf, sizeof buf,
                  "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", b[0], b[1], b[2],
                  b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15]);
    return buf;
}

std::string bytes_text(std::size_t n) { return dmasim::core::to_string(dmasim::core::Bytes{static_cast<std::uint64_t>(n)}); }

struct Buffer {
    void* p = nullptr;    // host or device pointer
    void* dev = nullptr;  // mapped: the device pointer of p
    std::size_t cap = 0;
};

// A device allocation on a given GPU, freed on scope exit (peer cases).
struct DeviceAlloc {
    int device = 0;
    void* p = nullptr;
    DeviceAlloc(int dev, std::size_t n) : device(dev) {
        CUDA_CHECK(cudaSetDevice(dev));
        CUDA_CHECK(cudaMalloc(&p, n));
    }
    ~DeviceAlloc() {
        if (p != nullptr && cudaSetDevice(device) == cudaSuccess) cudaFree(p);
    }
    DeviceAlloc(const DeviceAlloc&) = delete;
    DeviceAlloc& operator=(const DeviceAlloc&) = delete;
};

struct StreamOn {
    int device = 0;
    cudaStream_t s = nullptr;
    explicit StreamOn(int dev) : device(dev) {
        CUDA_CHECK(cudaSetDevice(dev));
        CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    }
    ~StreamOn() {
        if (s != nullptr && cudaSetDevice(device) == cudaSuccess) cudaStreamDestroy(s);
    }
    StreamOn(const StreamOn&) = delete;
    StreamOn& operator=(const StreamOn&) = delete;
};

struct EventOn {
    int device = 0;
    cudaEvent_t e = nullptr;
    explicit EventOn(int dev) : device(dev) {
        CUDA_CHECK(cudaSetDevice(dev));
        CUDA_CHECK(cudaEventCreate(&e));
    }
    ~EventOn() {
        if (e != nullptr && cudaSetDevice(device) == cudaSuccess) cudaEventDestroy(e);
    }
    EventOn(const EventOn&) = delete;
    EventOn& operator=(const EventOn&) = delete;
};

double elapsed_us(cudaEvent_t a, cudaEvent_t b) {
    float ms = 0;
    CUDA_CHECK(cudaEventElapsedTime(&ms, a, b));
    return static_cast<double>(ms) * 1e3;
}

// Waits for a release time: sleeps until shortly before it (FrameWait::sleep), then spins on the
// clock.
void wait_until(Clock::time_point t, FrameWait how) {
    const auto early = t - std::chrono::microseconds(200);
    if (how == FrameWait::sleep && Clock::now() < early) std::this_thread::sleep_until(early);
    while (Clock::now() < t) {
    }
}

class CudaBackend final : public Backend {
public:
    CudaBackend(const Options& opt, const std::vector<CaseDecision>& decisions);
    ~CudaBackend() override;
    CudaBackend(const CudaBackend&) = delete;
    CudaBackend& operator=(const CudaBackend&) = delete;

    MachineInfo machine_info() const override { return machine_; }
    std::vector<ResultRow> measure(const MeasurementSpec& spec) override;
    void describe(Metadata& m) const override;

private:
    Buffer& ensure(Role r, std::size_t n);
    void* host(Role r, std::size_t n) { return ensure(r, n).p; }
    void* mapped_dev(Role r, std::size_t n) { return ensure(r, n).dev; }
    void* dev(Role r, std::size_t n) { return ensure(r, n).p; }
    cudaStream_t stream(std::size_t i);
    cudaEvent_t done_event(std::size_t i);
    int fill_blocks() const { return prop_.multiProcessorCount * 8; }

    void device_fill(void* p, std::size_t n, std::uint64_t seed, int device);
    // Overwrites a device destination before a repetition, so that verifying the last one
    // proves that it wrote every byte (host sources are not rewritten by default).
    void poison_device(void* p, std::size_t n, unsigned char value = 0);
    // The CPU writes a host source (fill_pattern); with --flush-host-data its lines then leave
    // the CPU's caches, so that reads of it find DRAM.
    void fill_host(void* p, std::size_t n, std::uint64_t seed);
    // Seed of a host source buffer: one per case, or one per repetition with --fresh-host-data.
    std::uint64_t host_seed(const MeasurementSpec& s, int rep, std::uint64_t role) const {
        return make_seed(s.index, opt_.fresh_host_data ? static_cast<std::uint64_t>(rep) : kCaseWide, role);
    }
    static constexpr std::uint64_t kCaseWide = 0xFFFFFFF;
    void verify_device(const void* p, std::size_t n, std::uint64_t seed, std::uint64_t mask, int device,
                       const std::string& what);
    void verify_host(const void* p, std::size_t n, std::uint64_t seed, std::uint64_t mask, const std::string& what);
    // Every byte of a device buffer must be `value` (copies from never-touched memory).
    void verify_device_value(const void* p, std::size_t n, unsigned char value, const std::string& what);

    // The compute kernel beside a transfer (spec.compute_ns > 0): queued on its own stream
    // behind the start event, so that the gate releases it with the transfer; its end event
    // tells whether it outlasted the transfer.
    void launch_compute_beside(const MeasurementSpec& s, cudaEvent_t start, cudaEvent_t end);
    // After a repetition: whether the compute kernel ended after `transfer_end`.
    bool compute_outlasted(cudaEvent_t start, cudaEvent_t compute_end, cudaEvent_t transfer_end);
    static std::string compute_note(const MeasurementSpec& s, int short_reps, int reps);

    void prepare_work();
    void calibrate();
    long long spin_ns_for(double target_ns);
    void launch_work_for(const void* in, void* out, std::size_t n, double target_ns, cudaStream_t s);

    void read_link_under_load(GpuInfo& g);

    // The timing gate (launch_gate): close before recording the start event, enqueue the work
    // (nothing that waits on the host), open, then synchronise and check.
    void close_gate(cudaStream_t s);
    void open_gate();
    void check_gate();

    std::vector<ResultRow> measure_copy(const MeasurementSpec& s, bool pinned);
    std::vector<ResultRow> measure_pinned(const MeasurementSpec& s);
    std::vector<ResultRow> measure_registered(const MeasurementSpec& s);
    std::vector<ResultRow> measure_duplex(const MeasurementSpec& s);
    std::vector<ResultRow> measure_async(const MeasurementSpec& s);
    std::vector<ResultRow> measure_zero_copy(const MeasurementSpec& s);
    std::vector<ResultRow> measure_chase(const MeasurementSpec& s);
    std::vector<ResultRow> measure_local_copy(const MeasurementSpec& s);
    std::vector<ResultRow> measure_fresh_pageable(const MeasurementSpec& s);
    std::vector<ResultRow> measure_peer(const MeasurementSpec& s);
    std::vector<ResultRow> measure_periodic(const MeasurementSpec& s);

    Options opt_;
    int device_ = 0;
    cudaDeviceProp prop_{};
    std::map<Role, std::size_t> want_;
    std::map<Role, Buffer> bufs_;
    std::vector<cudaStream_t> streams_;
    std::vector<cudaEvent_t> done_;
    cudaEvent_t start_ = nullptr;
    cudaEvent_t stop_ = nullptr;
    cudaEvent_t compute_end_ = nullptr;
    std::map<int, unsigned long long*> verify_result_;
    int* gate_host_ = nullptr;
    int* gate_dev_ = nullptr;
    bool use_gate_ = true;
    bool work_prepared_ = false;
    std::size_t work_smem_ = 0;
    KernelCalibration calib_;
    MachineInfo machine_;
    std::vector<GpuInfo> gpus_;
    int driver_version_ = 0;
    int runtime_version_ = 0;
    std::vector<std::string> notes_;
};

CudaBackend::CudaBackend(const Options& opt, const std::vector<CaseDecision>& decisions) : opt_(opt) {
    std::string why;
    const int count = cuda_device_count(&why);
    if (count == 0) {
        throw std::runtime_error("no usable CUDA device (" + why +
                                 "); dmaprobe measures on a GPU machine (use --list to check a plan without one)");
    }
    device_ = opt.measuring_device();
    if (device_ >= count) {
        throw std::runtime_error("--device " + std::to_string(device_) + ": this machine has " +
                                 std::to_string(count) + " CUDA device(s)");
    }
    CUDA_CHECK(cudaDriverGetVersion(&driver_version_));
    CUDA_CHECK(cudaRuntimeGetVersion(&runtime_version_));

    machine_.device_count = count;
    machine_.device = device_;
    machine_.peer_capable.assign(count, std::vector<bool>(count, false));
    for (int i = 0; i < count; ++i) {
        GpuInfo g;
        g.index = i;
        cudaDeviceProp p{};
        CUDA_CHECK(cudaGetDeviceProperties(&p, i));
        g.name = p.name;
        g.uuid = uuid_string(p.uuid);
        g.cc_major = p.major;
        g.cc_minor = p.minor;
        g.sm_count = p.multiProcessorCount;
        g.memory_bytes = p.totalGlobalMem;
        g.l2_bytes = p.l2CacheSize;
        g.async_engine_count = p.asyncEngineCount;
        g.can_map_host_memory = p.canMapHostMemory != 0;
        g.unified_addressing = p.unifiedAddressing != 0;
        CUDA_CHECK(cudaDeviceGetAttribute(&g.clock_khz, cudaDevAttrClockRate, i));
        CUDA_CHECK(cudaDeviceGetAttribute(&g.memory_clock_khz, cudaDevAttrMemoryClockRate, i));
        CUDA_CHECK(cudaDeviceGetAttribute(&g.memory_bus_width_bits, cudaDevAttrGlobalMemoryBusWidth, i));
        char bus[64] = {};
        CUDA_CHECK(cudaDeviceGetPCIBusId(bus, static_cast<int>(sizeof bus), i));
        const std::string normalized = normalize_bus_id(bus);
        g.pci_bus_id = normalized.empty() ? std::string(bus) : normalized;
        g.numa_node = read_numa_node(kSysfsPciDevices, g.pci_bus_id);
        g.link_idle = read_link(kSysfsPciDevices, g.pci_bus_id);
        for (int j = 0; j < count; ++j) {
            if (i == j) continue;
            int can = 0;
            CUDA_CHECK(cudaDeviceCanAccessPeer(&can, i, j));
            machine_.peer_capable[i][j] = can != 0;
        }
        if (i == device_) prop_ = p;
        gpus_.push_back(g);
    }

    machine_.copy_engines = prop_.asyncEngineCount;
    machine_.connections = max_connections_from_env(std::getenv("CUDA_DEVICE_MAX_CONNECTIONS"));
    // How the GPUs are joined decides which modelled peer path a copy between them measures.
    if (count >= 2) machine_.routes = query_nvidia_smi_topo();
    CUDA_CHECK(cudaSetDevice(device_));
    CUDA_CHECK(cudaEventCreate(&start_));
    CUDA_CHECK(cudaEventCreate(&stop_));
    CUDA_CHECK(cudaEventCreate(&compute_end_));
    CUDA_CHECK(cudaHostAlloc(reinterpret_cast<void**>(&gate_host_), 64, cudaHostAllocMapped));
    CUDA_CHECK(cudaHostGetDevicePointer(reinterpret_cast<void**>(&gate_dev_), gate_host_, 0));
    if (const char* g = std::getenv("DMAPROBE_NO_GATE"); g != nullptr && *g != '\0' && std::string(g) != "0") {
        use_gate_ = false;
        notes_.push_back("timing gate off (DMAPROBE_NO_GATE): enqueue time may add to event-timed intervals");
    }

    for (const auto& d : decisions) {
        if (d.action != CaseAction::run) continue;
        std::vector<Role> roles = roles_of(d.spec);
        if (d.spec.compute_ns > 0) roles.push_back(Role::dev_compute);
        for (Role r : roles) {
            auto& w = want_[r];
            w = std::max<std::size_t>(w, bytes_needed(d.spec, r));
        }
    }

    read_link_under_load(gpus_[static_cast<std::size_t>(device_)]);
    const PcieLink& link = gpus_[static_cast<std::size_t>(device_)].link_under_load;
    machine_.link_generation = link.gen_current;
    machine_.link_lanes = link.width_current;
    machine_.link_source = link.source;
    if (!link.known()) notes_.push_back("PCIe link of the measured GPU could not be read (sysfs, nvidia-smi)");
}

CudaBackend::~CudaBackend() {
    // Errors are ignored here: the run is over, and after a failure the context may be gone.
    for (auto& [role, b] : bufs_) {
        if (b.p == nullptr) continue;
        switch (kind_of(role)) {
            case Kind::device: cudaFree(b.p); break;
            case Kind::pinned:
            case Kind::mapped: cudaFreeHost(b.p); break;
            case Kind::pageable: std::free(b.p); break;
        }
    }
    for (auto& [dev, p] : verify_result_) {
        if (cudaSetDevice(dev) == cudaSuccess) cudaFree(p);
    }
    cudaSetDevice(device_);
    for (auto s : streams_) cudaStreamDestroy(s);
    for (auto e : done_) cudaEventDestroy(e);
    if (start_ != nullptr) cudaEventDestroy(start_);
    if (stop_ != nullptr) cudaEventDestroy(stop_);
    if (compute_end_ != nullptr) cudaEventDestroy(compute_end_);
    if (gate_host_ != nullptr) cudaFreeHost(gate_host_);
}

void CudaBackend::close_gate(cudaStream_t s) {
    if (!use_gate_) return;
    reinterpret_cast<volatile int*>(gate_host_)[0] = 0;
    reinterpret_cast<volatile int*>(gate_host_)[1] = 0;
    std::atomic_thread_fence(std::memory_order_seq_cst);
    launch_gate(gate_dev_, 5ULL * 1000 * 1000 * 1000, s);
}

void CudaBackend::open_gate() {
    std::atomic_thread_fence(std::memory_order_seq_cst);
    reinterpret_cast<volatile int*>(gate_host_)[0] = 1;
}

void CudaBackend::check_gate() {
    if (reinterpret_cast<volatile int*>(gate_host_)[1] != 0) {
        throw std::runtime_error("timing gate: the GPU did not see the host's flag within 5 s; under "
                                 "compute-sanitizer (which serialises kernel launches) set DMAPROBE_NO_GATE=1");
    }
}

Buffer& CudaBackend::ensure(Role r, std::size_t n) {
    Buffer& b = bufs_[r];
    if (b.p != nullptr && b.cap >= n) return b;
    const std::size_t want = std::max(n, want_[r]);
    CUDA_CHECK(cudaSetDevice(device_));
    if (b.p != nullptr) {  // should not happen (want_ covers every case), but stay correct
        switch (kind_of(r)) {
            case Kind::device: CUDA_CHECK(cudaFree(b.p)); break;
            case Kind::pinned:
            case Kind::mapped: CUDA_CHECK(cudaFreeHost(b.p)); break;
            case Kind::pageable: std::free(b.p); break;
        }
        b = Buffer{};
    }
    switch (kind_of(r)) {
        case Kind::device:
            CUDA_CHECK(cudaMalloc(&b.p, want));
            break;
        case Kind::pinned:
            CUDA_CHECK(cudaMallocHost(&b.p, want));
            break;
        case Kind::mapped:
            CUDA_CHECK(cudaHostAlloc(&b.p, want, cudaHostAllocMapped));
            CUDA_CHECK(cudaHostGetDevicePointer(&b.dev, b.p, 0));
            break;
        case Kind::pageable: {
            const std::size_t rounded = (want + 4095) / 4096 * 4096;
            b.p = std::aligned_alloc(4096, rounded);
            if (b.p == nullptr) throw std::runtime_error("cannot allocate " + bytes_text(rounded) + " of host memory");
            std::memset(b.p, 0x5A, rounded);  // fault every page in before any measurement
            break;
        }
    }
    b.cap = want;
    return b;
}

cudaStream_t CudaBackend::stream(std::size_t i) {
    CUDA_CHECK(cudaSetDevice(device_));
    while (streams_.size() <= i) {
        cudaStream_t s = nullptr;
        CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
        streams_.push_back(s);
    }
    return streams_[i];
}

cudaEvent_t CudaBackend::done_event(std::size_t i) {
    CUDA_CHECK(cudaSetDevice(device_));
    while (done_.size() <= i) {
        cudaEvent_t e = nullptr;
        CUDA_CHECK(cudaEventCreate(&e));
        done_.push_back(e);
    }
    return done_[i];
}

void CudaBackend::device_fill(void* p, std::size_t n, std::uint64_t seed, int device) {
    CUDA_CHECK(cudaSetDevice(device));
    launch_fill(p, n, seed, fill_blocks(), nullptr);
    CUDA_CHECK(cudaDeviceSynchronize());
    CUDA_CHECK(cudaSetDevice(device_));
}

void CudaBackend::fill_host(void* p, std::size_t n, std::uint64_t seed) {
    fill_pattern(p, n, seed);
    if (opt_.flush_host_data && !flush_from_caches(p, n)) {
        throw std::runtime_error("--flush-host-data: this CPU has no clflushopt");
    }
}

void CudaBackend::poison_device(void* p, std::size_t n, unsigned char value) {
    CUDA_CHECK(cudaSetDevice(device_));
    CUDA_CHECK(cudaMemset(p, value, n));
    CUDA_CHECK(cudaDeviceSynchronize());
}

void CudaBackend::verify_device(const void* p, std::size_t n, std::uint64_t seed, std::uint64_t mask, int device,
                                const std::string& what) {
    CUDA_CHECK(cudaSetDevice(device));
    unsigned long long*& result = verify_result_[device];
    if (result == nullptr) CUDA_CHECK(cudaMalloc(&result, 2 * sizeof(unsigned long long)));
    const unsigned long long init[2] = {0ULL, ~0ULL};
    CUDA_CHECK(cudaMemcpy(result, init, sizeof init, cudaMemcpyHostToDevice));
    launch_verify(p, n, seed, mask, result, fill_blocks(), nullptr);
    unsigned long long got[2] = {0, 0};
    CUDA_CHECK(cudaMemcpy(got, result, sizeof got, cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaSetDevice(device_));
    if (got[0] != 0) {
        throw std::runtime_error("verification failed (" + what + ", GPU " + std::to_string(device) +
                                 " buffer): " + std::to_string(got[0]) + " of " + std::to_string(n) +
                                 " bytes differ, the first at byte " + std::to_string(got[1]));
    }
}

void CudaBackend::verify_host(const void* p, std::size_t n, std::uint64_t seed, std::uint64_t mask,
                              const std::string& what) {
    const VerifyResult r = verify_pattern(p, n, seed, mask);
    if (!r.ok()) {
        throw std::runtime_error("verification failed (" + what + ", host buffer): " + std::to_string(r.mismatches) +
                                 " of " + std::to_string(n) + " bytes differ, the first at byte " +
                                 std::to_string(r.first_bad));
    }
}

void CudaBackend::verify_device_value(const void* p, std::size_t n, unsigned char value, const std::string& what) {
    CUDA_CHECK(cudaSetDevice(device_));
    unsigned long long*& result = verify_result_[device_];
    if (result == nullptr) CUDA_CHECK(cudaMalloc(&result, 2 * sizeof(unsigned long long)));
    const unsigned long long init[2] = {0ULL, ~0ULL};
    CUDA_CHECK(cudaMemcpy(result, init, sizeof init, cudaMemcpyHostToDevice));
    launch_verify_value(p, n, value, result, fill_blocks(), nullptr);
    unsigned long long got[2] = {0, 0};
    CUDA_CHECK(cudaMemcpy(got, result, sizeof got, cudaMemcpyDeviceToHost));
    if (got[0] != 0) {
        throw std::runtime_error("verification failed (" + what + ", GPU " + std::to_string(device_) + " buffer): " +
                                 std::to_string(got[0]) + " of " + std::to_string(n) + " bytes are not " +
                                 std::to_string(value) + ", the first at byte " + std::to_string(got[1]));
    }
}

void CudaBackend::launch_compute_beside(const MeasurementSpec& s, cudaEvent_t start, cudaEvent_t end) {
    void* buf = dev(Role::dev_compute, s.compute_bytes);
    cudaStream_t cs = stream(3);  // 0-2 carry the transfers of duplex and zero_copy
    CUDA_CHECK(cudaStreamWaitEvent(cs, start, 0));
    launch_compute(buf, s.compute_bytes, s.compute_ns, s.compute_blocks, s.compute_threads, cs);
    CUDA_CHECK(cudaEventRecord(end, cs));
}

bool CudaBackend::compute_outlasted(cudaEvent_t start, cudaEvent_t compute_end, cudaEvent_t transfer_end) {
    CUDA_CHECK(cudaEventSynchronize(compute_end));
    return elapsed_us(start, compute_end) >= elapsed_us(start, transfer_end);
}

std::string CudaBackend::compute_note(const MeasurementSpec& s, int short_reps, int reps) {
    std::string n = "beside a compute kernel of " + std::to_string(s.compute_blocks) + "x" +
                    std::to_string(s.compute_threads) + " threads streaming over " + bytes_text(s.compute_bytes) +
                    " of GPU memory for " + short_number(static_cast<double>(s.compute_ns) * 1e-3) + " us";
    if (short_reps > 0) {
        n += "; WARNING: in " + std::to_string(short_reps) + " of " + std::to_string(reps) +
             " repetitions the compute kernel ended before the transfer";
    }
    return n;
}

void CudaBackend::prepare_work() {
    if (work_prepared_) return;
    CUDA_CHECK(cudaSetDevice(device_));
    work_smem_ = prepare_work_kernel(prop_);
    if (work_smem_ == 0) {
        notes_.push_back("synthetic kernel: one block per SM could not be forced through shared memory; "
                         "chunk kernels of async_overlap may overlap each other");
    }
    work_prepared_ = true;
}

void CudaBackend::calibrate() {
    if (calib_.done) return;
    prepare_work();
    cudaStream_t s = stream(0);
    const double targets_us[] = {0.0, 5.0, 20.0, 100.0, 500.0, 2000.0};
    for (double target : targets_us) {
        std::vector<double> got;
        for (int i = 0; i < 10; ++i) {
            close_gate(s);
            CUDA_CHECK(cudaEventRecord(start_, s));
            launch_work(nullptr, nullptr, 0, 0, static_cast<long long>(target * 1e3), prop_.multiProcessorCount, 256,
                        work_smem_, s);
            CUDA_CHECK(cudaEventRecord(stop_, s));
            open_gate();
            CUDA_CHECK(cudaEventSynchronize(stop_));
            check_gate();
            if (i >= 3) got.push_back(elapsed_us(start_, stop_));
        }
        calib_.points.emplace_back(target, dmasim::core::percentile(got, 0.5));
    }
    calib_.overhead_us = calib_.points.front().second;
    const auto& lo = calib_.points[2];
    const auto& hi = calib_.points.back();
    double slope = (hi.second - lo.second) / (hi.first - lo.first);
    if (!(slope > 0.5 && slope < 2.0)) {
        notes_.push_back("synthetic kernel calibration slope " + short_number(slope) + " out of range; using 1");
        slope = 1.0;
    }
    calib_.slope = slope;
    calib_.done = true;
}

long long CudaBackend::spin_ns_for(double target_ns) {
    calibrate();
    const double spin_us = (target_ns * 1e-3 - calib_.overhead_us) / calib_.slope;
    return spin_us <= 0 ? 0 : static_cast<long long>(std::llround(spin_us * 1e3));
}

void CudaBackend::launch_work_for(const void* in, void* out, std::size_t n, double target_ns, cudaStream_t s) {
    const long long spin = spin_ns_for(target_ns);
    launch_work(in, out, n, kKernelMask, spin, prop_.multiProcessorCount, 256, work_smem_, s);
}

void CudaBackend::read_link_under_load(GpuInfo& g) {
    // Idle GPUs train their link down; read it while copies keep it busy.
    const std::size_t n = std::size_t{64} << 20;
    void* h = nullptr;
    void* d = nullptr;
    CUDA_CHECK(cudaSetDevice(device_));
    CUDA_CHECK(cudaMallocHost(&h, n));
    CUDA_CHECK(cudaMalloc(&d, n));
    std::memset(h, 1, n);
    cudaStream_t s = stream(0);
    const std::string bus = g.pci_bus_id;
    auto reader = std::async(std::launch::async, [bus] {
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
        return read_link(kSysfsPciDevices, bus);
    });
    const auto t0 = Clock::now();
    std::exception_ptr failure;
    try {
        while (reader.wait_for(std::chrono::seconds(0)) != std::future_status::ready &&
               Clock::now() - t0 < std::chrono::seconds(10)) {
            for (int i = 0; i < 4; ++i) CUDA_CHECK(cudaMemcpyAsync(d, h, n, cudaMemcpyHostToDevice, s));
            CUDA_CHECK(cudaStreamSynchronize(s));
        }
    } catch (...) {
        failure = std::current_exception();
    }
    g.link_under_load = reader.get();
    cudaFreeHost(h);
    cudaFree(d);
    if (failure) std::rethrow_exception(failure);
}

std::vector<ResultRow> CudaBackend::measure(const MeasurementSpec& spec) {
    CUDA_CHECK(cudaSetDevice(device_));
    std::vector<ResultRow> rows;
    switch (spec.strategy) {
        case Strategy::pageable: rows = spec.host_fresh ? measure_fresh_pageable(spec) : measure_copy(spec, false); break;
        case Strategy::pinned: rows = measure_pinned(spec); break;
        case Strategy::registered: rows = measure_registered(spec); break;
        case Strategy::duplex: rows = measure_duplex(spec); break;
        case Strategy::async_overlap: rows = measure_async(spec); break;
        case Strategy::zero_copy: rows = spec.chase ? measure_chase(spec) : measure_zero_copy(spec); break;
        case Strategy::peer: rows = spec.local_copy ? measure_local_copy(spec) : measure_peer(spec); break;
        case Strategy::periodic: rows = measure_periodic(spec); break;
        case Strategy::third_party_dma:
        case Strategy::cpu_mapped:
            throw std::logic_error(std::string("strategy ") + to_string(spec.strategy) + " cannot be measured");
    }
    CUDA_CHECK(cudaSetDevice(device_));
    CUDA_CHECK(cudaDeviceSynchronize());
    CUDA_CHECK(cudaGetLastError());
    return rows;
}

// pageable / pinned: one blocking cudaMemcpy, host clock. Pageable H2D may return once the data
// is in the driver's staging buffer, so it is followed by cudaDeviceSynchronize inside the
// timed interval; the other three cases are complete when cudaMemcpy returns.
// Host sources are written once per case (--fresh-host-data: before every repetition): a DMA
// that reads lines the CPU has just dirtied is several times slower (H100 VM: 14 vs 50 GB/s).
std::vector<ResultRow> CudaBackend::measure_copy(const MeasurementSpec& s, bool pinned) {
    const std::size_t n = s.size_bytes;
    void* h = static_cast<unsigned char*>(host(pinned ? Role::pinned_a : Role::pageable_a, n + s.host_offset)) + s.host_offset;
    void* d = dev(Role::dev_a, n);
    const bool h2d = s.direction == Direction::h2d;
    std::vector<double> t;
    std::string note;
    std::uint64_t last = 0;
    const bool fresh = opt_.fresh_host_data;
    if (h2d && !fresh) fill_host(h, n, host_seed(s, 0, 1));
    run_repetitions(s, opt_.budget_s, &note, [&](int rep, bool timed) {
        std::uint64_t seed = make_seed(s.index, static_cast<std::uint64_t>(rep), 1);
        double us = 0;
        if (h2d) {
            seed = host_seed(s, rep, 1);
            if (fresh) fill_host(h, n, seed);
            poison_device(d, n);
            const auto t0 = Clock::now();
            CUDA_CHECK(cudaMemcpy(d, h, n, cudaMemcpyHostToDevice));
            if (!pinned) CUDA_CHECK(cudaDeviceSynchronize());
            us = us_since(t0);
        } else {
            device_fill(d, n, seed, device_);
            const auto t0 = Clock::now();
            CUDA_CHECK(cudaMemcpy(h, d, n, cudaMemcpyDeviceToHost));
            us = us_since(t0);
        }
        if (timed) t.push_back(us);
        last = seed;
    });
    if (h2d) {
        verify_device(d, n, last, 0, device_, s.label());
    } else {
        verify_host(h, n, last, 0, s.label());
    }
    std::string how = note;
    if (s.host_offset > 0) {
        how = "host buffer " + std::to_string(s.host_offset) + " bytes past a page boundary" + (note.empty() ? "" : "; " + note);
    }
    return {make_row(s, "", summarize(t), how)};
}

// pinned: the copy, plus what pinned memory costs to get: cudaMallocHost(size) and
// cudaFreeHost, each timed on the host clock.
std::vector<ResultRow> CudaBackend::measure_pinned(const MeasurementSpec& s) {
    std::vector<ResultRow> rows = s.setup_only ? std::vector<ResultRow>{} : measure_copy(s, true);
    std::vector<double> alloc;
    std::vector<double> release;
    std::string note;
    run_repetitions(s, opt_.budget_s, &note, [&](int, bool timed) {
        void* p = nullptr;
        const auto t0 = Clock::now();
        CUDA_CHECK(cudaMallocHost(&p, s.size_bytes));
        const double a = us_since(t0);
        const auto t1 = Clock::now();
        CUDA_CHECK(cudaFreeHost(p));
        const double f = us_since(t1);
        if (timed) {
            alloc.push_back(a);
            release.push_back(f);
        }
    });
    const std::string suffix = note.empty() ? std::string() : "; " + note;
    rows.push_back(make_row(s, "setup=mallochost", summarize(alloc), "cudaMallocHost(size_bytes), untouched" + suffix));
    rows.push_back(make_row(s, "setup=freehost", summarize(release), "cudaFreeHost of that allocation" + suffix));
    return rows;
}

// registered: per repetition, cudaHostRegister of the (already touched) malloc'd buffer, one
// blocking cudaMemcpy, cudaHostUnregister; each timed on the host clock. Amortised over K
// reuses: copy + (register + unregister) / K, from each repetition's own times.
std::vector<ResultRow> CudaBackend::measure_registered(const MeasurementSpec& s) {
    const std::size_t n = s.size_bytes;
    void* h = static_cast<unsigned char*>(host(Role::pageable_a, n + s.host_offset)) + s.host_offset;
    if (s.setup_only) {
        // Registration alone: the malloc'd buffer is touched once (when allocated), then
        // registered and unregistered, each on the host clock.
        std::vector<double> reg, unreg;
        std::string note;
        run_repetitions(s, opt_.budget_s, &note, [&](int, bool timed) {
            const auto t0 = Clock::now();
            CUDA_CHECK(cudaHostRegister(h, n, cudaHostRegisterDefault));
            const double r = us_since(t0);
            const auto t1 = Clock::now();
            CUDA_CHECK(cudaHostUnregister(h));
            const double u = us_since(t1);
            if (timed) {
                reg.push_back(r);
                unreg.push_back(u);
            }
        });
        const std::string suffix = note.empty() ? std::string() : "; " + note;
        return {make_row(s, "setup=register", summarize(reg), "cudaHostRegister(size_bytes) of touched malloc'd memory, no copy" + suffix),
                make_row(s, "setup=unregister", summarize(unreg), "cudaHostUnregister" + suffix)};
    }
    void* d = dev(Role::dev_a, n);
    const bool h2d = s.direction == Direction::h2d;
    const double k = static_cast<double>(s.reuses);
    std::vector<double> reg, copy, unreg, amort;
    std::string note;
    std::uint64_t last = 0;
    const bool fresh = opt_.fresh_host_data;
    if (h2d && !fresh) fill_host(h, n, host_seed(s, 0, 1));
    run_repetitions(s, opt_.budget_s, &note, [&](int rep, bool timed) {
        std::uint64_t seed = make_seed(s.index, static_cast<std::uint64_t>(rep), 1);
        if (h2d) {
            seed = host_seed(s, rep, 1);
            if (fresh) fill_host(h, n, seed);
            poison_device(d, n);
        } else {
            device_fill(d, n, seed, device_);
        }
        const auto t0 = Clock::now();
        CUDA_CHECK(cudaHostRegister(h, n, cudaHostRegisterDefault));
        const double r = us_since(t0);
        const auto t1 = Clock::now();
        if (h2d) {
            CUDA_CHECK(cudaMemcpy(d, h, n, cudaMemcpyHostToDevice));
        } else {
            CUDA_CHECK(cudaMemcpy(h, d, n, cudaMemcpyDeviceToHost));
        }
        const double c = us_since(t1);
        const auto t2 = Clock::now();
        CUDA_CHECK(cudaHostUnregister(h));
        const double u = us_since(t2);
        if (timed) {
            reg.push_back(r);
            copy.push_back(c);
            unreg.push_back(u);
            amort.push_back(c + (r + u) / k);
        }
        last = seed;
    });
    if (h2d) {
        verify_device(d, n, last, 0, device_, s.label());
    } else {
        verify_host(h, n, last, 0, s.label());
    }
    const std::string suffix = note.empty() ? std::string() : "; " + note;
    std::vector<ResultRow> rows;
    rows.push_back(make_row(s, "", summarize(copy), "cudaMemcpy on the registered buffer" + suffix));
    rows.push_back(make_row(s, "setup=register", summarize(reg), "cudaHostRegister(size_bytes) of touched malloc'd memory" + suffix));
    rows.push_back(make_row(s, "setup=unregister", summarize(unreg), "cudaHostUnregister" + suffix));
    rows.push_back(make_row(s, "amortised_" + std::to_string(s.reuses), summarize(amort),
                            "(register + K copies + unregister) / K with K=" + std::to_string(s.reuses) +
                                ", per repetition" + suffix));
    return rows;
}

// duplex: H2D and D2H of size_bytes each at once. Pinned: two streams, timed with events from
// a common start event to the later of the two ends. Pageable: a cudaMemcpyAsync from pageable
// memory blocks the calling thread, so each direction gets its own host thread and stream,
// released together; host clock from the release to the later end.
std::vector<ResultRow> CudaBackend::measure_duplex(const MeasurementSpec& s) {
    const std::size_t n = s.size_bytes;
    void* ha = host(host_role(s.host_memory, false), n);  // source of H2D
    void* hb = host(host_role(s.host_memory, true), n);   // destination of D2H
    void* da = dev(Role::dev_a, n);                        // destination of H2D
    void* db = dev(Role::dev_b, n);                        // source of D2H
    cudaStream_t s1 = stream(0);
    cudaStream_t s2 = stream(1);
    cudaEvent_t e2 = done_event(0);
    cudaEvent_t e1 = done_event(1);
    const bool pinned = s.host_memory == HostMemory::pinned;
    const bool compute = s.compute_ns > 0;
    int compute_short = 0;
    int timed_reps = 0;
    std::vector<double> t, t_up, t_down;  // the later end; each direction's own end
    std::vector<double> t_one_up, t_one_down;  // one_way_beside: the blocking copies beside the pair
    std::vector<double> t_burst_up, t_burst_down;  // burst: each way's burst alone, the other's calls left out
    const int burst = s.burst_copies;
    // The gated sequence of the pair, `copies` copies each way (0 leaves a direction's calls out):
    // start event behind the gate on s1, s2 waiting for it (and the compute kernel, if any), the
    // copies back to back, an end event on each stream, s1 waiting for s2's, the stop event;
    // returns start to stop.
    const auto gated = [&](int copies_up, int copies_down) {
        close_gate(s1);
        CUDA_CHECK(cudaEventRecord(start_, s1));
        CUDA_CHECK(cudaStreamWaitEvent(s2, start_, 0));
        if (compute) launch_compute_beside(s, start_, compute_end_);
        for (int k = 0; k < copies_up; ++k) CUDA_CHECK(cudaMemcpyAsync(da, ha, n, cudaMemcpyHostToDevice, s1));
        for (int k = 0; k < copies_down; ++k) CUDA_CHECK(cudaMemcpyAsync(hb, db, n, cudaMemcpyDeviceToHost, s2));
        CUDA_CHECK(cudaEventRecord(e1, s1));
        CUDA_CHECK(cudaEventRecord(e2, s2));
        CUDA_CHECK(cudaStreamWaitEvent(s1, e2, 0));
        CUDA_CHECK(cudaEventRecord(stop_, s1));
        open_gate();
        CUDA_CHECK(cudaEventSynchronize(stop_));
        check_gate();
        return elapsed_us(start_, stop_);
    };
    std::uint64_t last_one_down = 0;
    std::string note;
    std::uint64_t last_a = 0, last_b = 0;
    if (!opt_.fresh_host_data) fill_host(ha, n, host_seed(s, 0, 1));
    run_repetitions(s, opt_.budget_s, &note, [&](int rep, bool timed) {
        const std::uint64_t seed_a = host_seed(s, rep, 1);
        const std::uint64_t seed_b = make_seed(s.index, static_cast<std::uint64_t>(rep), 2);
        if (opt_.fresh_host_data) fill_host(ha, n, seed_a);
        poison_device(da, n);
        device_fill(db, n, seed_b, device_);
        double us = 0;
        if (pinned) {
            // A burst is nvbandwidth's way: a direction's copies back to back behind the gate.
            const int copies = burst > 0 ? burst : 1;
            us = gated(copies, copies);
            if (timed) {
                t_up.push_back(elapsed_us(start_, e1));
                t_down.push_back(elapsed_us(start_, e2));
            }
        }
        if (pinned && burst > 0) {
            // Then each direction's burst alone, its destination poisoned first so that its data
            // is its own.
            if (rep == 0) {
                verify_device(da, n, seed_a, 0, device_, s.label() + " H2D burst beside the D2H one");
                verify_host(hb, n, seed_b, 0, s.label() + " D2H burst beside the H2D one");
            }
            poison_device(da, n);
            const double one_up = gated(burst, 0);
            // New data on the GPU rather than a poisoned host destination: lines the CPU has
            // just written sit dirty in its caches, and the GPU's writes to them are slower.
            const std::uint64_t seed_c = make_seed(s.index, static_cast<std::uint64_t>(rep), 3);
            device_fill(db, n, seed_c, device_);
            const double one_down = gated(0, burst);
            last_one_down = seed_c;
            if (timed) {
                t_burst_up.push_back(one_up);
                t_burst_down.push_back(one_down);
            }
        } else if (pinned) {
            if (compute && timed) {
                ++timed_reps;
                if (!compute_outlasted(start_, compute_end_, stop_)) ++compute_short;
            }
            if (compute) CUDA_CHECK(cudaDeviceSynchronize());
            if (s.one_way_beside) {
                // The pair's own data, once, before the blocking copies below overwrite both
                // destinations (they are verified after the last repetition).
                if (rep == 0) {
                    verify_device(da, n, seed_a, 0, device_, s.label() + " H2D half (before the blocking copies)");
                    verify_host(hb, n, seed_b, 0, s.label() + " D2H half (before the blocking copies)");
                }
                // As the pinned strategy's rows: a blocking cudaMemcpy on a synchronised GPU, its
                // destination overwritten first, host clock from the call to its return.
                poison_device(da, n);
                const auto up0 = Clock::now();
                CUDA_CHECK(cudaMemcpy(da, ha, n, cudaMemcpyHostToDevice));
                const double one_up = us_since(up0);
                const std::uint64_t seed_c = make_seed(s.index, static_cast<std::uint64_t>(rep), 3);
                device_fill(db, n, seed_c, device_);
                const auto down0 = Clock::now();
                CUDA_CHECK(cudaMemcpy(hb, db, n, cudaMemcpyDeviceToHost));
                const double one_down = us_since(down0);
                if (timed) {
                    t_one_up.push_back(one_up);
                    t_one_down.push_back(one_down);
                }
                last_one_down = seed_c;
            }
        } else {
            std::atomic<int> ready{0};
            std::atomic<bool> go{false};
            cudaError_t err[2] = {cudaSuccess, cudaSuccess};
            Clock::time_point end[2];
            const int dev_index = device_;
            auto worker = [&](int which) {
                cudaError_t e = cudaSetDevice(dev_index);
                ready.fetch_add(1);
                while (!go.load(std::memory_order_acquire)) {
                }
                if (e == cudaSuccess) {
                    e = which == 0 ? cudaMemcpyAsync(da, ha, n, cudaMemcpyHostToDevice, s1)
                                   : cudaMemcpyAsync(hb, db, n, cudaMemcpyDeviceToHost, s2);
                }
                if (e == cudaSuccess) e = cudaStreamSynchronize(which == 0 ? s1 : s2);
                end[which] = Clock::now();
                err[which] = e;
            };
            std::thread a(worker, 0);
            std::thread b(worker, 1);
            while (ready.load() < 2) {
            }
            const auto t0 = Clock::now();
            go.store(true, std::memory_order_release);
            a.join();
            b.join();
            cuda_check(err[0], "cudaMemcpyAsync(H2D, pageable) + cudaStreamSynchronize in duplex thread", __FILE__, __LINE__);
            cuda_check(err[1], "cudaMemcpyAsync(D2H, pageable) + cudaStreamSynchronize in duplex thread", __FILE__, __LINE__);
            us = std::chrono::duration<double, std::micro>(std::max(end[0], end[1]) - t0).count();
        }
        if (timed) t.push_back(us);
        last_a = seed_a;
        last_b = seed_b;
    });
    verify_device(da, n, last_a, 0, device_,
                  s.label() + (s.one_way_beside ? " blocking H2D" : burst > 0 ? " H2D burst alone" : " H2D half"));
    verify_host(hb, n, s.one_way_beside || burst > 0 ? last_one_down : last_b, 0,
                s.label() + (s.one_way_beside ? " blocking D2H" : burst > 0 ? " D2H burst alone" : " D2H half"));
    std::string how = pinned ? "pinned, two streams, CUDA events" : "pageable, two host threads, host clock";
    if (burst > 0) how += "; " + std::to_string(burst) + " copies back to back each way";
    if (compute) how += "; " + compute_note(s, compute_short, timed_reps);
    std::vector<ResultRow> rows{make_row(s, "", summarize(t), note.empty() ? how : how + "; " + note)};
    if (pinned) {
        // Each direction's own end tells how the two shared what they share.
        const std::string what = burst > 0 ? " burst of the pair: from the start to its last copy's end" : " copy of the pair: from the start to its end";
        rows.push_back(make_row(s, "h2d", summarize(t_up), "the H2D" + what));
        rows.push_back(make_row(s, "d2h", summarize(t_down), "the D2H" + what));
    }
    if (burst > 0) {
        rows.push_back(make_row(s, "burst_h2d", summarize(t_burst_up),
                                "the H2D burst alone, every repetition after the pair's: the same gated calls with the D2H copies left out"));
        rows.push_back(make_row(s, "burst_d2h", summarize(t_burst_down),
                                "the D2H burst alone, after the H2D one: the same gated calls with the H2D copies left out"));
    }
    if (s.one_way_beside) {
        rows.push_back(make_row(s, "blocking_h2d", summarize(t_one_up),
                                "a blocking cudaMemcpy H2D right after the pair, every repetition: call to return, host clock"));
        rows.push_back(make_row(s, "blocking_d2h", summarize(t_one_down),
                                "a blocking cudaMemcpy D2H right after that, every repetition: call to return, host clock"));
    }
    return rows;
}

// async_overlap: the data split in chunks (multiples of 256 bytes), chunk i on stream i % N:
// H2D (h2d, both) → synthetic kernel (kernel_ns > 0; its share is kernel_ns × chunk/size) →
// D2H (d2h, both). Timed with events: a start event that every stream waits for, and every
// stream's end joined into a stop event. Rows: N streams (""), 1 stream and 1 chunk
// ("serial"), and the kernel alone ("kernel").
std::vector<ResultRow> CudaBackend::measure_async(const MeasurementSpec& s) {
    const std::size_t n = s.size_bytes;
    const bool up = s.direction != Direction::d2h;
    const bool down = s.direction != Direction::h2d;
    const bool kernel = s.kernel_ns > 0;
    if (kernel) calibrate();
    auto* ha = static_cast<unsigned char*>(host(Role::pinned_a, n));
    auto* hb = static_cast<unsigned char*>(host(Role::pinned_b, n));
    auto* da = static_cast<unsigned char*>(dev(Role::dev_a, n));
    auto* db = static_cast<unsigned char*>(dev(Role::dev_b, n));
    unsigned char* out = kernel ? db : da;  // what D2H sends back
    const std::uint64_t mask = kernel ? kKernelMask : 0;

    struct Chunk {
        std::size_t off, len;
    };
    auto split = [n](int parts) {
        std::vector<Chunk> c;
        const std::size_t per = ((n + static_cast<std::size_t>(parts) - 1) / static_cast<std::size_t>(parts) + 255) / 256 * 256;
        for (std::size_t off = 0; off < n; off += per) c.push_back({off, std::min(per, n - off)});
        return c;
    };

    stream(static_cast<std::size_t>(s.streams));  // create streams and events before any timing
    done_event(static_cast<std::size_t>(s.streams));
    auto pipeline = [&](const std::vector<Chunk>& chunks, int nstreams) {
        cudaStream_t s0 = stream(0);
        close_gate(s0);
        CUDA_CHECK(cudaEventRecord(start_, s0));
        for (int j = 1; j < nstreams; ++j) CUDA_CHECK(cudaStreamWaitEvent(stream(static_cast<std::size_t>(j)), start_, 0));
        // Depth-first issues chunk by chunk (H2D, kernel, D2H of chunk 0, then chunk 1, ...);
        // breadth-first issues every chunk's H2D, then every kernel, then every D2H. The
        // hardware's queues run what they were given in that order.
        auto issue = [&](std::size_t i, int stage) {
            cudaStream_t st = stream(i % static_cast<std::size_t>(nstreams));
            const Chunk& c = chunks[i];
            if (stage == 0 && up) CUDA_CHECK(cudaMemcpyAsync(da + c.off, ha + c.off, c.len, cudaMemcpyHostToDevice, st));
            if (stage == 1 && kernel) {
                const double share = static_cast<double>(s.kernel_ns) * static_cast<double>(c.len) / static_cast<double>(n);
                launch_work_for(da + c.off, db + c.off, c.len, share, st);
            }
            if (stage == 2 && down) CUDA_CHECK(cudaMemcpyAsync(hb + c.off, out + c.off, c.len, cudaMemcpyDeviceToHost, st));
        };
        if (s.breadth_first) {
            for (int stage = 0; stage < 3; ++stage) {
                for (std::size_t i = 0; i < chunks.size(); ++i) issue(i, stage);
            }
        } else {
            for (std::size_t i = 0; i < chunks.size(); ++i) {
                for (int stage = 0; stage < 3; ++stage) issue(i, stage);
            }
        }
        for (int j = 1; j < nstreams; ++j) {
            cudaEvent_t e = done_event(static_cast<std::size_t>(j));
            CUDA_CHECK(cudaEventRecord(e, stream(static_cast<std::size_t>(j))));
            CUDA_CHECK(cudaStreamWaitEvent(s0, e, 0));
        }
        CUDA_CHECK(cudaEventRecord(stop_, s0));
        open_gate();
        CUDA_CHECK(cudaEventSynchronize(stop_));
        check_gate();
        return elapsed_us(start_, stop_);
    };

    const bool fresh = opt_.fresh_host_data;
    auto run_variant = [&](const std::vector<Chunk>& chunks, int nstreams, const std::string& what, std::string* note) {
        std::vector<double> t;
        std::uint64_t last = 0;
        const std::uint64_t role = nstreams == 1 ? 3 : 4;
        if (up && !fresh) fill_host(ha, n, host_seed(s, 0, role));
        // Device destinations are poisoned per repetition; with a host destination and the
        // same host data every time (both, without --fresh-host-data), one more untimed
        // repetition into a poisoned host buffer is what gets verified.
        auto prepare = [&](int rep) {
            std::uint64_t seed = 0;
            if (up) {
                seed = host_seed(s, rep, role);
                if (fresh) fill_host(ha, n, seed);
                poison_device(da, n);
                if (kernel) poison_device(db, n);
            } else {
                seed = make_seed(s.index, static_cast<std::uint64_t>(rep), role);
                device_fill(da, n, seed, device_);
            }
            return seed;
        };
        const int reps = run_repetitions(s, opt_.budget_s, note, [&](int rep, bool timed) {
            const std::uint64_t seed = prepare(rep);
            const double us = pipeline(chunks, nstreams);
            if (timed) t.push_back(us);
            last = seed;
        });
        if (up && down && !fresh) {
            std::memset(hb, 0, n);
            last = prepare(s.warmup + reps);
            pipeline(chunks, nstreams);
        }
        if (down) {
            verify_host(hb, n, last, mask, what);
        } else {
            verify_device(kernel ? db : da, n, last, mask, device_, what);
        }
        return summarize(t);
    };

    std::string serial_note;
    const Summary serial = run_variant(split(1), 1, s.label() + " serial", &serial_note);
    const std::vector<Chunk> chunks = split(s.streams);
    std::string note;
    const Summary overlapped = run_variant(chunks, s.streams, s.label() + " streams", &note);

    std::string main_note = std::string(s.breadth_first ? "breadth-first, " : "depth-first, ") +
                            std::to_string(s.streams) + " streams, " + std::to_string(chunks.size()) +
                            " chunks of up to " + bytes_text(chunks.front().len) + ", kernel_ns=" +
                            std::to_string(s.kernel_ns) + "; speed-up over serial " +
                            short_number(serial.median / overlapped.median) + "x";
    if (static_cast<int>(chunks.size()) < s.streams) main_note += " (fewer chunks than streams: size too small)";
    if (!note.empty()) main_note += "; " + note;
    std::vector<ResultRow> rows;
    rows.push_back(make_row(s, "", overlapped, main_note));
    rows.push_back(make_row(s, "serial", serial,
                            "1 stream, 1 chunk, no overlap" + (serial_note.empty() ? std::string() : "; " + serial_note)));

    if (kernel) {
        std::vector<double> t;
        std::string knote;
        cudaStream_t s0 = stream(0);
        run_repetitions(s, opt_.budget_s, &knote, [&](int, bool timed) {
            close_gate(s0);
            CUDA_CHECK(cudaEventRecord(start_, s0));
            launch_work_for(da, db, n, static_cast<double>(s.kernel_ns), s0);
            CUDA_CHECK(cudaEventRecord(stop_, s0));
            open_gate();
            CUDA_CHECK(cudaEventSynchronize(stop_));
            check_gate();
            if (timed) t.push_back(elapsed_us(start_, stop_));
        });
        rows.push_back(make_row(s, "kernel", summarize(t),
                                "synthetic kernel alone over size_bytes, asked for " + std::to_string(s.kernel_ns) +
                                    " ns" + (knote.empty() ? std::string() : "; " + knote)));
    }
    return rows;
}

// zero_copy: one kernel accesses mapped pinned host memory (cudaHostAlloc Mapped +
// cudaHostGetDevicePointer): h2d reads it into device memory, d2h writes device data into it,
// both does both in the same loop. Timed with events around the launch.
std::vector<ResultRow> CudaBackend::measure_zero_copy(const MeasurementSpec& s) {
    const std::size_t n = s.size_bytes;
    const int mode = s.direction == Direction::h2d ? 1 : s.direction == Direction::d2h ? 2 : 3;
    void* ma_host = host(Role::mapped_a, n);
    void* ma_dev = mapped_dev(Role::mapped_a, n);
    void* mb_host = host(Role::mapped_b, n);
    void* mb_dev = mapped_dev(Role::mapped_b, n);
    void* da = dev(Role::dev_a, n);
    void* db = dev(Role::dev_b, n);
    cudaStream_t st = stream(0);
    const bool compute = s.compute_ns > 0;
    // The copy beside: its own device buffer, so that the kernel's data stays what it checks.
    const bool beside = s.has_copy_beside;
    const bool beside_up = beside && s.copy_beside == Direction::h2d;
    void* copy_host = beside ? host(beside_up ? Role::pinned_a : Role::pinned_b, n) : nullptr;
    void* copy_dev = beside ? dev(Role::dev_copy, n) : nullptr;
    cudaStream_t cs = beside ? stream(1) : nullptr;
    cudaEvent_t copy_end = beside ? done_event(0) : nullptr;
    cudaEvent_t kernel_end = beside ? done_event(1) : nullptr;
    std::vector<double> t_copy, t_kernel;
    std::uint64_t last_c = 0;
    if (beside_up && !opt_.fresh_host_data) fill_host(copy_host, n, host_seed(s, 0, 3));
    int compute_short = 0;
    int timed_reps = 0;
    std::vector<double> t;
    std::string note;
    std::uint64_t last_a = 0, last_b = 0;
    if ((mode & 1) && !opt_.fresh_host_data) fill_host(ma_host, n, host_seed(s, 0, 1));
    run_repetitions(s, opt_.budget_s, &note, [&](int rep, bool timed) {
        const std::uint64_t seed_a = host_seed(s, rep, 1);
        const std::uint64_t seed_b = make_seed(s.index, static_cast<std::uint64_t>(rep), 2);
        if (mode & 1) {
            if (opt_.fresh_host_data) fill_host(ma_host, n, seed_a);
            poison_device(da, n);
        }
        if (mode & 2) device_fill(db, n, seed_b, device_);
        const std::uint64_t seed_c = beside_up ? host_seed(s, rep, 3) : make_seed(s.index, static_cast<std::uint64_t>(rep), 4);
        if (beside_up) {
            if (opt_.fresh_host_data) fill_host(copy_host, n, seed_c);
            poison_device(copy_dev, n);
        } else if (beside) {
            device_fill(copy_dev, n, seed_c, device_);
        }
        close_gate(st);
        CUDA_CHECK(cudaEventRecord(start_, st));
        if (compute) launch_compute_beside(s, start_, compute_end_);
        if (beside) {
            // Enqueued before the kernel so that neither waits for the other's launch.
            CUDA_CHECK(cudaStreamWaitEvent(cs, start_, 0));
            CUDA_CHECK(beside_up ? cudaMemcpyAsync(copy_dev, copy_host, n, cudaMemcpyHostToDevice, cs)
                                 : cudaMemcpyAsync(copy_host, copy_dev, n, cudaMemcpyDeviceToHost, cs));
            CUDA_CHECK(cudaEventRecord(copy_end, cs));
        }
        launch_zero_copy(s.access_bytes, ma_dev, da, db, mb_dev, n, static_cast<std::size_t>(s.stride), mode, s.blocks,
                         s.threads, st);
        if (beside) {
            CUDA_CHECK(cudaEventRecord(kernel_end, st));
            CUDA_CHECK(cudaStreamWaitEvent(st, copy_end, 0));
        }
        CUDA_CHECK(cudaEventRecord(stop_, st));
        open_gate();
        CUDA_CHECK(cudaEventSynchronize(stop_));
        check_gate();
        if (timed) t.push_back(elapsed_us(start_, stop_));
        if (timed && beside) {
            t_copy.push_back(elapsed_us(start_, copy_end));
            t_kernel.push_back(elapsed_us(start_, kernel_end));
        }
        last_c = seed_c;
        if (compute && timed) {
            ++timed_reps;
            if (!compute_outlasted(start_, compute_end_, stop_)) ++compute_short;
        }
        if (compute) CUDA_CHECK(cudaDeviceSynchronize());
        last_a = seed_a;
        last_b = seed_b;
    });
    if (mode & 1) verify_device(da, n, last_a, 0, device_, s.label() + " read");
    if (mode & 2) verify_host(mb_host, n, last_b, 0, s.label() + " write");
    if (beside_up) verify_device(copy_dev, n, last_c, 0, device_, s.label() + " copy beside");
    if (beside && !beside_up) verify_host(copy_host, n, last_c, 0, s.label() + " copy beside");
    std::string what = "blocks=" + std::to_string(s.blocks) + " threads=" + std::to_string(s.threads) +
                       " access_bytes=" + std::to_string(s.access_bytes) + " stride=" + std::to_string(s.stride) +
                       "; one access in flight per thread per direction";
    if (compute) what += "; " + compute_note(s, compute_short, timed_reps);
    if (!beside) return {make_row(s, "", summarize(t), note.empty() ? what : what + "; " + note)};
    const std::string copy_what = std::string("a pinned ") + (beside_up ? "H2D" : "D2H") + " cudaMemcpyAsync of " +
                                  bytes_text(n) + " beside the kernel, on its own stream";
    what += "; " + copy_what + "; to the later of the two ends";
    return {make_row(s, "", summarize(t), note.empty() ? what : what + "; " + note),
            make_row(s, "copy", summarize(t_copy), copy_what + ": from the gate to the copy's end"),
            make_row(s, "kernel", summarize(t_kernel), "the zero-copy kernel beside the copy: from the gate to its end")};
}

// peer: cudaMemcpyPeerAsync from GPU src to GPU dst (h2d: one way) or both ways at once
// (both: a second copy on a stream of the other GPU that waits for the same start event).
// peer_access=1 enables peer access both ways first; 0 disables it, so the runtime stages
// the copy through host memory. Events on the source GPU.
std::vector<ResultRow> CudaBackend::measure_peer(const MeasurementSpec& s) {
    const std::size_t n = s.size_bytes;
    const int src = s.src_device;
    const int dst = resolve_peer_destination(s, machine_.device_count);
    const bool both = s.direction == Direction::both;
    for (auto [a, b] : {std::pair<int, int>{src, dst}, std::pair<int, int>{dst, src}}) {
        CUDA_CHECK(cudaSetDevice(a));
        if (s.peer_access) {
            const cudaError_t e = cudaDeviceEnablePeerAccess(b, 0);
            if (e == cudaErrorPeerAccessAlreadyEnabled) {
                (void)cudaGetLastError();
            } else {
                CUDA_CHECK(e);
            }
        } else {
            const cudaError_t e = cudaDeviceDisablePeerAccess(b);
            if (e == cudaErrorPeerAccessNotEnabled) {
                (void)cudaGetLastError();
            } else {
                CUDA_CHECK(e);
            }
        }
    }
    DeviceAlloc a_src(src, n);  // S → D source
    DeviceAlloc a_dst(dst, n);  // S → D destination
    std::unique_ptr<DeviceAlloc> b_src, b_dst;  // D → S (both)
    if (both) {
        b_src = std::make_unique<DeviceAlloc>(dst, n);
        b_dst = std::make_unique<DeviceAlloc>(src, n);
    }
    StreamOn s_src(src);
    StreamOn s_dst(dst);
    EventOn start(src);
    EventOn stop(src);
    EventOn other_done(dst);
    std::vector<double> t;
    std::string note;
    std::uint64_t last_a = 0, last_b = 0;
    run_repetitions(s, opt_.budget_s, &note, [&](int rep, bool timed) {
        const std::uint64_t seed_a = make_seed(s.index, static_cast<std::uint64_t>(rep), 1);
        const std::uint64_t seed_b = make_seed(s.index, static_cast<std::uint64_t>(rep), 2);
        device_fill(a_src.p, n, seed_a, src);
        if (both) device_fill(b_src->p, n, seed_b, dst);
        CUDA_CHECK(cudaSetDevice(src));
        CUDA_CHECK(cudaEventRecord(start.e, s_src.s));
        if (both) {
            CUDA_CHECK(cudaSetDevice(dst));
            CUDA_CHECK(cudaStreamWaitEvent(s_dst.s, start.e, 0));
            CUDA_CHECK(cudaMemcpyPeerAsync(b_dst->p, src, b_src->p, dst, n, s_dst.s));
            CUDA_CHECK(cudaEventRecord(other_done.e, s_dst.s));
            CUDA_CHECK(cudaSetDevice(src));
        }
        CUDA_CHECK(cudaMemcpyPeerAsync(a_dst.p, dst, a_src.p, src, n, s_src.s));
        if (both) CUDA_CHECK(cudaStreamWaitEvent(s_src.s, other_done.e, 0));
        CUDA_CHECK(cudaEventRecord(stop.e, s_src.s));
        CUDA_CHECK(cudaEventSynchronize(stop.e));
        const double us = elapsed_us(start.e, stop.e);
        if (timed) t.push_back(us);
        last_a = seed_a;
        last_b = seed_b;
    });
    verify_device(a_dst.p, n, last_a, 0, dst, s.label() + " GPU" + std::to_string(src) + "->GPU" + std::to_string(dst));
    if (both) {
        verify_device(b_dst->p, n, last_b, 0, src, s.label() + " GPU" + std::to_string(dst) + "->GPU" + std::to_string(src));
    }
    CUDA_CHECK(cudaSetDevice(device_));
    std::string what = "GPU " + std::to_string(src) + (both ? " <-> GPU " : " -> GPU ") + std::to_string(dst) +
                       (s.peer_access ? ", peer access enabled" : ", peer access disabled (staged through host)");
    return {make_row(s, "", summarize(t), note.empty() ? what : what + "; " + note)};
}

// periodic: frame j is released at t0 + j × period_ns on the host's steady clock; the harness
// waits for the release, moves the frame (blocking cudaMemcpy from/to pinned or pageable
// memory, or a zero-copy kernel on mapped memory, plus the synthetic kernel when kernel_ns > 0)
// and takes its latency from the release to completion. A frame that starts late (the previous
// one overran) keeps its release time, so queueing shows in the latency. Warm-up frames run on
// the same schedule first and are not counted.
std::vector<ResultRow> CudaBackend::measure_periodic(const MeasurementSpec& s) {
    const std::size_t n = s.size_bytes;
    const bool h2d = s.direction == Direction::h2d;
    const bool kernel = s.kernel_ns > 0;
    const bool zero_copy = s.host_memory == HostMemory::zero_copy;
    if (kernel) calibrate();
    const Role r0 = host_role(s.host_memory, false);
    const Role r1 = host_role(s.host_memory, true);
    void* ring_host[2] = {host(r0, n), host(r1, n)};
    void* ring_dev[2] = {zero_copy ? mapped_dev(r0, n) : nullptr, zero_copy ? mapped_dev(r1, n) : nullptr};
    void* da = dev(Role::dev_a, n);
    void* db = dev(Role::dev_b, n);
    cudaStream_t st = stream(0);
    const int zc_access = n % 16 == 0 ? 16 : n % 4 == 0 ? 4 : 1;
    const int zc_blocks = prop_.multiProcessorCount * 4;
    const std::uint64_t mask = kernel ? kKernelMask : 0;

    std::uint64_t ring_seed[2] = {make_seed(s.index, 0, 11), make_seed(s.index, 1, 11)};
    if (h2d) {
        fill_host(ring_host[0], n, ring_seed[0]);
        fill_host(ring_host[1], n, ring_seed[1]);
    }

    auto frame = [&](int j) {
        const int slot = j % 2;
        if (h2d) {
            if (zero_copy) {
                launch_zero_copy(zc_access, ring_dev[slot], da, nullptr, nullptr, n, 1, 1, zc_blocks, 256, st);
            } else {
                CUDA_CHECK(cudaMemcpyAsync(da, ring_host[slot], n, cudaMemcpyHostToDevice, st));
            }
            if (kernel) launch_work_for(da, db, n, static_cast<double>(s.kernel_ns), st);
            CUDA_CHECK(cudaStreamSynchronize(st));
        } else {
            void* src = da;
            if (kernel) {
                launch_work_for(da, db, n, static_cast<double>(s.kernel_ns), st);
                src = db;
            }
            if (zero_copy) {
                launch_zero_copy(zc_access, nullptr, nullptr, src, ring_dev[slot], n, 1, 2, zc_blocks, 256, st);
            } else {
                CUDA_CHECK(cudaMemcpyAsync(ring_host[slot], src, n, cudaMemcpyDeviceToHost, st));
            }
            CUDA_CHECK(cudaStreamSynchronize(st));
        }
    };

    const int total = s.warmup + s.frames;
    std::vector<double> latency;
    latency.reserve(static_cast<std::size_t>(s.frames));
    std::uint64_t last_seed = 0;
    const auto period = std::chrono::nanoseconds(s.period_ns);
    const auto t0 = Clock::now() + std::chrono::milliseconds(2);
    for (int j = 0; j < total; ++j) {
        if (!h2d) {
            last_seed = make_seed(s.index, static_cast<std::uint64_t>(j), 12);
            device_fill(da, n, last_seed, device_);  // this frame's data, before its release
        } else if (opt_.fresh_host_data) {
            ring_seed[j % 2] = make_seed(s.index, static_cast<std::uint64_t>(j), 13);
            fill_host(ring_host[j % 2], n, ring_seed[j % 2]);  // the CPU produces the frame
            last_seed = ring_seed[j % 2];
        } else {
            last_seed = ring_seed[j % 2];
        }
        const auto release = t0 + period * j;
        wait_until(release, opt_.frame_wait);
        frame(j);
        const double us = std::chrono::duration<double, std::micro>(Clock::now() - release).count();
        if (j >= s.warmup) latency.push_back(us);
    }
    const int last_slot = (total - 1) % 2;
    if (h2d) {
        verify_device(kernel ? db : da, n, last_seed, mask, device_, s.label() + " last frame");
    } else {
        verify_host(ring_host[last_slot], n, last_seed, mask, s.label() + " last frame");
    }
    std::string how = std::string("via ") + to_string(s.host_memory) + ", period " +
                      short_number(static_cast<double>(s.period_ns) * 1e-3) + " us, " + std::to_string(s.frames) +
                      " frames after " + std::to_string(s.warmup) + " warm-up";
    if (kernel) how += ", kernel_ns=" + std::to_string(s.kernel_ns);
    if (zero_copy) how += ", zero-copy kernel " + std::to_string(zc_blocks) + "x256 threads";
    std::vector<ResultRow> rows = periodic_rows(s, periodic_stats(latency, static_cast<double>(s.deadline_ns) * 1e-3), how);
    // Whether a backlog builds: frames that take longer than the period start late, so the
    // latency of the last quarter of frames grows past the first quarter's.
    const std::size_t quarter = std::max<std::size_t>(1, latency.size() / 4);
    const std::vector<double> first(latency.begin(), latency.begin() + static_cast<std::ptrdiff_t>(quarter));
    const std::vector<double> last(latency.end() - static_cast<std::ptrdiff_t>(quarter), latency.end());
    const Summary tail = summarize(last);
    const double growth = tail.median - dmasim::core::percentile(first, 0.5);
    const double period_us = static_cast<double>(s.period_ns) * 1e-3;
    rows.push_back(make_row(s, "backlog", tail,
                            "last quarter of frames; first_quarter_us=" + short_number(dmasim::core::percentile(first, 0.5)) +
                                " growth_us=" + short_number(growth) + " backlog=" + (growth > period_us ? "yes" : "no") +
                                " (yes: latency grew by more than one period)"));
    return rows;
}

// zero_copy pattern=chase: one thread follows a random chain (chase.h) through mapped pinned
// host memory, or GPU memory for reference, with dependent uncached loads; events around the
// kernel. The row's time is one load's: the kernel's time over the hops (the launch, a few
// microseconds, is spread over thousands of hops). The end of every run is checked.
std::vector<ResultRow> CudaBackend::measure_chase(const MeasurementSpec& s) {
    const std::size_t n = s.size_bytes;
    cudaStream_t st = stream(0);
    const std::uint64_t seed = make_seed(s.index, 0, 21);
    const void* base = nullptr;
    std::vector<unsigned char> image;  // the chain as the host built it (device chase)
    const void* chain = nullptr;
    if (s.chase_device) {
        image.resize(n);
        build_chase(image.data(), n, kChaseNodeBytes, seed);
        void* d = dev(Role::dev_a, n);
        CUDA_CHECK(cudaMemcpy(d, image.data(), n, cudaMemcpyHostToDevice));
        base = d;
        chain = image.data();
    } else {
        void* h = host(Role::mapped_a, n);
        build_chase(h, n, kChaseNodeBytes, seed);
        chain = h;
        base = mapped_dev(Role::mapped_a, n);
    }
    // Each run continues the chain where the last one stopped and is checked against where the
    // chain says it ends. Those ends are walked on the CPU here, for every run at once, before a
    // host chain leaves the CPU's caches (--flush-host-data): a walk between runs would bring the
    // lines the GPU reads next into a core's caches, and a GPU read of such a line costs 0.02-0.15 us
    // more at 4-64 KiB (results/h100-sxm/isolating/chase-cache).
    std::vector<std::uint64_t> ends(static_cast<std::size_t>(s.warmup + s.repetitions));
    for (std::size_t r = 0; r < ends.size(); ++r) ends[r] = chase_end(chain, s.hops, r == 0 ? 0 : ends[r - 1]);
    if (!s.chase_device && opt_.flush_host_data && !flush_from_caches(chain, n)) {
        throw std::runtime_error("--flush-host-data: this CPU has no clflushopt");
    }
    // The chase's end, and (stores beside) the flag that stops the stores once it is done.
    auto* end = static_cast<unsigned long long*>(dev(Role::dev_b, 2 * sizeof(unsigned long long)));
    int* stop_stores = reinterpret_cast<int*>(end + 1);
    const bool stores = s.stores_beside > 0;
    // A copy beside (copy_beside): pinned copies of a chunk, back to back on a stream of their own
    // from the gate on, enough to outlast the chase (limits.h); each run checks they did.
    const bool copies = s.has_copy_beside;
    const bool copies_up = copies && s.copy_beside == Direction::h2d;
    const std::size_t chunk = lim::kCopyBesideChaseChunk;
    const std::uint64_t chunks = copies ? lim::copy_beside_chase_chunks(s.hops) : 0;
    void* copy_host = copies ? host(copies_up ? Role::pinned_a : Role::pinned_b, chunk) : nullptr;
    void* copy_dev = copies ? dev(Role::dev_copy, chunk) : nullptr;
    const std::uint64_t copy_seed = make_seed(s.index, 0, 23);
    if (copies_up) fill_host(copy_host, chunk, copy_seed);
    if (copies && !copies_up) device_fill(copy_dev, chunk, copy_seed, device_);
    cudaStream_t cs = copies ? stream(1) : nullptr;
    cudaEvent_t copies_end = copies ? done_event(1) : nullptr;
    int copies_short = 0;
    const std::uint64_t store_seed = make_seed(s.index, 0, 22);
    void* store_src = stores ? dev(Role::dev_copy, n) : nullptr;
    void* store_dst = stores ? mapped_dev(Role::mapped_b, n) : nullptr;
    cudaStream_t ss = stores ? stream(1) : nullptr;
    if (stores) device_fill(store_src, n, store_seed, device_);
    std::vector<double> t;
    std::string note;
    // Each run walks on from where the last one stopped, so no run revisits the lines of the
    // one before (GPU memory would otherwise answer from L2 after the first run).
    std::uint64_t from = 0;
    run_repetitions(s, opt_.budget_s, &note, [&](int rep, bool timed) {
        const std::uint64_t want = ends.at(static_cast<std::size_t>(rep));
        poison_device(end, sizeof(unsigned long long), 0xFF);
        if (stores) CUDA_CHECK(cudaMemset(stop_stores, 0, sizeof(int)));
        close_gate(st);
        if (stores || copies) {
            // The stores (the copies) start with the gate; the chase's stream waits until they have
            // run a while (the stores' queue has filled), outside the timed interval, and stops the
            // stores when the chase is done.
            cudaEvent_t open = done_event(0);
            CUDA_CHECK(cudaEventRecord(open, st));
            CUDA_CHECK(cudaStreamWaitEvent(stores ? ss : cs, open, 0));
            if (stores) launch_store_until(store_src, store_dst, n, stop_stores, kStoresBesideMaxNs, s.stores_beside, ss);
            for (std::uint64_t k = 0; k < chunks; ++k) {
                CUDA_CHECK(copies_up ? cudaMemcpyAsync(copy_dev, copy_host, chunk, cudaMemcpyHostToDevice, cs)
                                     : cudaMemcpyAsync(copy_host, copy_dev, chunk, cudaMemcpyDeviceToHost, cs));
            }
            if (copies) CUDA_CHECK(cudaEventRecord(copies_end, cs));
            launch_compute(dev(Role::dev_compute, kSettleBytes), kSettleBytes, lim::kStoresBesideSettleNs, 1, 32, st);
        }
        CUDA_CHECK(cudaEventRecord(start_, st));
        launch_chase(base, from, s.hops, end, st);
        CUDA_CHECK(cudaEventRecord(stop_, st));
        if (stores) CUDA_CHECK(cudaMemsetAsync(stop_stores, 1, sizeof(int), st));
        open_gate();
        CUDA_CHECK(cudaEventSynchronize(stop_));
        check_gate();
        if (stores) CUDA_CHECK(cudaStreamSynchronize(ss));
        if (copies) {
            CUDA_CHECK(cudaStreamSynchronize(cs));
            if (timed && elapsed_us(stop_, copies_end) <= 0.0) ++copies_short;
        }
        unsigned long long got = 0;
        CUDA_CHECK(cudaMemcpy(&got, end, sizeof got, cudaMemcpyDeviceToHost));
        if (got != want) {
            throw std::runtime_error("verification failed (" + s.label() + " chase): ended at offset " +
                                     std::to_string(got) + ", the chain says " + std::to_string(want));
        }
        if (timed) t.push_back(elapsed_us(start_, stop_) / static_cast<double>(s.hops));
        from = want;
    });
    const std::size_t nodes = n / kChaseNodeBytes;
    std::string what = "time is one load: kernel time / " + std::to_string(s.hops) + " dependent ld.global.cv hops over " +
                       std::to_string(nodes) + " random 64-byte lines of " +
                       (s.chase_device ? std::string("GPU memory")
                                       : std::string("mapped pinned host memory") +
                                             (opt_.flush_host_data ? " (flushed from the CPU's caches)" : "")) +
                       ", each run continuing the chain where the last stopped; the runs' ends walked on the CPU before the first";
    if (copies_short > 0) {
        throw std::runtime_error(s.label() + ": the copies beside the chase ended before it in " + std::to_string(copies_short) +
                                 " runs; fewer hops would do");
    }
    if (copies_up) verify_device(copy_dev, chunk, copy_seed, 0, device_, s.label() + " copy beside");
    if (copies && !copies_up) verify_host(copy_host, chunk, copy_seed, 0, s.label() + " copy beside");
    if (copies) {
        what += "; beside " + std::to_string(chunks) + " pinned " + std::string(copies_up ? "h2d" : "d2h") + " copies of " +
                bytes_text(chunk) + " back to back on a stream of their own, started " +
                std::to_string(lim::kStoresBesideSettleNs / 1000) + " us before the chase";
    }
    if (stores) {
        verify_host(host(Role::mapped_b, n), n, store_seed, 0, s.label() + " stores beside");
        what += "; beside " + std::to_string(s.stores_beside) +
                " blocks of 256 threads storing 16 bytes each over and over to another mapped host buffer of the same size, "
                "started " + std::to_string(lim::kStoresBesideSettleNs / 1000) + " us before the chase";
    }
    return {make_row(s, "", summarize(t), note.empty() ? what : what + "; " + note)};
}

// peer with src = dst: cudaMemcpyAsync device to device within the measuring GPU (its copy
// engine reads and writes GPU memory), events around it.
std::vector<ResultRow> CudaBackend::measure_local_copy(const MeasurementSpec& s) {
    const std::size_t n = s.size_bytes;
    void* a = dev(Role::dev_a, n);
    void* b = dev(Role::dev_b, n);
    cudaStream_t st = stream(0);
    std::vector<double> t;
    std::string note;
    std::uint64_t last = 0;
    run_repetitions(s, opt_.budget_s, &note, [&](int rep, bool timed) {
        const std::uint64_t seed = make_seed(s.index, static_cast<std::uint64_t>(rep), 1);
        device_fill(a, n, seed, device_);
        poison_device(b, n);
        close_gate(st);
        CUDA_CHECK(cudaEventRecord(start_, st));
        CUDA_CHECK(cudaMemcpyAsync(b, a, n, cudaMemcpyDeviceToDevice, st));
        CUDA_CHECK(cudaEventRecord(stop_, st));
        open_gate();
        CUDA_CHECK(cudaEventSynchronize(stop_));
        check_gate();
        if (timed) t.push_back(elapsed_us(start_, stop_));
        last = seed;
    });
    verify_device(b, n, last, 0, device_, s.label() + " within GPU " + std::to_string(device_));
    const std::string what = "cudaMemcpyAsync device to device within GPU " + std::to_string(device_) +
                             " (gbps counts the bytes copied once, not read + written)";
    return {make_row(s, "", summarize(t), note.empty() ? what : what + "; " + note)};
}

// pageable with host_fresh: every repetition maps new anonymous memory that nothing has
// touched, so the copy itself meets the page faults (D2H: the driver's writes fault pages in;
// H2D: reads of untouched pages see the shared zero page, so the data is all zero and is
// checked as such). The mapping is released after each repetition, outside the timed interval.
std::vector<ResultRow> CudaBackend::measure_fresh_pageable(const MeasurementSpec& s) {
    const std::size_t n = s.size_bytes;
    const std::size_t mapped = (n + s.host_offset + 4095) / 4096 * 4096;
    void* d = dev(Role::dev_a, n);
    const bool h2d = s.direction == Direction::h2d;
    std::vector<double> t;
    std::string note;
    run_repetitions(s, opt_.budget_s, &note, [&](int rep, bool timed) {
        void* m = ::mmap(nullptr, mapped, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (m == MAP_FAILED) throw std::runtime_error("mmap of " + bytes_text(mapped) + " failed");
        auto* h = static_cast<unsigned char*>(m) + s.host_offset;
        double us = 0;
        const std::uint64_t seed = make_seed(s.index, static_cast<std::uint64_t>(rep), 1);
        try {
            if (h2d) {
                poison_device(d, n, 0xA5);
                const auto t0 = Clock::now();
                CUDA_CHECK(cudaMemcpy(d, h, n, cudaMemcpyHostToDevice));
                CUDA_CHECK(cudaDeviceSynchronize());
                us = us_since(t0);
                verify_device_value(d, n, 0, s.label() + " from never-touched memory");
            } else {
                device_fill(d, n, seed, device_);
                const auto t0 = Clock::now();
                CUDA_CHECK(cudaMemcpy(h, d, n, cudaMemcpyDeviceToHost));
                us = us_since(t0);
                verify_host(h, n, seed, 0, s.label() + " into never-touched memory");
            }
        } catch (...) {
            ::munmap(m, mapped);
            throw;
        }
        ::munmap(m, mapped);
        if (timed) t.push_back(us);
    });
    std::string what = std::string("every copy ") + (h2d ? "from" : "into") +
                       " newly mapped, never-touched pageable memory (page faults in the copy); every repetition verified";
    if (h2d) what += "; the source is all zero (untouched pages read as zero)";
    if (s.host_offset > 0) what += "; " + std::to_string(s.host_offset) + " bytes past a page boundary";
    return {make_row(s, "", summarize(t), note.empty() ? what : what + "; " + note)};
}

void CudaBackend::describe(Metadata& m) const {
    m.driver_version = driver_version_;
    m.runtime_version = runtime_version_;
    m.device = device_;
    m.gpu_count = machine_.device_count;
    m.gpus = gpus_;
    m.peer_access = machine_.peer_capable;
    m.calibration = calib_;
    m.notes.insert(m.notes.end(), notes_.begin(), notes_.end());
}

}  // namespace

int cuda_device_count(std::string* why) {
    int count = 0;
    const cudaError_t e = cudaGetDeviceCount(&count);
    if (e != cudaSuccess) {
        (void)cudaGetLastError();
        if (why != nullptr) *why = std::string("cudaGetDeviceCount: ") + cudaGetErrorName(e) + ": " + cudaGetErrorString(e);
        return 0;
    }
    if (count == 0 && why != nullptr) *why = "cudaGetDeviceCount reports 0 devices";
    return count;
}

std::unique_ptr<Backend> make_cuda_backend(const Options& opt, const std::vector<CaseDecision>& decisions) {
    return std::make_unique<CudaBackend>(opt, decisions);
}

}  // namespace dmaprobe
