#!/usr/bin/env bash
# chainpair.cu on one lease (CUDA toolkit only):
#   results/h200x2-nvlink/isolating/duplex-burst/run-chainpair.sh OUTDIR [engines|kernels|unrolled|control|front|turn|flush|sizes]
# Writes OUTDIR/<kind>-<date>-<boot id>/: chainpair.csv (with `engines`: chainengines.csv, the
# cells beside copies inside the GPU; `kernels`: chainkernels.csv, beside dmaprobe's kernels;
# `unrolled`: chainunrolled.csv, beside kernels that keep more in flight; `control`: chaincontrol.csv,
# chains of copies inside the GPU, memsets and empty kernels beside them; `front`: chainfront.csv,
# chains beside records, empty kernels and copies; `turn`: chainturn.csv, chains beside kernels
# spinning 2-50 us each and beside empty kernels held behind a late event; `flush`: chainflush.csv,
# chains beside kernels that keep 1-256 dependent loads of host memory in flight; `sizes`: chainsizes.csv,
# chains out of the GPU of 4-64 KiB copies beside small copies into it), machine.txt.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=${1:?usage: run-chainpair.sh OUTDIR [engines|kernels|unrolled|control|front|turn|flush|sizes]}
cells=${2:-}
case "$cells" in
  '') csv=chainpair.csv ;;
  engines) csv=chainengines.csv ;;
  kernels) csv=chainkernels.csv ;;
  unrolled) csv=chainunrolled.csv ;;
  control) csv=chaincontrol.csv ;;
  front) csv=chainfront.csv ;;
  turn) csv=chainturn.csv ;;
  flush) csv=chainflush.csv ;;
  sizes) csv=chainsizes.csv ;;
  *) echo "run-chainpair.sh: unknown cell set '$cells' (engines, kernels, unrolled, control, front, turn, flush, sizes, or nothing)" >&2; exit 2 ;;
esac
boot=$(tr -d '-' </proc/sys/kernel/random/boot_id | cut -c1-8)
kind=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1 | awk '{print tolower($2)}')x$(nvidia-smi -L | wc -l)
dir="$out/$kind-$(date -u +%Y-%m-%d)-$boot"
mkdir -p "$dir"
nvcc -O3 -arch=sm_90 "$here/chainpair.cu" -o /tmp/chainpair
{
  echo "## boot id $(cat /proc/sys/kernel/random/boot_id)"
  echo "## nvidia-smi"; nvidia-smi 2>&1 || true
  echo "## nvidia-smi topo"; nvidia-smi topo -m 2>&1 || true
  echo "## lscpu"; lscpu 2>&1 || true
} >"$dir/machine.txt" 2>&1
/tmp/chainpair "${ITER:-30}" $cells >"$dir/$csv"
echo "lease $(basename "$dir"): $(($(wc -l <"$dir/$csv") - 1)) cells"
