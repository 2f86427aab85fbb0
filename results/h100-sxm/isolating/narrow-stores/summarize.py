#!/usr/bin/env python3
"""Each narrow-stores cell's median over the leases that ran it, beside the same grid's 4-byte
stores (full4) and what the cell's time would be with every line written whole.

Usage: summarize.py LEASE_DIR [LEASE_DIR ...] [--csv OUT]
Reads MODE.csv (layouts, lag, warps, blocks, loads) from each lease; prints one table per mode:
the median, lowest and highest of the leases' medians, the time over full4's (loads: l4's) at
that grid and size (%), and the extra time per 128-byte line (ns). Standard library only.
"""
import argparse
import csv
import os
import statistics
import sys

MODES = ("layouts", "lag", "warps", "blocks", "loads")
# What each mode's cells are set against: whole lines, stores or loads of 4 bytes a lane.
BASE = {"loads": "l4"}
LINE = 128


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("leases", nargs="+")
    ap.add_argument("--csv", help="write the table here as CSV")
    a = ap.parse_args()
    cells = {}
    for lease in a.leases:
        for mode in MODES:
            path = os.path.join(lease, mode + ".csv")
            if not os.path.exists(path):
                continue
            with open(path, newline="") as f:
                for r in csv.DictReader(f):
                    key = (mode, r["kernel"], int(r["blocks"]), int(r["threads"]), int(r["size_bytes"]))
                    cells.setdefault(key, []).append(float(r["median_us"]))
    if not cells:
        sys.exit("summarize.py: no MODE.csv in " + " ".join(a.leases))
    rows = []
    for key, us in cells.items():
        mode, kernel, blocks, threads, size = key
        full = cells.get((mode, BASE.get(mode, "full4"), blocks, threads, size))
        med = statistics.median(us)
        over = extra = None
        if full:
            base = statistics.median(full)
            over = 100.0 * (med - base) / base
            extra = 1000.0 * (med - base) / (size / LINE)
        rows.append(dict(mode=mode, kernel=kernel, blocks=blocks, threads=threads, size_mib=size >> 20, leases=len(us),
                         median_us=round(med, 2), lowest_us=min(us), highest_us=max(us),
                         over_full4_pct=None if over is None else round(over, 1),
                         extra_ns_per_line=None if extra is None else round(extra, 3)))
    order = {m: i for i, m in enumerate(MODES)}
    rows.sort(key=lambda r: (order[r["mode"]], r["size_mib"], r["threads"], r["blocks"], r["kernel"]))
    fields = list(rows[0].keys())
    if a.csv:
        with open(a.csv, "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=fields)
            w.writeheader()
            w.writerows(rows)
    mode = None
    for r in rows:
        if r["mode"] != mode:
            mode = r["mode"]
            print(f"== {mode}")
            print(f"{'kernel':>8} {'grid':>10} {'MiB':>4} {'n':>2} {'median':>8} {'low':>8} {'high':>8} {'vs 4-byte':>9} {'ns/line':>8}")
        grid = f"{r['blocks']}x{r['threads']}"
        over = "" if r["over_full4_pct"] is None else f"{r['over_full4_pct']:+.1f} %"
        extra = "" if r["extra_ns_per_line"] is None else f"{r['extra_ns_per_line']:.2f}"
        print(f"{r['kernel']:>8} {grid:>10} {r['size_mib']:>4} {r['leases']:>2} {r['median_us']:8.2f} {r['lowest_us']:8.2f} "
              f"{r['highest_us']:8.2f} {over:>9} {extra:>8}")


if __name__ == "__main__":
    main()
