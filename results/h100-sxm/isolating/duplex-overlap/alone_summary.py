#!/usr/bin/env python3
"""Each copy's end alone and in the pair, repetition by repetition (`overlap alone`'s alone.csv,
and `overlap behind`'s behind.csv, `overlap source`'s source.csv and `overlap idle`'s idle.csv where
a lease has them).

Usage: alone_summary.py LEASE_DIR [LEASE_DIR ...]  (writes to stdout; alone-summary.txt is its output)

Per lease, size and shape: p10/p50/p90 and repetitions per µs of each copy's end after the start
event; where the values fall in two groups (a split of the sorted values at the largest drop of
two-means' error), the groups' medians and the share of the later one. Standard library only.
"""
import os
import statistics
import sys

from repsio import quantile, read_rows


def two_groups(v):
    """The split of the sorted values into two runs that leaves the least squared error, its
    groups' medians and the later group's share; None when the split removes under 70 % of it."""
    v = sorted(v)
    lo, hi = quantile(v, 0.02), quantile(v, 0.98)
    v = [x for x in v if lo <= x <= hi]
    n = len(v)
    total = sum((x - statistics.fmean(v)) ** 2 for x in v)
    best = None
    prefix, prefix2 = [0.0], [0.0]
    for x in v:
        prefix.append(prefix[-1] + x)
        prefix2.append(prefix2[-1] + x * x)
    for k in range(n // 20, n - n // 20):
        a, b = k, n - k
        sa = prefix2[k] - prefix[k] ** 2 / a
        sb = (prefix2[n] - prefix2[k]) - (prefix[n] - prefix[k]) ** 2 / b
        if best is None or sa + sb < best[0]:
            best = (sa + sb, k)
    if best is None or total == 0 or best[0] > 0.3 * total:
        return None
    k = best[1]
    return statistics.median(v[:k]), statistics.median(v[k:]), (n - k) / n


def main(dirs):
    for d in dirs:
        print(f"== {os.path.basename(os.path.normpath(d))}")
        names = [n for n in ("alone.csv", "behind.csv", "source.csv", "idle.csv") if os.path.exists(os.path.join(d, n))]
        if not names:
            sys.exit(f"alone_summary.py: {d}: no alone.csv, behind.csv, source.csv or idle.csv")
        for name in names:
            summarise(read_rows(os.path.join(d, name), "alone_summary.py"), name)


def summarise(rows, name):
    print(f"  -- {name}")
    shapes = [("d2h_only", ["d2h_us"]), ("h2d_only", ["h2d_us"]), ("both", ["h2d_us", "d2h_us", "interval_us"])]
    seen = {r["shape"] for r in rows}
    shapes += [(s, ["d2h_us" if s.startswith("d2h") else "h2d_us"]) for s in sorted(seen) if s not in ("d2h_only", "h2d_only", "both")]
    for size in sorted({int(r["bytes"]) for r in rows}):
        for shape, cols in shapes:
            sel = [r for r in rows if int(r["bytes"]) == size and r["shape"] == shape]
            for col in cols:
                v = [float(r[col]) for r in sel]
                if not v:
                    continue
                base = int(min(v))
                hist = [0] * (int(max(v)) - base + 1)
                for x in v:
                    hist[int(x) - base] += 1
                groups = two_groups(v)
                g = f" | groups {groups[0]:.2f} / {groups[1]:.2f} us, later {100 * groups[2]:.0f} %" if groups else ""
                print(f"  {size:>7} {shape:<8} {col:<11} p10 {quantile(v, 0.1):6.2f} p50 {quantile(v, 0.5):6.2f} "
                      f"p90 {quantile(v, 0.9):6.2f}{g} | per us from {base}: {' '.join(map(str, hist[:16]))}")


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__.strip().splitlines()[2])
    main(sys.argv[1:])
