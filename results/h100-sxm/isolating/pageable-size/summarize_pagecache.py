#!/usr/bin/env python3
"""Per lease of pagecache.cu (and of the plan's pageable copies in flushed/): where the host-to-
device pageable copy steps down, its rate past the step, and the CPU's own copy rates.

Usage: summarize_pagecache.py [LEASE_DIR ...]   (default: this folder's pagecache/*, flushed/*
and ../../../h200x2-nvlink/isolating/pageable-size/*)

For each lease, GB/s, medians over sizes:
  - below: pageable H2D at 8-24 MiB; past: pageable H2D at 64-128 MiB; step: the largest size
    whose pageable H2D is still above the mean of those two (the last size the source stays in the
    copying thread's cache);
  - d2h: pageable D2H at every size;
  - cpu_warm (8-24 MiB) and cpu_flushed (every size): one thread staging the source into a 4 MiB
    pinned ring, left in the caches or flushed before each repetition (pagecache.cu only).
Standard library only.
"""
import csv
import glob
import os
import statistics
import sys

MIB = 1 << 20
HERE = os.path.dirname(os.path.abspath(__file__))


def rates(path):
    """{case: {size: gbps}} from a pagecache.csv or a dmaprobe measured.csv."""
    out = {}
    with open(path, newline="") as f:
        for r in csv.DictReader(f):
            if "case" in r:
                out.setdefault(r["case"], {})[int(r["size_bytes"])] = float(r["gbps"])
            elif r.get("strategy") == "pageable" and r.get("status") == "ok" and not r.get("variant"):
                out.setdefault("pageable_" + r["direction"], {})[int(r["size_bytes"])] = float(r["gbps"])
    return out


def med(d, lo, hi):
    v = [g for s, g in d.items() if lo * MIB <= s <= hi * MIB]
    return statistics.median(v) if v else float("nan")


def summary(lease):
    path = os.path.join(lease, "pagecache.csv")
    if not os.path.isfile(path):
        path = os.path.join(lease, "measured.csv")
    c = rates(path)
    h2d = c["pageable_h2d"]
    below, past = med(h2d, 8, 24), med(h2d, 64, 128)
    mid = (below + past) / 2
    step = max(s for s, g in h2d.items() if g > mid) // MIB
    row = {"lease": os.path.basename(lease), "below": below, "past": past, "step_mib": step,
           "d2h": med(c.get("pageable_d2h", {}), 8, 128)}
    if "cpu_warm" in c:
        row["cpu_warm"] = med(c["cpu_warm"], 8, 24)
        row["cpu_flushed"] = med(c["cpu_flushed"], 8, 128)
    return row


def main():
    leases = sys.argv[1:] or sorted(glob.glob(os.path.join(HERE, "pagecache", "*")) + glob.glob(os.path.join(HERE, "flushed", "*"))
                                    + glob.glob(os.path.join(HERE, "..", "..", "..", "h200x2-nvlink", "isolating",
                                                             "pageable-size", "*", "")))
    print("lease,h2d_8_24MiB_gbps,h2d_64_128MiB_gbps,last_cached_MiB,d2h_gbps,cpu_warm_8_24MiB_gbps,cpu_flushed_gbps")
    for lease in leases:
        r = summary(lease.rstrip("/"))
        print(f"{r['lease']},{r['below']:.2f},{r['past']:.2f},{r['step_mib']},{r['d2h']:.2f},"
              f"{r.get('cpu_warm', float('nan')):.2f},{r.get('cpu_flushed', float('nan')):.2f}")


if __name__ == "__main__":
    main()
