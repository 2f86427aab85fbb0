#!/usr/bin/env bash
# One lease of this case: dmaprobe on plan.txt (from scenario.yaml: `dmasim plan scenario.yaml
# -o plan.txt`), or on a one-GPU machine (the H100's kind of host) plan-one-gpu.txt (from
# `--set platform=h100-sxm`), host data flushed as in the main plan,
# no host-stall probe.
#   results/h200x2-nvlink/isolating/duplex-burst/run.sh OUTDIR [COMMIT]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cd "$here/../../../.."
plan="$here/plan.txt"
if [ "$(nvidia-smi -L | wc -l)" = 1 ]; then plan="$here/plan-one-gpu.txt"; fi
PLAN="$plan" HOST_STALLS=0 scripts/measure-on-gpu.sh "${1:?usage: run.sh OUTDIR [COMMIT]}" "${2:-unknown}"
