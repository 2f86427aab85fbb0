#!/usr/bin/env bash
# One lease of the pageable-out case, on a GPU machine (CUDA toolkit only):
#   results/h100-sxm/isolating/pageable-out/run.sh OUTDIR
# Writes OUTDIR/<kind>-<date>-<boot id>/: watch.csv and machine.txt (nvidia-smi, lscpu, kernel).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=${1:?usage: run.sh OUTDIR}
boot=$(tr -d '-' </proc/sys/kernel/random/boot_id | cut -c1-8)
kind=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1 | awk '{print tolower($2)}')
dir="$out/$kind-$(date -u +%Y-%m-%d)-$boot"
mkdir -p "$dir"
nvcc -O3 -arch=sm_90 "$here/watch.cu" -Xcompiler -pthread -o /tmp/pageable-out
{
  echo "## boot id $(cat /proc/sys/kernel/random/boot_id)"
  echo "## nvidia-smi"; nvidia-smi 2>&1 || true
  echo "## lscpu"; lscpu 2>&1 || true
  echo "## kernel"; uname -a; cat /proc/cmdline 2>/dev/null || true
} >"$dir/machine.txt" 2>&1
/tmp/pageable-out >"$dir/watch.csv"
echo "lease $(basename "$dir")"; grep -v "^piece" "$dir/watch.csv"
