#!/usr/bin/env python3
"""The gated duplex pair repetition by repetition, from dmaprobe's JSON (time_us.samples).

Usage: samples_summary.py LEASE_DIR [LEASE_DIR ...] [--model RESULTS_CSV] [--csv OUT_CSV]

Each LEASE_DIR holds a measured.json.gz of repeat-plan.txt (the main plan's duplex pairs and pinned
copies, ten cases of 20 repetitions each). Per lease and size: the pair's 200 repetitions as a
histogram (30 bins from their min to their max), their median and mean, the range of the ten
cases' medians, and the aggregate over one way (2 x the blocking copy into the GPU's median over
the pair's median). Then over the leases: the median of the leases' medians and of their means;
and over every case of every lease (as the main plan has one case a lease): the median of the
cases' medians of the pair (and every repetition's p10-p90), and of each case's aggregate over one way each direction (2 x its
lease's blocking copy's median over the case's pair), each with the range the median of 28 cases
drawn from them takes (2.5-97.5 % of 2000 draws, fixed seed), a main plan's worth of leases.
With --model, a `dmasim run` results.csv of scenarios/duplex.yaml and scenarios/pinned.yaml: the
model's pair (the mean over the gate's phases, its p10-p90) and aggregate. With --csv, the cases'
numbers per size as CSV (size_bytes,cases,pair_median_us,pair_drawn_lo_us,pair_drawn_hi_us,
rep_p10_us,rep_p90_us), which tests/sim/stream_handoff_test.cpp reads. Standard library only.
"""
import argparse
import csv
import gzip
import json
import os
import random
import statistics
import sys


def load(lease):
    path = os.path.join(lease, "measured.json.gz")
    try:
        with gzip.open(path, "rt") as f:
            cases = json.load(f)["nvbandwidth"]["testcases"]
    except (OSError, ValueError, KeyError) as e:
        sys.exit(f"samples_summary.py: {path}: {e}")
    by = {}
    for t in cases:
        if t.get("status") != "Passed":
            continue
        samples = t["time_us"].get("samples")
        if not samples:
            sys.exit(f"samples_summary.py: {path}: {t['name']} has no samples (dmaprobe before 1312de58)")
        by.setdefault((t["scenario"], t["direction"], t["size_bytes"], t["variant"]), []).append(samples)
    return by


def histogram(v, bins=30):
    lo, hi = min(v), max(v)
    width = (hi - lo) / bins or 1.0
    counts = [0] * (bins + 1)
    for x in v:
        counts[int((x - lo) / width)] += 1
    return "".join(" " if c == 0 else "." if c < 4 else "o" if c < 12 else "#" for c in counts)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("leases", nargs="+")
    ap.add_argument("--model")
    ap.add_argument("--csv")
    args = ap.parse_args()
    model = {}
    if args.model:
        with open(args.model, newline="") as f:
            for r in csv.DictReader(f):
                if r["scenario"] == "duplex" and r["variant"] == "":
                    model[int(r["size_bytes"])] = (float(r["time_us"]), float(r["p10_us"]), float(r["p90_us"]))
                elif r["scenario"] == "pinned" and r["variant"] == "":
                    model[(r["direction"], int(r["size_bytes"]))] = float(r["time_us"])
    leases = {os.path.basename(os.path.normpath(p)): load(p) for p in args.leases}
    sizes = sorted({k[2] for by in leases.values() for k in by if k[0] == "duplex" and k[3] == ""})
    over = {s: ([], [], []) for s in sizes}
    for name, by in sorted(leases.items()):
        print(f"== {name}")
        for size in sizes:
            cases = by[("duplex", "both", size, "")]
            pair = [x for c in cases for x in c]
            one = statistics.median(x for c in by[("pinned", "h2d", size, "")] for x in c)
            meds = [statistics.median(c) for c in cases]
            med, mean = statistics.median(pair), statistics.mean(pair)
            print(f"  {size:>8} B  {len(pair)} reps  [{min(pair):6.2f} |{histogram(pair)}| {max(pair):6.2f}]  "
                  f"median {med:6.2f}  mean {mean:6.2f}  cases' medians {min(meds):6.2f}-{max(meds):6.2f}  "
                  f"aggregate over one way {2 * one / med:.3f}")
            over[size][0].append(med)
            over[size][1].append(mean)
            over[size][2].append(2 * one / med)
    print(f"== over the {len(leases)} leases: median of the leases' medians / means of the pair, aggregate over one way"
          + ("; the model's pair (mean over the gate's phases, p10-p90)" if model else ""))
    for size in sizes:
        med, mean, agg = (statistics.median(v) for v in over[size])
        line = f"  {size:>8} B  median {med:6.2f}  mean {mean:6.2f}  aggregate {agg:.3f}"
        if size in model:
            t, p10, p90 = model[size]
            line += f"  model {t:6.2f} ({p10:.2f}-{p90:.2f}): {100 * (t / med - 1):+.1f} % on the median, {100 * (t / mean - 1):+.1f} % on the mean"
        print(line)
    rng = random.Random(1)

    def drawn(values):
        meds = sorted(statistics.median(rng.choices(values, k=28)) for _ in range(2000))
        return meds[50], meds[1949]

    print(f"== every case of every lease ({len(leases)} leases): the median of the cases' medians, the range of the median"
          f" of 28 drawn; the aggregate over one way into / out of the GPU likewise" + ("; the model's" if model else ""))
    table = []
    for size in sizes:
        pairs, agg = [], {"h2d": [], "d2h": []}
        for by in leases.values():
            one = {d: statistics.median(x for c in by[("pinned", d, size, "")] for x in c) for d in agg}
            for c in by[("duplex", "both", size, "")]:
                m = statistics.median(c)
                pairs.append(m)
                for d in agg:
                    agg[d].append(2 * one[d] / m)
        med = statistics.median(pairs)
        lo, hi = drawn(pairs)
        every = sorted(x for by in leases.values() for c in by[("duplex", "both", size, "")] for x in c)
        q = statistics.quantiles(every, n=10)
        table.append((size, len(pairs), med, lo, hi, q[0], q[-1]))
        line = (f"  {size:>8} B  {len(pairs)} cases  pair {med:6.2f} ({lo:.2f}-{hi:.2f}), every repetition's p10-p90 "
                f"{q[0]:.2f}-{q[-1]:.2f}")
        for d in agg:
            a = statistics.median(agg[d])
            alo, ahi = drawn(agg[d])
            line += f"  over {d} {a:.3f} ({alo:.3f}-{ahi:.3f})"
            if size in model and (d, size) in model:
                ma = 2 * model[(d, size)] / model[size][0]
                line += f" model {ma:.3f} {100 * (ma / a - 1):+.1f} %"
        if size in model:
            t, p10, p90 = model[size]
            line += f"  model pair {100 * (t / med - 1):+.1f} %, its phases' p10-p90 {p10:.2f}-{p90:.2f}"
        print(line)
    # The blocking copies case by case: whether a machine's level of a driver call (docs/model.md,
    # the host's two levels) is the lease's or the case's.
    print("== the blocking copies case by case: each case's median [min-max] of its repetitions, and the lease's level"
          " (below or above the midpoint of the leases' lowest and highest case medians)")
    for d, size in (("d2h", 4096), ("d2h", 65536), ("h2d", 4096), ("h2d", 65536)):
        cases = {n: [c for c in by[("pinned", d, size, "")]] for n, by in sorted(leases.items())}
        meds = [statistics.median(c) for cs in cases.values() for c in cs]
        mid = 0.5 * (min(meds) + max(meds))
        low = 0
        print(f"  {d} {size >> 10} KiB (midpoint {mid:.2f} us)")
        for n, cs in cases.items():
            m = [statistics.median(c) for c in cs]
            lower = sum(x < mid for x in m)
            low += lower > len(m) / 2
            cells = "  ".join(f"{statistics.median(c):6.2f} [{min(c):.2f}-{max(c):.2f}]" for c in cs)
            print(f"    {n}  {cells}  {'lower' if lower > len(m) / 2 else 'upper'}{'' if lower in (0, len(m)) else ' (one case on the other)'}")
        print(f"    leases on the lower level: {low} of {len(cases)}")
    if args.csv:
        with open(args.csv, "w", newline="") as f:
            w = csv.writer(f, lineterminator="\n")
            w.writerow(["size_bytes", "cases", "pair_median_us", "pair_drawn_lo_us", "pair_drawn_hi_us", "rep_p10_us",
                        "rep_p90_us"])
            for size, n, *v in table:
                w.writerow([size, n] + [f"{x:.3f}" for x in v])


if __name__ == "__main__":
    main()
