#!/usr/bin/env bash
# One lease of two-gpu-host-traffic, on a two-GPU machine (CUDA toolkit and CMake only):
#   results/h200x2-nvlink/isolating/two-gpu-host-traffic/run.sh OUTDIR [COMMIT]
# Writes OUTDIR/<date>-<boot id>/: concurrent.csv, xdwait.csv (../cross-device-wait), dmaprobe's
# measured.csv and metadata.json for ../peer-sizes/plan.txt, machine.txt, stderr.txt.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cd "$here/../../../.."
out=${1:?usage: run.sh OUTDIR [COMMIT]}
commit=${2:-unknown}
boot=$(tr -d '-' </proc/sys/kernel/random/boot_id | cut -c1-8)
dir="$out/$(date -u +%Y-%m-%d)-$boot"
mkdir -p "$dir"
build=/tmp/dmaprobe-build
cmake -S gpu_validation -B "$build" -DCMAKE_BUILD_TYPE=Release -DDMASIM_GIT_COMMIT="$commit" >"$build.log" 2>&1 &&
  cmake --build "$build" -j"$(nproc)" >>"$build.log" 2>&1 || { tail -40 "$build.log"; exit 1; }
nvcc -O3 -arch=sm_90 "$here/concurrent.cu" -o /tmp/concurrent
nvcc -O3 -arch=sm_90 "$here/../cross-device-wait/xdwait.cu" -o /tmp/xdwait
{
  echo "## boot id $(cat /proc/sys/kernel/random/boot_id)"
  echo "## date $(date -u +%Y-%m-%dT%H:%M:%SZ) commit $commit"
  echo "## nvidia-smi"; nvidia-smi 2>&1 || true
  echo "## nvidia-smi topo -m"; nvidia-smi topo -m 2>&1 || true
  echo "## nvidia-smi -q (PCIe)"; nvidia-smi -q 2>&1 | grep -A 30 -i "PCI$" || true
  echo "## lscpu"; lscpu 2>&1 || true
  echo "## kernel"; uname -a; cat /proc/cmdline 2>/dev/null || true
} >"$dir/machine.txt" 2>&1
/tmp/concurrent >"$dir/concurrent.csv" 2>"$dir/stderr.txt"
/tmp/xdwait >"$dir/xdwait.csv" 2>>"$dir/stderr.txt"
"$build/dmaprobe" --plan results/h200x2-nvlink/isolating/peer-sizes/plan.txt --out "$dir" --commit "$commit" --flush-host-data --quiet 2>>"$dir/stderr.txt"
cat "$dir/concurrent.csv" "$dir/xdwait.csv"
echo "lease $(basename "$dir"): concurrent $(($(wc -l <"$dir/concurrent.csv") - 1)) rows; dmaprobe $(grep -c ',ok,' "$dir/measured.csv") rows ok"
