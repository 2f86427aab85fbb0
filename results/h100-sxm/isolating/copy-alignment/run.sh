#!/usr/bin/env bash
# One lease of copy-alignment (CPU only; any machine with g++):
#   results/h100-sxm/isolating/copy-alignment/run.sh OUTDIR [COMMIT]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=${1:?usage: run.sh OUTDIR [COMMIT]}
commit=${2:-unknown}
boot=$(tr -d '-' </proc/sys/kernel/random/boot_id | cut -c1-8)
dir="$out/$(date -u +%Y-%m-%d)-$boot"
mkdir -p "$dir"
g++ -O2 -std=c++17 "$here/align.cpp" -o /tmp/align
{
  echo "## boot id $(cat /proc/sys/kernel/random/boot_id)"
  echo "## date $(date -u +%Y-%m-%dT%H:%M:%SZ) commit $commit"
  echo "## cpu"; grep -m1 "model name" /proc/cpuinfo || true; grep -m1 "flags" /proc/cpuinfo | tr ' ' '\n' | grep -E "^(erms|fsrm|avx512f)$" | tr '\n' ' '; echo; nproc
  echo "## glibc"; ldd --version 2>&1 | head -1
} >"$dir/machine.txt" 2>&1
taskset -c 2 /tmp/align >"$dir/align.csv" 2>"$dir/stderr.txt" || /tmp/align >"$dir/align.csv" 2>"$dir/stderr.txt"
cat "$dir/align.csv"
