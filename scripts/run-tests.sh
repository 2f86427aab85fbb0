#!/usr/bin/env bash
# Quick start (2), and what CI runs (.ci/run): install what is missing, build everything (the
# CUDA harness too when nvcc is present) and run the whole CTest suite; tests that need a GPU
# skip without one. Then the same suite again under AddressSanitizer and UndefinedBehaviorSanitizer
# (scripts/sanitize.sh, build-asan/), and the parsers' fuzz targets for a bounded time
# (scripts/fuzz.sh, build-fuzz/, when clang and libFuzzer are installed). docs/testing.md.
#   DMASIM_TEST_SANITIZERS=0      skip the sanitizer build and its tests
#   DMASIM_TEST_FUZZ_SECONDS=N    seconds per fuzz target (default 60; 0 skips fuzzing)
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/deps.sh
BUILD=${BUILD:-build}
cmake -S . -B "$BUILD" -DCMAKE_BUILD_TYPE=Release -DDMASIM_WARNINGS_AS_ERRORS=ON \
      -DDMASIM_SANITIZE=OFF -DDMASIM_FUZZ=OFF \
      -DDMASIM_MPI="$(command -v mpicxx > /dev/null && echo ON || echo OFF)"  # the two-rank test (docs/scaling.md)
cmake --build "$BUILD" -j"$(nproc)"
ctest --test-dir "$BUILD" --output-on-failure -j"$(nproc)"
if [ "${DMASIM_TEST_SANITIZERS:-1}" != 0 ]; then
  ./scripts/sanitize.sh
fi
if [ "${DMASIM_TEST_FUZZ_SECONDS:-60}" != 0 ]; then
  ./scripts/fuzz.sh "${DMASIM_TEST_FUZZ_SECONDS:-60}"
fi
