#!/usr/bin/env python3
"""Each lease's landing.csv as the differences the README reads: per way and size, the call, the
data seen less the call, blocking less seen, event less blocking (medians, us); and the echo."""
import csv
import glob
import os
import sys

here = os.path.dirname(os.path.abspath(__file__))
w = csv.writer(sys.stdout)
w.writerow(["host", "lease", "way", "bytes", "call_us", "seen_minus_call_us", "blocking_us",
            "blocking_minus_seen_us", "event_minus_blocking_us", "echo_us"])
for path in sorted(glob.glob(os.path.join(here, "*", "*", "landing.csv"))):
    host, lease = path.split(os.sep)[-3:-1]
    v = {}
    with open(path) as f:
        for r in csv.DictReader(f):
            v[(r["way"], r["what"], int(r["bytes"]))] = float(r["median_us"])
    echo = v[("-", "echo", 8)]
    for way in ("h2d", "d2h"):
        for b in sorted({k[2] for k in v if k[0] == way}):
            call, seen = v[(way, "call", b)], v[(way, "seen", b)]
            blocking, event = v[(way, "blocking", b)], v[(way, "event", b)]
            w.writerow([host, lease, way, b, f"{call:.2f}", f"{seen - call:.2f}", f"{blocking:.2f}",
                        f"{blocking - seen:.2f}", f"{event - blocking:.2f}", f"{echo:.2f}"])
