#!/usr/bin/env bash
# One lease: dmaprobe on plan.txt in PROCESSES (default 12) processes one after the other (the
# first through scripts/measure-on-gpu.sh, which builds dmaprobe and records the machine), host
# data flushed as in the main plan.
#   results/h200x2-nvlink/isolating/peer-modes/run.sh OUTDIR [COMMIT]
# Writes OUTDIR/<lease>/ (measure-on-gpu.sh's files) and OUTDIR/<lease>/process-K/measured.csv.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cd "$here/../../../.."
out=${1:?usage: run.sh OUTDIR [COMMIT]}
PLAN="$here/plan.txt" HOST_STALLS=0 scripts/measure-on-gpu.sh "$out" "${2:-unknown}" >/dev/null
lease=$(ls "$out" | head -1)
for k in $(seq 2 "${PROCESSES:-12}"); do
  /tmp/dmaprobe-build/dmaprobe --plan "$here/plan.txt" --out "$out/$lease/process-$k" --quiet --flush-host-data --commit "${2:-unknown}"
done
echo "lease $lease"
# Every process's rows in one file (the device brings back only so many files).
{
  echo "process size_bytes median_us p10_us p90_us"
  for f in "$out/$lease/measured.csv" "$out/$lease"/process-*/measured.csv; do
    awk -F, -v f="$(basename "$(dirname "$f")")" '$1=="peer-modes" {printf "%s %s %s %s %s\n", f, $5, $6, $10, $11}' "$f"
  done
} | tee "$out/$lease/processes.txt"
