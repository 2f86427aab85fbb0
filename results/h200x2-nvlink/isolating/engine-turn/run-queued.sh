#!/usr/bin/env bash
# One lease of queuedturn.cu (CUDA toolkit only), twice 10 s apart:
#   results/h200x2-nvlink/isolating/engine-turn/run-queued.sh OUTDIR
# Writes OUTDIR/<kind>-<date>-<boot id>/: queuedturn-1.csv, queuedturn-2.csv, machine.txt.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=${1:?usage: run-queued.sh OUTDIR}
boot=$(tr -d '-' </proc/sys/kernel/random/boot_id | cut -c1-8)
kind=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1 | awk '{print tolower($2)}')x$(nvidia-smi -L | wc -l)
dir="$out/$kind-$(date -u +%Y-%m-%d)-$boot"
mkdir -p "$dir"
nvcc -O3 -arch=sm_90 "$here/queuedturn.cu" -o /tmp/queuedturn
{
  echo "## boot id $(cat /proc/sys/kernel/random/boot_id)"
  echo "## nvidia-smi"; nvidia-smi 2>&1 || true
  echo "## lscpu"; lscpu 2>&1 || true
  echo "## kernel"; uname -a
} >"$dir/machine.txt" 2>&1
/tmp/queuedturn "${ITERATIONS:-300}" >"$dir/queuedturn-1.csv"
sleep 10
/tmp/queuedturn "${ITERATIONS:-300}" >"$dir/queuedturn-2.csv"
echo "lease $(basename "$dir")"
paste -d, "$dir/queuedturn-1.csv" "$dir/queuedturn-2.csv" | cut -d, -f1,2,3,4,5,9,10,11
