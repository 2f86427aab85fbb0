#!/usr/bin/env bash
# One lease of duplex-host-memory on the 2-GPU host (CUDA toolkit only; GPU 0):
#   results/h200x2-nvlink/isolating/duplex-host-memory/run.sh OUTDIR
# Builds ../../../h100-sxm/isolating/duplex-host-memory/duplexmem.cu (the H100 host's program,
# unchanged) and writes OUTDIR/<kind>-<date>-<boot id>/: duplexmem.csv (host buffers flushed
# before every repetition, with and without CPU threads loading DRAM), repeat.csv (as dmaprobe
# runs: nothing flushed, the same buffers each repetition), stderr.txt, machine.txt (nvidia-smi,
# nvidia-smi topo -m, lscpu, kernel). <kind>: the GPU name's second word in lower case, x the
# number of GPUs.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
src="$here/../../../h100-sxm/isolating/duplex-host-memory/duplexmem.cu"
out=${1:?usage: run.sh OUTDIR}
boot=$(tr -d '-' </proc/sys/kernel/random/boot_id | cut -c1-8)
kind=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1 | awk '{print tolower($2)}')x$(nvidia-smi -L | wc -l)
dir="$out/$kind-$(date -u +%Y-%m-%d)-$boot"
mkdir -p "$dir"
nvcc -O3 -arch=sm_90 -Xcompiler -pthread "$src" -o /tmp/duplexmem
{
  echo "## boot id $(cat /proc/sys/kernel/random/boot_id)"
  echo "## nvidia-smi"; nvidia-smi 2>&1 || true
  echo "## nvidia-smi topo -m"; nvidia-smi topo -m 2>&1 || true
  echo "## lscpu"; lscpu 2>&1 || true
  echo "## kernel"; uname -a; cat /proc/cmdline 2>/dev/null || true
} >"$dir/machine.txt" 2>&1
/tmp/duplexmem >"$dir/duplexmem.csv" 2>"$dir/stderr.txt"
/tmp/duplexmem repeat >"$dir/repeat.csv" 2>>"$dir/stderr.txt"
echo "lease $(basename "$dir"): $(($(wc -l <"$dir/duplexmem.csv") - 1)) + $(($(wc -l <"$dir/repeat.csv") - 1)) rows"
