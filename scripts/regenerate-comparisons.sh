#!/usr/bin/env bash
# After a change to the model, a platform or a calibration: rewrite every committed comparison and
# the results derived from them, each with the command its own meta.json records, so that none is
# left from an older model. Run after `scripts/run-main.sh --regenerate` (which writes results/sim,
# results/h100-sxm/compare and the figures):
#   - each results/*/compare*/ folder and results/h200x2-nvlink/isolating/*/compare/ (dmasim compare);
#   - results/h200x2-nvlink/sim (dmasim run, the 2xH200's own predictions);
#   - the host-spread coverage tables of both machines.
# Usage: scripts/regenerate-comparisons.sh   (from anywhere; about 4 minutes on 2 cores)
set -euo pipefail
cd "$(dirname "$0")/.."
dmasim=build/model/dmasim
if [[ ! -x "$dmasim" ]]; then
  echo "regenerate-comparisons.sh: $dmasim is not built (scripts/run-main.sh builds it)" >&2
  exit 2
fi
command_of() {
  /usr/bin/python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["command"])' "$1"
}
# The recorded commands start with ./build/model/dmasim and name only paths inside the repository.
run_recorded() {
  local meta=$1 cmd
  cmd=$(command_of "$meta")
  if [[ "$cmd" != ./build/model/dmasim\ * ]]; then
    echo "regenerate-comparisons.sh: $meta: not a dmasim command: $cmd" >&2
    exit 2
  fi
  echo "== ${meta%/meta.json}" >&2
  # Word splitting is what the recorded command needs: its arguments hold no spaces.
  # shellcheck disable=SC2086
  $cmd >/dev/null
}
for meta in results/*/compare*/meta.json results/*/isolating/*/compare/meta.json results/h200x2-nvlink/sim/meta.json; do
  [[ -f "$meta" ]] || continue
  [[ "$meta" == results/h100-sxm/compare/meta.json ]] && continue  # run-main.sh writes it
  run_recorded "$meta"
done
held_out_h100=$(sed -n 's/^scripts\/host_spread.py coverage .* --leases \([0-9a-f,]*\) > coverage-held-out.txt$/\1/p' \
  results/h100-sxm/host-spread/README.md)
/usr/bin/python3 scripts/host_spread.py coverage results/h100-sxm/spread.csv results/sim/results.csv \
  >results/h100-sxm/host-spread/coverage.txt
if [[ -n "$held_out_h100" ]]; then
  /usr/bin/python3 scripts/host_spread.py coverage results/h100-sxm/spread.csv results/sim/results.csv \
    --leases "$held_out_h100" >results/h100-sxm/host-spread/coverage-held-out.txt
fi
/usr/bin/python3 scripts/host_spread.py coverage results/h200x2-nvlink/spread.csv results/h200x2-nvlink/sim/results.csv \
  >results/h200x2-nvlink/host-spread/coverage.txt
echo "regenerated; see git status" >&2
