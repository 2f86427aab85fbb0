#!/usr/bin/env python3
"""landing.cu's mode h2d beside grid, per lease: from each copy's last data landing to its stream
seen done by the CPU. A copy into the GPU: the CPU sees the watching kernel's flag (flag_us) a GPU
store after the kernel saw the last marker, so its last data landed about flag_us - rtt_us / 2
(rtt_us: the CPU's store seen by the kernel and answered); a copy out of the GPU: the CPU sees its
last data itself (grid, alone: last_us). Medians over the repetitions, us.

    h2d_summary.py LEASE_DIR [LEASE_DIR ...] > h2d-summary.txt
"""
import csv
import statistics
import sys
from collections import defaultdict
from pathlib import Path


def main(dirs):
    for d in dirs:
        d = Path(d)
        h = defaultdict(lambda: defaultdict(list))
        for r in csv.DictReader(open(d / "h2d.csv")):
            x = int(r["x_bytes"])
            for c in ("rtt_us", "calls_us", "flag_us", "seen_us", "event_us"):
                h[x][c].append(float(r[c]))
            h[x]["tail"].append(float(r["seen_us"]) - float(r["flag_us"]) + float(r["rtt_us"]) / 2)
        o = defaultdict(list)
        for r in csv.DictReader(open(d / "landing-ends.csv")):
            if r["order"] == "in_first" and int(r["x_bytes"]) == 0:
                o[int(r["y_bytes"])].append(float(r["seen_us"]) - float(r["last_us"]))
        print(f"== {d.name}")
        print("      bytes | into the GPU: rtt  landed  seen  tail (seen - landed) event | out of the GPU: tail (seen - last)")
        for x in sorted(h):
            m = lambda c: statistics.median(h[x][c])
            landed = m("flag_us") - m("rtt_us") / 2
            tail_out = statistics.median(o[x]) if o.get(x) else float("nan")
            print(f"  {x:9d} | {m('rtt_us'):5.2f} {landed:7.2f} {m('seen_us'):6.2f} {m('tail'):6.2f} {m('event_us'):13.2f} | {tail_out:6.2f}")


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    main(sys.argv[1:])
