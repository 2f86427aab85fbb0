#!/usr/bin/env bash
# One lease of chase-cache (CUDA toolkit only), on a freshly started GPU machine:
#   results/h100-sxm/isolating/chase-cache/run.sh OUTDIR [ROUNDS] [windows]
# Writes OUTDIR/<date>-<boot id>/{chasecache.csv,machine.txt} (windows: windows.csv).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=${1:?usage: run.sh OUTDIR [ROUNDS] [windows]}
boot=$(tr -d '-' </proc/sys/kernel/random/boot_id | cut -c1-8)
dir="$out/$(date -u +%Y-%m-%d)-$boot"
mkdir -p "$dir"
nvcc -O3 -arch=sm_90 -Xcompiler -mclflushopt "$here/chasecache.cu" -o /tmp/chasecache
{ nvidia-smi --query-gpu=name,driver_version,pcie.link.gen.current,pcie.link.width.current --format=csv; lscpu | grep -E "Model name|^CPU\(s\)|NUMA|L2|L3"; cat /proc/sys/kernel/random/boot_id; } >"$dir/machine.txt" 2>&1
csv=chasecache.csv
[ "${3:-}" = windows ] && csv=windows.csv
/tmp/chasecache "${2:-6}" ${3:-} >"$dir/$csv"
echo "$(($(wc -l <"$dir/$csv") - 1)) cells in $dir/$csv"
