// The packet level's scheduler (fabric.h): the order of wake-ups at one instant, sc_event's
// notification rules, and running ahead of the kernel only up to the kernel's next activity.
// SystemC elaborates once per process and CTest runs every TEST in a process of its own, so one
// TEST runs the one scenario and checks all of it.
#include <gtest/gtest.h>

#include <systemc>

#include <array>
#include <random>
#include <string>
#include <vector>

#include "dmasim/sim/fabric.h"
#include "dmasim/sim/simulator.h"
#include "dmasim/sim/tlp.h"

namespace dmasim::sim {
namespace {

struct Fired {
    std::string what;
    sc_dt::uint64 model_ps;   // the clock the model saw
    sc_dt::uint64 kernel_ps;  // the kernel's clock then
};

std::vector<Fired>& fired() {
    static std::vector<Fired> f;
    return f;
}

void record(const std::string& what) { fired().push_back(Fired{what, model_now(), kernel_now()}); }

// Packet-level side: four events, each recording itself.
class Packets : public sc_core::sc_module {
public:
    explicit Packets(sc_core::sc_module_name name) : sc_core::sc_module(name) {
        a.calls<&Packets::on_a>(this);
        b.calls<&Packets::on_b>(this);
        late.calls<&Packets::on_late>(this);
        late.run_late();
        to_host.calls<&Packets::on_to_host>(this);
        to_host.wait_for_kernel();
        self.calls<&Packets::on_self>(this);
    }
    FabricEvent a, b, late, to_host, self;

private:
    void on_a() { record("a"); }
    void on_b() { record("b"); }
    void on_late() { record("late"); }
    void on_to_host() { record("to_host"); }
    // Re-arms itself twice, 5 ps apart, and asks for `b` at its second firing's instant.
    void on_self() {
        record("self");
        if (++self_fired_ < 3) self.notify(sc_core::sc_time(5, sc_core::SC_PS));
        if (self_fired_ == 2) b.notify(sc_core::SC_ZERO_TIME);
    }
    int self_fired_ = 0;
};

// Many events notified, moved and cancelled at random from inside the fabric, against a
// reference of sc_event's rules: each event fires at its earliest pending time, and at one
// instant in the order asked for, late ones after the others. Every firing is checked as it
// happens; the heap's moves (up, down, removal from the middle) are what this exercises.
class Shuffle : public sc_core::sc_module {
public:
    static constexpr int kEvents = 24;
    explicit Shuffle(sc_core::sc_module_name name) : sc_core::sc_module(name), rng_(12345) {
        for (int i = 0; i < kEvents; ++i) {
            slots_[i].owner = this;
            slots_[i].id = i;
            slots_[i].event.calls<&Slot::fire>(&slots_[i]);
            if (i % 3 == 0) slots_[i].event.run_late();
        }
    }
    // From the kernel's side: every event once, then the fabric takes over.
    void start() {
        for (int i = 0; i < kEvents; ++i) notify(i, std::uniform_int_distribution<int>(0, 40)(rng_));
    }
    int fired = 0;
    int wrong = 0;
    std::string first_wrong;

private:
    struct Slot {
        Shuffle* owner = nullptr;
        int id = 0;
        FabricEvent event;
        void fire() { owner->on_fire(id); }
    };
    struct Expected {
        bool pending = false;
        sc_dt::uint64 at = 0;
        std::uint64_t seq = 0;
    };
    bool is_late(int i) const { return i % 3 == 0; }
    void notify(int i, int delay_ps) {
        const sc_dt::uint64 at = model_now() + static_cast<sc_dt::uint64>(delay_ps);
        Expected& e = expected_[i];
        if (!(e.pending && e.at <= at)) e = Expected{true, at, seq_++};
        slots_[i].event.notify(sc_core::sc_time::from_value(static_cast<sc_dt::uint64>(delay_ps)));
    }
    void cancel(int i) {
        expected_[i].pending = false;
        slots_[i].event.cancel();
    }
    void on_fire(int id) {
        ++fired;
        // The reference's next event: earliest time, then not late before late, then asked first.
        int next = -1;
        for (int i = 0; i < kEvents; ++i) {
            const Expected& e = expected_[i];
            if (!e.pending) continue;
            if (next < 0) {
                next = i;
                continue;
            }
            const Expected& n = expected_[next];
            const auto key = [&](int k, const Expected& x) { return 2 * x.at + (is_late(k) ? 1U : 0U); };
            if (key(i, e) < key(next, n) || (key(i, e) == key(next, n) && e.seq < n.seq)) next = i;
        }
        if (next != id || expected_[id].at != model_now()) {
            if (wrong++ == 0) {
                first_wrong = "fired " + std::to_string(id) + " at " + std::to_string(model_now()) + ", expected " +
                              std::to_string(next) + (next >= 0 ? " at " + std::to_string(expected_[next].at) : "");
            }
        }
        expected_[id].pending = false;
        if (fired >= 20000) return;
        // A few moves each: notify some (earlier, later or again), cancel some, re-arm itself.
        std::uniform_int_distribution<int> pick(0, kEvents - 1), delay(0, 40), what(0, 9);
        for (int k = 0; k < 3; ++k) {
            const int op = what(rng_);
            const int i = pick(rng_);
            if (op < 6) {
                notify(i, delay(rng_));
            } else if (op < 8) {
                cancel(i);
            } else {
                notify(id, delay(rng_));
            }
        }
        // Never let the calendar run dry before the count is reached.
        notify(pick(rng_), delay(rng_) + 1);
    }

    std::mt19937_64 rng_;
    std::array<Slot, kEvents> slots_;
    std::array<Expected, kEvents> expected_{};
    std::uint64_t seq_ = 0;
};

// Kernel side: a thread with timed waits, as the host runtime has.
class Host : public sc_core::sc_module {
public:
    SC_HAS_PROCESS(Host);
    Host(sc_core::sc_module_name name, Packets& p, Shuffle& shuffle) : sc_core::sc_module(name), p_(p), shuffle_(shuffle) {
        SC_THREAD(run);
    }
private:
    // Runs from the first sc_start.
    void run() {
        record("host@" + std::to_string(kernel_now()));
        // Asked for at one instant: `late` first, yet it runs last; a and b in the order asked.
        p_.late.notify(sc_core::sc_time(10, sc_core::SC_PS));
        p_.a.notify(sc_core::sc_time(10, sc_core::SC_PS));
        p_.b.notify(sc_core::sc_time(10, sc_core::SC_PS));
        wait(sc_core::sc_time(20, sc_core::SC_PS));
        // sc_event's rules: the earlier of two notifications stays; a cancelled one never fires.
        p_.a.notify(sc_core::sc_time(30, sc_core::SC_PS));
        p_.a.notify(sc_core::sc_time(20, sc_core::SC_PS));
        p_.b.notify(sc_core::sc_time(20, sc_core::SC_PS));
        p_.b.notify(sc_core::sc_time(40, sc_core::SC_PS));
        p_.late.notify(sc_core::sc_time(25, sc_core::SC_PS));
        p_.late.cancel();
        wait(sc_core::sc_time(100, sc_core::SC_PS));
        // Ahead of the kernel: the scheduler wakes for `a` at +200 and runs `b` at +250 in the
        // same activation, before the host's next activity at +500; `late` at +1000 only after
        // it; `to_host` waits for the kernel's clock.
        const sc_dt::uint64 t0 = kernel_now();
        p_.a.notify(sc_core::sc_time(200, sc_core::SC_PS));
        p_.b.notify(sc_core::sc_time(250, sc_core::SC_PS));
        p_.to_host.notify(sc_core::sc_time(300, sc_core::SC_PS));
        p_.late.notify(sc_core::sc_time(1000, sc_core::SC_PS));
        wait(sc_core::sc_time(500, sc_core::SC_PS));
        record("host@" + std::to_string(kernel_now() - t0));
        wait(sc_core::sc_time(1000, sc_core::SC_PS));
        p_.self.notify(sc_core::sc_time(10, sc_core::SC_PS));
        wait(sc_core::sc_time(1000, sc_core::SC_PS));
        shuffle_.start();
    }
    Packets& p_;
    Shuffle& shuffle_;
};

struct Tree {
    FabricScheduler scheduler{"fabric"};
    Packets packets{"packets"};
    Shuffle shuffle{"shuffle"};
    Host host{"host", packets, shuffle};
};

Tree& tree() {
    static Tree t;
    return t;
}

std::vector<std::string> names(std::size_t from, std::size_t to) {
    std::vector<std::string> out;
    for (std::size_t i = from; i < to && i < fired().size(); ++i) out.push_back(fired()[i].what);
    return out;
}

TEST(Fabric, KeepsSystemCsRulesAndRunsAheadOnlyUpToTheKernelsNextActivity) {
    // libsystemc needs sc_main, which simulator.cpp defines: using that object links it in.
    ASSERT_EQ(default_fidelity(), Fidelity::kFast);
    tree();
    sc_core::sc_start();
    const auto& f = fired();
    ASSERT_EQ(f.size(), 15U) << ::testing::PrintToString(names(0, f.size()));
    // One instant: the order asked for, `late` last whenever it was asked for.
    EXPECT_EQ(names(1, 4), (std::vector<std::string>{"a", "b", "late"}));
    for (std::size_t i = 1; i < 4; ++i) EXPECT_EQ(f[i].model_ps, 10U) << f[i].what;
    // Earlier notification kept (a at 20 + 20, not 20 + 30; b at 20 + 40 ignored), cancelled one gone.
    EXPECT_EQ(names(4, 6), (std::vector<std::string>{"a", "b"}));
    EXPECT_EQ(f[4].model_ps, 40U);
    EXPECT_EQ(f[5].model_ps, 40U);

    // Running ahead of the kernel only up to its next activity.
    const sc_dt::uint64 t0 = 120;  // where the host asked for them
    EXPECT_EQ(names(6, 11), (std::vector<std::string>{"a", "b", "to_host", "host@500", "late"}));
    EXPECT_EQ(f[6].model_ps, t0 + 200);
    EXPECT_EQ(f[6].kernel_ps, t0 + 200);
    // `b` ran at its own time in the same activation, the kernel's clock still at `a`.
    EXPECT_EQ(f[7].model_ps, t0 + 250);
    EXPECT_EQ(f[7].kernel_ps, t0 + 200);
    // What hands something to the host runs with the kernel's clock at its time.
    EXPECT_EQ(f[8].model_ps, t0 + 300);
    EXPECT_EQ(f[8].kernel_ps, t0 + 300);
    // `late` is due after the host's activity at +500 and ran only after it.
    EXPECT_EQ(f[10].model_ps, t0 + 1000);
    EXPECT_GE(f[10].kernel_ps, t0 + 500);
    EXPECT_GT(tree().scheduler.wakeups_run(), tree().scheduler.activations());

    // An event re-armed from its own method fires again, at the new time, once per notification;
    // `b`, asked for at its second firing's instant, runs after it.
    EXPECT_EQ(names(11, 15), (std::vector<std::string>{"self", "self", "b", "self"}));
    const sc_dt::uint64 t1 = f[11].model_ps;
    EXPECT_EQ(f[12].model_ps, t1 + 5);
    EXPECT_EQ(f[13].model_ps, t1 + 5);
    EXPECT_EQ(f[14].model_ps, t1 + 10);

    // Random notifications and cancellations: every firing the reference expected.
    EXPECT_GE(tree().shuffle.fired, 20000);
    EXPECT_EQ(tree().shuffle.wrong, 0) << tree().shuffle.first_wrong;
}

}  // namespace
}  // namespace dmasim::sim
