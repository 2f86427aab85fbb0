#!/usr/bin/env bash
# One lease of inline-copy on a GPU machine (CUDA toolkit only), the program run twice:
#   results/h200x2-nvlink/isolating/inline-copy/run.sh OUTDIR [COMMIT]
# Writes OUTDIR/<date>-<boot id>/: inlinecopy-1.csv, inlinecopy-2.csv, machine.txt, stderr.txt.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
exec "$here/../../../../scripts/isolating-lease.sh" "$here/inlinecopy.cu" "${1:?usage: run.sh OUTDIR [COMMIT]}" "${2:-unknown}"
