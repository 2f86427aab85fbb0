#!/usr/bin/env python3
"""Writes summary.csv beside this file from the leases' concurrent.csv (h100x2/*/ and h200/*/concurrent.csv):
for each cell that runs both GPUs at once, the two GPUs' rates and their sum, beside each
GPU's rate alone. Usage: summarize.py (standard library only)."""
import csv
import glob
import os

HERE = os.path.dirname(os.path.abspath(__file__))
out = []
for path in sorted(glob.glob(os.path.join(HERE, "h*", "*", "concurrent.csv"))):
    lease = os.path.basename(os.path.dirname(path))
    rows = list(csv.DictReader(open(path)))
    alone = {(r["shape"], r["gpu"], r["direction"]): float(r["gbps"]) for r in rows if "+" not in r["cell"]}
    for cell in sorted({r["cell"] for r in rows if "+" in r["cell"]}):
        for shape in sorted({r["shape"] for r in rows}):
            pair = [r for r in rows if r["cell"] == cell and r["shape"] == shape]
            if len(pair) != 2:
                continue
            g = {r["gpu"]: r for r in pair}
            total = sum(float(r["gbps"]) for r in pair)
            out.append([lease, cell, shape, g["0"]["gbps"], f"{alone[(shape, '0', g['0']['direction'])]:.2f}",
                        g["1"]["gbps"], f"{alone[(shape, '1', g['1']['direction'])]:.2f}", f"{total:.2f}"])
with open(os.path.join(HERE, "summary.csv"), "w", newline="") as f:
    w = csv.writer(f)
    w.writerow(["lease", "cell", "shape", "gpu0_gbps", "gpu0_alone_gbps", "gpu1_gbps", "gpu1_alone_gbps", "total_gbps"])
    w.writerows(out)

# The median over leases of each cell (the leases disagree: the machines vary).
import statistics  # noqa: E402

with open(os.path.join(HERE, "summary.csv"), "a", newline="") as f:
    w = csv.writer(f)
    for cell, shape in sorted({(r[1], r[2]) for r in out}):
        same = [r for r in out if r[1] == cell and r[2] == shape]
        med = lambda i: f"{statistics.median(float(r[i]) for r in same):.2f}"
        w.writerow(["median", cell, shape, med(3), med(4), med(5), med(6), med(7)])
