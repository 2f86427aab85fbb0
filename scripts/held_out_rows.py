#!/usr/bin/env python3
"""Error on held-out leases over the rows whose spread across the training leases is small.

A calibration's training leases say which rows machines agree on (the cross-lease spread in
their comparison); the held-out comparison then says how far the model is from machines it never
saw on exactly those rows. Selecting by the held-out leases' own spread would favour rows where a
few machines happen to agree.

  scripts/held_out_rows.py TRAIN_COMPARE.csv HELD_OUT_COMPARE.csv [--max-spread 5] [--min-size 64KiB]

Prints the number of rows, the median and worst |error| % on the held-out leases, and the worst
rows. Transfers only: setup rows (variant setup=...) are left out.
"""
import argparse
import csv
import statistics
import sys


def key(r):
    return (r["scenario"], r["strategy"], r["direction"], r["size_bytes"], r["variant"])


def size(text):
    units = {"KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30, "B": 1}
    for u in ("KiB", "MiB", "GiB", "B"):
        if text.endswith(u):
            return int(float(text[: -len(u)]) * units[u])
    return int(text)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("train")
    ap.add_argument("held_out")
    ap.add_argument("--max-spread", type=float, default=5.0, help="percent, over the training leases")
    ap.add_argument("--min-size", default="64KiB")
    a = ap.parse_args()
    try:
        train = {key(r): r for r in csv.DictReader(open(a.train))}
        held = list(csv.DictReader(open(a.held_out)))
        least = size(a.min_size)
    except (OSError, KeyError, ValueError) as e:
        print(f"held_out_rows.py: {e}", file=sys.stderr)
        return 2
    rows = []
    for r in held:
        t = train.get(key(r))
        if t is None or not t["spread_pct"] or r["variant"].startswith("setup="):
            continue
        if int(r["size_bytes"]) >= least and float(t["spread_pct"]) <= a.max_spread:
            rows.append(r)
    if not rows:
        print("no rows", file=sys.stderr)
        return 2
    err = [abs(float(r["error_pct"])) for r in rows]
    print(f"{len(rows)} rows >= {a.min_size} with spread <= {a.max_spread:g} % over the training leases: "
          f"median |error| {statistics.median(err):.2f} %, worst {max(err):.2f} % on the held-out leases")
    for r in sorted(rows, key=lambda r: -abs(float(r["error_pct"])))[:5]:
        print(f"  {r['scenario']} {r['direction']} {r['size_bytes']} {r['variant']}: {float(r['error_pct']):+.2f} %")
    return 0


if __name__ == "__main__":
    sys.exit(main())
