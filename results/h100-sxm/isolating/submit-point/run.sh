#!/usr/bin/env bash
# One lease of the submit-point case, on a GPU machine (CUDA toolkit only):
#   results/h100-sxm/isolating/submit-point/run.sh OUTDIR
# Writes OUTDIR/<kind>-<date>-<boot id>/: submitpoint.csv and pollpath.csv, calls.csv and
# pollpath-calls.csv (the CPU's time in each call),
# machine.txt (nvidia-smi, lscpu, kernel). <kind>: the GPU name's second word in lower case.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=${1:?usage: run.sh OUTDIR}
boot=$(tr -d '-' </proc/sys/kernel/random/boot_id | cut -c1-8)
kind=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1 | awk '{print tolower($2)}')
dir="$out/$kind-$(date -u +%Y-%m-%d)-$boot"
mkdir -p "$dir"
nvcc -O3 -arch=sm_90 "$here/submitpoint.cu" -o /tmp/submitpoint
{
  echo "## boot id $(cat /proc/sys/kernel/random/boot_id)"
  echo "## nvidia-smi"; nvidia-smi 2>&1 || true
  echo "## lscpu"; lscpu 2>&1 || true
  echo "## kernel"; uname -a; cat /proc/cmdline 2>/dev/null || true
} >"$dir/machine.txt" 2>&1
/tmp/submitpoint tails >"$dir/submitpoint.csv" 2>"$dir/calls.csv"
/tmp/submitpoint shapes >"$dir/pollpath.csv" 2>"$dir/pollpath-calls.csv"
echo "lease $(basename "$dir"): $(($(wc -l <"$dir/submitpoint.csv") - 1)) rows"
