#!/usr/bin/env python3
"""hoststate.cu's runs, lease by lease: the medians of each run (hoststate-N.csv) and, for the
interleaved mode (interleaved.csv.gz), each call's median over the iterations whose two blocking
64 KiB copies (summed) fall below and above the two-means split of that sum (its slowest 2 % left out).

Usage: hoststate_summary.py LEASE_DIR... > hoststate-summary.txt
"""
import csv
import glob
import gzip
import os
import statistics
import sys


def split_in_two(values):
    v = sorted(values)
    n = len(v)
    pre = [0.0]
    pre2 = [0.0]
    for x in v:
        pre.append(pre[-1] + x)
        pre2.append(pre2[-1] + x * x)

    def ss(a, b):
        m = (pre[b] - pre[a]) / (b - a)
        return (pre2[b] - pre2[a]) - (b - a) * m * m

    k = min(range(2, n - 1), key=lambda i: ss(0, i) + ss(i, n))
    return (v[k - 1] + v[k]) / 2.0


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    for lease in sys.argv[1:]:
        name = os.path.basename(os.path.normpath(lease))
        runs = sorted(glob.glob(os.path.join(lease, "hoststate-*.csv")))
        if not runs and not os.path.exists(os.path.join(lease, "interleaved.csv.gz")):
            sys.exit(f"hoststate_summary.py: {lease}: no hoststate-*.csv or interleaved.csv.gz")
        print(f"== {name}")
        for run in runs:
            with open(run, newline="") as f:
                rows = {r["quantity"]: float(r["median"]) for r in csv.DictReader(f)}
            state = rows["h2d_64k_us"] + rows["d2h_64k_us"]
            calls = " ".join(f"{k[:-3]} {v:.2f}" for k, v in rows.items() if k not in ("h2d_64k_us", "d2h_64k_us"))
            print(f"  {os.path.basename(run)}: 64 KiB both ways {state:.2f} us; {calls}")
        inter = os.path.join(lease, "interleaved.csv.gz")
        if os.path.exists(inter):
            with gzip.open(inter, "rt", newline="") as f:
                rows = list(csv.DictReader(f))
            sums = [float(r["h2d_64k_us"]) + float(r["d2h_64k_us"]) for r in rows]
            # The slowest 2 % (stalls of tens of us) left out, so that the split is between the levels.
            top = sorted(sums)[int(0.98 * (len(sums) - 1))]
            cut = split_in_two([s for s in sums if s <= top])
            cols = [c for c in rows[0] if c not in ("iteration", "h2d_64k_us", "d2h_64k_us")]
            print(f"  interleaved: {len(rows)} iterations, split at {cut:.2f} us (the slowest 2 %, above {top:.2f} us, left out)")
            for label, keep in (("below", lambda s: s < cut), ("above", lambda s: cut <= s <= top)):
                sel = [r for r, s in zip(rows, sums) if keep(s)]
                med = " ".join(f"{c[:-3]} {statistics.median(float(r[c]) for r in sel):.2f}" for c in cols)
                state = statistics.median(s for s in sums if keep(s))
                print(f"    {label}: {len(sel)} ({100.0 * len(sel) / len(rows):.0f} %), 64 KiB both ways {state:.2f} us; {med}")


if __name__ == "__main__":
    main()
