#!/usr/bin/env bash
# One lease of unaligned-buffers' rounds.cu (CUDA toolkit only), on a freshly started GPU machine:
#   results/h100-sxm/isolating/unaligned-buffers/run-rounds.sh OUTDIR [COMMIT]
# Writes OUTDIR/<date>-<boot id>/{rounds.csv,machine.txt,stderr.txt} and prints rounds.csv.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=${1:?usage: run-rounds.sh OUTDIR [COMMIT]}
commit=${2:-unknown}
boot=$(tr -d '-' </proc/sys/kernel/random/boot_id | cut -c1-8)
dir="$out/$(date -u +%Y-%m-%d)-$boot"
mkdir -p "$dir"
nvcc -O3 -arch=sm_90 "$here/rounds.cu" -o /tmp/rounds
{
  echo "## boot id $(cat /proc/sys/kernel/random/boot_id)"
  echo "## date $(date -u +%Y-%m-%dT%H:%M:%SZ) commit $commit"
  nvidia-smi --query-gpu=name,driver_version,pcie.link.gen.current,pcie.link.width.current --format=csv 2>&1 || true
} >"$dir/machine.txt" 2>&1
/tmp/rounds >"$dir/rounds.csv" 2>"$dir/stderr.txt"
cat "$dir/rounds.csv" "$dir/stderr.txt"
