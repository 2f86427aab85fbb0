#!/usr/bin/env bash
# One lease of the h2d-landing case on a GPU machine (CUDA toolkit only):
#   results/h200x2-nvlink/isolating/h2d-landing/run.sh OUTDIR COMMIT
# Writes OUTDIR/<date>-<boot id>/: landing.csv, machine.txt, stderr.txt.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=${1:?usage: run.sh OUTDIR COMMIT}
commit=${2:?usage: run.sh OUTDIR COMMIT}
boot=$(tr -d '-' </proc/sys/kernel/random/boot_id | cut -c1-8)
dir="$out/$(date -u +%Y-%m-%d)-$boot"
mkdir -p "$dir"
nvcc -O3 -arch=sm_90 "$here/landing.cu" -o /tmp/landing
{
  echo "## boot id $(cat /proc/sys/kernel/random/boot_id)"
  echo "## date $(date -u +%Y-%m-%dT%H:%M:%SZ) commit $commit"
  echo "## nvidia-smi"; nvidia-smi 2>&1 || true
  echo "## nvidia-smi topo -m"; nvidia-smi topo -m 2>&1 || true
  echo "## lscpu"; lscpu 2>&1 || true
  echo "## lspci (the GPUs: DevCtl, relaxed ordering)"; lspci -vvv -d 10de: 2>&1 | grep -E "^[0-9a-f]|DevCtl|RlxdOrd|MaxPayload|LnkSta:" || true
} >"$dir/machine.txt" 2>&1
/tmp/landing >"$dir/landing.csv" 2>"$dir/stderr.txt"
cat "$dir/landing.csv" "$dir/stderr.txt"
