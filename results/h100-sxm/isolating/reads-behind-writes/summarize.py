#!/usr/bin/env python3
"""The reads-behind-writes leases side by side: per lease, each case's median against its alone.

  summarize.py [LEASE_DIR...]   (default: leases/*)
Prints, per mode, a table of lease x case: the median (us; ns a hop for chase) and, for the
cases beside something, its excess over the same size alone; and each lease's lead sweep.
"""
import csv
import glob
import os
import re
import sys


def read(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def main(argv):
    leases = argv[1:] or sorted(glob.glob(os.path.join(os.path.dirname(os.path.abspath(__file__)), "leases", "*")))
    for mode in ("chase", "copies", "gated"):
        rows = {}
        for lease in leases:
            path = os.path.join(lease, mode + ".csv")
            if os.path.exists(path):
                rows[os.path.basename(lease)] = read(path)
        if not rows:
            continue
        print(f"== {mode}: median ({'ns a hop' if mode == 'chase' else 'us'}), beside: + over alone")
        for lease, rs in rows.items():
            alone = {}
            for r in rs:
                kind = r["case"].split("-")[0] if mode != "chase" else ""
                if r["case"].endswith("alone"):
                    alone[(kind, r["size_bytes"])] = float(r["median"])
            cells = []
            for r in rs:
                if "sm-stores" in r["case"]:
                    continue  # the stores outran the chase, or swamp the copies: not read here
                kind = r["case"].split("-")[0] if mode != "chase" else ""
                m = float(r["median"])
                ref = alone.get((kind, r["size_bytes"]))
                size = int(r["size_bytes"]) // 1024
                label = f"{r['case']} {size}K" if mode != "chase" else r["case"]
                cells.append(f"{label} {m:.2f}" + ("" if r["case"].endswith("alone") or ref is None else f" (+{m - ref:.2f})"))
            print(f"  {lease}: " + "; ".join(cells))
    # lead and partner: each measured copy's median by the other copy's head start D.
    for lease in leases:
        for mode in ("lead", "partner"):
            path = os.path.join(lease, mode + ".csv")
            if not os.path.exists(path):
                continue
            print(f"== {mode} ({os.path.basename(lease)}): the measured copy's median (us) by D, the other copy's head start")
            series = {}
            for r in read(path):
                m = re.match(r"^(.*?)-(-?\d+us)$", r["case"])
                series.setdefault((m.group(1), int(r["size_bytes"]) // 1024), []).append((m.group(2), float(r["median"])))
            for (what, kib), points in series.items():
                print(f"  {what} {kib}K: " + " ".join(f"{d}={v:.1f}" for d, v in points))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
