#!/usr/bin/env python3
"""Summarises pair-ends leases: per lease (the median of its runs' medians) and size, where the
last copy of each direction ends and where the stop event is, in the pair and each way alone,
with dmaprobe's calls (`last`) and with an event behind every copy (`each`), and then, with
`each`, every copy's end in the pair and alone and the pair's extra per copy (us from the start
event).

Usage: summarize.py [LEASES_DIR]   (default: leases/ beside this script)"""
import csv
import statistics
import sys
from pathlib import Path


def read_lease(d):
    cells = {}
    for run in sorted(d.glob("pairends-*.csv")):
        with open(run, newline="") as f:
            for r in csv.DictReader(f):
                key = (int(r["bytes"]), r["mode"], r["events"], r["what"], int(r["k"]))
                cells.setdefault(key, []).append(float(r["median_us"]))
    return {k: statistics.median(v) for k, v in cells.items()}


def main():
    root = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).resolve().parent / "leases"
    leases = sorted(p for p in root.iterdir() if p.is_dir())
    if not leases:
        sys.exit(f"summarize.py: no lease folders in {root}")
    for d in leases:
        c = read_lease(d)
        if not c:
            continue
        print(f"## {d.name}")
        sizes = sorted({k[0] for k in c})
        for b in sizes:
            n = (1 << 20) // b
            last = n - 1
            for ev in ("last", "each"):
                get = lambda mode, what: c.get((b, mode, ev, what, last), float("nan"))
                print(f"{b // 1024:5d} KiB x {n:2d} {ev:4s}: pair ends {get('pair', 'h2d_end'):7.2f} / {get('pair', 'd2h_end'):7.2f}"
                      f" stop {get('pair', 'stop'):7.2f} | alone ends {get('h2d', 'h2d_end'):7.2f} / {get('d2h', 'd2h_end'):7.2f}"
                      f" stops {get('h2d', 'stop'):7.2f} / {get('d2h', 'stop'):7.2f} | pair extra a copy"
                      f" {(get('pair', 'h2d_end') - get('h2d', 'h2d_end')) / n:5.2f} / {(get('pair', 'd2h_end') - get('d2h', 'd2h_end')) / n:5.2f}")
            if n > 1 and n <= 16:
                for what, mode_alone in (("h2d", "h2d"), ("d2h", "d2h")):
                    pair = [c[(b, "pair", "each", what, k)] for k in range(n - 1)] + [c[(b, "pair", "each", what + "_end", last)]]
                    alone = [c[(b, mode_alone, "each", what, k)] for k in range(n - 1)] + [c[(b, mode_alone, "each", what + "_end", last)]]
                    print(f"      {what} ends in the pair: " + " ".join(f"{x:6.1f}" for x in pair))
                    print(f"      {what} ends alone:       " + " ".join(f"{x:6.1f}" for x in alone))
        print()


if __name__ == "__main__":
    main()
