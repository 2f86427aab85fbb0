#!/usr/bin/env bash
# One lease of d2h-release on a GPU machine (CUDA toolkit only):
#   results/h200x2-nvlink/isolating/d2h-release/run.sh OUTDIR [COMMIT]
# Writes OUTDIR/<date>-<boot id>/: release.csv, machine.txt, stderr.txt.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=${1:?usage: run.sh OUTDIR [COMMIT]}
commit=${2:-unknown}
boot=$(tr -d '-' </proc/sys/kernel/random/boot_id | cut -c1-8)
dir="$out/$(date -u +%Y-%m-%d)-$boot"
mkdir -p "$dir"
nvcc -O3 -arch=sm_90 "$here/release.cu" -o /tmp/release -lcuda
{
  echo "## boot id $(cat /proc/sys/kernel/random/boot_id)"
  echo "## date $(date -u +%Y-%m-%dT%H:%M:%SZ) commit $commit"
  echo "## nvidia-smi"; nvidia-smi 2>&1 || true
  echo "## lscpu"; lscpu 2>&1 || true
  echo "## kernel"; uname -a; cat /proc/cmdline 2>/dev/null || true
} >"$dir/machine.txt" 2>&1
/tmp/release >"$dir/release.csv" 2>"$dir/stderr.txt"
cat "$dir/release.csv"
