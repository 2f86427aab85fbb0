#!/usr/bin/env python3
"""Summarise peer-sequence runs: per run and size, each case's row and CPU time at D = 0, and
where the row drops (the wait's first try finding the other GPU's copy done).

  summarize.py CSV... > summary.txt

Medians over each cell's repetitions. The drop is the first D at which the row falls by more
than 2 us from the D before; it is given as the CPU's time to GPU 0's copy call there (call0).
"""
import collections
import csv
import statistics
import sys

CASES = ("main", "bare", "events", "start1", "end0", "mainev")


def run(path):
    cells = collections.defaultdict(list)
    with open(path, newline="") as f:
        for r in csv.DictReader(f):
            cells[(int(r["bytes"]), r["case"], float(r["delay_us"]))].append(r)
    print(f"## {path}")
    for n in sorted({k[0] for k in cells}):
        ds = sorted({k[2] for k in cells if k[0] == n})
        print(f"{n >> 20} MiB")
        for c in CASES:
            row = {d: statistics.median(float(r["row_us"]) for r in cells[(n, c, d)]) for d in ds}
            call0 = {d: statistics.median(float(r["call0_us"]) for r in cells[(n, c, d)]) for d in ds}
            drops = [d for a, d in zip(ds, ds[1:]) if row[a] - row[d] > 2.0]
            drop = f"drops {row[ds[ds.index(drops[0]) - 1]]:.2f} -> {row[drops[0]]:.2f} us at call0 {call0[drops[0]]:.1f} us" if drops else "no drop"
            after = [row[d] - call0[d] for d in ds if drops and d >= drops[0]]
            tail = f"; after it the row less call0 {statistics.median(after):.2f} us" if after else ""
            print(f"  {c:7s} D=0: row {row[ds[0]]:6.2f} us, call0 {call0[ds[0]]:4.1f} us; {drop}{tail}")
    print()


def main():
    if len(sys.argv) < 2:
        sys.exit("usage: summarize.py CSV... > summary.txt")
    for p in sys.argv[1:]:
        run(p)


if __name__ == "__main__":
    main()
