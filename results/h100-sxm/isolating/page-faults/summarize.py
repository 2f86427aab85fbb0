#!/usr/bin/env python3
"""Summarise page-faults (README.md): per mode and size, each lease's µs a page and the median over
the leases; the first touch inside a copy less the copy alone (copy_from - copy_warm: a read fault,
copy_into - copy_warm: a write fault), and beside them what the main plan's `pageable-fresh` rows
imply a page (fresh - warm pageable, median over leases) when given MEASURED folders.

Usage: summarize.py LEASE [LEASE ...] [--measured DIR ...] > summary.txt   (standard library only)
"""
import argparse
import collections
import csv
import glob
import os
import statistics


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("leases", nargs="+")
    ap.add_argument("--measured", nargs="*", default=[])
    a = ap.parse_args()
    per = collections.defaultdict(dict)  # (mode, bytes) -> lease -> us a page
    for lease in a.leases:
        for r in csv.DictReader(open(os.path.join(lease, "faults.csv"))):
            per[(r["mode"], int(r["bytes"]))][os.path.basename(lease.rstrip("/"))] = float(r["us_per_page"])
    names = sorted({n for v in per.values() for n in v})
    sizes = sorted({k[1] for k in per})
    print("µs a 4 KiB page, each lease (" + ", ".join(names) + ") and their median")
    for mode in ("read", "write", "copy_from", "copy_into", "copy_warm"):
        for s in sizes:
            v = per[(mode, s)]
            print(f"  {mode:10s} {s >> 10:>6} KiB: " + " ".join(f"{v[n]:.3f}" for n in names if n in v)
                  + f" | median {statistics.median(v.values()):.3f}")
    print()
    print("First touch inside a copy, less the copy alone (median over leases of each lease's difference):")
    fault = {}
    for kind, mode in (("read", "copy_from"), ("write", "copy_into")):
        cells = []
        for s in sizes:
            d = [per[(mode, s)][n] - per[("copy_warm", s)][n] for n in names if n in per[(mode, s)]]
            fault[(kind, s)] = statistics.median(d)
            cells.append(f"{s >> 10} KiB {fault[(kind, s)]:.3f}")
        allv = [fault[(kind, s)] for s in sizes]
        print(f"  {kind}: " + ", ".join(cells) + f" | median over sizes {statistics.median(allv):.3f}")
    fresh = collections.defaultdict(dict)  # (direction, bytes) -> lease -> (fresh - touched, fresh - warm) a page
    for lease in a.leases:
        path = os.path.join(lease, "freshcopy.csv")
        if not os.path.exists(path):
            continue
        t = {(r["direction"], int(r["bytes"]), r["state"]): float(r["us_median"]) for r in csv.DictReader(open(path))}
        for (direction, size, state), us in t.items():
            if state == "fresh":
                pages = size / 4096
                fresh[(direction, size)][os.path.basename(lease.rstrip("/"))] = (
                    (us - t[(direction, size, "touched")]) / pages, (us - t[(direction, size, "warm")]) / pages)
    if fresh:
        print()
        print("freshcopy.csv: a pageable cudaMemcpy from or into a new mapping less the same copy of pages the")
        print("CPU wrote first (fresh - touched), and less one of a mapping copied before (fresh - warm), µs a page:")
        by_dir = collections.defaultdict(list)
        for (direction, size), v in sorted(fresh.items()):
            by_dir[direction] += [x[0] for x in v.values()]
            print(f"  {direction} {size >> 10:>6} KiB: " + "; ".join(f"{n} {x[0]:.3f} / {x[1]:.3f}" for n, x in sorted(v.items())))
        for direction, v in sorted(by_dir.items()):
            print(f"  {direction}: fresh - touched, median over leases and sizes {statistics.median(v):.3f} "
                  f"({min(v):.3f}-{max(v):.3f}, {len(v)} cells)")
    if a.measured:
        print()
        print("The main plans' pageable-fresh rows less the pageable rows, a page (median over leases):")
        for folder in a.measured:
            d = collections.defaultdict(list)
            for f in glob.glob(os.path.join(folder, "*", "measured.csv")):
                rows = {(r["scenario"], r["direction"], int(r["size_bytes"])): float(r["time_us"])
                        for r in csv.DictReader(open(f)) if r["status"] == "ok" and r["variant"] == ""}
                for (sc, direction, size), t in rows.items():
                    if sc == "pageable-fresh" and ("pageable", direction, size) in rows:
                        d[(direction, size)].append((t - rows[("pageable", direction, size)]) / (size / 4096))
            print(f"  {folder}: " + ", ".join(f"{k[0]} {k[1] >> 10} KiB {statistics.median(v):.3f} ({len(v)})"
                                             for k, v in sorted(d.items())))


if __name__ == "__main__":
    main()
