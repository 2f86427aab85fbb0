#!/usr/bin/env python3
"""The chase beside a grid of stores: each lease's median per load (stores-beside/*/measured.csv,
dmaprobe), the median across leases, and the model's (a results.csv of `dmasim run
scenario-stores-beside.yaml`, with gpu.sysmem_in_order on and off).

Usage: summarize_stores_beside.py MODEL_IN_ORDER.csv MODEL_TURNS.csv > summary-stores-beside.csv
"""
import csv
import glob
import os
import statistics
import sys


def rows(path):
    with open(path, newline="") as f:
        return {r["scenario"]: float(r["time_us"]) for r in csv.DictReader(f)}


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    here = os.path.dirname(os.path.abspath(__file__))
    leases = sorted(glob.glob(os.path.join(here, "stores-beside", "*", "measured.csv")))
    measured = {os.path.basename(os.path.dirname(p)): rows(p) for p in leases}
    in_order, turns = rows(sys.argv[1]), rows(sys.argv[2])
    names = list(measured.values())[0].keys()

    def blocks(name):
        tail = name.rsplit("-", 1)[-1]
        return 0 if name == "chase-alone" else 264 if not tail.isdigit() else int(tail)

    out = csv.writer(sys.stdout, lineterminator="\n")
    out.writerow(["stores_beside_blocks", *measured.keys(), "median_us", "model_in_order_us", "error_pct", "model_turns_us"])
    for name in sorted(names, key=blocks):
        values = [m[name] for m in measured.values()]
        med = statistics.median(values)
        out.writerow([blocks(name), *(f"{v:.3f}" for v in values), f"{med:.3f}", f"{in_order[name]:.3f}",
                      f"{100 * (in_order[name] - med) / med:+.1f}", f"{turns[name]:.3f}"])


if __name__ == "__main__":
    main()
