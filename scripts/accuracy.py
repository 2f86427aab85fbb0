#!/usr/bin/env python3
"""How far the model is from a machine's cross-lease medians, by the measures the accuracy goals
use (docs/results.md): from the compare.csv that `dmasim compare` writes.

Usage: scripts/accuracy.py COMPARE_CSV [COMPARE_CSV ...] [--spread PCT]

For each file:
  - transfers >= 64 KiB whose spread across leases is at most --spread (default 5 %): how many,
    median and worst |error|, and the worst row;
  - zero-copy rows (every grid, width, stride and direction): median and worst |error|;
  - pointer chases (`zc-chase-*`): each row's error;
  - duplex: for each size, the pair's aggregate over one way (2 x one-way time / pair time), the
    model's against the measured, per direction;
  - peer copies: each row's error (peer access on: the NVLink path; off: staged by the runtime).
Errors are the model's over the measured time, in %. Standard library only.
"""
import argparse
import csv
import statistics
import sys


def read(path):
    try:
        with open(path, newline="") as f:
            rows = list(csv.DictReader(f))
    except OSError as e:
        sys.exit(f"accuracy.py: {path}: {e.strerror}")
    need = {"scenario", "strategy", "direction", "size_bytes", "variant", "measured_us", "predicted_us",
            "error_pct", "spread_pct"}
    if rows and not need <= set(rows[0]):
        sys.exit(f"accuracy.py: {path}: not a compare.csv (missing {', '.join(sorted(need - set(rows[0])))})")
    return rows


def number(text):
    try:
        return float(text)
    except (TypeError, ValueError):
        return None


def label(r):
    v = f" {r['variant']}" if r["variant"] else ""
    return f"{r['scenario']} {r['direction']} {r['size_bytes']}{v}"


def summary(rows):
    errs = [(abs(number(r["error_pct"])), r) for r in rows if number(r["error_pct"]) is not None]
    if not errs:
        return "none"
    worst = max(errs, key=lambda e: e[0])
    return (f"{len(errs)} rows, median {statistics.median(e for e, _ in errs):.2f} %, worst {worst[0]:.2f} % "
            f"({label(worst[1])}, spread {worst[1]['spread_pct']} %)")


def is_transfer(r):
    return r["size_bytes"] and "setup" not in r["variant"] and r["strategy"] != "setup"


def report(path, spread):
    rows = read(path)
    print(path)
    big = [r for r in rows if is_transfer(r) and int(r["size_bytes"]) >= 64 * 1024]
    steady = [r for r in big if number(r["spread_pct"]) is not None and number(r["spread_pct"]) <= spread]
    print(f"  transfers >= 64 KiB, spread <= {spread:g} %: {summary(steady)}")
    print(f"  zero-copy: {summary([r for r in rows if r['strategy'] == 'zero_copy'])}")
    for r in rows:
        if r["scenario"].startswith("zc-chase"):
            print(f"  chase {label(r)}: {number(r['error_pct']):+.2f} % (spread {r['spread_pct']} %)")
    by = {(r["scenario"], r["strategy"], r["direction"], r["size_bytes"], r["variant"]): r for r in rows}
    sizes = sorted({int(r["size_bytes"]) for r in rows if r["scenario"] == "duplex" and r["variant"] == ""})
    for size in sizes:
        pair = by.get(("duplex", "duplex", "both", str(size), ""))
        parts = []
        for d in ("h2d", "d2h"):
            one = by.get(("pinned", "pinned", d, str(size), ""))
            if not pair or not one:
                continue
            m = 2 * float(one["measured_us"]) / float(pair["measured_us"])
            p = 2 * float(one["predicted_us"]) / float(pair["predicted_us"])
            parts.append(f"over {d} measured {m:.3f} model {p:.3f} ({100 * (p / m - 1):+.2f} %)")
        if parts:
            print(f"  duplex {size >> 20 if size >= 1 << 20 else size} {'MiB' if size >= 1 << 20 else 'B'}: "
                  + "; ".join(parts) + f" (pair spread {pair['spread_pct']} %)")
    for r in rows:
        if r["strategy"] == "peer" and r["scenario"] == "peer":
            print(f"  peer {label(r)}: {number(r['error_pct']):+.2f} % (spread {r['spread_pct']} %)")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("compare", nargs="+", help="compare.csv files (dmasim compare)")
    ap.add_argument("--spread", type=float, default=5.0, help="largest cross-lease spread, %%, of the steady rows")
    a = ap.parse_args()
    if a.spread < 0:
        sys.exit("accuracy.py: --spread: must be 0 or more")
    for path in a.compare:
        report(path, a.spread)


if __name__ == "__main__":
    main()
