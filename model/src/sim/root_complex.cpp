#include "dmasim/sim/root_complex.h"

#include <algorithm>
#include <cmath>

namespace dmasim::sim {

RootComplex::RootComplex(sc_core::sc_module_name name, const Params& params, std::uint16_t node_id,
                         const std::vector<std::uint16_t>& peers, bool is_switch, std::uint16_t memory_node)
    : sc_core::sc_module(name), params_(params), forward_ps_(static_cast<double>(params.forward_latency.ps)), node_id_(node_id),
      is_switch_(is_switch), memory_node_(memory_node) {
    if (!is_switch_) memory = std::make_unique<MemoryPort>("memory");
    for (std::size_t i = 0; i < peers.size(); ++i) {
        const std::string n = "port" + std::to_string(i);
        auto port = std::make_unique<Port>(n, peers[i]);
        fw_.push_back(std::make_unique<FwPort<RootComplex>>(*this, static_cast<int>(i)));
        bw_.push_back(std::make_unique<BwPort<RootComplex>>(*this, static_cast<int>(i)));
        port->ingress.bind(*fw_.back());
        port->egress.bind(*bw_.back());
        ports.push_back(std::move(port));
        egress_.push_back(std::make_unique<EgressQueue>());
    }

    for (auto& q : egress_) q->queue.event().calls<&RootComplex::egress>(this);
    write_release_.event().calls<&RootComplex::release_writes>(this);
    // What the host learns, it learns at its own (the kernel's) time (fabric.h).
    semaphores_.event().calls<&RootComplex::notify_semaphores>(this);
    semaphores_.event().wait_for_kernel();
    held_notices_.event().calls<&RootComplex::notify_semaphores>(this);
    held_notices_.event().wait_for_kernel();
    cpu_done_.event().calls<&RootComplex::notify_semaphores>(this);
    cpu_done_.event().wait_for_kernel();
}

void RootComplex::configure(const Params& params, const std::vector<config::LinkParams>& port_links,
                            const config::MemoryParams& host_memory) {
    params_ = params;
    forward_ps_ = static_cast<double>(params_.forward_latency.ps);
    peer_write_log2_ = 0;
    for (std::uint64_t w = params_.peer_write_size.value; w > 1; w >>= 1) ++peer_write_log2_;
    if (port_links.size() != ports.size()) SC_REPORT_ERROR(name(), "configure: one link setting per port expected");
    // Completions never exceed the port's MPS and are cut at its RCB multiples (spec).
    completion_bytes_.clear();
    for (const auto& link : port_links) {
        auto bytes = static_cast<std::uint32_t>(std::min(params_.completion_size.value, link.mps.value));
        bytes -= bytes % static_cast<std::uint32_t>(link.rcb.value);
        completion_bytes_.push_back(bytes);
    }
    memory_latency_ps_ = static_cast<double>(host_memory.latency.ps);
    memory_ps_per_byte_ = 1e12 / host_memory.bandwidth.bytes_per_s;
    // Configured between cases, with the model at rest and the case clock at zero.
    merge_free_ps_ = 0.0;
    held_free_ps_ = 0.0;
    last_release_ps_ = 0.0;
    const auto ps_per_byte = [](core::Bandwidth b) { return b.bytes_per_s > 0.0 ? 1e12 / b.bytes_per_s : 0.0; };
    port_ps_per_byte_ = ps_per_byte(params_.port_bandwidth);
    port_total_ps_per_byte_ = ps_per_byte(params_.port_bandwidth_total);
    port_tlp_ps_ = static_cast<double>(params_.port_tlp_time.ps);
    port_in_free_ps_.assign(ports.size(), 0.0);
    port_out_free_ps_.assign(ports.size(), 0.0);
    port_shared_free_ps_.assign(ports.size(), 0.0);
    shared_last_write_.assign(ports.size(), 0);
    write_turn_ps_.assign(ports.size(), 0.0);
    completion_turn_ps_.assign(ports.size(), 0.0);
    reads_open_.assign(ports.size(), 0);
    reads_taken_.assign(ports.size(), 0);
    reads_answered_.assign(ports.size(), 0);
    held_.assign(ports.size(), {});
    held_head_.assign(ports.size(), 0);
    last_write_ps_.assign(ports.size(), -1.0);
    last_write_bytes_.assign(ports.size(), 0);
    write_done_ps_.assign(ports.size(), 0.0);
    memory_path_ps_per_byte_ = ps_per_byte(params_.memory_bandwidth);
    held_ps_per_byte_ = ps_per_byte(params_.held_write_bandwidth);
    memory_write_free_ps_.assign(ports.size(), 0.0);
    memory_read_free_ps_.assign(ports.size(), 0.0);
    read_rate_.assign(ports.size(), 0.0);
    read_rate_at_ps_.assign(ports.size(), 0.0);
    // read_latency_per_gbps is a time per GB/s, 1e-3 bytes a picosecond.
    loaded_ps_per_rate_ = static_cast<double>(params_.read_latency_per_gbps.ps) * 1e3;
    read_window_ps_ = std::max(1.0, static_cast<double>(params_.read_rate_window.ps));
    ports_ps_per_byte_ = ps_per_byte(params_.ports_bandwidth_total);
    ports_write_free_ps_ = 0.0;
    ports_read_free_ps_ = 0.0;
    io_written_.fill(JobBytes{});
    io_next_ = 0;
    io_free_ = params_.io_cache.value;
    stats_ = RootComplexStats{};
}

double io_cache_kept_share(std::uint64_t extent, std::uint64_t cache) {
    if (cache == 0) return 0.0;
    if (extent <= cache) return 1.0;
    const double r = static_cast<double>(extent) / static_cast<double>(cache);
    // g(h) = h - exp(-r (1 - h)) is negative at 0 and positive at its minimum 1 - ln(r) / r
    // (r > 1), where the kept share lies below; h = 1 is the other root, not reached from an
    // empty cache. Bisection: 60 halvings are below a double's resolution.
    double lo = 0.0;
    double hi = 1.0 - std::log(r) / r;
    for (int i = 0; i < 60; ++i) {
        const double mid = 0.5 * (lo + hi);
        (mid - std::exp(-r * (1.0 - mid)) < 0.0 ? lo : hi) = mid;
    }
    return 0.5 * (lo + hi);
}

std::uint64_t io_cache_free_bytes(std::uint64_t extent, std::uint64_t cache) {
    if (extent <= cache) return cache;
    return static_cast<std::uint64_t>(std::llround(io_cache_kept_share(extent, cache) * static_cast<double>(extent)));
}

void RootComplex::set_write_extent(std::uint64_t bytes) {
    // No extent known: the program's first pass, which fills the cache before it evicts.
    io_free_ = bytes == 0 ? params_.io_cache.value : io_cache_free_bytes(bytes, params_.io_cache.value);
}

bool RootComplex::idle() const {
    for (std::size_t p = 0; p < held_.size(); ++p) {
        if (held_head_[p] < held_[p].size()) return false;
    }
    return write_release_.empty() && semaphores_.empty() && held_notices_.empty() && cpu_done_.empty() &&
           std::all_of(egress_.begin(), egress_.end(), [](const auto& q) { return q->queue.empty(); });
}

void RootComplex::set_route(std::uint16_t destination, int port) {
    if (route_.size() <= destination) route_.resize(destination + 1U, -1);
    route_[destination] = port;
}

int RootComplex::port_towards(std::uint16_t node) const {
    if (node < route_.size() && route_[node] >= 0) return route_[node];
    SC_REPORT_ERROR(name(), ("no route towards node " + std::to_string(node)).c_str());
    return 0;
}

tlm::tlm_sync_enum RootComplex::port_fw(int port, Tlp& t, tlm::tlm_phase& phase, sc_core::sc_time&) {
    DMASIM_ASSERT(phase == tlm::BEGIN_REQ);
    const double now = now_ps();
    const std::uint16_t destination = t.kind == TlpKind::kCompletion ? t.requester : t.completer;
    if (!is_switch_ && t.kind == TlpKind::kCompletion && destination == memory_node_) {
        // Data for one of the CPU's loads from a device mapping.
        if (t.last && listener_ != nullptr) cpu_done_.push(now, false);
        return tlm::TLM_COMPLETED;
    }
    if (is_switch_ || destination != memory_node_) {
        // Not for this socket's memory: on to the port towards its destination. Its ingress
        // buffer stays taken until it has left.
        stats_.forwarded++;
        // A root complex may cut a peer write into smaller writes (root_complex.peer_write_size):
        // each then pays its header and credit on every link it crosses from here on.
        if (!is_switch_ && t.peer && peer_write_log2_ > 0 && t.payload > (1U << peer_write_log2_) &&
            (t.packet_log2 == 0 || t.packet_log2 > peer_write_log2_)) {
            t.packet_log2 = peer_write_log2_;
        }
        const core::Duration hop = is_switch_ ? params_.switch_latency : params_.forward_latency;
        double due = now + static_cast<double>(hop.ps);
        if (p2p_via_cpu_ && t.payload > 0) {
            // Bounced through the CPU: the data is written to host memory and read back. Both
            // accesses are queued now (the controller serves in arrival order); the TLP goes on
            // once both are done and the read has had its latency after the write.
            const double w = memory->access_ps(true, t.payload, forward_ps_);
            const double r = memory->access_ps(false, t.payload, forward_ps_);
            due = now + std::max(w, r + memory_latency_ps_);
        }
        egress_[static_cast<std::size_t>(port_towards(destination))]->queue.push(due, Out{t, port});
        return tlm::TLM_ACCEPTED;
    }
    switch (t.kind) {
        case TlpKind::kMemWrite: {
            stats_.writes++;
            last_write_ps_[static_cast<std::size_t>(port)] = now;
            last_write_bytes_[static_cast<std::size_t>(port)] = t.payload;
            // The port's data path inward carries the write to the path to memory at its rate,
            // one write after another (0: no limit): the write is done that much later, and its
            // buffer frees no sooner. The controller is still asked at arrival: it serves in the
            // order it is asked, and a request dated ahead would hold back those behind it.
            double port_ps = 0.0;
            if (port_ps_per_byte_ > 0.0) {
                double& in = port_in_free_ps_[static_cast<std::size_t>(port)];
                in = std::max(now, in) + static_cast<double>(t.payload) * port_ps_per_byte_;
                port_ps = in - now;
            }
            double done = now + memory->access_ps(true, t.payload, forward_ps_) + port_ps;
            // Posted writes land in order: a copy's release lands behind the writes into lines a
            // core holds that the host has still to take (held_write_bandwidth).
            if (t.semaphore && held_free_ps_ > now) done += held_free_ps_ - now;
            double& ordered = write_done_ps_[static_cast<std::size_t>(port)];
            ordered = std::max(ordered, done);
            // The ingress buffer (what the posted credits count) is free once the write has
            // entered the path to the controller: that path is a pipeline `forward` long with
            // its own buffers, not part of the credited buffer, and the controller takes a write
            // into its queue when it starts on it. So the buffer frees a forward latency before
            // the controller starts on the write: at once when the controller keeps up, at the
            // controller's pace when it does not. The data is visible a memory latency after
            // the controller has taken it.
            if (t.semaphore) {
                // A copy's release becomes visible only once the completions of the reads its
                // port took in before it have left the port: the GPU makes a copy's writes
                // visible with a read behind them (a flush), which the port answers in the order
                // it took reads in, so a copy out of the GPU that ends while a copy into it has
                // reads queued ends as the last of those leaves, whatever its size. Measured
                // (results/h100-sxm/isolating/d2h-landing): a 4 KiB copy out of the GPU beside a
                // copy into it of 2 or 4 MiB ends 8.9-10.2 us late while that copy has its window
                // of reads out, and within its last window ends with it (0.5 us before to 1.6
                // after), wherever it starts; its data, posted writes, land on time. The flush's
                // own round trip is not a packet here: the blocking copies, which the calibration
                // fits, hold it in their fixed costs (a trial that sent it, trial-flush.patch
                // there, put copies out of the GPU 0.7 us behind copies into it at 4 KiB, where
                // they are 0.65 us ahead).
                const auto p = static_cast<std::size_t>(port);
                if (reads_answered_[p] >= reads_taken_[p] || (listener_ != nullptr && !listener_->release_waits_for_reads(t.job))) {
                    semaphores_.push(done, t.job);
                } else {
                    if (held_head_[p] == held_[p].size()) {
                        held_[p].clear();
                        held_head_[p] = 0;
                    }
                    held_[p].push_back(HeldRelease{reads_taken_[p], done, t.job});
                    if (listener_ != nullptr) held_notices_.push(done, t.job);
                }
            }
            const double accepted = done - memory_latency_ps_ - static_cast<double>(t.payload) * memory_ps_per_byte_;
            double release = accepted - forward_ps_;
            if (t.line_write == LineWrite::kHeld) {
                // Whole lines a CPU core's cache holds: the host takes each out of the core before
                // the write lands, one write after another (held_write_bandwidth); as with the
                // merge below, the buffer frees when that starts and posted writes behind it wait.
                if (held_ps_per_byte_ > 0.0) {
                    const double start = std::max(now, held_free_ps_);
                    held_free_ps_ = start + static_cast<double>(t.payload) * held_ps_per_byte_;
                    release = std::max(release, start);
                }
            } else if (t.line_write != LineWrite::kWhole) {
                // A write of part of a host cache line is merged into the line by the host, one
                // write after another, and more slowly when neighbouring writes merge into the
                // same line (measured: results/h100-sxm/isolating/zero-copy-partial-writes). As
                // with the controller, the buffer frees when the merge starts on its write, and
                // posted writes behind it wait (they may not pass it).
                const double start = std::max(now, merge_free_ps_);
                const core::Duration cost = t.line_write == LineWrite::kShared ? params_.shared_line_write : params_.partial_write;
                merge_free_ps_ = start + static_cast<double>(cost.ps);
                release = std::max(release, start);
            }
            if ((memory_path_ps_per_byte_ > 0.0 || ports_ps_per_byte_ > 0.0) && evicts(t.job, t.host_kib, t.payload)) {
                // The write takes a line of the I/O cache whose old contents (a line this
                // transfer wrote before) go back to memory first. The write-back goes ahead of
                // the reads queued on the port's way to memory, which wait behind it (measured:
                // the D2H copy keeps its rate, the H2D reads lose), and the write's buffer frees
                // when it starts. So on the way all ports share (ports_bandwidth_total): there a
                // write-back waits only for write-backs, and every port's reads wait for it
                // (measured: two GPUs' copies of 256 MiB, one each way, the device-to-host one
                // keeps its rate and the host-to-device one loses).
                const auto p = static_cast<std::size_t>(port);
                const double start = std::max(now + forward_ps_, memory_write_free_ps_[p]);
                if (memory_path_ps_per_byte_ > 0.0) {
                    const double bytes_ps = static_cast<double>(t.payload) * memory_path_ps_per_byte_;
                    memory_write_free_ps_[p] = start + bytes_ps;
                    memory_read_free_ps_[p] = std::max(memory_read_free_ps_[p], now + forward_ps_) + bytes_ps;
                }
                const double all_start = std::max(now + forward_ps_, ports_write_free_ps_);
                if (ports_ps_per_byte_ > 0.0) {
                    const double all_ps = static_cast<double>(t.payload) * ports_ps_per_byte_;
                    ports_write_free_ps_ = all_start + all_ps;
                    ports_read_free_ps_ = std::max(ports_read_free_ps_, now + forward_ps_) + all_ps;
                }
                release = std::max(release, std::max(start, all_start) - forward_ps_);
                stats_.writebacks++;
            }
            // Posted writes leave the buffer in order.
            release = std::max(release, last_release_ps_);
            last_release_ps_ = release;
            const auto p = static_cast<std::size_t>(port);
            // Its turn at the shared stage unless a completion waits and a write took it last.
            const bool yields = port_total_ps_per_byte_ > 0.0 && shared_last_write_[p] && completion_waiting(p);
            if (release <= now + 0.5 && write_release_.empty() && !yields && take_shared_stage(p, t.payload, true)) {
                return tlm::TLM_COMPLETED;
            }
            write_release_.push(std::max(now, release), Release{port, t});
            return tlm::TLM_ACCEPTED;
        }
        case TlpKind::kMemRead: {
            stats_.reads++;
            const auto out_port = static_cast<std::size_t>(port_towards(t.requester));
            const double read_ps = memory->access_ps(false, t.length, forward_ps_) +
                                   loaded_read_ps(static_cast<std::size_t>(port), now, t.length);
            double data_ready = now + read_ps + forward_ps_;
            // PCIe ordering: a read may not pass a posted write that came in before it on the same
            // path, so the port performs it only once the writes before it are in memory (queued
            // on the port's inward path, root_complex.port_bandwidth, and at the controller), and
            // then takes its own way there and back. A load the GPU sends while it streams writes
            // into host memory waits that long: measured, one load of a pointer chase through host
            // memory takes 0.41-1.70 us more beside a copy out of the GPU (1.13-1.20 us alone; six
            // H200 and 2xH200 leases, results/h100-sxm/isolating/reads-behind-writes; 0.45-0.65 on
            // four H100 leases, zero-copy-exchange). The controller is asked at arrival, as for a
            // write: a request dated ahead would hold back other ports' requests.
            const double ordered = write_done_ps_[static_cast<std::size_t>(port)];
            if (ordered > now + forward_ps_) data_ready = std::max(data_ready, ordered + read_ps);
            if (memory_path_ps_per_byte_ > 0.0) {
                // The port's way to memory, behind the write-backs and reads before it.
                double& free = memory_read_free_ps_[static_cast<std::size_t>(port)];
                // Counted once write-backs share the way: reads alone fill it only as far as the
                // engines' reads in flight, within a window's time, as they fill everything else.
                if (stats_.writebacks > 0) stats_.memory_wait_ps += std::max(0.0, free - (now + forward_ps_));
                free = std::max(free, now + forward_ps_) + static_cast<double>(t.length) * memory_path_ps_per_byte_;
                data_ready = std::max(data_ready, free + forward_ps_);
            }
            if (ports_ps_per_byte_ > 0.0) {
                // All ports' way to memory, behind the write-backs and reads of every port before
                // it. Its queue fills only while they together exceed its rate, which the
                // engines' reads in flight hide for a while: counted, so that a fast-forward sees
                // the wait grow (the sum is affine only in steady state).
                stats_.memory_wait_ps += std::max(0.0, ports_read_free_ps_ - (now + forward_ps_));
                ports_read_free_ps_ = std::max(ports_read_free_ps_, now + forward_ps_) +
                                      static_cast<double>(t.length) * ports_ps_per_byte_;
                data_ready = std::max(data_ready, ports_read_free_ps_ + forward_ps_);
            }
            if (port_ps_per_byte_ > 0.0) {
                // The port's data path outward: the read's data leaves for the link at its rate,
                // reads one after another in the order they came in.
                double& free = port_out_free_ps_[out_port];
                free = std::max(data_ready, free) + static_cast<double>(t.length) * port_ps_per_byte_;
                data_ready = free;
            }
            const std::uint32_t per = completion_bytes_[out_port];
            if (t.length > 0) {
                egress_[out_port]->queue.push(data_ready, Out{t, -1, false, per, 0});
                ++reads_open_[out_port];
                reads_taken_[out_port] += t.length;
            }
            stats_.completions += (t.length + per - 1) / per;
            // The request's ingress buffer (a non-posted credit) is free as soon as the request
            // has entered the path to the controller, as a posted write's is (above): the
            // forward latency is a pipeline with buffers of its own. Holding the buffer for it
            // capped reads in flight at credits / forward latency: a zero-copy kernel's 4-byte
            // reads at half the measured rate.
            return tlm::TLM_COMPLETED;
        }
        case TlpKind::kCompletion:
            SC_REPORT_ERROR(name(), "a completion for the CPU arrived, but the CPU issued no reads");
            return tlm::TLM_COMPLETED;
    }
    return tlm::TLM_COMPLETED;
}

double RootComplex::loaded_read_ps(std::size_t port, double now, std::uint32_t bytes) {
    if (loaded_ps_per_rate_ <= 0.0) return 0.0;
    // Measured: a load's round trip grows in proportion to the reads its port answers, from the
    // first GB/s on, not as a queue that fills only near the link's rate
    // (results/h100-sxm/isolating/zero-copy-sm-groups, curve). An exponential average of the
    // bytes asked for keeps one number a port and no event.
    double& rate = read_rate_[port];
    double& at = read_rate_at_ps_[port];
    if (now > at) {
        rate *= std::exp(-(now - at) / read_window_ps_);
        at = now;
    }
    rate += static_cast<double>(bytes) / read_window_ps_;
    return loaded_ps_per_rate_ * rate;
}

tlm::tlm_sync_enum RootComplex::port_bw(int port, Tlp&, tlm::tlm_phase& phase, sc_core::sc_time&) {
    DMASIM_ASSERT(phase == tlm::END_REQ);
    // The link took a TLP off its transmit queue (it calls from inside its transmit process):
    // offer the next one now, not from a process woken for it a delta cycle later.
    egress_[static_cast<std::size_t>(port)]->link_ready = true;
    drain(static_cast<std::size_t>(port));
    return tlm::TLM_COMPLETED;
}

void RootComplex::egress() {
    for (std::size_t i = 0; i < egress_.size(); ++i) drain(i);
}

void RootComplex::drain(std::size_t i) {
    EgressQueue& q = *egress_[i];
    while (q.link_ready && q.queue.due()) {
        Out& front = q.queue.front();
        if (front.completion_bytes > 0) {
            // The next completion of a read; the entry stays until the last one has left.
            Tlp c;
            c.kind = TlpKind::kCompletion;
            c.requester = front.tlp.requester;
            c.completer = node_id_;
            c.payload = std::min(front.completion_bytes, front.tlp.length - front.answered);
            // Writes and completions take the shared stage in turn while both wait (measured:
            // both ways at once, each moves half of port_bandwidth_total), whichever of the two
            // wakes first: writes waiting go first when a completion took it last.
            if (port_total_ps_per_byte_ > 0.0 && !shared_last_write_[i] && write_release_.due() && !releasing_) {
                release_writes();
            }
            if (!take_shared_stage(i, c.payload, false)) {
                notify_after_ps(q.queue.event(), shared_stage_free_ps(i, false) - now_ps());
                return;
            }
            c.tag = front.tlp.tag;
            c.job = front.tlp.job;
            front.answered += c.payload;
            reads_answered_[i] += c.payload;
            DMASIM_ASSERT(reads_answered_[i] <= reads_taken_[i]);
            release_held(i);
            c.last = front.answered == front.tlp.length;
            if (c.last) {
                q.queue.pop();
                --reads_open_[i];
            }
            tlm::tlm_phase phase = tlm::BEGIN_REQ;
            sc_core::sc_time delay = sc_core::SC_ZERO_TIME;
            const tlm::tlm_sync_enum r = ports[i]->egress->nb_transport_fw(c, phase, delay);
            q.link_ready = (r == tlm::TLM_UPDATED && phase == tlm::END_REQ);
            continue;
        }
        const Out out = front;
        q.queue.pop();
        Tlp t = out.tlp;
        tlm::tlm_phase phase = tlm::BEGIN_REQ;
        sc_core::sc_time delay = sc_core::SC_ZERO_TIME;
        const tlm::tlm_sync_enum r = ports[i]->egress->nb_transport_fw(t, phase, delay);
        q.link_ready = (r == tlm::TLM_UPDATED && phase == tlm::END_REQ);
        if (out.ingress >= 0) free_buffer(out.ingress, out.tlp);
        if (out.from_cpu && out.tlp.kind == TlpKind::kMemWrite && listener_ != nullptr) cpu_done_.push(now_ps(), true);
    }
    if (q.link_ready) q.queue.rearm();
}

void RootComplex::inject(const Tlp& t) {
    Out out{t, -1, true};
    egress_[static_cast<std::size_t>(port_towards(t.completer))]->queue.push(
        now_ps() + static_cast<double>(params_.forward_latency.ps), out);
}

void RootComplex::free_buffer(int port, const Tlp& tlp) {
    Tlp t = tlp;
    tlm::tlm_phase phase = tlm::END_REQ;
    sc_core::sc_time delay = sc_core::SC_ZERO_TIME;
    ports[static_cast<std::size_t>(port)]->ingress->nb_transport_bw(t, phase, delay);
}

bool RootComplex::take_shared_stage(std::size_t port, std::uint32_t bytes, bool write) {
    if (port_total_ps_per_byte_ <= 0.0) return true;
    const double now = now_ps();
    if (shared_stage_free_ps(port, write) > now + 0.5) return false;
    // A packet's turn: its payload, and what handling one packet costs the path whatever its size
    // (port_tlp_time: small packets both ways hold the zero-copy exchange below its links).
    const double slot = static_cast<double>(bytes) * port_total_ps_per_byte_ + port_tlp_ps_;
    port_shared_free_ps_[port] = now + slot;
    // The turns are not given up: while the other direction is active, the slot after this one
    // is its own, used or not (measured: past the I/O cache, an H2D copy that host memory holds
    // to 41 GB/s leaves the D2H copy at half the port's 100 GB/s, 51 GB/s, not the 55 its link
    // could take; with eight CPU threads storing, D2H 48-51 GB/s beside an H2D copy at 37-47;
    // results/h100-sxm/isolating/duplex-host-memory).
    (write ? write_turn_ps_ : completion_turn_ps_)[port] = now + (other_direction_active(port, write) ? 2.0 : 1.0) * slot;
    shared_last_write_[port] = write ? 1 : 0;
    return true;
}

double RootComplex::shared_stage_free_ps(std::size_t port, bool write) const {
    return std::max(port_shared_free_ps_[port], (write ? write_turn_ps_ : completion_turn_ps_)[port]);
}

bool RootComplex::other_direction_active(std::size_t port, bool write) const {
    if (write) return reads_open_[port] > 0;
    // Writes stream in back to back: the next comes within two of the last one's times on the
    // port's inward path.
    if (last_write_ps_[port] < 0.0) return false;
    const double per_byte = port_ps_per_byte_ > 0.0 ? port_ps_per_byte_ : port_total_ps_per_byte_;
    return now_ps() - last_write_ps_[port] <= 2.0 * (static_cast<double>(last_write_bytes_[port]) * per_byte + port_tlp_ps_);
}

bool RootComplex::completion_waiting(std::size_t port) const {
    const EgressQueue& q = *egress_[port];
    return q.link_ready && q.queue.due() && q.queue.front().completion_bytes > 0;
}

bool RootComplex::evicts(std::uint32_t job, std::uint32_t host_kib, std::uint32_t bytes) {
    if (params_.io_cache.value == 0) return false;
    JobBytes* entry = nullptr;
    for (auto& e : io_written_) {
        if (e.job == job && e.seen) entry = &e;
    }
    if (entry == nullptr) {
        // A job not seen lately: it takes the oldest entry.
        entry = &io_written_[io_next_];
        io_next_ = (io_next_ + 1) % kIoJobs;
        *entry = JobBytes{job, std::uint64_t{host_kib} << 10, true};
    }
    entry->bytes += bytes;
    return entry->bytes > io_free_;
}

void RootComplex::release_writes() {
    releasing_ = true;
    while (write_release_.due()) {
        const Release& r = write_release_.front();
        const auto p = static_cast<std::size_t>(r.port);
        // A completion waiting takes its turn first when a write took the stage last.
        if (shared_last_write_[p] && completion_waiting(p)) drain(p);
        if (!take_shared_stage(p, r.tlp.payload, true)) {
            // Posted writes leave their buffers in order: all wait for the shared stage.
            notify_after_ps(write_release_.event(), shared_stage_free_ps(p, true) - now_ps());
            releasing_ = false;
            return;
        }
        free_buffer(r.port, r.tlp);
        write_release_.pop();
    }
    write_release_.rearm();
    releasing_ = false;
}

// The releases whose owed completions have now all left the port.
void RootComplex::release_held(std::size_t port) {
    std::vector<HeldRelease>& held = held_[port];
    std::size_t& head = held_head_[port];
    while (head < held.size() && held[head].answered_by <= reads_answered_[port]) {
        stats_.longest_release_hold_ps = std::max(stats_.longest_release_hold_ps, now_ps() - held[head].done_ps);
        semaphores_.push(std::max(held[head].done_ps, now_ps()), held[head].job);
        ++head;
    }
}

void RootComplex::notify_semaphores() {
    while (held_notices_.due()) {
        listener_->semaphore_held(held_notices_.front());
        held_notices_.pop();
    }
    held_notices_.rearm();
    while (semaphores_.due()) {
        if (listener_ != nullptr) listener_->semaphore_written(semaphores_.front());
        semaphores_.pop();
    }
    semaphores_.rearm();
    while (cpu_done_.due()) {
        if (cpu_done_.front()) {
            listener_->cpu_write_left();
        } else {
            listener_->cpu_read_done();
        }
        cpu_done_.pop();
    }
    cpu_done_.rearm();
}

}  // namespace dmasim::sim
