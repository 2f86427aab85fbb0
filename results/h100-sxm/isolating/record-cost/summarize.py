#!/usr/bin/env python3
"""record-cost: what an event record behind a copy costs a chain, per lease and the kinds' medians.

Usage: summarize.py [LEASES_DIR] > summary.txt

For every lease (folders named h200x1-... or h200x2-...), both runs of recordcost.cu pooled (the
median of the cells' medians): a copy's share of the chain with nothing between the copies (us),
and what one record costs, timed and untimed: (cell - none) x (copies - 1) / (copies - 2), us.
Then the medians over each kind's leases. Standard library only.
"""
import csv
import glob
import os
import statistics
import sys


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(os.path.abspath(__file__)), "leases")
    leases = sorted(d for d in glob.glob(os.path.join(root, "*")) if os.path.isdir(d))
    if not leases:
        sys.exit(f"summarize.py: no lease folders under {root}")
    by_kind = {}
    print("lease dir bytes: a copy alone (us) | a timed record | an untimed record (us)")
    for lease in leases:
        name = os.path.basename(lease)
        kind = name.split("-")[0]
        cells = {}
        for path in sorted(glob.glob(os.path.join(lease, "recordcost-*.csv"))):
            with open(path, newline="") as f:
                for r in csv.DictReader(f):
                    key = (r["dir"], int(r["bytes"]), r["between"])
                    cells.setdefault(key, []).append((float(r["us_per_copy_median"]), int(r["copies"])))
        if not cells:
            sys.exit(f"summarize.py: {lease}: no recordcost-*.csv")
        for d, n in sorted({(k[0], k[1]) for k in cells}, key=lambda x: (x[0] != "d2h", x[1])):
            if (d, n, "none") not in cells:
                sys.exit(f"summarize.py: {lease}: no 'none' cell for {d} {n}")
            none = statistics.median(v for v, _ in cells[(d, n, "none")])
            copies = cells[(d, n, "none")][0][1]
            cost = {}
            for b in ("timed", "untimed"):
                if (d, n, b) in cells:
                    cost[b] = (statistics.median(v for v, _ in cells[(d, n, b)]) - none) * (copies - 1) / (copies - 2)
                    by_kind.setdefault((kind, d, n, b), []).append(cost[b])
            by_kind.setdefault((kind, d, n, "none"), []).append(none)
            print(f"{name} {d} {n >> 10:>3} KiB: {none:6.3f} | {cost.get('timed', float('nan')):+6.3f} | "
                  f"{cost.get('untimed', float('nan')):+6.3f}")
    print()
    print("medians over the leases of a kind")
    for kind in sorted({k[0] for k in by_kind}):
        for d, n in sorted({(k[1], k[2]) for k in by_kind if k[0] == kind}, key=lambda x: (x[0] != "d2h", x[1])):
            v = {b: by_kind.get((kind, d, n, b)) for b in ("none", "timed", "untimed")}
            med = {b: statistics.median(x) if x else float("nan") for b, x in v.items()}
            print(f"{kind} ({len(v['none'])} leases) {d} {n >> 10:>3} KiB: {med['none']:6.3f} | {med['timed']:+6.3f} | "
                  f"{med['untimed']:+6.3f}")


if __name__ == "__main__":
    main()
