// Items that fall due at non-decreasing times, with the one event that wakes their consumer.
// Used where a module computed, from timing annotations, when something becomes visible:
// one event per due time instead of a process per packet.
#pragma once

#include <systemc>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "dmasim/sim/ring.h"
#include "dmasim/sim/tlp.h"

namespace dmasim::sim {

// `Event` is sc_core::sc_event for the host runtime's processes and FabricEvent for the packet
// level's (fabric.h): both keep the earliest of their pending notifications.
template <class T, class Event = sc_core::sc_event>
class TimedFifo {
public:
    struct Entry {
        double due_ps = 0.0;
        T item{};
    };

    void push(double due_ps, const T& item) {
        // Callers derive due times from FIFO resources (links, memory controllers), so order holds.
        DMASIM_ASSERT(q_.empty() || due_ps + 0.5 >= q_.back().due_ps);
        const bool was_empty = q_.empty();
        q_.push(Entry{due_ps, item});
        if (was_empty) notify_after_ps(event_, due_ps - now_ps());
    }
    bool due() const { return !q_.empty() && q_.front().due_ps <= now_ps() + 0.5; }
    bool empty() const { return q_.empty(); }
    T& front() { return q_.front().item; }
    double front_due_ps() const { return q_.front().due_ps; }
    void pop() { q_.pop(); }
    // After popping what is due: arm the event for the next entry.
    void rearm() {
        if (!q_.empty()) notify_after_ps(event_, q_.front().due_ps - now_ps());
    }
    const Event& event() const { return event_; }
    Event& event() { return event_; }
    std::size_t size() const { return q_.size(); }

private:
    Ring<Entry> q_;
    Event event_;
};

// The same for items whose due times come in any order. Order is (due time, push order). Most
// pushes still come in time order (a root complex's completions follow its memory controller,
// which serves in arrival order), so those go to a ring and only the few that come early go to a
// heap: a root complex holding thousands of completions of outstanding reads then pays O(1) per
// packet instead of a heap's O(log n), and the order is the same as one heap's.
template <class T, class Event = sc_core::sc_event>
class TimedHeap {
public:
    void push(double due_ps, const T& item) {
        const Entry e{due_ps, seq_++, item};
        if (ring_.empty() || !(ring_.back().due_ps > due_ps)) {
            ring_.push(e);
        } else {
            heap_.push_back(e);
            std::push_heap(heap_.begin(), heap_.end(), Later{});
        }
        // Behind an earlier entry it changes nothing the consumer waits for: its event is
        // armed for that entry, or the consumer is blocked and will look again when unblocked.
        if (front_seq() == e.seq) notify_after_ps(event_, due_ps - now_ps());
    }
    bool due() const { return !empty() && next_due() <= now_ps() + 0.5; }
    const T& front() const { return from_ring() ? ring_.front().item : heap_.front().item; }
    // The earliest item, to change in place (never its due time: that orders the entries).
    T& front() { return from_ring() ? ring_.front().item : heap_.front().item; }
    void pop() {
        if (from_ring()) {
            ring_.pop();
        } else {
            std::pop_heap(heap_.begin(), heap_.end(), Later{});
            heap_.pop_back();
        }
    }
    void rearm() {
        if (!empty()) notify_after_ps(event_, next_due() - now_ps());
    }
    // The same, only for an earliest entry still to come: one due now is for the consumer to take
    // in the same activation, and a zero-delay notification would only wake it again.
    void rearm_if_later() {
        if (!empty() && !due()) rearm();
    }
    bool empty() const { return ring_.empty() && heap_.empty(); }
    // The earliest entry's due time; only when not empty.
    double front_due_ps() const { return next_due(); }
    const Event& event() const { return event_; }
    Event& event() { return event_; }
    void clear() {
        ring_.clear();
        heap_.clear();
        event_.cancel();
    }

private:
    struct Entry {
        double due_ps;
        std::uint64_t seq;  // equal times keep their push order
        T item;
    };
    struct Later {
        bool operator()(const Entry& a, const Entry& b) const {
            return a.due_ps != b.due_ps ? a.due_ps > b.due_ps : a.seq > b.seq;
        }
    };
    // Whether the earliest entry is the ring's (the ring is in order by construction).
    bool from_ring() const { return heap_.empty() || (!ring_.empty() && Later{}(heap_.front(), ring_.front())); }
    double next_due() const { return from_ring() ? ring_.front().due_ps : heap_.front().due_ps; }
    std::uint64_t front_seq() const { return from_ring() ? ring_.front().seq : heap_.front().seq; }

    Ring<Entry> ring_;
    std::vector<Entry> heap_;  // min-heap by Later
    std::uint64_t seq_ = 0;
    Event event_;
};

}  // namespace dmasim::sim
