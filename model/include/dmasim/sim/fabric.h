// Temporal decoupling of the packet-level model (IEEE 1666-2011, 10.3.2 "temporal decoupling").
//
// The links, bridges, GPUs and copy engines make several wake-ups per TLP, and a SystemC
// timed event costs more than the work each wake-up does (issue 12: 567 instructions per bare
// event against about 1,000 of model work per TLP). Their wake-ups therefore go to one
// calendar, run by one SystemC process: it runs them in time order, with its own clock ahead
// of the kernel's, up to the next instant at which anything else in the kernel is due (the host
// runtime's threads and methods, the end of sc_start), and then waits for the kernel there. A
// copy that the host waits for runs in one kernel activation.
//
// Nothing outside the fabric can tell: it only ever sees the fabric's effects at or after its own
// time, since the fabric never runs past the kernel's next activity, and whatever the fabric
// hands to the host (a copy engine's semaphore, a CPU access that left or returned) is handed over
// by an event that waits for the kernel's clock (FabricEvent::wait_for_kernel). Wake-ups at one
// instant run in the order they were asked for, arrivals last (FabricEvent::run_late), where
// SystemC ran the processes woken at one instant in an order of its own.
#pragma once

#include <systemc>

#include <cstdint>
#include <limits>
#include <vector>

#include "dmasim/sim/tlp.h"

namespace dmasim::sim {

class FabricEvent;

class FabricScheduler : public sc_core::sc_module {
public:
    SC_HAS_PROCESS(FabricScheduler);
    explicit FabricScheduler(sc_core::sc_module_name name);
    ~FabricScheduler() override;

    // The scheduler the fabric's modules elaborated now belong to (PlatformTop creates it first).
    static FabricScheduler& current();

    // sc_start stops the kernel at this absolute time: the fabric runs no further ahead, so a
    // runaway model still meets the simulator's watchdog.
    void set_limit(sc_dt::uint64 absolute_ps) { limit_ = absolute_ps; }
    // Activations of the scheduler's process and wake-ups it ran (for tests and benchmarks).
    std::uint64_t activations() const { return activations_; }
    std::uint64_t wakeups_run() const { return wakeups_run_; }

private:
    friend class FabricEvent;
    // The calendar: a binary min-heap of the pending events, each knowing its place in it, so
    // that a notification moved earlier or cancelled changes its entry in place (an event has at
    // most one pending notification, as an sc_event has).
    struct Entry {
        // The due time doubled, plus one for a late event: time first, late ones after the others.
        sc_dt::uint64 key;
        std::uint64_t seq;  // equal keys keep the order they were asked for
        FabricEvent* event;
    };
    static bool before(const Entry& a, const Entry& b) { return a.key != b.key ? a.key < b.key : a.seq < b.seq; }

    void schedule(FabricEvent& e, sc_dt::uint64 at);
    void remove(FabricEvent& e);
    void wake_kernel_for(sc_dt::uint64 at);
    void place(std::size_t i, const Entry& entry);
    void sift_up(std::size_t i, Entry entry);
    void sift_down(std::size_t i, Entry entry);
    void run();  // SC_METHOD

    std::vector<Entry> heap_;
    std::uint64_t seq_ = 0;
    sc_dt::uint64 limit_ = std::numeric_limits<sc_dt::uint64>::max();
    sc_core::sc_event wake_;
    sc_dt::uint64 wake_at_ = std::numeric_limits<sc_dt::uint64>::max();  // when wake_ is pending for
    std::uint64_t activations_ = 0;
    std::uint64_t wakeups_run_ = 0;
};

// What a fabric module waits for: sc_event's notify/cancel (one pending notification, the
// earliest kept), calling one method of its module when it fires.
class FabricEvent {
public:
    FabricEvent() : scheduler_(&FabricScheduler::current()) {}
    FabricEvent(const FabricEvent&) = delete;
    FabricEvent& operator=(const FabricEvent&) = delete;

    // The method it calls; one method may be called by several events.
    template <auto Method, class Module>
    void calls(Module* module) {
        target_ = module;
        call_ = [](void* m) { (static_cast<Module*>(m)->*Method)(); };
    }
    // Fires only with the kernel's clock at its time: for what hands results to the host.
    void wait_for_kernel() { kernel_sync_ = true; }
    // Runs after the other wake-ups due at its instant, whenever they were asked for. For a
    // link's arrivals: what frees buffers or sends at that instant comes first, an order fixed by
    // the model rather than by the history of the calendar.
    void run_late() { late_ = true; }

    void notify(const sc_core::sc_time& delay) { notify_in(delay.value()); }
    void notify_in(sc_dt::uint64 delay_ps) { scheduler_->schedule(*this, model_now() + delay_ps); }
    void cancel() {
        if (pending()) scheduler_->remove(*this);
    }
    bool pending() const { return pos_ != kNotPending && !firing_; }

private:
    friend class FabricScheduler;
    static constexpr std::size_t kNotPending = ~std::size_t{0};
    FabricScheduler* scheduler_;
    void* target_ = nullptr;
    void (*call_)(void*) = nullptr;
    bool kernel_sync_ = false;
    bool late_ = false;
    std::size_t pos_ = kNotPending;  // its entry in the scheduler's heap
    // Its method runs now; its entry stays in the heap until the method returns, so that one
    // re-arming itself (a link's next packet) moves that entry down rather than leaving and
    // entering the heap.
    bool firing_ = false;
    sc_dt::uint64 at_ = 0;
};

// `ps` from now, rounded to whole picoseconds as sc_time rounds it (tlp.h, delay_ps).
inline void notify_after_ps(FabricEvent& e, double ps) { e.notify_in(delay_ps(ps)); }

inline void FabricScheduler::place(std::size_t i, const Entry& entry) {
    heap_[i] = entry;
    entry.event->pos_ = i;
}

inline void FabricScheduler::sift_up(std::size_t i, Entry entry) {
    while (i > 0) {
        const std::size_t parent = (i - 1) / 2;
        if (!before(entry, heap_[parent])) break;
        place(i, heap_[parent]);
        i = parent;
    }
    place(i, entry);
}

inline void FabricScheduler::sift_down(std::size_t i, Entry entry) {
    const std::size_t n = heap_.size();
    while (true) {
        std::size_t child = 2 * i + 1;
        if (child >= n) break;
        if (child + 1 < n && before(heap_[child + 1], heap_[child])) ++child;
        if (!before(heap_[child], entry)) break;
        place(i, heap_[child]);
        i = child;
    }
    place(i, entry);
}

inline void FabricScheduler::schedule(FabricEvent& e, sc_dt::uint64 at) {
    // sc_event's rule: of two notifications the earlier stays.
    if (e.pending() && e.at_ <= at) return;
    DMASIM_ASSERT(at < (sc_dt::uint64{1} << 62));
    e.at_ = at;
    const Entry entry{2 * at + (e.late_ ? 1U : 0U), seq_++, &e};
    if (e.firing_) {
        // Re-armed by its own method: no earlier than it fired, so its entry can only move down.
        e.firing_ = false;
        sift_down(e.pos_, entry);
    } else if (e.pending()) {
        sift_up(e.pos_, entry);  // earlier than before: it can only move up
    } else {
        heap_.push_back(entry);
        sift_up(heap_.size() - 1, entry);
    }
    // From the kernel's side (the host starting a copy, or run() itself about to return), the
    // process must wake by then.
    if (!fabric_clock().ahead && at < wake_at_) wake_kernel_for(at);
}

}  // namespace dmasim::sim
