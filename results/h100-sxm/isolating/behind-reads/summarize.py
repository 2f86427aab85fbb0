#!/usr/bin/env python3
"""Tables of sweep.csv (behind.cu sweep): the second copy's median time, by the first copy's size
(columns) and its own (rows), for each order of the two and each wait tau before the second
call; and behind.csv (behind.cu behind) as it is. Usage: summarize.py LEASE_DIR [LEASE_DIR ...].
Standard library only."""
import csv
import os
import sys


def table(rows, first, tau):
    xs = sorted({int(r["first_bytes"]) for r in rows})
    ys = sorted({int(r["second_bytes"]) for r in rows})
    other = "d2h" if first == "h2d" else "h2d"
    out = [f"  first {first} of X, then {other} of Y, tau {tau} us: the second copy's median, us (X across, Y down)"]
    out.append("  " + " " * 8 + "".join(f"{(str(x >> 10) + 'K'):>9s}" for x in xs))
    for y in ys:
        cells = {int(r["first_bytes"]): float(r["second_median_us"]) for r in rows
                 if r["first"] == first and r["tau_us"] == tau and int(r["second_bytes"]) == y}
        out.append(f"  {(str(y >> 10) + 'K'):>8s}" + "".join(f"{cells[x]:9.2f}" if x in cells else " " * 9 for x in xs))
    return "\n".join(out)


def main():
    if len(sys.argv) < 2:
        sys.exit("usage: summarize.py LEASE_DIR [LEASE_DIR ...]")
    for d in sys.argv[1:]:
        print(f"== {os.path.basename(os.path.normpath(d))}")
        try:
            with open(os.path.join(d, "behind.csv"), newline="") as f:
                for r in csv.DictReader(f):
                    print(f"  behind.csv: first h2d {int(r['first_h2d_bytes']) >> 10:6d} KiB, then {r['second']} of "
                          f"{int(r['second_bytes']) >> 10:4d} KiB: {float(r['second_median_us']):6.2f} us "
                          f"(p10 {float(r['second_p10_us']):6.2f}, p90 {float(r['second_p90_us']):6.2f}); first {float(r['first_median_us']):7.2f} us")
        except OSError as e:
            sys.exit(f"summarize.py: {d}: {e.strerror}")
        path = os.path.join(d, "sweep.csv")
        if not os.path.exists(path):
            continue
        with open(path, newline="") as f:
            rows = list(csv.DictReader(f))
        for first in ("h2d", "d2h"):
            for tau in ("0", "10", "30"):
                print(table(rows, first, tau))


if __name__ == "__main__":
    main()
