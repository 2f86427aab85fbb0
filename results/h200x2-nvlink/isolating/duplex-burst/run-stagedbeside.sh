#!/usr/bin/env bash
# stagedbeside.cu on one lease of two GPUs (CUDA toolkit only):
#   results/h200x2-nvlink/isolating/duplex-burst/run-stagedbeside.sh OUTDIR
# Writes OUTDIR/<kind>-<date>-<boot id>/: stagedbeside.csv, machine.txt.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=${1:?usage: run-stagedbeside.sh OUTDIR}
boot=$(tr -d '-' </proc/sys/kernel/random/boot_id | cut -c1-8)
kind=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1 | awk '{print tolower($2)}')x$(nvidia-smi -L | wc -l)
dir="$out/$kind-$(date -u +%Y-%m-%d)-$boot"
mkdir -p "$dir"
nvcc -O3 -arch=sm_90 "$here/stagedbeside.cu" -o /tmp/stagedbeside
[ -f "$dir/machine.txt" ] || { echo "## boot id $(cat /proc/sys/kernel/random/boot_id)"; nvidia-smi 2>&1 || true; } >"$dir/machine.txt"
/tmp/stagedbeside "${ITER:-30}" >"$dir/stagedbeside.csv"
echo "lease $(basename "$dir"):"; cat "$dir/stagedbeside.csv"
