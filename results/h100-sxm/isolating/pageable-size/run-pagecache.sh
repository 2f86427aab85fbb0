#!/usr/bin/env bash
# One lease of pagecache.cu, on a GPU machine (CUDA toolkit only):
#   results/h100-sxm/isolating/pageable-size/run-pagecache.sh OUTDIR
# Writes OUTDIR/<date>-<boot id>/: pagecache.csv, machine.txt (nvidia-smi, lscpu, kernel, THP).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=${1:?usage: run-pagecache.sh OUTDIR}
boot=$(tr -d '-' </proc/sys/kernel/random/boot_id | cut -c1-8)
dir="$out/$(date -u +%Y-%m-%d)-$boot"
mkdir -p "$dir"
nvcc -O3 -arch=sm_90 "$here/pagecache.cu" -o /tmp/pagecache
{
  echo "## boot id $(cat /proc/sys/kernel/random/boot_id)"
  echo "## nvidia-smi"; nvidia-smi 2>&1 || true
  echo "## lscpu"; lscpu 2>&1 || true
  echo "## kernel"; uname -a; cat /proc/cmdline 2>/dev/null || true
  echo "## transparent hugepages"; cat /sys/kernel/mm/transparent_hugepage/enabled /sys/kernel/mm/transparent_hugepage/defrag 2>&1 || true
} >"$dir/machine.txt" 2>&1
/tmp/pagecache >"$dir/pagecache.csv"
echo "lease $(basename "$dir"): $(($(wc -l <"$dir/pagecache.csv") - 1)) rows"
