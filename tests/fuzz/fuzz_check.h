// Shared by the fuzz targets (docs/testing.md): what counts as a failure.
//
// Every parser reports bad input by throwing core::InputError (which names the file and the
// key); the unit parsers throw core::UnitError, which their callers turn into InputError. Any
// other exception escaping a parser would reach the user as an unexplained message (or
// std::terminate), so the targets let the documented exceptions pass and abort on anything
// else: libFuzzer then records the input as a crash, and the replay tests fail.
#pragma once

#include <cxxabi.h>

#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>
#include <typeinfo>

#include "dmasim/core/error.h"

namespace dmasim::fuzz {

// Prints what went wrong and aborts (a crash for libFuzzer and for the replay driver).
[[noreturn]] inline void fail(const char* target, const std::string& what) {
    std::fprintf(stderr, "dmasim fuzz target %s: %s\n", target, what.c_str());
    std::fflush(stderr);
    std::abort();
}

inline std::string type_name(const std::type_info& t) {
    int status = 0;
    char* d = abi::__cxa_demangle(t.name(), nullptr, nullptr, &status);
    std::string out = (status == 0 && d != nullptr) ? d : t.name();
    std::free(d);
    return out;
}

// What an exception that is not part of the API's contract looks like in the report.
inline std::string describe_current_exception() {
    try {
        throw;
    } catch (const std::exception& e) {
        return "unexpected exception " + type_name(typeid(e)) + ": " + e.what();
    } catch (...) {
        const std::type_info* t = abi::__cxa_current_exception_type();
        return "unexpected exception of type " + (t != nullptr ? type_name(*t) : std::string("?"));
    }
}

enum class Allow { kInputError, kInputOrUnitError };

// Runs `f`. Returns true when it returned normally, false when it threw an exception the API
// documents (InputError; UnitError too with Allow::kInputOrUnitError); aborts on any other.
template <class F>
bool run(const char* target, F&& f, Allow allow = Allow::kInputError) {
    try {
        f();
        return true;
    } catch (const core::InputError&) {
        return false;
    } catch (const core::UnitError& e) {
        if (allow == Allow::kInputOrUnitError) return false;
        fail(target, std::string("core::UnitError escaped (callers must turn it into InputError): ") + e.what());
    } catch (...) {
        fail(target, describe_current_exception());
    }
}

// A property that must hold (round trips, importer output that the reader must accept).
inline void require(bool ok, const char* target, const std::string& what) {
    if (!ok) fail(target, what);
}

}  // namespace dmasim::fuzz
