#!/usr/bin/env bash
# One lease of sm-sharing on a GPU machine (CUDA toolkit only):
#   results/h100-sxm/isolating/sm-sharing/run.sh OUTDIR [COMMIT]
# Writes OUTDIR/<date>-<boot id>/: smshare.csv, machine.txt, stderr.txt.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=${1:?usage: run.sh OUTDIR [COMMIT]}
commit=${2:-unknown}
boot=$(tr -d '-' </proc/sys/kernel/random/boot_id | cut -c1-8)
dir="$out/$(date -u +%Y-%m-%d)-$boot"
mkdir -p "$dir"
nvcc -O3 -arch=sm_90 "$here/smshare.cu" -o /tmp/smshare
{
  echo "## boot id $(cat /proc/sys/kernel/random/boot_id)"
  echo "## date $(date -u +%Y-%m-%dT%H:%M:%SZ) commit $commit"
  echo "## nvidia-smi"; nvidia-smi 2>&1 || true
  echo "## cpu"; grep -m1 "model name" /proc/cpuinfo || true; nproc
} >"$dir/machine.txt" 2>&1
/tmp/smshare >"$dir/smshare.csv" 2>"$dir/stderr.txt"
cat "$dir/smshare.csv"
