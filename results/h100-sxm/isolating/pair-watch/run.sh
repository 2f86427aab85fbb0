#!/usr/bin/env bash
# One lease of pair-watch on a GPU machine (CUDA toolkit only), the program run twice:
#   results/h100-sxm/isolating/pair-watch/run.sh OUTDIR [COMMIT]
# Writes OUTDIR/<date>-<boot id>/: pairwatch-1.csv, pairwatch-2.csv, machine.txt, stderr.txt.
# PAIRWATCH_MODE=reps: only dmaprobe's single pair and its copies alone, 4-256 KiB, every repetition a row.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
exec "$here/../../../../scripts/isolating-lease.sh" "$here/pairwatch.cu" "${1:?usage: run.sh OUTDIR [COMMIT]}" "${2:-unknown}"
