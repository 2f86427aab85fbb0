#!/usr/bin/env bash
# Regenerates the model's reference numbers (tests/sim/fixtures/reference/results.csv and
# links.csv) that tests/sim/reference_test.cpp holds the simulator to. Run it only when a
# mechanism changed on purpose, and say in the commit which numbers moved and why: a change that
# only makes the simulator faster must leave them as they are.
# Usage: scripts/update-reference.sh [path/to/dmasim]
set -euo pipefail
cd "$(dirname "$0")/.."
dmasim=${1:-build/model/dmasim}
ref=tests/sim/fixtures/reference
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
"$dmasim" run "$ref/cases.yaml" --out "$out" --quiet --fidelity tlp --calibration none
cp "$out/results.csv" "$out/links.csv" "$ref/"
git --no-pager diff --stat -- "$ref" || true
