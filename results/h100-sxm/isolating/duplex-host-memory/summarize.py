#!/usr/bin/env python3
"""Medians of duplexmem.csv per lease and case, and what each direction moved while both ran.

Usage: summarize.py LEASE_DIR... > summary.csv

For a duplex case the copy that ends first ran beside the other all along; the later one ran
alone after that at its one-way rate (the one-way case of the same size and load, same lease).
So while both ran the later one moved its size less what it moved alone, over the first one's
time: overlap_first_gbps + overlap_later_gbps is what the pair moved together.
"""
import csv
import os
import statistics
import sys


def lease_rows(folder):
    with open(os.path.join(folder, "duplexmem.csv"), newline="") as f:
        return list(csv.DictReader(f))


def main(folders):
    out = csv.writer(sys.stdout, lineterminator="\n")
    out.writerow(["lease", "gpu", "case", "load", "size_mib", "reps", "h2d_us", "d2h_us", "h2d_gbps", "d2h_gbps",
                  "first", "overlap_first_gbps", "overlap_later_gbps", "overlap_sum_gbps", "cpu_load_gbps"])
    for folder in folders:
        lease = os.path.basename(os.path.normpath(folder))
        gpu = "H200" if "H200" in open(os.path.join(folder, "machine.txt")).read() else "H100"
        groups = {}
        for r in lease_rows(folder):
            if r["label"] == "cpu-alone":
                continue
            groups.setdefault((r["label"], r["load"], int(r["size_bytes"])), []).append(r)

        def med(rows, key):
            return statistics.median(float(r[key]) for r in rows)

        for (label, load, size), rows in sorted(groups.items(), key=lambda kv: (kv[0][1], kv[0][0], kv[0][2])):
            h, d, cpu = med(rows, "h2d_us"), med(rows, "d2h_us"), med(rows, "cpu_load_gbps")
            gb = lambda us: size / us / 1e3 if us > 0 else ""
            first = later_gbps = first_gbps = total = ""
            if h > 0 and d > 0:
                first = "d2h" if d <= h else "h2d"
                later = "h2d" if first == "d2h" else "d2h"
                t_first, t_later = min(h, d), max(h, d)
                alone = groups.get((later, load, size))
                alone_gbps = size / med(alone, later + "_us") / 1e3 if alone else 55.0
                moved_alone = (t_later - t_first) * alone_gbps * 1e3
                first_gbps = size / t_first / 1e3
                later_gbps = max(0.0, size - moved_alone) / t_first / 1e3
                total = first_gbps + later_gbps
            fmt = lambda v: f"{v:.2f}" if isinstance(v, float) else v
            out.writerow([lease, gpu, label, load, size >> 20, len(rows), f"{h:.3f}", f"{d:.3f}", fmt(gb(h)), fmt(gb(d)),
                          first, fmt(first_gbps), fmt(later_gbps), fmt(total), f"{cpu:.2f}"])


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit("usage: summarize.py LEASE_DIR... > summary.csv")
    main(sys.argv[1:])
