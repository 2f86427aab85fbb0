#!/usr/bin/env python3
"""Per cell of landing.cu (order, X into the GPU, Y out of it), medians over the repetitions of one
or more leases: when the CPU's calls returned, when the copy out of the GPU's first and last
sixteenth landed in host memory, when its stream was seen done, the copy's event interval, the
rate its data landed at between the 4th and the 12th sixteenth, and what each loses against alone
(X = 0). Times in us from just before the first call.

    summarize.py LEASE_DIR [LEASE_DIR ...] > summary.txt
"""
import csv
import gzip
import statistics
import sys
from collections import defaultdict
from pathlib import Path


def median(v):
    return statistics.median(v) if v else float("nan")


def main(dirs):
    ends = defaultdict(lambda: defaultdict(list))
    chunks = defaultdict(dict)
    for d in dirs:
        d = Path(d)
        with open(d / "landing-ends.csv") as f:
            for r in csv.DictReader(f):
                key = (r["order"], int(r["x_bytes"]), int(r["y_bytes"]))
                for col in ("calls_us", "first_us", "last_us", "seen_us", "out_event_us", "in_event_us",
                            "in_start_to_out_start_us", "in_start_to_out_end_us"):
                    ends[key][col].append(float(r[col]))
        # landing.csv is kept gzipped (1.1 MB a lease raw): the working tree travels to GPU machines.
        with gzip.open(d / "landing.csv.gz", "rt", newline="") as f:
            for r in csv.DictReader(f):
                key = (r["order"], int(r["x_bytes"]), int(r["y_bytes"]))
                chunks[(key, d.name, r["rep"])][int(r["chunk"])] = (int(r["landed_bytes"]), float(r["t_us"]))
    rates = defaultdict(list)
    for (key, _, _), c in chunks.items():
        (b4, t4), (b12, t12) = c[3], c[11]
        if t12 > t4:
            rates[key].append((b12 - b4) / (t12 - t4) / 1e3)  # bytes/us = MB/s; /1e3 = GB/s
    print(f"{len(dirs)} lease(s): {', '.join(Path(d).name for d in dirs)}")
    print("order      X(B)      Y(B) | calls  first   last   seen seen-last  event | GB/s 4-12 | "
          "last-alone seen-alone event-alone | in event in>out end")
    for y in sorted({k[2] for k in ends}):
        alone = ends[("in_first", 0, y)]
        a_last, a_seen, a_ev = median(alone["last_us"]), median(alone["seen_us"]), median(alone["out_event_us"])
        for key in sorted(k for k in ends if k[2] == y):
            e = ends[key]
            last, seen, ev = median(e["last_us"]), median(e["seen_us"]), median(e["out_event_us"])
            print(f"{key[0]:9s} {key[1]:9d} {key[2]:8d} | {median(e['calls_us']):5.2f} {median(e['first_us']):6.2f} "
                  f"{last:6.2f} {seen:6.2f} {seen - last:8.2f} {ev:6.2f} | {median(rates[key]):8.1f} | "
                  f"{last - a_last:+9.2f} {seen - a_seen:+10.2f} {ev - a_ev:+11.2f} | "
                  f"{median(e['in_event_us']):8.2f} {median(e['in_start_to_out_end_us']):8.2f}")


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    main(sys.argv[1:])
