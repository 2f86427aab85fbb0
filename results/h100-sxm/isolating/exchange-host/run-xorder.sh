#!/usr/bin/env bash
# One lease of exchange-host's xorder.cu (CUDA toolkit only):
#   results/h100-sxm/isolating/exchange-host/run-xorder.sh OUTDIR [COMMIT]
# Writes OUTDIR/<date>-<boot id>/: xorder.csv, machine.txt, stderr.txt.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=${1:?usage: run-xorder.sh OUTDIR [COMMIT]}
commit=${2:-unknown}
boot=$(tr -d '-' </proc/sys/kernel/random/boot_id | cut -c1-8)
dir="$out/$(date -u +%Y-%m-%d)-$boot"
mkdir -p "$dir"
nvcc -O3 -arch=sm_90 -Xcompiler -mclflushopt "$here/xorder.cu" -o /tmp/xorder
{
  echo "## boot id $(cat /proc/sys/kernel/random/boot_id)"
  echo "## date $(date -u +%Y-%m-%dT%H:%M:%SZ) commit $commit"
  echo "## nvidia-smi"; nvidia-smi 2>&1 || true
  echo "## cpu"; grep -m1 "model name" /proc/cpuinfo || true; nproc
} >"$dir/machine.txt" 2>&1
/tmp/xorder >"$dir/xorder.csv" 2>"$dir/stderr.txt"
cat "$dir/xorder.csv" "$dir/stderr.txt"
