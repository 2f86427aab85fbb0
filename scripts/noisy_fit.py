#!/usr/bin/env python3
"""Quiet and noisy machines from dmaprobe --host-stalls: the source of the noisy_host parameters
(docs/model.md, "Noisy machines").

Usage:
  scripts/noisy_fit.py probe LEASE_DIR [LEASE_DIR ...] [--wake-over-us 50] [--stall-over-us 1500]
  scripts/noisy_fit.py check --quiet QUIET.csv --noisy NOISY.csv --mixed MIXED.csv LEASE_DIR [...]

Each LEASE_DIR holds a lease's metadata.json (its "host_stalls" summary), host-stalls.csv (or
host-stalls.csv.gz, as scripts/measure-on-gpu.sh keeps it) and measured.csv. Leases without a probe
are skipped.

A lease is noisy when its copies stall: more than 0.5 % of the 4 MiB memcpys after each release
took more than --stall-over-us longer than the lease's median copy (a quiet machine has none or
one in 2500). A lease whose probe had no copies yet (the first two probe versions) is judged by
its wakes instead: more than 1 % of the releases reached more than --wake-over-us late. For each
lease it prints the probe (spinning gaps a second, steal time, late wakes, wake p99, copy
p50/p99, stalled copies) beside its frame streams' p99, then from the noisy leases:

  wake_probability  share of releases later than --wake-over-us (median over noisy leases),
  wake_time/sigma   median and log sigma of those latenesses (pooled over the noisy leases),
  busy_interval     the copying time between stalls: a copy of median time t stalls with
                    chance f, so interval = -t / ln(1 - f) (median over noisy leases),
  busy_time/sigma   median and log sigma of the stalled copies' excess over the median,

and noisy_share: the noisy leases' share of the leases given.

`check` judges the model's periodic tails on leases it was not fitted to: it sorts the leases as
dmasim calibrate does (each lease's mean over its pageable streams of log(p99 / p50), split at the
widest gap if that is at least a factor 1.5) and, for each stream, sets the median over each
kind's leases of their p99 beside the model's p99 row with noisy_host.noisy_share 0 (QUIET.csv,
a `dmasim run` results.csv) and 1 (NOISY.csv); and how many of all the leases' p99 lie inside the
p10-p90 band of the calibrated mix (MIXED.csv). Standard library only.
"""
import argparse
import csv
import gzip
import json
import math
import os
import statistics
import sys


def quantile(values, q):
    v = sorted(values)
    if not v:
        return float("nan")
    x = q * (len(v) - 1)
    i = int(math.floor(x))
    j = min(i + 1, len(v) - 1)
    return v[i] + (v[j] - v[i]) * (x - i)


def lognormal(values):
    """Median and log sigma (from the p10-p90 width, robust to a few extremes)."""
    logs = [math.log(x) for x in values if x > 0]
    if len(logs) < 3:
        return float("nan"), float("nan")
    return math.exp(quantile(logs, 0.5)), (quantile(logs, 0.9) - quantile(logs, 0.1)) / (2 * 1.2816)


def frame_p99s(path):
    out = {}
    with open(path, newline="") as f:
        for r in csv.DictReader(f):
            if r["strategy"] == "periodic" and r["status"] == "ok" and r["variant"] in ("", "p99"):
                out.setdefault(r["scenario"], {})["p99" if r["variant"] else "p50"] = float(r["time_us"])
    return out


def load(lease_dir):
    md_path = os.path.join(lease_dir, "metadata.json")
    csv_path = os.path.join(lease_dir, "host-stalls.csv")
    if not os.path.exists(csv_path):
        csv_path += ".gz"
    if not (os.path.exists(md_path) and os.path.exists(csv_path)):
        return None
    with open(md_path) as f:
        summary = json.load(f).get("host_stalls")
    if not summary:
        return None
    wakes, copies = [], []
    opener = gzip.open if csv_path.endswith(".gz") else open
    with opener(csv_path, "rt", newline="") as f:
        for r in csv.DictReader(f):
            if r.get("kind") == "wake":
                wakes.append(float(r["us"]))
                if r.get("copy_us"):
                    copies.append(float(r["copy_us"]))
    return {"name": os.path.basename(os.path.normpath(lease_dir)), "summary": summary, "wakes": wakes,
            "copies": copies, "frames": frame_p99s(os.path.join(lease_dir, "measured.csv"))}


def sim_p99(path):
    """{stream: (p99 us, p10 us, p90 us)} of a dmasim results.csv's periodic p99 rows."""
    out = {}
    with open(path, newline="") as f:
        for r in csv.DictReader(f):
            if r["strategy"] == "periodic" and r["variant"] == "p99" and r["status"] == "ok":
                out[r["scenario"]] = (float(r["time_us"]), float(r["p10_us"]), float(r["p90_us"]))
    return out


def sort_leases(frames):
    """{lease: noisy?} as dmasim calibrate's noisy_leases does."""
    scores = {}
    for name, fr in frames.items():
        logs = [math.log(v["p99"] / v["p50"]) for s, v in fr.items() if "pageable" in s and "p99" in v and v.get("p50")]
        if logs:
            scores[name] = sum(logs) / len(logs)
    order = sorted(scores, key=scores.get)
    noisy = {n: False for n in frames}
    if len(order) < 4:
        return noisy
    gaps = [(scores[order[i]] - scores[order[i - 1]], i) for i in range(1, len(order))]
    widest, cut = max(gaps)
    if widest >= math.log(1.5):
        for n in order[cut:]:
            noisy[n] = True
    return noisy


def cmd_check(a):
    frames = {os.path.basename(os.path.normpath(d)): frame_p99s(os.path.join(d, "measured.csv")) for d in a.leases}
    noisy = sort_leases(frames)
    quiet_m, noisy_m, mixed_m = sim_p99(a.quiet), sim_p99(a.noisy), sim_p99(a.mixed)
    n_noisy = sum(noisy.values())
    print(f"# {len(frames)} leases: {n_noisy} noisy ({', '.join(sorted(n[11:] for n in noisy if noisy[n]))}), "
          f"{len(frames) - n_noisy} quiet")
    print("stream,kind,leases,measured_p99_us,model_p99_us,error_pct")
    inside = total = 0
    for stream in sorted(quiet_m):
        for kind, model in (("quiet", quiet_m), ("noisy", noisy_m)):
            vals = [fr[stream]["p99"] for n, fr in frames.items() if noisy[n] == (kind == "noisy") and stream in fr and "p99" in fr[stream]]
            if not vals or stream not in model:
                continue
            m = statistics.median(vals)
            print(f"{stream},{kind},{len(vals)},{m:.1f},{model[stream][0]:.1f},{100 * (model[stream][0] / m - 1):+.1f}")
        if stream in mixed_m:
            _, lo, hi = mixed_m[stream]
            for fr in frames.values():
                if stream in fr and "p99" in fr[stream]:
                    total += 1
                    inside += lo <= fr[stream]["p99"] <= hi
    if total:
        print(f"# the calibrated mix's p10-p90 band of the p99 holds {inside} of {total} lease p99s ({100 * inside / total:.1f} %)")


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "check":
        ap = argparse.ArgumentParser(description="the model's periodic tails against leases, by kind of machine")
        ap.add_argument("leases", nargs="+")
        ap.add_argument("--quiet", required=True)
        ap.add_argument("--noisy", required=True)
        ap.add_argument("--mixed", required=True)
        cmd_check(ap.parse_args(sys.argv[2:]))
        return
    if len(sys.argv) > 1 and sys.argv[1] == "probe":
        sys.argv.pop(1)
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("leases", nargs="+")
    ap.add_argument("--wake-over-us", type=float, default=50.0)
    ap.add_argument("--stall-over-us", type=float, default=1500.0)
    a = ap.parse_args()
    leases = [x for x in (load(d) for d in a.leases) if x]
    if not leases:
        sys.exit("no lease with a host-stall probe among those given")
    print("lease,noisy,spin_per_s,steal_ms,wake_late_share_pct,wake_p99_us,copy_p50_us,copy_p99_us,stalled_copy_pct,"
          "radar-8ms_p99_us,radar-2gbps_p99_us,radar-8ms-pageable_p99_us")
    wake_shares, wake_late, intervals, excess = [], [], [], []
    noisy_count = judged = 0
    for l in leases:
        s = l["summary"]
        late = [w for w in l["wakes"] if w > a.wake_over_us]
        share = len(late) / len(l["wakes"]) if l["wakes"] else float("nan")
        copy_p50 = quantile(l["copies"], 0.5)
        slow = [c - copy_p50 for c in l["copies"] if c > copy_p50 + a.stall_over_us]
        stalled = len(slow) / len(l["copies"]) if l["copies"] else float("nan")
        noisy = stalled > 0.005 if l["copies"] else (bool(l["wakes"]) and share > 0.01)
        if l["wakes"]:
            judged += 1
            noisy_count += noisy
        if noisy:
            wake_shares.append(share)
            wake_late += late
            if l["copies"]:
                if 0 < stalled < 1:
                    intervals.append(-copy_p50 / math.log(1 - stalled))
                excess += slow
        fr = l["frames"]
        p99 = lambda n: f"{fr[n]['p99']:.1f}" if n in fr and "p99" in fr[n] else ""
        print(f"{l['name']},{'yes' if noisy else ('no' if l['wakes'] else '?')},{s.get('per_second', 0):.0f},"
              f"{s.get('steal_ms', '')},{100 * share:.2f},{s.get('wake_p99_us', float('nan')):.1f},"
              f"{copy_p50:.1f},{quantile(l['copies'], 0.99):.1f},{100 * stalled:.2f},{p99('radar-8ms')},{p99('radar-2gbps')},"
              f"{p99('radar-8ms-pageable')}")
    print(f"# noisy by the probe (copies stalled over {a.stall_over_us:g} us more than 0.5 % of the time, else "
          f"wakes over {a.wake_over_us:g} us late more than 1 %): {noisy_count} of {judged} leases with one")
    if judged:
        print(f"noisy_host.noisy_share: {noisy_count / judged:.3f}")
    if wake_shares:
        t, sg = lognormal(wake_late)
        print(f"noisy_host.wake_probability: {statistics.median(wake_shares):.4f}  # {len(wake_shares)} noisy leases")
        print(f"noisy_host.wake_time: {t:.1f}us")
        print(f"noisy_host.wake_sigma: {sg:.3f}")
    if intervals:
        t, sg = lognormal(excess)
        print(f"noisy_host.busy_interval: {statistics.median(intervals) / 1e3:.2f}ms  # {len(intervals)} noisy leases with a copy probe")
        print(f"noisy_host.busy_time: {t:.1f}us")
        print(f"noisy_host.busy_sigma: {sg:.3f}")


if __name__ == "__main__":
    main()
