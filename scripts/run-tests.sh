#!/usr/bin/env bash
# Quick start (2): install what is missing, build everything (the CUDA harness too when nvcc
# is present), and run the whole CTest suite. Tests that need a GPU skip without one.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/deps.sh
BUILD=${BUILD:-build}
cmake -S . -B "$BUILD" -DCMAKE_BUILD_TYPE=Release -DDMASIM_WARNINGS_AS_ERRORS=ON
cmake --build "$BUILD" -j"$(nproc)"
ctest --test-dir "$BUILD" --output-on-failure -j"$(nproc)"
