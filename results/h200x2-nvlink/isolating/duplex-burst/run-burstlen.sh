#!/usr/bin/env bash
# burstlen.cu on one lease (CUDA toolkit only), twice:
#   results/h200x2-nvlink/isolating/duplex-burst/run-burstlen.sh OUTDIR [knee]
# Writes OUTDIR/<kind>-<date>-<boot id>/: burstlen.csv and burstlen-again.csv (with `knee`:
# burstknee.csv, burstknee-again.csv), machine.txt. Without `knee` it then runs dmaprobe's
# duplex.burst plan on the same machine (run.sh, COMMIT from the environment) into
# OUTDIR/<kind>-<date>-<boot id>/dmaprobe/, so that the burst rows and the chains share a host.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=${1:?usage: run-burstlen.sh OUTDIR [knee]}
set_=${2:-}
case "$set_" in
  '') csv=burstlen ;;
  knee) csv=burstknee ;;
  *) echo "run-burstlen.sh: unknown cell set '$set_' (knee, or nothing)" >&2; exit 2 ;;
esac
boot=$(tr -d '-' </proc/sys/kernel/random/boot_id | cut -c1-8)
kind=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1 | awk '{print tolower($2)}')x$(nvidia-smi -L | wc -l)
dir="$out/$kind-$(date -u +%Y-%m-%d)-$boot"
mkdir -p "$dir"
nvcc -O3 -arch=sm_90 "$here/burstlen.cu" -o /tmp/burstlen
{
  echo "## boot id $(cat /proc/sys/kernel/random/boot_id)"
  echo "## nvidia-smi"; nvidia-smi 2>&1 || true
  echo "## lscpu"; lscpu 2>&1 || true
} >"$dir/machine.txt" 2>&1
/tmp/burstlen "${ITER:-30}" $set_ >"$dir/$csv.csv"
/tmp/burstlen "${ITER:-30}" $set_ >"$dir/$csv-again.csv"
echo "lease $(basename "$dir"): $(($(wc -l <"$dir/$csv.csv") - 1)) cells"
if [ -z "$set_" ]; then "$here/run.sh" "$dir/dmaprobe" "${COMMIT:-unknown}"; fi
