// A GPU copy engine.
//
// Host-to-device: it reads host memory with read requests of at most MRRS bytes, never more
// than `max_read_requests` outstanding (its tags), and writes the completions' data to GPU
// memory. Device-to-host: it reads GPU memory ahead in chunks and posts writes of at most MPS
// bytes. Either way it finishes with a semaphore write into host memory, which is what the
// host runtime waits for. The engine offers one TLP at a time to its GPU's egress arbiter.
//
// The same module is the GPU's two request units for its SMs' zero-copy traffic; a job with a
// WarpLoop paces reads warp by warp and stores by the warps' iterations instead.
#pragma once

#include <systemc>

#include <cstdint>
#include <vector>

#include "dmasim/config/params.h"
#include "dmasim/sim/fabric.h"
#include "dmasim/sim/memory.h"
#include "dmasim/sim/ring.h"
#include "dmasim/sim/timed_fifo.h"
#include "dmasim/sim/tlp.h"

namespace dmasim::sim {

enum class CopyDirection : std::uint8_t { kHostToDevice, kDeviceToHost };

// A zero-copy kernel's loop as its warps run it (results/h100-sxm/isolating/zero-copy-warp-loop).
// Loads of host memory: each warp's access is `lines` read requests that leave one after another,
// `line_gap_ps` apart; the warp waits for all of them, then spends `loop_ps` before its next
// access. Stores: every warp loads its data from GPU memory and stores it, so all warps together
// make `round_bytes` available once per `round_ps`, the SMs send at most `store_bytes_per_s`, and
// the warps run ahead of the link by a round or `store_buffer_bytes`, whichever is more. A copy
// engine has none of this (warps == 0).
struct WarpLoop {
    std::uint32_t warps = 0;  // independent access streams (resident warps x loads in flight)
    std::uint32_t lines = 1;  // read requests one warp's access makes
    double line_gap_ps = 0.0;
    double loop_ps = 0.0;
    std::uint64_t round_bytes = 0;  // stores: bytes all warps store per iteration
    double round_ps = 0.0;
    double store_bytes_per_s = 0.0;  // 0: no limit
    // Stores: what the GPU holds of them between the SMs and the link beyond a round (the warps do
    // not wait for their stores to leave, and run ahead until this much waits).
    std::uint64_t store_buffer_bytes = 0;
    std::uint32_t access_bytes = 0;  // bytes one warp's access loads or stores
};

class DmaEngine;
class CompletionListener;

struct CopyJob {
    std::uint32_t id = 0;
    CopyDirection direction = CopyDirection::kHostToDevice;
    std::uint64_t bytes = 0;
    std::uint16_t host_node = 0;  // completer of reads / target of writes (host memory or a peer GPU)
    std::uint16_t semaphore_node = 0;  // where the completion semaphore goes (host memory)
    bool peer = false;  // device to device: its data writes are peer-to-peer (Tlp::peer)
    std::uint32_t host_kib = 0;  // where in the program's host buffers it starts (Tlp::host_kib)
    // Into host memory: its first held_bytes land on lines a CPU core's cache holds (a staging
    // buffer the CPU copied out of last), which the host takes out of the core first
    // (LineWrite::kHeld, root_complex.held_write_bandwidth).
    std::uint64_t held_bytes = 0;
    // SM (zero-copy) traffic: requests of this size (0: MRRS for reads, MPS for writes) and at
    // most this many reads in flight (0: the engine's tags).
    std::uint32_t request_bytes = 0;
    std::uint32_t max_outstanding = 0;
    // SM stores, one write per store: bytes between consecutive writes in host memory, and the
    // host's cache line, to flag the writes that share a line (gpu::shares_host_line).
    std::uint32_t write_spacing = 0;
    std::uint32_t host_line = 0;
    WarpLoop loop;  // SM traffic only
    // A kernel that loads and stores host memory (dmaprobe's exchange): each thread stores only
    // once its load is back, and the SMs' queue to the link keeps a store behind the read
    // requests queued before it (PCIe lets no read pass a posted write). The loads' unit names
    // the unit that sends the stores (`stores`); that one sends what it is fed (`fed`), not
    // what it reads ahead from GPU memory.
    DmaEngine* stores = nullptr;
    bool fed = false;
    // Before it launches, the channel acquires a semaphore of another GPU that the job depends
    // on (runtime.cross_device_acquire; 0: none).
    std::uint64_t acquire_ps = 0;
    // Data the front end read with the job's work (runtime.command_fetch_bandwidth): the job
    // starts after that read, fetch_ps at the front end's rate but no sooner than the link
    // carries fetched_bytes, and then moves nothing over the link but its semaphore; a copy
    // engine's job (not the front end's own write) then writes the data into GPU memory
    // (dma.gpu_memory_latency).
    std::uint64_t fetch_ps = 0;
    std::uint64_t fetched_bytes = 0;
    bool writes_fetched = false;
    // Queued behind another job on a busy engine: its work is fetched already, and it starts
    // after dma.queued_launch_latency rather than dma.launch_latency.
    bool queued = false;
    // A copy engine's copy into host memory: the next copy of its stream, queued behind it on
    // its engine, starts dma.host_write_hold later (dma.host_write_hold_fetching where that next
    // copy's channel still fetches work queued behind it: `fetching`). The stream of the
    // operation (-1: the runtime's own pieces of one call).
    bool into_host_memory = false;
    int stream = -1;
    bool fetching = false;
    // One of the runtime's own pieces (a staged peer copy's, a pageable copy's): its release does
    // not wait at the root port for the reads ahead of it (CompletionListener::release_waits_for_reads).
    bool runtime_piece = false;
    // The channel whose copy this is on its engine (kNoTurn: none, the front end or the command
    // stream carries it): an idle engine whose last copy was another channel's starts it
    // dma.channel_turn later (turn_ps, set as it starts).
    static constexpr int kNoTurn = -1000;
    int channel = kNoTurn;
    std::uint64_t turn_ps = 0;
    // An SM unit's share of a zero-copy kernel: the kernel ends where the GPU sees it, once its
    // last store has left for the link (posted, ordered ahead of whatever follows it there) or
    // its last load's data is in GPU memory, and gpu.sysmem_kernel_end later. No release crosses
    // the link, as none does for the empty kernel that sets runtime.kernel_launch_latency
    // (results/h100-sxm/isolating/kernel-end).
    bool release_on_gpu = false;
};

struct EngineStats {
    std::uint64_t read_requests = 0;
    std::uint64_t writes = 0;
    std::uint32_t peak_outstanding_reads = 0;
};

// What an engine rings when it has a new TLP to offer: it wakes the GPU's egress arbiter. While
// the arbiter runs it is held: the arbiter looks at every engine again before it stops, so a ring
// then needs no wake-up of its own.
class Doorbell {
public:
    // While held (its owner is about to arbitrate), a ring only marks that someone rang, so the
    // owner can tell whether an engine other than the one it serves got a TLP meanwhile.
    void ring() {
        if (held_) {
            rang_while_held_ = true;
        } else {
            event_.notify(zero_delay());
        }
    }
    void hold(bool held) {
        held_ = held;
        if (held) rang_while_held_ = false;
    }
    bool rang_while_held() const { return rang_while_held_; }
    FabricEvent& event() { return event_; }

private:
    FabricEvent event_;
    bool held_ = false;
    bool rang_while_held_ = false;
};

class DmaEngine : public sc_core::sc_module {
public:
    using Params = config::DmaParams;

    MemoryPort gpu_memory;  // bound to the GPU's memory controller

    // `doorbell` rings whenever the engine has a new TLP to offer.
    DmaEngine(sc_core::sc_module_name name, const Params& params, int index, std::uint16_t gpu_node,
              Doorbell& doorbell);

    void configure(const Params& params, const config::LinkParams& link);
    // The SMs' request units: what a load's way from its warp to the GPU's host interface and
    // back adds to each read (gpu.sm_host_path), its line held all along; a copy engine sits at
    // the host interface (0). Set after configure, which clears it.
    void set_return_path(core::Duration path) { return_path_ps_ = static_cast<double>(path.ps); }
    // Who learns of a job that ends on the GPU (CopyJob::release_on_gpu), and how long after its
    // last TLP (gpu.sysmem_kernel_end). Set after configure, which clears the time.
    void set_listener(CompletionListener* listener) { listener_ = listener; }
    void set_kernel_end(core::Duration end) { kernel_end_ps_ = static_cast<double>(end.ps); }
    // Starts a copy after the launch latency. The engine must be idle.
    void start(const CopyJob& job);
    bool busy() const { return active_; }

    // The egress arbiter's view: whether the engine has a TLP to send, and taking it. A read
    // request gets its tag when it is taken, since completions may free tags in between.
    bool has_tlp() const { return pending_; }
    std::uint16_t next_destination() const { return next_.completer; }
    Tlp take();
    // A completion for one of this engine's read requests.
    void on_completion(const Tlp& t);
    // Stores an exchange kernel's loads have released (CopyJob::fed).
    void feed(std::uint64_t bytes);
    // When the offered TLP was issued: a read's warp became ready to send it, a write's data
    // became available to send (GPU memory read, or fed). The SMs' queue to the link is served
    // in this order (Gpu::arbitrate).
    double offered_since_ps() const { return offered_since_ps_; }
    // When the engine offered it to the GPU's arbiter (a copy engine offers one TLP at a time).
    double pending_since_ps() const { return pending_since_ps_; }
    // Whether a warp's read is ready to leave, tag or not, and since when: a load that waits for
    // a free line holds the SMs' queue behind it.
    bool read_waiting(double& since_ps) const;
    // The same by the warps' accesses: the earliest issue of an access with lines still to leave
    // (a warp's load issues all its lines at once; the model sends them line_gap apart, each
    // queued behind the others' as it goes). What a copy waits behind (gpu.copies_in_order).
    bool access_waiting(double& since_ps);

    const EngineStats& stats() const { return stats_; }

private:
    void launch();        // on launch_event_: the launch latency has passed
    void chunk_ready();   // read-ahead data from GPU memory is available
    void data_landed();   // the last completion's data is in GPU memory
    void line_back();     // a line on its way back to its warp is free (return_path_ps_)
    bool lines_free();    // frees the lines back by now; whether one is free for a read
    void prepare();       // decides the next TLP
    void make_semaphore(Tlp& t) const;  // the completion write that ends a job
    void end_job();                     // no more TLPs: the release is offered or, on the GPU, done
    void released();                    // on release_event_: a job that ended on the GPU
    void read_ahead();
    void next_round();   // stores of a kernel: its warps' next iteration
    void warp_ready();   // a warp's next read request may leave
    void take_warp_line(std::uint32_t slot);
    bool next_warp_due();
    void retire_requests(std::uint64_t n);  // exchange: requests sent or dropped; release stores
    void reset_tags(std::size_t tags);  // `tags` tags, all free

    static constexpr std::uint64_t kChunk = 64 * 1024;  // GPU-memory access granule of the engine
    // The tag of a descriptor read (a card's engine): above every data tag (at most 16 384).
    static constexpr std::uint32_t kDescriptorSlot = 0xFFFF;

    // A scatter-gather engine (params_.descriptor_bytes > 0): whether its next descriptor read is
    // due, and the data the descriptors fetched so far cover.
    bool descriptor_read_due() const;
    std::uint64_t described() const { return described_; }

    Params params_;
    int index_;
    std::uint16_t gpu_node_;
    Doorbell& doorbell_;
    std::uint32_t mps_ = 256;
    std::uint32_t mrrs_ = 512;
    double completion_bytes_per_ps_ = 0.0;  // payload the link carries in read completions

    bool active_ = false;
    bool started_ = false;
    bool pending_ = false;
    bool semaphore_sent_ = false;
    Tlp next_;
    CopyJob job_;
    std::uint64_t issued_ = 0;     // bytes requested (reads) or sent (writes)
    std::uint64_t received_ = 0;   // bytes of completions received (reads)
    std::uint64_t available_ = 0;  // bytes read ahead from GPU memory (writes)
    std::uint64_t fetched_ = 0;    // bytes whose GPU-memory read has been issued (writes)
    std::uint64_t unwritten_ = 0;  // received bytes not yet written to GPU memory (reads)
    int chunks_in_flight_ = 0;
    int chunks_ahead_ = 2;  // read_ahead / kChunk
    // Descriptors (a card's engine): data covered by those fetched, by those asked for, one block's
    // worth, the bytes of the read in flight still to come, and whether the offered TLP is one.
    std::uint64_t described_ = 0;
    std::uint64_t requested_desc_ = 0;
    std::uint64_t desc_block_ = 0;
    std::uint32_t desc_remaining_ = 0;
    bool offering_descriptors_ = false;
    std::uint32_t outstanding_ = 0;
    std::uint32_t outstanding_cap_ = 0;
    std::uint32_t read_size_ = 0;
    std::uint32_t write_size_ = 0;
    bool partial_writes_ = false;    // writes of part of a host line: each flagged (Tlp::line_write)
    std::uint64_t write_count_ = 0;  // writes the job makes
    std::vector<std::uint32_t> free_tags_;
    std::vector<std::uint32_t> tag_remaining_;
    bool data_in_memory_ = false;
    // Loads of a kernel (job_.loop.warps > 0): per warp, requests of its current access issued
    // and not yet complete; the warp of each tag; warps whose next request may leave, by time.
    bool warp_reads_ = false;
    std::uint64_t claimed_ = 0;  // bytes of the accesses warps have started
    std::vector<std::uint32_t> warp_issued_;
    // Per warp, when its current access was issued (its first line due), and the warps whose
    // access has lines left to send, in the order their accesses were issued (access_waiting;
    // a warp that has sent them all is dropped from the front as it comes up).
    struct OpenAccess {
        std::uint32_t warp = 0;
        std::uint32_t generation = 0;  // warp_access_gen_ when it was issued: stale once it differs
    };
    std::vector<double> warp_access_ps_;
    std::vector<std::uint32_t> warp_access_gen_;
    Ring<OpenAccess> accesses_open_;
    std::vector<std::uint32_t> warp_left_;
    std::vector<std::uint32_t> tag_warp_;
    TimedHeap<std::uint32_t, FabricEvent> warp_ready_;
    double stores_free_ps_ = 0.0;  // stores of a kernel: when the last piece asked for is available
    // Exchange (job_.stores): requests of the accesses warps have queued, and of those sent or
    // dropped; each finished access's store waits for the requests queued before it (a ticket).
    struct StoreTicket {
        std::uint64_t after = 0;  // queued_requests_ when the access finished
        std::uint32_t bytes = 0;
    };
    std::uint64_t queued_requests_ = 0;
    std::uint64_t retired_requests_ = 0;
    std::vector<StoreTicket> tickets_;  // a ring: at most one per warp waits
    std::size_t ticket_head_ = 0;
    std::size_t ticket_count_ = 0;
    std::uint64_t fed_early_ = 0;  // fed before its job started
    // Writes: when each span of available bytes became available (end offset, time), oldest
    // first; the offered TLP's issue time.
    struct Available {
        std::uint64_t end = 0;
        double since_ps = 0.0;
    };
    Ring<Available> available_since_;
    double offered_since_ps_ = 0.0;
    double pending_since_ps_ = 0.0;

    double job_start_ps_ = 0.0;
    FabricEvent launch_event_;
    TimedFifo<std::uint64_t, FabricEvent> chunks_;
    TimedFifo<int, FabricEvent> landed_;
    // SM reads: a read's line stays taken until its data is back at its warp, return_path_ps_
    // after its completion came; those lines' free times, oldest first (outstanding_ counts
    // them). An event wakes the engine only while it waits for one.
    double return_path_ps_ = 0.0;
    Ring<double> lines_back_;
    FabricEvent line_back_event_;
    FabricEvent release_event_;
    CompletionListener* listener_ = nullptr;
    std::uint32_t released_job_ = 0;
    double kernel_end_ps_ = 0.0;
    bool line_back_armed_ = false;  // one wake-up pending at a time: the front only gets later
    EngineStats stats_;
};

}  // namespace dmasim::sim
