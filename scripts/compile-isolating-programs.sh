#!/usr/bin/env bash
# Compiles every CUDA program of the isolating cases (results/**/*.cu) for sm_90, objects only, so
# that a program a README tells a reader to run on a GPU machine still builds with the CUDA toolkit
# alone. Linking is left out: three programs need a library on their build line (-lcuda, -lcupti).
# Run by CTest (isolating.cuda_programs, Release builds with nvcc); by hand:
#   scripts/compile-isolating-programs.sh [NVCC]
set -euo pipefail
cd "$(dirname "$0")/.."
nvcc=${1:-nvcc}
command -v "$nvcc" > /dev/null || { echo "compile-isolating-programs.sh: no $nvcc" >&2; exit 2; }
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
mapfile -t programs < <(find results -name '*.cu' | sort)
[ "${#programs[@]}" -gt 0 ] || { echo "compile-isolating-programs.sh: no .cu under results/" >&2; exit 2; }
# clflushopt: the programs that flush host buffers from the CPU's caches use its intrinsic.
printf '%s\n' "${programs[@]}" |
  xargs -P "$(nproc)" -n 1 sh -c 'o="$2/$(printf %s "$3" | tr / _)"
    "$1" -c -O3 -arch=sm_90 -Xcompiler -mclflushopt -o "$o.o" "$3" > "$o.log" 2>&1 ||
      { echo "does not compile: $3"; cat "$o.log"; exit 1; }' sh "$nvcc" "$out"
echo "compile-isolating-programs.sh: ${#programs[@]} programs compile"
