#!/usr/bin/env bash
# One lease of one of this folder's programs, on a GPU machine (CUDA toolkit only):
#   results/h100-sxm/isolating/pageable-size/run.sh OUTDIR PROGRAM     (PROGRAM: pagestep or pagecache)
# Writes OUTDIR/<date>-<boot id>/: PROGRAM.csv, machine.txt (nvidia-smi, lscpu, kernel, THP).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=${1:?usage: run.sh OUTDIR PROGRAM}
prog=${2:?usage: run.sh OUTDIR PROGRAM (pagestep or pagecache)}
[[ -f "$here/$prog.cu" ]] || { echo "run.sh: no $prog.cu here (pagestep or pagecache)" >&2; exit 2; }
boot=$(tr -d '-' </proc/sys/kernel/random/boot_id | cut -c1-8)
dir="$out/$(date -u +%Y-%m-%d)-$boot"
mkdir -p "$dir"
nvcc -O3 -arch=sm_90 "$here/$prog.cu" -o "/tmp/$prog"
{
  echo "## boot id $(cat /proc/sys/kernel/random/boot_id)"
  echo "## nvidia-smi"; nvidia-smi 2>&1 || true
  echo "## lscpu"; lscpu 2>&1 || true
  echo "## kernel"; uname -a; cat /proc/cmdline 2>/dev/null || true
  echo "## transparent hugepages"; cat /sys/kernel/mm/transparent_hugepage/enabled /sys/kernel/mm/transparent_hugepage/defrag 2>&1 || true
} >"$dir/machine.txt" 2>&1
"/tmp/$prog" >"$dir/$prog.csv"
echo "lease $(basename "$dir"): $(($(wc -l <"$dir/$prog.csv") - 1)) rows"
