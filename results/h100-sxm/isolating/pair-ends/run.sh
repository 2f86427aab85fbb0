#!/usr/bin/env bash
# One lease of pair-ends on a GPU machine (CUDA toolkit only), the program run twice:
#   results/h100-sxm/isolating/pair-ends/run.sh OUTDIR [COMMIT]
# Writes OUTDIR/<date>-<boot id>/: pairends-1.csv, pairends-2.csv, machine.txt, stderr.txt.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=${1:?usage: run.sh OUTDIR [COMMIT]}
commit=${2:-unknown}
boot=$(tr -d '-' </proc/sys/kernel/random/boot_id | cut -c1-8)
dir="$out/$(date -u +%Y-%m-%d)-$boot"
mkdir -p "$dir"
nvcc -O3 -arch=sm_90 "$here/pairends.cu" -o /tmp/pairends
{
  echo "## boot id $(cat /proc/sys/kernel/random/boot_id)"
  echo "## date $(date -u +%Y-%m-%dT%H:%M:%SZ) commit $commit"
  echo "## nvidia-smi"; nvidia-smi 2>&1 || true
  echo "## nvidia-smi -q (driver, PCIe)"; nvidia-smi -q 2>&1 | grep -E "Driver Version|CUDA Version|Product Name|Current *: *[0-9]|Max *: *[0-9]|Link Width|PCIe Generation" || true
  echo "## lscpu"; lscpu 2>&1 || true
  echo "## kernel"; uname -a; cat /proc/cmdline 2>/dev/null || true
} >"$dir/machine.txt" 2>&1
for run in 1 2; do
  /tmp/pairends >"$dir/pairends-$run.csv" 2>>"$dir/stderr.txt"
done
cat "$dir"/pairends-*.csv
