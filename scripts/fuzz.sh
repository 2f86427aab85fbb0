#!/usr/bin/env bash
# Builds the libFuzzer targets of the parsers (tests/fuzz, -DDMASIM_FUZZ=ON, clang) in
# build-fuzz and runs each for a bounded time (docs/testing.md). Called by
# scripts/run-tests.sh; runs on its own too:
#   ./scripts/fuzz.sh                  # every target, 60 s each
#   ./scripts/fuzz.sh 300 scenario     # one target, 5 minutes
#   FUZZ_SECONDS=30 BUILD_FUZZ=dir ./scripts/fuzz.sh
# Each target starts from its seed corpus (copies of the shipped files, build-fuzz/.../seeds)
# and the corpus of earlier runs (build-fuzz/fuzz-corpus/<target>, kept between runs), plus its
# committed regression inputs. A crash stops that target; its input is left under
# build-fuzz/fuzz-artifacts/<target>/ and the script fails at the end. Commit such an input under
# tests/fuzz/regressions/<target>/ once it is understood: CTest replays it from then on.
# Without clang and libFuzzer (Debian: clang, libclang-rt-dev) the script says so and exits 0,
# unless FUZZ_REQUIRED=1.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_FUZZ=${BUILD_FUZZ:-build-fuzz}
JOBS=${JOBS:-$(nproc)}
SECONDS_EACH=${1:-${FUZZ_SECONDS:-60}}
shift || true
TARGETS=("$@")
if ((${#TARGETS[@]} == 0)); then
  TARGETS=(scenario platform plan results_csv units set import_smi)
fi

CXX_FUZZ=${CXX_FUZZ:-$(command -v clang++ || true)}
probe_dir=$(mktemp -d)
trap 'rm -rf "$probe_dir"' EXIT
echo 'extern "C" int LLVMFuzzerTestOneInput(const unsigned char*, unsigned long) { return 0; }' \
  > "$probe_dir/probe.cpp"
if [ -z "$CXX_FUZZ" ] ||
   ! "$CXX_FUZZ" -fsanitize=fuzzer,address,undefined "$probe_dir/probe.cpp" -o "$probe_dir/probe" 2>/dev/null; then
  echo "fuzz: no clang++ with libFuzzer (Debian: apt-get install clang libclang-rt-dev); fuzzing skipped" >&2
  [ "${FUZZ_REQUIRED:-0}" = 1 ] && exit 1
  exit 0
fi

# Debug keeps assertions; -O1 keeps it fast enough to fuzz.
cmake -S . -B "$BUILD_FUZZ" -DCMAKE_CXX_COMPILER="$CXX_FUZZ" -DCMAKE_BUILD_TYPE=Debug \
      -DCMAKE_CXX_FLAGS_DEBUG="-g -O1" -DDMASIM_FUZZ=ON -DDMASIM_WITH_CUDA=OFF \
      -DDMASIM_BUILD_BENCHMARKS=OFF -DDMASIM_WARNINGS_AS_ERRORS=OFF >/dev/null
cmake --build "$BUILD_FUZZ" -j"$JOBS" --target dmasim_fuzz
seeds="$BUILD_FUZZ/tests/fuzz/seeds"

# The committed regression inputs, through the libFuzzer binaries and the replay drivers. A
# failure here is reported at the end; the fuzzing still runs.
failed=()
if ! ctest --test-dir "$BUILD_FUZZ" -L fuzz --output-on-failure -j"$JOBS"; then
  failed+=("regression-inputs")
fi

for t in "${TARGETS[@]}"; do
  corpus="$BUILD_FUZZ/fuzz-corpus/$t"
  artifacts="$BUILD_FUZZ/fuzz-artifacts/$t"
  mkdir -p "$corpus" "$artifacts"
  inputs=("$corpus" "$seeds/$t")
  [ -d "tests/fuzz/regressions/$t" ] && inputs+=("tests/fuzz/regressions/$t")
  max_len=16384
  case "$t" in units) max_len=256 ;; set) max_len=4096 ;; esac
  before=$(find "$corpus" -type f | wc -l)
  echo "fuzz: $t for ${SECONDS_EACH}s (corpus: $before inputs kept from earlier runs)"
  log="$BUILD_FUZZ/fuzz-$t.log"
  if "$BUILD_FUZZ/tests/fuzz/fuzz_$t" -max_total_time="$SECONDS_EACH" -timeout=10 -rss_limit_mb=2048 \
       -max_len="$max_len" -dict="$seeds/$t.dict" -artifact_prefix="$artifacts/" \
       -print_final_stats=1 "${inputs[@]}" >"$log" 2>&1; then
    after=$(find "$corpus" -type f | wc -l)
    runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
    cov=$(sed -n -E 's/^#[0-9]+[[:space:]]+DONE[[:space:]]+(cov: [0-9]+ ft: [0-9]+).*/\1/p' "$log" | tail -n 1)
    echo "fuzz: $t ok: $runs executions, $cov, corpus $before -> $after inputs"
  else
    failed+=("$t")
    echo "fuzz: $t FAILED; its log ends:" >&2
    tail -n 60 "$log" >&2
    echo "fuzz: the input is under $artifacts/ (replay: $BUILD_FUZZ/tests/fuzz/fuzz_$t FILE)" >&2
  fi
done
if ((${#failed[@]})); then
  echo "fuzz: failed: ${failed[*]} (docs/testing.md#fuzzing says what to do)" >&2
  exit 1
fi
