#!/usr/bin/env python3
"""Summarise the command-fetch leases: per lease, the GPU's side of a host-to-device copy on a
synchronised stream (`synced`) and on one with an event queued since (`idle`), the call's CPU time
on each, and least-squares rates over 2-24 KiB. Usage: summarize.py [LEASE_DIR ...]"""
import csv
import glob
import os
import sys


def fit(xs, ys):
    mx = sum(xs) / len(xs)
    my = sum(ys) / len(ys)
    b = sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sum((x - mx) ** 2 for x in xs)
    return my - b * mx, b


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    dirs = sys.argv[1:] or sorted(glob.glob(os.path.join(here, "leases", "*")))
    for d in dirs:
        rows = {}
        with open(os.path.join(d, "fetch.csv")) as f:
            for r in csv.DictReader(f):
                rows[(r["dir"], int(r["bytes"]), r["what"])] = float(r["median_us"])
        print(f"## {os.path.basename(d)} (medians, us)")
        print("bytes,h2d_synced,h2d_synced_call,h2d_idle,h2d_call,d2h_synced,d2h_idle,h2d_synced_minus_d2h_synced,h2d_idle_minus_h2d_synced")
        sizes = sorted({k[1] for k in rows})
        for b in sizes:
            g = lambda d_, w: rows[(d_, b, w)]
            print(f"{b},{g('h2d','synced'):.2f},{g('h2d','synced_call'):.2f},{g('h2d','idle'):.2f},{g('h2d','call'):.2f},"
                  f"{g('d2h','synced'):.2f},{g('d2h','idle'):.2f},{g('h2d','synced') - g('d2h','synced'):.2f},"
                  f"{g('h2d','idle') - g('h2d','synced'):.2f}")
        inl = [b for b in sizes if 2048 <= b <= 24576]
        xs = [b / 1e3 for b in inl]  # kB: the slope's inverse is then GB/s
        for what in ("synced", "synced_call", "idle", "call"):
            a, s = fit(xs, [rows[("h2d", b, what)] for b in inl])
            rate = f"{1.0 / s:.1f} GB/s" if s > 0 else "flat"
            print(f"# h2d {what}: 2-24 KiB least squares {a:.2f} us + {s * 1e3:.1f} ns/kB ({rate})")
        print()


if __name__ == "__main__":
    main()
