#!/usr/bin/env python3
"""The duplex pair's aggregate over one way, per lease and over the leases of this case:
from the blocking copies beside each pair (duplex-beside, and duplex-beside-again run last) and
the main plan's way (the pinned rows and the pair as separate cases).
    summarize.py [LEASES_DIR]   (default: leases/ beside this script)"""
import csv
import glob
import os
import statistics
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
SIZES = [4096, 16384, 65536, 262144, 1048576, 4194304]


def read(path):
    t = {}
    for r in csv.DictReader(open(path)):
        if r["status"] == "ok":
            t[(r["scenario"], r["direction"], int(r["size_bytes"]), r["variant"])] = float(r["time_us"])
    return t


def ratios(t, size):
    """(over h2d, over d2h, pair, one-way h2d, one-way d2h) for each way of measuring."""
    out = {}
    for name, scen in (("beside", "duplex-beside"), ("again", "duplex-beside-again")):
        pair = t.get((scen, "both", size, ""))
        up, down = t.get((scen, "both", size, "blocking_h2d")), t.get((scen, "both", size, "blocking_d2h"))
        if pair and up and down:
            out[name] = (2 * up / pair, 2 * down / pair, pair, up, down)
    pair = t.get(("duplex", "both", size, ""))
    up, down = t.get(("pinned", "h2d", size, "")), t.get(("pinned", "d2h", size, ""))
    if pair and up and down:
        out["separate"] = (2 * up / pair, 2 * down / pair, pair, up, down)
    return out


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(HERE, "leases")
    leases = sorted(glob.glob(os.path.join(root, "*", "measured.csv")))
    per = {os.path.basename(os.path.dirname(p)): read(p) for p in leases}
    print(f"{len(per)} lease(s); aggregate over one way = 2 x one-way / pair; one-way and pair in us")
    for lease, t in per.items():
        print(lease)
        for size in SIZES:
            r = ratios(t, size)
            print(f"  {size:>8} " + " | ".join(
                f"{k}: {v[0]:.3f} {v[1]:.3f} (pair {v[2]:6.2f} h2d {v[3]:6.2f} d2h {v[4]:6.2f})" for k, v in r.items()))
    print("medians over the leases of each lease's median; the ratio from those medians")
    for size in SIZES:
        parts = []
        for k in ("beside", "again", "separate"):
            rows = [ratios(t, size).get(k) for t in per.values()]
            rows = [x for x in rows if x]
            if not rows:
                continue
            pair, up, down = (statistics.median(x[i] for x in rows) for i in (2, 3, 4))
            parts.append(f"{k}: over h2d {2 * up / pair:.3f} over d2h {2 * down / pair:.3f} "
                         f"(pair {pair:6.2f} h2d {up:6.2f} d2h {down:6.2f})")
        print(f"  {size:>8} " + " | ".join(parts))


if __name__ == "__main__":
    main()
