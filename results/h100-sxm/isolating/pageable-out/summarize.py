#!/usr/bin/env python3
"""Summarise pageable-out leases (watch.csv): per size, the medians over the leases of each kind's
median call time; the pinned copy's excess into lines the CPU has just read or written over the
back-to-back one, per MiB; the pageable copy less the pinned-into-read-lines copy, and the CPU's
copy-out rate and start from the watched timeline (least squares over its pieces).

Usage: summarize.py LEASE_DIR [LEASE_DIR ...]   (each holding watch.csv or watch.csv.gz)"""
import csv
import gzip
import os
import statistics
import sys


def load(d):
    kinds, pieces = {}, {}
    path = os.path.join(d, "watch.csv")
    # Committed leases are gzipped (tests/scripts/test_tree_size.py); run.sh writes it plain.
    f = open(path) if os.path.exists(path) else gzip.open(path + ".gz", "rt")
    for r in csv.DictReader(f):
        n = int(r["bytes"])
        if r["kind"] == "piece":
            if r["p50_us"]:
                pieces.setdefault(n, []).append((int(r["offset_bytes"]), float(r["p50_us"])))
        else:
            kinds[(r["kind"], n)] = float(r["p50_us"])
    return kinds, pieces


def fit(points):
    """Least squares t = a + offset / rate: (start of the copy-out in us, rate in GB/s)."""
    xs = [o for o, _ in points]
    ys = [t for _, t in points]
    mx, my = statistics.fmean(xs), statistics.fmean(ys)
    sxx = sum((x - mx) ** 2 for x in xs)
    if sxx == 0:
        return None
    b = sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sxx  # us per byte
    return my - b * mx, 1e-3 / b


def main():
    dirs = sys.argv[1:]
    if not dirs:
        sys.exit(__doc__)
    data = [load(d) for d in dirs]
    print(f"{len(dirs)} lease(s): " + ", ".join(os.path.basename(os.path.normpath(d)) for d in dirs))
    kinds = ["pinned", "pinned_norefill", "pinned_flushed", "pinned_read", "pinned_written",
             "pageable", "pageable_norefill", "pageable_watched", "pageable_read", "pageable_flushed", "pageable_h2d"]
    sizes = sorted({n for k, _ in data for (_, n) in k})
    kinds = [kind for kind in kinds if any((kind, n) in k for k, _ in data for n in sizes)]
    med = lambda v: statistics.median(v) if v else float("nan")
    print("medians over the leases (us):")
    print("     bytes " + " ".join(f"{k:>17}" for k in kinds))
    for n in sizes:
        print(f"{n:>10} " + " ".join(f"{med([k[(kind, n)] for k, _ in data if (kind, n) in k]):17.2f}" for kind in kinds))
    # Per lease: the CPU's copy out of a staging buffer (the watched copy-out's rate, 128-512 KiB,
    # one piece) against the pageable copy into the GPU's growth from 256 KiB to 1 MiB (staged in
    # 64 KiB pieces), where measured.
    print("\nper lease: copy-out rate (watched, 128/256/512 KiB) and the copy into the GPU's growth, GB/s")
    for d, (k, p) in zip(dirs, data):
        out = [fit(p[n])[1] for n in (131072, 262144, 524288) if len(p.get(n, [])) >= 2]
        line = f"  {os.path.basename(os.path.normpath(d))}: copy-out " + "/".join(f"{r:.2f}" for r in out)
        if ("pageable_h2d", 262144) in k and ("pageable_h2d", 1048576) in k:
            g = (1048576 - 262144) / (k[("pageable_h2d", 1048576)] - k[("pageable_h2d", 262144)]) / 1e3
            line += f"; into the GPU 256 KiB-1 MiB {g:.2f}, {g / statistics.median(out):.2f} of the copy-out"
        print(line)
    print("\npinned into lines the CPU has just read / written, over back to back: us, and us a MiB")
    for n in sizes:
        rd = [k[("pinned_read", n)] - k[("pinned", n)] for k, _ in data]
        wr = [k[("pinned_written", n)] - k[("pinned", n)] for k, _ in data]
        mib = n / 2**20
        print(f"{n:>10}: read {med(rd):+7.2f} ({med(rd) / mib:6.1f}/MiB, leases {min(rd):+.2f}..{max(rd):+.2f})"
              f"   written {med(wr):+7.2f} ({med(wr) / mib:6.1f}/MiB)")
    print("\npageable (back to back) less pinned into just-read lines, and the watched copy-out: start, rate (least squares)")
    for n in sizes:
        rest = [k[("pageable", n)] - k[("pinned_read", n)] for k, _ in data]
        fits = [fit(p[n]) for _, p in data if len(p.get(n, [])) >= 2]
        fits = [f for f in fits if f]
        line = f"{n:>10}: pageable - pinned_read {med(rest):7.2f} us"
        if fits:
            line += (f"; copy-out from {med([f[0] for f in fits]):7.2f} us at {med([f[1] for f in fits]):5.2f} GB/s"
                     f" (leases {min(f[1] for f in fits):.2f}..{max(f[1] for f in fits):.2f});"
                     f" watched {med([k[('pageable_watched', n)] for k, _ in data]):.2f} us")
        print(line)


if __name__ == "__main__":
    main()
