// Model parameters: one struct per module, each field with its unit, default and meaning.
//
// The structs live here, free of SystemC, because the scenario parser (which must not depend on
// SystemC) validates and fills them, and the SystemC modules take them as their `params`.
// Every struct has `visit(v)`, which names each field once; the parser, `--set`, config.json and
// `dmasim params` all walk that one list, so a parameter can never be documented but not
// settable, or settable but missing from the recorded configuration.
//
// Defaults describe the default platform: an H100 SXM on PCIe Gen5 x16 in a current x86 server;
// MPS 256B, MRRS 4096B and RCB 64B are what the lent H100's Device/Link Control registers say
// (results/h100-sxm/pci/pcie-devctl.txt). Values marked "spec" come from the PCI Express Base
// Specification and are not free; the rest are platform properties that calibration may fit.
// Each doc string ends with the field's valid range; config/param_checks.h enforces those ranges
// for scenarios and platform files alike, so the two must change together.
#pragma once

#include <cstdint>
#include <string>

#include "dmasim/core/units.h"

namespace dmasim::config {

using core::Bandwidth;
using core::Bytes;
using core::Duration;
using core::TransferRate;

// What a visitor sees of a field besides its value.
struct FieldInfo {
    const char* key;   // YAML key inside its section
    const char* unit;  // human-readable unit ("bytes", "ns", "count", ...)
    const char* doc;   // one line: what it means and, where it matters, its valid range
};

// PCIe link, applied to both directions of one link. Receiver credits are what each end
// advertises to the other.
struct LinkParams {
    std::int64_t generation = 5;
    std::int64_t lanes = 16;
    TransferRate rate{0.0};
    Bytes mps{256};
    Bytes mrrs{4096};
    Bytes rcb{64};
    bool addr64 = true;
    bool ecrc = false;
    Duration latency{80'000};
    std::int64_t ack_coalesce = 4;
    std::int64_t updatefc_coalesce = 4;
    std::int64_t credits_posted_header = 128;
    std::int64_t credits_posted_data = 2048;
    std::int64_t credits_nonposted_header = 128;
    std::int64_t credits_completion_header = 0;
    std::int64_t credits_completion_data = 0;

    template <class V>
    void visit(V&& v) {
        v(FieldInfo{"generation", "1..6", "PCIe generation: sets signalling rate and line encoding (spec)"}, generation);
        v(FieldInfo{"lanes", "count", "link width: 1, 2, 4, 8 or 16"}, lanes);
        v(FieldInfo{"rate", "GT/s", "per-lane rate; 0GT/s = the generation's (2.5/5/8/16/32/64), any other value must equal it"}, rate);
        v(FieldInfo{"mps", "bytes", "Max Payload Size: 128B..4096B, power of two"}, mps);
        v(FieldInfo{"mrrs", "bytes", "Max Read Request Size: 128B..4096B, power of two"}, mrrs);
        v(FieldInfo{"rcb", "bytes", "Read Completion Boundary: 64B or 128B"}, rcb);
        v(FieldInfo{"addr64", "bool", "64-bit addresses: memory request headers are 4DW, else 3DW (spec)"}, addr64);
        v(FieldInfo{"ecrc", "bool", "end-to-end CRC: adds 4 bytes to every TLP"}, ecrc);
        v(FieldInfo{"latency", "time", "one-way latency of PHY, wire and data link layer, per direction; 0s..1ms"}, latency);
        v(FieldInfo{"ack_coalesce", "TLPs", "TLPs acknowledged per Ack DLLP (one Ack at least when the link idles); 1..1024"}, ack_coalesce);
        v(FieldInfo{"updatefc_coalesce", "TLPs", "TLPs whose credits one UpdateFC DLLP returns (sooner when the receiver drains); 1..1024"}, updatefc_coalesce);
        v(FieldInfo{"credits_posted_header", "credits", "receiver's posted header credits (1 per TLP); 0 = infinite, else 1..2048"}, credits_posted_header);
        v(FieldInfo{"credits_posted_data", "credits", "receiver's posted data credits (16 bytes each); 0 = infinite, else MPS/16 (spec minimum)..32768"}, credits_posted_data);
        v(FieldInfo{"credits_nonposted_header", "credits", "receiver's non-posted header credits (1 per read request); 0 = infinite, else 1..2048"}, credits_nonposted_header);
        v(FieldInfo{"credits_completion_header", "credits", "receiver's completion header credits; 0 = infinite (endpoints must advertise infinite), else 1..2048"}, credits_completion_header);
        v(FieldInfo{"credits_completion_data", "credits", "receiver's completion data credits (16 bytes each); 0 = infinite, else MPS/16 (spec minimum)..32768"}, credits_completion_data);
    }
};

// Root complex (host bridge): where DMA from a device meets host memory.
// completion_size 128B by default; the lent H100 and H200 hosts send 256 B (their platforms say
// so): 64 B would cap Gen5 x16 reads at 47.9 GB/s and 128 B at 54.35, below the 55.0-55.4 they
// measure host-to-device, which their root port's data path holds (port_bandwidth).
struct RootComplexParams {
    Duration forward_latency{150'000};
    Bytes completion_size{128};
    Bandwidth port_bandwidth{0.0};
    Bandwidth port_bandwidth_total{0.0};
    Duration port_tlp_time{0};
    Bytes io_cache{0};
    Bandwidth memory_bandwidth{0.0};
    Bandwidth ports_bandwidth_total{0.0};
    Duration switch_latency{100'000};
    Duration partial_write{1'260};
    Duration shared_line_write{2'010};
    Bytes peer_write_size{0};
    Duration read_latency_per_gbps{0};
    Duration read_rate_window{1'000'000};
    Bandwidth held_write_bandwidth{23.9e9};

    template <class V>
    void visit(V&& v) {
        v(FieldInfo{"forward_latency", "time", "ingress port to memory controller (and back for completions), or port to port; 0s..1ms"}, forward_latency);
        v(FieldInfo{"completion_size", "bytes", "largest read completion payload it sends: a multiple of RCB, 64B..4096B, capped at MPS"}, completion_size);
        v(FieldInfo{"port_bandwidth", "bytes/s", "data one root port moves between its link and host memory, per direction: payload of the writes it takes in, and of the completions it sends out; 0B/s = no limit but the link's (H100 and H200 hosts: 55.2 GB/s, results/h100-sxm/isolating/copy-beside-zero-copy); else at most 100TB/s"}, port_bandwidth);
        v(FieldInfo{"port_bandwidth_total", "bytes/s", "the same data path's rate for both directions together, writes in and reads' data out, taken by the two in turn while both are active, a turn unused when the other direction has nothing ready (so each gets at most half while both are active), each packet's turn also costing port_tlp_time; 0B/s = no shared limit (H100 and H200 hosts: 122 GB/s with 0.425 ns a packet, 101.4 GB/s for 256-byte packets: the median of what duplex pairs grow by per MiB, 20.55-20.65 us (median 20.61) from 2 to 16 MiB averaged over the gate's delay on four fresh leases of the H100's kind (results/h100-sxm/isolating/duplex-overlap, growth), 20.65 from 4 to 64 MiB on the 2xH200 main plan's eight leases and 20.88 from 4 to 16 MiB on the H100's 28; 99-100 GB/s in duplex copies of 16-40 MiB, 101-102 on the H200 from 64 MiB; past the I/O cache the D2H copy stays at 51 GB/s beside an H2D copy that host memory holds to about 41; results/h100-sxm/isolating/duplex-host-memory); else at most 100TB/s"}, port_bandwidth_total);
        v(FieldInfo{"port_tlp_time", "time", "what each write and each completion costs that shared path beside its payload (port_bandwidth_total): a turn is payload / port_bandwidth_total + this. Two sizes of packets separate the two: copies both ways at once (256 B writes and completions) get 50.7 GB/s each (101.4 together: port_bandwidth_total), the zero-copy exchange (128 B each way) 82.9 and 83.9 GB/s together on the H100 and H200 hosts (28 and 8 leases), which the model gives with 122 GB/s and 0.425 ns as it did with 119 GB/s and 0.40 ns before the pairs' rate was re-measured (within 0.2 %); shapes of the exchange that fill one link first (half the stores, or half the loads) are held by that link, as the model has them (results/h100-sxm/isolating/zero-copy-exchange/mixes); 0s..1us"}, port_tlp_time);
        v(FieldInfo{"io_cache", "bytes", "host cache that the writes through this port allocate into (the last-level cache's I/O ways), which replaces its lines at random. A program repeated on the same host buffers finds there, of what it wrote a pass before, the share h = exp(-(E / io_cache) (1 - h)) when its writes cover E > io_cache bytes, all of it when they fit: each pass's first h E bytes find their lines, the rest each evict a line, which goes back to memory through memory_bandwidth. 0B = no such cache (writes cost memory_bandwidth nothing). H100 and H200 hosts: 40 MiB (duplex copies flushed first lose from 40-64 MiB on; repeated, on the lent H100 a4585846 the pair moves 100.7 GB/s at 40 MiB, 96.6/94.1/92.9/90.5 at 48/56/64/80 MiB, as the share evicted, 0.31/0.51/0.64/0.80, of its loss at 256 MiB; results/h100-sxm/isolating/duplex-host-memory, repeat/); 0B..1TiB"}, io_cache);
        v(FieldInfo{"memory_bandwidth", "bytes/s", "what one port's DMA gets from host memory: its reads' data and the write-backs of lines its writes evict (io_cache), together, write-backs first (measured: the D2H copy keeps its rate, the H2D reads lose); 0B/s = no limit but host_memory's (H100 hosts: 93 GB/s, duplex copies of 64 MiB-1 GiB, results/h100-sxm/isolating/duplex-host-memory; the one-GPU H200 of that kind of host moved 102 there; the 2-GPU host: 100 GB/s, what its main plan's pairs of 256 MiB-1 GiB move together, the training leases' median, 79-102 between leases, results/h200x2-nvlink/isolating/duplex-host-memory); else at most 100TB/s"}, memory_bandwidth);
        v(FieldInfo{"ports_bandwidth_total", "bytes/s", "what all its root ports' DMA together gets from host memory: reads' data and the write-backs of lines their writes evict (io_cache), write-backs first, as memory_bandwidth for one port. 2-GPU host of the nvidia-h200-x2 kind, each GPU on its own port, copies of 256 MiB, one each way: 104.3, 108.1 and 109.5 GB/s together on three leases, the device-to-host copy keeping its rate and the host-to-device one losing 1-10 %; the same way on both: 106.0-110.2 (results/h200x2-nvlink/isolating/two-gpu-host-traffic); 108 GB/s there, the median; 0B/s = no such limit; else at most 100TB/s"}, ports_bandwidth_total);
        v(FieldInfo{"switch_latency", "time", "a PCIe switch's port-to-port forwarding latency (cut-through); 0s..1ms"}, switch_latency);
        v(FieldInfo{"partial_write", "time", "a posted write of part of a host cache line (cpu.cache_line) that no neighbouring write touches: the time the host takes to merge it, one write after another (H100 host: 1.26 ns); 0s..1us"}, partial_write);
        v(FieldInfo{"shared_line_write", "time", "the same for a partial write whose line neighbouring writes also touch (H100 host: 2.01 ns); 0s..1us"}, shared_line_write);
        v(FieldInfo{"peer_write_size", "bytes", "largest write this root complex forwards from one device to another (peer-to-peer): a larger write leaves it as writes of this size, each with its own header on the wire, on every link after it (the pieces share the write's flow-control credit). 0B = forwarded as it came. Intel Xeon root complexes: 64 B (NCCL: \"Intel CPU convert GPU P2P traffic into 64B PCI TLPs\", src/graph/topo.h, which it prices as 6/5 the bandwidth); a power of two, 64B..4KiB, or 0B"}, peer_write_size);
        v(FieldInfo{"read_latency_per_gbps", "time", "what a read of host memory through a port waits more for each GB/s of reads that port has been answering (over read_rate_window): the host's read path slows with its load well before the link is full. 0s: no such wait. H100 and 2xH200 hosts: 4.3 ns, the value that makes the model's zero-copy loads of 1-16 blocks one multiple of what two fresh one-GPU H200 leases, the H100's kind of host, measured: the loads' own round trip (lines in flight x 128 B over their rate) grows by 3.3-4.1 ns per GB/s from 3 to 44 GB/s, a lone chase's beside them by 5.6-6.5 ns, and where the blocks run does not matter (results/h100-sxm/isolating/zero-copy-sm-groups); 0s..1us"}, read_latency_per_gbps);
        v(FieldInfo{"held_write_bandwidth", "bytes/s", "the rate at which the host takes a device's writes into lines that a CPU core's cache holds, one after another: it takes each line out of the core before the write lands (a copy out of the GPU into a buffer the CPU has just read or written; the runtime's staging buffer of a pageable copy out of the GPU, which the CPU copied out of last: cpu.core_cache). H100's kind of host: 23.9 GB/s, from a pinned copy out of the GPU into a buffer the CPU has just read, 24.5 us a MiB slower than one into a buffer the engine wrote last (23.6-26.3 us at 128 KiB-1 MiB, two fresh one-GPU H200 leases; just written by the CPU 26.0-30.1), on top of the 53.9 GB/s such copies grow by (results/h100-sxm/isolating/pageable-out); 0B/s = no such cost; else at most 100TB/s"}, held_write_bandwidth);
        v(FieldInfo{"read_rate_window", "time", "the time over which a port's read rate is weighed for read_latency_per_gbps: an exponential average of the bytes its reads ask for, with this time constant (about a read's round trip); above 0, at most 1ms"}, read_rate_window);
    }
};

// A memory controller with a bandwidth shared by everything that uses it.
struct MemoryParams {
    Bandwidth bandwidth{300e9};
    Duration latency{100'000};

    template <class V>
    void visit(V&& v) {
        v(FieldInfo{"bandwidth", "bytes/s", "sustained bandwidth shared by all requesters; above 0, at most 100TB/s"}, bandwidth);
        v(FieldInfo{"latency", "time", "access latency of one request, unloaded; 0s..1ms"}, latency);
    }
};

// The GPU's DMA copy engines (asyncEngineCount of them).
// A capture card's (or other third-party endpoint's) DMA engine, where it differs from a GPU's copy
// engine: it moves the pieces of a scatter-gather list, whose descriptors it reads from host
// memory ahead of their data (Xilinx/AMD XDMA, PG195: 32-byte descriptors, up to 64 adjacent
// ones read at once, a read being at most the engine's MRRS).
struct CardDmaParams {
    std::int64_t read_requests = 64;
    Duration launch_latency{0};
    Bytes descriptor_bytes{4096};
    Bytes descriptor_size{32};
    std::int64_t descriptors_per_fetch = 64;

    template <class V>
    void visit(V&& v) {
        v(FieldInfo{"read_requests", "count", "read requests (tags) the card keeps outstanding when it reads (third_party_dma d2h, its descriptors not counted), each at most its link's MRRS: XDMA gives a host-to-card channel 2 to 64 request IDs (PG195, 'Number of Request IDs for Read channel'), 64 the default; 1..1024"}, read_requests);
        v(FieldInfo{"launch_latency", "time", "from the driver's doorbell (a register write) to the engine's first descriptor read, beyond that write's way over the links, which is not modelled; 0s..1s"}, launch_latency);
        v(FieldInfo{"descriptor_bytes", "bytes", "data one descriptor moves: a buffer the driver pinned page by page is a list of 4 KiB pieces (the default), GPU memory pinned for third-party DMA (nvidia_p2p_get_pages) 64 KiB pieces, a physically contiguous buffer one piece (set it as large as the frame); 0B = no descriptors (a GPU copy engine's range); 0B..1GiB"}, descriptor_bytes);
        v(FieldInfo{"descriptor_size", "bytes", "one descriptor in host memory (XDMA, QDMA, Intel's multi-channel DMA: 32 B); 8B..256B"}, descriptor_size);
        v(FieldInfo{"descriptors_per_fetch", "count", "descriptors one read fetches (XDMA: up to 64 adjacent ones, PG195 'Descriptor Adjacent'), at most what the card's link.mrrs holds; the engine keeps one fetch in flight and fetches the next block as soon as the block before it is in use, so a block's data hides the next fetch's round trip when it takes longer; 1..4096"}, descriptors_per_fetch);
    }
};

struct DmaParams {
    std::int64_t engines = 2;
    std::int64_t max_read_requests = 128;
    Duration launch_latency{1'000'000};
    Duration queued_launch_latency{770'000};
    Duration host_write_hold{0};
    Duration host_write_hold_beside_reads{1'000'000};
    Duration host_write_hold_fetching{370'000};
    Duration channel_turn{556'000};
    Duration gpu_memory_latency{145'000};
    Bytes semaphore_size{16};
    Bytes read_ahead{1 << 20};
    Bytes egress_queue{0};
    std::int64_t held_releases = 2;
    Duration release_wait_max{2'000'000};
    // Not a dma.* setting: a card's engine gets these from its card_dma settings (a GPU's copy
    // engine takes a range and reads no descriptors: descriptor_bytes 0).
    Bytes descriptor_bytes{0};
    Bytes descriptor_size{32};
    std::int64_t descriptors_per_fetch = 64;

    template <class V>
    void visit(V&& v) {
        v(FieldInfo{"engines", "count", "copy engines (asyncEngineCount); duplex needs 2; 1..16"}, engines);
        v(FieldInfo{"max_read_requests", "count", "outstanding read requests (tags) per engine: with the link's 4 KiB requests, its window of reads. 128 (512 KiB): a copy out of the GPU issued beside a long copy into it ends behind the reads of that window queued at the root port (its flush, DmaEngine), 8.85-10.15 us late on three fresh one-GPU H200 leases, the H100's kind of host (median 9.10 us; beside copies into the GPU of 2 and 4 MiB, results/h100-sxm/isolating/d2h-landing, tau-summary.txt), 8.7 us in the model with 128, 18.2 with 256; 1..16384"}, max_read_requests);
        v(FieldInfo{"launch_latency", "time", "doorbell to first request of a copy an idle engine starts: the work fetched from host memory, then the engine's start; 0s..1s"}, launch_latency);
        v(FieldInfo{"queued_launch_latency", "time", "a copy queued behind another on the same engine (a copy behind a copy on its stream's channel, or another stream's copy waiting for the engine), from that one's semaphore to this one's first request: its work was fetched while the other ran, so only the engine's start is left. 0.77 us: the least-squares fit of the model's chains of copies of 4 KiB-1 MiB each way, with both calibrations, to those measured on two fresh leases of each kind (results/h100-sxm/isolating/copy-chains: rms log error 0.025 at 0.765-0.77 us, every chain within 4.4 %), timed as measured, from an event behind the first copy, whose timestamp holds the chain runtime.release_spacing (0.83 us while the model's records cost nothing between copies, 0.6 us before a copy engine's read stopped taking the SMs' path to the host interface, gpu.sm_host_path); 0s..1s"}, queued_launch_latency);
        v(FieldInfo{"host_write_hold", "time", "an engine that has copied into host memory takes the next copy of that stream queued on it this long after that copy's semaphore, which the CPU and events see on time (copies of other streams taking turns on the engine do not wait: the 2xH200's staged peer pieces, on three streams, pace as measured): 0 s on the H100 host (the reference); on the 2xH200 host copies out of the GPU back to back cost 0.88-0.91 us more each than on the H100 from 4 B to 32 KiB (0.65-0.78 from 64 KiB), copies into it 0.06-0.21 us more, two leases of each (results/h100-sxm/isolating/copy-chains), while its blocking copies out of the GPU take -0.07 to +0.75 us longer than the H100's (the two main plans' medians, 4 KiB-1 MiB; its copies into the GPU -1.1 to +0.3). The model holds the engine after the semaphore, which reproduces the chains; the hardware holds the copy's completion too (a flag the stream writes behind it lands 1.5-1.8 us later after the data than on the H100: results/h200x2-nvlink/isolating/d2h-release), which the model gives another stream's wait on an event behind the copy (runtime.release_seen_lag) but not the CPU's blocking call (docs/model.md). Given to the 2xH200's calibration as 0.9 us; 0s..1ms"}, host_write_hold);
        v(FieldInfo{"host_write_hold_beside_reads", "time", "the same hold while another copy engine of the GPU copies into it (reads host memory), whichever of the two is longer: an engine that has copied into host memory takes the next copy of that stream queued on it this long after that copy's semaphore. 1.0 us, the same on both hosts, chosen with dma.release_wait_max (2 us) over 32 cells of chains of copies out of the GPU beside chains of copies into it (4 and 64 KiB beside 4 KiB-1 MiB and one long copy, both kinds of host; summed error 8.55 us a copy, 16.44 before either; 1.15 us, this hold's value alone, gives 10.97; since a copy engine's read no longer takes gpu.sm_host_path 8.81, still the best of 0.8-1.2 us with 1.5-2.5 us): results/h200x2-nvlink/isolating/duplex-burst, chainpair and chainland mid. The hold itself: a chain of 4 KiB copies out of the GPU beside a chain of 4 or 16 KiB copies into it costs 1.08-1.26 us a copy more on the one-GPU H200, the H100's kind of host, whose hold is 0 (results/h200x2-nvlink/isolating/duplex-burst, chainpair and chainflush, four fresh leases), and 0.22-0.29 us on the 2xH200 on top of its 0.9 us hold (five leases); the engine starts each copy late (chainland: the gap between one copy's last data and the next one's first grows by 0.5 us on the one-GPU host beside such a chain and not on the 2xH200). The SMs' loads do not set it the same way (chainflush: one load in flight at a time costs the one-GPU host's chain 0.30 us a copy); 0s..1ms"}, host_write_hold_beside_reads);
        v(FieldInfo{"host_write_hold_fetching", "time", "the hold of dma.host_write_hold while the copy's channel still fetches work queued behind it (gpu.fetch_window), instead of that hold: an engine that has copied into host memory takes the next copy of that stream queued on it this long after that copy's semaphore; with another engine reading host memory beside it, dma.host_write_hold_beside_reads if longer. Measured as chains of 16-256 copies out of the GPU (4 KiB, behind a gate; each chain's first copy's end to its last's): every copy but the last 57-58 costs 0.38-0.41 us more than those on the one-GPU H200, the H100's kind of host, whose hold is 0 (1.913-1.942 against 1.537-1.538 us; 16 and 64 KiB 0.32 and 0.35-0.36 more along a chain of 512), and 0.40-0.42 less on the 2xH200 (1.937-1.964 against 2.341-2.385: 0.48-0.50 us where the hold is 0.9; 16 and 64 KiB 0.03 and 0.20-0.21 less, not modelled), the chain's pace the same whatever its neighbours, buffers, stream or what ran before (results/h200x2-nvlink/isolating/duplex-burst, chaincontext: chainctx.cu, two fresh leases of each kind for each mode). 0.37 us (the one-GPU host's, the default: the model's chains of 72-256 copies then differ from one of 64 as the leases' medians do, within 0.01 us a copy, and its copies of 4-64 KiB along a chain of 512 within 0.03); the 2xH200's calibration is given 0.7, the least-squares value over its three sizes, which give 0.49 / 0.87 / 0.70 us; 0s..1ms"}, host_write_hold_fetching);
        v(FieldInfo{"channel_turn", "time", "a copy engine whose last copy was another stream's (another channel's) starts the next one this much later, on top of dma.launch_latency (idle) or dma.queued_launch_latency (queued behind that copy); a copy the front end or the command stream carries takes no engine and leaves the turn as it was, and the runtime's own pieces of a staged copy are one channel. 0.556 us: a blocking copy right after a copy of the same direction on another stream takes 0.42-0.80 us longer than after one on its own stream (median of 40 differences: out of the GPU at 4 KiB-1 MiB, into it at 64 KiB-1 MiB, two runs of 300 interleaved repetitions on a 2xH200 lease and on a one-GPU H200 of the H100's kind of host), while after a copy the other way (the other engine) or a 4 KiB one into the GPU (no engine) it takes none (80 differences, median +0.016 us; results/h200x2-nvlink/isolating/engine-turn); dmaprobe's blocking copies right after its duplex pair take 0.4-0.75 us longer than in a loop of their own (isolating/duplex-beside). Queued behind another stream's copy on a busy engine a copy ends 0.40 us (out of the GPU) and 0.57-0.64 us (into it) later than behind its own stream's (two runs on a 2xH200 lease, queuedturn.cu); 0s..1ms"}, channel_turn);
        v(FieldInfo{"gpu_memory_latency", "time", "a copy engine's access to GPU memory, which goes through the L2: its writes are done once the L2 has them (the semaphore behind a copy into the GPU waits for that), and its reads find what a kernel has just written there (dmaprobe fills its device buffers with a kernel before each repetition); bandwidth is gpu_memory's. 145 ns, the SMs' L2 hit (gpu.device_load_latency's chase): copies back to back in a chain cost 2.30-2.61 us each into the GPU and 1.47-1.58 out of it from 4 B to 4 KiB on two H100 leases, the same into the GPU on two 2xH200 (results/h100-sxm/isolating/copy-chains), where with gpu_memory.latency (600 ns, HBM) at both ends the model had 0.6 and 0.35 us more; 0s..1ms"}, gpu_memory_latency);
        v(FieldInfo{"semaphore_size", "bytes", "payload of the completion semaphore the engine writes to host memory; 1B up to link.mps"}, semaphore_size);
        v(FieldInfo{"read_ahead", "bytes", "GPU-memory data an engine reads ahead of its writes (in 64KiB requests); 64KiB..1GiB"}, read_ahead);
        v(FieldInfo{"egress_queue", "bytes", "payload of the copy engines' TLPs the GPU holds towards each of its PCIe links (not NVLink), in the order the engines gave them: a copy's read request or semaphore leaves only after the writes another engine queued before it (PCIe: neither a request nor a posted write passes a posted write), while the SMs' traffic goes its own way. 0: no queue, an engine's TLP waits only for the link (the default). On the 2xH200, 16 copies of 512 KiB or 128 of 64 KiB into the GPU back to back on one stream beside a long copy out of it cost 1.80-2.50 us more per copy than as one 8 MiB copy beside it, over what the same chains cost alone (four fresh leases, median 2.07 us; results/h100-sxm/isolating/reads-behind-writes, chain): 54 KiB, where the model's chains cost 2.04 us per copy; on the one-GPU H200, the H100's kind of machine, 0.70-1.53 us (four fresh leases, median 0.90): 31 KiB with the H100's calibration, which is given that (no H100 measured; 27 KiB until a copy engine's read stopped taking gpu.sm_host_path, then the least-squares fit to the one-GPU leases' eight values); 0B..64MiB"}, egress_queue);
        v(FieldInfo{"held_releases", "count", "releases of one engine that may wait at the root port for the reads ahead of them (a copy into host memory that ends while a copy into the GPU has reads out) while the engine takes its next copy (after dma.release_wait_max); one more and the engine waits for the oldest to land; 0: it waits for each. 2 (the default): a 4 KiB copy out of the GPU issued beside a long copy into it ends 8.4-9 us late alone (results/h100-sxm/isolating/behind-reads, d2h-landing), but in a chain of 64 such copies each takes 4.67-4.71 us on both kinds of host, one of 64 KiB copies 5.80 (results/h200x2-nvlink/isolating/duplex-burst, chainland mid): with release_wait_max the model's chains take 4.64 / 4.69 and 5.75 / 5.85 us (2xH200 / H100 calibration) with 2 or more, with 1 5.61 / 5.22 and 5.78 / 5.67, with 0 the whole wait (11.5 / 11.3 us); 0..64"}, held_releases);
        v(FieldInfo{"release_wait_max", "time", "an engine whose copy into host memory has its release held at the root port (dma.held_releases) waits for it to land, but no longer than this after the release reached host memory; then it takes its next copy while the release still waits (0 s: at once). 2 us, one value for both kinds of host: a chain of copies out of the GPU beside chains of copies into it of 64 KiB-1 MiB loses time that grows with their size, its gaps (one copy's last data to the next one's first) either its own or 4.3-4.6 us, the same beside one long copy into the GPU, whose reads ahead of a release take 9.9 us to answer, as beside copies of 128 KiB (2.5 us): three fresh leases of each kind, results/h200x2-nvlink/isolating/duplex-burst, chainland mid. With 2 us the model's chain of 4 / 64 KiB copies beside the long copy takes 4.64 / 5.75 us a copy on the 2xH200 (measured 4.71 / 5.80) and 4.69 / 5.85 with the H100's calibration on the one-GPU H200 (4.67 / 5.80); 1.75 us put the 2xH200's chain of 4 KiB copies at 3.75 us, 2.5 us at 5.14. Without it (0 s, and held_releases 1) the model's cost stepped at the engine's window of reads (512 KiB) and was 0.2-0.4 us a copy beside copies of 64-256 KiB on the 2xH200, measured 0.1-1.1; 0s..1ms"}, release_wait_max);
    }
};

// CPU-side costs of the CUDA runtime around one copy.
struct RuntimeParams {
    Duration call_overhead{2'500'000};
    Duration sync_latency{1'000'000};
    Duration kernel_launch_latency{3'360'000};
    Duration queued_kernel_latency{1'550'000};
    Duration stream_wait_latency{1'000'000};
    Duration cross_device_wait{5'650'000};
    Duration peer_call{3'480'000};
    Duration cross_device_acquire{1'630'000};
    Duration peer_staged_call{5'850'000};
    Duration peer_staged_piece_call{2'840'000};
    // The CPU's time in the stream calls that carry no work: where work is queued on the GPU, and
    // so where its channels' tries fall (poll_period), moves with them.
    Duration record_call{1'540'000};
    Duration stream_wait_call{480'000};
    Duration cross_device_wait_call{1'200'000};
    Duration set_device_call{130'000};
    // A cudaStreamWaitEvent on another GPU's event: its channel reads that GPU's semaphore from
    // the wait's call on, every poll_period, and the work behind it goes a try's length after the
    // first try that finds the event done (or after its stream reaches it, if later).
    Duration cross_device_try{4'500'000};
    Duration cross_device_read{800'000};
    // The CPU sees another GPU's event done this long after that GPU stamps it; a cross-GPU wait
    // called later queues nothing (the runtime reads the event at the call).
    Duration cross_device_seen{3'000'000};
    // cudaMemcpyPeerAsync between two GPUs with peer access (runtime.peer_call: within one GPU).
    Duration peer_gpu_call{1'910'000};
    // An event recorded on an idle stream is stamped this long after its call returns.
    Duration record_stamp{790'000};
    // A stream's timed event records are stamped at least this far apart: the next waits for the
    // one before it to have landed, and so does a copy its engine has fetched already.
    Duration release_spacing{1'270'000};
    // A copy its channel hands to the engine right behind a timed event record on its stream
    // starts no sooner than this after the record's stamp (its timestamp holds the channel).
    Duration record_follow{1'280'000};
    // An event record's release waits for the reads from host memory (and the writes over
    // NVLink) its GPU's copy engines have outstanding at its stamp: it lands once the copies
    // running then have ended, at most this much less release_spacing after its stamp
    // (0: never held).
    Duration busy_release_spacing{7'300'000};
    // Another channel of the GPU sees an event recorded right behind a copy this long after its
    // stamp (the host memory its release is written to; the stamp, and the event's time, stay).
    Duration release_seen_lag{0};
    // The CPU sees a copy done this long after its semaphore unless an engine read its data from
    // host memory (its data and every event's time stay): a blocking call, a synchronisation, a
    // pageable copy's piece.
    Duration cpu_seen_lag{0};
    // A stream operation that must wait for another engine's work of its GPU (a copy behind a
    // kernel, a cudaStreamWaitEvent on another stream) tries its semaphore when its channel
    // reaches it and, while that fails, again every poll_period: it goes at the first try after
    // the work it waits for is done. Measured on two lent H100 and an H200: a 4 B copy behind a
    // spin kernel takes 2.9-11 us after the kernel, a sawtooth in the kernel's length with
    // period 8.0-8.3 us whose phase moves with the copy's call
    // (results/h100-sxm/isolating/stream-handoffs).
    Duration poll_period{8'080'000};
    // A peer copy without peer access: the runtime stages it through its own pinned buffers.
    Bytes peer_staging_piece{512ULL << 10};
    std::int64_t peer_staging_buffers = 3;
    Duration staged_entry_hold{5'400'000};
    // A small host-to-device copy of pinned memory is carried in the runtime's command stream,
    // on a stream the CPU has waited for since its last work.
    Bytes inline_h2d_max{24ULL << 10};
    // The smallest of those are written to GPU memory by the GPU's front end, not a copy engine.
    Bytes front_end_h2d_max{1ULL << 10};
    // The front end reads such a copy's data with its work, at this rate (0: the engine reads it).
    Bandwidth command_fetch_bandwidth{16.25e9};
    // A stream operation that starts after the GPU sat idle starts later, the longer the idle
    // time, up to idle_wake: idle_wake * (1 - exp(-idle / idle_wake_time)). Measured on the lent
    // H100 (results/h100-sxm/isolating/frame-idle): pinned frames of 1-16 MiB take 0.4-2.5 us
    // more than back-to-back copies after 0.1-0.4 ms of idle, 7-11 after 1 ms, 15-19 after
    // 4 ms and 37-44 after 16 ms, whatever their size; least squares gives 51.3 us and 10 ms.
    Duration idle_wake{51'300'000};
    Duration idle_wake_time{10'000'000'000};
    // CUDA_DEVICE_MAX_CONNECTIONS: the hardware work queues each engine has for the streams.
    // Work in one queue starts in the order it was issued, so an operation waiting for its own
    // stream holds every later one of its queue (a false dependency).
    std::int64_t connections = 8;

    template <class V>
    void visit(V&& v) {
        v(FieldInfo{"call_overhead", "time", "API entry to doorbell: argument checks, work submission; 0s..1s"}, call_overhead);
        v(FieldInfo{"sync_latency", "time", "completion semaphore in host memory to the call returning (polling); 0s..1s"}, sync_latency);
        v(FieldInfo{"kernel_launch_latency", "time", "a kernel's launch, once its stream lets it run, to its first instruction. dmasim calibrate sets it to the harness's empty kernel, gated and timed with events (metadata.json kernel_calibration.overhead_us), the median over its leases: H100 3.36 us (28 leases, 3.23-3.62; the default), 2xH200 4.67 us (8 leases, 4.58-4.80; docs/calibration.md); 0s..1s"}, kernel_launch_latency);
        v(FieldInfo{"queued_kernel_latency", "time", "a kernel queued behind a kernel on its stream (records between them aside), from that one's end to its own start: its launch was fetched while the other ran, so neither the stream's handoff (stream_wait_latency) nor kernel_launch_latency applies. 1.55 us: on the one-GPU H200 (the H100's kind of host) and the 2xH200 alike, 512 empty kernels of one block on a stream take 1.46-1.62 us each (chainfront, four fresh leases of each kind) and kernels that spin D us take D + 1.45-1.64 us each, D = 2-20 us (chainturn, two of each kind; other_us over the count, which includes the first kernel's launch; results/h200x2-nvlink/isolating/duplex-burst); 0s..1s"}, queued_kernel_latency);
        v(FieldInfo{"stream_wait_latency", "time", "a channel moving past finished work to the next operation of its stream (through an event record, which it stamps as the work ends, or not); work behind a wait its channel acquired, and a wait that found its event at a poll, pay none; 0s..1s"}, stream_wait_latency);
        v(FieldInfo{"cross_device_wait", "time", "work on one GPU that waits for work on another (cudaStreamWaitEvent across GPUs, each handoff of a staged peer copy) starts this long after the other's end, when it was waiting already (else see cross_device_acquire): 5.65 us, half the round trip of two streams on the two GPUs waiting for each other's events, the median of four leases of the 2-GPU kind (5.64-5.71 us; the same GPU: 1.47 us; results/h200x2-nvlink/isolating/cross-device-wait); 0s..1s"}, cross_device_wait);
        v(FieldInfo{"cross_device_acquire", "time", "what a stream operation that depends on work of another GPU costs its channel when that work is already done as the channel reaches it: the acquire of the other GPU's semaphore, which a copy behind it waits for (a dependency still open costs cross_device_wait after the other's end instead). 1.63 us: on a 2xH200 lease, host-to-device pieces of 512 KiB that each wait for the other GPU's piece, done long before, take 13.74 us where back to back they take 12.11 (results/h200x2-nvlink/isolating/cross-device-wait, pipeline.cu); 0s..1s"}, cross_device_acquire);
        v(FieldInfo{"peer_call", "time", "the CPU's time in a cudaMemcpyPeerAsync call. dmaprobe times a peer copy with events from a start event recorded just before the call on an idle GPU, so the call's own time is inside its row where a blocking copy has runtime.call_overhead (fitted, with what the GPU does before its first request); an event interval on an idle GPU is this call plus the copy's GPU side (2.0-2.35 us within one GPU on four leases). H200: 3.48 us (median over 4 B-1 MiB within one GPU; the H100: 3.6-5.4 us on three leases); results/h100-sxm/isolating/stream-handoffs; 0s..1s"}, peer_call);
        v(FieldInfo{"peer_staged_call", "time", "the CPU's time in cudaMemcpyPeerAsync without peer access (the runtime stages the copy) for a copy of one or two pieces (runtime.peer_staging_piece); its first piece is queued when it returns. 5.85 us: the median over 64 KiB-1 MiB on four 2-GPU leases (5.3-8.3 us, the leases differ; results/h200x2-nvlink/isolating/cross-device-wait); 0s..1s"}, peer_staged_call);
        v(FieldInfo{"peer_staged_piece_call", "time", "the same call's further time for each piece past the second, which it queues as it goes, on a host in its slow call state (every call that enters the driver about 0.9 us dearer, results/h200x2-nvlink/isolating/copy-levels), the state of 24 of the 31 2xH200 main-plan leases (10 of the 13 the calibration was fitted on): 2.84 us, the median of the 64 slow calls of 16-256 MiB on six leases of two H200 (2.50-3.10 us; the 98 fast ones 1.93 us; results/h200x2-nvlink/isolating/staged-both; on the first four 2.79), copy-levels lease_states.py; the main plan's staged both-ways row at 256 MiB, which holds 510 of them, is 0.83 us a piece slower on its slow leases than on its fast ones; 0s..1s"}, peer_staged_piece_call);
        v(FieldInfo{"record_call", "time", "the CPU's time in a cudaEventRecord call; what it submits is queued as it returns. H100: 1.54 us, the median of four leases' medians (1.02-1.67 us over 24480-36720 calls each, results/h100-sxm/isolating/duplex-phase-anchor, calls.csv); 0s..1s"}, record_call);
        v(FieldInfo{"stream_wait_call", "time", "the CPU's time in a cudaStreamWaitEvent call on an event of the same GPU. H100: 0.48 us, the median of four leases' medians (0.28-0.55 us; results/h100-sxm/isolating/duplex-phase-anchor, calls.csv); 0s..1s"}, stream_wait_call);
        v(FieldInfo{"cross_device_wait_call", "time", "the CPU's time in a cudaStreamWaitEvent call on another GPU's event: 1.2 us on three 2xH200 leases (1.175-1.22 us, medians over 300 calls; results/h200x2-nvlink/isolating/peer-both and peer-phase); 0s..1s"}, cross_device_wait_call);
        v(FieldInfo{"set_device_call", "time", "the CPU's time in cudaSetDevice when a program's next call is for another GPU than its last (dmaprobe's peer copies both ways): 0.13 us on three 2xH200 leases (0.127-0.135 us; results/h200x2-nvlink/isolating/peer-both and peer-phase); 0s..1s"}, set_device_call);
        v(FieldInfo{"cross_device_try", "time", "a cudaStreamWaitEvent on another GPU's event that the CPU did not see done at the call (runtime.cross_device_seen): its channel tries the other GPU's semaphore from the call on, every runtime.poll_period, and the work behind the wait goes this long after the first try that found the event done, or after its stream reaches the wait if that comes later (a try while a copy before it ran). 4.5 us, with cross_device_read and cross_device_seen the least-squares choice over 229 cells of two 2xH200 leases of isolating/peer-phase (dmaprobe's both-ways pair with the CPU held 0-16 us before the source's copy, and without that copy), median |error| 3.35 %: the row grows one for one with the hold and drops by a poll period where a try first finds the other GPU's copy done; 0s..1s"}, cross_device_try);
        v(FieldInfo{"cross_device_read", "time", "how far into such a try its read of the other GPU's semaphore sees it: an event done by then passes that try. 0.8 us (isolating/peer-phase, with cross_device_try); 0s..cross_device_try"}, cross_device_read);
        v(FieldInfo{"cross_device_seen", "time", "the CPU sees another GPU's event done this long after that GPU stamps it: a cudaStreamWaitEvent called later queues no wait (the runtime reads the event at the call; a wait on an event done long before costs nothing, results/h200x2-nvlink/isolating/cross-device-wait), and the stop event behind it follows the copy before it a stream step later (runtime.stream_wait_latency): on two 2xH200 leases 2.9-3.3 us after that copy where the CPU was held long enough (isolating/peer-phase). 3.0 us, with cross_device_try; 0s..1s"}, cross_device_seen);
        v(FieldInfo{"peer_gpu_call", "time", "the CPU's time in cudaMemcpyPeerAsync between two GPUs with peer access: 1.91 us on three 2xH200 leases (1.908-1.910 us, medians over 300 calls; results/h200x2-nvlink/isolating/peer-both). What a later call waits for; dmaprobe's one-way row holds it less runtime.record_stamp; 0s..1s"}, peer_gpu_call);
        v(FieldInfo{"record_stamp", "time", "an event recorded on an idle stream is stamped this long after its call returns, so an interval from it (dmaprobe's peer rows) holds that much less of the next call. 0.79 us: the 2xH200's one-way peer rows hold 1.12 us of the call beside the copy's GPU work (its fit before, 3.48 us of call less a 2.36 us work fetch: +1.3/-2.3/+1.3 % at 1/16/256 MiB) and the call takes 1.91 (runtime.peer_gpu_call); results/h200x2-nvlink/isolating/event-stamp: an ungated peer copy's interval follows its call's CPU time only a little; 0s..1s"}, record_stamp);
        v(FieldInfo{"release_spacing", "time", "a stream's timed event records (semaphore releases with a timestamp; one made with cudaEventDisableTiming neither waits nor holds, results/h100-sxm/isolating/record-cost) are stamped at least this far apart: a record waits for the one before it on its stream to have landed, so the stop event behind a satisfied wait follows the copy's end event by this much. H100's kind of host: 1.27 us, the median of four fresh one-GPU H200 leases' medians (1.25-1.28 us, an event recorded right behind another on a stream with nothing between, 1500 repetitions each; results/h100-sxm/isolating/duplex-overlap, alone.csv), the stop event behind the copy into the GPU 1.28-1.34 us (p10) where the other copy ended first (reps-order.txt), the flag a stream writes behind a copy 1.21-1.69 us after its data (results/h200x2-nvlink/isolating/d2h-release). A copy its engine has fetched already behind the copy before a record (riding) waits as long after that copy's end, on top of dma.queued_launch_latency: chains of 24 copies of 4-128 KiB either way with a timed record after every copy take 1.27-1.39 us a record longer on two fresh one-GPU H200 leases and 2.92-3.01 us on two fresh 2xH200 leases (records there 2.85-3.04 us apart: results/h200x2-nvlink/isolating/release-spacing, which the 2xH200's calibration is given as 2.9 us), with an event made with cudaEventDisableTiming -0.03...+0.04 us (results/h100-sxm/isolating/record-cost). 0s = none; 0s..1s"}, release_spacing);
        v(FieldInfo{"record_follow", "time", "a copy right behind a timed event record on its stream, handed by its channel to an idle engine, starts no sooner than this after the record's stamp, where a copy behind a satisfied wait or another copy starts at once: the record's timestamp holds its channel (a copy its engine fetched already behind the copy before the record waits release_spacing instead). Measured as a record then a 4 KiB copy out of the GPU then a record, all behind a gate kernel so that no call comes between them, against the first record on another stream (results/h200x2-nvlink/isolating/release-spacing, g-d2h-r less g-d2h-xr at p10): H100's kind of host (one-GPU H200) 1.28 us, the same as its release_spacing; 2xH200 2.3-2.4 us on both GPUs of a lease (its records 2.9 us apart). An empty kernel behind a record waits 1.2-1.4 us on both hosts, which kernels' handoff keeps (not this). A copy issued on an idle stream after its record's call has returned does not wait (the calls hide most of it: 0.7 us on the 2xH200, 0.06 on the H100's kind, without the gate). 0s = none; 0s..1s"}, record_follow);
        v(FieldInfo{"busy_release_spacing", "time", "an event record's release (its semaphore write) waits for the reads from host memory, and the writes into another GPU over NVLink, that its GPU's copy engines have outstanding at its stamp: it lands once the copies running then have ended, at most this much less release_spacing after its stamp, and the next record on its stream and every wait on it (that GPU's or the other's) go from there. Measured while a long copy into the GPU runs on another stream: records back to back 7.26-7.32 us apart on both hosts (idle 2.92 on the 2xH200, 1.27-1.31 on the H100's kind), a record then another stream's wait and record 7.63-7.68 us (idle 3.29 and 1.69), also behind a 4 KiB copy out of the GPU on its own stream (10.70 against 5.12); 6.89-6.97 beside a peer copy out over NVLink; a copy out of the GPU, the other GPU writing in or a kernel 0-1 us (results/h200x2-nvlink/isolating/handoff-behind-traffic). 0s = never held; 0s..1s"}, busy_release_spacing);
        v(FieldInfo{"release_seen_lag", "time", "an event recorded right behind a copy is seen done by a wait on another channel of its GPU (a cudaStreamWaitEvent on another stream) this long after its stamp, which the event's time and its own stream keep: a wait tried before then tries again a poll_period later. 0 s on the H100 host (the reference; the one-GPU H200's, its kind, sees the other copy's event 0-0.5 us late in dmaprobe's duplex pair, results/h100-sxm/isolating/duplex-overlap, early-try.txt); on the 2xH200 host a flag a stream writes behind a copy out of the GPU lands 1.5-1.8 us later after the data than on the H100 (two leases of each, 8 B-1 MiB, results/h200x2-nvlink/isolating/d2h-release), an event behind a copy either way completes 1.4-1.6 us later after its blocking twin (results/h200x2-nvlink/isolating/h2d-landing), and the pair's stop on a 2xH200's H200 sees the other copy's event 1.0-1.5 us late (early-try.txt); given to the 2xH200's calibration as 1.6 us, the flag's; 0s..1ms"}, release_seen_lag);
        v(FieldInfo{"cpu_seen_lag", "time", "the CPU learns that a copy is done (a blocking cudaMemcpy returning, a synchronisation, a pageable copy waiting for its piece) this long after the copy's semaphore, which the GPU's clock and its events keep, unless an engine read the copy's data from host memory: copies out of the GPU and small copies into it that the front end writes or the command stream carries (runtime.inline_h2d_max) lag, a copy into the GPU an engine reads does not. 0 s on the H100 host (the reference). On the 2xH200 host a blocking copy out of the GPU returns 0.91-1.07 us later after its last word is in host memory than on the H100 and copies into it of 8 B and 4 KiB about 1.5 us later after their data (two leases of each, results/h200x2-nvlink/isolating/h2d-landing); on four fresh 2xH200 leases against six of the H100's kind, in dmaprobe on the same day, a blocking copy out of the GPU takes 0.8-1.6 us longer (median 0.95), one into it of 4 B-16 KiB 1.1-1.7 and one an engine reads 0.25-0.95, and two directions' difference at 64 KiB moves by 0.6-1.2 us between the hosts (results/h200x2-nvlink/isolating/copy-release). Given to the 2xH200's calibration as 0.9 us; 0s..1ms"}, cpu_seen_lag);
        v(FieldInfo{"poll_period", "time", "a stream operation waiting for another engine's work on its GPU (a copy behind a kernel, an event of another stream) retries its semaphore this often from its first try, and goes at the first try after that work is done; 8.08 us, the median of six estimates on two H100 and an H200 (a 4 B copy behind a spin kernel: a sawtooth in the kernel's length of period 8.12, 8.28 and 7.96 us, its phase moving with the copy's call; a copy between two cross-stream waits: two levels 7.94, 8.03 and 8.19 us apart; results/h100-sxm/isolating/stream-handoffs); 0s = at once; 0s..1ms"}, poll_period);
        v(FieldInfo{"peer_staging_piece", "bytes", "a peer copy without peer access moves through host memory in pieces this large, each a copy out of one GPU and one into the other; 2xH200: 512 KiB (the time steps from 33 to 58 us between 512 KiB and 1 MiB, then grows 13.8 us per 512 KiB; results/h200x2-nvlink/isolating/peer-sizes); 4KiB..1GiB"}, peer_staging_piece);
        v(FieldInfo{"staged_entry_hold", "time", "while a staged peer copy's first piece enters its destination GPU (from that piece leaving the source to its entering the destination), a copy of any other stream or staged copy starts this much later on that GPU: 5.4 us, the 2xH200's probe on an idle stream of that GPU issued 18-30 us after a staged 1 MiB copy, its start 5.44 and 5.33 us late (medians over the delays on two fresh leases; results/h200x2-nvlink/isolating/staged-loss); the second of two staged copies issued together loses it; 0s..1s"}, staged_entry_hold);
        v(FieldInfo{"peer_staging_buffers", "count", "host buffers those pieces rotate through: a piece leaves the source once the piece this many before it has entered the destination; 2xH200: 3 (two would make a large staged copy 40 % slower than measured, four 9 % faster, with the same cross_device_wait); 1..64"}, peer_staging_buffers);
        v(FieldInfo{"inline_h2d_max", "bytes", "host-to-device copies of pinned memory up to this size, on a stream with nothing queued since the CPU last waited for it (a blocking call, a synchronisation), are copied by the call itself into the runtime's command stream, at the CPU's copy rate (cpu.memcpy_bandwidth: the source is in DRAM); larger ones, and any on a stream with work queued since, are read by a copy engine from where they are (three H100 leases and an H200: after an event queued on the stream the call's time stays flat from 4 B to 64 KiB, results/h100-sxm/isolating/command-fetch). H100: 24 KiB (the call takes 3.3-6.1 us at 24 KiB and 1.4-2.3 us at 28 KiB, on each of three leases; a source the CPU has just written makes copies up to 24 KiB faster and from 28 KiB slower; an H200 has the same threshold; results/h100-sxm/isolating/small-copies); 0B = never; 0B..1MiB"}, inline_h2d_max);
        v(FieldInfo{"front_end_h2d_max", "bytes", "of the copies the call puts into the command stream (runtime.inline_h2d_max), those up to this size are written to GPU memory by the GPU's front end as it reads the stream (runtime.command_fetch_bandwidth): no copy engine starts or reads host memory, and behind a kernel nothing is polled (runtime.poll_period); the front end then releases the copy's semaphore. H100 and H200: behind a spin kernel, copies of 4 B and 1 KiB take 3.5-3.9 us, those of 4 KiB 9.7-11.3 us (a polled copy engine); a blocking 4 B copy to the device takes 0.5 us less than one from it (results/h100-sxm/isolating/stream-handoffs); 0B = never; 0B..1MiB"}, front_end_h2d_max);
        v(FieldInfo{"command_fetch_bandwidth", "bytes/s", "the GPU's front end reads the data of a copy carried in the command stream (runtime.inline_h2d_max, on a stream the CPU had waited for) with the copy's work, at this rate: the copy engine then writes it into GPU memory and reads nothing from host memory. 16.25 GB/s: blocking copies into the GPU from 2 to 24 KiB grow by a further kB at 16.1, 16.4 and 22.4 GB/s beyond the call's own time on three H100 leases and 15.4 on an H200 (least squares per lease; the median of the four; results/h100-sxm/isolating/small-copies); timed with events on three further H100 leases, 17.1, 15.7 and 17.9 GB/s, a 2-12 KiB copy's GPU side 0.82-1.09 us shorter than the same copy read by an engine and no longer than one out of the GPU (results/h100-sxm/isolating/command-fetch; a 2xH200's H200: 28.9 GB/s). 0B/s: the engine reads it from the command stream as from any source; else at most 100TB/s"}, command_fetch_bandwidth);
        v(FieldInfo{"idle_wake", "time", "most a stream operation starts late after the GPU sat idle (H100: 51.3 us, results/h100-sxm/isolating/frame-idle); 0s = never; 0s..1s"}, idle_wake);
        v(FieldInfo{"idle_wake_time", "time", "idle time over which that delay builds up: after idle t it is idle_wake * (1 - exp(-t / idle_wake_time)) (H100: 10 ms); 1ns..1000s"}, idle_wake_time);
        v(FieldInfo{"connections", "count", "hardware work queues per engine that the streams share (CUDA_DEVICE_MAX_CONNECTIONS; CUDA's default 8): each copy engine and the compute engine start the work of one queue in the order it was issued, so work waiting for its own stream holds up the work of other streams behind it in that queue. A stream's work goes to the queue where the stream still has unfinished work of that engine, else to a queue with none, else to the one with the least. An H200, CUDA 13: k streams each with a copy out of the GPU waiting behind a 500 us kernel hold up a further stream's copy out of the GPU (511-524 us against 5-13) exactly when k >= connections, for 1, 2, 3, 4 and 8; one stream's several waiting copies never do with 2 or more; a waiting copy holds up no copy into the GPU and no kernel, nor a waiting kernel a copy (results/h100-sxm/isolating/work-queues); 1..32"}, connections);
    }
};

// The CPU: copies it makes itself (pageable staging), and the kernel work of pinning memory.
struct CpuParams {
    Bandwidth memcpy_bandwidth{10e9};
    Bandwidth memcpy_bandwidth_cached{30e9};
    Bandwidth memcpy_bandwidth_cold{8.42e9};
    Bandwidth zero_page_bandwidth{17.24e9};
    Bandwidth copy_out_bandwidth{0.0};
    Duration cache_cooling_time{3'500'000'000};
    Bytes llc_size{64ULL << 20};
    Bytes core_cache{1'499'464};  // 1.43 MiB
    Bytes page_size{4096};
    Duration register_fixed{20'000'000};
    Duration register_per_page{250'000};
    Duration unregister_fixed{10'000'000};
    Duration unregister_per_page{100'000};
    Duration register_first_copy{3'000'000};
    Duration alloc_pinned_pool_fixed{3'000'000};
    Duration alloc_pinned_fixed{100'000'000};
    Duration alloc_pinned_per_page{1'700'000};
    Duration alloc_pinned_cold_per_page{270'000};
    Duration first_touch_read{1'140'000};
    Duration first_touch_write{2'410'000};
    Bytes alloc_pinned_cache{4ULL << 20};
    Bytes alloc_pinned_pool{2 << 20};
    Bandwidth wc_bandwidth{10e9};
    std::int64_t wc_buffers = 10;
    Bytes mmio_read_bytes{64};
    std::int64_t mmio_reads_in_flight = 1;
    Bytes cache_line{64};

    // The thread's rate out of a staging buffer: copy_out_bandwidth, or (0) memcpy_bandwidth_cached's.
    double copy_out_bytes_per_s() const {
        return copy_out_bandwidth.bytes_per_s > 0.0 ? copy_out_bandwidth.bytes_per_s : memcpy_bandwidth_cached.bytes_per_s;
    }

    template <class V>
    void visit(V&& v) {
        v(FieldInfo{"memcpy_bandwidth", "bytes/s", "one thread's memcpy when the data comes from DRAM: a pageable host-to-device copy whose source the thread's cache does not keep (llc_size). H100 hosts: 7.98 GB/s, the median over five leases of pageable copies of 64-128 MiB, where the same thread copying alone with its source flushed gives 8.0-8.5 (2xH200 host: 8.48, one lease; results/h100-sxm/isolating/pageable-size, pagecache-summary.csv); above 0, at most 100TB/s"}, memcpy_bandwidth);
        v(FieldInfo{"memcpy_bandwidth_cached", "bytes/s", "one thread's memcpy when the source fits in the last-level cache; above 0, at most 100TB/s"}, memcpy_bandwidth_cached);
        v(FieldInfo{"copy_out_bandwidth", "bytes/s", "one thread's copy out of a staging buffer into the user's buffer (a pageable copy out of the GPU), where memcpy_bandwidth_cached is its copy of a cached source into a staging buffer (a pageable copy into the GPU): on seven fresh one-GPU H200 leases, the H100's kind of host, the copy into the GPU grows from 256 KiB to 1 MiB at 0.67-0.89 of the rate at which the same machine's thread copies out of a staging buffer (watched: 13.4-19.6 GB/s at 128-512 KiB), median 0.80, and not by a cost per piece of 64 KiB (one more piece costs 0.3-0.7 us with its bytes; results/h100-sxm/isolating/pageable-out, tail). Free in the calibrations; 0B/s = memcpy_bandwidth_cached; else at most 100TB/s"}, copy_out_bandwidth);
        v(FieldInfo{"memcpy_bandwidth_cold", "bytes/s", "one thread's memcpy of data that has left the CPU's caches while the CPU did not copy (its source, the runtime's staging buffers, their page translations; cache_cooling_time): 8.42 GB/s, the median over two H100 leases of pageable frames of 1 and 4 MiB every 150 us to 16 ms (five 2xH200 leases: 5.60), where the same fit's warm rate is 13.6-16.6 (results/h100-sxm/isolating/pageable-frames, scripts/cooling_fit.py); free in the calibration, which fits it after the others to the median frame of the pageable radar stream; above 0, at most 100TB/s"}, memcpy_bandwidth_cold);
        v(FieldInfo{"zero_page_bandwidth", "bytes/s", "one thread's staging copy of a pageable source whose pages all map the kernel's zero page (a read of a never-touched private page maps it: first_touch_read): one physical page, which the core's cache holds, so it is read at this rate whatever the size, where an old source past llc_size comes from DRAM (memcpy_bandwidth). 17.24 GB/s: on four fresh one-GPU H200 leases, the H100's kind of host, a pageable copy into the GPU from a mapping whose every page the CPU had read grows at 15.29-18.78 GB/s from 4 to 64 MiB (the median; old sources at 12.2-12.5 from 4 to 16 MiB on three of them, 6.5 on the fourth, and 5.3-8.0 GB/s whole at 64 and 256 MiB); a memcpy of such a source by the CPU alone runs at 12.6-25.7 GB/s from 4 MiB up (twice 7-9 at 64 MiB), an old one at 4.7-12.3 (results/h100-sxm/isolating/zero-page). Copies carried in the command stream (pageable.inline_max) do not take it: at 64 KiB the zero page and an old source cost the same (2.4-2.6 and 2.3-2.5 GB/s). never below memcpy_bandwidth_cached; 0B/s = a never-touched source is copied as an old one; else at most 100TB/s"}, zero_page_bandwidth);
        v(FieldInfo{"cache_cooling_time", "time", "how long the CPU's caches hold what its copies touched once it stops copying: a copy by the CPU that starts t after its previous one ended finds a share 1 - exp(-t / cache_cooling_time) of its data cold, copied at memcpy_bandwidth_cold. H100 3.5 ms, the median over the same two leases (2xH200 7.7 ms, five leases, which its calibration is given); 0s = the caches never cool; 0s..1000s"}, cache_cooling_time);
        v(FieldInfo{"llc_size", "bytes", "the cache a copying thread keeps its source in from one copy to the next (on a VM, its share of the last-level cache, not the size the CPU reports): a pageable host-to-device copy of more than this reads its source from DRAM (memcpy_bandwidth), one of this or less from the cache (memcpy_bandwidth_cached). H100 hosts: 40 MiB, the median over five leases of the largest copy that still ran at the cached rate (32-48 MiB; the VMs report 300 MiB of L3), the same thread copying with no GPU stepping down there too; 2xH200 host: 40 MiB, one lease (results/h100-sxm/isolating/pageable-size); 0B..1TiB"}, llc_size);
        v(FieldInfo{"core_cache", "bytes", "what the copying thread's core keeps in its own cache of the lines its last copy touched (read and written alike), which a device's writes then find there (root_complex.held_write_bandwidth): a pageable copy out of the GPU lands each piece on a staging buffer the thread copied out of last, of which the core holds min(piece, core_cache / 2) (the copy-out touched as many destination lines). H100's kind of host: 1.43 MiB, where a pinned copy out of the GPU into a buffer the CPU has just read stops growing slower (at 1.5-64 MiB it is 28.8-41.0 us slower than into a buffer the engine wrote last, median 35.1, at 24.5 us a MiB up to 1 MiB; two fresh one-GPU H200 leases, whose cores have 2 MiB of L2; results/h100-sxm/isolating/pageable-out); 0B..1TiB"}, core_cache);
        v(FieldInfo{"page_size", "bytes", "host page size (pinning works page by page): a power of two, 4KiB..1GiB"}, page_size);
        v(FieldInfo{"register_fixed", "time", "cudaHostRegister: cost independent of size; 0s..1s"}, register_fixed);
        v(FieldInfo{"register_per_page", "time", "cudaHostRegister: pin and map one page; 0s..1ms"}, register_per_page);
        v(FieldInfo{"unregister_fixed", "time", "cudaHostUnregister: cost independent of size; 0s..1s"}, unregister_fixed);
        v(FieldInfo{"unregister_per_page", "time", "cudaHostUnregister: unmap and unpin one page; 0s..1ms"}, unregister_per_page);
        v(FieldInfo{"register_first_copy", "time", "what the first cudaMemcpy from or to memory just registered costs beyond a pinned one of the same size, on the CPU before the copy starts (the driver resolving the new registration): on the sixteen H100 leases the registered copy minus the pinned one is 2.3-3.6 us (median per lease) at 64 KiB and 1 MiB both ways, and not the per-page cost of a mapping (8.8 us at 16 MiB, within the noise at 256 MiB); 3 us (results/h100-sxm/spread.csv); 0s..1s"}, register_first_copy);
        v(FieldInfo{"alloc_pinned_pool_fixed", "time", "cudaMallocHost served from the driver's pinned pool (any size below alloc_pinned_pool); 0s..1s"}, alloc_pinned_pool_fixed);
        v(FieldInfo{"alloc_pinned_fixed", "time", "cudaMallocHost from the OS (not pooled): cost independent of size; 0s..1s"}, alloc_pinned_fixed);
        v(FieldInfo{"alloc_pinned_per_page", "time", "cudaMallocHost from the OS: allocate, zero, pin and map one page whose lines the CPU's cache holds (an allocation the size of the one before reuses the pages that one freed; alloc_pinned_cache). On five fresh one-GPU H200 leases, the H100's kind of host, cudaMallocHost of 2 MiB-1 GiB costs 79-109 % of what the first touch of as many fresh 4 KiB pages (the kernel's fault and zeroing) and cudaHostRegister of them cost together, 417-490 us a MiB at 2-4 MiB (results/h100-sxm/isolating/alloc-pages); 0s..1ms"}, alloc_pinned_per_page);
        v(FieldInfo{"alloc_pinned_cold_per_page", "time", "what a page of a cudaMallocHost from the OS costs beyond alloc_pinned_per_page when its lines are not in the CPU's cache, so that zeroing it goes to DRAM: a repeated allocation of E bytes finds the share of its pages that alloc_pinned_cache keeps (a cache that replaces lines at random: h = exp(-(E / alloc_pinned_cache)(1 - h)) above it, all of them up to it) and pays this for the rest. 0.27 us, the median over five fresh one-GPU H200 leases, the H100's kind of host, of what each lease's allocations cost more a page at 24 MiB-1 GiB than at 2-4 MiB (-0.22, +0.22, +0.27, +0.32, +0.33 us; the first touch of fresh pages +0.09...+0.56, the CPU's memset of a region it rewrites +0.18...+0.27; results/h100-sxm/isolating/alloc-pages); free in the calibrations; 0s..1ms"}, alloc_pinned_cold_per_page);
        v(FieldInfo{"first_touch_read", "time", "what the runtime's staging copy of a pageable source pays for each page (page_size) of it that nothing has touched since it was mapped: a read fault, which maps the kernel's zero page (the copy then reads that page: zero_page_bandwidth). 1.14 us, the median over four fresh one-GPU H200 leases, the H100's kind of host, and 64 KiB-256 MiB of a pageable copy into the GPU from a new mapping less the same copy from one whose every page the CPU had read first, which maps the zero page without the copy faulting (1.04-1.32 us a page at 64 KiB-64 MiB, 0.83-1.11 at 256 MiB; results/h100-sxm/isolating/zero-page); 0s..1ms"}, first_touch_read);
        v(FieldInfo{"first_touch_write", "time", "what the runtime's copy out of a staging buffer into a pageable destination pays for each page (page_size) of it that nothing has touched since it was mapped: a write fault, which allocates and zeroes the page. 2.41 us, the median over seven fresh one-GPU H200 leases, the H100's kind of host, and their sizes (four leases at 64 KiB-256 MiB, results/h100-sxm/isolating/zero-page; three at 64 KiB, 4 and 64 MiB, isolating/page-faults) of a pageable copy out of the GPU into a new mapping less the same copy into an old one, which is what the model adds it to (2.05-3.24 us a page, by lease more than by size; into pages the CPU wrote first less into old ones: 0.0-0.7 us a page, the most at 64-256 KiB); a store a page in a loop costs 0.97-2.25 on six leases and a memcpy into new pages 1.5-1.9 more than into old ones, medians by size (isolating/page-faults); 0s..1ms"}, first_touch_write);
        v(FieldInfo{"alloc_pinned_cache", "bytes", "the cache a repeated cudaMallocHost of one size finds the pages it reuses in (alloc_pinned_cold_per_page): 4 MiB, the median over five fresh one-GPU H200 leases of the cache that fits each lease's allocations of 2 MiB-1 GiB best (3, 3, 4, 10 and 24 MiB; results/h100-sxm/isolating/alloc-pages); 0B: no page is found in the cache; 0B..1TiB"}, alloc_pinned_cache);
        v(FieldInfo{"alloc_pinned_pool", "bytes", "cudaMallocHost is served from the driver's pinned pool when its size, rounded up to whole pages, is below this (H100: 2 MiB - 4 KiB pooled, 2 MiB - 1 B not); 0B..1TiB"}, alloc_pinned_pool);
        v(FieldInfo{"wc_bandwidth", "bytes/s", "one core's stores into a write-combining mapping (BAR of GPU memory); above 0, at most 100TB/s"}, wc_bandwidth);
        v(FieldInfo{"wc_buffers", "count", "write-combining buffers: 64-byte writes in flight before the core stalls; 1..1024"}, wc_buffers);
        v(FieldInfo{"mmio_read_bytes", "bytes", "bytes one uncached load from a mapping reads (64B: streaming loads); 1B..64B"}, mmio_read_bytes);
        v(FieldInfo{"mmio_reads_in_flight", "count", "uncached loads a core keeps outstanding (they serialise); 1..64"}, mmio_reads_in_flight);
        v(FieldInfo{"cache_line", "bytes", "host cache line: partial writes to one line are merged by the host one after another (root_complex.shared_line_write); a power of two, 32B..256B"}, cache_line);
    }
};

// How the CUDA runtime stages a pageable copy through pinned bounce buffers.
struct PageableParams {
    Bytes bounce_size{1ULL << 20};
    Bytes h2d_piece{64ULL << 10};
    Bytes inline_max{64ULL << 10};
    std::int64_t bounce_buffers = 2;
    Bytes copy_out_alignment{64};
    Bandwidth unaligned_pass_bandwidth{41.73e9};

    // A piece of a staged copy out of the GPU, or into it.
    std::uint64_t piece(bool into_gpu) const { return into_gpu ? h2d_piece.value : bounce_size.value; }

    template <class V>
    void visit(V&& v) {
        v(FieldInfo{"bounce_size", "bytes", "size of one pinned staging buffer of a pageable copy: out of the GPU the engine fills one while the CPU copies the one before out, so up to one buffer the two add. 1 MiB: out of the GPU the copy grows at 10.8 GB/s up to 1 MiB, the CPU's copy and the engine's one after the other (1/10.8 = 1/13 + 1/53 per GB), and at 13.5 from 1 to 2 MiB, the next buffer's fill hidden (three fresh one-GPU H200 leases, results/h100-sxm/isolating/pageable-pieces); 4KiB..1GiB"}, bounce_size);
        v(FieldInfo{"h2d_piece", "bytes", "a pageable copy into the GPU is staged in pieces this large, the CPU copying one into a pinned buffer while an engine moves the one before: 96 KiB-1 MiB take a blocking copy's fixed time plus the CPU's copy alone (7.2 us + N / 13.5 GB/s and 8.2 + N / 12.3 on two fresh one-GPU H200 leases, the H100's kind of host), where the CPU's copy and the engine's one after the other would add 27 us at 1 MiB (results/h100-sxm/isolating/pageable-pieces); 64 KiB, a piece whose move hides in that fixed time; 4KiB..1GiB"}, h2d_piece);
        v(FieldInfo{"inline_max", "bytes", "a pageable copy into the GPU up to this size is copied by the call into the runtime's command stream, as a small pinned one is (runtime.inline_h2d_max: at cpu.memcpy_bandwidth, the front end reading it at runtime.command_fetch_bandwidth), not staged: a 64 KiB copy takes 22.65 us and a 96 KiB one 14.65 on every one of three fresh one-GPU H200 leases, the H100's kind of host, and from 4 to 64 KiB the copy grows by 3.9 GB/s (results/h100-sxm/isolating/pageable-pieces); 0B: never; 0B..1MiB"}, inline_max);
        v(FieldInfo{"bounce_buffers", "count", "staging buffers in rotation: CPU copy into one while DMA drains another; 1..64"}, bounce_buffers);
        v(FieldInfo{"copy_out_alignment", "bytes", "a pageable copy out of the GPU into a destination whose address is not a multiple of this takes the runtime's slower way out of its staging buffers (unaligned_pass_bandwidth). 64 B, a cache line: timed in rounds that rotate the offsets, 16 MiB 1, 2, 4, 8, 16 and 32 bytes past a page take 1793-1856 and 1699-1797 us where on a page and 64 bytes past it 1329 and 1432, 1359 and 1375 (two fresh one-GPU H200s, the H100's kind of host; results/h100-sxm/isolating/unaligned-buffers), and the main plans' offset-1B rows are a quarter slower where offset-64B are not. A buffer from malloc() starts 16 bytes past a page (1616 below 1 MiB): off a line; 1B..4KiB, a power of two"}, copy_out_alignment);
        v(FieldInfo{"unaligned_pass_bandwidth", "bytes/s", "what that slower way costs the CPU beyond the copy out of a staging buffer (cpu.copy_out_bandwidth), as a pass over the data at this rate: a pageable copy out of the GPU of 16 MiB one byte past a page takes 21.4, 23.3, 27.0 and 31.3 us a MiB more than on a page on four fresh one-GPU H200 leases, the H100's kind of host, timed in rounds (results/h100-sxm/isolating/offset-copy-out, unaligned-buffers), where a plain memcpy from pinned memory into the same destination costs 2 % more: 41.73 GB/s, their median, 25.1 us a MiB (at 1 MiB they pay 24-42 us a MiB). Copies one after another into the same unaligned destination pay it on some cases and not on others (unaligned-buffers: 16 MiB 1, 16 and 32 bytes off as fast as on a page, 2-8 bytes off a quarter slower); 0B/s = no such cost; else at most 100TB/s"}, unaligned_pass_bandwidth);
    }
};

// The GPU's streaming multiprocessors as sources of mapped (zero-copy) host-memory traffic.
struct GpuParams {
    std::int64_t sms = 132;
    std::int64_t max_warps_per_sm = 64;
    std::int64_t max_blocks_per_sm = 32;
    std::int64_t loads_in_flight = 1;
    std::int64_t sysmem_max_outstanding_reads = 1225;
    std::int64_t sysmem_max_outstanding_lines = 866;
    // A zero-copy kernel's loop, warp by warp (results/h100-sxm/isolating/zero-copy-warp-loop).
    Duration sm_loop{52'000};
    Duration host_load_line_gap{35'000};
    Duration sm_host_path{207'000};
    Duration sysmem_kernel_end{285'000};
    Duration device_load_latency{145'000};
    Duration device_load_miss_latency{339'000};
    Bytes l2_size{50ULL << 20};
    Duration device_load_line_gap{9'000};
    Bandwidth sm_store_bandwidth{44.9e9};
    bool sysmem_in_order = true;
    bool copies_in_order = true;
    Bytes sysmem_store_buffer{768 << 10};
    Duration front_end_turn{350'000};
    Duration front_end_turn_max{870'000};
    std::int64_t fetch_window = 57;
    Bytes bar_aperture{0};
    Duration bar_remap{20'000'000};
    bool bar_windows = true;
    // Translation of the host addresses the SMs load from: two caches of translations, each
    // covering this much host memory, and what a miss in each costs a load (results/h100-sxm/
    // isolating/translation-reach: a dependent chase, two H100 leases).
    Bytes host_translation_reach{192ULL << 20};
    Duration host_translation_miss{173'000};
    Bytes host_translation_reach_far{768ULL << 20};
    Duration host_translation_miss_far{489'000};

    template <class V>
    void visit(V&& v) {
        v(FieldInfo{"sms", "count", "streaming multiprocessors (H100 SXM: 132); 1..1024"}, sms);
        v(FieldInfo{"max_warps_per_sm", "count", "resident warps per SM; 1..256"}, max_warps_per_sm);
        v(FieldInfo{"max_blocks_per_sm", "count", "resident thread blocks per SM; 1..256"}, max_blocks_per_sm);
        v(FieldInfo{"loads_in_flight", "count", "independent loads one warp keeps outstanding (1 for a simple copy loop); 1..64"}, loads_in_flight);
        v(FieldInfo{"sysmem_max_outstanding_reads", "count", "read requests to host memory the GPU keeps in flight at most; H100 and H200: 1225 (4-, 8- and 16-byte loads of two sectors a line, two reads, run at 908-912 M reads/s from 8 to 1056 blocks and 4 to 64 MiB on three fresh one-GPU H200 leases, with the round trip that rate gives, root_complex.read_latency_per_gbps; results/h100-sxm/isolating/zero-copy-grid-shape; it was 1112, a guess, below the credits that held them); 1..16384"}, sysmem_max_outstanding_reads);
        v(FieldInfo{"sysmem_max_outstanding_lines", "count", "128-byte lines of host memory with reads in flight at most, each holding the requests one warp access makes to it; H100: 866 (one 4-byte load a line: 600-630 M lines/s from 66 to 1056 blocks, 1-16 MiB, with the round trip those reads' rate gives, root_complex.read_latency_per_gbps; 810 with an unloaded one); 1..16384"}, sysmem_max_outstanding_lines);
        v(FieldInfo{"sm_loop", "time", "a zero-copy warp's loop around its load: from the load's last line arriving to the next load's first request (the store it feeds, index arithmetic, branch); H100: 52 ns (one block of 4-byte stores, 197.7 ns a round, less device_load_latency); 0s..1us"}, sm_loop);
        v(FieldInfo{"host_load_line_gap", "time", "one warp's load of mapped host memory leaves its SM 128 bytes of requests at a time, this far apart (a request of one 32-byte sector a quarter of it after the one before); H100: 35 ns (one block, 1, 2 and 4 whole lines a warp: 1.232, 1.286, 1.337 us a round); one-GPU H200: 32 one-sector requests an access take 1.60 us a round from one block where four whole lines take 1.51 (results/h100-sxm/isolating/zero-copy-grid-shape); 0s..1us"}, host_load_line_gap);
        v(FieldInfo{"sm_host_path", "time", "the SMs' own share of a load's round trip to host memory: from the warp to the GPU's host interface and from there back to the warp (L1, crossbar, the L2 the request passes), which a copy engine's read, issued at the host interface, does not take; each warp waits it on top of the link, root complex and DRAM round trip it shares with the engines' reads. 230 ns: on three fresh one-GPU H200 leases, the H100's kind of host with the same GH100 chip, the chase takes 1.12-1.23 us a hop and a chain of 4 KiB copies into the GPU 0.91-1.01 us more a copy than one out of it (the engine's read round trip, less 0.015 us the model's chains differ by beside it), 0.22-0.30 us between the two on each lease, median 0.23 (two 2xH200 leases 0.19 and 0.20 with that host's dma.host_write_hold: results/h100-sxm/isolating/sm-host-path, smpath.cu). Those used the chase of 4 KiB, which on a lease sits either at the chase of 2 MiB or 0.11-0.19 us above it (10 of the H100's 28 main-plan leases, 8 of the 2xH200's 13; the 2 and 64 MiB chases agree within 0.01 us): 207 ns puts the H100 calibration's chase at the 2 MiB chase's 1.197 us (the 28 leases' median), the round trip of loads that stream through host memory (results/h100-sxm/isolating/load-rounds). The 4 KiB chase's two levels are which page its chain lies on, near or far, 1.12-1.14 or 1.25-1.27 us a hop on one lease, the longer chases their mix, plus dmaprobe's walk of the chain on the CPU before each run, 0.02-0.15 us a load at 4-64 KiB (results/h100-sxm/isolating/chase-cache). Held out, five fresh one-GPU H200 leases of load-rounds' own plan put the loads of one warp to 16 blocks within +1.1..+2.7 % (+2.9..+4.4 % at 230 ns); the SMs' L2 hit, for scale, 0.14-0.15 us; 0s..1ms"}, sm_host_path);
        v(FieldInfo{"sysmem_kernel_end", "time", "a zero-copy kernel's end beyond an empty kernel's: from its last store leaving for the link (or its last load's data reaching GPU memory) to the point its stream's next work and event see it done. The GPU does not wait for its stores to land in host memory (posted writes; the release behind them is its own). 285 ns: one warp's single access of 512 bytes (loads, stores, both) against the same machine's empty kernel, three fresh one-GPU H200 leases, the H100's kind of host (0.06-0.38 us over the nine, stores 0.19-0.32; results/h100-sxm/isolating/kernel-end); 0s..1ms"}, sysmem_kernel_end);
        v(FieldInfo{"device_load_latency", "time", "an SM's load from GPU memory (L2 hit), which a zero-copy store loop waits for; H100: 145 ns (dependent-load chase over 4 KiB, 0.142-0.148 us); 0s..1ms"}, device_load_latency);
        v(FieldInfo{"device_load_miss_latency", "time", "the same load when its line is not in the L2: a zero-copy store loop whose source the L2 no longer holds from the repetition before (l2_size) waits this long a round; H100: 339 ns, one block of dmaprobe's store kernel at 9.8 GB/s from 128 MiB against 18.3 up to 16 MiB (results/h100-sxm/isolating/host-cache-and-store-size, five leases), and on the one-GPU H200 the same loop with its source evicted runs at 9.8-10.2 GB/s at every size (results/h100-sxm/isolating/store-source); a dependent chase does not show it (135-146 ns to 1 GiB there); 0s..1ms"}, device_load_miss_latency);
        v(FieldInfo{"l2_size", "bytes", "the GPU's L2 (cudaDeviceProp::l2CacheSize: H100 SXM 50 MiB, H200 60 MiB): of a zero-copy store loop's source in GPU memory, which dmaprobe writes with a kernel before each repetition, the L2 still holds all up to half its size and none from its size on, a share falling evenly between (one block of stores on the H100: 18.3, 14.4 and 10.4 GB/s at 16, 32 and 64 MiB; on the H200 19.2-19.5 at 24 MiB, 16.7 at 32, 10.2-10.6 at 64: results/h100-sxm/isolating/store-source); 1MiB..1TiB"}, l2_size);
        v(FieldInfo{"device_load_line_gap", "time", "the same line-by-line gap for a warp's load from GPU memory; H100: 9 ns (one block of stores, 1 and 4 lines a warp: 197.7 and 225 ns a round); 0s..1us"}, device_load_line_gap);
        v(FieldInfo{"sm_store_bandwidth", "bytes/s", "stores one SM sends to mapped host memory at most; H100: 44.9 GB/s (one block of 1024 threads, the link's rate being 52); above 0, at most 100TB/s"}, sm_store_bandwidth);
        v(FieldInfo{"sysmem_in_order", "bool", "the SMs' loads and stores of host memory leave the GPU through one queue, in the order the warps issue them: a load waits behind every store issued before it, a store behind every load (one waiting for a free line too); H100: one load waits 17-21 us behind 264 blocks of stores, 1.2 us alone (results/h100-sxm/isolating/zero-copy-exchange/mix); false: loads and stores take turns"}, sysmem_in_order);
        v(FieldInfo{"copies_in_order", "bool", "a copy engine's TLP towards host memory (a read request, a write, its semaphore) waits behind every load and store of the SMs towards the same link issued before it reached the GPU's arbiter (each line of a load counting from when its warp issued the access) (or the copy engines' queue, dma.egress_queue), while the SMs' traffic does not wait for the copy's: the SMs go first, and a copy beside a kernel that fills the link gets what the kernel leaves. Measured on the H100 (results/h100-sxm/isolating/copy-beside-zero-copy, seven leases): a copy out of the GPU beside a full grid of stores gets 7-9 GB/s while the stores keep 51, a copy into the GPU beside them 8.8 (its reads behind the stores); and on the H200 of both kinds of host (results/h200x2-nvlink/isolating/duplex-burst, chainkernels): a chain of 4 KiB copies either way beside dmaprobe's zero-copy kernel costs 0.4-1.7 us a copy more while the link has room (4 and 16 blocks of 256 threads), 17-19, 107-114 and 290-320 us once its 66, 264 and 1056 blocks fill the link (what their warps keep in flight); beside a kernel that only spins, nothing. A load of the SMs beside a copy out of the GPU still waits only for the writes before it at the root port (results/h100-sxm/isolating/reads-behind-writes). false: the copy engines take their turns beside the SMs' traffic, round robin"}, copies_in_order);
        v(FieldInfo{"sysmem_store_buffer", "bytes", "the SMs' stores to host memory the GPU holds between the warps and the link: a warp does not wait for its stores to leave, so a grid whose stores the link cannot keep up with runs this far ahead of it (or a round of all its warps' stores, if more), and a copy's reads and writes wait behind that much (gpu.copies_in_order). H100 (results/h100-sxm/isolating/copy-beside-zero-copy, five leases): a copy of 256 MiB into the GPU beside 16, 32, 66 and 132 blocks of 256 threads storing to host memory moves 32.3, 31.0, 29.3 and 28.9 GB/s, each window of its 128 reads of 4 KiB waiting 15-17 us behind 0.77-0.87 MB of stores at the link's 52 GB/s; 768 KiB; 0B..1GiB"}, sysmem_store_buffer);
        v(FieldInfo{"front_end_turn", "time", "an application's copy into the GPU (its engine reading host memory) queued behind the copy before it on its engine starts this much later for each launch of work (a copy engine's copy, a kernel) by another channel of its GPU since that one started, up to front_end_turn_max: the front end turns to that work and back before it, whatever the copy's size and whatever the other work moves. Copies out of the GPU and inside it, a copy that finds its engine idle, the runtime's own pieces, and copies beside event records (no engine's work), one long operation or work held behind a wait take no turn. Measured (results/h200x2-nvlink/isolating/duplex-burst, chainturn, two fresh leases of each kind): a chain of 4 KiB copies into the GPU beside kernels that spin 2 / 5 / 10 / 20 us each, one launch in 3.5 / 6.6 / 11.6 / 21.6 us, costs +0.70...+0.89 / +0.32 / +0.17...+0.18 / +0.09 us a copy more on the 2xH200, 0.72-0.89 us a launch (median 0.74, given in its calibration), and +0.47...+0.78 / +0.12...+0.13 / +0.08 / +0.035...+0.044 on the one-GPU H200, the H100's kind of host, 0.29-0.81 us a launch (median 0.35, the default); beside empty kernels held behind a wait nothing. Chains out of the GPU pay 0.04-0.16 us beside copies inside it or empty kernels on the 2xH200 (0.11-0.45 on the one-GPU host, not modelled) and chains inside it 0.00-0.14; 0s..1ms"}, front_end_turn);
        v(FieldInfo{"front_end_turn_max", "time", "what the turns of gpu.front_end_turn cost one copy at most, however many launches there were: beside 512 empty kernels (a launch every 1.5-1.6 us) or copies inside the GPU on another stream a chain of 4 KiB copies into the GPU costs 0.58-0.92 us a copy more on the 2xH200 (results/h200x2-nvlink/isolating/duplex-burst, chainfront, chainengines and chainturn, seven fresh leases; the median of the fifteen cells 0.87), where two launches a copy would give 1.5; on the one-GPU host 0.36-0.80 (median 0.58), about two launches' turns, so its limit is not seen: the 2xH200's is the default; 0s..1ms"}, front_end_turn_max);
        v(FieldInfo{"fetch_window", "count", "operations of a channel queued behind the one its engine takes that the front end holds already; with more queued, it fetches further work from host memory as the channel goes on, and an engine that has copied into host memory holds the stream's next copy dma.host_write_hold_fetching. 57: along chains of 16-256 copies of 4 KiB out of the GPU (an event after the first and after the last) the pace changes for all but the last 58 copies on the one-GPU H200 and 57 on the 2xH200 (least squares over 11 lengths on each of two fresh leases of each kind, rms 0.001-0.007 us a copy), and event records queued behind count as operations (64 copies with 448 records behind them run at the pace of a long chain); results/h200x2-nvlink/isolating/duplex-burst, chaincontext: chainctx.cu, window; 1..1000000"}, fetch_window);
        v(FieldInfo{"bar_aperture", "bytes", "BAR1 window through which a card's DMA (third_party_dma) and the CPU's mappings (cpu_mapped) reach GPU memory: a larger buffer goes a window at a time, remapped between windows (bar_remap); 0B = all of it (the lent H100 SXM's BAR1 is 128 GiB, an H200's 256 GiB: results/h100-sxm/pci/bar1), older GPUs 256MiB; else a power of two, 1MiB..1TiB"}, bar_aperture);
        v(FieldInfo{"bar_remap", "time", "remapping the BAR window to the next part of a buffer; 0s..1s"}, bar_remap);
        v(FieldInfo{"bar_windows", "bool", "a buffer larger than bar_aperture: true = mapped a window at a time, remapped between windows (bar_remap each), as an application or driver that remaps does; false = its mapping fails, as nvidia_p2p_get_pages and GDRCopy's pinning do when BAR1 has no room: the row is refused. A GPU node of a platform file may set it (and bar_aperture, bar_remap) for itself"}, bar_windows);
        v(FieldInfo{"host_translation_reach", "bytes", "host memory whose address translations the first cache holds for the SMs' loads: a load to an address drawn at random from N bytes misses it with probability 1 - reach/N; H100: 192 MiB, least squares over a dependent chase of 64 MiB-32 GiB on two leases with host_translation_reach_far (+0.05 us a load at 256 MiB, +0.27 at 1 GiB, +0.53 at 4 GiB, +0.66 from 16 GiB; where the caches sit, the GPU or the hypervisor's IOMMU, is not isolated: the guest has none on the GPU; results/h100-sxm/isolating/translation-reach); 0B = no such cache; 0B..1PiB"}, host_translation_reach);
        v(FieldInfo{"host_translation_miss", "time", "what a miss in that first cache adds to a load; H100: 173 ns (the same fit); 0s..1ms"}, host_translation_miss);
        v(FieldInfo{"host_translation_reach_far", "bytes", "host memory the second, larger cache of translations covers; H100: 768 MiB (the same fit); 0B = no such cache; 0B..1PiB"}, host_translation_reach_far);
        v(FieldInfo{"host_translation_miss_far", "time", "what a miss in the second cache adds on top; H100: 489 ns (the same fit; both missing: 0.66 us, measured 0.66 at 16 and 32 GiB); 0s..1ms"}, host_translation_miss_far);
    }
};

// A GPU's BAR1 as a platform file's GPU node may give it (gpu.bar_* where the node is silent).
struct GpuBarParams {
    Bytes bar_aperture{0};
    Duration bar_remap{20'000'000};
    bool bar_windows = true;

    static GpuBarParams of(const GpuParams& g) { return GpuBarParams{g.bar_aperture, g.bar_remap, g.bar_windows}; }
    template <class V>
    void visit(V&& v) {
        // The keys and their meaning are gpu.bar_*'s (GpuParams).
        v(FieldInfo{"bar_aperture", "bytes", "this GPU's BAR1 window (gpu.bar_aperture)"}, bar_aperture);
        v(FieldInfo{"bar_remap", "time", "remapping it (gpu.bar_remap)"}, bar_remap);
        v(FieldInfo{"bar_windows", "bool", "a larger buffer a window at a time, or refused (gpu.bar_windows)"}, bar_windows);
    }
};

// NVLink between two GPUs: a bonded set of links, each carrying 16-byte flits at a per-direction
// rate; a write is a packet of header flits and up to `max_payload` bytes of data.
struct NvlinkParams {
    std::int64_t links = 18;
    // NVLink 2, 3 and 4 carry 25 GB/s of flits per link and direction: NVIDIA's 900 GB/s for
    // 18 NVLink-4 links counts both directions; NCCL's maintainers give the same line rate
    // (NVIDIA/nccl-tests#149). nvidia-smi reports the signalling rate, 26.5625 GB/s, which
    // includes what the physical layer adds below the flits.
    Bandwidth link_rate{25e9};
    // Copy engines write up to 256 bytes per packet, SMs 128 (NVIDIA/nccl-tests#149).
    Bytes max_payload{256};
    // Header flits per write packet: two 16-byte flits. NCCL's maintainers: a 25 GB/s link
    // "converts to ~20 GB/s effective bandwidth with a 128B payload" = 128 / (128 + 32).
    Bytes packet_overhead{32};
    // What the GPU puts through its NVLink port at most, payload per direction: below what the
    // flits allow (NCCL's maintainers: A100 copy engines reach ~230 of 240 GB/s, "some other
    // bottlenecks on the GPUs", NVIDIA/nccl-tests#149). 0 = only the links' own rate.
    Bandwidth port_bandwidth{0};
    Duration latency{300'000};

    template <class V>
    void visit(V&& v) {
        v(FieldInfo{"links", "count", "NVLinks bonded between the two GPUs (H100/H200 SXM: 18); 1..64"}, links);
        v(FieldInfo{"link_rate", "bytes/s", "flits one link carries per second, one direction (NVLink 2-4: `25GB/s`; nvidia-smi shows the signalling rate, `26.5625GB/s` on NVLink 4); above 0, at most 1TB/s"}, link_rate);
        v(FieldInfo{"max_payload", "bytes", "largest write a packet carries (copy engines: 256 B); 16B..4KiB"}, max_payload);
        v(FieldInfo{"packet_overhead", "bytes", "header flits per write packet (two 16-byte flits: 128-byte writes get 80 % of the link); 0B..256B"}, packet_overhead);
        v(FieldInfo{"port_bandwidth", "bytes/s", "payload the GPU moves over the bond at most, per direction, whatever the flits allow: 0B/s = the links' rate only (18 NVLink-4 links with 256-byte packets: 400 GB/s). Two H100 and two H200 joined by NV18: 390.9 GB/s, peer copies of 6-48 MiB a further MiB (390.0, 390.9 and 390.9 GB/s on three leases, a straight line within 0.5-0.8 us; results/h200x2-nvlink/isolating/peer-step); else at most 1TB/s per link"}, port_bandwidth);
        v(FieldInfo{"latency", "time", "one-way latency; 0s..1ms"}, latency);
    }
};

// How the host's costs differ between machines of one kind (sim/host_band.h). Every host-side
// cost of a machine is its nominal value times exp(sigma * z), one z ~ N(0, 1) per machine for
// all groups: on the sixteen H100 leases of results/h100-sxm/measured the host-bound rows of
// different kinds move together (each lease's median deviation from the cross-lease median:
// small pinned copies, pageable copies, pinning and allocation correlate with r = 0.79-0.98).
// Link, GPU and memory physics stay deterministic. The sigmas are the robust spread of the log of
// each lease's row median over the cross-lease median, (p90 - p10) / 2.563, over the rows of a
// kind (scripts/host_spread.py on results/h100-sxm/spread.csv). All zero: one number a row.
struct HostSpreadParams {
    double calls = 0.090;
    double cpu_copies = 0.103;
    double setup = 0.217;
    std::int64_t draws = 7;
    double screen = 1e-2;
    std::int64_t full_draw_tlps = 65536;

    template <class V>
    void visit(V&& v) {
        v(FieldInfo{"calls", "log sigma", "spread between machines of the CUDA runtime's calls and waits on the CPU (runtime.call_overhead, sync_latency, kernel_launch_latency, peer_call, peer_gpu_call, peer_staged_call, peer_staged_piece_call, record_call, stream_wait_call, cross_device_wait_call, set_device_call, cpu.register_first_copy): H100 0.090, small pinned copies (< 64 KiB, 18 rows x 16 leases); 0..2"}, calls);
        v(FieldInfo{"cpu_copies", "log sigma", "spread between machines of the CPU's own copy rate (cpu.memcpy_bandwidth, memcpy_bandwidth_cached, memcpy_bandwidth_cold, copy_out_bandwidth, zero_page_bandwidth, pageable.unaligned_pass_bandwidth; pageable staging, inline copies): H100 0.103, pageable copies >= 64 KiB (42 rows x 16 leases); 0..2"}, cpu_copies);
        v(FieldInfo{"setup", "log sigma", "spread between machines of the kernel's work on pages: pinning, unpinning, pinned allocation and the first touch of a never-touched page (cpu.register_*, unregister_*, alloc_pinned_*, first_touch_read, first_touch_write: over the main plans' leases a page fault's cost, a fresh pageable row less its old one, spreads by 0.09-0.27 (p10-p90 over 2.563, six rows, median 0.19 on the H100's 28 leases and 0.18 on the 2xH200's 13) and goes with the leases' 16 MiB setup rows, median correlation +0.31 and +0.51 over 18 pairs, more than with their pageable copy, +0.08 and +0.36; results/h100-sxm/isolating/zero-page, fault-spread.txt): H100 0.217, the median of the four setup rows' spreads (cudaMallocHost 0.235, cudaFreeHost 0.285, cudaHostRegister 0.199, cudaHostUnregister 0.139); 0..2"}, setup);
        v(FieldInfo{"draws", "count", "machines a host-bound case is simulated on, at the host-speed quantiles (i + 0.5) / draws of N(0, 1), besides the nominal one; the rows' p10/p90 are those of the draws, min/max the extreme draws; 3..64"}, draws);
        v(FieldInfo{"screen", "ratio", "a case whose rows change by less than this on the slowest of those machines is link-bound: its band follows that one extra run, linear in z; 0..0.1"}, screen);
        v(FieldInfo{"full_draw_tlps", "count", "a host-bound case of more TLPs than this is run on the fastest and slowest machines only, its band the exponential through the three times (exact for one group's costs on an unchanged critical path); one of at most this many on every machine; 0..1e12"}, full_draw_tlps);
    }
    bool deterministic() const { return calls == 0.0 && cpu_copies == 0.0 && setup == 0.0; }
    // The same with no spread: one machine, the nominal one.
    HostSpreadParams without_spread() const {
        HostSpreadParams s = *this;
        s.calls = s.cpu_copies = s.setup = 0.0;
        return s;
    }
};

// How much later than its release a periodic frame starts on one machine, frame by frame
// (strategies/periodic.cpp; docs/model.md, "Frame jitter"). dmaprobe, as a producer would, sleeps
// until 200 us before each release and spins; the OS wakes it a little late every time (the body,
// which leaves the median where it is) and sometimes so late that the frame starts late (the slow
// mode), the likelier the longer it slept: probability slow_probability (1 - exp(-idle /
// runtime.idle_wake_time)). A frame already waiting for the one before hides what is smaller than
// its wait. dmasim calibrate fits them (docs/calibration.md, "The band") to each lease's p10, p50,
// p90, p99 and max of 500 frames every 8 ms and 1000 every 2 ms; the defaults are its fit to the
// eight H100 leases of results/h100-sxm/calibration.yaml. body 0 and slow_probability 0: frames
// repeat exactly.
struct FrameJitterParams {
    Duration body{15'480'000};
    double body_sigma = 0.406;
    double slow_probability = 0.0291;
    Duration slow_time{96'900'000};
    double slow_sigma = 1.431;
    double cold_sigma = 0.0;
    std::int64_t seed = 1;
    std::int64_t runs = 101;

    template <class V>
    void visit(V&& v) {
        v(FieldInfo{"body", "time", "every frame starts b (exp(body_sigma e) - 1) late, e ~ N(0, 1): half early, half late, the median as simulated; H100 15.5 us (its quiet machines); 0s..1s"}, body);
        v(FieldInfo{"body_sigma", "log sigma", "the body's spread; H100 0.406; 0..2"}, body_sigma);
        v(FieldInfo{"slow_probability", "ratio", "the chance that a frame after a long idle (many times runtime.idle_wake_time) starts late by the slow mode; after an idle s it is this times 1 - exp(-s / idle_wake_time): H100 0.0291 (its quiet machines); 0..1"}, slow_probability);
        v(FieldInfo{"slow_time", "time", "the slow mode's median lateness (lognormal); H100 96.9 us; 0s..1s"}, slow_time);
        v(FieldInfo{"slow_sigma", "log sigma", "the slow mode's spread; H100 1.431 (its quiet machines' p99 of 500 frames every 8 ms 49 us past their median, as measured; dmasim calibrate fits at most 1.5); 0..3"}, slow_sigma);
        v(FieldInfo{"cold_sigma", "log sigma", "frame to frame, how long what went cold in a pageable frame's CPU copy takes to come back (cpu.cache_cooling_time): the frame's excess over a warm copy is the simulated one times exp(cold_sigma z), z ~ N(0, 1), a frame of its own each, the median as simulated (what else the host runs meanwhile evicts more or less of it, and contends for DRAM more or less); fitted by dmasim calibrate to the pageable stream's tails; 0..3"}, cold_sigma);
        v(FieldInfo{"seed", "count", "the frames' draws: each case draws from this seed and its own label, so a run repeats exactly; 0..1e12"}, seed);
        v(FieldInfo{"runs", "count", "runs of the stream, each with draws of its own; each row is the median over them of its statistic, as compare takes the median over leases (one run's p99 of 1000 frames moves by tens of us with a few slow frames more or less); 1..10001"}, runs);
    }
    bool active() const { return body.ps > 0 || slow_probability > 0.0 || cold_sigma > 0.0; }
    FrameJitterParams without_spread() const {
        FrameJitterParams j = *this;
        j.body = Duration{0};
        j.slow_probability = 0.0;
        j.cold_sigma = 0.0;
        return j;
    }
};

// Noisy machines: machines of one kind come in two sorts. On most, a thread that sleeps until a
// release wakes on time and a 4 MiB memcpy takes what it takes; on the others ("noisy": another
// guest on the same host, as the lent machines are virtual) a wake is now and then late by
// hundreds of us and a CPU copy now and then stalls for milliseconds, and their periodic frames
// have tails ten times longer (results/h100-sxm/isolating/host-stalls: dmaprobe --host-stalls).
// Each run of a periodic stream is one machine, noisy with chance noisy_share. On a noisy one a
// frame released after a sleep is late by the wake mode with a chance that grows with the sleep, and a
// frame's CPU copy (pageable) meets stalls as a Poisson process in the time the CPU copies
// (busy_interval apart on average), each stopping it for a lognormal time. A quiet machine's
// own lateness is frame_jitter's, which a noisy one has too. Off by default; the H100's
// calibration (results/h100-sxm/calibration.yaml) gives the values each field names.
struct NoisyHostParams {
    double noisy_share = 0.0;
    double wake_probability = 0.0;
    Duration wake_time{0};
    double wake_sigma = 0.0;
    Duration busy_interval{0};
    Duration busy_time{0};
    double busy_sigma = 0.0;

    template <class V>
    void visit(V&& v) {
        v(FieldInfo{"noisy_share", "ratio", "the share of machines of the kind that are noisy (0: none; 1: the machine in hand is a noisy one, as dmaprobe --host-stalls tells); H100 0.308 (4 of its 13 calibration leases; 11 of all 28); 0..1"}, noisy_share);
        v(FieldInfo{"wake_probability", "ratio", "on a noisy machine, the chance that a frame released after a long sleep (many times runtime.idle_wake_time) starts late by the wake mode; after an idle s it is this times 1 - exp(-s / idle_wake_time), as frame_jitter.slow_probability; H100 0.150; 0..1"}, wake_probability);
        v(FieldInfo{"wake_time", "time", "the wake mode's median lateness (lognormal); H100 182 us; 0s..1s"}, wake_time);
        v(FieldInfo{"wake_sigma", "log sigma", "the wake mode's spread; H100 0.652; 0..3"}, wake_sigma);
        v(FieldInfo{"busy_interval", "time", "on a noisy machine, the mean time the CPU copies between two stalls of its copy (exponential; 0: none); H100 51.8 ms (the copy probe: 22.7 ms); 0s..1000s, at least 10us where used"}, busy_interval);
        v(FieldInfo{"busy_time", "time", "a copy stall's median length (lognormal); H100 2.67 ms (the copy probe: 3.20 ms); 0s..1s"}, busy_time);
        v(FieldInfo{"busy_sigma", "log sigma", "the copy stalls' spread of lengths; H100 0.062 (the copy probe: 0.18); 0..3"}, busy_sigma);
    }
    bool active() const { return noisy_share > 0.0 && ((wake_probability > 0.0 && wake_time.ps > 0) || (busy_interval.ps > 0 && busy_time.ps > 0)); }
    NoisyHostParams without_spread() const {
        NoisyHostParams h = *this;
        h.noisy_share = 0.0;
        return h;
    }
};

// How far the model's own number lies from the median of a machine of the kind, beyond the
// machines' spread (HostSpreadParams): the calibration's residual, by kind of row, as a log sigma
// that widens the band (sim/host_band.h) without moving its middle. The model's error is not one
// size: a bulk pinned copy is right within a percent, a duplex or pageable one within 10-15 %, so
// a band of machines alone leaves most lease medians of the link-bound rows outside it (45 % inside
// on the H100's sixteen leases). `dmasim calibrate` fits each to the least sigma whose band holds
// the wanted share of the leases' medians of its training rows (docs/calibration.md, "The band");
// 0, the default: the model is taken at its word.
struct ModelErrorParams {
    double pinned_small = 0.0;
    double pinned = 0.0;
    double pageable_small = 0.0;
    double pageable = 0.0;
    double registered = 0.0;
    double setup = 0.0;
    double zero_copy = 0.0;
    double duplex_small = 0.0;
    double duplex = 0.0;
    double async_overlap = 0.0;
    double peer = 0.0;

    template <class V>
    void visit(V&& v) {
        v(FieldInfo{"pinned_small", "log sigma", "pinned copies under 64 KiB; 0..2"}, pinned_small);
        v(FieldInfo{"pinned", "log sigma", "pinned copies of 64 KiB and more; 0..2"}, pinned);
        v(FieldInfo{"pageable_small", "log sigma", "pageable copies under 64 KiB; 0..2"}, pageable_small);
        v(FieldInfo{"pageable", "log sigma", "pageable copies of 64 KiB and more; 0..2"}, pageable);
        v(FieldInfo{"registered", "log sigma", "copies from cudaHostRegister'ed memory; 0..2"}, registered);
        v(FieldInfo{"setup", "log sigma", "setup rows: cudaMallocHost, cudaHostRegister, cudaHostUnregister; 0..2"}, setup);
        v(FieldInfo{"zero_copy", "log sigma", "zero-copy kernels (every pattern, width, grid and direction); 0..2"}, zero_copy);
        v(FieldInfo{"duplex_small", "log sigma", "copies both ways at once, under 64 KiB each way; 0..2"}, duplex_small);
        v(FieldInfo{"duplex", "log sigma", "copies both ways at once, 64 KiB and more each way; 0..2"}, duplex);
        v(FieldInfo{"async_overlap", "log sigma", "copies overlapped with kernels on streams (not the kernel-alone row); 0..2"}, async_overlap);
        v(FieldInfo{"peer", "log sigma", "GPU-to-GPU copies; 0..2"}, peer);
    }
    // The key of a row's kind: by its strategy and size, setup rows apart; nullptr for the kinds
    // without one (periodic frames have a spread of their own, a kernel alone is the given
    // duration, other strategies are not measured).
    static const char* kind(const std::string& strategy, const std::string& variant, std::uint64_t bytes) {
        if (variant.rfind("setup=", 0) == 0) return "setup";
        if (variant == "kernel") return nullptr;
        const bool small = bytes < 65536;
        if (strategy == "pinned") return small ? "pinned_small" : "pinned";
        if (strategy == "pageable") return small ? "pageable_small" : "pageable";
        if (strategy == "registered") return "registered";
        if (strategy == "zero_copy") return "zero_copy";
        if (strategy == "duplex") return small ? "duplex_small" : "duplex";
        if (strategy == "async_overlap") return "async_overlap";
        if (strategy == "peer") return "peer";
        return nullptr;
    }
    // The sigma of a row's kind (0 where it has none).
    double of(const std::string& strategy, const std::string& variant, std::uint64_t bytes) const {
        const char* k = kind(strategy, variant, bytes);
        double sigma = 0.0;
        if (k == nullptr) return sigma;
        ModelErrorParams copy = *this;
        copy.visit([&](const FieldInfo& f, double v) {
            if (std::string(f.key) == k) sigma = v;
        });
        return sigma;
    }
};

// Everything the model takes, by section. Section names are the YAML keys.
struct ModelParams {
    LinkParams link;
    RootComplexParams root_complex;
    MemoryParams host_memory{Bandwidth{300e9}, Duration{100'000}};
    MemoryParams gpu_memory{Bandwidth{3.35e12}, Duration{600'000}};
    DmaParams dma;
    CardDmaParams card_dma;
    RuntimeParams runtime;
    CpuParams cpu;
    PageableParams pageable;
    GpuParams gpu;
    NvlinkParams nvlink;
    HostSpreadParams host_spread;
    ModelErrorParams model_error;
    FrameJitterParams frame_jitter;
    NoisyHostParams noisy_host;

    // Calls v.section(name, doc, struct) for each section.
    template <class V>
    void visit_sections(V&& v) {
        v.section("link", "PCIe link between the GPU and the root complex", link);
        v.section("root_complex", "root complex / host bridge", root_complex);
        v.section("host_memory", "host DRAM", host_memory);
        v.section("gpu_memory", "GPU HBM", gpu_memory);
        v.section("dma", "GPU copy engines", dma);
        v.section("card_dma", "a capture card's DMA engine (fpga, nic and nvme endpoints), where it differs from a GPU's", card_dma);
        v.section("runtime", "CUDA runtime costs on the CPU", runtime);
        v.section("cpu", "CPU copies and page pinning", cpu);
        v.section("pageable", "staging of pageable copies", pageable);
        v.section("gpu", "streaming multiprocessors (zero-copy access)", gpu);
        v.section("nvlink", "NVLink between GPUs", nvlink);
        v.section("host_spread", "how the host's costs differ between machines of one kind", host_spread);
        v.section("model_error", "how far the model's number lies from a machine's median, by kind of row", model_error);
        v.section("frame_jitter", "how much later than its release a periodic frame starts, frame by frame", frame_jitter);
        v.section("noisy_host", "machines whose host now and then wakes late and stalls its CPU copies", noisy_host);
    }
    // One machine, the nominal one, taken at its word: every band a point (--deterministic, the
    // calibration's steps, traces).
    ModelParams without_spread() const {
        ModelParams p = *this;
        p.host_spread = host_spread.without_spread();
        p.model_error = ModelErrorParams{};
        p.frame_jitter = frame_jitter.without_spread();
        p.noisy_host = noisy_host.without_spread();
        return p;
    }
};

// Per-lane signalling rate of a generation in GT/s (spec): 2.5, 5, 8, 16, 32, 64.
double generation_rate_gt(std::int64_t generation);

}  // namespace dmasim::config
