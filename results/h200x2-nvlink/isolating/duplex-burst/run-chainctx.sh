#!/usr/bin/env bash
# chainctx.cu on one lease (CUDA toolkit only), twice:
#   results/h200x2-nvlink/isolating/duplex-burst/run-chainctx.sh OUTDIR [profile|window|source]
# Writes OUTDIR/<kind>-<date>-<boot id>/: chainctx.csv and chainctx-again.csv (with `profile`:
# chainctx-profile.csv and chainctx-profile-again.csv, the chains' pace along 512 copies; `window`:
# chainctx-window.csv and chainctx-window-again.csv, chains of 16-256 copies; `source`: chainctx-source.csv
# and chainctx-source-again.csv, chains into the GPU by the state of their source and destination), machine.txt.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=${1:?usage: run-chainctx.sh OUTDIR [profile|window|source]}
mode=${2:-}
if [ -n "$mode" ] && [ "$mode" != profile ] && [ "$mode" != window ] && [ "$mode" != source ]; then
  echo "run-chainctx.sh: unknown mode '$mode' (profile, window, source or nothing)" >&2
  exit 2
fi
name=chainctx${mode:+-$mode}
boot=$(tr -d '-' </proc/sys/kernel/random/boot_id | cut -c1-8)
kind=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1 | awk '{print tolower($2)}')x$(nvidia-smi -L | wc -l)
dir="$out/$kind-$(date -u +%Y-%m-%d)-$boot"
mkdir -p "$dir"
nvcc -O3 -arch=sm_90 "$here/chainctx.cu" -o /tmp/chainctx
{
  echo "## boot id $(cat /proc/sys/kernel/random/boot_id)"
  echo "## nvidia-smi"; nvidia-smi 2>&1 || true
  echo "## nvidia-smi topo"; nvidia-smi topo -m 2>&1 || true
  echo "## lscpu"; lscpu 2>&1 || true
} >"$dir/machine.txt" 2>&1
/tmp/chainctx "${ITER:-30}" $mode >"$dir/$name.csv"
/tmp/chainctx "${ITER:-30}" $mode >"$dir/$name-again.csv"
echo "lease $(basename "$dir")"
paste -d'|' "$dir/$name.csv" <(cut -d, -f6 "$dir/$name-again.csv")
