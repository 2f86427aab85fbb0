#!/usr/bin/env bash
# One lease of page-faults (CPU only; any machine with g++):
#   results/h100-sxm/isolating/page-faults/run.sh OUTDIR [COMMIT]
# Writes OUTDIR/<date>-<boot id>/: faults.csv, machine.txt, stderr.txt.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=${1:?usage: run.sh OUTDIR [COMMIT]}
commit=${2:-unknown}
boot=$(tr -d '-' </proc/sys/kernel/random/boot_id | cut -c1-8)
dir="$out/$(date -u +%Y-%m-%d)-$boot"
mkdir -p "$dir"
g++ -O2 -std=c++17 "$here/faults.cpp" -o /tmp/faults
{
  echo "## boot id $(cat /proc/sys/kernel/random/boot_id)"
  echo "## date $(date -u +%Y-%m-%dT%H:%M:%SZ) commit $commit"
  echo "## nvidia-smi -L"; nvidia-smi -L 2>&1 || true
  echo "## cpu"; grep -m1 "model name" /proc/cpuinfo || true; nproc
  echo "## kernel"; uname -a
  echo "## transparent_hugepage"; cat /sys/kernel/mm/transparent_hugepage/enabled /sys/kernel/mm/transparent_hugepage/defrag 2>&1 || true
  echo "## page size"; getconf PAGESIZE
} >"$dir/machine.txt" 2>&1
# Pinned to one CPU, as the driver's staging copy runs on the calling thread.
taskset -c 2 /tmp/faults >"$dir/faults.csv" 2>"$dir/stderr.txt" || /tmp/faults >"$dir/faults.csv" 2>"$dir/stderr.txt"
cat "$dir/faults.csv" "$dir/stderr.txt"
