#!/usr/bin/env python3
"""Where each sawtooth of a sweep jumps: the host delay D at which a copy's end moves on to its
channel's next try (runtime.poll_period), from the means over repetitions of a CSV that submitpoint.cu (tails,
shapes) or ../duplex-overlap/overlap.cu writes.

Usage: jumps.py CSV GROUP_COLUMNS VALUE_COLUMN [--period US]   (GROUP_COLUMNS: one or more, comma-separated)

Each group's means are fitted, over the 22 points around its largest rise, by
    a - D + period * Phi((D - J) / s)
(the sawtooth falls 1 us per us of delay; repetitions whose tries fall on either side of the jump
mix into a normal step of width s), least squares over J (0.02 us steps) and s; prints J, s, the
floor a - J and the rms residual. Standard library only.
"""
import argparse
import csv
import math
import sys


def phi(x):
    return 0.5 * (1.0 + math.erf(x / math.sqrt(2.0)))


def fit(ds, ys, period):
    best = None
    lo, hi = min(ds) - 1.0, max(ds) + 1.0
    j = lo
    while j <= hi:
        for s in (0.05, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.8, 1.0):
            f = [period * phi((d - j) / s) for d in ds]
            a = sum(y + d - fi for y, d, fi in zip(ys, ds, f)) / len(ds)
            r = sum((y - (a - d + fi)) ** 2 for y, d, fi in zip(ys, ds, f))
            if best is None or r < best[0]:
                best = (r, j, s, a)
        j += 0.02
    return best


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("csv")
    ap.add_argument("group")
    ap.add_argument("value")
    ap.add_argument("--period", type=float, default=8.08, help="the poll period, us (runtime.poll_period)")
    a = ap.parse_args()
    try:
        rows = list(csv.DictReader(open(a.csv, newline="")))
    except OSError as e:
        sys.exit(f"jumps.py: {a.csv}: {e.strerror}")
    keys = a.group.split(",")
    for col in keys + [a.value, "delay_us"]:
        if rows and col not in rows[0]:
            sys.exit(f"jumps.py: {a.csv}: no column {col}")
    group = lambda r: " ".join(r[k] for k in keys)
    groups = []
    for r in rows:
        if group(r) not in groups:
            groups.append(group(r))
    for g in groups:
        rr = [r for r in rows if group(r) == g]
        ds = [float(r["delay_us"]) for r in rr]
        ys = [float(r[a.value]) for r in rr]
        rise = max(range(len(ys) - 1), key=lambda i: ys[i + 1] - ys[i])
        lo, hi = max(0, rise - 10), min(len(ds), rise + 12)
        r, j, s, base = fit(ds[lo:hi], ys[lo:hi], a.period)
        print(f"{g:22s} jump at D = {j:5.2f} us, width {s:.2f}, floor {base - j:5.2f} us, rms {math.sqrt(r / (hi - lo)):.2f}")


if __name__ == "__main__":
    main()
