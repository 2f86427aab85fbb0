#!/usr/bin/env bash
# One lease of the copy-release case, on a GPU machine (CUDA toolkit only):
#   results/h100-sxm/isolating/copy-release/run.sh OUTDIR
# Writes OUTDIR/<kind>-<date>-<boot id>/: synced.csv, queued.csv (release.cu's two modes) and
# machine.txt (nvidia-smi, lscpu, kernel). <kind>: the GPU name's second word in lower case.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=${1:?usage: run.sh OUTDIR}
boot=$(tr -d '-' </proc/sys/kernel/random/boot_id | cut -c1-8)
kind=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1 | awk '{print tolower($2)}')
dir="$out/$kind-$(date -u +%Y-%m-%d)-$boot"
mkdir -p "$dir"
nvcc -O3 -arch=sm_90 "$here/release.cu" -o /tmp/copy-release -lcuda
{
  echo "## boot id $(cat /proc/sys/kernel/random/boot_id)"
  echo "## nvidia-smi"; nvidia-smi 2>&1 || true
  echo "## lscpu"; lscpu 2>&1 || true
  echo "## kernel"; uname -a; cat /proc/cmdline 2>/dev/null || true
} >"$dir/machine.txt" 2>&1
/tmp/copy-release >"$dir/synced.csv"
/tmp/copy-release queued >"$dir/queued.csv"
echo "lease $(basename "$dir")"; cat "$dir/synced.csv" "$dir/queued.csv"
