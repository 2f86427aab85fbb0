#!/usr/bin/env python3
"""pair-watch: per lease, the copies' data windows and the gaps between them, in the pair and alone.

  summarize.py [LEASE_DIR ...]   (default: leases/*)

For each lease, size and mode, from the median over the program's two runs of each word's median
landing: per direction the mean data window (a copy's last word less its first), the mean gap (a
copy's first word less the copy before it's last word), the pace (the last copy's last word less
the first copy's, over the copies between), and where the first copy's data start and the last
copy's end. Copies into the GPU are timed from the gate kernel's end stamp (GPU clock), copies out
of it from the CPU seeing the gate's flag (CPU clock).
"""
import csv
import glob
import os
import statistics
import sys


def load(lease):
    runs = sorted(glob.glob(os.path.join(lease, "pairwatch-*.csv")))
    cells = {}
    for run in runs:
        for r in csv.DictReader(open(run)):
            cells.setdefault((int(r["bytes"]), r["mode"], r["what"], int(r["k"])), []).append(float(r["median_us"]))
    return {k: statistics.median(v) for k, v in cells.items()}, len(runs)


def direction(d, size, mode, first, last):
    n = 1 + max((k for (s, m, w, k) in d if s == size and m == mode and w == first), default=-1)
    if n == 0:
        return None
    f = [d[(size, mode, first, k)] for k in range(n)]
    l = [d[(size, mode, last, k)] for k in range(n)]
    data = statistics.mean(l[k] - f[k] for k in range(n))
    gap = statistics.mean(f[k] - l[k - 1] for k in range(1, n))
    pace = (l[-1] - l[0]) / (n - 1)
    return data, gap, pace, f[0], l[-1]


def main(leases):
    for lease in leases:
        d, runs = load(lease)
        print(f"## {os.path.basename(lease.rstrip('/'))} ({runs} runs)")
        print("   size  mode  | into the GPU: data   gap  pace  first  end | out of it: data   gap  pace  first  end | events h2d_end d2h_end stop")
        for size in sorted({k[0] for k in d}):
            for mode in ("h2d", "d2h", "pair"):
                up = direction(d, size, mode, "first", "last")
                down = direction(d, size, mode, "down_first", "down_last")
                if up is None and down is None:
                    continue
                fmt = lambda x: ("%6.2f %5.2f %5.2f %6.2f %6.2f" % x) if x else " " * 32
                ev = " ".join("%7.2f" % d[(size, mode, w, k)] if (size, mode, w, k) in d else "      -"
                              for w in ("h2d_end", "d2h_end", "stop") for k in [max(kk for (s, m, ww, kk) in d if s == size and ww == "stop")])
                print(f"  {size >> 10:4d}K  {mode:4s}  |        {fmt(up)} |          {fmt(down)} | {ev}")
        print()


if __name__ == "__main__":
    here = os.path.dirname(os.path.abspath(__file__))
    main(sys.argv[1:] or sorted(glob.glob(os.path.join(here, "leases", "*"))))
