#!/usr/bin/env bash
# One lease of store-source on a GPU machine (CUDA toolkit only):
#   results/h100-sxm/isolating/store-source/run.sh OUTDIR [MODES]
# Writes OUTDIR/<kind>-<date>-<boot id>/: MODE.csv for each mode (default: chase stores loads; also start),
# machine.txt. <kind>: the GPU name's second word in lower case.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=${1:?usage: run.sh OUTDIR [MODES]}
modes=${2:-chase stores loads}
boot=$(tr -d '-' </proc/sys/kernel/random/boot_id | cut -c1-8)
kind=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1 | awk '{print tolower($2)}')
dir="$out/$kind-$(date -u +%Y-%m-%d)-$boot"
mkdir -p "$dir"
nvcc -O3 -arch=sm_90 "$here/storesrc.cu" -o /tmp/storesrc
{
  echo "## boot id $(cat /proc/sys/kernel/random/boot_id)"
  echo "## nvidia-smi"; nvidia-smi 2>&1 || true
  echo "## lscpu"; lscpu 2>&1 || true
  echo "## kernel"; uname -a
} >"$dir/machine.txt" 2>&1
for m in $modes; do
  case $m in
    chase | stores | loads | start) /tmp/storesrc "$m" >"$dir/$m.csv" ;;
    *) echo "run.sh: unknown mode '$m' (chase, stores, loads, start)" >&2; exit 2 ;;
  esac
done
echo "lease $(basename "$dir")"; cat "$dir"/*.csv
