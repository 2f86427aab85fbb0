#!/usr/bin/env python3
"""pair-watch: per lease, the copies' data windows and the gaps between them, in the pair and alone.

  summarize.py [LEASE_DIR ...]   (default: leases/*)

For each lease, size and mode, from the median over the program's two runs of each word's median
landing: per direction the mean data window (a copy's last word less its first), the mean gap (a
copy's first word less the copy before it's last word), the pace (the last copy's last word less
the first copy's, over the copies between), and where the first copy's data start and the last
copy's end. Copies into the GPU are timed from the gate kernel's end stamp (GPU clock), copies out
of it from the CPU seeing the gate's flag (CPU clock). Sizes in/out: the copies' sizes into and
out of the GPU ("-": that direction left out). Under each pair, each direction's mean gap and pace (a
copy's last word less the copy before it's) over the copies that run while the other direction
still moves data (the count of copies in brackets) (in the `mixed` pairs one direction
ends long before the other). The `one_*` cells are dmaprobe's single pair, one copy each way.
Under each `stamp_*` cell, copy by copy, when the host served each copy into the GPU's first and
last word (its source carried the CPU's clock) and when they landed in GPU memory, and the copies
out of the GPU; then the gaps on the host's side.
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
            # The first lease's program named one size (both ways, or the one direction's).
            if "down_bytes" in r:
                up, down = int(r["bytes"]), int(r["down_bytes"])
            else:
                up = 0 if r["mode"] == "d2h" else int(r["bytes"])
                down = 0 if r["mode"] == "h2d" else int(r["bytes"])
            cells.setdefault(((up, down), r["mode"], r["what"], int(r["k"])), []).append(float(r["median_us"]))
    return {k: statistics.median(v) for k, v in cells.items()}, len(runs)


def direction(d, size, mode, first, last):
    n = 1 + max((k for (s, m, w, k) in d if s == size and m == mode and w == first), default=-1)
    if n == 0:
        return None
    f = [d[(size, mode, first, k)] for k in range(n)]
    l = [d[(size, mode, last, k)] for k in range(n)]
    data = statistics.mean(l[k] - f[k] for k in range(n))
    gap = statistics.mean(f[k] - l[k - 1] for k in range(1, n)) if n > 1 else float("nan")
    pace = (l[-1] - l[0]) / (n - 1) if n > 1 else float("nan")
    return data, gap, pace, f[0], l[-1]


def overlap(d, size, mode):
    """Each direction's mean gap and data window over its copies while the other direction moves
    data (from the later of the two first words to the earlier of the two last words)."""
    def series(first, last):
        n = 1 + max((k for (s, m, w, k) in d if s == size and m == mode and w == first), default=-1)
        return [(d[(size, mode, first, k)], d[(size, mode, last, k)]) for k in range(n)]
    up, down = series("first", "last"), series("down_first", "down_last")
    if len(up) < 2 or len(down) < 2:
        return None
    lo, hi = max(up[0][0], down[0][0]), min(up[-1][1], down[-1][1])
    def gaps(seq):
        inside = [k for k in range(1, len(seq)) if seq[k - 1][1] >= lo and seq[k][0] <= hi]
        if not inside:
            return float("nan"), float("nan"), 0
        gap = statistics.mean(seq[k][0] - seq[k - 1][1] for k in inside)
        pace = statistics.mean(seq[k][1] - seq[k - 1][1] for k in inside)
        return gap, pace, len(inside)
    return gaps(up), gaps(down)


def stamps(d, size, mode):
    """The `stamp_*` cells copy by copy: when the host served the first and last word's reads of
    each copy into the GPU and when they landed, and the copies out of the GPU's first and last
    word landing in host memory (served and out of the GPU: the CPU's clock from the gate's flag;
    landed: the GPU's from the gate's end)."""
    n = 1 + max((k for (s, m, w, k) in d if s == size and m == mode and w == "served_first"), default=-1)
    nd = 1 + max((k for (s, m, w, k) in d if s == size and m == mode and w == "down_first"), default=-1)
    lines = []
    for k in range(max(n, nd)):
        g = lambda w: d.get((size, mode, w, k))
        up = ("served %6.2f-%6.2f landed %6.2f-%6.2f (first landed less served %.2f)" %
              (g("served_first"), g("served_last"), g("first"), g("last"), g("first") - g("served_first"))) if k < n else " " * 62
        down = ("out of the GPU %6.2f-%6.2f" % (g("down_first"), g("down_last"))) if k < nd else ""
        lines.append(f"      k={k:2d} into the GPU {up}  {down}")
    if n > 1:
        gaps = [d[(size, mode, "served_first", k)] - d[(size, mode, "served_last", k - 1)] for k in range(1, n)]
        lines.append("      into the GPU, last read served to the next copy's first: " + " ".join("%.2f" % x for x in gaps))
    if nd > 1:
        gaps = [d[(size, mode, "down_first", k)] - d[(size, mode, "down_last", k - 1)] for k in range(1, nd)]
        lines.append("      out of the GPU, last word landed to the next copy's first: " + " ".join("%.2f" % x for x in gaps))
    return lines


def main(leases):
    for lease in leases:
        d, runs = load(lease)
        print(f"## {os.path.basename(lease.rstrip('/'))} ({runs} runs)")
        print("   in/out   mode  | into the GPU: data   gap  pace  first  end | out of it: data   gap  pace  first  end | events h2d_end d2h_end stop")
        for size in sorted({k[0] for k in d}, key=lambda s: (s[0] != s[1] and s[0] * s[1] > 0, max(s), s)):
            for mode in ("h2d", "d2h", "pair", "mixed", "one_h2d", "one_d2h", "one_pair", "stamp_h2d", "stamp_pair", "stamp_mixed"):
                up = direction(d, size, mode, "first", "last")
                down = direction(d, size, mode, "down_first", "down_last")
                if up is None and down is None:
                    continue
                fmt = lambda x: ("%6.2f %5.2f %5.2f %6.2f %6.2f" % x) if x else " " * 32
                ev = " ".join("%7.2f" % next((v for (s, m, ww, k), v in d.items() if (s, m, ww) == (size, mode, w)), float("nan"))
                              for w in ("h2d_end", "d2h_end", "stop"))
                sizes = "/".join(f"{b >> 10}K" if b else "-" for b in size)
                print(f"  {sizes:>9s} {mode:5s} |        {fmt(up)} |          {fmt(down)} | {ev}")
                if mode.startswith("stamp_"):
                    print("\n".join(stamps(d, size, mode)))
                both = overlap(d, size, mode)
                if both:
                    (gu, pu, nu), (gd, pd, nd) = both
                    print(f"  {'':9s} {'':5s} |   both moving: gap {gu:5.2f} pace {pu:5.2f} ({nu:2d})   |"
                          f"     both moving: gap {gd:5.2f} pace {pd:5.2f} ({nd:2d})   |")
        print()


if __name__ == "__main__":
    here = os.path.dirname(os.path.abspath(__file__))
    main(sys.argv[1:] or sorted(glob.glob(os.path.join(here, "leases", "*"))))
