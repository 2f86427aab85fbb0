#!/usr/bin/env bash
# One lease of work-queues on a GPU machine (CUDA toolkit and CMake only):
#   results/h100-sxm/isolating/work-queues/run.sh OUTDIR [COMMIT]
# For CUDA_DEVICE_MAX_CONNECTIONS = 1, 2, 4 and 8: queues.cu's false-dependency cases
# (queues-cN.csv); for 1, 2, 3, 4 and 8: assign.cu's (assign-cN.csv); for 1, 2 and 8: dmaprobe on
# plan.txt (async_overlap, depth-first against breadth-first; dmaprobe-cN/, each measuring the
# cases of its count; measured.csv holds the three runs' rows). Writes
# OUTDIR/<date>-<boot id>.tar.gz (one file, for the device tool) of OUTDIR/<date>-<boot id>/,
# machine.txt included.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../../.." && pwd)
out=${1:?usage: run.sh OUTDIR [COMMIT]}
commit=${2:-unknown}
boot=$(tr -d '-' </proc/sys/kernel/random/boot_id | cut -c1-8)
dir="$out/$(date -u +%Y-%m-%d)-$boot"
mkdir -p "$dir"
build=/tmp/dmaprobe-build
nvcc -O3 -arch=sm_90 "$here/queues.cu" -o /tmp/queues
nvcc -O3 -arch=sm_90 "$here/assign.cu" -o /tmp/assign
cmake -S "$root/gpu_validation" -B "$build" -DCMAKE_BUILD_TYPE=Release -DDMASIM_GIT_COMMIT="$commit" >"$build.log" 2>&1 &&
  cmake --build "$build" -j"$(nproc)" >>"$build.log" 2>&1 || { tail -40 "$build.log"; exit 1; }
{
  echo "## boot id $(cat /proc/sys/kernel/random/boot_id)"
  echo "## date $(date -u +%Y-%m-%dT%H:%M:%SZ) commit $commit"
  echo "## nvidia-smi"; nvidia-smi 2>&1 || true
  echo "## cpu"; grep -m1 "model name" /proc/cpuinfo || true; nproc
  echo "## kernel"; uname -a; cat /proc/cmdline 2>/dev/null || true
} >"$dir/machine.txt" 2>&1
for c in 1 2 4 8; do
  CUDA_DEVICE_MAX_CONNECTIONS=$c /tmp/queues >"$dir/queues-c$c.csv" 2>>"$dir/stderr.txt"
done
for c in 1 2 3 4 8; do
  CUDA_DEVICE_MAX_CONNECTIONS=$c /tmp/assign >"$dir/assign-c$c.csv" 2>>"$dir/stderr.txt"
done
for c in 1 2 8; do
  CUDA_DEVICE_MAX_CONNECTIONS=$c "$build/dmaprobe" --plan "$here/plan.txt" --out "$dir/dmaprobe-c$c" --commit "$commit" \
    --flush-host-data --quiet 2>>"$dir/stderr.txt"
done
# One measured.csv of the three runs: each measured the cases of its own count and skipped the rest.
{ head -1 "$dir/dmaprobe-c8/measured.csv"; for c in 1 2 8; do tail -n +2 "$dir/dmaprobe-c$c/measured.csv" | grep -v ',skipped,'; done; } >"$dir/measured.csv"
cp "$dir/dmaprobe-c8/metadata.json" "$dir/metadata.json"
cat "$dir"/queues-c*.csv "$dir"/assign-c*.csv
cut -d, -f1,5,6,7,10,11,14,15 "$dir/measured.csv"
tar czf "$dir.tar.gz" -C "$out" "$(basename "$dir")" && rm -rf "$dir"
