#!/usr/bin/env bash
# One lease of duplex-repeat (CUDA toolkit and CMake only), on a machine of the 2xH200 kind:
#   results/h200x2-nvlink/isolating/duplex-repeat/run.sh OUTDIR [COMMIT]
# Writes OUTDIR/<date>-<boot id>/: dmaprobe's files for plan.txt (the main plan's duplex pairs ten
# times each, its blocking pinned copies three times each; scripts/measure-on-gpu.sh, no host-stall
# probe) and releasecopy.csv (../handoff-behind-traffic/releasecopy.cu on GPU 0, its delay D of 1-20 us;
# the first three leases ran D = 1 only; kept under ../handoff-behind-traffic/leases/h200x2-<lease>).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../../.." && pwd)
out=${1:?usage: run.sh OUTDIR [COMMIT]}
commit=${2:-unknown}
PLAN=results/h200x2-nvlink/isolating/duplex-repeat/plan.txt HOST_STALLS=0 "$root/scripts/measure-on-gpu.sh" "$out" "$commit" | tail -1
boot=$(tr -d '-' </proc/sys/kernel/random/boot_id | cut -c1-8)
dir="$out/$(date -u +%Y-%m-%d)-$boot"
nvcc -O3 -arch=sm_90 "$here/../handoff-behind-traffic/releasecopy.cu" -o /tmp/releasecopy
for d in 1 2 4 6 8 10 11 12 13 14 16 20; do
  /tmp/releasecopy 50 "$d" | { [ "$d" = 1 ] && cat || tail -n +2; }
done >"$dir/releasecopy.csv"
echo "releasecopy: $(($(wc -l <"$dir/releasecopy.csv") - 1)) rows"
