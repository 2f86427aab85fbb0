#!/usr/bin/env bash
# One lease of the alloc-pages case, on a GPU machine (CUDA toolkit only):
#   results/h100-sxm/isolating/alloc-pages/run.sh OUTDIR
# Writes OUTDIR/<kind>-<date>-<boot id>/: alloc.csv and machine.txt (nvidia-smi, lscpu, kernel,
# transparent huge pages, the IOMMU's mode as the kernel's command line and sysfs give it).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=${1:?usage: run.sh OUTDIR}
boot=$(tr -d '-' </proc/sys/kernel/random/boot_id | cut -c1-8)
kind=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1 | awk '{print tolower($2)}')
dir="$out/$kind-$(date -u +%Y-%m-%d)-$boot"
mkdir -p "$dir"
nvcc -O3 -arch=sm_90 "$here/alloc.cu" -o /tmp/alloc-pages
{
  echo "## boot id $(cat /proc/sys/kernel/random/boot_id)"
  echo "## nvidia-smi"; nvidia-smi 2>&1 || true
  echo "## lscpu"; lscpu 2>&1 || true
  echo "## kernel"; uname -a; cat /proc/cmdline 2>/dev/null || true
  echo "## transparent huge pages"
  for f in enabled defrag khugepaged/defrag; do
    echo "$f: $(cat /sys/kernel/mm/transparent_hugepage/$f 2>/dev/null || echo n/a)"
  done
  echo "## iommu"; ls /sys/class/iommu 2>/dev/null || true
  for g in /sys/kernel/iommu_groups/*/type; do [ -r "$g" ] && echo "$g: $(cat "$g")"; done 2>/dev/null | sort | uniq -c -f1 | head -5 || true
  echo "## meminfo"; grep -E 'MemTotal|MemFree|Hugepagesize|AnonHugePages|HugePages_Total' /proc/meminfo || true
} >"$dir/machine.txt" 2>&1
/tmp/alloc-pages >"$dir/alloc.csv"
echo "lease $(basename "$dir")"; cat "$dir/alloc.csv"
