#!/usr/bin/env python3
"""carried-source's leases: how fast the call (and the blocking copy) grows with a carried copy's size.

Usage: summarize.py LEASE_DIR [LEASE_DIR ...] [--csv OUT]

Each LEASE_DIR holds carried.csv (carried.cu: the whole table twice, round 1 then round 2). Per lease,
round, memory, source state and mode: the least-squares rate (GB/s) and intercept (us) over 4-24 KiB,
where both kinds of memory are carried, and for pageable memory over 24-64 KiB (still carried) too.
Standard library only.
"""
import argparse
import csv
import os
import sys

KIB = 1024


def fit(points):
    """Least squares t = a + n / r over (bytes, us): returns (r in GB/s, a in us)."""
    n = len(points)
    mx = sum(x for x, _ in points) / n
    my = sum(y for _, y in points) / n
    sxx = sum((x - mx) ** 2 for x, _ in points)
    slope = sum((x - mx) * (y - my) for x, y in points) / sxx  # us a byte
    return 1e-3 / slope, my - slope * mx


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("leases", nargs="+")
    ap.add_argument("--csv")
    a = ap.parse_args()
    out = []
    for d in a.leases:
        p = os.path.join(d, "carried.csv")
        try:
            with open(p, newline="") as f:
                rows = list(csv.DictReader(f))
        except OSError as e:
            sys.exit(f"summarize.py: {e}")
        lease = os.path.basename(os.path.normpath(d))
        cells = {}
        for r in rows:
            key = (r["memory"], r["state"], r["mode"])
            cells.setdefault(key, []).append((int(r["size_bytes"]), float(r["median_us"])))
        print(f"{lease}: GB/s (intercept us), least squares")
        for (mem, state, mode), pts in cells.items():
            half = len(pts) // 2
            for rnd, part in ((1, pts[:half]), (2, pts[half:])):
                small = [(x, y) for x, y in part if 4 * KIB <= x <= 24 * KIB]
                r, i = fit(small)
                line = f"  round {rnd} {mem:8s} {state:7s} {mode:8s} 4-24 KiB {r:6.2f} ({i:5.2f})"
                row = [lease, rnd, mem, state, mode, "4-24KiB", f"{r:.2f}", f"{i:.3f}"]
                out.append(row)
                if mem == "pageable":
                    big = [(x, y) for x, y in part if 24 * KIB <= x <= 64 * KIB]
                    r2, i2 = fit(big)
                    line += f"   24-64 KiB {r2:6.2f} ({i2:5.2f})"
                    out.append([lease, rnd, mem, state, mode, "24-64KiB", f"{r2:.2f}", f"{i2:.3f}"])
                print(line)
    if a.csv:
        with open(a.csv, "w", newline="") as f:
            w = csv.writer(f, lineterminator="\n")
            w.writerow(["lease", "round", "memory", "state", "mode", "sizes", "rate_gbps", "intercept_us"])
            w.writerows(out)


if __name__ == "__main__":
    main()
