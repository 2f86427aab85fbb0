#!/bin/sh
# `mpirun -np 2 dmasim run` and `... calibrate` write exactly the files one process writes
# (docs/scaling.md): results.csv, links.csv and config.json byte for byte, and the calibration
# but for the command line it records. Usage: mpi_equality.sh DMASIM MPIEXEC SOURCE_DIR; an
# empty MPIEXEC (a build without -DDMASIM_MPI=ON) skips with exit 77, which CTest reports.
set -eu
dmasim=$1
mpiexec=$2
src=$3
if [ -z "$mpiexec" ]; then
  echo "SKIPPED: dmasim was built without MPI (configure with -DDMASIM_MPI=ON and Debian's libopenmpi-dev and openmpi-bin; scripts/run-tests.sh does)"
  exit 77
fi
dir=$(mktemp -d /tmp/dmasim-mpi-test-XXXXXX)
trap 'rm -rf "$dir"' EXIT
# CI runs as root, which Open MPI refuses unless told; two ranks may be more than the slots.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
mpi="$mpiexec -np 2 --oversubscribe"

cat > "$dir/a.yaml" <<'YAML'
name: a
strategy: [pinned, pageable, registered]
direction: [h2d, d2h, both]
sizes: [4KiB, 64KiB, 1MiB]
YAML
cat > "$dir/b.yaml" <<'YAML'
name: b
platform: 2gpu-rootports
strategy: [pinned, peer]
direction: [h2d]
sizes: [4KiB, 256KiB]
YAML
cat > "$dir/c.yaml" <<'YAML'
name: c
platform: workstation-2gpu-switch
flows:
  - { name: g0, strategy: pinned, device: 0, direction: h2d, size: 1MiB }
  - { name: g1, strategy: pinned, device: 1, direction: h2d, size: 1MiB }
YAML
set -- "$dir/a.yaml" "$dir/b.yaml" "$dir/c.yaml"

"$dmasim" run "$@" --jobs 1 --quiet --out "$dir/one" > /dev/null
$mpi "$dmasim" run "$@" --quiet --out "$dir/two" > "$dir/two.txt"
for f in results.csv links.csv config.json; do
  cmp "$dir/one/$f" "$dir/two/$f" || { echo "FAILED: $f of mpirun -np 2 differs from one process's"; exit 1; }
done
grep -q '"mpi_ranks": 2' "$dir/two/meta.json" || { echo "FAILED: the run did not have two ranks"; cat "$dir/two/meta.json"; exit 1; }
# Rank 0 alone printed the table (one header line).
[ "$(grep -c '^scenario ' "$dir/two.txt")" = 1 ] || { echo "FAILED: more than one rank printed"; cat "$dir/two.txt"; exit 1; }

fixtures="$src/tests/app/fixtures/compare"
for l in 1 2 3; do
  mkdir -p "$dir/measured/l$l"
  cp "$fixtures/measured.csv" "$dir/measured/l$l/measured.csv"
done
args="--measured $dir/measured --scenarios $fixtures/scenarios --free runtime.call_overhead --free dma.launch_latency --max-evaluations 8 --folds 2 --quiet"
"$dmasim" calibrate $args --jobs 1 --out "$dir/one.yaml" > /dev/null
$mpi "$dmasim" calibrate $args --out "$dir/two.yaml" > /dev/null
# Line 2 records the command line.
sed 2d "$dir/one.yaml" > "$dir/one.body"
sed 2d "$dir/two.yaml" > "$dir/two.body"
cmp "$dir/one.body" "$dir/two.body" || { echo "FAILED: the calibration under mpirun differs"; diff "$dir/one.body" "$dir/two.body" | head -20; exit 1; }
grep -q 'leave_one_lease_out:' "$dir/one.body" || { echo "FAILED: no leave-one-lease-out in the calibration"; exit 1; }
echo "mpirun -np 2: run and calibrate files equal those of one process"
