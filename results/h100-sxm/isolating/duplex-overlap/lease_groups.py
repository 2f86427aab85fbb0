#!/usr/bin/env python3
"""How the main plan's gated duplex pairs differ from lease to lease: per size, each lease's medians
of the pair and of each copy (measured.csv, rows duplex/both, variants '', h2d, d2h), how the pair
follows the copy out of the GPU across leases (Pearson correlation), and the leases split where
the copy out of the GPU at 4 KiB has its widest gap (its end there is set by where its channel's
tries fall, which the host's calls move: anchor-check.txt). Whether a split at 4 KiB holds at the
other sizes says whether it is the lease's (its host) or the case's.

Usage: lease_groups.py MEASURED_DIR [MEASURED_DIR ...]  (folders of lease folders; lease-groups.txt
is its output over results/h100-sxm/measured and measured-held-out). Standard library only.
"""
import glob
import math
import os
import statistics
import sys

from repsio import cli, read_rows

SIZES = [4096, 16384, 65536, 262144, 1048576, 4194304]


def corr(a, b):
    ma, mb = statistics.mean(a), statistics.mean(b)
    den = math.sqrt(sum((x - ma) ** 2 for x in a) * sum((y - mb) ** 2 for y in b))
    return sum((x - ma) * (y - mb) for x, y in zip(a, b)) / den if den > 0 else float("nan")


def main(dirs):
    leases = []
    for top in dirs:
        for d in sorted(glob.glob(os.path.join(top, "*", "measured.csv"))):
            rows = {}
            for r in read_rows(d, "lease_groups.py"):
                if r["scenario"] == "duplex" and r["direction"] == "both" and r["status"] == "ok":
                    rows[(int(r["size_bytes"]), r["variant"])] = float(r["time_us"])
            if all((s, v) in rows for s in SIZES for v in ("", "h2d", "d2h")):
                leases.append((os.path.basename(os.path.dirname(d)), rows))
    if not leases:
        sys.exit("lease_groups.py: no lease with the duplex rows under " + ", ".join(dirs))
    d4 = sorted(r[(4096, "d2h")] for _, r in leases)
    gap, cut = max((d4[i + 1] - d4[i], (d4[i + 1] + d4[i]) / 2) for i in range(len(d4) - 1))
    late = [i for i, (_, r) in enumerate(leases) if r[(4096, "d2h")] > cut]
    early = [i for i in range(len(leases)) if i not in late]
    print(f"{len(leases)} leases; the copy out of the GPU at 4 KiB splits at {cut:.2f} us (gap {gap:.2f}): "
          f"{len(late)} later, {len(early)} earlier")
    print(f"{'bytes':>8} {'corr(pair, d2h)':>15} {'corr(pair, d2h@4K)':>18}   medians pair / h2d / d2h (us): later group | earlier group | all")
    for s in SIZES:
        pair = [r[(s, "")] for _, r in leases]
        up = [r[(s, "h2d")] for _, r in leases]
        down = [r[(s, "d2h")] for _, r in leases]
        at4 = [r[(4096, "d2h")] for _, r in leases]

        def med(v, idx):
            return statistics.median(v[i] for i in idx)
        print(f"{s:8d} {corr(pair, down):15.2f} {corr(pair, at4):18.2f}   "
              f"{med(pair, late):6.2f} / {med(up, late):6.2f} / {med(down, late):6.2f} | "
              f"{med(pair, early):6.2f} / {med(up, early):6.2f} / {med(down, early):6.2f} | "
              f"{statistics.median(pair):6.2f} / {statistics.median(up):6.2f} / {statistics.median(down):6.2f}")
    print("4 KiB, each lease: d2h / pair (us), sorted by d2h")
    for name, r in sorted(leases, key=lambda x: x[1][(4096, "d2h")]):
        print(f"  {name}: {r[(4096, 'd2h')]:5.2f} / {r[(4096, '')]:5.2f}")


if __name__ == "__main__":
    cli(main, __doc__)
