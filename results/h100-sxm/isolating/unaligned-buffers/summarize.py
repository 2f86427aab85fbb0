#!/usr/bin/env python3
"""unaligned-buffers (README.md): per lease, what a pageable copy out of the GPU costs by where its
destination starts, from rounds.csv (rounds.cu) and offset-copy-out's offsetcopy.csv; the extra time a
MiB one byte off, and its median over the leases (pageable.unaligned_pass_bandwidth).

Usage: summarize.py LEASE_DIR [LEASE_DIR ...]   (each holding rounds.csv or offsetcopy.csv)
Standard library only.
"""
import csv
import os
import statistics
import sys

MIB = 1 << 20


def load(lease):
    out = {}
    path = os.path.join(lease, "rounds.csv")
    if os.path.exists(path):
        with open(path) as f:
            for r in csv.DictReader(f):
                out[int(r["bytes"]), int(r["offset"])] = float(r["us_median"])
        return out
    with open(os.path.join(lease, "offsetcopy.csv")) as f:
        for r in csv.DictReader(f):
            if r["mode"] == "d2h":
                out[int(r["bytes"]), int(r["offset"])] = float(r["median_us"])
    return out


def main(leases):
    extra = {}
    for lease in leases:
        d = load(lease)
        print(os.path.basename(os.path.normpath(lease)))
        for n in sorted({k[0] for k in d}):
            base = d[n, 0]
            cells = " ".join(f"{off}: {d[n, off]:.1f} ({100 * (d[n, off] / base - 1):+.0f} %)"
                             for off in sorted(o for m, o in d if m == n))
            per_mib = (d[n, 1] - base) / (n / MIB)
            extra.setdefault(n, []).append(per_mib)
            print(f"  {n // MIB:>3} MiB: {cells}; one byte off {per_mib:.2f} us a MiB more")
    for n, v in sorted(extra.items()):
        m = statistics.median(v)
        print(f"{n // MIB} MiB, one byte off, us a MiB more: {' '.join(f'{x:.2f}' for x in v)} | median {m:.2f}"
              f" -> a pass at {MIB / m / 1e3:.2f} GB/s")


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    main(sys.argv[1:])
