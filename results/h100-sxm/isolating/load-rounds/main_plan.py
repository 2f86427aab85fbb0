#!/usr/bin/env python3
"""The main plans' chases and few-block loads, lease by lease.

Usage: main_plan.py MEASURED_DIR [MEASURED_DIR ...] [--model COMPARE_CSV ...] [--csv OUT]

Each MEASURED_DIR is a machine's results/<machine>/measured (one folder a lease, measured.csv). Per
machine: the chase of 4 KiB, 2 MiB and 64 MiB (medians over the leases, and each lease's 4 KiB and
64 MiB chase less its own 2 MiB one), and the loads of 1-8 blocks of 256 threads, 16 bytes a thread
(zc-grid-1/2/4/8 of 16 MiB, zero-copy-blocks1/4 of 64 MiB) as rounds: the time over the rounds the
warps go, and less the same lease's 2 MiB chase. --model: compare.csv files of the same machines, in
the same order (their predicted_us), for the model's rounds and chase. --csv: the rows as CSV
(machine, row, leases, median_us, min_us, max_us, model_us). Standard library only.
"""
import argparse
import csv
import os
import statistics
import sys

CHASE = "zc-chase-host"
MIB = 1 << 20
# Scenario: (blocks, size in bytes); every one 256 threads of 16-byte loads.
LOADS = {
    "zc-grid-1": (1, 16 * MIB),
    "zc-grid-2": (2, 16 * MIB),
    "zc-grid-4": (4, 16 * MIB),
    "zc-grid-8": (8, 16 * MIB),
    "zero-copy-blocks1": (1, 64 * MIB),
    "zero-copy-blocks4": (4, 64 * MIB),
}
BYTES_A_ROUND = 256 * 16  # a block's warps, one 16-byte access a thread


def rows_of(path, time_column):
    try:
        with open(path, newline="") as f:
            return {(r["scenario"], r["direction"], int(r["size_bytes"])): float(r[time_column])
                    for r in csv.DictReader(f) if r.get("status", "ok") == "ok" and r[time_column]}
    except (OSError, KeyError, ValueError) as e:
        sys.exit(f"main_plan.py: {path}: {e}")


def derived(rows):
    """{row name: us} for one lease (or the model): chases, their differences, rounds."""
    out = {}
    chase = {size: rows.get((CHASE, "h2d", size)) for size in (4096, 2 * MIB, 64 * MIB)}
    if None in chase.values():
        return out
    out["chase 4 KiB"], out["chase 2 MiB"], out["chase 64 MiB"] = chase[4096], chase[2 * MIB], chase[64 * MIB]
    out["chase 4 KiB - 2 MiB"] = chase[4096] - chase[2 * MIB]
    out["chase 64 MiB - 2 MiB"] = chase[64 * MIB] - chase[2 * MIB]
    for name, (blocks, size) in LOADS.items():
        t = rows.get((name, "h2d", size))
        if t is None:
            continue
        r = t / (size / (blocks * BYTES_A_ROUND))
        out[f"{name} round"] = r
        out[f"{name} round - 2 MiB chase"] = r - chase[2 * MIB]
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("measured", nargs="+")
    ap.add_argument("--model", nargs="*", default=[])
    ap.add_argument("--csv")
    a = ap.parse_args()
    if a.model and len(a.model) != len(a.measured):
        sys.exit("main_plan.py: one --model compare.csv per measured folder, in the same order")
    table = []
    for i, d in enumerate(a.measured):
        machine = os.path.basename(os.path.dirname(os.path.abspath(d)))
        per = {}
        for lease in sorted(os.listdir(d)):
            p = os.path.join(d, lease, "measured.csv")
            if os.path.isfile(p):
                for k, v in derived(rows_of(p, "time_us")).items():
                    per.setdefault(k, []).append(v)
        model = derived(rows_of(a.model[i], "predicted_us")) if a.model else {}
        print(f"{machine} ({len(per.get('chase 2 MiB', []))} leases): median (min-max) us" + (", the model's" if model else ""))
        for k, v in per.items():
            med = statistics.median(v)
            line = f"  {k:34s} {med:8.4f} ({min(v):.4f} to {max(v):.4f})"
            if k in model:
                line += f"  model {model[k]:.4f} ({model[k] - med:+.4f})"
            if k == "chase 4 KiB - 2 MiB":
                line += f"  above 0.1 us on {sum(x > 0.1 for x in v)} of {len(v)}"
            print(line)
            table.append([machine, k, len(v), f"{med:.4f}", f"{min(v):.4f}", f"{max(v):.4f}",
                          f"{model[k]:.4f}" if k in model else ""])
    if a.csv:
        with open(a.csv, "w", newline="") as f:
            w = csv.writer(f, lineterminator="\n")
            w.writerow(["machine", "row", "leases", "median_us", "min_us", "max_us", "model_us"])
            w.writerows(table)


if __name__ == "__main__":
    main()
