#!/usr/bin/env python3
"""The harness's empty kernel on each lease of a machine kind: what `dmasim calibrate` sets
runtime.kernel_launch_latency to (docs/calibration.md, "Measured, not fitted").

dmaprobe times a synthetic kernel with no spin before its cases, gated and with events around it
as it times every kernel, and writes the median in metadata.json (kernel_calibration.overhead_us).
This lists it per lease and gives the median and range over the leases, the numbers the docs
quote. Standard library only.

Usage: scripts/kernel_launch.py MEASURED_DIR [--leases A,B,...] [--out FILE.csv]
"""
import argparse
import csv
import json
import os
import statistics
import sys

import leases as leases_mod


def overhead_us(folder):
    """kernel_calibration.overhead_us of a lease folder's metadata.json; None without one."""
    path = os.path.join(folder, "metadata.json")
    if not os.path.isfile(path):
        return None
    try:
        with open(path) as f:
            meta = json.load(f)
    except (OSError, ValueError) as e:
        raise SystemExit(f"kernel_launch.py: {path}: not JSON ({e})")
    k = meta.get("kernel_calibration") if isinstance(meta, dict) else None
    if k is None:
        return None
    v = k.get("overhead_us") if isinstance(k, dict) else None
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not 0 < v <= 1e6:
        raise SystemExit(f"kernel_launch.py: {path}: kernel_calibration.overhead_us must be a number of "
                         "microseconds above 0 and at most 1 s")
    return float(v)


def table(measured, names=None):
    """[(lease, overhead_us)] for the leases of `measured` that ran the empty kernel."""
    rows = []
    for name, folder, _ in leases_mod.find_leases(measured):
        if names and not any(name == n or name.endswith("-" + n) for n in names):
            continue
        v = overhead_us(folder)
        if v is not None:
            rows.append((name, v))
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("measured", help="a machine's measured folder (one sub-folder per lease)")
    ap.add_argument("--leases", help="only these leases (names or boot ids, comma-separated), as dmasim calibrate --leases")
    ap.add_argument("--out", help="CSV to write (default: standard output)")
    a = ap.parse_args()
    if not os.path.isdir(a.measured):
        sys.exit(f"kernel_launch.py: {a.measured}: no such folder")
    names = [n for n in (a.leases or "").split(",") if n]
    rows = table(a.measured, names)
    if not rows:
        sys.exit(f"kernel_launch.py: {a.measured}: no lease has metadata.json with kernel_calibration")
    values = [v for _, v in rows]
    text = [["lease", "overhead_us"]] + [[n, f"{v:.3f}"] for n, v in rows]
    text.append([f"median of {len(values)}", f"{statistics.median(values):.3f}"])
    text.append(["min", f"{min(values):.3f}"])
    text.append(["max", f"{max(values):.3f}"])
    out = open(a.out, "w", newline="") if a.out else sys.stdout
    csv.writer(out, lineterminator="\n").writerows(text)
    if a.out:
        out.close()


if __name__ == "__main__":
    main()
