#!/usr/bin/env bash
# One lease of the stream-handoffs case, on a GPU machine (CUDA toolkit and CMake only):
#   results/h100-sxm/isolating/stream-handoffs/run.sh OUTDIR [COMMIT]
# Writes OUTDIR/<date>-<boot id>/: handoff.csv, pollsweep.csv, duplexphase.csv, calls.csv, machine.txt (nvidia-smi, lscpu, kernel),
# and dmaprobe's measured.csv and metadata.json for ../gated-copies/plan.txt, stderr.txt.
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
nvcc -O3 -arch=sm_90 "$here/handoff.cu" -o /tmp/handoff
nvcc -O3 -arch=sm_90 "$here/pollsweep.cu" -o /tmp/pollsweep
nvcc -O3 -arch=sm_90 "$here/duplexphase.cu" -o /tmp/duplexphase
{
  echo "## boot id $(cat /proc/sys/kernel/random/boot_id)"
  echo "## date $(date -u +%Y-%m-%dT%H:%M:%SZ) commit $commit"
  echo "## nvidia-smi"; nvidia-smi 2>&1 || true
  echo "## nvidia-smi -q (PCIe)"; nvidia-smi -q 2>&1 | grep -A 30 -i "PCI$" || true
  echo "## lscpu"; lscpu 2>&1 || true
  echo "## kernel"; uname -a; cat /proc/cmdline 2>/dev/null || true
} >"$dir/machine.txt" 2>&1
/tmp/handoff >"$dir/handoff.csv" 2>"$dir/stderr.txt"
/tmp/pollsweep >"$dir/pollsweep.csv" 2>>"$dir/stderr.txt"
/tmp/duplexphase >"$dir/duplexphase.csv" 2>"$dir/calls.csv"
"$build/dmaprobe" --plan "$here/../gated-copies/plan.txt" --out "$dir" --commit "$commit" --flush-host-data --quiet 2>>"$dir/stderr.txt"
echo "lease $(basename "$dir"): handoff $(($(wc -l <"$dir/handoff.csv") - 1)) rows; pollsweep $(($(wc -l <"$dir/pollsweep.csv") - 1)) rows; duplexphase $(($(wc -l <"$dir/duplexphase.csv") - 1)) rows; dmaprobe $(grep -c ',ok,' "$dir/measured.csv") rows ok"
