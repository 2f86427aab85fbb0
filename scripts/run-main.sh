#!/usr/bin/env bash
# Quick start (1): install what is missing, build, and simulate the shipped scenarios on the
# platforms the scenarios name (default: H100 SXM, PCIe Gen5 x16). Results go to results/sim/ (override
# with OUT=dir) and figures to results/figures/ (FIGURES=dir); a summary table is printed.
# Extra arguments go to `dmasim run`.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/deps.sh
BUILD=${BUILD:-build}
cmake -S . -B "$BUILD" -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$BUILD" -j"$(nproc)" --target dmasim
out=${OUT:-results/sim}
# The committed H100 calibration applies to every scenario (it transfers to the H200 within 6 %).
calibration=${CALIBRATION:-results/h100-sxm/calibration.yaml}
"$BUILD"/model/dmasim run scenarios/*.yaml scenarios/*/*.yaml --calibration "$calibration" --out "$out" "$@"
# Model vs measured on the lent H100, with its committed calibration: every lease of the machine
# kind, each row's measured time the median across leases (docs/results.md).
"$BUILD"/model/dmasim compare --measured results/h100-sxm/measured \
  --calibration "$calibration" --out "${COMPARE:-results/h100-sxm/compare}"
# Figures from the results files only: the model's, and the measurements committed in results/.
/usr/bin/python3 scripts/figures.py --sim "$out/results.csv" --out "${FIGURES:-results/figures}"
