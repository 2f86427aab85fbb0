#!/usr/bin/env bash
# One lease of narrow-stores on a GPU machine (CUDA toolkit only):
#   results/h100-sxm/isolating/narrow-stores/run.sh OUTDIR [MODES]
# Writes OUTDIR/<date>-<boot id>/: MODE.csv for each mode (default: layouts lag warps blocks loads), machine.txt.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=${1:?usage: run.sh OUTDIR [MODES]}
modes=${2:-layouts lag warps blocks loads}
boot=$(tr -d '-' </proc/sys/kernel/random/boot_id | cut -c1-8)
dir="$out/$(date -u +%Y-%m-%d)-$boot"
mkdir -p "$dir"
nvcc -O3 -arch=sm_90 "$here/narrowstore.cu" -o /tmp/narrowstore
{
  echo "## boot id $(cat /proc/sys/kernel/random/boot_id)"
  echo "## date $(date -u +%FT%TZ)"
  echo "## nvidia-smi"; nvidia-smi 2>&1 || true
  echo "## link"; nvidia-smi --query-gpu=name,driver_version,pcie.link.gen.current,pcie.link.width.current --format=csv 2>&1 || true
  echo "## lscpu"; lscpu 2>&1 || true
  echo "## kernel"; uname -a
} >"$dir/machine.txt" 2>&1
for m in $modes; do
  case $m in
    layouts | lag | warps | blocks | loads) /tmp/narrowstore "$m" >"$dir/$m.csv" ;;
    *) echo "run.sh: unknown mode '$m' (layouts, lag, warps, blocks, loads)" >&2; exit 2 ;;
  esac
done
echo "lease $(basename "$dir")"; for m in $modes; do echo "== $m"; cat "$dir/$m.csv"; done
