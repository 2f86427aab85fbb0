#!/usr/bin/env python3
"""sm-host-path: each lease's chase through host memory, its chains of copies and what they give
for the SMs' own share of a load's round trip (gpu.sm_host_path).

Usage: summarize.py [LEASES_DIR] > summary.csv

Per lease (both runs of smpath.cu pooled, medians of the cells' medians):
  chase_host_us   one SM's dependent loads of host memory, a hop (four cells: first and last of each run)
  chase_device_us the same through GPU memory (the L2's hit)
  h2d_<size>, d2h_<size>  a copy's share of a chain of 32, into and out of the GPU
  engine_rtt_us   a chain into the GPU less one out of it at 4 KiB, less ENGINE_EXTRA_US: what the
                  model's chains differ by beyond the read's round trip at 4 KiB (the 4 KiB's
                  completions on the link and the write into the L2 against the read of it), and
                  on the 2xH200 plus dma.host_write_hold, which that host's engine holds after each
                  copy out of the GPU (0.9 us, ../copy-chains)
  sm_path_us      chase_host_us - engine_rtt_us
Standard library only.
"""
import csv
import glob
import os
import statistics
import sys

ENGINE_EXTRA_US = 0.015
HOST_WRITE_HOLD_US = {"h200x1": 0.0, "h200x2": 0.9}
SIZES = (4096, 16384, 65536)


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(os.path.abspath(__file__)), "leases")
    leases = sorted(d for d in glob.glob(os.path.join(root, "*")) if os.path.isdir(d))
    if not leases:
        sys.exit(f"summarize.py: no lease folders under {root}")
    out = csv.writer(sys.stdout, lineterminator="\n")
    out.writerow(["lease", "kind", "chase_host_us", "chase_host_range_us", "chase_device_us"]
                 + [f"{d}_{s}_us" for s in SIZES for d in ("h2d", "d2h")] + ["engine_rtt_us", "sm_path_us"])
    paths = {}
    for lease in leases:
        name = os.path.basename(lease)
        kind = name.split("-")[0]
        if kind not in HOST_WRITE_HOLD_US:
            sys.exit(f"summarize.py: {lease}: the folder's name does not start with h200x1- or h200x2-")
        rows = []
        for path in sorted(glob.glob(os.path.join(lease, "smpath-*.csv"))):
            with open(path, newline="") as f:
                rows += list(csv.DictReader(f))
        if not rows:
            sys.exit(f"summarize.py: {lease}: no smpath-*.csv")

        def cells(kind_, where, size=None):
            v = [float(r["us_median"]) for r in rows if r["kind"] == kind_ and r["where"] == where
                 and (size is None or int(r["bytes"]) == size)]
            if not v:
                sys.exit(f"summarize.py: {lease}: no {kind_} {where} {size or ''} cell")
            return v

        chase = cells("chase", "host")
        chain = {(d, s): statistics.median(cells("chain", d, s)) for d in ("h2d", "d2h") for s in SIZES}
        rtt = chain[("h2d", 4096)] - chain[("d2h", 4096)] + HOST_WRITE_HOLD_US[kind] - ENGINE_EXTRA_US
        path = statistics.median(chase) - rtt
        paths.setdefault(kind, []).append(path)
        out.writerow([name, kind, f"{statistics.median(chase):.3f}", f"{min(chase):.3f}-{max(chase):.3f}",
                      f"{statistics.median(cells('chase', 'device')):.3f}"]
                     + [f"{chain[(d, s)]:.3f}" for s in SIZES for d in ("h2d", "d2h")] + [f"{rtt:.3f}", f"{path:.3f}"])
    for kind, v in sorted(paths.items()):
        out.writerow([f"median {kind}", kind] + [""] * (3 + 2 * len(SIZES) + 1) + [f"{statistics.median(v):.3f}"])


if __name__ == "__main__":
    main()
