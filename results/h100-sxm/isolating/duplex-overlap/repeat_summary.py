#!/usr/bin/env python3
"""How much of a duplex row's spread is the case's own: `repeat-plan.txt` runs the main plan's
duplex pairs (20 repetitions, 3 warm-ups each) ten times over on one machine, and its blocking
pinned copies each way three times. Per lease and size: the ten cases' medians of the pair, of
each copy, and the aggregate over one way (2 x the median of the lease's blocking copies into the
GPU / the pair); then, over every case of every lease, the median, its 10-90 % range, and how far
the median of 28 cases drawn at random moves (the 2.5-97.5 % range over 2000 draws: what a main
plan of 28 leases, one case each, could give from the cases' spread alone).

Usage: repeat_summary.py LEASE_DIR [LEASE_DIR ...]  (repeat-summary.txt is its output over repeat/*)
Standard library only.
"""
import os
import random
import statistics

from repsio import cli, quantile, read_rows

SIZES = [4096, 16384, 65536, 262144, 1048576, 4194304]


def main(dirs):
    pooled = {s: [] for s in SIZES}
    for d in dirs:
        rows = [r for r in read_rows(os.path.join(d, "measured.csv"), "repeat_summary.py") if r["status"] == "ok"]
        print(f"== {os.path.basename(os.path.normpath(d))}")
        for s in SIZES:
            cases = {}
            for v in ("", "h2d", "d2h"):
                cases[v] = [float(r["time_us"]) for r in rows
                            if r["scenario"] == "duplex" and int(r["size_bytes"]) == s and r["variant"] == v]
            one_way = [float(r["time_us"]) for r in rows
                       if r["scenario"] == "pinned" and r["direction"] == "h2d" and int(r["size_bytes"]) == s and r["variant"] == ""]
            if not cases[""] or not one_way:
                continue
            up = statistics.median(one_way)
            ratios = [2 * up / p for p in cases[""]]
            pooled[s] += ratios
            print(f"  {s:8d} pair {' '.join(f'{x:5.1f}' for x in sorted(cases['']))}")
            print(f"  {'':8} h2d  {' '.join(f'{x:5.1f}' for x in sorted(cases['h2d']))}")
            print(f"  {'':8} d2h  {' '.join(f'{x:5.1f}' for x in sorted(cases['d2h']))}")
            print(f"  {'':8} aggregate over one way (one way {up:.2f} us): {min(ratios):.3f}-{max(ratios):.3f}, "
                  f"median {statistics.median(ratios):.3f}")
    rng = random.Random(1)
    print("== every case of every lease: the aggregate over one way (into the GPU)")
    for s in SIZES:
        v = pooled[s]
        if not v:
            continue
        med = statistics.median(v)
        draws = sorted(statistics.median(rng.choice(v) for _ in range(28)) for _ in range(2000))
        lo, hi = draws[int(0.025 * len(draws))], draws[int(0.975 * len(draws)) - 1]
        print(f"  {s:8d}: {len(v)} cases, median {med:.3f}, p10-p90 {quantile(v, 0.1):.3f}-{quantile(v, 0.9):.3f}; "
              f"the median of 28 drawn: {lo:.3f}-{hi:.3f} ({100 * (lo / med - 1):+.1f}/{100 * (hi / med - 1):+.1f} %)")


if __name__ == "__main__":
    cli(main, __doc__)
