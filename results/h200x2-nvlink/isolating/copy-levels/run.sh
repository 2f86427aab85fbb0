#!/usr/bin/env bash
# One lease of copy-levels (CUDA toolkit and CMake only):
#   results/h200x2-nvlink/isolating/copy-levels/run.sh OUTDIR [COMMIT]
# Writes OUTDIR/<date>-<boot id>/: dmaprobe's measured.csv and metadata.json for plan.txt (run
# twice: shuffled, then in plan order, as shuffled/ and ordered/), gpus.csv, callstate.cu's
# time series (callstate-cpu2.csv, callstate-free.csv), and, on a machine
# whose GPUs are H200, main.tar.gz: the main plan (scripts/measure-on-gpu.sh), a lease for
# ../../measured.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root="$here/../../../.."
out=${1:?usage: run.sh OUTDIR [COMMIT]}
commit=${2:-unknown}
boot=$(tr -d '-' </proc/sys/kernel/random/boot_id | cut -c1-8)
dir="$out/$(date -u +%Y-%m-%d)-$boot"
mkdir -p "$dir"
build=/tmp/dmaprobe-build
nvidia-smi --query-gpu=name,driver_version,pci.bus_id --format=csv >"$dir/gpus.csv" 2>&1 || true
# ONLY_H200=1: on a machine whose GPUs are not H200, stop here (the lease is not wanted).
if [ "${ONLY_H200:-0}" = 1 ] && ! grep -q H200 "$dir/gpus.csv"; then cat "$dir/gpus.csv"; exit 0; fi
cmake -S "$root/gpu_validation" -B "$build" -DCMAKE_BUILD_TYPE=Release -DDMASIM_GIT_COMMIT="$commit" >"$build.log" 2>&1 &&
  cmake --build "$build" -j"$(nproc)" >>"$build.log" 2>&1 || { tail -40 "$build.log"; exit 1; }
for order in shuffle plan; do
  sub=$([ "$order" = shuffle ] && echo shuffled || echo ordered)
  (cd "$root" && "$build/dmaprobe" --plan results/h200x2-nvlink/isolating/copy-levels/plan.txt --out "$dir/$sub" \
    --commit "$commit" --flush-host-data --order "$order" --quiet)
done
# The per-call cost over time: 8 s pinned to CPU 2, then 8 s where the scheduler puts it.
nvcc -O3 -arch=sm_90 "$here/callstate.cu" -o /tmp/callstate
/tmp/callstate 8 2 >"$dir/callstate-cpu2.csv"
/tmp/callstate 8 -1 >"$dir/callstate-free.csv"
if grep -q H200 "$dir/gpus.csv"; then
  tmp=$(mktemp -d)
  BUILD=$build "$root/scripts/measure-on-gpu.sh" "$tmp" "$commit" >"$tmp/main.log" 2>&1
  tail -1 "$tmp/main.log"
  tar -C "$tmp" -czf "$dir/main.tar.gz" .
fi
cat "$dir/gpus.csv"
python3 "$here/summarize.py" "$dir" 2>/dev/null || true
