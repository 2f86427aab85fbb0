#!/usr/bin/env bash
# One lease of this case: dmaprobe on plan.txt (from scenario.yaml: `dmasim plan scenario.yaml
# -o plan.txt`), host data flushed as in the main plan, no host-stall probe.
#   results/h200x2-nvlink/isolating/duplex-beside/run.sh OUTDIR [COMMIT]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cd "$here/../../../.."
PLAN="$here/plan.txt" HOST_STALLS=0 scripts/measure-on-gpu.sh "${1:?usage: run.sh OUTDIR [COMMIT]}" "${2:-unknown}"
