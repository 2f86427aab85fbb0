#!/usr/bin/env python3
"""Per case of zero-copy-grid-shape: each lease's median, their median, reads or lines per second,
and the model's time beside it (the results.csv of `dmasim run scenario.yaml`, one or more).

    summarize.py LEASE_DIR... [--model NAME=results.csv ...]
"""
import argparse
import csv
import statistics
import sys
from pathlib import Path


def read(path):
    return {(r["scenario"], int(r["size_bytes"])): float(r["time_us"]) for r in csv.DictReader(open(path))}


def requests(case, size):
    """Read requests (h2d) the GPU sends: one per run of touched 32-byte sectors a line."""
    parts = case.split("-")
    if parts[1] != "ld":
        return None
    width = int(parts[2].rstrip("B"))
    stride = int(parts[3][1:]) if parts[3].startswith("s") else 1
    step = width * stride  # bytes between neighbouring threads' loads
    accesses = size // width
    if step > 32:
        return accesses  # each load in a sector of its own, apart from the next
    span = 32 * step  # bytes one warp's access spans
    return accesses // 32 if span < 128 else accesses * step // 128  # one read a warp, or a line


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("leases", nargs="+", type=Path)
    ap.add_argument("--model", action="append", default=[], help="NAME=results.csv of dmasim run")
    a = ap.parse_args()
    leases = [(p.name, read(p / "measured.csv")) for p in a.leases]
    models = [(m.split("=", 1)[0], read(m.split("=", 1)[1])) for m in a.model]
    keys = []
    for _, rows in leases:
        keys += [k for k in rows if k not in keys]
    head = ["case", "size", "leases", "median_us", "lowest_us", "highest_us", "M_reads_per_s"]
    head += [f"{n}_us" for n, _ in models] + [f"{n}_err_pct" for n, _ in models]
    w = csv.writer(sys.stdout, lineterminator="\n")
    w.writerow(head)
    for k in keys:
        v = [rows[k] for _, rows in leases if k in rows]
        med = statistics.median(v)
        n = requests(*k)
        row = [k[0], f"{k[1] >> 20}MiB", len(v), f"{med:.1f}", f"{min(v):.1f}", f"{max(v):.1f}",
               f"{n / med:.0f}" if n else ""]
        row += [f"{m[k]:.1f}" if k in m else "" for _, m in models]
        row += [f"{(m[k] / med - 1) * 100:+.1f}" if k in m else "" for _, m in models]
        w.writerow(row)


if __name__ == "__main__":
    main()
