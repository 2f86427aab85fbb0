#!/usr/bin/env bash
# One lease of offset-copy-out (CUDA toolkit):
#   results/h100-sxm/isolating/offset-copy-out/run.sh OUTDIR [COMMIT]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=${1:?usage: run.sh OUTDIR [COMMIT]}
commit=${2:-unknown}
boot=$(tr -d '-' </proc/sys/kernel/random/boot_id | cut -c1-8)
dir="$out/$(date -u +%Y-%m-%d)-$boot"
mkdir -p "$dir"
nvcc -O3 -arch=sm_90 "$here/offsetcopy.cu" -o /tmp/offsetcopy
{
  echo "## boot id $(cat /proc/sys/kernel/random/boot_id)"
  echo "## date $(date -u +%Y-%m-%dT%H:%M:%SZ) commit $commit"
  echo "## nvidia-smi -L"; nvidia-smi -L 2>&1 || true
  echo "## cpu"; grep -m1 "model name" /proc/cpuinfo || true; nproc
} >"$dir/machine.txt" 2>&1
/tmp/offsetcopy >"$dir/offsetcopy.csv" 2>"$dir/stderr.txt"
cat "$dir/offsetcopy.csv" "$dir/stderr.txt"
