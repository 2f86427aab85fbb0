#!/usr/bin/env bash
# Snapshots the PCI tree of this machine as sysfs presents it, for `dmasim topo import --sysfs`
# and as evidence of the link settings (MPS, MRRS) that the model's parameters describe.
#   scripts/capture-pci.sh OUTDIR
# Writes OUTDIR/sysfs-pci.tar.gz (devices with their attributes, the bridge hierarchy as
# directories, /sys/bus/pci/devices as links), OUTDIR/pcie-devctl.txt (MPS/MRRS decoded from
# each device's config space) and OUTDIR/nvidia-smi-topo.txt.
set -euo pipefail
out=${1:?usage: scripts/capture-pci.sh OUTDIR}
mkdir -p "$out"
snap=$(mktemp -d)
attrs="class vendor device subsystem_vendor subsystem_device current_link_speed current_link_width max_link_speed max_link_width numa_node"
for dev in /sys/bus/pci/devices/*; do
  real=$(readlink -f "$dev")
  mkdir -p "$snap$real"
  for a in $attrs; do
    [ -r "$real/$a" ] && cat "$real/$a" >"$snap$real/$a" 2>/dev/null || true
  done
  mkdir -p "$snap/sys/bus/pci/devices"
  ln -sfn "../../..${real#/sys}" "$snap/sys/bus/pci/devices/$(basename "$dev")"
done
tar -C "$snap" -czf "$out/sysfs-pci.tar.gz" sys
rm -rf "$snap"
python3 - "$out/pcie-devctl.txt" <<'PY'
import glob, os, sys
out = open(sys.argv[1], "w")
for dev in sorted(glob.glob("/sys/bus/pci/devices/*")):
    try:
        cfg = open(os.path.join(dev, "config"), "rb").read()
    except OSError as e:
        out.write(f"{os.path.basename(dev)} config unreadable: {e}\n")
        continue
    if len(cfg) < 64 or not (cfg[6] & 0x10):
        continue
    ptr, seen = cfg[0x34] & 0xFC, 0
    while ptr and ptr + 12 <= len(cfg) and seen < 48:
        if cfg[ptr] == 0x10:  # PCI Express capability
            devcap = int.from_bytes(cfg[ptr + 4:ptr + 8], "little")
            devctl = int.from_bytes(cfg[ptr + 8:ptr + 10], "little")
            lnkctl = int.from_bytes(cfg[ptr + 16:ptr + 18], "little")
            lnksta = int.from_bytes(cfg[ptr + 18:ptr + 20], "little")
            cls = open(os.path.join(dev, "class")).read().strip()
            out.write(f"{os.path.basename(dev)} class={cls} MaxPayloadSupported={128 << (devcap & 7)}B "
                      f"MPS={128 << ((devctl >> 5) & 7)}B MRRS={128 << ((devctl >> 12) & 7)}B "
                      f"ExtTag={(devctl >> 8) & 1} RCB={128 if lnkctl & 8 else 64}B "
                      f"LnkSta speed={lnksta & 0xF} width={(lnksta >> 4) & 0x3F}\n")
            break
        ptr, seen = cfg[ptr + 1] & 0xFC, seen + 1
PY
nvidia-smi topo -m >"$out/nvidia-smi-topo.txt" 2>&1 || echo "no nvidia-smi" >"$out/nvidia-smi-topo.txt"
