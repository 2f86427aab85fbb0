#!/usr/bin/env bash
# Quick start (1): install what is missing, build, simulate the shipped scenarios on the
# platforms the scenarios name (default: H100 SXM, PCIe Gen5 x16), each with its platform's
# committed calibration, compare the model with the H100's measurements, draw the figures, and answer the
# source material's five questions; a summary table is printed, and the five decisions close it.
#
# Everything goes to out/ (git-ignored): out/sim/, out/compare/, out/figures/ (each with a caption
# file), out/timeline-example.png, out/questions.md (or OUT=dir, COMPARE=dir, FIGURES=dir,
# QUESTIONS=file). The committed results/sim/, results/h100-sxm/compare/, results/figures/,
# docs/timeline-example.*, docs/questions.md and the quoted passages of README.md and docs/ are
# rewritten only when asked for: --regenerate as the first argument, or REGENERATE=1. Further
# arguments go to `dmasim run`.
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
  questions=${QUESTIONS:-docs/questions.md}
else
  out=${OUT:-out/sim}
  compare=${COMPARE:-out/compare}
  figures=${FIGURES:-out/figures}
  questions=${QUESTIONS:-out/questions.md}
fi
# Each scenario starts from its platform's committed calibration (platforms/*.yaml name it: the
# lent H100's for every platform but the 2xH200, which has its own); CALIBRATION=file (or none)
# names one for every scenario instead. The tables, results.csv and config.json say which.
calibration=()
if [[ -n "${CALIBRATION:-}" ]]; then calibration=(--calibration "$CALIBRATION"); fi
"$BUILD"/model/dmasim run scenarios/*.yaml scenarios/*/*.yaml "${calibration[@]}" --out "$out" "$@"
# Model vs measured on the lent H100, with its committed calibration: every lease of the machine
# kind, each row's measured time the median across leases (docs/results.md).
"$BUILD"/model/dmasim compare --measured results/h100-sxm/measured "${calibration[@]}" --out "$compare"
# Figures from the results files only: the model's, and the measurements committed in results/.
/usr/bin/python3 scripts/figures.py --sim "$out/results.csv" --out "$figures"
# The timeline example of docs/timeline.md, drawn from a fresh trace in the figures' visual code.
timeline_dir=$([[ "$regenerate" == 1 ]] && echo docs || echo "$(dirname "$figures")")
trace_out=$(mktemp -d)
"$BUILD"/model/dmasim run scenarios/timeline-example.yaml "${calibration[@]}" --quiet \
  --trace "$timeline_dir/timeline-example.json" --trace-resolution 10us --out "$trace_out" >/dev/null
rm -rf "$trace_out"
/usr/bin/python3 scripts/plot-trace.py "$timeline_dir/timeline-example.json" "$timeline_dir/timeline-example.png"
echo "$timeline_dir/timeline-example.png"
# The passages of README.md and docs/ that quote the committed results follow them.
if [[ "$regenerate" == 1 ]]; then /usr/bin/python3 scripts/quoted.py --write; fi
# The source material's five questions answered from the files just written (docs/questions.md
# is this, from the committed results); the decisions close the run as its headline summary.
echo
echo "The five questions (written to $questions):"
/usr/bin/python3 scripts/questions.py --sim "$out/results.csv" --out "$questions" --summary
