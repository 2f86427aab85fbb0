#!/usr/bin/env python3
"""Summarise exchange-host (README.md): the leases' medians of the exchange, its loads alone and its
stores alone, beside the model's rows.

Usage: summarize.py MODEL_RESULTS_CSV LEASE [LEASE ...] > summary.txt
MODEL_RESULTS_CSV: `dmasim run scenario.yaml scenario-full.yaml --calibration h100-sxm --deterministic -o DIR`,
DIR/results.csv. Standard library only.
"""
import collections
import csv
import os
import statistics
import sys


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    model = {(r["scenario"], r["direction"], int(r["size_bytes"])): float(r["time_us"])
             for r in csv.DictReader(open(sys.argv[1]))}
    runs = collections.defaultdict(list)
    for lease in sys.argv[2:]:
        for r in csv.DictReader(open(os.path.join(lease, "measured.csv"))):
            if r["status"] == "ok":
                runs[(r["scenario"], r["direction"], int(r["size_bytes"]))].append(float(r["time_us"]))
    med = {k: statistics.median(v) for k, v in runs.items()}

    def err(k):
        return f"{100 * (model[k] / med[k] - 1):+6.1f} %" if k in model else "   n/a"

    print("One access per thread (blocks = size / 16 B / 256): medians over the leases (us), the model's, and")
    print("the exchange's excess over its loads alone (both - h2d), measured and the model's.")
    print(f"{'size':>7} {'lines':>6} {'leases':>6} | {'both':>7} {'h2d':>7} {'d2h':>7} {'excess':>7} | "
          f"{'model both':>10} {'h2d':>7} {'d2h':>7} {'excess':>7} | {'both err':>8} {'h2d err':>8} {'d2h err':>8}")
    fulls = sorted({k[2] for k in med if k[0].startswith("xh-full-")})
    for size in fulls:
        name = f"xh-full-{size // 1024}k"
        keys = {d: (name, d, size) for d in ("both", "h2d", "d2h")}
        m = {d: med[k] for d, k in keys.items()}
        p = {d: model.get(k, float("nan")) for d, k in keys.items()}
        print(f"{size // 1024:>6}K {size // 128:>6} {len(runs[keys['both']]):>6} | {m['both']:7.2f} {m['h2d']:7.2f} {m['d2h']:7.2f} "
              f"{m['both'] - m['h2d']:7.2f} | {p['both']:10.2f} {p['h2d']:7.2f} {p['d2h']:7.2f} {p['both'] - p['h2d']:7.2f} | "
              f"{err(keys['both']):>8} {err(keys['h2d']):>8} {err(keys['d2h']):>8}")
    print()
    print("The exchange by grid (blocks of 256 threads): median over the leases (us), the model's and its error.")
    grids = sorted({int(k[0].rsplit("-", 1)[1]) for k in med if k[0].startswith("xh-exchange-grid-")})
    for size in (262144, 1048576, 4194304):
        cells = []
        for b in grids:
            k = (f"xh-exchange-grid-{b}", "both", size)
            if k in med:
                cells.append(f"{b}: {med[k]:7.2f} / {model.get(k, float('nan')):7.2f} ({err(k).strip()})")
        print(f"{size // 1024:>5}K  " + "  ".join(cells))
    evens = sorted({int(k[0].rsplit("-", 1)[1]) for k in med if k[0].startswith("xh-even-")})
    if evens:
        print()
        print("Blocks split evenly over the 132 SMs against the power of two beside it (one access per thread):")
        print("excess = both - h2d (us); expected = the uneven excess plus 2.25 ns a line more.")
        for b in evens:
            ev = {d: med.get((f"xh-even-{b}", d, b * 4096)) for d in ("both", "h2d", "d2h")}
            ub = b // 33 * 32  # the power of two below: 256, 512, 1024 blocks
            un = {d: med.get((f"xh-uneven-{ub}", d, ub * 4096)) for d in ("both", "h2d", "d2h")}
            if None in ev.values() or None in un.values():
                continue
            lines_more = (b - ub) * 4096 // 128
            print(f"  {b} blocks ({b * 4} KiB) excess {ev['both'] - ev['h2d']:6.2f} | {ub} blocks ({ub * 4} KiB) "
                  f"excess {un['both'] - un['h2d']:6.2f} | expected {un['both'] - un['h2d'] + 2.25e-3 * lines_more:6.2f}")
    print()
    print("Loads alone and stores alone by grid:")
    for b in (264, 1056):
        cells = []
        for size in (262144, 1048576, 4194304):
            for d in ("h2d", "d2h"):
                k = (f"xh-oneway-grid-{b}", d, size)
                if k in med:
                    cells.append(f"{d} {size // 1024}K {med[k]:.2f} / {model.get(k, float('nan')):.2f}")
        print(f"  {b} blocks: " + "; ".join(cells))


if __name__ == "__main__":
    main()
