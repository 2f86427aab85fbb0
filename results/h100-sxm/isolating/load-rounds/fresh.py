#!/usr/bin/env python3
"""This case's own fresh leases: the chase by footprint and a few warps' loads as rounds.

Usage: fresh.py LEASE_DIR [LEASE_DIR ...] [--model MEASURED_CSV] [--csv OUT]

Each LEASE_DIR holds a measured.csv of plan.txt. A lease's chase of a footprint is the median of
its cases (lr-chase, lr-chase-b, lr-chase-c); a load row is taken as rounds (the time over the
rounds its warps go, one access a thread a round) and less the same lease's 2 MiB chase, as
main_plan.py does with the main plans' leases. --model: the measured.csv that `dmasim run
scenario.yaml` writes (its time_us), for the model's rows. Standard library only.
"""
import argparse
import csv
import os
import statistics
import sys

MIB = 1 << 20
CHASES = ("lr-chase", "lr-chase-b", "lr-chase-c")
FOOTPRINTS = (4096, 64 * 1024, 2 * MIB, 64 * MIB)
# Scenario: (size in bytes, bytes a round: blocks x threads x access bytes), scenario.yaml's.
LOADS = {
    "lr-warp-16B": (1 * MIB, 1 * 32 * 16),
    "lr-block-4B": (4 * MIB, 1 * 256 * 4),
    "lr-block-8B": (4 * MIB, 1 * 256 * 8),
    "lr-block-16B": (16 * MIB, 1 * 256 * 16),
    "lr-blocks-4": (16 * MIB, 4 * 256 * 16),
    "lr-blocks-16": (16 * MIB, 16 * 256 * 16),
}


def rows_of(path):
    try:
        with open(path, newline="") as f:
            return {(r["scenario"], int(r["size_bytes"])): float(r["time_us"])
                    for r in csv.DictReader(f) if r.get("status", "ok") == "ok" and r["time_us"]}
    except (OSError, KeyError, ValueError) as e:
        sys.exit(f"fresh.py: {path}: {e}")


def derived(rows):
    out = {}
    for fp in FOOTPRINTS:
        v = [rows[(c, fp)] for c in CHASES if (c, fp) in rows]
        if v:
            out[f"chase {fp // 1024} KiB"] = statistics.median(v)
            if len(v) > 1:
                out[f"chase {fp // 1024} KiB, its cases"] = v
    two = out.get(f"chase {2 * MIB // 1024} KiB")
    for name, (size, per_round) in LOADS.items():
        t = rows.get((name, size))
        if t is None:
            continue
        r = t / (size / per_round)
        out[f"{name} round"] = r
        if two is not None:
            out[f"{name} round - 2 MiB chase"] = r - two
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("leases", nargs="+")
    ap.add_argument("--model")
    ap.add_argument("--csv")
    a = ap.parse_args()
    per = {}
    for d in a.leases:
        p = os.path.join(d, "measured.csv")
        if not os.path.isfile(p):
            sys.exit(f"fresh.py: no measured.csv in {d}")
        lease = os.path.basename(os.path.normpath(d))
        for k, v in derived(rows_of(p)).items():
            per.setdefault(k, []).append((lease, v))
    model = derived(rows_of(a.model)) if a.model else {}
    print(f"{len(a.leases)} leases: each lease's value (us), the median over the leases" + (", the model's" if model else ""))
    table = []
    for k, vals in per.items():
        if k.endswith("its cases"):
            print(f"  {k:34s} " + "  ".join("/".join(f"{x:.4f}" for x in v) for _, v in vals))
            continue
        xs = [v for _, v in vals]
        med = statistics.median(xs)
        line = f"  {k:34s} " + " ".join(f"{x:8.4f}" for x in xs) + f"  median {med:.4f}"
        if k in model:
            line += f"  model {model[k]:.4f} ({model[k] - med:+.4f}, {100 * (model[k] / med - 1):+.2f} %)"
        print(line)
        table.append([k, len(xs), f"{med:.4f}", f"{min(xs):.4f}", f"{max(xs):.4f}", f"{model[k]:.4f}" if k in model else ""])
    if a.csv:
        with open(a.csv, "w", newline="") as f:
            w = csv.writer(f, lineterminator="\n")
            w.writerow(["row", "leases", "median_us", "min_us", "max_us", "model_us"])
            w.writerows(table)


if __name__ == "__main__":
    main()
