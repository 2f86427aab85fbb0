#!/usr/bin/env bash
# The host's call state on one lease (hoststate.cu, CUDA toolkit only), twice 20 s apart:
#   results/h200x2-nvlink/isolating/copy-levels/hoststate.sh OUTDIR
# Writes OUTDIR/<kind>-<date>-<boot id>/: hoststate-1.csv, hoststate-2.csv, interleaved.csv.gz
# (ITERATIONS, default 20000, of the interleaved mode), machine.txt.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=${1:?usage: hoststate.sh OUTDIR}
boot=$(tr -d '-' </proc/sys/kernel/random/boot_id | cut -c1-8)
kind=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1 | awk '{print tolower($2)}')x$(nvidia-smi -L | wc -l)
dir="$out/$kind-$(date -u +%Y-%m-%d)-$boot"
mkdir -p "$dir"
nvcc -O3 -arch=sm_90 "$here/hoststate.cu" -o /tmp/hoststate
{
  echo "## boot id $(cat /proc/sys/kernel/random/boot_id)"
  echo "## nvidia-smi"; nvidia-smi 2>&1 || true
  echo "## nvidia-smi topo -m"; nvidia-smi topo -m 2>&1 || true
  echo "## lscpu"; lscpu 2>&1 || true
  echo "## kernel"; uname -a; cat /proc/cmdline 2>/dev/null || true
} >"$dir/machine.txt" 2>&1
/tmp/hoststate >"$dir/hoststate-1.csv"
sleep 20
/tmp/hoststate >"$dir/hoststate-2.csv"
/tmp/hoststate interleaved "${ITERATIONS:-20000}" | gzip -9 >"$dir/interleaved.csv.gz"
echo "lease $(basename "$dir")"
paste -d, "$dir/hoststate-1.csv" "$dir/hoststate-2.csv" | cut -d, -f1,2,7
