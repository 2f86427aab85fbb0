#!/usr/bin/env python3
"""Medians of handoff-behind-traffic's round trips per lease, mode and case (busywait*.csv: busywait.csv,
busywait-same.csv, busywait-seen.csv, busywait-records.csv, busywait-hop.csv, and a further run of a mode on the same
machine as busywait-MODE-N.csv, its line's lease LEASE#N; the first lease's busywait.csv has no mode
column: cross).

Usage: summarize.py LEASE_DIR [LEASE_DIR ...] > summary.txt
"""
import csv
import os
import statistics
import sys


def rows_of(path):
    with open(path, newline="") as f:
        for r in csv.DictReader(f):
            r.setdefault("mode", "cross")
            yield r


def main(dirs):
    if not dirs:
        sys.exit(__doc__)
    print("lease,mode,case,reps,trip_us,p10_us,p90_us,over_idle_us,background_around_all")
    for d in dirs:
        lease = os.path.basename(os.path.normpath(d))
        # A further run of a mode on the same machine (busywait-same-2.csv) is its own line.
        for name in sorted(n for n in os.listdir(d) if n.startswith("busywait") and n.endswith(".csv")):
            path = os.path.join(d, name)
            run = name[:-4].split("-")[2:]
            label = lease + ("#" + run[-1] if run and run[-1].isdigit() else "")
            by = {}
            for r in rows_of(path):
                by.setdefault((r["mode"], r["case"]), []).append(r)
            idle = {m: statistics.median(float(r["trip_us"]) for r in rs) for (m, c), rs in by.items() if c == "idle"}
            for (mode, case), rs in by.items():
                t = sorted(float(r["trip_us"]) for r in rs)
                q = lambda p: t[min(len(t) - 1, int(p * (len(t) - 1) + 0.5))]
                med = statistics.median(t)
                inside = all(r["inside"] == "1" for r in rs)
                print(f"{label},{mode},{case},{len(t)},{med:.3f},{q(0.1):.3f},{q(0.9):.3f},{med - idle.get(mode, med):.3f},{int(inside)}")


if __name__ == "__main__":
    main(sys.argv[1:])
