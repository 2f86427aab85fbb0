// AddressSanitizer around SystemC's coroutines (docs/testing.md#addresssanitizer-and-systemc),
// and the sanitizer options every test binary runs with. Linked into every executable of a
// DMASIM_SANITIZE=ON build with gcc (cmake/SanitizeSystemC.cmake); nothing else uses it.
//
// Debian's libsystemc 2.3.4 runs SC_THREADs on QuickThreads stacks and tells ASan about each
// switch (__sanitizer_start_switch_fiber, through weak references), but not completely: a switch
// back to the main coroutine announces a stack of address 0 and size 0, and a switch out of a
// thread that ends (sc_cor_pkg_qt::abort) announces nothing. From then on ASan's idea of the
// current stack is wrong; the next C++ exception makes __asan_handle_no_return refuse to clean
// the stack it unwinds ("ASan is ignoring requested __asan_handle_no_return ... False positive
// error reports may follow"), and the poisoned bytes it leaves behind later turn into reports of
// stack-use-after-scope or stack-buffer-overflow in correct code, so error paths abort instead of
// printing their message.
//
// This file repairs that from outside SystemC, with ASan's own fiber interface:
//   - __sanitizer_start_switch_fiber is interposed (the executable's definition comes before
//     libasan's in symbol lookup): a switch to "stack 0, size 0" becomes a switch to the thread's
//     real stack, and every coroutine stack SystemC announces is remembered;
//   - __asan_handle_no_return (which instrumented code calls before every throw and libasan's
//     __cxa_throw interceptor calls through the PLT) first tells ASan which stack it is on: the
//     thread's own or the remembered coroutine stack that holds the stack pointer;
//   - at exit, before LeakSanitizer scans the thread's stack, the same repair is made.
// Each forwards to libasan's definition (dlsym RTLD_NEXT). The process keeps running with exact
// stack bounds, so ASan cleans what an exception unwinds and reports only real errors.
//
// DMASIM_ASAN_SYSTEMC_REPAIR=0 in the environment turns the repair off (to see what it prevents).
//
// Needs a shared ASan runtime (gcc's libasan.so); clang links its runtime into the executable,
// where these definitions would clash with its own.
#include <dlfcn.h>
#include <pthread.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string_view>

extern "C" {
void __sanitizer_start_switch_fiber(void** fake_stack_save, const void* bottom, std::size_t size);
void __sanitizer_finish_switch_fiber(void* fake_stack_save, const void** bottom_old, std::size_t* size_old);
void __asan_handle_no_return();
}

namespace {

using StartFn = void (*)(void**, const void*, std::size_t);
using FinishFn = void (*)(void*, const void**, std::size_t*);
using NoReturnFn = void (*)();

template <class Fn>
Fn next_definition(const char* name) {
    void* f = dlsym(RTLD_NEXT, name);
    if (f == nullptr) {
        std::fprintf(stderr, "dmasim asan support: %s not found after the executable (is ASan a shared runtime?)\n", name);
        std::abort();
    }
    return reinterpret_cast<Fn>(f);
}

StartFn real_start() {
    static const StartFn f = next_definition<StartFn>("__sanitizer_start_switch_fiber");
    return f;
}
FinishFn real_finish() {
    static const FinishFn f = next_definition<FinishFn>("__sanitizer_finish_switch_fiber");
    return f;
}
NoReturnFn real_no_return() {
    static const NoReturnFn f = next_definition<NoReturnFn>("__asan_handle_no_return");
    return f;
}

bool repair() {
    static const bool on = [] {
        const char* v = std::getenv("DMASIM_ASAN_SYSTEMC_REPAIR");
        return v == nullptr || std::string_view(v) != "0";
    }();
    return on;
}

struct Range {
    std::uintptr_t bottom = 0;
    std::size_t size = 0;
    bool holds(std::uintptr_t p) const { return p >= bottom && p - bottom < size; }
};

// The calling thread's own stack (pthread_getattr_np reads /proc/self/maps for the main thread:
// once per thread).
Range thread_stack() {
    thread_local Range stack;
    if (stack.size == 0) {
        pthread_attr_t attr;
        void* addr = nullptr;
        std::size_t size = 0;
        if (pthread_getattr_np(pthread_self(), &attr) == 0) {
            if (pthread_attr_getstack(&attr, &addr, &size) == 0) stack = Range{reinterpret_cast<std::uintptr_t>(addr), size};
            pthread_attr_destroy(&attr);
        }
    }
    return stack;
}

// Coroutine stacks SystemC has switched to. Stacks are reused at the same address when a
// simulation is rebuilt, so an entry is replaced when its bottom comes again.
constexpr std::size_t kMaxStacks = 4096;
Range g_stacks[kMaxStacks];
std::atomic<std::size_t> g_count{0};

void remember(std::uintptr_t bottom, std::size_t size) {
    const std::size_t n = g_count.load(std::memory_order_acquire);
    for (std::size_t i = 0; i < n; ++i) {
        if (g_stacks[i].bottom == bottom) {
            g_stacks[i].size = size;
            return;
        }
    }
    if (n < kMaxStacks) {
        g_stacks[n] = Range{bottom, size};
        g_count.store(n + 1, std::memory_order_release);
    }
}

// Tells ASan that the stack that holds `sp` is the current one (a switch to where we already are).
void resync(std::uintptr_t sp) {
    if (!repair()) return;
    Range r = thread_stack();
    if (!r.holds(sp)) {
        r = Range{};
        const std::size_t n = g_count.load(std::memory_order_acquire);
        for (std::size_t i = 0; i < n; ++i) {
            if (g_stacks[i].holds(sp)) r = g_stacks[i];
        }
    }
    if (r.size == 0) return;  // a stack nobody announced: leave ASan's view alone
    void* fake_stack = nullptr;  // kept across the switch (SystemC's own switches drop it)
    real_start()(&fake_stack, reinterpret_cast<const void*>(r.bottom), r.size);
    real_finish()(fake_stack, nullptr, nullptr);
}

std::uintptr_t stack_pointer() {
    return reinterpret_cast<std::uintptr_t>(__builtin_frame_address(0));
}

struct AtExit {
    AtExit() {
        (void)thread_stack();
        // Registered after ASan's own leak check, so it runs before it.
        std::atexit([] { resync(stack_pointer()); });
    }
} g_at_exit;

}  // namespace

extern "C" {

void __sanitizer_start_switch_fiber(void** fake_stack_save, const void* bottom, std::size_t size) {
    if (!repair()) {
        // as SystemC asked
    } else if (bottom == nullptr || size == 0) {
        // SystemC's main coroutine: the thread's own stack.
        const Range r = thread_stack();
        bottom = reinterpret_cast<const void*>(r.bottom);
        size = r.size;
    } else {
        remember(reinterpret_cast<std::uintptr_t>(bottom), size);
    }
    real_start()(fake_stack_save, bottom, size);
}

void __asan_handle_no_return() {
    resync(stack_pointer());
    real_no_return()();
}

// Defaults for every binary of the build, also when a test binary is run by hand; ASAN_OPTIONS
// and UBSAN_OPTIONS still override them. detect_stack_use_after_return must stay off:
// SystemC's switches hand ASan no place to keep a coroutine's fake stack, so it would be freed
// under the coroutine's feet.
const char* __asan_default_options() {
    return "detect_stack_use_after_return=0:check_initialization_order=1:strict_init_order=1:"
           "detect_leaks=1:strict_string_checks=1";
}
const char* __ubsan_default_options() { return "print_stacktrace=1:halt_on_error=1"; }

}  // extern "C"
