#!/usr/bin/env python3
"""How much the host's costs differ between machines of one kind, from the per-lease medians that
`dmasim spread` writes (spread.csv), and how well the model's band of machines covers them.

Usage:
  scripts/host_spread.py fit SPREAD_CSV [--leases ID,ID,...]
  scripts/host_spread.py coverage SPREAD_CSV RESULTS_CSV [--leases ID,ID,...]
  scripts/host_spread.py tails SPREAD_CSV [--leases ID,ID,...]
  scripts/host_spread.py levels RESULTS_CSV MEASURED_DIR [MEASURED_DIR ...]

fit: for each lease and row, the log of the lease's median over the cross-lease median; the
robust sigma of a kind of row is (p90 - p10) / 2.563 of those logs (2.563 = the p10-p90 width
of N(0, 1)). The model's host_spread takes
  calls      <- "pinned <64KiB"    (small pinned copies: a call and a wait around a few us of GPU)
  cpu_copies <- "pageable >=64KiB" (the CPU's own copies)
  setup      <- the median of the four "setup=*" kinds (pinning, unpinning, pinned allocation)
It also prints how each lease's median deviation of those kinds correlates between the kinds
(the reason one host speed a machine drives them all).

coverage: for every row of RESULTS_CSV (`dmasim run`, its p10/p90 the band of machines) that the
leases measured, the fraction of the leases' medians inside the band, per kind and in all, and
the band's width against the measured spread ((p90 - p10) / median of the lease medians).
tails: each lease's p99 of every periodic stream ("periodic p99" rows), and for each stream the
split of the leases at the widest gap between consecutive log p99s: whether machines fall into a
quiet and a noisy kind, and whether the same leases are noisy in every stream.

levels: the small blocking pinned copies (the `pinned` and `latency` scenarios, up to 64 KiB), every
lease's median of each from the measured folders' leases (measured.csv), pooled over both scenarios
per direction and size: split at the widest gap between the sorted values of their middle 80 %
(two levels of the host's driver calls, docs/model.md), each level's share and median, the pooled
median and each scenario's median over its leases (what a comparison takes), and the model's row
from RESULTS_CSV (`dmasim run`) and which level it sits at.

--leases keeps only those leases (prefix of the folder name or its boot id), for a fit on some
and a check on others. Standard library only.
"""
import argparse
import csv
import glob
import math
import os
import statistics
import sys

Z90 = 1.2815515655446004  # N(0, 1)'s 90th percentile
KINDS = {"calls": ["pinned <64KiB"], "cpu_copies": ["pageable >=64KiB"],
         "setup": ["setup=mallochost", "setup=freehost", "setup=register", "setup=unregister"]}
KEY = ("scenario", "strategy", "direction", "size_bytes", "variant")


def quantile(values, q):
    """Linear interpolation between closest ranks (numpy's default)."""
    v = sorted(values)
    pos = q * (len(v) - 1)
    i = int(pos)
    return v[i] if i + 1 >= len(v) else v[i] + (v[i + 1] - v[i]) * (pos - i)


def read_csv(path, need):
    try:
        with open(path, newline="") as f:
            rows = list(csv.DictReader(f))
    except OSError as e:
        sys.exit(f"host_spread.py: {path}: {e.strerror}")
    if not rows or not need <= set(rows[0]):
        sys.exit(f"host_spread.py: {path}: not the expected CSV (needs {', '.join(sorted(need))})")
    return rows


def lease_columns(rows, keep):
    cols = [c for c in rows[0] if c[:4].isdigit() and c.count("-") >= 3]
    if keep:
        cols = [c for c in cols if any(c.startswith(k) or c.endswith(k) for k in keep)]
    if not cols:
        sys.exit("host_spread.py: no lease columns (or none that --leases names)")
    return cols


def number(text):
    try:
        v = float(text)
    except (TypeError, ValueError):
        return None
    return v if v > 0 and math.isfinite(v) else None


def deviations(rows, leases):
    """kind -> lease -> [log(lease median / cross-lease median)], rows of at least two leases."""
    out = {}
    for r in rows:
        if r.get("status", "ok") != "ok":
            continue
        vals = {l: number(r[l]) for l in leases}
        vals = {l: v for l, v in vals.items() if v is not None}
        if len(vals) < 2:
            continue
        med = statistics.median(vals.values())
        for l, v in vals.items():
            out.setdefault(r["category"], {}).setdefault(l, []).append(math.log(v / med))
    return out


def sigma(devs, kind):
    logs = [x for per in devs.get(kind, {}).values() for x in per]
    if len(logs) < 4:
        return None
    return (quantile(logs, 0.9) - quantile(logs, 0.1)) / (2 * Z90)


def correlation(a, b):
    ma, mb = statistics.mean(a), statistics.mean(b)
    num = sum((x - ma) * (y - mb) for x, y in zip(a, b))
    den = math.sqrt(sum((x - ma) ** 2 for x in a) * sum((y - mb) ** 2 for y in b))
    return num / den if den > 0 else float("nan")


def cmd_fit(args):
    rows = read_csv(args.spread, {"category", "status", *KEY})
    leases = lease_columns(rows, args.leases)
    devs = deviations(rows, leases)
    print(f"{args.spread}: {len(leases)} leases")
    for group, kinds in KINDS.items():
        per = [(k, sigma(devs, k)) for k in kinds]
        per = [(k, s) for k, s in per if s is not None]
        if not per:
            print(f"  host_spread.{group}: no rows of {', '.join(kinds)}")
            continue
        value = statistics.median(s for _, s in per)
        detail = ", ".join(f"{k} {s:.3f}" for k, s in per)
        print(f"  host_spread.{group}: {value:.3f}  ({detail})")
    kinds = [k for ks in KINDS.values() for k in ks if k in devs]
    common = [l for l in leases if all(l in devs[k] for k in kinds)]
    if len(common) >= 3 and len(kinds) >= 2:
        med = {k: [statistics.median(devs[k][l]) for l in common] for k in kinds}
        rs = [correlation(med[a], med[b]) for i, a in enumerate(kinds) for b in kinds[i + 1:]]
        print(f"  each lease's median deviation, between those kinds: r = {min(rs):.2f}..{max(rs):.2f}"
              f" over {len(common)} leases")


def sample_share(n):
    """The share of a normal population's p10-p90 that n draws show on average (Blom's scores,
    interpolated as quantile() does): 0.80 for eight, as dmasim calibrate's population_spread_pct."""
    if n < 2:
        return 0.0
    nd = statistics.NormalDist()
    z = [nd.inv_cdf((i - 0.375) / (n + 0.25)) for i in range(1, n + 1)]
    return (quantile(z, 0.9) - quantile(z, 0.1)) / (2 * nd.inv_cdf(0.9))


def cmd_coverage(args):
    spread = read_csv(args.spread, {"category", *KEY})
    leases = lease_columns(spread, args.leases)
    sim = read_csv(args.results, {"time_us", "p10_us", "p90_us", "status", *KEY})
    band = {}
    for r in sim:
        lo, mid, hi = number(r["p10_us"]), number(r["time_us"]), number(r["p90_us"])
        if r["status"] == "ok" and None not in (lo, mid, hi):
            band[tuple(r[k] for k in KEY)] = (lo, mid, hi)
    by_kind = {}
    for r in spread:
        b = band.get(tuple(r[k] for k in KEY))
        if b is None:
            continue
        vals = [v for v in (number(r[l]) for l in leases) if v is not None]
        if not vals:
            continue
        lo, mid, hi = b
        med = statistics.median(vals)
        width = (hi - lo) / mid
        measured = (quantile(vals, 0.9) - quantile(vals, 0.1)) / med if len(vals) >= 2 else 0.0
        inside = sum(lo <= v <= hi for v in vals)
        k = by_kind.setdefault(r["category"], {"in": 0, "n": 0, "rows": 0, "width": [], "measured": [], "population": []})
        k["in"] += inside
        k["n"] += len(vals)
        k["rows"] += 1
        k["width"].append(width)
        k["measured"].append(measured)
        k["population"].append(measured / sample_share(len(vals)) if len(vals) >= 2 else 0.0)
    if not by_kind:
        sys.exit("host_spread.py: no row of the results is in the spread file")
    print(f"{args.results} against {args.spread}: {len(leases)} leases")
    print(f"  {'kind':24} {'rows':>4} {'inside p10-p90':>15} {'band width':>11} {'measured p10-p90':>17}"
          f" {'as population':>14}")
    total_in = total_n = 0
    widths, measured, population = [], [], []
    for kind in sorted(by_kind):
        k = by_kind[kind]
        total_in += k["in"]
        total_n += k["n"]
        widths += k["width"]
        measured += k["measured"]
        population += k["population"]
        print(f"  {kind:24} {k['rows']:4d} {100 * k['in'] / k['n']:14.1f}% {100 * statistics.median(k['width']):10.2f}%"
              f" {100 * statistics.median(k['measured']):16.2f}% {100 * statistics.median(k['population']):13.2f}%")
    print(f"  {'all':24} {sum(k['rows'] for k in by_kind.values()):4d} {100 * total_in / total_n:14.1f}%"
          f" {100 * statistics.median(widths):10.2f}% {100 * statistics.median(measured):16.2f}%"
          f" {100 * statistics.median(population):13.2f}%")
    print("  (as population: each row's measured p10-p90 over the share of a normal population's that as many"
          " leases show on average, 0.80 for eight)")


def widest_gap(values):
    """(low side, high side, ratio) at the widest gap between consecutive sorted values."""
    v = sorted(values)
    best = max(range(len(v) - 1), key=lambda i: math.log(v[i + 1] / v[i]))
    return v[: best + 1], v[best + 1:], v[best + 1] / v[best]


def cmd_tails(args):
    rows = read_csv(args.spread, {"category", *KEY})
    leases = lease_columns(rows, args.leases)
    streams = {}
    for r in rows:
        if r["category"] != "periodic p99" or r.get("status", "ok") != "ok":
            continue
        vals = {l: number(r[l]) for l in leases}
        vals = {l: v for l, v in vals.items() if v is not None}
        if len(vals) >= 2:
            streams[r["scenario"]] = vals
    if not streams:
        sys.exit(f"host_spread.py: {args.spread}: no periodic p99 row measured on two leases or more")
    names = sorted(streams)
    print(f"{args.spread}: {len(leases)} leases, p99 of each periodic stream (us)")
    print("lease," + ",".join(names))
    for l in leases:
        print(l + "," + ",".join(f"{streams[n][l]:.1f}" if l in streams[n] else "" for n in names))
    noisy = {}
    for n in names:
        low, high, ratio = widest_gap(streams[n].values())
        noisy[n] = {l for l, v in streams[n].items() if v >= high[0]}
        print(f"  {n}: widest gap x{ratio:.2f} between {low[-1]:.1f} and {high[0]:.1f} us: "
              f"{len(low)} leases at {low[0]:.1f}-{low[-1]:.1f}, {len(high)} at {high[0]:.1f}-{high[-1]:.1f}")
    for i, a in enumerate(names):
        for b in names[i + 1:]:
            both = set(streams[a]) & set(streams[b])
            same = sum(1 for l in both if (l in noisy[a]) == (l in noisy[b]))
            print(f"  {a} and {b}: the same side for {same} of {len(both)} leases")


def cmd_levels(args):
    pooled, by_scenario = {}, {}
    leases = 0
    for folder in args.measured:
        paths = sorted(glob.glob(os.path.join(folder, "*", "measured.csv")))
        if not paths:
            sys.exit(f"host_spread.py: {folder}: no lease folders with a measured.csv")
        for path in paths:
            leases += 1
            for r in read_csv(path, {"scenario", "strategy", "direction", "size_bytes", "variant", "time_us"}):
                size = int(r["size_bytes"])
                if r["strategy"] != "pinned" or r["variant"] or r["scenario"] not in ("pinned", "latency") or size > 65536:
                    continue
                value = number(r["time_us"])
                if value is None:
                    continue
                pooled.setdefault((r["direction"], size), []).append(value)
                by_scenario.setdefault((r["scenario"], r["direction"], size), []).append(value)
    model = {}
    for r in read_csv(args.results, {"scenario", "strategy", "direction", "size_bytes", "variant", "time_us"}):
        if r["strategy"] == "pinned" and not r["variant"] and r["scenario"] in ("pinned", "latency"):
            model[(r["direction"], int(r["size_bytes"]))] = number(r["time_us"])
    print(f"{leases} leases of {', '.join(args.measured)}: small blocking pinned copies, the leases' medians pooled over "
          f"the pinned and latency scenarios (us); the model: {args.results}")
    print("direction,size,n,lower_share,lower_median_us,upper_share,upper_median_us,gap_us,pooled_median_us,"
          "pinned_median_us,latency_median_us,model_us,model_at")
    for (d, size) in sorted(pooled):
        v = sorted(pooled[(d, size)])
        middle = [x for x in v if quantile(v, 0.1) <= x <= quantile(v, 0.9)]
        low, high, _ = widest_gap(middle)
        cut = (low[-1] + high[0]) / 2
        lower = [x for x in v if x < cut]
        upper = [x for x in v if x >= cut]
        m = model.get((d, size))
        at = "" if m is None else ("lower" if m < low[-1] else "upper" if m > high[0] else "gap")
        if m is not None and at == "lower" and m < statistics.median(lower) - (cut - statistics.median(lower)):
            at = "below"
        scen = [statistics.median(by_scenario[(s, d, size)]) if (s, d, size) in by_scenario else float("nan")
                for s in ("pinned", "latency")]
        print(f"{d},{size},{len(v)},{len(lower) / len(v):.2f},{statistics.median(lower):.2f},{len(upper) / len(v):.2f},"
              f"{statistics.median(upper):.2f},{high[0] - low[-1]:.2f},{statistics.median(v):.2f},"
              f"{scen[0]:.2f},{scen[1]:.2f},{'' if m is None else f'{m:.2f}'},{at}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    f = sub.add_parser("fit", help="host_spread's sigmas from a spread.csv")
    f.add_argument("spread")
    f.add_argument("--leases", type=lambda s: [x for x in s.split(",") if x], default=[])
    c = sub.add_parser("coverage", help="how many lease medians the model's band holds")
    c.add_argument("spread")
    c.add_argument("results")
    c.add_argument("--leases", type=lambda s: [x for x in s.split(",") if x], default=[])
    t = sub.add_parser("tails", help="each lease's p99 of the periodic streams, and how they split")
    t.add_argument("spread")
    t.add_argument("--leases", type=lambda s: [x for x in s.split(",") if x], default=[])
    lv = sub.add_parser("levels", help="the two levels of the small blocking copies, pooled over leases")
    lv.add_argument("results")
    lv.add_argument("measured", nargs="+")
    args = ap.parse_args()
    {"fit": cmd_fit, "coverage": cmd_coverage, "tails": cmd_tails, "levels": cmd_levels}[args.cmd](args)


if __name__ == "__main__":
    main()
