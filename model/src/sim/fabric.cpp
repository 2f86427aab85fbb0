#include "dmasim/sim/fabric.h"

#include <algorithm>

namespace dmasim::sim {

namespace {
FabricScheduler*& current_scheduler() {
    static FabricScheduler* s = nullptr;
    return s;
}
}  // namespace

FabricScheduler::FabricScheduler(sc_core::sc_module_name name) : sc_core::sc_module(name) {
    current_scheduler() = this;
    SC_METHOD(run);
    sensitive << wake_;
    dont_initialize();
}

FabricScheduler::~FabricScheduler() {
    if (current_scheduler() == this) current_scheduler() = nullptr;
}

FabricScheduler& FabricScheduler::current() {
    FabricScheduler* s = current_scheduler();
    if (s == nullptr) SC_REPORT_FATAL("dmasim/fabric", "a packet-level module was built without a FabricScheduler");
    return *s;
}

void FabricScheduler::remove(FabricEvent& e) {
    const std::size_t i = e.pos_;
    e.pos_ = FabricEvent::kNotPending;
    const Entry last = heap_.back();
    heap_.pop_back();
    if (i == heap_.size()) return;  // it was the last entry
    // The last entry takes its place, and moves up or down from there.
    if (i > 0 && before(last, heap_[(i - 1) / 2])) {
        sift_up(i, last);
    } else {
        sift_down(i, last);
    }
}

void FabricScheduler::wake_kernel_for(sc_dt::uint64 at) {
    const sc_dt::uint64 kernel = kernel_now();
    wake_at_ = at;
    wake_.cancel();
    wake_.notify(at > kernel ? whole_ps(static_cast<double>(at - kernel)) : zero_delay());
}

void FabricScheduler::run() {
    ++activations_;
    wake_at_ = std::numeric_limits<sc_dt::uint64>::max();
    const sc_dt::uint64 kernel = kernel_now();
    // Nothing else in the kernel is due before the horizon: the fabric may run up to it. What
    // is due at the kernel's present instant runs now in any case.
    const auto next_kernel_activity = [&] {
        return sc_core::sc_pending_activity() ? std::min(limit_, kernel + sc_core::sc_time_to_pending_activity().value())
                                              : limit_;
    };
    sc_dt::uint64 horizon = next_kernel_activity();
    FabricClock& clock = fabric_clock();
    // Back to the kernel's clock however the loop ends (a model error throws out of it).
    struct Ahead {
        FabricClock& c;
        ~Ahead() { c.ahead = false; }
    } ahead{clock};
    clock.ahead = true;
    clock.now = kernel;
    while (!heap_.empty()) {
        FabricEvent& e = *heap_.front().event;
        const sc_dt::uint64 at = e.at_;
        if (at > kernel && (at >= horizon || e.kernel_sync_)) break;
        clock.now = std::max(clock.now, at);
        ++wakeups_run_;
        e.firing_ = true;
        try {
            e.call_(e.target_);
        } catch (...) {
            // A model error: the event is not left behind as if still due.
            if (e.firing_) {
                e.firing_ = false;
                remove(e);
            }
            throw;
        }
        if (e.firing_) {
            e.firing_ = false;
            remove(e);
        }
        // Only these hand anything to the host, whose processes may now be due earlier.
        if (e.kernel_sync_) horizon = next_kernel_activity();
    }
    clock.ahead = false;
    if (!heap_.empty()) wake_kernel_for(heap_.front().event->at_);
}

}  // namespace dmasim::sim
