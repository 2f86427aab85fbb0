#!/usr/bin/env bash
# One lease for the staged pipeline's pace, on a two-GPU machine (CUDA toolkit only):
#   results/h200x2-nvlink/isolating/cross-device-wait/run-pipeline.sh OUTDIR [COMMIT]
# Writes OUTDIR/<date>-<boot id>/: pipeline.csv, xdwait.csv, concurrent.csv
# (../two-gpu-host-traffic), machine.txt, stderr.txt.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=${1:?usage: run-pipeline.sh OUTDIR [COMMIT]}
commit=${2:-unknown}
boot=$(tr -d '-' </proc/sys/kernel/random/boot_id | cut -c1-8)
dir="$out/$(date -u +%Y-%m-%d)-$boot"
mkdir -p "$dir"
for p in "$here/pipeline.cu" "$here/xdwait.cu" "$here/../two-gpu-host-traffic/concurrent.cu"; do
  nvcc -O3 -arch=sm_90 "$p" -o "/tmp/$(basename "$p" .cu)"
done
{
  echo "## boot id $(cat /proc/sys/kernel/random/boot_id)"
  echo "## date $(date -u +%Y-%m-%dT%H:%M:%SZ) commit $commit"
  echo "## nvidia-smi"; nvidia-smi 2>&1 || true
  echo "## nvidia-smi topo -m"; nvidia-smi topo -m 2>&1 || true
  echo "## lscpu"; lscpu 2>&1 || true
  echo "## kernel"; uname -a; cat /proc/cmdline 2>/dev/null || true
} >"$dir/machine.txt" 2>&1
/tmp/pipeline >"$dir/pipeline.csv" 2>"$dir/stderr.txt"
/tmp/xdwait >"$dir/xdwait.csv" 2>>"$dir/stderr.txt"
/tmp/concurrent >"$dir/concurrent.csv" 2>>"$dir/stderr.txt"
cat "$dir/pipeline.csv" "$dir/xdwait.csv" "$dir/concurrent.csv"
