#!/usr/bin/env python3
"""Where a zero-copy kernel ends: each row beyond the same lease's empty kernel.

Usage: summarize.py LEASE_DIR [LEASE_DIR ...] [--model RUN_DIR ...] [--main MEASURED_DIR ...] [--csv OUT]

Each LEASE_DIR holds dmaprobe's measured.csv and metadata.json of plan.txt; the empty kernel is
metadata.json's kernel_calibration.overhead_us (dmaprobe's synthetic kernel of one block per SM,
gated and timed with events, as the zero-copy rows are). Per zero-copy row: each lease's time less
its empty kernel, their median, and for each RUN_DIR (a `dmasim run scenario.yaml -o RUN_DIR`) the
model's time less its runtime.kernel_launch_latency (RUN_DIR/config.json) and its difference from
the median. The chase's row is a time per hop and is shown as measured. With --main, a machine's
main-plan leases (results/<machine>/measured): their zero-copy rows of the shipped grid the same
way, each less its lease's empty kernel. With --csv, every row as CSV (scenario, direction,
size_bytes, leases, measured_beyond_us, lease_min_us, lease_max_us, then per model
<name>_beyond_us and <name>_diff_us; main-plan rows named main:<machine>:<scenario>). Standard
library only.
"""
import argparse
import csv
import json
import os
import statistics
import sys


def fail(msg):
    sys.exit(f"summarize.py: {msg}")


def load_lease(lease):
    try:
        with open(os.path.join(lease, "metadata.json")) as f:
            calib = json.load(f).get("kernel_calibration")
        with open(os.path.join(lease, "measured.csv"), newline="") as f:
            rows = [r for r in csv.DictReader(f) if r["strategy"] == "zero_copy" and r["status"] == "ok"]
    except (OSError, ValueError, KeyError) as e:
        fail(f"{lease}: {e}")
    if not calib:
        fail(f"{lease}: metadata.json has no kernel_calibration (the plan needs ke-calib)")
    return calib["overhead_us"], {(r["scenario"], r["direction"], int(r["size_bytes"])): float(r["time_us"]) for r in rows}


def load_model(run_dir):
    try:
        with open(os.path.join(run_dir, "config.json")) as f:
            cfg = json.load(f)
        with open(os.path.join(run_dir, "results.csv"), newline="") as f:
            rows = list(csv.DictReader(f))
    except (OSError, ValueError) as e:
        fail(f"{run_dir}: {e}")
    launch = None
    for s in cfg if isinstance(cfg, list) else cfg.get("scenarios", [cfg]):
        launch = s.get("runtime", {}).get("kernel_launch_latency")
        if launch:
            break
    if launch is None:
        fail(f"{run_dir}/config.json: no runtime.kernel_launch_latency")
    return parse_us(launch), {(r["scenario"], r["direction"], int(r["size_bytes"])): float(r["time_us"])
                              for r in rows if r["strategy"] == "zero_copy" and r["status"] == "ok"}


def parse_us(text):
    for unit, scale in (("ps", 1e-6), ("ns", 1e-3), ("us", 1.0), ("ms", 1e3), ("s", 1e6)):
        if text.endswith(unit):
            return float(text[: -len(unit)]) * scale
    fail(f"a time without a unit: {text}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("leases", nargs="+")
    ap.add_argument("--model", nargs="*", default=[])
    ap.add_argument("--main", nargs="*", default=[])
    ap.add_argument("--csv")
    a = ap.parse_args()
    leases = {os.path.basename(os.path.normpath(d)): load_lease(d) for d in a.leases}
    models = [(os.path.basename(os.path.normpath(d)), *load_model(d)) for d in a.model]
    print("empty kernel (us): " + ", ".join(f"{name} {ov:.3f}" for name, (ov, _) in leases.items()))
    keys = []
    for _, rows in leases.values():
        keys += [k for k in rows if k not in keys]
    head = f"{'row':34s} {'leases, beyond their empty kernel (us)':>40s} {'median':>8s}"
    for name, _, _ in models:
        head += f" | {name[:14]:>14s}  diff"
    print(head)
    table = []
    for k in keys:
        chase = k[0].endswith("chase")
        got = [rows[k] - (0.0 if chase else ov) for ov, rows in leases.values() if k in rows]
        med = statistics.median(got)
        line = f"{k[0] + ' ' + k[1] + ' ' + str(k[2]):34s} {' '.join(f'{x:8.3f}' for x in got):>40s} {med:8.3f}"
        out = [k[0], k[1], k[2], len(got), f"{med:.3f}", f"{min(got):.3f}", f"{max(got):.3f}"]
        for _, launch, rows in models:
            if k in rows:
                m = rows[k] - (0.0 if chase else launch)
                line += f" | {m:14.3f} {m - med:+5.2f}"
                out += [f"{m:.3f}", f"{m - med:.3f}"]
            else:
                out += ["", ""]
        print(line)
        table.append(out)
    for d in a.main:
        machine = os.path.basename(os.path.dirname(os.path.abspath(d)))
        by = {}
        for name in sorted(os.listdir(d)):
            lease = os.path.join(d, name)
            if not os.path.isfile(os.path.join(lease, "metadata.json")):
                continue
            ov, rows = load_lease(lease)
            for k, t in rows.items():
                if k[0] == "zero-copy":
                    by.setdefault(k, []).append(t - ov)
        print(f"{machine} main plan, zero-copy rows less each lease's empty kernel (us):")
        for k in sorted(by):
            got = by[k]
            med = statistics.median(got)
            print(f"  {k[1]} {k[2]}: {len(got)} leases, median {med:.3f} ({min(got):.3f}-{max(got):.3f})")
            table.append([f"main:{machine}:{k[0]}", k[1], k[2], len(got), f"{med:.3f}", f"{min(got):.3f}", f"{max(got):.3f}"] +
                         ["", ""] * len(models))
    if a.csv:
        header = ["scenario", "direction", "size_bytes", "leases", "measured_beyond_us", "lease_min_us", "lease_max_us"]
        for name, _, _ in models:
            header += [f"{name}_beyond_us", f"{name}_diff_us"]
        with open(a.csv, "w", newline="") as f:
            w = csv.writer(f, lineterminator="\n")
            w.writerow(header)
            w.writerows(table)


if __name__ == "__main__":
    main()
