#!/usr/bin/env bash
# One lease of the staged-trace case, on a machine of two GPUs (CUDA toolkit with CUPTI only):
#   results/h200x2-nvlink/isolating/staged-trace/run.sh OUTDIR [SIZES_KIB [REPS]]
# Writes OUTDIR/<kind>-<date>-<boot id>/: trace.csv and events.csv (CUPTI's records of every call,
# copy and kernel; the runtime's and driver's calls traced), events-bare/ (the same program with
# only the copies and kernels traced, so that the calls' tracing cost shows), peer-on/ (the same with
# peer access enabled both ways, 1 and 16 MiB: the NVLink copies), hoststate.csv (../copy-levels/
# hoststate.cu: which of the host's two call states the lease is in), machine.txt.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=${1:?usage: run.sh OUTDIR [SIZES_KIB [REPS]]}
sizes=${2:-512,1024,4096}
reps=${3:-10}
boot=$(tr -d '-' </proc/sys/kernel/random/boot_id | cut -c1-8)
kind=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1 | awk '{print tolower($2)}')x$(nvidia-smi -L | wc -l)
dir="$out/$kind-$(date -u +%Y-%m-%d)-$boot"
mkdir -p "$dir/events-bare" "$dir/peer-on"
cupti=$(dirname "$(find /usr/local/cuda/ /usr/local/cuda*/ -name 'libcupti.so' 2>/dev/null | head -1)")
[ -f "$cupti/libcupti.so" ] || { echo "run.sh: no libcupti.so under /usr/local/cuda*" >&2; exit 1; }
nvcc -O3 -arch=sm_90 "$here/stagedtrace.cu" -o /tmp/stagedtrace -L"$cupti" -lcupti
nvcc -O3 -arch=sm_90 "$here/../copy-levels/hoststate.cu" -o /tmp/hoststate
{
  echo "## boot id $(cat /proc/sys/kernel/random/boot_id)"
  echo "## nvidia-smi"; nvidia-smi 2>&1 || true
  echo "## nvidia-smi topo -m"; nvidia-smi topo -m 2>&1 || true
  echo "## lscpu"; lscpu 2>&1 || true
  echo "## kernel"; uname -a; cat /proc/cmdline 2>/dev/null || true
} >"$dir/machine.txt" 2>&1
/tmp/hoststate >"$dir/hoststate.csv"
LD_LIBRARY_PATH="$cupti:${LD_LIBRARY_PATH:-}" /tmp/stagedtrace "$dir" "$sizes" "$reps" 1
LD_LIBRARY_PATH="$cupti:${LD_LIBRARY_PATH:-}" /tmp/stagedtrace "$dir/events-bare" "$sizes" "$reps" 0
LD_LIBRARY_PATH="$cupti:${LD_LIBRARY_PATH:-}" /tmp/stagedtrace "$dir/peer-on" 1024,16384 "$reps" 1 1
gzip -9 "$dir/trace.csv" "$dir/events-bare/trace.csv" "$dir/peer-on/trace.csv"
echo "lease $(basename "$dir"): $(($(wc -l <"$dir/events.csv") - 1)) repetitions"
