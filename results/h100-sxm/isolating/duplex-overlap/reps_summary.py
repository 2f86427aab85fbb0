#!/usr/bin/env python3
"""Quantiles and a 1-us histogram of each column of reps.csv (reps.cu), per size: where the
repetitions of dmaprobe's gated pair fall within one machine. Usage: reps_summary.py REPS_CSV.
Standard library only."""
import csv
import sys


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: reps_summary.py REPS_CSV")
    try:
        with open(sys.argv[1], newline="") as f:
            rows = list(csv.DictReader(f))
    except OSError as e:
        sys.exit(f"reps_summary.py: {sys.argv[1]}: {e.strerror}")
    for n in sorted({int(r["bytes"]) for r in rows}):
        rr = [r for r in rows if int(r["bytes"]) == n]
        for col in ("h2d_us", "d2h_us", "interval_us"):
            v = sorted(float(r[col]) for r in rr)
            q = lambda p: v[int(p * (len(v) - 1))]
            lo = int(v[0])
            hist = [0] * (int(v[-1]) + 1 - lo)
            for x in v:
                hist[int(x) - lo] += 1
            print(f"{n:8d} {col:12s} p10 {q(.1):6.2f} p25 {q(.25):6.2f} median {q(.5):6.2f} p75 {q(.75):6.2f} p90 {q(.9):6.2f}"
                  f" | repetitions per us from {lo} us: {' '.join(str(h) for h in hist)}")


if __name__ == "__main__":
    main()
