#!/usr/bin/env bash
# One lease of zero-page with dmaprobe beside zeropage.cu (CUDA toolkit and CMake only): the main
# plan's pageable and pageable-fresh cases of 64 KiB, 4 MiB and 64 MiB, three times each, in
# dmaprobe's shuffled order, then zeropage.cu on the same machine:
#   results/h100-sxm/isolating/zero-page/run-dmaprobe.sh OUTDIR COMMIT
# Writes OUTDIR/dmaprobe/<lease>/ (scripts/measure-on-gpu.sh) and OUTDIR/zeropage/<lease>/ (run.sh).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=${1:?usage: run-dmaprobe.sh OUTDIR COMMIT}
commit=${2:?usage: run-dmaprobe.sh OUTDIR COMMIT}
cd "$here/../../../.."
PLAN="$here/dmaprobe-plan.txt" HOST_STALLS=0 scripts/measure-on-gpu.sh "$out/dmaprobe" "$commit" >/dev/null
"$here/run.sh" "$out/zeropage" "$commit" >/dev/null
grep -h pageable "$out"/dmaprobe/*/measured.csv | cut -d, -f1,3,5,6 | sort
cat "$out"/zeropage/*/zeropage.csv
