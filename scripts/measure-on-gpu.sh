#!/usr/bin/env bash
# Runs on a GPU machine (CUDA toolkit and CMake only): builds dmaprobe standalone, checks it on
# the smoke plan, then measures results/plan.txt (PLAN: another plan) once and records what the machine says about
# itself. One call on a freshly started machine is one lease: the folder is named after the
# date and the machine's boot id, so leases of one kind of machine never collide.
#   scripts/measure-on-gpu.sh OUTDIR [COMMIT]
# Writes OUTDIR/<lease>/{measured.csv,metadata.json,measured.json.gz,machine.txt,smoke.csv,run.log,
# host-stalls.csv.gz} (seven files, two folders down: what the device tool brings back). Copy the folder to
# results/<machine>/measured/<lease>/ and commit it.
# Host sources are flushed from the CPU's caches after the CPU writes them (--flush-host-data):
# a GPU read of lines that sit dirty in a CPU cache is slower by an amount that changes from one
# repetition to the next (results/h100-sxm/isolating/host-cache-and-store-size), and the
# committed measurements are of sources in DRAM. HOST_DATA=once measures them as left in the
# caches (how results/h100-sxm/measured-written-once was taken).
# Before the cases, dmaprobe spins HOST_STALLS seconds (default 20; 0: off) on one core and
# records the gaps the host took it away for, then as long again waits for a release every 8 ms
# and records how late each is reached (host-stalls.csv, metadata.json "host_stalls"): the
# machine's own stalls, beside the periodic streams whose tails they make.
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:?usage: scripts/measure-on-gpu.sh OUTDIR [COMMIT]}
commit=${2:-unknown}
case "${HOST_DATA:-flushed}" in
  flushed) host_data=(--flush-host-data) ;;
  once) host_data=() ;;
  *) echo "HOST_DATA must be flushed or once, not '$HOST_DATA'" >&2; exit 2 ;;
esac
stalls=${HOST_STALLS:-20}
plan=${PLAN:-results/plan.txt}
[ -f "$plan" ] || { echo "no plan file '$plan'" >&2; exit 2; }
build=${BUILD:-/tmp/dmaprobe-build}
boot=$(tr -d '-' </proc/sys/kernel/random/boot_id | cut -c1-8)
lease="$(date -u +%Y-%m-%d)-${boot}"
dir="$out/$lease"
mkdir -p "$dir"
cmake -S gpu_validation -B "$build" -DCMAKE_BUILD_TYPE=Release -DDMASIM_GIT_COMMIT="$commit" >"$build.log" 2>&1 &&
  cmake --build "$build" -j"$(nproc)" >>"$build.log" 2>&1 || { tail -40 "$build.log"; exit 1; }
{
  echo "## lease $lease (boot id $(cat /proc/sys/kernel/random/boot_id))"
  echo "## nvidia-smi"; nvidia-smi 2>&1 || true
  echo "## nvidia-smi topo -m"; nvidia-smi topo -m 2>&1 || true
  echo "## nvidia-smi -q (PCIe)"; nvidia-smi -q 2>&1 | grep -A 30 -i "PCI$" || true
  echo "## lspci"; (command -v lspci >/dev/null && lspci -vvv 2>&1 | grep -E "^[0-9a-f]|MaxPayload|MaxReadReq|LnkCap|LnkSta|DevCap") || echo "no lspci"
  echo "## cpu"; grep -m1 "model name" /proc/cpuinfo || true; nproc
  echo "## kernel"; uname -a; cat /proc/cmdline 2>/dev/null || true
} >"$dir/machine.txt" 2>&1
"$build/dmaprobe" --plan gpu_validation/plans/smoke.txt --out "$dir/smoke" --quiet
cp "$dir/smoke/measured.csv" "$dir/smoke.csv" && rm -rf "$dir/smoke"
"$build/dmaprobe" --plan "$plan" --out "$dir" --json "$dir/measured.json" --commit "$commit" --host-stalls "$stalls" "${host_data[@]}" 2>&1 | tee "$dir/run.log"
# Every repetition's time (time_us.samples; leases measured before 2026-12-01 have only the
# summary), kept compressed: the lease folders of results/ must stay small enough to travel with
# the working tree to a GPU machine (only isolating cases' summaries read them, e.g.
# results/h100-sxm/isolating/duplex-overlap/samples_summary.py).
gzip -n -9 "$dir/measured.json"
# The host-stall probe's lines too (0.3-0.6 MB a lease raw; scripts/noisy_fit.py reads either).
if [ -f "$dir/host-stalls.csv" ]; then gzip -n -9 "$dir/host-stalls.csv"; fi
echo "lease $lease: $(grep -c ',ok,' "$dir/measured.csv") rows ok, $(grep -c ',skipped,' "$dir/measured.csv") skipped"
