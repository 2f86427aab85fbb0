#!/usr/bin/env python3
"""releasecopy.cu per lease: for each delay D of event E after the copy's start and each copy size,
the medians over the repetitions of one hop (F - E), of how long the copy still ran after E
(c1 - E) and of the copy (c1 - c0); and the hop less the lease's hop at that D without a copy.

Usage: releasecopy_summary.py LEASE_DIR [LEASE_DIR ...] > releasecopy-summary.txt
(the leases with a releasecopy.csv; one without a delay_us column ran D = 1 us). Standard library only.
"""
import csv
import os
import statistics
import sys


def main(dirs):
    if not dirs:
        sys.exit(__doc__)
    print("lease,delay_us,bytes,reps,hop_us,copy_after_e_us,copy_us,hop_over_no_copy_us")
    for d in dirs:
        lease = os.path.basename(os.path.normpath(d))
        by = {}
        with open(os.path.join(d, "releasecopy.csv"), newline="") as f:
            for r in csv.DictReader(f):
                by.setdefault((float(r.get("delay_us") or 1.0), int(r["bytes"])), []).append(r)
        med = {k: {c: statistics.median(float(r[c]) for r in rs) for c in ("hop_us", "copy_after_e_us", "copy_us")}
               for k, rs in by.items()}
        for (delay, size), m in sorted(med.items()):
            idle = med.get((delay, 0), {}).get("hop_us")
            over = f"{m['hop_us'] - idle:.2f}" if idle is not None else ""
            print(f"{lease},{delay:g},{size},{len(by[(delay, size)])},{m['hop_us']:.2f},{m['copy_after_e_us']:.2f},"
                  f"{m['copy_us']:.2f},{over}")


if __name__ == "__main__":
    main(sys.argv[1:])
