#!/usr/bin/env bash
# One lease of this case (CUDA toolkit and CMake only): dmaprobe on plan.txt, host sources flushed,
# no host-stall probe, through scripts/measure-on-gpu.sh.
#   results/h100-sxm/isolating/zero-copy-grid-shape/run.sh OUTDIR [COMMIT]
# Writes OUTDIR/<date>-<boot id>/ as measure-on-gpu.sh does.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=${1:?usage: run.sh OUTDIR [COMMIT]}
cd "$here/../../../.."
PLAN="$here/plan.txt" HOST_STALLS=0 scripts/measure-on-gpu.sh "$out" "${2:-unknown}"
