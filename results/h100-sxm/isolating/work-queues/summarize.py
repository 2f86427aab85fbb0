#!/usr/bin/env python3
"""Medians over leases of queues.cu's and assign.cu's cases: summary-queues.csv, summary-assign.csv.

Usage: summarize.py  (from anywhere; reads h200/*/ and h200x2/*/ beside this file)
Each cell is the median over a machine kind's leases of the lease's median; `held` says whether
B ended more than 50 us after B alone (the same connections, no stream A: k = 0 or stream_a -1),
i.e. waited in a queue behind work of A's."""
import csv
import glob
import os
import statistics

HERE = os.path.dirname(os.path.abspath(__file__))
HELD_US = 50.0  # B's end this much past B alone: it waited behind work of A's


def rows(pattern):
    out = {}
    for path in sorted(glob.glob(os.path.join(HERE, pattern))):
        lease = os.path.basename(os.path.dirname(path))
        with open(path) as f:
            for r in csv.DictReader(f):
                out.setdefault(lease, []).append(r)
    return out


def summarize(kind_dir, name, keys):
    cells = {}
    leases = rows(os.path.join(kind_dir, "*", name + "-c*.csv"))
    for lease, rs in leases.items():
        for r in rs:
            cells.setdefault(tuple(r[k] for k in keys), []).append(float(r["b_end_us_median"]))
    return len(leases), cells


def main():
    for name, keys in (("queues", ("connections", "case", "stream_a", "stream_b")), ("assign", ("connections", "case", "k"))):
        with open(os.path.join(HERE, "summary-" + name + ".csv"), "w", newline="") as f:
            w = csv.writer(f)
            w.writerow(["machine", *keys, "leases", "b_end_us_median", "lowest_lease", "highest_lease", "held"])
            for kind in ("h200", "h200x2"):
                n, cells = summarize(kind, name, keys)
                alone = {}
                for key, v in cells.items():
                    if key[-1] == "0" if name == "assign" else key[2] == "-1":
                        alone[key[:2]] = statistics.median(v)
                for key in sorted(cells, key=lambda k: (int(k[0]), k[1:])):
                    v = cells[key]
                    med = statistics.median(v)
                    # same-stream's B is waiters' B (a copy out of the GPU): its alone is waiters' k = 0.
                    base = (key[0], "waiters") if key[1] == "same-stream" else key[:2]
                    held = int(med > alone[base] + HELD_US)
                    w.writerow([kind, *key, len(v), f"{med:.1f}", f"{min(v):.1f}", f"{max(v):.1f}", held])
    print("wrote summary-queues.csv, summary-assign.csv")


if __name__ == "__main__":
    main()
