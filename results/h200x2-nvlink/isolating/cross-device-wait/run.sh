#!/usr/bin/env bash
# One 2xH200 lease for the cross-device wait and the peer rows (CUDA toolkit and CMake only):
#   results/h200x2-nvlink/isolating/cross-device-wait/run.sh OUTDIR [COMMIT]
# Runs, on one freshly started machine:
#   - scripts/measure-on-gpu.sh: the main plan, OUTDIR/measured/<lease>/ (a lease for ../../measured);
#   - dmaprobe on ../peer-sizes/plan.txt: OUTDIR/peer-sizes/<lease>/;
#   - xdwait.cu: OUTDIR/cross-device-wait/<lease>/xdwait.csv, with machine.txt.
# and packs OUTDIR into OUTDIR/lease.tar.gz (the device tool brings back few files).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root="$here/../../../.."
out=${1:?usage: run.sh OUTDIR [COMMIT]}
commit=${2:-unknown}
boot=$(tr -d '-' </proc/sys/kernel/random/boot_id | cut -c1-8)
lease="$(date -u +%Y-%m-%d)-$boot"
tmp=$(mktemp -d)
BUILD=/tmp/dmaprobe-build "$root/scripts/measure-on-gpu.sh" "$tmp/measured" "$commit" >"$tmp/main.log" 2>&1
tail -1 "$tmp/main.log"
mkdir -p "$tmp/peer-sizes/$lease" "$tmp/cross-device-wait/$lease"
(cd "$root" && /tmp/dmaprobe-build/dmaprobe --plan results/h200x2-nvlink/isolating/peer-sizes/plan.txt \
  --out "$tmp/peer-sizes/$lease" --commit "$commit" --flush-host-data --quiet)
cp "$tmp/measured/$lease/machine.txt" "$tmp/peer-sizes/$lease/machine.txt"
cp "$tmp/measured/$lease/machine.txt" "$tmp/cross-device-wait/$lease/machine.txt"
nvcc -O3 -arch=sm_90 "$here/xdwait.cu" -o /tmp/xdwait
/tmp/xdwait >"$tmp/cross-device-wait/$lease/xdwait.csv" 2>"$tmp/cross-device-wait/$lease/stderr.txt"
cat "$tmp/cross-device-wait/$lease/xdwait.csv"
tar -C "$tmp" -czf "$out/lease.tar.gz" measured peer-sizes cross-device-wait
echo "lease $lease packed: $(du -h "$out/lease.tar.gz" | cut -f1)"
