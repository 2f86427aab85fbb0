#!/usr/bin/env bash
# One lease of sm-host-path on a GPU machine (CUDA toolkit only), the program run twice:
#   results/h100-sxm/isolating/sm-host-path/run.sh OUTDIR [COMMIT]
# Writes OUTDIR/<date>-<boot id>/: smpath-1.csv, smpath-2.csv, machine.txt, stderr.txt.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
exec "$here/../../../../scripts/isolating-lease.sh" "$here/smpath.cu" "${1:?usage: run.sh OUTDIR [COMMIT]}" "${2:-unknown}"
