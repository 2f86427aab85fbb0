#!/usr/bin/env bash
# One lease of the staged-both case, on a machine of two GPUs (CUDA toolkit only):
#   results/h200x2-nvlink/isolating/staged-both/run.sh OUTDIR [CASES SIZES NAME]
# Writes OUTDIR/<kind>-<date>-<boot id>/: stagedboth.csv (and stagedboth-NAME.csv with its repetitions in stagedboth-NAME-reps.csv for CASES
# SIZES NAME), stagedpool.csv (one direction's copies at once; leases before 2026-11-28 lack it), machine.txt (nvidia-smi, nvidia-smi topo -m,
# lscpu, kernel). <kind>: the GPU name's second word in lower case, x the number of GPUs.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=${1:?usage: run.sh OUTDIR}
boot=$(tr -d '-' </proc/sys/kernel/random/boot_id | cut -c1-8)
kind=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1 | awk '{print tolower($2)}')x$(nvidia-smi -L | wc -l)
dir="$out/$kind-$(date -u +%Y-%m-%d)-$boot"
mkdir -p "$dir"
nvcc -O3 -arch=sm_90 "$here/stagedboth.cu" -o "/tmp/stagedboth"
nvcc -O3 -arch=sm_90 "$here/stagedpool.cu" -o "/tmp/stagedpool"
{
  echo "## boot id $(cat /proc/sys/kernel/random/boot_id)"
  echo "## nvidia-smi"; nvidia-smi 2>&1 || true
  echo "## nvidia-smi topo -m"; nvidia-smi topo -m 2>&1 || true
  echo "## lscpu"; lscpu 2>&1 || true
  echo "## kernel"; uname -a; cat /proc/cmdline 2>/dev/null || true
} >"$dir/machine.txt" 2>&1
"/tmp/stagedboth" >"$dir/stagedboth.csv"
# The extra run also writes its repetitions of both and bothlate (stagedboth-NAME-reps.csv).
if [ $# -gt 1 ]; then
  echo "case,bytes,rep,call1_us,row_us" >"$dir/stagedboth-${4:-extra}-reps.csv"
  STAGEDBOTH_REPS="$dir/stagedboth-${4:-extra}-reps.csv" "/tmp/stagedboth" "$2" "${3:-1024}" >"$dir/stagedboth-${4:-extra}.csv"
fi
"/tmp/stagedpool" >"$dir/stagedpool.csv"
echo "lease $(basename "$dir"): $(($(wc -l <"$dir/stagedboth.csv") - 1)) rows"
