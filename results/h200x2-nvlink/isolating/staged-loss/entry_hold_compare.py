#!/usr/bin/env python3
"""The model's staged10-then-probe cells (model-entry-hold.txt) against the two leases that ran
them with the probes' start times (stagedloss-fine.csv, stagedloss-fine-staged.csv): by D, the
4 KiB probe's end after its call on the GPU the staged copy enters, and the second staged copy's
loss against the same copy with nothing first (medians over the repetitions).

Usage: entry_hold_compare.py > entry-hold-compare.txt   (from this folder)
"""
import csv
import glob
import gzip
import os
import re
import statistics
import sys
from collections import defaultdict

HERE = os.path.dirname(os.path.abspath(__file__))


def model_lines():
    out = {}
    with open(os.path.join(HERE, "model-entry-hold.txt")) as f:
        for line in f:
            if line.startswith("#"):
                continue
            m = re.match(r"(second staged copy|probe \(4 KiB out of GPU 0\)), hold ([0-9.]+) us: .*?: (.*)$", line.strip())
            if not m:
                continue
            kind = "loss" if m.group(1).startswith("second") else "probe"
            out[(kind, float(m.group(2)))] = {float(a): float(b) for a, b in (x.split(":") for x in m.group(3).split())}
    if len(out) != 4:
        sys.exit("entry_hold_compare.py: model-entry-hold.txt lacks its four lines")
    return out


def measured():
    probe, loss = {}, {}
    for lease in sorted(glob.glob(os.path.join(HERE, "leases", "*"))):
        cells = defaultdict(list)
        for name in ("stagedloss-fine.csv", "stagedloss-fine-staged.csv"):
            path = os.path.join(lease, name)
            gz = path + ".gz"  # the large ones are kept gzipped
            if not os.path.exists(path) and not os.path.exists(gz):
                continue
            with (open(path, newline="") if os.path.exists(path) else gzip.open(gz, "rt", newline="")) as f:
                for r in csv.DictReader(f):
                    cells[(r["first"], r["probe"], float(r["delay_us"]))].append(float(r["latency_us"]))
        med = {k: statistics.median(v) for k, v in cells.items()}
        p = {d: v for (first, pr, d), v in med.items() if first == "staged10" and pr == "d2h"}
        alone = {d: v for (first, pr, d), v in med.items() if first == "none" and pr == "staged01"}
        second = {d: v - alone[d] for (first, pr, d), v in med.items() if first == "staged10" and pr == "staged01" and d in alone}
        if p and second:
            name = os.path.basename(lease)
            probe[name], loss[name] = p, second
    if not probe:
        sys.exit("entry_hold_compare.py: no lease with stagedloss-fine.csv and stagedloss-fine-staged.csv")
    return probe, loss


def main():
    model = model_lines()
    probe, loss = measured()
    for kind, meas, title in (("probe", probe, "4 KiB probe on the GPU the staged copy enters: its end after its call, us"),
                              ("loss", loss, "second staged copy (1 MiB, GPU 0 -> 1): its loss against alone, us")):
        leases = sorted(meas)
        print(f"== {title}")
        print("D_us," + ",".join(leases) + ",model_hold_0,model_hold_5.4")
        errs = {0.0: [], 5.4: []}
        for d in sorted(model[(kind, 0.0)]):
            if not all(d in meas[l] for l in leases):
                continue
            m = statistics.mean(meas[l][d] for l in leases)
            for h in errs:
                errs[h].append(abs(model[(kind, h)][d] - m))
            print(f"{d:g}," + ",".join(f"{meas[l][d]:.1f}" for l in leases) + f",{model[(kind, 0.0)][d]:.1f},{model[(kind, 5.4)][d]:.1f}")
        for h, e in errs.items():
            print(f"# model with the hold at {h:g} us: mean |model - the leases' mean| {statistics.mean(e):.2f} us over {len(e)} delays")
        print()


if __name__ == "__main__":
    main()
