#include "dmasim/sim/dma_engine.h"

#include <algorithm>
#include <string>

#include "dmasim/core/units.h"
#include "dmasim/gpu/coalescing.h"
#include "dmasim/pcie/wire.h"
#include "dmasim/sim/root_complex.h"
#include "dmasim/sim/trace.h"

namespace dmasim::sim {

DmaEngine::DmaEngine(sc_core::sc_module_name name, const Params& params, int index, std::uint16_t gpu_node,
                     Doorbell& doorbell)
    : sc_core::sc_module(name), gpu_memory("gpu_memory"), params_(params), index_(index), gpu_node_(gpu_node),
      doorbell_(doorbell) {
    launch_event_.calls<&DmaEngine::launch>(this);
    chunks_.event().calls<&DmaEngine::chunk_ready>(this);
    landed_.event().calls<&DmaEngine::data_landed>(this);
    warp_ready_.event().calls<&DmaEngine::warp_ready>(this);
    line_back_event_.calls<&DmaEngine::line_back>(this);
    release_event_.calls<&DmaEngine::released>(this);
}

void DmaEngine::configure(const Params& params, const config::LinkParams& link) {
    DMASIM_ASSERT(!active_);
    params_ = params;
    mps_ = static_cast<std::uint32_t>(link.mps.value);
    mrrs_ = static_cast<std::uint32_t>(link.mrrs.value);
    completion_bytes_per_ps_ = pcie::completion_efficiency(link, mps_).gbps * 1e-3;
    chunks_ahead_ = static_cast<int>(std::max<std::uint64_t>(1, params_.read_ahead.value / kChunk));
    stats_ = EngineStats{};
    return_path_ps_ = 0.0;
    kernel_end_ps_ = 0.0;
    lines_back_.clear();
    line_back_armed_ = false;
    // A case that ended early (an error) may leave tags taken; the next starts with all free.
    if (free_tags_.size() != tag_remaining_.size()) reset_tags(tag_remaining_.size());
}

// The pool grows to what a job needs when it starts, rather than to the largest any job may need
// (16 384 tags for SM traffic) at every configure: configure runs for every engine of every
// case, and filling that pool was an eighth of a calibration step.
void DmaEngine::reset_tags(std::size_t tags) {
    tag_remaining_.assign(tags, 0);
    free_tags_.clear();
    free_tags_.reserve(tags);
    for (std::size_t i = tags; i-- > 0;) free_tags_.push_back(static_cast<std::uint32_t>(i));
}

void DmaEngine::start(const CopyJob& job) {
    DMASIM_ASSERT(!active_);
    // The next copy of a stream queued behind one into host memory starts dma.host_write_hold
    // later still, after that one's semaphore (which the CPU and events see on time); other
    // streams' copies do not wait for it. While its channel still fetches the work queued behind
    // it, the hold is dma.host_write_hold_fetching instead (isolating/duplex-burst, chaincontext).
    const core::Duration hold = job.fetching ? params_.host_write_hold_fetching : params_.host_write_hold;
    const double hold_ps = job.queued && job_.into_host_memory && job.stream == job_.stream ? static_cast<double>(hold.ps) : 0.0;
    job_ = job;
    active_ = true;
    started_ = false;
    pending_ = false;
    semaphore_sent_ = false;
    data_in_memory_ = false;
    issued_ = received_ = available_ = fetched_ = unwritten_ = 0;
    chunks_in_flight_ = 0;
    outstanding_ = 0;
    lines_back_.clear();
    outstanding_cap_ = job.max_outstanding ? job.max_outstanding : static_cast<std::uint32_t>(params_.max_read_requests);
    read_size_ = job.request_bytes ? job.request_bytes : mrrs_;
    write_size_ = job.request_bytes ? job.request_bytes : mps_;
    // Only partial writes (smaller than the host's line, spaced apart) are classified per write.
    partial_writes_ = job.write_spacing > 0 && write_size_ < job.host_line;
    write_count_ = (job.bytes + write_size_ - 1) / write_size_;
    if (tag_remaining_.size() < outstanding_cap_) reset_tags(outstanding_cap_);
    // A scatter-gather engine moves nothing its descriptors do not cover yet; a read fetches as
    // many as one read request holds (link MRRS), at most descriptors_per_fetch.
    described_ = requested_desc_ = 0;
    desc_remaining_ = 0;
    offering_descriptors_ = false;
    desc_block_ = 0;
    if (params_.descriptor_bytes.value == 0 || job.loop.warps > 0 || job.loop.round_bytes > 0) {
        described_ = requested_desc_ = job.bytes;
    } else {
        const std::uint64_t per_read = std::max<std::uint64_t>(1, mrrs_ / params_.descriptor_size.value);
        desc_block_ = std::min<std::uint64_t>(per_read, static_cast<std::uint64_t>(params_.descriptors_per_fetch)) *
                      params_.descriptor_bytes.value;
    }
    warp_reads_ = job.loop.warps > 0 && job.direction == CopyDirection::kHostToDevice;
    warp_ready_.clear();
    accesses_open_.clear();
    stores_free_ps_ = 0.0;
    claimed_ = 0;
    if (warp_reads_) {
        warp_issued_.assign(job.loop.warps, 0);
        warp_access_ps_.assign(job.loop.warps, 0.0);
        warp_access_gen_.assign(job.loop.warps, 0);
        warp_left_.assign(job.loop.warps, 0);
        tag_warp_.resize(tag_remaining_.size());
    }
    queued_requests_ = retired_requests_ = 0;
    ticket_head_ = ticket_count_ = 0;
    if (warp_reads_ && job.stores != nullptr) tickets_.resize(job.loop.warps + 1);
    available_since_.clear();
    if (job.fed) {
        available_ = fetched_ = fed_early_;
        fed_early_ = 0;
        if (available_ > 0) available_since_.push(Available{available_, now_ps()});
    }
    // Data fetched with the work took the link too: no sooner than the link carries it.
    double fetch_ps = static_cast<double>(job.fetch_ps);
    if (job.fetched_bytes > 0 && completion_bytes_per_ps_ > 0.0) {
        fetch_ps = std::max(fetch_ps, static_cast<double>(job.fetched_bytes) / completion_bytes_per_ps_);
    }
    if (job.writes_fetched) fetch_ps += static_cast<double>(params_.gpu_memory_latency.ps);
    launch_event_.notify(to_sc(job.queued ? params_.queued_launch_latency : params_.launch_latency) +
                         ps_delay(static_cast<double>(job.acquire_ps + job.turn_ps) + fetch_ps + hold_ps));
}

void DmaEngine::launch() {
    started_ = true;
    job_start_ps_ = now_ps();
    if (job_.direction == CopyDirection::kDeviceToHost) read_ahead();
    if (warp_reads_) {
        for (std::uint32_t w = 0; w < job_.loop.warps; ++w) warp_ready_.push(job_start_ps_, w);
        queued_requests_ = static_cast<std::uint64_t>(job_.loop.warps) * job_.loop.lines;
    }
    prepare();
}

void DmaEngine::feed(std::uint64_t bytes) {
    if (!active_ || !job_.fed) {
        fed_early_ += bytes;
        return;
    }
    available_ += bytes;
    fetched_ += bytes;
    available_since_.push(Available{available_, now_ps()});
    prepare();
}

bool DmaEngine::access_waiting(double& since_ps) {
    if (!warp_reads_ || !active_ || !started_) return false;
    // Accesses leave their lines roughly in the order they were issued: the front is the oldest
    // still open once those that have sent all their lines (or moved on to another) are dropped.
    const auto open = [&](const OpenAccess& a) {
        return a.generation == warp_access_gen_[a.warp] && warp_issued_[a.warp] > 0 && warp_issued_[a.warp] < job_.loop.lines;
    };
    while (!accesses_open_.empty() && !open(accesses_open_.front())) accesses_open_.pop();
    bool any = false;
    if (!accesses_open_.empty()) {
        since_ps = warp_access_ps_[accesses_open_.front().warp];
        any = true;
    }
    double head = 0.0;
    if (read_waiting(head) && (!any || head < since_ps)) {
        since_ps = head;
        any = true;
    }
    return any;
}

bool DmaEngine::read_waiting(double& since_ps) const {
    if (!warp_reads_ || !active_ || !started_ || issued_ >= job_.bytes || !warp_ready_.due()) return false;
    // A due warp in the middle of its access has lines left; one due to start an access has one
    // only while accesses remain (next_warp_due drops the others).
    const std::uint32_t w = warp_ready_.front();
    if (warp_issued_[w] == 0 && claimed_ >= job_.bytes) return false;
    since_ps = warp_ready_.front_due_ps();
    return true;
}

void DmaEngine::retire_requests(std::uint64_t n) {
    retired_requests_ += n;
    // Once every request has been sent, the accesses still queued are warps with no work left.
    const bool all_sent = issued_ >= job_.bytes;
    while (ticket_count_ > 0 && (all_sent || tickets_[ticket_head_].after <= retired_requests_)) {
        job_.stores->feed(tickets_[ticket_head_].bytes);
        ticket_head_ = (ticket_head_ + 1) % tickets_.size();
        --ticket_count_;
    }
}

void DmaEngine::warp_ready() { prepare(); }

void DmaEngine::read_ahead() {
    if (job_.fed) return;  // its data is the loads' (feed)
    if (job_.loop.round_bytes > 0) {
        next_round();
        return;
    }
    // Keep reading ahead only while the link drains what is there: the engine's buffer is finite.
    if (available_ - issued_ >= static_cast<std::uint64_t>(chunks_ahead_) * kChunk) return;
    while (chunks_in_flight_ < chunks_ahead_ && fetched_ < job_.bytes) {
        const std::uint64_t n = std::min(kChunk, job_.bytes - fetched_);
        const double t = gpu_memory.access_ps(false, n, 0.0, static_cast<double>(params_.gpu_memory_latency.ps));
        fetched_ += n;
        ++chunks_in_flight_;
        chunks_.push(now_ps() + t, n);
    }
}

// Every warp loads its next data from GPU memory, then stores it. The loads of one iteration of
// all warps are in flight at once, so the first data comes a round after the start and then at
// the loop's rate: pieces of at most a 64 KiB chunk, each due a round after it was asked for and
// its share of a round after the piece before. A warp goes on once its store has left the SM, so
// no more than an iteration's stores wait for the link. The SMs' store limit spaces them too.
void DmaEngine::next_round() {
    const WarpLoop& loop = job_.loop;
    const std::uint64_t ahead = std::max(loop.round_bytes, loop.store_buffer_bytes);
    const auto pieces = static_cast<int>((ahead + kChunk - 1) / kChunk);
    while (chunks_in_flight_ < pieces && fetched_ < job_.bytes && fetched_ - issued_ < ahead) {
        const std::uint64_t n = std::min({loop.round_bytes, kChunk, job_.bytes - fetched_});
        // After the piece before: its share of a round, or the SMs' time to send it if longer.
        double pace = static_cast<double>(n) / static_cast<double>(loop.round_bytes) * loop.round_ps;
        if (loop.store_bytes_per_s > 0.0) pace = std::max(pace, static_cast<double>(n) / loop.store_bytes_per_s * 1e12);
        const double due = std::max(now_ps() + loop.round_ps, stores_free_ps_ + pace);
        stores_free_ps_ = due;
        fetched_ += n;
        ++chunks_in_flight_;
        chunks_.push(due, n);
    }
}

void DmaEngine::chunk_ready() {
    while (chunks_.due()) {
        available_ += chunks_.front();
        available_since_.push(Available{available_, chunks_.front_due_ps()});
        --chunks_in_flight_;
        chunks_.pop();
    }
    chunks_.rearm();
    read_ahead();
    prepare();
}

void DmaEngine::data_landed() {
    while (landed_.due()) landed_.pop();
    landed_.rearm();
    data_in_memory_ = true;
    prepare();
}

void DmaEngine::end_job() {
    semaphore_sent_ = true;
    active_ = false;
    if (Tracer* tr = Tracer::active()) {
        const std::string what = job_.direction == CopyDirection::kHostToDevice ? "read " : "write ";
        tr->span(tr->track(get_parent_object()->basename(), basename()), what + core::to_string(core::Bytes{job_.bytes}),
                 job_start_ps_, now_ps());
    }
    if (!job_.release_on_gpu) return;
    // Told from outside prepare() (the listener may start the next job here), at least a delta
    // cycle later.
    DMASIM_ASSERT(listener_ != nullptr);
    released_job_ = job_.id;
    notify_after_ps(release_event_, kernel_end_ps_);
}

void DmaEngine::released() { listener_->semaphore_written(released_job_); }

void DmaEngine::make_semaphore(Tlp& t) const {
    t.kind = TlpKind::kMemWrite;
    t.semaphore = true;
    t.completer = job_.semaphore_node;
    t.payload = static_cast<std::uint32_t>(params_.semaphore_size.value);
}

// One descriptor read in flight; the next as soon as the engine moves data of the last block
// fetched, so that a block's data hides the next read's round trip when it lasts longer.
bool DmaEngine::descriptor_read_due() const {
    return requested_desc_ < job_.bytes && desc_remaining_ == 0 && issued_ + desc_block_ >= requested_desc_;
}

void DmaEngine::prepare() {
    if (!active_ || !started_ || pending_) return;
    if (descriptor_read_due()) {
        Tlp& d = next_;
        d = Tlp{};
        d.requester = gpu_node_;
        d.completer = job_.semaphore_node;  // descriptors live in host memory
        d.job = job_.id;
        d.kind = TlpKind::kMemRead;
        const std::uint64_t covers = std::min(desc_block_, job_.bytes - requested_desc_);
        const std::uint64_t count = (covers + params_.descriptor_bytes.value - 1) / params_.descriptor_bytes.value;
        d.length = static_cast<std::uint32_t>(count * params_.descriptor_size.value);
        offered_since_ps_ = now_ps();
        offering_descriptors_ = true;
        pending_ = true;
        pending_since_ps_ = now_ps();
        doorbell_.ring();
        return;
    }
    // Built in place: a packet built field by field on the stack and then copied whole is read
    // back before its narrow stores have left the store buffer, a stall on every packet. next_
    // means nothing until pending_ is set.
    Tlp& t = next_;
    t = Tlp{};
    t.requester = gpu_node_;
    t.completer = job_.host_node;
    t.job = job_.id;
    t.host_kib = job_.host_kib;
    offered_since_ps_ = now_ps();
    if (job_.direction == CopyDirection::kHostToDevice) {
        if (issued_ < job_.bytes) {
            if (outstanding_ >= outstanding_cap_ && !lines_free()) return;  // a completion, or a line back, frees one
            if (issued_ >= described_) return;            // its descriptors are on their way
            if (warp_reads_ && !next_warp_due()) return;  // warp_ready() runs when one is
            t.kind = TlpKind::kMemRead;
            t.length = static_cast<std::uint32_t>(std::min<std::uint64_t>(read_size_, described_ - issued_));
            offered_since_ps_ = warp_reads_ ? warp_ready_.front_due_ps() : now_ps();
        } else if (data_in_memory_ && !semaphore_sent_) {
            if (job_.release_on_gpu) {
                end_job();
                return;
            }
            make_semaphore(t);
        } else {
            return;
        }
    } else {
        if (issued_ < job_.bytes) {
            if (available_ <= issued_) return;  // waiting for GPU memory
            if (issued_ >= described_) return;   // its descriptors are on their way
            t.kind = TlpKind::kMemWrite;
            t.peer = job_.peer;
            t.payload = static_cast<std::uint32_t>(
                std::min<std::uint64_t>({write_size_, available_ - issued_, described_ - issued_}));
            while (!available_since_.empty() && available_since_.front().end <= issued_) available_since_.pop();
            offered_since_ps_ = available_since_.empty() ? now_ps() : available_since_.front().since_ps;
        } else if (!semaphore_sent_) {
            if (job_.release_on_gpu) {
                end_job();
                return;
            }
            make_semaphore(t);  // posted writes stay in order: it lands after the data
        } else {
            return;
        }
    }
    pending_ = true;
    pending_since_ps_ = now_ps();
    doorbell_.ring();
}

Tlp DmaEngine::take() {
    DMASIM_ASSERT(pending_);
    pending_ = false;
    Tlp out = next_;
    if (offering_descriptors_) {
        offering_descriptors_ = false;
        out.tag = (static_cast<std::uint32_t>(index_) << 16) | kDescriptorSlot;
        desc_remaining_ = next_.length;
        requested_desc_ = std::min(job_.bytes, requested_desc_ + desc_block_);
        stats_.read_requests++;
        prepare();
        return out;
    }
    if (next_.semaphore) {
        end_job();
        return out;
    }
    if (next_.kind == TlpKind::kMemRead) {
        DMASIM_ASSERT(!free_tags_.empty());
        const std::uint32_t slot = free_tags_.back();
        free_tags_.pop_back();
        out.tag = (static_cast<std::uint32_t>(index_) << 16) | slot;
        tag_remaining_[slot] = next_.length;
        if (warp_reads_) take_warp_line(slot);
        issued_ += next_.length;
        ++outstanding_;
        stats_.read_requests++;
        stats_.peak_outstanding_reads = std::max(stats_.peak_outstanding_reads, outstanding_);
    } else {
        if (partial_writes_) {
            out.line_write = gpu::shares_host_line(issued_ / write_size_, write_count_, job_.write_spacing, write_size_,
                                                   job_.host_line)
                                 ? LineWrite::kShared
                                 : LineWrite::kPartial;
        }
        if (issued_ < job_.held_bytes) out.line_write = LineWrite::kHeld;
        issued_ += next_.payload;
        stats_.writes++;

        read_ahead();
    }
    prepare();
    return out;
}

// Whether a warp may send a line now. Each access is a warp's own (its lines, its bytes): a warp
// due to start one when every access has been started drops out.
bool DmaEngine::next_warp_due() {
    bool dropped = false;
    while (warp_ready_.due() && warp_issued_[warp_ready_.front()] == 0 && claimed_ >= job_.bytes) {
        warp_ready_.pop();
        dropped = true;
        if (job_.stores != nullptr) retire_requests(job_.loop.lines);
    }
    if (dropped) warp_ready_.rearm_if_later();
    return warp_ready_.due();
}

// The read request leaving now is the next line of the earliest ready warp's access.
void DmaEngine::take_warp_line(std::uint32_t slot) {
    const std::uint32_t w = warp_ready_.front();
    const double due = warp_ready_.front_due_ps();
    warp_ready_.pop();
    tag_warp_[slot] = w;
    if (warp_issued_[w] == 0) {
        claimed_ += static_cast<std::uint64_t>(job_.loop.lines) * read_size_;
        if (job_.loop.lines > 1) {
            warp_access_ps_[w] = due;
            accesses_open_.push(OpenAccess{w, ++warp_access_gen_[w]});
        }
    }
    ++warp_left_[w];
    if (++warp_issued_[w] < job_.loop.lines) warp_ready_.push(now_ps() + job_.loop.line_gap_ps, w);
    if (job_.stores != nullptr) retire_requests(1);
    warp_ready_.rearm_if_later();  // a warp due now is taken from prepare() below
}

void DmaEngine::line_back() {
    line_back_armed_ = false;
    prepare();
}

bool DmaEngine::lines_free() {
    while (!lines_back_.empty() && lines_back_.front() <= now_ps() + 0.5) {
        lines_back_.pop();
        --outstanding_;
    }
    if (outstanding_ < outstanding_cap_) return true;
    if (!lines_back_.empty() && !line_back_armed_) {
        notify_after_ps(line_back_event_, lines_back_.front() - now_ps());
        line_back_armed_ = true;
    }
    return false;
}

void DmaEngine::on_completion(const Tlp& t) {
    const std::uint32_t slot = t.tag & 0xFFFF;
    if (slot == kDescriptorSlot) {
        DMASIM_ASSERT(desc_remaining_ >= t.payload);
        desc_remaining_ -= t.payload;
        if (desc_remaining_ == 0) described_ = requested_desc_;
        prepare();
        return;
    }
    DMASIM_ASSERT(slot < tag_remaining_.size() && tag_remaining_[slot] >= t.payload);
    tag_remaining_[slot] -= t.payload;
    received_ += t.payload;
    unwritten_ += t.payload;
    if (tag_remaining_[slot] == 0) {
        free_tags_.push_back(slot);
        // An SM's read keeps its line until the data is back at its warp (gpu.sm_host_path).
        if (return_path_ps_ > 0.0) {
            lines_back_.push(now_ps() + return_path_ps_);
        } else {
            --outstanding_;
        }
        if (warp_reads_) {
            // The warp's access is complete when all its lines are: then its loop, then the next.
            const std::uint32_t w = tag_warp_[slot];
            if (--warp_left_[w] == 0 && warp_issued_[w] == job_.loop.lines) {
                warp_issued_[w] = 0;
                if (job_.stores != nullptr) {
                    // Its store goes behind the requests queued so far, its next access behind that.
                    DMASIM_ASSERT(ticket_count_ < tickets_.size());
                    tickets_[(ticket_head_ + ticket_count_) % tickets_.size()] = StoreTicket{queued_requests_, job_.loop.access_bytes};
                    ++ticket_count_;
                    queued_requests_ += job_.loop.lines;
                    retire_requests(0);
                }
                warp_ready_.push(now_ps() + return_path_ps_ + job_.loop.loop_ps, w);
            }
        }
    }
    if (unwritten_ >= kChunk || received_ == job_.bytes) {
        const double t_write = gpu_memory.access_ps(true, unwritten_, 0.0, static_cast<double>(params_.gpu_memory_latency.ps));
        unwritten_ = 0;
        if (received_ == job_.bytes) landed_.push(now_ps() + return_path_ps_ + t_write, 0);
    }
    prepare();
}

}  // namespace dmasim::sim
