#!/usr/bin/env bash
# One lease of unaligned-buffers (CUDA toolkit only), on a freshly started GPU machine:
#   results/h100-sxm/isolating/unaligned-buffers/run.sh OUTDIR [COMMIT]
# Writes OUTDIR/<date>-<boot id>/{unaligned.csv,machine.txt,stderr.txt} and prints unaligned.csv.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=${1:?usage: run.sh OUTDIR [COMMIT]}
commit=${2:-unknown}
boot=$(tr -d '-' </proc/sys/kernel/random/boot_id | cut -c1-8)
dir="$out/$(date -u +%Y-%m-%d)-$boot"
mkdir -p "$dir"
nvcc -O3 -arch=sm_90 "$here/unaligned.cu" -o /tmp/unaligned
{
  echo "## boot id $(cat /proc/sys/kernel/random/boot_id)"
  echo "## date $(date -u +%Y-%m-%dT%H:%M:%SZ) commit $commit"
  nvidia-smi --query-gpu=name,driver_version,pcie.link.gen.current,pcie.link.width.current --format=csv 2>&1 || true
  lscpu | grep -E "Model name|^CPU\(s\)|NUMA|L2|L3|Flags" || true
  ldd --version 2>&1 | head -1 || true  # head closes the pipe early: not a failure
  echo "## kernel"; uname -a
} >"$dir/machine.txt" 2>&1
/tmp/unaligned >"$dir/unaligned.csv" 2>"$dir/stderr.txt"
cat "$dir/unaligned.csv" "$dir/stderr.txt"
