#!/usr/bin/env bash
# One lease of duplexmem's repeat mode (nothing flushed, as dmaprobe runs), on a GPU machine
# (CUDA toolkit only):
#   results/h100-sxm/isolating/duplex-host-memory/run-repeat.sh OUTDIR
# Writes OUTDIR/<date>-<boot id>/: repeat.csv, machine.txt (nvidia-smi, lscpu, kernel).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=${1:?usage: run-repeat.sh OUTDIR}
boot=$(tr -d '-' </proc/sys/kernel/random/boot_id | cut -c1-8)
dir="$out/$(date -u +%Y-%m-%d)-$boot"
mkdir -p "$dir"
nvcc -O3 -arch=sm_90 -Xcompiler -pthread "$here/duplexmem.cu" -o /tmp/duplexmem
{
  echo "## boot id $(cat /proc/sys/kernel/random/boot_id)"
  echo "## nvidia-smi"; nvidia-smi 2>&1 || true
  echo "## lscpu"; lscpu 2>&1 || true
  echo "## kernel"; uname -a; cat /proc/cmdline 2>/dev/null || true
} >"$dir/machine.txt" 2>&1
/tmp/duplexmem repeat >"$dir/repeat.csv"
echo "lease $(basename "$dir"): $(($(wc -l <"$dir/repeat.csv") - 1)) rows"
