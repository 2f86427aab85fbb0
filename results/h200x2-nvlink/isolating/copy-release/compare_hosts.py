#!/usr/bin/env python3
"""The copy-release program (../../../h100-sxm/isolating/copy-release/release.cu) on two kinds of host:
per mode, direction and size, the median over each host's leases of each lease's median (us) of the
flag a stream writes behind the copy (from the call's start), the blocking copy less that flag, and the
call's CPU time, and the 2xH200's less the H100 kind's. Standard library only.
Usage: compare_hosts.py REFERENCE_LEASES_PARENT OTHER_LEASES_PARENT
  e.g. compare_hosts.py ../../../h100-sxm/isolating/copy-release/leases leases"""
import csv
import statistics
import sys
from pathlib import Path

KEYS = ("call_us", "data_us", "flag_us", "blocking_us")


def load(parent):
    """(mode, direction, bytes) -> {key: [each lease's median]}; lease folders ending in -second (a
    second run on a machine already counted) are left out."""
    cells, leases = {}, []
    for d in sorted(Path(parent).iterdir()):
        if not d.is_dir() or d.name.endswith("-second"):
            continue
        leases.append(d.name)
        for mode in ("synced", "queued"):
            path = d / f"{mode}.csv"
            if not path.exists():
                continue
            for r in csv.DictReader(path.open()):
                cell = cells.setdefault((r["mode"], r["direction"], int(r["bytes"])), {k: [] for k in KEYS + ("after_us",)})
                for k in KEYS:
                    cell[k].append(float(r[k]))
                cell["after_us"].append(float(r["blocking_us"]) - float(r["flag_us"]))
    return cells, leases


def main(ref_parent, other_parent):
    ref, ref_leases = load(ref_parent)
    other, other_leases = load(other_parent)
    med = statistics.median
    print(f"reference: {len(ref_leases)} leases of {ref_parent}; other: {len(other_leases)} leases of {other_parent}")
    print("medians over each host's leases (us): flag (from the call), blocking less flag, the call; other - reference")
    print(f"{'mode':7} {'dir':4} {'bytes':>8} | {'flag ref':>8} {'other':>7} {'diff':>6} | {'blk-flag ref':>12} {'other':>6} "
          f"{'diff':>6} | {'call ref':>8} {'other':>6}")
    for key in sorted(set(ref) & set(other)):
        a, b = ref[key], other[key]
        fa, fb = med(a["flag_us"]), med(b["flag_us"])
        sa, sb = med(a["after_us"]), med(b["after_us"])
        print(f"{key[0]:7} {key[1]:4} {key[2]:8d} | {fa:8.2f} {fb:7.2f} {fb - fa:+6.2f} | {sa:12.2f} {sb:6.2f} "
              f"{sb - sa:+6.2f} | {med(a['call_us']):8.2f} {med(b['call_us']):6.2f}")


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    main(*sys.argv[1:])
