#!/usr/bin/env bash
# smgroups.cu on one lease (CUDA toolkit only), twice:
#   results/h100-sxm/isolating/zero-copy-sm-groups/run.sh OUTDIR [curve]
# Writes OUTDIR/<kind>-<date>-<boot id>/: smgroups.csv, smgroups-again.csv (with `curve`: curve.csv,
# curve-again.csv), machine.txt.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=${1:?usage: run.sh OUTDIR [curve]}
set_=${2:-}
case "$set_" in
  '') csv=smgroups ;;
  curve) csv=curve ;;
  *) echo "run.sh: unknown cell set '$set_' (curve, or nothing)" >&2; exit 2 ;;
esac
boot=$(tr -d '-' </proc/sys/kernel/random/boot_id | cut -c1-8)
kind=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1 | awk '{print tolower($2)}')x$(nvidia-smi -L | wc -l)
dir="$out/$kind-$(date -u +%Y-%m-%d)-$boot"
mkdir -p "$dir"
nvcc -O3 -arch=sm_90 "$here/smgroups.cu" -o /tmp/smgroups
{
  echo "## boot id $(cat /proc/sys/kernel/random/boot_id)"
  echo "## nvidia-smi"; nvidia-smi 2>&1 || true
  echo "## lscpu"; lscpu 2>&1 || true
} >"$dir/machine.txt" 2>&1
/tmp/smgroups "${ITER:-20}" $set_ >"$dir/$csv.csv"
/tmp/smgroups "${ITER:-20}" $set_ >"$dir/$csv-again.csv"
echo "lease $(basename "$dir"): $(grep -c , "$dir/$csv.csv") lines"
