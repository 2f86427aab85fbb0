#!/usr/bin/env python3
"""Model-vs-measured ratios per strategy (a first look, before any calibration).

Usage: scripts/compare.py SIM_results.csv MEASURED
MEASURED: a measured.csv, a lease folder or a machine's measured folder (results/h100-sxm/measured):
measured times are the median over leases of each lease's median over its runs (scripts/leases.py).
Joins rows on (scenario, strategy, direction, size, variant) and prints, per strategy, the
median and range of sim_time / measured_time, split at 64 KiB. Standard library only.
"""
import statistics
import sys

import leases


def load(path):
    rows = {}
    for key, r in leases.cross_lease(path).items():
        v = key[4]
        if v == "misses" or v == "kernel" or v.startswith("setup=freehost"):
            continue  # the deadline, not a time; harness-only rows: the kernel alone, cudaFreeHost
        rows[key] = float(r["time_us"])
    return rows


def main(sim_path, hw_path):
    sim, hw = load(sim_path), load(hw_path)
    groups = {}
    for key, t in sim.items():
        if key in hw and hw[key] > 0:
            kind = "setup" if key[4].startswith("setup=") else ("< 64 KiB" if key[3] < 65536 else ">= 64 KiB")
            groups.setdefault((key[1], kind), []).append(t / hw[key])
    print("| strategy | rows | n | median sim/hw time | min | max |")
    print("|---|---|---|---|---|---|")
    for (strategy, kind), ratios in sorted(groups.items()):
        print(f"| {strategy} | {kind} | {len(ratios)} | {statistics.median(ratios):.2f} | {min(ratios):.2f} | {max(ratios):.2f} |")


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2])
