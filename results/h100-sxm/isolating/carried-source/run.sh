#!/usr/bin/env bash
# One lease of carried-source (CUDA toolkit only), on a freshly started GPU machine:
#   results/h100-sxm/isolating/carried-source/run.sh OUTDIR [pageable-first]
# Writes OUTDIR/<date>-<boot id>/{carried.csv,machine.txt}.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=${1:?usage: run.sh OUTDIR [pageable-first]}
boot=$(tr -d '-' </proc/sys/kernel/random/boot_id | cut -c1-8)
dir="$out/$(date -u +%Y-%m-%d)-$boot"
mkdir -p "$dir"
nvcc -O3 -arch=sm_90 -Xcompiler -mclflushopt "$here/carried.cu" -o /tmp/carried
{ nvidia-smi --query-gpu=name,driver_version,pcie.link.gen.current,pcie.link.width.current --format=csv; lscpu | grep -E "Model name|^CPU\(s\)|NUMA|L2|L3"; cat /proc/sys/kernel/random/boot_id; } >"$dir/machine.txt" 2>&1
/tmp/carried ${2:-} >"$dir/carried.csv"
echo "$(($(wc -l <"$dir/carried.csv") - 1)) cells in $dir"
