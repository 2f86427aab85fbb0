#!/usr/bin/env python3
"""duplexshape.csv of each lease: what each copy moved while both ran, and the host-to-device
copy's read requests per second then (one per row of W bytes).

Usage: summarize_shape.py LEASE_DIR... > summary-shape.csv

A lease folder's duplexshape.csv ran without a CPU load, its duplexshape-write8.csv (where there is
one) with eight CPU threads storing all along.

The D2H copy (256 MiB into one 16 MiB buffer) ends first; the H2D rows ran beside it all along
and alone after it, at their rate alone; what they moved while both ran is their bytes less that.
"""
import csv
import os
import sys


def main(folders):
    out = csv.writer(sys.stdout, lineterminator="\n")
    out.writerow(["lease", "load", "width_bytes", "h2d_alone_gbps", "d2h_alone_gbps", "d2h_beside_gbps", "h2d_beside_gbps",
                  "h2d_requests_per_us"])
    d2h_bytes = 256 << 20
    for folder in folders:
        lease = os.path.basename(os.path.normpath(folder))
        for load, name in (("none", "duplexshape.csv"), ("write8", "duplexshape-write8.csv")):
            path = os.path.join(folder, name)
            if not os.path.exists(path):
                continue
            with open(path, newline="") as f:
                rows = list(csv.DictReader(f))
            for r in rows:
                width, h2d = int(r["width_bytes"]), int(r["h2d_bytes"])
                alone_h, alone_d = float(r["h2d_alone_us"]), float(r["d2h_alone_us"])
                beside_h, beside_d = float(r["h2d_beside_us"]), float(r["d2h_beside_us"])
                h_rate = h2d / alone_h  # bytes per us
                moved = h2d - max(0.0, beside_h - beside_d) * h_rate
                h_beside = moved / beside_d
                requests = h_beside / width if width < h2d else float("nan")
                out.writerow([lease, load, width, f"{h_rate / 1e3:.2f}", f"{d2h_bytes / alone_d / 1e3:.2f}",
                              f"{d2h_bytes / beside_d / 1e3:.2f}", f"{h_beside / 1e3:.2f}",
                              "" if requests != requests else f"{requests:.1f}"])


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit("usage: summarize_shape.py LEASE_DIR... > summary-shape.csv")
    main(sys.argv[1:])
