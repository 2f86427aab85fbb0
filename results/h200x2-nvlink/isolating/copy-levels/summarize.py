#!/usr/bin/env python3
"""copy-levels: per lease folder (or every lease folder under the arguments), the median time of
each pinned copy case, by size, direction and repetition count, over the six instances of each
and both orders; prints one line per (size, direction, reps): the instances' medians.
   python3 summarize.py LEASE_DIR...   (a folder holding shuffled/ and ordered/, or above them)"""
import csv
import os
import statistics
import sys


def lease_dirs(paths):
    for p in paths:
        if os.path.isdir(os.path.join(p, "shuffled")):
            yield p
        else:
            for d in sorted(os.listdir(p)):
                if os.path.isdir(os.path.join(p, d, "shuffled")):
                    yield os.path.join(p, d)


def main():
    for lease in lease_dirs(sys.argv[1:] or ["."]):
        print(f"# {os.path.basename(lease)}")
        cells = {}
        for sub in ("shuffled", "ordered"):
            path = os.path.join(lease, sub, "measured.csv")
            if not os.path.exists(path):
                continue
            for r in csv.DictReader(open(path)):
                if r["status"] != "ok" or r["variant"]:
                    continue
                reps = r["scenario"].split("-r")[1]
                key = (int(r["size_bytes"]), r["direction"], int(reps))
                cells.setdefault(key, []).append((sub, float(r["time_us"]), float(r["p10_us"]), float(r["p90_us"])))
        print("size,direction,reps,instances,median_us,min_us,max_us,medians (shuffled then ordered)")
        for key in sorted(cells):
            v = [m for _, m, _, _ in cells[key]]
            print(f"{key[0]},{key[1]},{key[2]},{len(v)},{statistics.median(v):.3f},{min(v):.3f},{max(v):.3f},"
                  + " ".join(f"{m:.2f}" for m in v))
        for name in ("callstate-cpu2.csv", "callstate-free.csv"):
            path = os.path.join(lease, name)
            if os.path.exists(path):
                callstate(path)


FAST_COPY_US = 9.3  # between the two levels of a 64 KiB copy on the 2-GPU host (9.0 and 9.9 us)


def callstate(path):
    rows = list(csv.DictReader(open(path)))
    fast = [float(r["copy_h2d_64KiB_us"]) < FAST_COPY_US for r in rows]
    print(f"{os.path.basename(path)}: {len(rows)} batches, {100 * sum(fast) / len(rows):.0f} % fast")
    print("quantity,fast_median,slow_median,slow_minus_fast")
    for k in ("spin_ns", "stream_query_ns", "copy_h2d_64KiB_us", "mallochost_us", "freehost_us"):
        a = statistics.median(float(r[k]) for r, f in zip(rows, fast) if f)
        b = statistics.median(float(r[k]) for r, f in zip(rows, fast) if not f)
        print(f"{k},{a:.3f},{b:.3f},{b - a:.3f}")


if __name__ == "__main__":
    main()
