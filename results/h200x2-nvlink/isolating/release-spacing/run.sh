#!/usr/bin/env bash
# One lease of the release-spacing case, on a machine of one or two GPUs (CUDA toolkit only):
#   results/h200x2-nvlink/isolating/release-spacing/run.sh OUTDIR
# Writes OUTDIR/<kind>-<date>-<boot id>/: spacing.csv (every repetition), machine.txt (nvidia-smi,
# nvidia-smi topo -m, lscpu, kernel). <kind>: the GPU name's second word in lower case, x the
# number of GPUs.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=${1:?usage: run.sh OUTDIR}
boot=$(tr -d '-' </proc/sys/kernel/random/boot_id | cut -c1-8)
kind=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1 | awk '{print tolower($2)}')x$(nvidia-smi -L | wc -l)
dir="$out/$kind-$(date -u +%Y-%m-%d)-$boot"
mkdir -p "$dir"
nvcc -O3 -arch=sm_90 "$here/spacing.cu" -o /tmp/spacing
{
  echo "## boot id $(cat /proc/sys/kernel/random/boot_id)"
  echo "## nvidia-smi"; nvidia-smi 2>&1 || true
  echo "## nvidia-smi topo -m"; nvidia-smi topo -m 2>&1 || true
  echo "## lscpu"; lscpu 2>&1 || true
  echo "## kernel"; uname -a; cat /proc/cmdline 2>/dev/null || true
} >"$dir/machine.txt" 2>&1
/tmp/spacing >"$dir/spacing.csv"
echo "lease $(basename "$dir"): $(($(wc -l <"$dir/spacing.csv") - 1)) rows"
