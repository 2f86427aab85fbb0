#!/usr/bin/env bash
# Quick start (1): install what is missing, build, simulate the shipped scenarios on the
# platforms the scenarios name (default: H100 SXM, PCIe Gen5 x16) with the committed H100
# calibration, compare the model with the H100's measurements, and draw the figures; a summary
# table is printed.
#
# Everything goes to out/ (git-ignored): out/sim/, out/compare/, out/figures/ (or OUT=dir,
# COMPARE=dir, FIGURES=dir). The committed results/sim/, results/h100-sxm/compare/ and
# results/figures/ are rewritten only when asked for: --regenerate as the first argument, or
# REGENERATE=1. Further arguments go to `dmasim run`.
set -euo pipefail
cd "$(dirname "$0")/.."
regenerate=${REGENERATE:-0}
if [[ "${1:-}" == "--regenerate" ]]; then
  regenerate=1
  shift
fi
. scripts/deps.sh
BUILD=${BUILD:-build}
cmake -S . -B "$BUILD" -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$BUILD" -j"$(nproc)" --target dmasim
if [[ "$regenerate" == 1 ]]; then
  out=${OUT:-results/sim}
  compare=${COMPARE:-results/h100-sxm/compare}
  figures=${FIGURES:-results/figures}
else
  out=${OUT:-out/sim}
  compare=${COMPARE:-out/compare}
  figures=${FIGURES:-out/figures}
fi
# The committed H100 calibration applies to every scenario (on the 2xH200's measurements it gives
# 7.8 % median |error| for transfers >= 64 KiB, against 7.4 % with the H200's own calibration:
# results/h200x2-nvlink/compare-with-h100-calibration/ and compare/).
calibration=${CALIBRATION:-results/h100-sxm/calibration.yaml}
"$BUILD"/model/dmasim run scenarios/*.yaml scenarios/*/*.yaml --calibration "$calibration" --out "$out" "$@"
# Model vs measured on the lent H100, with its committed calibration: every lease of the machine
# kind, each row's measured time the median across leases (docs/results.md).
"$BUILD"/model/dmasim compare --measured results/h100-sxm/measured --calibration "$calibration" --out "$compare"
# Figures from the results files only: the model's, and the measurements committed in results/.
/usr/bin/python3 scripts/figures.py --sim "$out/results.csv" --out "$figures"
