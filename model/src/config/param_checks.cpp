#include "dmasim/config/param_checks.h"

#include "dmasim/config/param_io.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <utility>

namespace dmasim::config {

namespace {

using core::to_string;

constexpr std::uint64_t kKiB = 1024;
constexpr std::uint64_t kMiB = kKiB * 1024;
constexpr std::uint64_t kGiB = kMiB * 1024;
constexpr std::uint64_t kTiB = kGiB * 1024;

bool is_power_of_two(std::uint64_t v) { return v != 0 && (v & (v - 1)) == 0; }

// Text of a bound as a user would write it back ("1ms", "100TB/s"); core::to_string spells
// bandwidths in GB/s only.
std::string bandwidth_text(double bytes_per_s) {
    if (bytes_per_s >= 1e12 && std::fmod(bytes_per_s, 1e12) == 0.0) {
        return std::to_string(static_cast<long long>(bytes_per_s / 1e12)) + "TB/s";
    }
    return to_string(Bandwidth{bytes_per_s});
}

// The checks of one struct: every message names the full key and says what is allowed.
class Check {
public:
    Check(const std::string& prefix, const FailFn& fail) : prefix_(prefix), fail_(fail) {}

    [[noreturn]] void bad(const std::string& key, const std::string& message) const {
        fail_(prefix_ + key, message);
        throw std::logic_error("parameter check: the failure callback returned for " + prefix_ + key);
    }

    void count(const char* key, std::int64_t v, std::int64_t lo, std::int64_t hi) const {
        if (v < lo || v > hi) bad(key, "must be " + std::to_string(lo) + ".." + std::to_string(hi) + ", not " + std::to_string(v));
    }

    void duration(const char* key, Duration v, Duration hi) const {
        if (v.ps < 0 || v.ps > hi.ps) bad(key, "must be 0s.." + to_string(hi) + ", not " + to_string(v));
    }

    void positive_duration(const char* key, Duration v, Duration hi) const {
        if (v.ps <= 0 || v.ps > hi.ps) bad(key, "must be above 0s and at most " + to_string(hi) + ", not " + to_string(v));
    }

    void bandwidth(const char* key, Bandwidth v, double hi) const {
        // Written so that NaN fails too.
        if (!(v.bytes_per_s > 0.0 && v.bytes_per_s <= hi)) {
            bad(key, "must be above 0B/s and at most " + bandwidth_text(hi) + ", not " + to_string(v));
        }
    }

    // A rate where 0B/s has a meaning of its own (`zero`: what it stands for). Written so that
    // NaN fails too.
    void bandwidth_or_zero(const char* key, Bandwidth v, double hi, const char* zero) const {
        if (!(v.bytes_per_s >= 0.0 && v.bytes_per_s <= hi)) {
            bad(key, std::string("must be 0B/s (") + zero + ") or a rate up to " + bandwidth_text(hi) + ", not " + to_string(v));
        }
    }

    void bytes(const char* key, Bytes v, std::uint64_t lo, std::uint64_t hi) const {
        if (v.value < lo || v.value > hi) {
            bad(key, "must be " + to_string(Bytes{lo}) + ".." + to_string(Bytes{hi}) + ", not " + to_string(v));
        }
    }

    void power_of_two(const char* key, Bytes v, std::uint64_t lo, std::uint64_t hi) const {
        if (!is_power_of_two(v.value) || v.value < lo || v.value > hi) {
            bad(key, to_string(v) + " is not valid: a power of two from " + to_string(Bytes{lo}) + " to " +
                         to_string(Bytes{hi}));
        }
    }

private:
    const std::string& prefix_;
    const FailFn& fail_;
};

// Flow-control credits. The minimums are those of the PCI Express Base Specification, §2.6.1
// (Flow Control Rules), table "Minimum Initial Flow Control Advertisements": one header credit
// per class (PH, NPH, CplH), and for posted and completion data the largest Max_Payload_Size
// divided by the 16-byte FC unit, so that one MPS-sized TLP always fits. 0 stands for the
// infinite advertisement (the table allows it; endpoints must give it for completions). The
// maximums are what a receiver can have outstanding: 2^7 header and 2^11 data credits per field
// (half the 8- and 12-bit counters), times 16 with Scaled Flow Control (r4.0 onward).
constexpr std::int64_t kMaxHeaderCredits = 128 * 16;
constexpr std::int64_t kMaxDataCredits = 2048 * 16;

void check_data_credits(const Check& c, const char* key, std::int64_t credits, Bytes mps) {
    c.count(key, credits, 0, kMaxDataCredits);
    if (credits != 0 && credits * 16 < static_cast<std::int64_t>(mps.value)) {
        c.bad(key, std::to_string(credits) + " credits (" + to_string(Bytes{static_cast<std::uint64_t>(credits) * 16}) +
                       ") are too few for one MPS-sized TLP (" + to_string(mps) + "): at least " +
                       std::to_string(mps.value / 16) + ", or 0 for infinite");
    }
}

}  // namespace

void check_link(const LinkParams& l, const std::string& prefix, const FailFn& fail) {
    const Check c(prefix, fail);
    if (l.generation < 1 || l.generation > 6) {
        c.bad("generation", std::to_string(l.generation) + " is not a PCIe generation: 1..6");
    }
    if (l.lanes != 1 && l.lanes != 2 && l.lanes != 4 && l.lanes != 8 && l.lanes != 16) {
        c.bad("lanes", std::to_string(l.lanes) + " lanes is not a PCIe width (1, 2, 4, 8 or 16)");
    }
    const double rate = generation_rate_gt(l.generation);
    if (l.rate.gt_per_s != 0.0 && !(std::fabs(l.rate.gt_per_s - rate) <= 1e-9)) {
        c.bad("rate", to_string(l.rate) + " does not match generation " + std::to_string(l.generation) + " (" +
                          to_string(TransferRate{rate}) + "; 0GT/s takes the generation's)");
    }
    c.power_of_two("mps", l.mps, 128, 4096);
    c.power_of_two("mrrs", l.mrrs, 128, 4096);
    if (l.rcb.value != 64 && l.rcb.value != 128) {
        c.bad("rcb", to_string(l.rcb) + " is not a Read Completion Boundary: 64B or 128B");
    }
    c.duration("latency", l.latency, kMaxHardwareLatency);
    c.count("ack_coalesce", l.ack_coalesce, 1, 1024);
    c.count("updatefc_coalesce", l.updatefc_coalesce, 1, 1024);
    c.count("credits_posted_header", l.credits_posted_header, 0, kMaxHeaderCredits);
    c.count("credits_nonposted_header", l.credits_nonposted_header, 0, kMaxHeaderCredits);
    c.count("credits_completion_header", l.credits_completion_header, 0, kMaxHeaderCredits);
    check_data_credits(c, "credits_posted_data", l.credits_posted_data, l.mps);
    check_data_credits(c, "credits_completion_data", l.credits_completion_data, l.mps);
}

void check_root_complex(const RootComplexParams& rc, const std::string& prefix, const FailFn& fail) {
    const Check c(prefix, fail);
    c.duration("forward_latency", rc.forward_latency, kMaxHardwareLatency);
    c.duration("switch_latency", rc.switch_latency, kMaxHardwareLatency);
    c.duration("partial_write", rc.partial_write, kMaxPerItemTime);
    c.duration("shared_line_write", rc.shared_line_write, kMaxPerItemTime);
    // Above the largest MPS it would always be capped; zero would never move a byte.
    c.bytes("completion_size", rc.completion_size, 64, 4096);
    c.bytes("io_cache", rc.io_cache, 0, std::uint64_t{1} << 40);
    c.duration("port_tlp_time", rc.port_tlp_time, Duration{1'000'000});
    c.duration("read_latency_per_gbps", rc.read_latency_per_gbps, Duration{1'000'000});
    c.duration("read_rate_window", rc.read_rate_window, Duration{1'000'000'000});
    if (rc.read_rate_window.ps <= 0) c.bad("read_rate_window", "must be above 0s, not " + to_string(rc.read_rate_window));
    const std::uint64_t pw = rc.peer_write_size.value;
    if (pw != 0 && (pw < 64 || pw > 4096 || (pw & (pw - 1)) != 0)) {
        c.bad("peer_write_size", "must be 0B (forwarded as it came) or a power of two from 64B to 4KiB, not " + to_string(rc.peer_write_size));
    }
    // 0B/s: no limit but the link's.
    for (const auto& [key, v] : {std::pair<const char*, Bandwidth>{"port_bandwidth", rc.port_bandwidth},
                                 {"port_bandwidth_total", rc.port_bandwidth_total},
                                 {"memory_bandwidth", rc.memory_bandwidth},
                                 {"ports_bandwidth_total", rc.ports_bandwidth_total},
                                 {"held_write_bandwidth", rc.held_write_bandwidth}}) {
        c.bandwidth_or_zero(key, v, kMaxBandwidth, "no limit");
    }
}

void check_completion_size(const RootComplexParams& rc, const std::string& rc_prefix, const LinkParams& link,
                           const std::string& link_prefix, const FailFn& fail) {
    const Check c(rc_prefix, fail);
    if (link.rcb.value == 0 || rc.completion_size.value == 0 || rc.completion_size.value % link.rcb.value != 0) {
        c.bad("completion_size", to_string(rc.completion_size) + " is not a positive multiple of " + link_prefix +
                                     "rcb (" + to_string(link.rcb) + "): completions are cut at the Read Completion Boundary");
    }
}

void check_memory(const MemoryParams& m, const std::string& prefix, const FailFn& fail) {
    const Check c(prefix, fail);
    c.bandwidth("bandwidth", m.bandwidth, kMaxBandwidth);
    c.duration("latency", m.latency, kMaxHardwareLatency);
}

void check_dma(const DmaParams& d, const std::string& prefix, const FailFn& fail) {
    const Check c(prefix, fail);
    c.count("engines", d.engines, 1, 16);
    c.count("max_read_requests", d.max_read_requests, 1, 16384);
    c.count("held_releases", d.held_releases, 0, 64);
    c.duration("release_wait_max", d.release_wait_max, kMaxHardwareLatency);
    c.duration("launch_latency", d.launch_latency, kMaxSoftwareLatency);
    c.duration("queued_launch_latency", d.queued_launch_latency, kMaxSoftwareLatency);
    c.duration("host_write_hold", d.host_write_hold, kMaxHardwareLatency);
    c.duration("host_write_hold_beside_reads", d.host_write_hold_beside_reads, kMaxHardwareLatency);
    c.duration("host_write_hold_fetching", d.host_write_hold_fetching, kMaxHardwareLatency);
    c.duration("channel_turn", d.channel_turn, kMaxHardwareLatency);
    c.duration("gpu_memory_latency", d.gpu_memory_latency, kMaxHardwareLatency);
    c.bytes("semaphore_size", d.semaphore_size, 1, 4096);
    c.bytes("read_ahead", d.read_ahead, 64 * kKiB, kGiB);
    c.bytes("egress_queue", d.egress_queue, 0, 64 * kMiB);
}

void check_card_dma(const CardDmaParams& d, const std::string& prefix, const FailFn& fail) {
    const Check c(prefix, fail);
    c.count("read_requests", d.read_requests, 1, 1024);
    c.duration("launch_latency", d.launch_latency, kMaxSoftwareLatency);
    c.bytes("descriptor_bytes", d.descriptor_bytes, 0, kGiB);
    c.bytes("descriptor_size", d.descriptor_size, 8, 256);
    c.count("descriptors_per_fetch", d.descriptors_per_fetch, 1, 4096);
}

void check_runtime(const RuntimeParams& r, const std::string& prefix, const FailFn& fail) {
    const Check c(prefix, fail);
    c.duration("call_overhead", r.call_overhead, kMaxSoftwareLatency);
    c.duration("sync_latency", r.sync_latency, kMaxSoftwareLatency);
    c.duration("kernel_launch_latency", r.kernel_launch_latency, kMaxSoftwareLatency);
    c.duration("queued_kernel_latency", r.queued_kernel_latency, kMaxSoftwareLatency);
    c.duration("stream_wait_latency", r.stream_wait_latency, kMaxSoftwareLatency);
    c.duration("cross_device_wait", r.cross_device_wait, kMaxSoftwareLatency);
    c.duration("peer_call", r.peer_call, kMaxSoftwareLatency);
    c.duration("cross_device_acquire", r.cross_device_acquire, kMaxSoftwareLatency);
    c.duration("peer_staged_call", r.peer_staged_call, kMaxSoftwareLatency);
    c.duration("peer_staged_piece_call", r.peer_staged_piece_call, kMaxSoftwareLatency);
    c.duration("record_call", r.record_call, kMaxSoftwareLatency);
    c.duration("stream_wait_call", r.stream_wait_call, kMaxSoftwareLatency);
    c.duration("cross_device_wait_call", r.cross_device_wait_call, kMaxSoftwareLatency);
    c.duration("set_device_call", r.set_device_call, kMaxSoftwareLatency);
    c.duration("cross_device_try", r.cross_device_try, kMaxSoftwareLatency);
    c.duration("cross_device_seen", r.cross_device_seen, kMaxSoftwareLatency);
    c.duration("peer_gpu_call", r.peer_gpu_call, kMaxSoftwareLatency);
    c.duration("record_stamp", r.record_stamp, kMaxSoftwareLatency);
    c.duration("release_spacing", r.release_spacing, kMaxSoftwareLatency);
    c.duration("record_follow", r.record_follow, kMaxSoftwareLatency);
    c.duration("busy_release_spacing", r.busy_release_spacing, kMaxSoftwareLatency);
    c.duration("release_seen_lag", r.release_seen_lag, kMaxHardwareLatency);
    c.duration("cpu_seen_lag", r.cpu_seen_lag, kMaxHardwareLatency);
    // The read happens within the try: a try that saw the event later than it passes is no try.
    if (r.cross_device_read.ps < 0 || r.cross_device_read.ps > r.cross_device_try.ps) {
        c.bad("cross_device_read", "must be 0s..cross_device_try (" + to_string(r.cross_device_try) + "), not " +
                                       to_string(r.cross_device_read));
    }
    c.duration("poll_period", r.poll_period, kMaxHardwareLatency);
    c.bytes("peer_staging_piece", r.peer_staging_piece, 4 * kKiB, kGiB);
    c.count("peer_staging_buffers", r.peer_staging_buffers, 1, 64);
    c.duration("staged_entry_hold", r.staged_entry_hold, kMaxSoftwareLatency);
    c.bytes("inline_h2d_max", r.inline_h2d_max, 0, kMiB);
    c.bytes("front_end_h2d_max", r.front_end_h2d_max, 0, kMiB);
    c.bandwidth_or_zero("command_fetch_bandwidth", r.command_fetch_bandwidth, kMaxBandwidth, "the engine reads the data");
    c.duration("idle_wake", r.idle_wake, kMaxSoftwareLatency);
    c.positive_duration("idle_wake_time", r.idle_wake_time, Duration{1000 * kMaxSoftwareLatency.ps});
    c.count("connections", r.connections, 1, 32);
}

void check_cpu(const CpuParams& p, const std::string& prefix, const FailFn& fail) {
    const Check c(prefix, fail);
    c.bandwidth("memcpy_bandwidth", p.memcpy_bandwidth, kMaxBandwidth);
    c.bandwidth("memcpy_bandwidth_cached", p.memcpy_bandwidth_cached, kMaxBandwidth);
    c.bandwidth("memcpy_bandwidth_cold", p.memcpy_bandwidth_cold, kMaxBandwidth);
    c.bandwidth_or_zero("copy_out_bandwidth", p.copy_out_bandwidth, kMaxBandwidth, "memcpy_bandwidth_cached");
    c.bandwidth_or_zero("zero_page_bandwidth", p.zero_page_bandwidth, kMaxBandwidth, "a never-touched source is copied as an old one");
    c.duration("cache_cooling_time", p.cache_cooling_time, Duration{1000 * kMaxSoftwareLatency.ps});
    c.bytes("llc_size", p.llc_size, 0, kTiB);
    c.bytes("core_cache", p.core_cache, 0, kTiB);
    // x86 and Arm base pages (4 KiB, 16 KiB, 64 KiB) up to the largest huge page (1 GiB).
    c.power_of_two("page_size", p.page_size, 4 * kKiB, kGiB);
    c.duration("register_fixed", p.register_fixed, kMaxSoftwareLatency);
    c.duration("register_per_page", p.register_per_page, kMaxHardwareLatency);
    c.duration("unregister_fixed", p.unregister_fixed, kMaxSoftwareLatency);
    c.duration("unregister_per_page", p.unregister_per_page, kMaxHardwareLatency);
    c.duration("register_first_copy", p.register_first_copy, kMaxSoftwareLatency);
    c.duration("alloc_pinned_pool_fixed", p.alloc_pinned_pool_fixed, kMaxSoftwareLatency);
    c.duration("alloc_pinned_fixed", p.alloc_pinned_fixed, kMaxSoftwareLatency);
    c.duration("alloc_pinned_per_page", p.alloc_pinned_per_page, kMaxHardwareLatency);
    c.duration("alloc_pinned_cold_per_page", p.alloc_pinned_cold_per_page, kMaxHardwareLatency);
    c.bytes("alloc_pinned_cache", p.alloc_pinned_cache, 0, kTiB);
    c.duration("first_touch_read", p.first_touch_read, kMaxHardwareLatency);
    c.duration("first_touch_write", p.first_touch_write, kMaxHardwareLatency);
    c.bytes("alloc_pinned_pool", p.alloc_pinned_pool, 0, kTiB);
    c.bandwidth("wc_bandwidth", p.wc_bandwidth, kMaxBandwidth);
    c.count("wc_buffers", p.wc_buffers, 1, 1024);
    c.bytes("mmio_read_bytes", p.mmio_read_bytes, 1, 64);
    c.power_of_two("cache_line", p.cache_line, 32, 256);
    c.count("mmio_reads_in_flight", p.mmio_reads_in_flight, 1, 64);
}

void check_pageable(const PageableParams& p, const std::string& prefix, const FailFn& fail) {
    const Check c(prefix, fail);
    c.bytes("bounce_size", p.bounce_size, 4 * kKiB, kGiB);
    c.bytes("h2d_piece", p.h2d_piece, 4 * kKiB, kGiB);
    c.bytes("inline_max", p.inline_max, 0, kMiB);
    c.count("bounce_buffers", p.bounce_buffers, 1, 64);
    c.power_of_two("copy_out_alignment", p.copy_out_alignment, 1, 4 * kKiB);
    c.bandwidth_or_zero("unaligned_pass_bandwidth", p.unaligned_pass_bandwidth, kMaxBandwidth, "no such cost");
}

void check_gpu(const GpuParams& g, const std::string& prefix, const FailFn& fail) {
    const Check c(prefix, fail);
    c.count("sms", g.sms, 1, 1024);
    c.count("max_warps_per_sm", g.max_warps_per_sm, 1, 256);
    c.count("max_blocks_per_sm", g.max_blocks_per_sm, 1, 256);
    c.count("loads_in_flight", g.loads_in_flight, 1, 64);
    c.count("sysmem_max_outstanding_reads", g.sysmem_max_outstanding_reads, 1, 16384);
    c.count("sysmem_max_outstanding_lines", g.sysmem_max_outstanding_lines, 1, 16384);
    c.duration("sm_loop", g.sm_loop, kMaxPerItemTime);
    c.duration("host_load_line_gap", g.host_load_line_gap, kMaxPerItemTime);
    c.duration("sm_host_path", g.sm_host_path, kMaxHardwareLatency);
    c.duration("sysmem_kernel_end", g.sysmem_kernel_end, kMaxHardwareLatency);
    c.duration("device_load_latency", g.device_load_latency, kMaxHardwareLatency);
    c.duration("device_load_miss_latency", g.device_load_miss_latency, kMaxHardwareLatency);
    c.bytes("l2_size", g.l2_size, kMiB, kTiB);
    c.duration("device_load_line_gap", g.device_load_line_gap, kMaxPerItemTime);
    c.bandwidth("sm_store_bandwidth", g.sm_store_bandwidth, kMaxBandwidth);
    c.bytes("sysmem_store_buffer", g.sysmem_store_buffer, 0, kGiB);
    c.duration("front_end_turn", g.front_end_turn, kMaxHardwareLatency);
    c.duration("front_end_turn_max", g.front_end_turn_max, kMaxHardwareLatency);
    c.count("fetch_window", g.fetch_window, 1, 1000000);
    // BAR sizes are powers of two (PCIe Base Specification, §7.5.1.2.1); a Resizable BAR offers
    // 1 MiB and up.
    if (g.bar_aperture.value != 0) c.power_of_two("bar_aperture", g.bar_aperture, kMiB, kTiB);
    c.duration("bar_remap", g.bar_remap, kMaxSoftwareLatency);
    constexpr std::uint64_t kPiB = 1ULL << 50;
    c.bytes("host_translation_reach", g.host_translation_reach, 0, kPiB);
    c.duration("host_translation_miss", g.host_translation_miss, kMaxHardwareLatency);
    c.bytes("host_translation_reach_far", g.host_translation_reach_far, 0, kPiB);
    c.duration("host_translation_miss_far", g.host_translation_miss_far, kMaxHardwareLatency);
}

void check_nvlink(const NvlinkParams& nv, const std::string& prefix, const FailFn& fail) {
    const Check c(prefix, fail);
    c.count("links", nv.links, 1, 64);
    c.bandwidth("link_rate", nv.link_rate, kMaxNvlinkLinkRate);
    c.bytes("max_payload", nv.max_payload, 16, 4 * kKiB);
    c.bytes("packet_overhead", nv.packet_overhead, 0, 256);
    const double port_max = kMaxNvlinkLinkRate * static_cast<double>(std::max<std::int64_t>(nv.links, 1));
    c.bandwidth_or_zero("port_bandwidth", nv.port_bandwidth, port_max, "the links' rate only");
    c.duration("latency", nv.latency, kMaxHardwareLatency);
}

void check_socket_link(const NvlinkParams& p, const std::string& prefix, const FailFn& fail) {
    const Check c(prefix, fail);
    c.bandwidth("bandwidth", p.link_rate, kMaxBandwidth);
    c.duration("latency", p.latency, kMaxHardwareLatency);
}

void check_host_spread(const HostSpreadParams& p, const std::string& prefix, const FailFn& fail) {
    const Check c(prefix, fail);
    const auto fraction = [&](const char* key, double v, double hi) {
        // Written so that NaN fails too.
        if (!(v >= 0.0 && v <= hi)) c.bad(key, "must be 0.." + format_field(hi) + ", not " + format_field(v));
    };
    fraction("calls", p.calls, 2.0);
    fraction("cpu_copies", p.cpu_copies, 2.0);
    fraction("setup", p.setup, 2.0);
    c.count("draws", p.draws, 3, 64);
    fraction("screen", p.screen, 0.1);
    c.count("full_draw_tlps", p.full_draw_tlps, 0, 1'000'000'000'000);
}

void check_model_error(const ModelErrorParams& p, const std::string& prefix, const FailFn& fail) {
    const Check c(prefix, fail);
    ModelErrorParams copy = p;
    // Every field the same way, by the list the docs and the YAML keys come from.
    struct Each {
        const Check& c;
        void operator()(const FieldInfo& f, double v) const {
            // Written so that NaN fails too.
            if (!(v >= 0.0 && v <= 2.0)) c.bad(f.key, "must be 0..2, not " + format_field(v));
        }
    };
    copy.visit(Each{c});
}

// A ratio or log sigma from 0 to `hi` (written so that NaN fails too).
void within(const Check& c, const char* key, double v, double hi) {
    if (!(v >= 0.0 && v <= hi)) c.bad(key, "must be 0.." + format_field(hi) + ", not " + format_field(v));
}

void check_frame_jitter(const FrameJitterParams& p, const std::string& prefix, const FailFn& fail) {
    const Check c(prefix, fail);
    c.duration("body", p.body, kMaxSoftwareLatency);
    within(c, "body_sigma", p.body_sigma, 2.0);
    within(c, "slow_probability", p.slow_probability, 1.0);
    c.duration("slow_time", p.slow_time, kMaxSoftwareLatency);
    within(c, "slow_sigma", p.slow_sigma, 3.0);
    within(c, "cold_sigma", p.cold_sigma, 3.0);
    c.count("seed", p.seed, 0, 1'000'000'000'000);
    c.count("runs", p.runs, 1, 10001);
}

void check_noisy_host(const NoisyHostParams& p, const std::string& prefix, const FailFn& fail) {
    const Check c(prefix, fail);
    within(c, "noisy_share", p.noisy_share, 1.0);
    within(c, "wake_probability", p.wake_probability, 1.0);
    c.duration("wake_time", p.wake_time, kMaxSoftwareLatency);
    within(c, "wake_sigma", p.wake_sigma, 3.0);
    // At least 10 us between stalls on average keeps a run's draws bounded (a 4 s stream of
    // pageable frames, 101 runs: some 20 million) and is already a host that does little else.
    constexpr Duration kMaxInterval{1'000'000'000'000'000};  // 1000 s
    c.duration("busy_interval", p.busy_interval, kMaxInterval);
    if (p.busy_interval.ps > 0 && p.busy_interval.ps < 10'000'000) {
        c.bad("busy_interval", "must be 0 (none) or at least 10us, not " + to_string(p.busy_interval));
    }
    c.duration("busy_time", p.busy_time, kMaxSoftwareLatency);
    within(c, "busy_sigma", p.busy_sigma, 3.0);
}

void check_model_params(const ModelParams& p, const FailFn& fail) {
    check_link(p.link, "link.", fail);
    check_root_complex(p.root_complex, "root_complex.", fail);
    check_completion_size(p.root_complex, "root_complex.", p.link, "link.", fail);
    check_memory(p.host_memory, "host_memory.", fail);
    check_memory(p.gpu_memory, "gpu_memory.", fail);
    check_dma(p.dma, "dma.", fail);
    if (p.dma.semaphore_size.value > p.link.mps.value) {
        fail("dma.semaphore_size", to_string(p.dma.semaphore_size) + " is above link.mps (" + to_string(p.link.mps) +
                                       "): the semaphore is one write TLP");
        throw std::logic_error("parameter check: the failure callback returned for dma.semaphore_size");
    }
    check_card_dma(p.card_dma, "card_dma.", fail);
    check_runtime(p.runtime, "runtime.", fail);
    check_cpu(p.cpu, "cpu.", fail);
    check_pageable(p.pageable, "pageable.", fail);
    check_gpu(p.gpu, "gpu.", fail);
    check_nvlink(p.nvlink, "nvlink.", fail);
    check_host_spread(p.host_spread, "host_spread.", fail);
    check_model_error(p.model_error, "model_error.", fail);
    check_frame_jitter(p.frame_jitter, "frame_jitter.", fail);
    check_noisy_host(p.noisy_host, "noisy_host.", fail);
}

}  // namespace dmasim::config
