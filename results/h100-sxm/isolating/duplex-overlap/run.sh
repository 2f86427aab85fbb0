#!/usr/bin/env bash
# One lease of the duplex-overlap case, on a GPU machine (CUDA toolkit only):
#   results/h100-sxm/isolating/duplex-overlap/run.sh OUTDIR
# Writes OUTDIR/<kind>-<date>-<boot id>/: for each mode (default: overlap share reps) MODE.csv and
# its CPU times in each call (calls.csv for overlap, MODE-calls.csv for the others),
# machine.txt (nvidia-smi, lscpu, kernel). <kind>: the GPU name's second word in lower case.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=${1:?usage: run.sh OUTDIR [MODES]}
modes=${2:-overlap share reps}  # any of overlap, share, reps, sizes, alone, behind, source, idle, sweep, overlap-large, reps-large, growth, reps-fill
boot=$(tr -d '-' </proc/sys/kernel/random/boot_id | cut -c1-8)
kind=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1 | awk '{print tolower($2)}')
dir="$out/$kind-$(date -u +%Y-%m-%d)-$boot"
mkdir -p "$dir"
nvcc -O3 -arch=sm_90 "$here/overlap.cu" -o /tmp/overlap
{
  echo "## boot id $(cat /proc/sys/kernel/random/boot_id)"
  echo "## nvidia-smi"; nvidia-smi 2>&1 || true
  echo "## lscpu"; lscpu 2>&1 || true
  echo "## kernel"; uname -a; cat /proc/cmdline 2>/dev/null || true
} >"$dir/machine.txt" 2>&1
for m in $modes; do
  case $m in
    overlap) /tmp/overlap overlap >"$dir/overlap.csv" 2>"$dir/calls.csv" ;;
    share | reps | sizes | alone | behind | source | idle | sweep | overlap-large | reps-large | growth | reps-fill) /tmp/overlap "$m" >"$dir/$m.csv" 2>"$dir/$m-calls.csv" ;;
    *) echo "run.sh: unknown mode '$m' (overlap, share, reps, sizes, alone, behind, source, idle, sweep, overlap-large, reps-large, growth, reps-fill)" >&2; exit 2 ;;
  esac
done
echo "lease $(basename "$dir"): $(cat "$dir"/*.csv | wc -l) lines in $(ls "$dir"/*.csv | wc -l) files"
