// Items that fall due at non-decreasing times, with the one event that wakes their consumer.
// Used where a module computed, from timing annotations, when something becomes visible:
// one event per due time instead of a process per packet.
#pragma once

#include <systemc>

#include <cstdint>
#include <functional>
#include <queue>
#include <vector>

#include "dmasim/sim/ring.h"
#include "dmasim/sim/tlp.h"

namespace dmasim::sim {

template <class T>
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
        if (was_empty) event_.notify(ps_delay(due_ps - now_ps()));
    }
    bool due() const { return !q_.empty() && q_.front().due_ps <= now_ps() + 0.5; }
    bool empty() const { return q_.empty(); }
    T& front() { return q_.front().item; }
    double front_due_ps() const { return q_.front().due_ps; }
    void pop() { q_.pop(); }
    // After popping what is due: arm the event for the next entry.
    void rearm() {
        if (!q_.empty()) event_.notify(ps_delay(q_.front().due_ps - now_ps()));
    }
    const sc_core::sc_event& event() const { return event_; }
    std::size_t size() const { return q_.size(); }

private:
    Ring<Entry> q_;
    sc_core::sc_event event_;
};

// The same for items whose due times come in any order (few per run: runtime operations).
template <class T>
class TimedHeap {
public:
    void push(double due_ps, const T& item) {
        heap_.push(Entry{due_ps, seq_++, item});
        event_.notify(ps_delay(heap_.top().due_ps - now_ps()));
    }
    bool due() const { return !heap_.empty() && heap_.top().due_ps <= now_ps() + 0.5; }
    const T& front() const { return heap_.top().item; }
    void pop() { heap_.pop(); }
    void rearm() {
        if (!heap_.empty()) event_.notify(ps_delay(heap_.top().due_ps - now_ps()));
    }
    bool empty() const { return heap_.empty(); }
    const sc_core::sc_event& event() const { return event_; }

private:
    struct Entry {
        double due_ps;
        std::uint64_t seq;  // equal times keep their push order
        T item;
        bool operator>(const Entry& o) const { return due_ps != o.due_ps ? due_ps > o.due_ps : seq > o.seq; }
    };
    std::priority_queue<Entry, std::vector<Entry>, std::greater<Entry>> heap_;
    std::uint64_t seq_ = 0;
    sc_core::sc_event event_;
};

}  // namespace dmasim::sim
