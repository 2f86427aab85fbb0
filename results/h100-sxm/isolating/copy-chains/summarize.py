#!/usr/bin/env python3
"""copy-chains: a copy's cost in a running chain (us), the median over each kind's leases (folders
named h100-* and h200x2-*), the leases' range, and the 2xH200's excess over the H100's, per
direction and size. Standard library only.

Usage: summarize.py [LEASES_DIR]   (default: leases/ beside this file) > summary.csv
"""
import csv
import os
import statistics
import sys

here = os.path.dirname(os.path.abspath(__file__))
root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(here, "leases")
per = {}
for lease in sorted(os.listdir(root)):
    path = os.path.join(root, lease, "chains.csv")
    if not os.path.exists(path):
        continue
    kind = lease.split("-")[0]
    with open(path, newline="") as f:
        for r in csv.DictReader(f):
            per.setdefault((r["direction"], int(r["bytes"])), {}).setdefault(kind, []).append(float(r["us_per_copy_median"]))
w = csv.writer(sys.stdout, lineterminator="\n")
w.writerow(["direction", "bytes", "h100_us", "h100_range_us", "h200x2_us", "h200x2_range_us", "h200x2_minus_h100_us"])
for (d, n) in sorted(per, key=lambda k: (k[0] != "h2d", k[1])):
    v = per[(d, n)]
    if "h100" in v and "h200x2" in v:
        a, b = statistics.median(v["h100"]), statistics.median(v["h200x2"])
        w.writerow([d, n, f"{a:.3f}", f"{min(v['h100']):.3f}-{max(v['h100']):.3f}", f"{b:.3f}",
                    f"{min(v['h200x2']):.3f}-{max(v['h200x2']):.3f}", f"{b - a:+.3f}"])
