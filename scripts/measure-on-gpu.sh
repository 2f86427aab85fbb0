#!/usr/bin/env bash
# Runs on a GPU machine (CUDA toolkit and CMake only): builds dmaprobe standalone, checks it on
# the smoke plan, then measures results/plan.txt RUNS times (to see run-to-run noise) and
# records what the machine says about its PCIe setup.
#   scripts/measure-on-gpu.sh OUTDIR [COMMIT] [RUNS]
# Writes OUTDIR/run<N>/{measured.csv,metadata.json}, OUTDIR/smoke.csv, OUTDIR/machine.txt.
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:?usage: scripts/measure-on-gpu.sh OUTDIR [COMMIT] [RUNS]}
commit=${2:-unknown}
runs=${3:-2}
build=${BUILD:-/tmp/dmaprobe-build}
mkdir -p "$out"
cmake -S gpu_validation -B "$build" -DCMAKE_BUILD_TYPE=Release -DDMASIM_GIT_COMMIT="$commit" >"$build.log" 2>&1 &&
  cmake --build "$build" -j"$(nproc)" >>"$build.log" 2>&1 || { tail -40 "$build.log"; exit 1; }
{
  echo "## nvidia-smi"; nvidia-smi 2>&1 || true
  echo "## nvidia-smi topo -m"; nvidia-smi topo -m 2>&1 || true
  echo "## nvidia-smi -q (PCIe)"; nvidia-smi -q 2>&1 | grep -A 30 -i "PCI$" || true
  echo "## lspci"; (command -v lspci >/dev/null && lspci -vvv 2>&1 | grep -E "^[0-9a-f]|MaxPayload|MaxReadReq|LnkCap|LnkSta|DevCap") || echo "no lspci"
  echo "## cpu"; grep -m1 "model name" /proc/cpuinfo || true; nproc
} >"$out/machine.txt" 2>&1
"$build/dmaprobe" --plan gpu_validation/plans/smoke.txt --out "$out/smoke" --quiet
cp "$out/smoke/measured.csv" "$out/smoke.csv" && rm -rf "$out/smoke"
for i in $(seq 1 "$runs"); do
  "$build/dmaprobe" --plan results/plan.txt --out "$out/run$i" --commit "$commit"
done
