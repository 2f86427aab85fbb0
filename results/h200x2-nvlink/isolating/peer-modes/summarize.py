#!/usr/bin/env python3
"""Each process's level of the NVLink peer rows both ways, per lease and over all processes of
all leases (leases/*/processes.txt), beside the model's mean over its phases.
    summarize.py [LEASES_DIR]   (default: leases/ beside this script)"""
import glob
import os
import statistics
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
MODEL = {1048576: 19.48, 16777216: 60.01}  # results/h200x2-nvlink/compare/compare.csv, predicted_us


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(HERE, "leases")
    every = {}
    for path in sorted(glob.glob(os.path.join(root, "*", "processes.txt"))):
        rows = [l.split() for l in open(path) if l.strip() and not l.startswith(("#", "process "))]
        per = {}
        for r in rows:
            per.setdefault(r[0], {})[int(r[1])] = float(r[2])
        print(os.path.basename(os.path.dirname(path)), f"({len(per)} processes)")
        for name, t in per.items():
            print(f"  {name:<22} 1 MiB {t.get(1048576, 0):6.2f}  16 MiB {t.get(16777216, 0):6.2f}")
        for size in MODEL:
            v = [t[size] for t in per.values() if size in t]
            every.setdefault(size, []).extend(v)
            print(f"  median over its processes, {size >> 20} MiB: {statistics.median(v):.2f} us")
    for size, v in every.items():
        m = statistics.median(v)
        print(f"all {len(v)} processes, {size >> 20} MiB: median {m:.2f} us (model {MODEL[size]:.2f}, "
              f"{100 * (MODEL[size] / m - 1):+.1f} %), range {min(v):.2f}-{max(v):.2f}")


if __name__ == "__main__":
    main()
