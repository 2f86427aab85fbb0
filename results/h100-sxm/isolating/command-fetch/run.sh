#!/usr/bin/env bash
# One lease of the command-fetch case, on a GPU machine (CUDA toolkit only):
#   results/h100-sxm/isolating/command-fetch/run.sh OUTDIR
# Writes OUTDIR/<kind>-<date>-<boot id>/: fetch.csv, odd.csv (from 2026-11-27's third lease on), machine.txt (nvidia-smi, lscpu, kernel),
# stderr.txt. <kind> is the GPU's name's last word in lower case (h100, h200).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=${1:?usage: run.sh OUTDIR}
boot=$(tr -d '-' </proc/sys/kernel/random/boot_id | cut -c1-8)
kind=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1 | awk '{print tolower($2)}')
dir="$out/$kind-$(date -u +%Y-%m-%d)-$boot"
mkdir -p "$dir"
nvcc -O3 -arch=sm_90 "$here/fetch.cu" -o /tmp/fetch
{
  echo "## boot id $(cat /proc/sys/kernel/random/boot_id)"
  echo "## nvidia-smi"; nvidia-smi 2>&1 || true
  echo "## nvidia-smi -q (PCIe)"; nvidia-smi -q 2>&1 | grep -A 30 -i "PCI$" || true
  echo "## lscpu"; lscpu 2>&1 || true
  echo "## kernel"; uname -a; cat /proc/cmdline 2>/dev/null || true
} >"$dir/machine.txt" 2>&1
/tmp/fetch >"$dir/fetch.csv" 2>"$dir/stderr.txt"
/tmp/fetch odd >"$dir/odd.csv" 2>>"$dir/stderr.txt"
echo "lease $(basename "$dir"): $(($(wc -l <"$dir/fetch.csv") - 1)) rows"
