#!/usr/bin/env bash
# One lease of record-cost on a GPU machine (CUDA toolkit only), the program run twice:
#   results/h100-sxm/isolating/record-cost/run.sh OUTDIR [COMMIT]
# Writes OUTDIR/<date>-<boot id>/: recordcost-1.csv, recordcost-2.csv, machine.txt, stderr.txt.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
exec "$here/../../../../scripts/isolating-lease.sh" "$here/recordcost.cu" "${1:?usage: run.sh OUTDIR [COMMIT]}" "${2:-unknown}"
