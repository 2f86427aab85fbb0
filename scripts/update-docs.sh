#!/usr/bin/env bash
# Regenerates the parameter table in docs/scenarios.md from `dmasim params --markdown`
# (a test fails when the two disagree). Usage: scripts/update-docs.sh [path/to/dmasim]
set -euo pipefail
cd "$(dirname "$0")/.."
dmasim=${1:-build/model/dmasim}
doc=docs/scenarios.md
table=$(mktemp)
"$dmasim" params --markdown >"$table"
awk -v table="$table" '
  /<!-- params:begin/ { print; while ((getline line < table) > 0) print line; skip = 1; next }
  /<!-- params:end/ { skip = 0 }
  !skip { print }
' "$doc" >"$doc.new"
mv "$doc.new" "$doc"
rm -f "$table"
