#!/usr/bin/env python3
"""Medians per cell of peerphase.csv (every lease under leases/): the row, each GPU's copy, the CPU's
time to GPU 0's copy call, and the row past GPU 0's copy's end (end0), whose steps in the delay
show where the wait for GPU 1's copy passes. Usage: summarize.py [LEASE_DIR ...]"""
import collections
import csv
import pathlib
import statistics
import sys

here = pathlib.Path(__file__).resolve().parent
dirs = [pathlib.Path(a) for a in sys.argv[1:]] or sorted((here / "leases").iterdir())
for d in dirs:
    cells = collections.defaultdict(list)
    with open(d / "peerphase.csv") as f:
        for r in csv.DictReader(f):
            cells[(int(r["bytes"]), r["case"], float(r["delay_us"]))].append(r)
    print(f"# {d.name}")
    print("MiB,case,delay_us,row_us,row_p10_us,row_p90_us,end0_us,gpu1_us,call0_us,row_past_end0_us")
    for (n, case, delay), reps in sorted(cells.items()):
        med = lambda k: statistics.median(float(x[k]) for x in reps)
        rows = sorted(float(x["row_us"]) for x in reps)
        p10, p90 = rows[len(rows) // 10], rows[(len(rows) * 9) // 10]
        print(f"{n >> 20},{case},{delay:.1f},{med('row_us'):.2f},{p10:.2f},{p90:.2f},{med('gpu0_us'):.2f},"
              f"{med('gpu1_us'):.2f},{med('call0_us'):.2f},{med('row_us') - med('gpu0_us'):.2f}")
