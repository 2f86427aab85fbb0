#!/usr/bin/env bash
# One lease of page-faults' freshcopy.cu (CUDA toolkit):
#   results/h100-sxm/isolating/page-faults/run-freshcopy.sh OUTDIR [COMMIT]
# Writes OUTDIR/<date>-<boot id>/: freshcopy.csv, faults.csv, machine.txt, stderr.txt.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=${1:?usage: run-freshcopy.sh OUTDIR [COMMIT]}
commit=${2:-unknown}
"$here/run.sh" "$out" "$commit" >/dev/null
boot=$(tr -d '-' </proc/sys/kernel/random/boot_id | cut -c1-8)
dir="$out/$(date -u +%Y-%m-%d)-$boot"
nvcc -O3 -arch=sm_90 "$here/freshcopy.cu" -o /tmp/freshcopy
/tmp/freshcopy >"$dir/freshcopy.csv" 2>>"$dir/stderr.txt"
cat "$dir/freshcopy.csv"
