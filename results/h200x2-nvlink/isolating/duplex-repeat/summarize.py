#!/usr/bin/env python3
"""duplex-repeat: the main plan's duplex pairs ten times and its blocking pinned copies three times on
each lease (plan.txt). Per lease and size, the medians over the cases of the pair, of each blocking
copy and the aggregate over one way (2 x one way / the pair, each direction); then over every case of
every lease (pooled) the same with the model's rows of a compare.csv beside them.

Usage: summarize.py COMPARE_CSV LEASE_DIR [LEASE_DIR ...] > summary.txt
(COMPARE_CSV: the model's predictions, e.g. ../../compare/compare.csv). Standard library only.
"""
import csv
import os
import statistics
import sys

SIZES = [4096, 16384, 65536, 262144, 1048576, 4194304]
ROWS = {"pair": ("duplex", "both", ""), "pair_h2d": ("duplex", "both", "h2d"), "pair_d2h": ("duplex", "both", "d2h"),
        "h2d": ("pinned", "h2d", ""), "d2h": ("pinned", "d2h", "")}


def times(rows, size, what):
    scenario, direction, variant = ROWS[what]
    return [float(r["time_us"]) for r in rows if r["status"] == "ok" and r["scenario"] == scenario
            and r["direction"] == direction and int(r["size_bytes"]) == size and r["variant"] == variant]


def ratios(m):
    return 2 * m["h2d"] / m["pair"], 2 * m["d2h"] / m["pair"]


def main(args):
    if len(args) < 2:
        sys.exit(__doc__)
    with open(args[0], newline="") as f:
        model = {(r["scenario"], r["direction"], r["size_bytes"], r["variant"]): float(r["predicted_us"])
                 for r in csv.DictReader(f)}
    pooled = {}
    for d in args[1:]:
        with open(os.path.join(d, "measured.csv"), newline="") as f:
            rows = list(csv.DictReader(f))
        print(f"== {os.path.basename(os.path.normpath(d))} (medians over the cases, us)")
        for s in SIZES:
            m = {}
            for w in ROWS:
                v = times(rows, s, w)
                pooled.setdefault((s, w), []).extend(v)
                m[w] = statistics.median(v)
            up, down = ratios(m)
            print(f"  {s:8d} pair {m['pair']:7.2f} one way {m['h2d']:7.2f} / {m['d2h']:7.2f}  aggregate over one way "
                  f"{up:.3f} / {down:.3f}")
    print("== every case of every lease, measured against the model (us; aggregate over one way into / out of the GPU)")
    for s in SIZES:
        m = {w: statistics.median(pooled[(s, w)]) for w in ROWS}
        p = {w: model[ROWS[w][0], ROWS[w][1], str(s), ROWS[w][2]] for w in ROWS}
        cells = " ".join(f"{w} {m[w]:.2f}/{p[w]:.2f} ({100 * (p[w] / m[w] - 1):+.1f} %)" for w in ROWS)
        (mu, md), (pu, pd) = ratios(m), ratios(p)
        print(f"  {s:8d} {cells}\n  {'':8} aggregate {mu:.3f}/{pu:.3f} ({100 * (pu / mu - 1):+.1f} %), "
              f"{md:.3f}/{pd:.3f} ({100 * (pd / md - 1):+.1f} %); cases: {len(pooled[(s, 'pair')])} pairs, "
              f"{len(pooled[(s, 'h2d')])} + {len(pooled[(s, 'd2h')])} one way")


if __name__ == "__main__":
    main(sys.argv[1:])
