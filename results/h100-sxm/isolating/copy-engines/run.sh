#!/usr/bin/env bash
# One lease of the copy-engines case, on a GPU machine (CUDA toolkit only):
#   results/h100-sxm/isolating/copy-engines/run.sh OUTDIR
# Writes OUTDIR/<kind>-<date>-<boot id>/: engines.csv, device.txt (asyncEngineCount),
# machine.txt (nvidia-smi, lscpu, kernel). <kind>: the GPU name's second word in lower case.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=${1:?usage: run.sh OUTDIR}
boot=$(tr -d '-' </proc/sys/kernel/random/boot_id | cut -c1-8)
kind=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1 | awk '{print tolower($2)}')
dir="$out/$kind-$(date -u +%Y-%m-%d)-$boot"
mkdir -p "$dir"
nvcc -O3 -arch=sm_90 "$here/engines.cu" -o /tmp/engines
{
  echo "## boot id $(cat /proc/sys/kernel/random/boot_id)"
  echo "## nvidia-smi"; nvidia-smi 2>&1 || true
  echo "## lscpu"; lscpu 2>&1 || true
  echo "## kernel"; uname -a; cat /proc/cmdline 2>/dev/null || true
} >"$dir/machine.txt" 2>&1
/tmp/engines >"$dir/engines.csv" 2>"$dir/device.txt"
echo "lease $(basename "$dir"): $(($(wc -l <"$dir/engines.csv") - 1)) rows"
