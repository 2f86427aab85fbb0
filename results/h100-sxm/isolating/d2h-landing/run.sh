#!/usr/bin/env bash
# One lease of the d2h-landing case, on a GPU machine (CUDA toolkit only):
#   results/h100-sxm/isolating/d2h-landing/run.sh OUTDIR [MODES]  (grid, tau, h2d; default grid)
# Writes OUTDIR/<kind>-<date>-<boot id>/: landing.csv.gz (each sixteenth's landing time; gzipped,
# as the working tree travels to GPU machines and a lease's is 1.1 MB raw),
# landing-ends.csv (each repetition's calls, first and last landing, seen-done time, events),
# tau.csv.gz and tau-ends.csv (mode tau), h2d.csv (mode h2d),
# machine.txt (nvidia-smi, lscpu, kernel). <kind>: the GPU name's second word in lower case.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=${1:?usage: run.sh OUTDIR [MODES]}
boot=$(tr -d '-' </proc/sys/kernel/random/boot_id | cut -c1-8)
kind=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1 | awk '{print tolower($2)}')
dir="$out/$kind-$(date -u +%Y-%m-%d)-$boot"
mkdir -p "$dir"
nvcc -O3 -arch=sm_90 "$here/landing.cu" -o /tmp/landing
{
  echo "## boot id $(cat /proc/sys/kernel/random/boot_id)"
  echo "## nvidia-smi"; nvidia-smi 2>&1 || true
  echo "## lscpu"; lscpu 2>&1 || true
  echo "## kernel"; uname -a; cat /proc/cmdline 2>/dev/null || true
} >"$dir/machine.txt" 2>&1
modes=${2:-grid}  # any of grid, tau, h2d, e.g. "grid tau"
for m in $modes; do
  case $m in
    grid) /tmp/landing grid >"$dir/landing.csv" 2>"$dir/landing-ends.csv" && gzip -n -9 -f "$dir/landing.csv" ;;
    tau) /tmp/landing tau >"$dir/tau.csv" 2>"$dir/tau-ends.csv" && gzip -n -9 -f "$dir/tau.csv" ;;
    h2d) /tmp/landing h2d >"$dir/h2d.csv" ;;
    *) echo "run.sh: unknown mode '$m' (grid, tau, h2d)" >&2; exit 2 ;;
  esac
done
echo "lease $(basename "$dir"): $(cat "$dir"/*.csv | wc -l) lines in $(ls "$dir"/*.csv | wc -l) files"
