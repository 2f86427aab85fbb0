#!/usr/bin/env bash
# One lease of zero-copy-exchange/mixes (CUDA toolkit only):
#   results/h100-sxm/isolating/zero-copy-exchange/mixes/run.sh OUTDIR [COMMIT]
# Writes OUTDIR/<date>-<boot id>/: xmix.csv, machine.txt, stderr.txt.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=${1:?usage: run.sh OUTDIR [COMMIT]}
commit=${2:-unknown}
boot=$(tr -d '-' </proc/sys/kernel/random/boot_id | cut -c1-8)
dir="$out/$(date -u +%Y-%m-%d)-$boot"
mkdir -p "$dir"
nvcc -O3 -arch=sm_90 "$here/xmix.cu" -o /tmp/xmix
{
  echo "## boot id $(cat /proc/sys/kernel/random/boot_id)"
  echo "## date $(date -u +%Y-%m-%dT%H:%M:%SZ) commit $commit"
  echo "## nvidia-smi"; nvidia-smi 2>&1 || true
  echo "## cpu"; grep -m1 "model name" /proc/cpuinfo || true; nproc
} >"$dir/machine.txt" 2>&1
/tmp/xmix >"$dir/xmix.csv" 2>"$dir/stderr.txt"
cat "$dir/xmix.csv"
