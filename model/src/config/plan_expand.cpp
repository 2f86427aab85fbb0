#include "dmasim/config/plan_expand.h"

#include <algorithm>

namespace dmasim::config {

namespace {

std::int64_t ns(Duration d) { return d.ps / 1000; }

void add_strategy_keys(core::PlanCase& c, const Scenario& s, const std::string& strategy) {
    const StrategyOptions& o = s.options;
    if (strategy == "duplex") {
        c.set("host_memory", o.duplex.host_memory);
        if (o.duplex.one_way_beside) c.set("one_way_beside", 1);
        if (const std::uint64_t k = o.duplex.burst_copies(static_cast<std::uint64_t>(c.integer("size_bytes"))); k > 0) c.set("burst_copies", k);
    }
    if (strategy == "registered") {
        c.set("reuses", o.registered.reuses);
        if (o.registered.setup_only) c.set("setup_only", 1);
    }
    if (strategy == "pinned" && o.pinned.setup_only) c.set("setup_only", 1);
    if (strategy == "pinned" || strategy == "pageable" || strategy == "registered") {
        if (o.host_buffer.offset.value > 0) c.set("host_offset", o.host_buffer.offset.value);
        if (o.host_buffer.fresh) c.set("host_fresh", 1);
    }
    if (strategy == "async_overlap") {
        c.set("streams", o.async_overlap.streams);
        c.set("kernel_ns", ns(o.async_overlap.kernel));
        c.set("issue", o.async_overlap.issue);
    }
    if (strategy == "zero_copy") {
        c.set("access_bytes", o.zero_copy.access.value);
        c.set("stride", o.zero_copy.stride);
        c.set("blocks", o.zero_copy.blocks);
        c.set("threads", o.zero_copy.threads);
        if (o.zero_copy.pattern == "chase") {
            c.set("pattern", o.zero_copy.pattern);
            c.set("memory", o.zero_copy.memory);
            c.set("hops", o.zero_copy.hops);
            if (o.zero_copy.stores_beside > 0) c.set("stores_beside", o.zero_copy.stores_beside);
        }
        if (o.zero_copy.copy_beside != "none") c.set("copy_beside", o.zero_copy.copy_beside);
    }
    if ((strategy == "duplex" || strategy == "zero_copy") && o.compute.duration.ps > 0) {
        c.set("compute_ns", ns(o.compute.duration));
        c.set("compute_blocks", o.compute.blocks);
        c.set("compute_threads", o.compute.threads);
        c.set("compute_bytes", o.compute.bytes.value);
    }
    // The harness cannot change how many copy engines a GPU has: a scenario that sets the
    // count carries it, and a GPU with another count skips the case.
    if (std::find(s.explicit_keys.begin(), s.explicit_keys.end(), "dma.engines") != s.explicit_keys.end()) {
        c.set("copy_engines", s.params.dma.engines);
    }
    // The hardware work queues are the CUDA runtime's, read once as a process starts
    // (CUDA_DEVICE_MAX_CONNECTIONS): a run with another count skips the case.
    if (std::find(s.explicit_keys.begin(), s.explicit_keys.end(), "runtime.connections") != s.explicit_keys.end()) {
        c.set("connections", s.params.runtime.connections);
    }
    if (strategy == "peer") {
        c.set("src_device", o.peer.src_device);
        c.set("dst_device", o.peer.dst_device);
    }
    if (strategy == "periodic") {
        c.set("period_ns", ns(o.periodic.period));
        c.set("frames", o.periodic.count);
        c.set("deadline_ns", ns(o.periodic.deadline.ps > 0 ? o.periodic.deadline : o.periodic.period));
        c.set("via", o.periodic.via);
        c.set("host_memory", o.periodic.via == "pageable" ? std::string("pageable") : std::string("pinned"));
        c.set("kernel_ns", ns(o.periodic.kernel));
        if (o.periodic.covers == "transfer" && o.periodic.kernel.ps > 0) {
            c.set("hw_skip", std::string("dmaprobe times a frame to the end of its processing kernel; "
                                         "frame.covers: transfer is the model's alone"));
        }
        if (o.periodic.via == "fpga_direct" || o.periodic.via == "fpga_via_host") {
            c.set("hw_skip", std::string("frames from a capture card: the GPU machines here have none"));
        }
    }
    if (strategy == "third_party_dma") {
        c.set("hw_skip", std::string("needs a third-party PCIe endpoint (FPGA capture card) doing DMA; "
                                     "GPU machines here have none"));
    }
    // dmaprobe times pinned, pageable and registered copies one way; both ways at once is its
    // duplex (with pinned or pageable host memory).
    if ((strategy == "pinned" || strategy == "pageable" || strategy == "registered") && c.str("direction") == "both") {
        c.set("hw_skip", std::string("both directions at once is measured as strategy duplex (duplex.host_memory: ") +
                             (strategy == "pageable" ? "pageable" : "pinned") + ")");
    }
    if (strategy == "cpu_mapped") {
        c.set("hw_skip", std::string("needs GPU memory mapped into user space through the BAR (gdrcopy's "
                                     "kernel driver); not available on the GPU machines here"));
    }
    if (s.link_explicit) {
        c.set("link_generation", s.params.link.generation);
        c.set("link_lanes", s.params.link.lanes);
    }
}

}  // namespace

core::Plan expand_plan(const std::vector<Scenario>& scenarios) {
    core::Plan plan;
    for (const auto& s : scenarios) {
        if (!s.flows.empty()) {
            for (const auto& f : s.flows) {
                core::PlanCase c;
                c.set("scenario", s.name);
                c.set("strategy", f.strategy);
                c.set("direction", f.direction);
                c.set("size_bytes", f.size);
                c.set("repetitions", s.repetitions);
                c.set("warmup", s.warmup);
                c.set("variant", "flow=" + f.name);
                c.set("hw_skip", std::string("concurrent flows on a modelled platform are simulated only"));
                plan.cases.push_back(std::move(c));
            }
            continue;
        }
        for (const auto& strategy : s.strategies) {
            const std::vector<std::uint64_t> sizes =
                strategy == "periodic" ? std::vector<std::uint64_t>{s.options.periodic.size.value} : s.sizes;
            std::vector<std::string> peer_modes{""};
            const bool local_copy = strategy == "peer" && s.options.peer.src_device == s.options.peer.dst_device;
            if (strategy == "peer") {
                peer_modes = s.options.peer.access == "both" ? std::vector<std::string>{"1", "0"}
                                                            : std::vector<std::string>{s.options.peer.access == "on" ? "1" : "0"};
            }
            for (const auto& direction : s.directions) {
                for (const auto size : sizes) {
                    for (const auto& peer_mode : peer_modes) {
                        core::PlanCase c;
                        c.set("scenario", s.name);
                        c.set("strategy", strategy);
                        c.set("direction", direction);
                        c.set("size_bytes", size);
                        c.set("repetitions", s.repetitions);
                        c.set("warmup", s.warmup);
                        add_strategy_keys(c, s, strategy);
                        if (!peer_mode.empty()) {
                            // Both modes share scenario, direction and size: the variant keeps
                            // their rows apart.
                            c.set("peer_access", peer_mode);
                            c.set("variant", std::string(local_copy ? "local" : peer_mode == "1" ? "peer=on" : "peer=off"));
                            if (peer_mode == "1" && direction == "both" && s.options.peer.enable == "one_way") {
                                c.set("hw_skip", std::string("peer access enabled one way only (peer.enable: one_way): "
                                                             "dmaprobe enables it both ways"));
                            }
                        }
                        plan.cases.push_back(std::move(c));
                    }
                }
            }
        }
    }
    return plan;
}

}  // namespace dmasim::config
