#!/usr/bin/env python3
"""Each copy's end after the start event by host delay D, repetition by repetition (`overlap
sweep`'s sweep.csv): per shape and D, p10/p50/p90 and the repetitions in each whole µs.

Usage: sweep_summary.py LEASE_DIR [LEASE_DIR ...]  (writes to stdout; sweep-summary.txt is its output)
Standard library only."""
import os
import sys

from repsio import quantile, read_rows


def main(dirs):
    for d in dirs:
        rows = read_rows(os.path.join(d, "sweep.csv"), "sweep_summary.py")
        print(f"== {os.path.basename(os.path.normpath(d))}")
        for shape, col in (("d2h_only", "d2h_us"), ("h2d_only", "h2d_us")):
            print(f"  -- {shape}")
            for delay in sorted({float(r["delay_us"]) for r in rows}):
                v = [float(r[col]) for r in rows if r["shape"] == shape and float(r["delay_us"]) == delay]
                if not v:
                    continue
                per = {}
                for x in v:
                    per[int(x)] = per.get(int(x), 0) + 1
                print(f"    D {delay:4.1f} p10 {quantile(v, 0.1):6.2f} p50 {quantile(v, 0.5):6.2f} p90 {quantile(v, 0.9):6.2f} | "
                      + " ".join(f"{k}:{per[k]}" for k in sorted(per)))


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__.strip().splitlines()[3])
    main(sys.argv[1:])
