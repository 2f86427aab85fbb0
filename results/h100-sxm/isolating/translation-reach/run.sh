#!/usr/bin/env bash
# One lease of translation-reach (CUDA toolkit and CMake only):
#   results/h100-sxm/isolating/translation-reach/run.sh OUTDIR [COMMIT]
# Writes OUTDIR/<date>-<boot id>/: dmaprobe's measured.csv and metadata.json for plan.txt (a
# dependent chase through mapped pinned host memory and through GPU memory, 4 KiB to 16/32 GiB),
# and iommu.txt: what the kernel says about the IOMMU (command line, /sys/class/iommu, the GPU's
# group and its domain type).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root="$here/../../../.."
out=${1:?usage: run.sh OUTDIR [COMMIT]}
commit=${2:-unknown}
boot=$(tr -d '-' </proc/sys/kernel/random/boot_id | cut -c1-8)
dir="$out/$(date -u +%Y-%m-%d)-$boot"
mkdir -p "$dir"
{
  echo "## /proc/cmdline"; cat /proc/cmdline
  echo "## /sys/class/iommu"; ls -l /sys/class/iommu 2>&1 || true
  echo "## dmesg (iommu, DMAR)"; (dmesg 2>/dev/null | grep -i -E "iommu|dmar" | head -40) || echo "no dmesg"
  for d in /sys/bus/pci/devices/*; do
    if [ "$(cat "$d/vendor" 2>/dev/null)" = "0x10de" ]; then
      echo "## $d"
      echo "iommu_group: $(readlink "$d/iommu_group" 2>/dev/null || echo none)"
      cat "$d/iommu_group/type" 2>/dev/null || echo "no iommu_group/type"
    fi
  done
  echo "## nvidia-smi"; nvidia-smi --query-gpu=name,driver_version,pci.bus_id --format=csv 2>&1 || true
} >"$dir/iommu.txt" 2>&1
build=/tmp/dmaprobe-build
cmake -S "$root/gpu_validation" -B "$build" -DCMAKE_BUILD_TYPE=Release -DDMASIM_GIT_COMMIT="$commit" >"$build.log" 2>&1 &&
  cmake --build "$build" -j"$(nproc)" >>"$build.log" 2>&1 || { tail -40 "$build.log"; exit 1; }
(cd "$root" && "$build/dmaprobe" --plan results/h100-sxm/isolating/translation-reach/${PLAN:-plan.txt} --out "$dir" \
  --commit "$commit" --order plan --quiet)
cut -d, -f1,5,6,10,11 "$dir/measured.csv"
cat "$dir/iommu.txt" | head -60
