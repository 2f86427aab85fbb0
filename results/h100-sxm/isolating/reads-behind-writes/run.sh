#!/usr/bin/env bash
# One lease of the reads-behind-writes case, on a GPU machine (CUDA toolkit only):
#   results/h100-sxm/isolating/reads-behind-writes/run.sh OUTDIR [MODES]
# Writes OUTDIR/<kind>-<date>-<boot id>/: MODE.csv for each mode (default: chase copies; also gated),
# machine.txt (nvidia-smi, lscpu, kernel). <kind>: the GPU name's second word in lower case.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=${1:?usage: run.sh OUTDIR [MODES]}
modes=${2:-chase copies}  # any of chase, copies, gated, lead, partner, landing, chain, chainstores, share, drain, startwhy, parts
boot=$(tr -d '-' </proc/sys/kernel/random/boot_id | cut -c1-8)
kind=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1 | awk '{print tolower($2)}')
dir="$out/$kind-$(date -u +%Y-%m-%d)-$boot"
mkdir -p "$dir"
nvcc -O3 -arch=sm_90 "$here/rbw.cu" -o /tmp/rbw
{
  echo "## boot id $(cat /proc/sys/kernel/random/boot_id)"
  echo "## nvidia-smi"; nvidia-smi 2>&1 || true
  echo "## lscpu"; lscpu 2>&1 || true
  echo "## kernel"; uname -a; cat /proc/cmdline 2>/dev/null || true
} >"$dir/machine.txt" 2>&1
for m in $modes; do
  case $m in
    chase | copies | gated | lead | partner | landing | chain | chainstores | share | drain | startwhy | parts) /tmp/rbw "$m" >"$dir/$m.csv" ;;
    *) echo "run.sh: unknown mode '$m' (chase, copies, gated, lead, partner, landing, chain, chainstores, share, drain, startwhy, parts)" >&2; exit 2 ;;
  esac
done
echo "lease $(basename "$dir"): $(cat "$dir"/*.csv | wc -l) lines in $(ls "$dir"/*.csv | wc -l) files"
