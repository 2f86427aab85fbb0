#!/usr/bin/env python3
"""Summarise copy-release leases: per mode, direction and size, each lease's medians (us) of the
call, the data landing (out of the GPU), the flag and the blocking copy, and the medians over the
leases of flag - data, blocking - flag and the two directions' difference.
Usage: summarize.py LEASE_DIR...  (each holding synced.csv and queued.csv)"""
import csv
import statistics
import sys
from pathlib import Path


def main(dirs):
    cells = {}  # (mode, direction, bytes) -> list of rows, one per lease
    for d in dirs:
        for mode in ("synced", "queued"):
            path = Path(d) / f"{mode}.csv"
            if not path.exists():
                continue
            for r in csv.DictReader(path.open()):
                cells.setdefault((r["mode"], r["direction"], int(r["bytes"])), []).append(
                    {k: float(r[k]) for k in ("call_us", "data_us", "flag_us", "blocking_us")})
    print(f"{len(dirs)} lease(s): " + ", ".join(Path(d).name for d in dirs))
    print("median over the leases of each lease's median (us), and their range")
    print(f"{'mode':7} {'dir':4} {'bytes':>8} | {'call':>19} {'data':>19} {'flag':>19} {'blocking':>19} | "
          f"{'flag-data':>9} {'blk-flag':>8}")
    med = statistics.median
    for (mode, direction, n), rows in sorted(cells.items(), key=lambda kv: (kv[0][0], kv[0][1], kv[0][2])):
        def rng(key):
            v = [r[key] for r in rows]
            return f"{med(v):5.2f} ({min(v):5.2f}-{max(v):5.2f})"
        fd = med(r["flag_us"] - r["data_us"] for r in rows) if direction == "d2h" else float("nan")
        bf = med(r["blocking_us"] - r["flag_us"] for r in rows)
        data = rng("data_us") if direction == "d2h" else f"{'':19}"
        print(f"{mode:7} {direction:4} {n:8d} | {rng('call_us')} {data} {rng('flag_us')} {rng('blocking_us')} | "
              f"{fd:9.2f} {bf:8.2f}")
    print("into the GPU less out of it, medians over the leases of each lease's difference (us): flag, blocking")
    for mode in ("synced", "queued"):
        for n in sorted({k[2] for k in cells if k[0] == mode}):
            a, b = cells.get((mode, "h2d", n)), cells.get((mode, "d2h", n))
            if not a or not b:
                continue
            df = med(x["flag_us"] - y["flag_us"] for x, y in zip(a, b))
            db = med(x["blocking_us"] - y["blocking_us"] for x, y in zip(a, b))
            print(f"  {mode:7} {n:8d}: flag {df:+6.2f}  blocking {db:+6.2f}")


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    main(sys.argv[1:])
