#!/usr/bin/env bash
# One lease of zero-page (CUDA toolkit only), on a freshly started GPU machine:
#   results/h100-sxm/isolating/zero-page/run.sh OUTDIR [COMMIT]
# Writes OUTDIR/<date>-<boot id>/{zeropage.csv,machine.txt,stderr.txt}.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=${1:?usage: run.sh OUTDIR [COMMIT]}
commit=${2:-unknown}
boot=$(tr -d '-' </proc/sys/kernel/random/boot_id | cut -c1-8)
dir="$out/$(date -u +%Y-%m-%d)-$boot"
mkdir -p "$dir"
nvcc -O3 -arch=sm_90 "$here/zeropage.cu" -o /tmp/zeropage
{
  echo "## boot id $(cat /proc/sys/kernel/random/boot_id)"
  echo "## date $(date -u +%Y-%m-%dT%H:%M:%SZ) commit $commit"
  nvidia-smi --query-gpu=name,driver_version,pcie.link.gen.current,pcie.link.width.current --format=csv 2>&1 || true
  lscpu | grep -E "Model name|^CPU\(s\)|NUMA|L2|L3" || true
  echo "## kernel"; uname -a
  echo "## transparent_hugepage"; cat /sys/kernel/mm/transparent_hugepage/enabled 2>&1 || true
  echo "## page size"; getconf PAGESIZE
} >"$dir/machine.txt" 2>&1
/tmp/zeropage >"$dir/zeropage.csv" 2>"$dir/stderr.txt"
cat "$dir/zeropage.csv" "$dir/stderr.txt"
