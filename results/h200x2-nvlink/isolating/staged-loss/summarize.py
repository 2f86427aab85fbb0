#!/usr/bin/env python3
"""Summarise the staged-loss leases: per lease, what holds a probe's stream back and for how long.

  summarize.py LEASE_DIR... > summary.txt

Medians over each cell's repetitions. "start" is when the probe's stream began on its GPU (its
start event), counted from the probe's call; "latency" the probe's end, from its call. A source
hold (the probe on the GPU a staged copy leaves) is given as when the probe's stream starts,
counted from the reference event's call (D + start); a destination hold (the probe on the GPU it
enters) as the start's excess over the same probe with nothing before it.
"""
import collections
import csv
import gzip
import statistics
import sys
from pathlib import Path


def found(path):
    """The lease's CSV, or its gzipped copy (the large ones are kept gzipped); None if neither."""
    gz = path.with_name(path.name + ".gz")
    return path if path.exists() else gz if gz.exists() else None


def cells(path):
    out = collections.defaultdict(list)
    path = found(path)
    with (gzip.open(path, "rt", newline="") if path.suffix == ".gz" else open(path, newline="")) as f:
        for r in csv.DictReader(f):
            out[(r["first"], r["probe"], float(r["delay_us"]))].append(r)
    return out


def med(rows, key):
    return statistics.median(float(r[key]) for r in rows)


def lease(d):
    d = Path(d)
    print(f"## {d.name}")
    base = cells(d / "stagedloss.csv")
    # Waits and a kernel on GPU 0 against nothing: the largest move of the 4 KiB probes' latency.
    for probe in ("d2h", "h2d"):
        moves = {}
        for first in ("kernel", "swait", "xwait", "xwait1"):
            ds = sorted({k[2] for k in base if k[0] == first and k[1] == probe})
            if not ds:
                continue
            diffs = [med(base[(first, probe, x)], "latency_us") - med(base[("none", probe, x)], "latency_us") for x in ds]
            moves[first] = (min(diffs), max(diffs))
        print(f"{probe} probe, latency against nothing first, over D 0-120 us: "
              + ", ".join(f"{k} {lo:+.2f}..{hi:+.2f} us" for k, (lo, hi) in moves.items()))
    for probe in ("d2h", "h2d", "staged01"):
        ds = sorted({k[2] for k in base if k[0] == "staged10" and k[1] == probe})
        if ds:
            print(f"{probe} probe after staged10, latency (against nothing) by D: "
                  + " ".join(f"{x:g}:{med(base[('staged10', probe, x)], 'latency_us'):.1f}"
                             f"({med(base[('none', probe, x)], 'latency_us'):.1f})" for x in ds))
    fine = d / "stagedloss-fine.csv"
    if found(fine):
        c = cells(fine)
        ds = sorted({k[2] for k in c})
        normal = statistics.median(float(r["start_us"]) for k, v in c.items() if k[0] == "none" and k[1] != "query" for r in v)
        if "record_call_us" in next(iter(c.values()))[0]:
            rec = statistics.median(float(r["record_call_us"]) for v in c.values() for r in v)
            rec_hi = max(med(v, "record_call_us") for v in c.values())
            print(f"start event's record call: median {rec:.2f} us, highest cell median {rec_hi:.2f}")
        print(f"probe stream's start with nothing first: {normal:.2f} us after the call")
        for first, probe, role in (("staged01", "d2h", "source"), ("staged10", "d2h1", "source"),
                                   ("staged10", "d2h", "destination"), ("staged01", "d2h1", "destination"),
                                   ("staged01", "query", "source"), ("staged10", "query", "destination")):
            if (first, probe, 0.0) not in c:
                continue
            s = {x: med(c[(first, probe, x)], "start_us") for x in ds if (first, probe, x) in c}
            if role == "source":
                held = [x + s[x] for x in ds if x <= 12]
                print(f"{probe} after {first} (source GPU): stream starts {min(held):.1f}-{max(held):.1f} us after the reference "
                      f"for D 0-12 (start at D=0 {s[0]:.1f} us); from D=16 on {statistics.median(s[x] for x in ds if x >= 16):.2f}")
            else:
                over = {x: s[x] - normal for x in ds}
                # The run of D around 25 us over which the start is held by more than 0.5 us.
                lo = hi = 25.0
                while any(x < lo and over[x] > 0.5 for x in ds) and over[max(x for x in ds if x < lo)] > 0.5:
                    lo = max(x for x in ds if x < lo)
                while any(x > hi for x in ds) and over[min(x for x in ds if x > hi)] > 0.5:
                    hi = min(x for x in ds if x > hi)
                held = [lo, hi]
                plateau = [over[x] for x in ds if 20 <= x <= 30]
                ends = [x + s[x] for x in ds if 32 <= x <= 40]
                print(f"{probe} after {first} (destination GPU): held by more than 0.5 us for D {held[0]:g}-{held[1]:g} us; "
                      f"D 20-30 held {min(plateau):.1f}-{max(plateau):.1f} us; D 32-40 starts {min(ends):.1f}-{max(ends):.1f} us "
                      f"after the reference")
    fs = d / "stagedloss-fine-staged.csv"
    if found(fs):
        c = cells(fs)
        ds = sorted({k[2] for k in c})
        alone = statistics.median(float(r["latency_us"]) for k, v in c.items() if k[0] == "none" for r in v)
        loss = {x: med(c[("staged10", "staged01", x)], "latency_us") - alone for x in ds}
        print(f"staged01 after staged10 (1 MiB each): alone {alone:.1f} us; loss D 0-20 {min(loss[x] for x in ds if x <= 20):.1f}-"
              f"{max(loss[x] for x in ds if x <= 20):.1f} us, D 21-30 {min(loss[x] for x in ds if 21 <= x <= 30):.1f}-"
              f"{max(loss[x] for x in ds if 21 <= x <= 30):.1f}, D 46-120 {min(loss[x] for x in ds if x >= 46):.1f}-"
              f"{max(loss[x] for x in ds if x >= 46):.1f}")
    print()


def main():
    if len(sys.argv) < 2:
        sys.exit("usage: summarize.py LEASE_DIR... > summary.txt")
    for d in sys.argv[1:]:
        lease(d)


if __name__ == "__main__":
    main()
