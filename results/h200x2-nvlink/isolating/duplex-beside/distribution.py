#!/usr/bin/env python3
"""Within a lease, how the beside case's repetitions spread: for the pair and its two copies
(the copy into the GPU's end event, h2d; out of it, d2h), each lease's p10, median and p90 over
its 300 repetitions (medians over the leases), beside the model's band over the gate's phases
(compare/compare.csv: predicted p10, the mean, p90).
    distribution.py [LEASES_DIR] [COMPARE_CSV]   (defaults: leases/, compare/compare.csv)"""
import csv
import glob
import os
import statistics
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(HERE, "leases")
    compare = sys.argv[2] if len(sys.argv) > 2 else os.path.join(HERE, "compare", "compare.csv")
    measured = {}
    for path in sorted(glob.glob(os.path.join(root, "*", "measured.csv"))):
        for r in csv.DictReader(open(path)):
            if r["scenario"] != "duplex-beside" or r["variant"] not in ("", "h2d", "d2h"):
                continue
            key = (int(r["size_bytes"]), r["variant"])
            measured.setdefault(key, []).append(tuple(float(r[k]) for k in ("p10_us", "time_us", "p90_us")))
    model = {}
    for r in csv.DictReader(open(compare)):
        if r["scenario"] == "duplex-beside" and r["variant"] in ("", "h2d", "d2h"):
            model[(int(r["size_bytes"]), r["variant"])] = tuple(
                float(r[k]) for k in ("predicted_p10_us", "predicted_us", "predicted_p90_us"))
    print(f"{len(glob.glob(os.path.join(root, '*', 'measured.csv')))} leases; us: measured p10 / median / p90 "
          "(medians over the leases) | model p10 / mean / p90 over its phases")
    for key in sorted(measured):
        m = [statistics.median(x[i] for x in measured[key]) for i in range(3)]
        p = model.get(key)
        row = f"{key[0]:>8} {key[1] or 'pair':<4} {m[0]:7.2f} {m[1]:7.2f} {m[2]:7.2f}"
        if p:
            row += f" | {p[0]:7.2f} {p[1]:7.2f} {p[2]:7.2f}"
        print(row)


if __name__ == "__main__":
    main()
