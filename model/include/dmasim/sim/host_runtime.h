// The CPU side: one application thread issuing CUDA runtime calls, and the GPU front end that
// runs what it issued on streams, copy engines and the compute engine.
//
// A case is a Program: operations in program order. The CPU thread pays the call overhead of
// each call; asynchronous operations go to their stream and run when the previous operation
// of that stream is done; blocking ones make the thread wait. Pageable copies are staged by
// the thread itself through pinned bounce buffers, as the CUDA runtime does, so the CPU copy
// and the DMA overlap and share host DRAM. One SC_THREAD runs one program at a time and pauses
// the kernel between programs, so a process elaborates once and runs a whole sweep.
#pragma once

#include <systemc>

#include <array>
#include <cstdint>
#include <deque>
#include <string>
#include <vector>

#include "dmasim/config/params.h"
#include "dmasim/sim/dma_engine.h"
#include "dmasim/sim/gpu.h"
#include "dmasim/sim/memory.h"
#include "dmasim/sim/root_complex.h"
#include "dmasim/sim/timed_fifo.h"

namespace dmasim::sim {

struct Op {
    enum class Kind : std::uint8_t {
        kCopy,         // cudaMemcpy(Async) with pinned host memory: one DMA job
        kStagedCopy,   // cudaMemcpy with pageable memory: CPU copies through bounce buffers (blocking)
        kKernel,       // a kernel that runs for `duration`
        kCpuWork,      // the CPU thread busy on its own for `duration` (pinning, allocation)
        kReleaseAt,    // the CPU thread waits until `duration` after the program started
        kSynchronize,  // cudaDeviceSynchronize: wait until every stream is idle
        kMappedKernel, // a kernel whose SMs load/store mapped host memory (zero-copy)
        kCpuMapped,    // the CPU thread stores to (h2d) or loads from (d2h) GPU memory through the BAR
        // The harness's gate opens. dmaprobe times asynchronous work with events on streams held
        // by a gate kernel: everything is issued first, then the gate opens, so the CPU's calls
        // fall outside the interval. In a program with a gate, streams start nothing before it.
        kOpenGate,
        // cudaStreamWaitEvent on an event recorded after operation `after`: the stream's later
        // work waits until that operation is done and this stream's GPU has seen it (through a
        // semaphore in host memory when `after` ran on another GPU: runtime.cross_device_wait).
        kWaitFor,
        // cudaEventRecord: done when its stream reaches it, so that others can wait for it
        // (kWaitFor). The harness's start events.
        kRecord,
    };
    // kMappedKernel: what its warps' accesses become (see gpu/coalescing.h).
    struct MappedTraffic {
        std::uint64_t read_bytes = 0;    // bytes the read requests move
        std::uint64_t write_bytes = 0;   // bytes the writes move
        std::uint32_t request_bytes = 0; // size of one read request
        std::uint32_t write_request_bytes = 0;  // size of one write (0: as a read request)
        std::uint32_t write_spacing = 0;  // bytes between the starts of consecutive writes (0: back to back)
        std::uint32_t host_line = 0;      // the host's cache line (cpu.cache_line)
        std::uint32_t reads_in_flight = 0;
        WarpLoop loop;  // how the warps' loop paces both (none: a single chain of loads)
        // The reads in flight its warps would keep were nothing else limiting them (warps x
        // loads x requests): what a grid that is only partly resident scales down.
        std::uint32_t warp_reads = 0;
    };
    // kKernel and kMappedKernel: the grid, which takes SM room while it runs (0 blocks: none; a
    // synthetic kernel described by its duration alone).
    struct Grid {
        std::uint32_t blocks = 0;
        std::uint32_t warps_per_block = 0;
        // A zero-copy kernel: its blocks resident on idle SMs, the grid its traffic was worked out
        // for (mapped_kernel_op); fewer resident beside another kernel scale its warps down.
        std::uint32_t resident_alone = 0;
        // A synthetic kernel that streams through its GPU's memory while it runs (the compute
        // kernel beside a transfer): it takes its turns at the memory with every other access.
        bool streams_memory = false;
    };
    Kind kind = Kind::kCopy;
    int stream = 0;                 // operations of one stream run in order
    bool blocking = true;           // the thread waits for it to finish (cudaMemcpy) or not
    CopyDirection direction = CopyDirection::kHostToDevice;
    std::uint64_t bytes = 0;
    core::Duration duration{};      // kernel time, CPU work, or release time
    bool working_set_cached = false;  // staged copies: the user buffer fits in the CPU's cache
    bool fresh_pages = false;  // staged copies: the user buffer was never touched (a fault a page)
    std::uint32_t page_offset = 0;  // staged copies: how far past a page the user buffer starts (bytes)
    MappedTraffic mapped;
    Grid grid;
    int gpu = 0;        // the GPU whose engine runs it
    // kCopy: >= 0 makes it a device-to-device copy: kDeviceToHost writes into that device's
    // memory, kHostToDevice reads from it (its BAR: a card's window the GPU copies out of).
    int peer_gpu = -1;
    std::uint32_t request_bytes = 0;  // kCopy: write size (0: MPS); NVLink takes larger writes
    // kCopy: where in the program's host buffers it starts. Copies of one buffer's parts start
    // where the part does; copies of the same buffer again start where it did (a pass finds the
    // first share of the buffer in the host's I/O cache, root_complex.io_cache).
    std::uint64_t host_offset = 0;
    // Work the runtime queues itself inside a call the application made (the pieces of a staged
    // peer copy): no call overhead of its own.
    bool queued_by_runtime = false;
    // Issued by cudaMemcpyPeerAsync: its call costs runtime.peer_call, not runtime.call_overhead.
    bool peer_call = false;
    // A piece of cudaMemcpyPeerAsync without peer access: the first one's call costs
    // runtime.peer_staged_call; a later one marked so (queued_by_runtime) keeps the calling
    // thread runtime.peer_staged_piece_call before it is queued.
    bool staged_peer = false;
    // The pieces of one staged peer copy (>= 0: which of the program's): while another staged
    // copy's first piece enters its GPU, copies start late there (runtime.staged_entry_hold),
    // but its own.
    int staged_way = -1;
    std::size_t after = 0;  // kWaitFor: the operation waited for (an earlier one)
    // kRecord: an event made for timing (cudaEventCreate's default), whose record writes a
    // timestamp that holds its channel: records back to back and a copy its engine fetched already
    // go runtime.release_spacing after it, a copy handed to an idle engine runtime.record_follow.
    // One made with cudaEventDisableTiming costs its stream nothing (results/h100-sxm/isolating/
    // record-cost: 1.27-1.39 us a timed record between copies, within 0.07 us of none untimed).
    bool timed = true;
};

// An application's cudaStreamWaitEvent on another GPU's event, called (its call returning) at
// `call_ps`, the event stamped at `event_ps`, its stream at the wait from `reached_ps`: when the
// work behind it may go. The runtime reads the event at the call (runtime.cross_device_seen);
// else the wait's channel tries from the call every runtime.poll_period, a try sees the event by
// runtime.cross_device_read into it, and the work goes runtime.cross_device_try after the first
// try that saw it, or after the stream reached the wait if later (results/h200x2-nvlink/
// isolating/peer-phase). Times in ps on one clock.
double cross_device_wait_pass(const config::RuntimeParams& r, double call_ps, double event_ps, double reached_ps);

struct Program {
    std::vector<Op> ops;
    // The host memory the real program's writes cover in one repetition (0: work it out from
    // `ops`). Measured rows repeat a program on the same buffers, so a device-to-host copy finds
    // in the I/O cache what of its own lines survived a pass (root_complex.io_cache); a level
    // simulated smaller for fast-forward carries the real program's extent.
    std::uint64_t host_write_extent = 0;
    // With a gate (kOpenGate): the first op it holds. The harness closes the gate just before
    // issuing that op; what comes before (the last repetition's blocking copies) runs ungated.
    std::size_t gate_closes_at = 0;
};

// When each operation of the last program was issued, started and finished (ps, from the
// program's start).
struct OpTiming {
    double issued_ps = 0.0;
    double start_ps = 0.0;
    double end_ps = 0.0;
    // A copy: how long its engine held it before its first request because another staged peer
    // copy's first piece was entering its GPU (runtime.staged_entry_hold); 0 for the rest.
    double entry_held_ps = 0.0;
};

class HostRuntime : public sc_core::sc_module, public CompletionListener {
public:
    SC_HAS_PROCESS(HostRuntime);
    struct Params {
        config::RuntimeParams runtime;
        config::CpuParams cpu;
        config::PageableParams pageable;
        core::Duration dma_launch_latency{};
        core::Duration dma_queued_launch_latency{};
        core::Duration dma_channel_turn{};
        std::int64_t dma_held_releases = 2;
        core::Duration dma_release_wait_max{};
        core::Duration gpu_front_end_turn{};
        core::Duration gpu_front_end_turn_max{};
        core::Duration dma_host_write_hold{};
        core::Duration dma_host_write_hold_beside_reads{};
        core::Duration dma_host_write_hold_fetching{};
        std::int64_t gpu_fetch_window = 57;
        // The SMs' room for resident blocks, which kernels running at once share.
        std::int64_t sms = 132;
        std::int64_t max_warps_per_sm = 64;
        std::int64_t max_blocks_per_sm = 32;
    };

    MemoryPort host_memory;  // the CPU's own copies go through the host memory controller

    HostRuntime(sc_core::sc_module_name name, const Params& params, std::vector<Gpu*> gpus, std::uint16_t host_node);

    void configure(const Params& params);
    // Called outside the simulation: hands over the next program; sc_start() runs it.
    void submit(const Program& program);
    bool done() const { return done_; }
    // For a program that stopped before its end: how many operations are unfinished and which
    // is the first ("2 of 13 operations unfinished, the first op 9: copy h2d of 0B on stream 3").
    std::string unfinished() const;
    double elapsed_ps() const { return elapsed_ps_; }
    const std::vector<OpTiming>& timings() const { return timings_; }

    void semaphore_written(std::uint32_t job) override;
    void semaphore_held(std::uint32_t job) override;
    bool release_waits_for_reads(std::uint32_t job) const override;
    void cpu_write_left() override;
    void cpu_read_done() override;
    // The root complex the CPU's BAR accesses enter through.
    void set_root_complex(RootComplex* rc) { root_complex_ = rc; }

private:
    struct StreamState {
        std::deque<std::size_t> pending;  // op indices, front = running or next
        bool running = false;
    };
    struct EngineState {
        std::deque<CopyJob> queue;
        bool busy = false;
        // The job it runs reads host memory or writes another GPU (a release waits for it).
        bool fencing = false;
        std::uint32_t job = 0;
        // The channel of the last copy it carried (CopyJob::kNoTurn: none yet).
        int last_channel = CopyJob::kNoTurn;
        // Its releases waiting at the root port while it went on (dma.held_releases), and whether
        // the job it runs has its release waiting there too (it goes on once one has landed).
        std::int64_t held = 0;
        bool current_held = false;
        // Whether it has started a copy yet, and the launches of its GPU's other channels then
        // (launches_beside).
        bool started = false;
        std::uint64_t others_at_start = 0;
        // The stream of the copy it last started, and whether that copy wrote host memory
        // (dma.host_write_hold_beside_reads).
        int last_stream = -1;
        bool last_into_host = false;
        // The copy it runs reads host memory (a copy into the GPU; not a peer's, nor one the
        // front end or the command stream carries).
        bool reads_host = false;
    };
    // An event record whose release waits for copies of its GPU (runtime.busy_release_spacing):
    // the jobs it waits for (0: ended).
    struct HeldRelease {
        std::size_t op;
        std::array<std::uint32_t, Gpu::kUnits> jobs;
    };
    // Holds record `op`'s release behind the copies its GPU's engines run now; false if none.
    bool hold_release(std::size_t op, double stamp_ps);
    void land_release(std::size_t op);
    // The engine takes its next copy while the release of the one it ran waits (dma.held_releases).
    // `after_landing`: an earlier release of the engine has just landed (it had stopped for it).
    void let_go(std::size_t engine, bool after_landing);

    void driver();          // SC_THREAD: the application thread
    void front_end();       // SC_METHOD: starts stream operations whose turn has come
    void kernel_finished(); // SC_METHOD
    // SM room (Params::sms, max_warps_per_sm, max_blocks_per_sm): kernels take it block by block
    // as they start, spread evenly over the SMs, and give it back as they end. Blocks of a kernel
    // that do not fit wait for room; a synthetic kernel's block runs its duration from its own
    // start (dmaprobe's compute kernel spins on its block's clock).
    std::int64_t blocks_that_fit(const Op::Grid& g) const;
    void take_sms(const Op::Grid& g, std::int64_t blocks, int sign);
    // A kernel has ended or its room came free: start what waits for SM room.
    void sms_freed();
    // Starts what fits of the front synthetic kernel's waiting blocks, as one batch ending a
    // duration after `start_ps` (absolute).
    void start_kernel_blocks(std::size_t k, double start_ps);
    void start_mapped(std::size_t op);
    void wait_finished();   // SC_METHOD: kWaitFor operations whose wait is over
    void release_wait_over();  // SC_METHOD: engines that go on past a held release (dma.release_wait_max)
    void wait_for(std::size_t op);  // a kWaitFor operation's stream has reached it
    // When a wait on another channel of the GPU can see `op` done, `op` having been stamped at
    // `stamp_ps`: an event recorded right behind a copy runtime.release_seen_lag later.
    double seen_ps(std::size_t op, double stamp_ps) const;
    // The CPU has waited for GPU work it polls the semaphore of: it sees a copy done only
    // runtime.cpu_seen_lag after that copy's semaphore, unless an engine read the copy's data
    // from host memory. `seen_ps`: when it sees the work it waited for (a job's, an operation's
    // or, for a synchronisation, the latest of all).
    void wait_cpu_seen(double seen_ps);
    // A small host-to-device copy the call writes into the command stream (runtime.inline_h2d_max).
    bool inline_copy(const Op& op) const;
    // The calling thread's time before `op` is queued: its API call's, or, for work the runtime
    // queues inside an earlier call, what that call spends on it (often nothing).
    core::Duration call_time(const Op& op) const;
    // Of those, one the GPU's front end writes itself (runtime.front_end_h2d_max): `bytes` of a
    // copy in `dir` that the call put into the command stream.
    bool front_end_write(CopyDirection dir, std::uint64_t bytes) const;
    // How long after operation `done` ends work of `next`'s GPU can follow it.
    double handoff_ps(std::size_t done, std::size_t next) const;
    // The CPU's cudaSetDevice before a call for another GPU than its last (runtime.set_device_call).
    void switch_device(const Op& op);

    // When `next` goes, `done` having ended now: after the handoff, or, where `next` runs on
    // another channel of the same GPU and tried before now, at its first try after now.
    double follow_ps(std::size_t done, std::size_t next) const;
    // The first try of a wait that began at `tried` (absolute ps) at or after `done_ps`
    // (runtime.poll_period).
    double polled_ps(double tried, double done_ps) const;
    // The channel each operation runs on: a GPU's compute engine or one of its copy engines.
    // Work on one channel follows work on another only through a semaphore (polled).
    void assign_channels();
    int channel_of_compute(int gpu) const { return gpu * (Gpu::kUnits + 1) + Gpu::kUnits; }
    // The channel of a copy engine (engines_' numbering: GPU by GPU, Gpu::kUnits each).
    static int channel_of_engine(std::size_t engine) {
        return static_cast<int>(engine / Gpu::kUnits) * (Gpu::kUnits + 1) + static_cast<int>(engine % Gpu::kUnits);
    }
    // What the front end does itself (a small copy it writes) waits on no other channel.
    static constexpr int kFrontEnd = -2;
    void enqueue(std::size_t op);
    // The hardware work queue (runtime.connections) of its channel that `op` goes to as it is
    // issued: where its stream has unfinished work of that channel, else an empty one, else the
    // least loaded.
    void assign_queue(std::size_t op);
    // Starts `op` when its stream lets it go, or holds it until the work issued before it in its
    // hardware queue has started (a wait: has finished).
    void dispatch(std::size_t op);
    void start_op(std::size_t op);
    // The head of queue `q` of `channel` has moved on: start the next one if its stream let it go.
    void release_queue(int channel, int q);
    int channels() const { return static_cast<int>(gpus_.size()) * (Gpu::kUnits + 1); }
    // Copies behind `op` on its stream that its channel hands to the same engine at once (runs
    // of copies on one channel, records between them); see `early_`.
    void hand_on_behind(std::size_t op);
    bool rides_behind(std::size_t before, std::size_t op) const;
    void op_finished(std::size_t op);
    // `front_end`: the GPU's front end writes the data (front_end_write); `with_work`: the front
    // end read the data with the copy's work (command_fetch_bandwidth), so no engine reads the host.
    // `held_bytes`: of a copy into host memory, how much lands on lines a CPU core holds (CopyJob).
    std::uint32_t submit_copy(int gpu, CopyDirection dir, std::uint64_t bytes, std::size_t op, std::uint64_t host_offset = 0,
                              bool front_end = false, bool with_work = false, std::uint64_t held_bytes = 0);
    void submit_job(std::size_t engine, CopyJob job, std::size_t op);
    std::size_t unit(int gpu, int engine) const { return static_cast<std::size_t>(gpu * Gpu::kUnits + engine); }
    void start_next_on(std::size_t engine);
    bool streams_idle() const;
    // A copy by the CPU, of which a share `cold` (cold_share()) finds its data gone cold.
    // `out_of_staging`: the copy out of a staging buffer into the user's (cpu.copy_out_bandwidth).
    // zero_page_source: the source's pages all map the kernel's zero page (a never-touched buffer
    // after its read faults), read at cpu.zero_page_bandwidth from the core's cache.
    // unaligned_destination: a copy out of a staging buffer into a user buffer off
    // pageable.copy_out_alignment, which the runtime copies its slower way (unaligned_pass_bandwidth).
    void cpu_copy(std::uint64_t bytes, bool source_cached, bool destination_in_dram, double cold, bool out_of_staging = false,
                  bool zero_page_source = false, bool unaligned_destination = false);
    // The share of what the next CPU copy touches that has left the caches since the CPU's last
    // copy ended (cpu.cache_cooling_time).
    double cold_share() const;
    void staged_copy(std::size_t op);
    void cpu_mapped(std::size_t op);
    void trace_program();  // the finished program's timeline, if a tracer is active
    std::size_t engine_for(int gpu, CopyDirection dir) const;
    // How many times the channels of `gpu` but `engine`'s have launched work (a copy engine's copy,
    // a kernel) since the program started (gpu.front_end_turn).
    std::uint64_t launches_beside(int gpu, std::size_t engine) const;
    // Operations of `op`'s stream issued behind it and not yet finished (gpu.fetch_window).
    std::size_t queued_behind(std::size_t op) const;
    // Whether a copy engine of `gpu` other than `engine` is running a copy that reads host memory.
    bool reading_beside(int gpu, std::size_t engine) const;

    Params params_;
    std::vector<Gpu*> gpus_;
    std::uint16_t host_node_;
    RootComplex* root_complex_ = nullptr;
    std::int64_t wc_in_flight_ = 0;
    std::int64_t reads_in_flight_ = 0;
    Program program_;
    bool has_program_ = false;
    bool done_ = false;
    double t0_ps_ = 0.0;
    double elapsed_ps_ = 0.0;
    std::vector<OpTiming> timings_;
    std::vector<bool> finished_;
    std::vector<int> jobs_left_;  // per op: jobs still running (mapped kernels have two)
    std::vector<double> enqueued_ps_;  // per op: when its call handed it to its stream (absolute)
    std::vector<double> released_ps_;  // per stream: when its latest event record landed (runtime.release_spacing)
    std::vector<double> record_stamp_ps_;  // per event record: its stamp's delay on an idle stream (runtime.record_stamp)
    // per op: when its work was handed to its engine, where that was not its start (absolute;
    // -1: at its start): work behind the gate kernel was handed out with it
    std::vector<double> handed_ps_;
    std::vector<int> channel_;         // per op: see assign_channels()
    // per op: its hardware work queue on its channel (-1: none; assign_queue()), and whether its
    // stream let it go while earlier work of that queue had not started (held until it does)
    std::vector<int> queue_;
    std::vector<char> held_;
    // per channel and queue: operations not yet started, in issue order, and operations not yet
    // finished; per stream and channel: the stream's unfinished operations there and their queue
    std::vector<std::vector<std::deque<std::size_t>>> queue_waiting_;
    std::vector<std::vector<int>> queue_unfinished_;
    std::vector<std::vector<int>> stream_unfinished_;
    std::vector<std::vector<int>> stream_queue_;
    // per op: the operation before it on its stream ran on another GPU (a staged piece's copy
    // into the destination, or the next piece out of the source once a buffer is back), so its
    // channel acquires that GPU's semaphore first (runtime.cross_device_acquire)
    std::vector<char> after_other_gpu_;
    // per op: an event record whose stream's operation before it (records aside) is a copy
    // (runtime.release_seen_lag)
    std::vector<char> record_behind_copy_;
    // per op: a kernel whose stream's operation before it (records aside) is a kernel of its GPU,
    // and of those, one its stream reached as that kernel (or a record behind it) ended, so its
    // launch was fetched meanwhile (runtime.queued_kernel_latency)
    std::vector<char> behind_kernel_;
    std::vector<char> kernel_follows_;
    // per op: an event record held behind its GPU's copies, and when its release landed (absolute)
    std::vector<char> release_held_;
    std::vector<double> landed_ps_;
    std::vector<HeldRelease> held_releases_;
    // per op: a copy its channel handed to the engine behind the copy before it on its stream,
    // before its stream's turn came (hand_on_behind); the stream skips it when its turn comes
    std::vector<char> early_;
    // per early op: the timed event records between it and the copy it rides behind, which its
    // engine waits out before it (runtime.release_spacing each; start_next_on)
    std::vector<std::uint32_t> records_ridden_;
    std::vector<char> dispatched_;  // per op: handed to its engine or started
    // per op: a copy the call put into the command stream (runtime.inline_h2d_max), and of
    // those, one on a stream the CPU had waited for since its last work, whose data the front
    // end reads with the work (runtime.command_fetch_bandwidth)
    std::vector<char> in_stream_;
    std::vector<char> with_work_;
    // per stream: nothing queued on it since the CPU last waited for it (a blocking call, a
    // device synchronisation); a program starts so, but for the gate kernel's stream
    std::vector<char> stream_synced_;

    std::vector<StreamState> streams_;
    bool gate_closed_ = false;
    std::vector<std::size_t> behind_gate_;  // ops whose stream turn came while the gate was shut
    std::vector<EngineState> engines_;
    // Per channel (assign_channels' numbering): how many times it has launched work, a copy or a
    // kernel.
    std::vector<std::uint64_t> launches_;
    std::deque<std::size_t> compute_queue_;
    bool compute_busy_ = false;
    // SM room taken, per SM (kernels' blocks spread evenly), and what waits for room: the
    // running synthetic kernel's blocks not yet resident, and mapped kernels with no room at all.
    double sm_warps_used_ = 0.0;
    double sm_blocks_used_ = 0.0;
    std::int64_t kernel_blocks_waiting_ = 0;
    std::int64_t kernel_blocks_running_ = 0;
    std::vector<std::size_t> mapped_waiting_;
    std::vector<std::int64_t> resident_blocks_;  // per op: its blocks resident now
    std::deque<std::int64_t> kernel_batches_;  // blocks of each batch in kernel_end_, in its order
    std::uint32_t next_job_id_ = 1;
    // Job id -> what finished: an op index, or a staged-copy chunk (kNoOp).
    std::vector<std::size_t> job_op_;
    std::vector<std::size_t> job_engine_;
    std::uint32_t first_job_id_ = 0;
    std::vector<bool> job_done_;
    // Per job: its engine went on while its release waited at the root port (dma.held_releases).
    std::vector<std::uint8_t> job_let_go_;
    // Per job: one of the runtime's own pieces (CopyJob::runtime_piece).
    std::vector<std::uint8_t> job_runtime_piece_;
    // Per job: a copy whose semaphore the CPU sees runtime.cpu_seen_lag late (any but one an
    // engine read from host memory), and when the CPU sees it done; per operation, when it sees
    // the operation's last job done; and when it sees the latest job done.
    std::vector<std::uint8_t> job_seen_late_;
    std::vector<double> job_seen_at_ps_;
    std::vector<double> op_seen_at_ps_;
    double cpu_sees_after_ps_ = 0.0;

    // The GPU's idle time (runtime.idle_wake): copy jobs and kernels under way, when the last
    // one ended (-1: not idle since the program started, which the harness also starts warm)
    // and until when the GPU is waking for the first stream operation after idle.
    int gpu_active_ = 0;
    int cpu_device_ = 0;  // the GPU the CPU's last call was for (switch_device)
    double idle_since_ps_ = -1.0;
    // When the CPU's last copy ended (-1: none since the program started, which the harness's
    // warm-up leaves warm): what it touched cools from then on (cpu.cache_cooling_time).
    double cpu_copy_end_ps_ = -1.0;
    double awake_at_ps_ = 0.0;
    void gpu_work_started() { ++gpu_active_; }
    void gpu_work_ended();
    double stream_start_ps();  // when an operation whose stream lets it go now may start

    // Per staged peer copy of the program (Op::staged_way): its destination GPU, its first piece
    // out of the source and its first piece into the destination (op indices), and the window in
    // which that first piece is entering the destination, where the copies of other streams
    // start runtime.staged_entry_hold late: from the first piece out ending (-1: not yet) to the
    // first piece in ending.
    struct StagedWay {
        int to = -1;
        std::size_t first_down = static_cast<std::size_t>(-1);
        std::size_t first_up = static_cast<std::size_t>(-1);
        double entering_since_ps = -1.0;
        bool entered = false;
    };
    std::vector<StagedWay> staged_ways_;

    TimedHeap<std::size_t> ready_;          // stream operations whose stream let them go
    TimedFifo<std::size_t> kernel_end_;     // kernels finishing
    TimedHeap<std::size_t> wait_end_;       // kWaitFor operations whose wait ends
    TimedHeap<std::uint32_t> release_wait_end_;  // jobs whose engine stops waiting for their held release
    std::vector<std::vector<std::size_t>> waiters_;  // per op: kWaitFor operations waiting for it
    sc_core::sc_event work_event_;
    sc_core::sc_event progress_event_;      // any operation or job finished

    static constexpr std::size_t kNoOp = static_cast<std::size_t>(-1);
    // The engines' channel of the runtime's own copies (CopyJob::channel).
    static constexpr int kRuntimeChannel = -1;
    static constexpr std::uint64_t kCpuCopyGranule = 64 * 1024;  // CPU copies interleave with DMA at this grain
};

}  // namespace dmasim::sim
