#!/usr/bin/env python3
"""Summarise pageable-pieces leases: per direction and size, the median over the leases of the
pageable copy, the CPU's copy alone and the pinned copy alone (us), and per lease the least-squares
line of the pageable copy into the GPU over 96 KiB-1 MiB (fixed us + bytes at GB/s).
Usage: summarize.py LEASE_DIR...  (each holding pieces.csv)"""
import csv
import statistics
import sys
from pathlib import Path


def fit(points):
    n = len(points)
    mx = sum(x for x, _ in points) / n
    my = sum(y for _, y in points) / n
    sxx = sum((x - mx) ** 2 for x, _ in points)
    slope = sum((x - mx) * (y - my) for x, y in points) / sxx
    return my - slope * mx, slope


def main(dirs):
    cells = {}
    print(f"{len(dirs)} lease(s): " + ", ".join(Path(d).name for d in dirs))
    for d in dirs:
        rows = list(csv.DictReader((Path(d) / "pieces.csv").open()))
        for r in rows:
            cells.setdefault((r["direction"], int(r["bytes"])), []).append(
                (float(r["pageable_us"]), float(r["cpu_us"]), float(r["pinned_us"])))
        pts = [(int(r["bytes"]), float(r["pageable_us"])) for r in rows
               if r["direction"] == "h2d" and 98304 <= int(r["bytes"]) <= 1048576]
        a, b = fit(pts)
        print(f"  {Path(d).name}: into the GPU, 96 KiB-1 MiB: {a:.2f} us + bytes at {1e-3 / b:.2f} GB/s")
    print("medians over the leases (us): pageable | CPU's copy alone | pinned alone | the two added | pageable less the two")
    med = statistics.median
    for (direction, n), v in sorted(cells.items()):
        p, c, q = (med(x[i] for x in v) for i in range(3))
        print(f"  {direction} {n:9d} B: {p:9.2f} | {c:9.2f} | {q:8.2f} | {c + q:9.2f} | {p - c - q:+8.2f}")


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    main(sys.argv[1:])
