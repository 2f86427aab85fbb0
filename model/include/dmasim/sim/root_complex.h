// A PCIe bridge: the root complex (host bridge) of a CPU socket, or, without memory, a PCIe
// switch.
//
// TLPs for the socket's memory go to the memory controller: a write releases its posted
// credits once the controller starts on it (at once while the controller keeps up), a partial
// write once the host's merge into its cache line starts on it; reads come back as completions
// of at most `completion_size` bytes (a multiple of the Read Completion Boundary, capped at
// MPS) on the port towards the requester. A write flagged as a copy engine's semaphore tells
// the completion listener (the host runtime polling for it) when it becomes visible in memory.
// Every other TLP is forwarded, by the routing table the top module derives from the platform
// graph, to the port towards its destination; its ingress buffer is freed when it leaves, so
// a busy egress link pushes back on the ingress link (peer-to-peer through the bridge).
#pragma once

#include <systemc>
#include <tlm>

#include <array>
#include <memory>
#include <string>
#include <vector>

#include "dmasim/config/params.h"
#include "dmasim/sim/fabric.h"
#include "dmasim/sim/memory.h"
#include "dmasim/sim/timed_fifo.h"
#include "dmasim/sim/tlp.h"

namespace dmasim::sim {

class CompletionListener {
public:
    virtual ~CompletionListener() = default;
    virtual void semaphore_written(std::uint32_t job) = 0;
    // A copy's release that reached host memory but waits there for the reads ahead of it (its
    // semaphore_written follows once they have left): its engine may take its next copy.
    virtual void semaphore_held(std::uint32_t /*job*/) {}
    // Whether a copy's release waits at the root port for the reads ahead of it (release_held):
    // the runtime's own pieces release without that flush.
    virtual bool release_waits_for_reads(std::uint32_t /*job*/) const { return true; }
    // The CPU's own accesses to device memory (BAR mappings).
    virtual void cpu_write_left() {}
    virtual void cpu_read_done() {}
};

struct RootComplexStats {
    std::uint64_t writes = 0;
    std::uint64_t reads = 0;
    std::uint64_t completions = 0;
    std::uint64_t forwarded = 0;
    std::uint64_t writebacks = 0;  // writes that evicted a line of the I/O cache (io_cache)
    // What reads waited, all together, on the ports' ways to memory (memory_bandwidth), from the
    // first write-back on.
    double memory_wait_ps = 0.0;
    // The longest a copy's release waited for the completions of the reads taken in before it.
    double longest_release_hold_ps = 0.0;
};

// What share of a buffer of `extent` bytes, written again and again, a cache of `cache` bytes
// still holds when a pass comes back to a line. The I/O ways replace lines at random: a line
// survives the misses of a whole pass with probability exp(-misses / lines), so the share h
// kept solves h = exp(-(extent / cache) (1 - h)); 1 when the buffer fits.
double io_cache_kept_share(std::uint64_t extent, std::uint64_t cache);
// The bytes at the start of each pass whose writes find their lines in the cache, the rest
// each evicting one: the share kept of the extent, or the whole cache while the buffer fits.
std::uint64_t io_cache_free_bytes(std::uint64_t extent, std::uint64_t cache);

class RootComplex : public sc_core::sc_module {
public:
    using Params = config::RootComplexParams;

    struct Port {
        Port(const std::string& name, std::uint16_t peer_node)
            : egress((name + "_egress").c_str()), ingress((name + "_ingress").c_str()), peer(peer_node) {}
        TlpInitiatorSocket egress;  // to the link leaving through this port
        TlpTargetSocket ingress;    // from the link arriving at this port
        std::uint16_t peer;         // node at the other end
    };

    std::vector<std::unique_ptr<Port>> ports;
    std::unique_ptr<MemoryPort> memory;  // root complexes only: bound to the socket's memory controller

    // `peers[i]`: the node at the far end of port i. A root complex serves `memory_node`'s
    // memory; a switch (is_switch) has none.
    RootComplex(sc_core::sc_module_name name, const Params& params, std::uint16_t node_id,
                const std::vector<std::uint16_t>& peers, bool is_switch, std::uint16_t memory_node);

    // The CPU's load or store to a device's BAR, entering the hierarchy here.
    void inject(const Tlp& t);

    // Routing: TLPs for `destination` leave through `port`.
    void set_route(std::uint16_t destination, int port);
    // `port_links[i]`: the PCIe settings of the link at port i (MPS and RCB cut its completions).
    void configure(const Params& params, const std::vector<config::LinkParams>& port_links,
                   const config::MemoryParams& host_memory);
    void set_listener(CompletionListener* listener) { listener_ = listener; }
    // Peer-to-peer through this root complex bounces through host memory (written, read back).
    void set_p2p_via_cpu(bool v) { p2p_via_cpu_ = v; }
    // The host memory the program's writes cover in one repetition (Program::host_write_extent):
    // its repetitions write the same lines again, and what of them the I/O cache still holds
    // decides which writes evict (io_cache_kept_share).
    void set_write_extent(std::uint64_t bytes);
    bool idle() const;
    const RootComplexStats& stats() const { return stats_; }

    tlm::tlm_sync_enum port_fw(int port, Tlp& t, tlm::tlm_phase& p, sc_core::sc_time& d);
    tlm::tlm_sync_enum port_bw(int port, Tlp& t, tlm::tlm_phase& p, sc_core::sc_time& d);

private:
    struct Release {
        int port = 0;
        Tlp tlp;
    };
    // A copy's release that waits for the completions of the reads its port took in before it.
    struct HeldRelease {
        std::uint64_t answered_by = 0;  // reads_answered_ of its port once they have all left
        double done_ps = 0.0;           // when its own write is in memory
        std::uint32_t job = 0;
    };
    struct Out {
        Tlp tlp;
        int ingress = -1;  // forwarded TLPs: the ingress port whose buffer frees when it leaves
        bool from_cpu = false;
        // A read's answer: `tlp` is the request, and the entry leaves as its completions of at
        // most this many bytes, one at a time (one entry per read, not one per completion).
        std::uint32_t completion_bytes = 0;
        std::uint32_t answered = 0;  // bytes of the request already sent as completions
    };
    struct EgressQueue {
        TimedHeap<Out, FabricEvent> queue;
        bool link_ready = true;
    };

    void egress();           // TLPs to their ports as they become ready
    void drain(std::size_t port);  // what is due for one port, while its link takes it
    void release_held(std::size_t port);  // the releases whose owed completions have all left
    // A read of `bytes` the port takes in now: what its answer waits for the port's read load.
    double loaded_read_ps(std::size_t port, double now, std::uint32_t bytes);
    void release_writes();   // posted buffers freed as writes enter the path to the controller
    void notify_semaphores();  // and the CPU accesses done: handed to the host at the kernel's time
    void free_buffer(int port, const Tlp& t);
    // Takes the data path both directions of `port` share (port_bandwidth_total) for `bytes`,
    // now: false while it is busy, or while this direction's turn has not come, and then nothing
    // is taken. `write`: for a posted write (else a completion). While the other direction is
    // active the two take it in turn whether or not the other has something waiting.
    bool take_shared_stage(std::size_t port, std::uint32_t bytes, bool write);
    // When `write`'s direction of `port` may next take the shared stage.
    double shared_stage_free_ps(std::size_t port, bool write) const;
    // Whether the direction other than `write`'s is active at `port`: reads waiting for their
    // completions, or writes arriving back to back.
    bool other_direction_active(std::size_t port, bool write) const;
    // A completion of `port` is waiting for the shared stage only (due, and its link ready).
    bool completion_waiting(std::size_t port) const;
    // Whether a write of `job` of `bytes` evicts a line of the I/O cache (io_cache): whether it
    // lands past the bytes of the program's host buffers whose lines a pass still finds there
    // (io_free_), its job having started `host_kib` into them (Tlp::host_kib) and written what
    // it did before.
    bool evicts(std::uint32_t job, std::uint32_t host_kib, std::uint32_t bytes);
    int port_towards(std::uint16_t node) const;

    Params params_;
    double forward_ps_;  // params_.forward_latency in whole picoseconds, converted once per configure
    std::uint16_t node_id_;
    bool is_switch_;
    std::uint16_t memory_node_;
    std::vector<std::uint32_t> completion_bytes_;  // per port
    bool p2p_via_cpu_ = false;
    std::uint8_t peer_write_log2_ = 0;  // log2 of params_.peer_write_size (0: forwarded whole)
    double memory_latency_ps_ = 0.0;
    double memory_ps_per_byte_ = 0.0;  // the memory controller's service time per byte
    double merge_free_ps_ = 0.0;       // when the merge of shared-line partial writes is free
    double held_free_ps_ = 0.0;        // when the host is free to take the next write into a line a core holds
    double held_ps_per_byte_ = 0.0;    // held_write_bandwidth's
    // The ports' data paths to and from memory (params_.port_bandwidth and
    // port_bandwidth_total; 0: no limit), per port: when each direction, and the stage both
    // directions share, is next free.
    double port_ps_per_byte_ = 0.0;
    double port_total_ps_per_byte_ = 0.0;
    double port_tlp_ps_ = 0.0;  // root_complex.port_tlp_time: a turn's cost beside its payload
    std::vector<double> port_in_free_ps_;
    std::vector<double> port_out_free_ps_;
    std::vector<double> port_shared_free_ps_;
    std::vector<char> shared_last_write_;  // per port: the shared stage's last taker was a write
    std::vector<double> write_turn_ps_;       // per port: when writes' next turn at it comes
    std::vector<double> completion_turn_ps_;  // per port: when completions' next turn comes
    std::vector<std::uint32_t> reads_open_;   // per port: reads whose completions have not all left
    std::vector<std::uint64_t> reads_taken_;     // per port: bytes of reads taken in, all along
    std::vector<std::uint64_t> reads_answered_;  // per port: bytes of completions that have left, all along
    // Per port, in arrival order: releases waiting for completions to leave (a copy each, not a
    // packet each; held_head_ is the first still waiting).
    std::vector<std::vector<HeldRelease>> held_;
    std::vector<std::size_t> held_head_;
    std::vector<double> last_write_ps_;       // per port: when the last write arrived
    std::vector<std::uint32_t> last_write_bytes_;  // per port: its payload
    std::vector<double> write_done_ps_;       // per port: when the writes that came in so far are in memory
    bool releasing_ = false;  // inside release_writes (which may drain a port, which must not re-enter it)
    // The port's way to host memory (params_.memory_bandwidth; 0: no limit): when write-backs,
    // and reads (which wait behind them), may next start on it.
    double memory_path_ps_per_byte_ = 0.0;
    std::vector<double> memory_write_free_ps_;
    std::vector<double> memory_read_free_ps_;
    // Per port: the bytes its reads ask for a picosecond, averaged over root_complex.read_rate_window
    // (exponentially, as of read_rate_at_ps_), which lengthens every read it takes in by
    // read_latency_per_gbps a GB/s (loaded_read_ps).
    std::vector<double> read_rate_;
    std::vector<double> read_rate_at_ps_;
    double loaded_ps_per_rate_ = 0.0;  // ps of wait per byte/ps of that rate (0: none)
    double read_window_ps_ = 1.0;
    // All ports' way to host memory together (params_.ports_bandwidth_total; 0: no limit): when
    // write-backs, and reads (which wait behind them and each other), may next start on it.
    double ports_ps_per_byte_ = 0.0;
    double ports_write_free_ps_ = 0.0;
    double ports_read_free_ps_ = 0.0;
    // Where the last few jobs' writes have got to in the program's host buffers (io_cache). A
    // ring, as jobs come and go, that costs no allocation per write.
    struct JobBytes {
        std::uint32_t job = 0;
        std::uint64_t bytes = 0;
        bool seen = false;
    };
    static constexpr std::size_t kIoJobs = 8;
    std::uint64_t io_free_ = 0;  // io_cache_free_bytes of the program's extent
    std::array<JobBytes, kIoJobs> io_written_{};
    std::size_t io_next_ = 0;
    double last_release_ps_ = 0.0;     // when the last posted write left its buffer
    std::vector<int> route_;
    std::vector<std::unique_ptr<FwPort<RootComplex>>> fw_;
    std::vector<std::unique_ptr<BwPort<RootComplex>>> bw_;
    std::vector<std::unique_ptr<EgressQueue>> egress_;
    TimedFifo<Release, FabricEvent> write_release_;
    // Each port's writes wait for its own data path, so a semaphore on one port can land before
    // an earlier one on another: in landing order, not arrival order.
    TimedHeap<std::uint32_t, FabricEvent> semaphores_;
    TimedHeap<std::uint32_t, FabricEvent> held_notices_;  // semaphore_held, when the release would have landed
    TimedFifo<bool, FabricEvent> cpu_done_;  // true: a CPU write left; false: a CPU read returned
    CompletionListener* listener_ = nullptr;
    RootComplexStats stats_;
};

}  // namespace dmasim::sim
