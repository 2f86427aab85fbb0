#!/usr/bin/env python3
"""chase-cache's leases: each mode's chase by footprint, and what the chain's lines in the CPU's caches add.

Usage: summarize.py LEASE_DIR [LEASE_DIR ...] [--csv OUT]

Each LEASE_DIR holds chasecache.csv (chasecache.cu). Per lease and footprint: the median over the
rounds of each mode (us a hop), the range over the rounds, and each mode less `flushed` (the chain in
DRAM only). A LEASE_DIR with windows.csv (chasecache.cu ROUNDS windows) also gets each window's
median over the rounds, sorted, beside the lease's flushed 2 MiB chase. Standard library only.
"""
import argparse
import csv
import os
import statistics
import sys

MODES = ("dirty", "dirty-core", "clean", "flushed")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("leases", nargs="+")
    ap.add_argument("--csv")
    a = ap.parse_args()
    out = []
    for d in a.leases:
        p = os.path.join(d, "chasecache.csv")
        try:
            with open(p, newline="") as f:
                rows = list(csv.DictReader(f))
        except OSError as e:
            sys.exit(f"summarize.py: {e}")
        lease = os.path.basename(os.path.normpath(d))
        windows = os.path.join(d, "windows.csv")
        if os.path.isfile(windows):
            with open(windows, newline="") as f:
                per = {}
                for r in csv.DictReader(f):
                    per.setdefault(r["mode"], []).append(float(r["us_per_hop"]))
            meds = sorted((statistics.median(v), k, min(v), max(v)) for k, v in per.items())
            print(f"{lease}: a flushed 4 KiB chase in each of {len(meds)} windows of one buffer, median over the rounds (min-max), us a hop")
            for med, k, lo, hi in meds:
                print(f"  {k:10s} {med:.3f} ({lo:.3f}-{hi:.3f})")
                out.append([lease, 4096, k, f"{med:.4f}", f"{lo:.4f}", f"{hi:.4f}", ""])
        cells = {}
        for r in rows:
            cells.setdefault((r["mode"], int(r["size_bytes"])), []).append(float(r["us_per_hop"]))
        sizes = sorted({s for _, s in cells})
        print(f"{lease}: median over {len(next(iter(cells.values())))} rounds (min-max), us a hop; less flushed")
        for s in sizes:
            flushed = statistics.median(cells[("flushed", s)])
            parts = []
            for m in MODES:
                v = cells[(m, s)]
                med = statistics.median(v)
                parts.append(f"{m} {med:.3f} ({min(v):.3f}-{max(v):.3f}) {med - flushed:+.3f}")
                out.append([lease, s, m, f"{med:.4f}", f"{min(v):.4f}", f"{max(v):.4f}", f"{med - flushed:.4f}"])
            print(f"  {s // 1024:>6d} KiB  " + "  ".join(parts))
    if a.csv:
        with open(a.csv, "w", newline="") as f:
            w = csv.writer(f, lineterminator="\n")
            w.writerow(["lease", "size_bytes", "mode", "median_us", "min_us", "max_us", "less_flushed_us"])
            w.writerows(out)


if __name__ == "__main__":
    main()
