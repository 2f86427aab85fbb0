#!/usr/bin/env bash
# One lease of an isolating case whose program is a single CUDA file (CUDA toolkit only): builds
# it, records the machine, runs it twice.
#   scripts/isolating-lease.sh PROGRAM.cu OUTDIR [COMMIT]
# Writes OUTDIR/<date>-<boot id>/: NAME-1.csv, NAME-2.csv (the program's stdout; NAME is the file's
# name without .cu), machine.txt, stderr.txt. A case's run.sh calls it with its own program.
set -euo pipefail
src=${1:?usage: isolating-lease.sh PROGRAM.cu OUTDIR [COMMIT]}
out=${2:?usage: isolating-lease.sh PROGRAM.cu OUTDIR [COMMIT]}
commit=${3:-unknown}
[[ -f "$src" ]] || { echo "isolating-lease.sh: $src: no such file" >&2; exit 2; }
name=$(basename "$src" .cu)
boot=$(tr -d '-' </proc/sys/kernel/random/boot_id | cut -c1-8)
dir="$out/$(date -u +%Y-%m-%d)-$boot"
mkdir -p "$dir"
nvcc -O3 -arch=sm_90 "$src" -o "/tmp/$name"
{
  echo "## boot id $(cat /proc/sys/kernel/random/boot_id)"
  echo "## date $(date -u +%Y-%m-%dT%H:%M:%SZ) commit $commit"
  echo "## nvidia-smi"; nvidia-smi 2>&1 || true
  echo "## nvidia-smi -q (driver, PCIe)"; nvidia-smi -q 2>&1 | grep -E "Driver Version|CUDA Version|Product Name|Current *: *[0-9]|Max *: *[0-9]|Link Width|PCIe Generation" || true
  echo "## lscpu"; lscpu 2>&1 || true
  echo "## kernel"; uname -a; cat /proc/cmdline 2>/dev/null || true
} >"$dir/machine.txt" 2>&1
for run in 1 2; do
  "/tmp/$name" >"$dir/$name-$run.csv" 2>>"$dir/stderr.txt"
done
cat "$dir/$name"-*.csv
