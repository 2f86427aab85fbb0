#!/usr/bin/env python3
"""How far the model is from a machine's cross-lease medians, by the measures the accuracy goals
use (docs/results.md): from the compare.csv that `dmasim compare` writes.

Usage: scripts/accuracy.py COMPARE_CSV [COMPARE_CSV ...] [--spread PCT] [--spread-from TRAIN_COMPARE_CSV]

For each file:
  - transfers >= 64 KiB whose spread across leases is at most --spread (default 5 %): how many,
    median and worst |error|, and the worst row. With --spread-from, the spread is the one across
    that comparison's leases (a calibration's training machines): on machines held out of the fit,
    rows picked by their own spread would favour those where a few of them agree by chance;
  - zero-copy rows (every grid, width, stride and direction): median and worst |error|;
  - pointer chases (`zc-chase-*`): each row's error;
  - duplex: for each size, the pair's aggregate over one way (2 x one-way time / pair time), the
    model's against the measured, per direction, with the measured ratio's 95 % interval over its
    leases (a bootstrap of the leases, 2000 draws, fixed seed) where the compare.csv's meta.json
    names the leases' folder: at sizes where the rows move 15-75 % between machines, the ratio
    of the medians is known no better than that interval;
  - duplex with blocking copies beside the pair (duplex.one_way_beside: variants blocking_h2d,
    blocking_d2h, every repetition right after its pair): the same aggregate from the copies of
    the same moments, 2 x blocking copy / pair of that case, with its interval likewise;
  - duplex bursts (duplex.burst: variants burst_h2d, burst_d2h, each way's burst alone every
    repetition): 2 x one way's burst / both ways' burst, with its interval likewise;
  - peer copies: each row's error (peer access on: the NVLink path; off: staged by the runtime),
    with the measured median's 95 % interval over its leases (the same bootstrap) where the
    leases' folder is named: a row whose leases fall in two groups is known no better than that.
Beside each interval: how far the medians of two disjoint halves of the leases are apart (the
median and 90th percentile over 2000 random splits): how well one set of fresh machines of a kind
reproduces another's median. A goal tighter than that gap holds the model to which machines were
drawn, not to the hardware.
Errors are the model's over the measured time, in %. Standard library only.
"""
import argparse
import csv
import json
import os
import random
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


def summary(rows, spread_of=None):
    """`spread_of`: the spread to print beside the worst row (default: its own column)."""
    errs = [(abs(number(r["error_pct"])), r) for r in rows if number(r["error_pct"]) is not None]
    if not errs:
        return "none"
    worst = max(errs, key=lambda e: e[0])
    spread = spread_of(worst[1]) if spread_of else worst[1]["spread_pct"]
    return (f"{len(errs)} rows, median {statistics.median(e for e, _ in errs):.2f} %, worst {worst[0]:.2f} % "
            f"({label(worst[1])}, spread {spread} %)")


def is_transfer(r):
    return r["size_bytes"] and "setup" not in r["variant"] and r["strategy"] != "setup"


def lease_times(compare_path):
    """Each lease's time per row key, from the measured folder that the compare.csv's meta.json
    names (only its lease_names); {} where there is none to read."""
    meta_path = os.path.join(os.path.dirname(compare_path) or ".", "meta.json")
    try:
        with open(meta_path) as f:
            meta = json.load(f)
    except (OSError, ValueError):
        return {}
    root = meta.get("measured")
    names = meta.get("lease_names") or []
    if not isinstance(root, str) or not os.path.isdir(root):
        return {}
    leases = {}
    for name in names:
        path = os.path.join(root, name, "measured.csv")
        try:
            with open(path, newline="") as f:
                rows = list(csv.DictReader(f))
        except OSError:
            continue
        times = {}
        for r in rows:
            if r.get("status", "ok") != "ok" or number(r.get("time_us")) is None:
                continue
            times[(r["scenario"], r["direction"], r["size_bytes"], r.get("variant", ""))] = float(r["time_us"])
        leases[name] = times
    return leases


def bootstrap_interval(items, statistic, draws=2000, seed=1):
    """The 95 % interval of `statistic` over a bootstrap of `items` (the leases), and how many;
    None with fewer than five."""
    if len(items) < 5:
        return None
    rng = random.Random(seed)
    values = sorted(statistic([items[rng.randrange(len(items))] for _ in items]) for _ in range(draws))
    return values[int(0.025 * draws)], values[int(0.975 * draws) - 1], len(items)


def split_halves(items, statistic, draws=2000, seed=2):
    """How well the leases reproduce `statistic` among themselves: over random splits of `items`
    into two disjoint halves (an odd one out left out), the median and 90th percentile of
    |statistic(one half) / statistic(other half) - 1|, in %; None with fewer than six. A model
    cannot be held closer to the median of one set of machines than another set's median is; a
    median over all the leases, twice as many as a half, moves about 1/sqrt(2) as much."""
    if len(items) < 6:
        return None
    rng = random.Random(seed)
    half = len(items) // 2
    gaps = []
    for _ in range(draws):
        pick = items[:]
        rng.shuffle(pick)
        a, b = statistic(pick[:half]), statistic(pick[half:2 * half])
        gaps.append(100 * abs(a / b - 1))
    gaps.sort()
    return gaps[draws // 2], gaps[int(0.9 * draws)]


def aggregate(pick):
    """2 x median(one way) / median(pair) over (one way, pair) times."""
    return 2 * statistics.median(o for o, _ in pick) / statistics.median(p for _, p in pick)


def ratio_interval(leases, pair_key, one_key):
    """The 95 % interval of 2 x median(one way) / median(pair) over a bootstrap of the leases that
    measured both rows (lease_times' keys), and how far two halves of them differ (split_halves)."""
    pairs = []
    for times in leases.values():
        pair, one = times.get(pair_key), times.get(one_key)
        if pair and one:
            pairs.append((one, pair))
    ci = bootstrap_interval(pairs, aggregate)
    return ci + (split_halves(pairs, aggregate) or ()) if ci else None


def halves_text(ci):
    """The split_halves part of an interval from ratio_interval or median_interval, if it has one."""
    return f"; two halves of the leases {ci[3]:.1f} % apart (90 %: {ci[4]:.1f} %)" if len(ci) == 5 else ""


def ratio_text(m, p, ci):
    within = ""
    if ci:
        lo, hi, n = ci[:3]
        inside = "inside" if lo <= p <= hi else "outside"
        within = (f", 95 % {lo:.3f}-{hi:.3f} over {n} leases ({100 * (lo / m - 1):+.1f}/{100 * (hi / m - 1):+.1f} %), "
                  f"model {inside}" + halves_text(ci))
    return f"measured {m:.3f} model {p:.3f} ({100 * (p / m - 1):+.2f} %{within})"


def median_interval(leases, row_key):
    """The 95 % interval of the median over a bootstrap of the leases that measured the row, and
    how far two halves of them differ (split_halves)."""
    times = [t[row_key] for t in leases.values() if row_key in t]
    ci = bootstrap_interval(times, statistics.median)
    return ci + (split_halves(times, statistics.median) or ()) if ci else None


def key(r):
    return (r["scenario"], r["strategy"], r["direction"], r["size_bytes"], r["variant"])


def report(path, spread, spread_from=None):
    rows = read(path)
    print(path)
    big = [r for r in rows if is_transfer(r) and int(r["size_bytes"]) >= 64 * 1024]
    # Each row's spread: its own comparison's, or the training comparison's (rows it lacks are left out).
    source = {key(r): r for r in read(spread_from)} if spread_from else {key(r): r for r in rows}
    spread_of = {k: number(r["spread_pct"]) for k, r in source.items()}
    steady = [r for r in big if spread_of.get(key(r)) is not None and spread_of[key(r)] <= spread]
    over = f" across {spread_from}'s leases" if spread_from else ""
    print(f"  transfers >= 64 KiB, spread <= {spread:g} %{over}: {summary(steady, lambda r: source[key(r)]['spread_pct'])}")
    print(f"  zero-copy: {summary([r for r in rows if r['strategy'] == 'zero_copy'])}")
    for r in rows:
        if r["scenario"].startswith("zc-chase"):
            print(f"  chase {label(r)}: {number(r['error_pct']):+.2f} % (spread {r['spread_pct']} %)")
    by = {(r["scenario"], r["strategy"], r["direction"], r["size_bytes"], r["variant"]): r for r in rows}
    leases = lease_times(path)
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
            ci = ratio_interval(leases, ("duplex", "both", str(size), ""), ("pinned", d, str(size), ""))
            parts.append(f"over {d} " + ratio_text(m, p, ci))
        if parts:
            print(f"  duplex {size >> 20 if size >= 1 << 20 else size} {'MiB' if size >= 1 << 20 else 'B'}: "
                  + "; ".join(parts) + f" (pair spread {pair['spread_pct']} %)")
    # Beside each pair (blocking_*) and of bursts (burst_*): the one-way times come from the same
    # case, every repetition, and the aggregate is 2 x that / the pair (or both ways' burst).
    for kind, prefix in (("beside", "blocking_"), ("burst", "burst_")):
        cases = sorted({(r["scenario"], int(r["size_bytes"])) for r in rows
                        if r["strategy"] == "duplex" and r["variant"] == prefix + "h2d"})
        for scenario, size in cases:
            pair = by.get((scenario, "duplex", "both", str(size), ""))
            parts = []
            for d in ("h2d", "d2h"):
                one = by.get((scenario, "duplex", "both", str(size), prefix + d))
                if not pair or not one:
                    continue
                m = 2 * float(one["measured_us"]) / float(pair["measured_us"])
                p = 2 * float(one["predicted_us"]) / float(pair["predicted_us"])
                ci = ratio_interval(leases, (scenario, "both", str(size), ""), (scenario, "both", str(size), prefix + d))
                parts.append(f"over {d} " + ratio_text(m, p, ci))
            if parts:
                print(f"  duplex {kind} ({scenario}) {size >> 20 if size >= 1 << 20 else size} "
                      f"{'MiB' if size >= 1 << 20 else 'B'}: " + "; ".join(parts) + f" (pair spread {pair['spread_pct']} %)")
    for r in rows:
        if r["strategy"] == "peer" and r["scenario"] == "peer":
            within = ""
            ci = median_interval(leases, (r["scenario"], r["direction"], r["size_bytes"], r["variant"]))
            if ci:
                lo, hi, n = ci[:3]
                m, p = float(r["measured_us"]), float(r["predicted_us"])
                inside = "inside" if lo <= p <= hi else "outside"
                within = (f", 95 % {lo:.2f}-{hi:.2f} us over {n} leases ({100 * (lo / m - 1):+.1f}/{100 * (hi / m - 1):+.1f} %), "
                          f"model {inside}" + halves_text(ci))
            print(f"  peer {label(r)}: {number(r['error_pct']):+.2f} % (spread {r['spread_pct']} %{within})")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("compare", nargs="+", help="compare.csv files (dmasim compare)")
    ap.add_argument("--spread", type=float, default=5.0, help="largest cross-lease spread, %%, of the steady rows")
    ap.add_argument("--spread-from", metavar="TRAIN_COMPARE_CSV",
                    help="take each row's spread from this compare.csv (the training leases') instead")
    a = ap.parse_args()
    if a.spread < 0:
        sys.exit("accuracy.py: --spread: must be 0 or more")
    for path in a.compare:
        report(path, a.spread, a.spread_from)


if __name__ == "__main__":
    main()
