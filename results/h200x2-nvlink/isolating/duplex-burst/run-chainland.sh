#!/usr/bin/env bash
# chainland.cu on one lease (CUDA toolkit only):
#   results/h200x2-nvlink/isolating/duplex-burst/run-chainland.sh OUTDIR [mid]
# Writes OUTDIR/<kind>-<date>-<boot id>/: chainland.csv (with mid: chainland-mid.csv, the cells beside
# copies into the GPU of 64 KiB-1 MiB, run twice: chainland-mid-again.csv), machine.txt.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=${1:?usage: run-chainland.sh OUTDIR [mid]}
mode=${2:-}
if [ -n "$mode" ] && [ "$mode" != mid ]; then
  echo "run-chainland.sh: unknown mode '$mode' (mid or nothing)" >&2
  exit 2
fi
boot=$(tr -d '-' </proc/sys/kernel/random/boot_id | cut -c1-8)
kind=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1 | awk '{print tolower($2)}')x$(nvidia-smi -L | wc -l)
dir="$out/$kind-$(date -u +%Y-%m-%d)-$boot"
mkdir -p "$dir"
nvcc -O3 -arch=sm_90 "$here/chainland.cu" -o /tmp/chainland
{
  echo "## boot id $(cat /proc/sys/kernel/random/boot_id)"
  echo "## nvidia-smi"; nvidia-smi 2>&1 || true
  echo "## nvidia-smi topo"; nvidia-smi topo -m 2>&1 || true
  echo "## lscpu"; lscpu 2>&1 || true
} >"$dir/machine.txt" 2>&1
echo "lease $(basename "$dir")"
if [ "$mode" = mid ]; then
  /tmp/chainland "${ITER:-30}" mid >"$dir/chainland-mid.csv"
  /tmp/chainland "${ITER:-30}" mid >"$dir/chainland-mid-again.csv"
  cat "$dir/chainland-mid.csv" "$dir/chainland-mid-again.csv"
else
  /tmp/chainland "${ITER:-30}" >"$dir/chainland.csv"
  cat "$dir/chainland.csv"
fi
