#!/usr/bin/env bash
# CI's sanitizer configuration (docs/testing.md): a Debug build with AddressSanitizer and
# UndefinedBehaviorSanitizer (-DDMASIM_SANITIZE=ON, gcc) in build-asan, then the whole CTest
# suite under it. Any sanitizer report fails the test that triggered it. Called by
# scripts/run-tests.sh; runs on its own too:
#   ./scripts/sanitize.sh            # configure, build, test
#   BUILD_ASAN=dir JOBS=N ./scripts/sanitize.sh
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_ASAN=${BUILD_ASAN:-build-asan}
JOBS=${JOBS:-$(nproc)}
# -O1, as AddressSanitizer's authors advise: the Debug build's -O0 ran the suite 60 times slower
# than Release (one test took 205 s of CTest's 300), -O1 keeps every check and assertion.
cmake -S . -B "$BUILD_ASAN" -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_FLAGS_DEBUG="-g -O1" -DDMASIM_SANITIZE=ON -DDMASIM_FUZZ=OFF \
      -DDMASIM_WARNINGS_AS_ERRORS=ON -DDMASIM_BUILD_BENCHMARKS=OFF
cmake --build "$BUILD_ASAN" -j"$JOBS"
# The binaries carry these defaults themselves (tests/sanitizer/asan_support.cpp); they are
# repeated here so that a report says which options it ran with.
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_stack_use_after_return=0:check_initialization_order=1:strict_init_order=1:detect_leaks=1:strict_string_checks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
ctest --test-dir "$BUILD_ASAN" --output-on-failure -j"$JOBS"
