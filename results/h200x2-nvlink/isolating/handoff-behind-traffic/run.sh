#!/usr/bin/env bash
# One lease of handoff-behind-traffic, on a machine of two GPUs, or one (CUDA toolkit only):
#   results/h200x2-nvlink/isolating/handoff-behind-traffic/run.sh OUTDIR [K]
# Writes OUTDIR/<kind>-<date>-<boot id>/: busywait.csv (round trips across the GPUs) and
# busywait-same.csv (between two streams of GPU 0) and busywait-seen.csv (one wait across at a
# time, seen by the CPU), busywait-records.csv (event records alone), busywait-hop.csv (one wait within a GPU at a time; -d2h, -h2d: its event behind a small copy), every repetition; machine.txt (nvidia-smi,
# nvidia-smi topo -m, lscpu, kernel). <kind>: the GPU name's second word in lower case, x the
# number of GPUs.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=${1:?usage: run.sh OUTDIR [K]}
boot=$(tr -d '-' </proc/sys/kernel/random/boot_id | cut -c1-8)
kind=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1 | awk '{print tolower($2)}')x$(nvidia-smi -L | wc -l)
dir="$out/$kind-$(date -u +%Y-%m-%d)-$boot"
mkdir -p "$dir"
nvcc -O3 -arch=sm_90 "$here/busywait.cu" -o /tmp/busywait
{
  echo "## boot id $(cat /proc/sys/kernel/random/boot_id)"
  echo "## nvidia-smi"; nvidia-smi 2>&1 || true
  echo "## nvidia-smi topo -m"; nvidia-smi topo -m 2>&1 || true
  echo "## lscpu"; lscpu 2>&1 || true
  echo "## kernel"; uname -a; cat /proc/cmdline 2>/dev/null || true
} >"$dir/machine.txt" 2>&1
# On a machine of one GPU (the H100's kind of host) only the waits within a GPU.
if [ "$(nvidia-smi -L | wc -l)" -ge 2 ]; then /tmp/busywait "${2:-100}" >"$dir/busywait.csv"; fi
/tmp/busywait "${2:-100}" same >"$dir/busywait-same.csv"
/tmp/busywait "${2:-100}" records >"$dir/busywait-records.csv"
/tmp/busywait "${2:-100}" hop >"$dir/busywait-hop.csv"
/tmp/busywait "${2:-100}" hop d2h >"$dir/busywait-hop-d2h.csv"
/tmp/busywait "${2:-100}" hop h2d >"$dir/busywait-hop-h2d.csv"
if [ "$(nvidia-smi -L | wc -l)" -ge 2 ]; then /tmp/busywait 60 seen >"$dir/busywait-seen.csv"; fi
echo "lease $(basename "$dir"): $(cat "$dir"/busywait*.csv | grep -vc '^mode') rows"
