#!/usr/bin/env bash
# One lease of pageable-out's tail case (tail.cu) and its watch.cu, on a GPU machine (CUDA toolkit only):
#   results/h100-sxm/isolating/pageable-out/run-tail.sh OUTDIR
# Writes OUTDIR/<kind>-<date>-<boot id>/: tail.csv, watch.csv.gz and machine.txt.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=${1:?usage: run-tail.sh OUTDIR}
"$here/run.sh" "$out" >/dev/null
boot=$(tr -d '-' </proc/sys/kernel/random/boot_id | cut -c1-8)
kind=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1 | awk '{print tolower($2)}')
dir=$(ls -d "$out/$kind"-*-"$boot")
gzip -9 "$dir/watch.csv"
nvcc -O3 -arch=sm_90 "$here/tail.cu" -o /tmp/pageable-tail
/tmp/pageable-tail >"$dir/tail.csv"
echo "lease $(basename "$dir")"; cat "$dir/tail.csv"
