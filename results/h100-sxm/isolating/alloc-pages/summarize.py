#!/usr/bin/env python3
"""Summarise alloc-pages leases: per lease, what each case costs a MiB at 2-4 MiB and at 24 MiB
and more (medians over those sizes), the rise a page, and the cache and cold cost a page that fit
the lease's cudaMallocHost curve best (least squares in log, over a grid).

Usage: summarize.py LEASE_DIR... > summary.txt
"""
import csv
import math
import statistics
import sys

PAGE = 4096
MIB = 1 << 20


def kept_share(extent, cache):
    """The share of a repeated working set of `extent` bytes that a cache of `cache` bytes, which
    replaces lines at random, keeps: h = exp(-(E/C)(1 - h)) for E > C (the model's
    io_cache_kept_share)."""
    if cache <= 0:
        return 0.0
    if extent <= cache:
        return 1.0
    r = extent / cache
    lo, hi = 0.0, 1.0 - math.log(r) / r
    for _ in range(60):
        mid = 0.5 * (lo + hi)
        if mid - math.exp(-r * (1.0 - mid)) < 0.0:
            lo = mid
        else:
            hi = mid
    return 0.5 * (lo + hi)


def fit_curve(points):
    """Best (rms log error, cache MiB, fixed us, per page us, cold per page us) over a grid."""
    best = None
    for cache in (1, 2, 3, 4, 5, 6, 8, 10, 12, 16, 24, 32, 48):
        shares = [(s, m, math.ceil(s / PAGE), kept_share(s, cache * MIB)) for s, m in points]
        for fixed in range(0, 401, 25):
            for per_page in (x / 100 for x in range(40, 250, 2)):
                for cold in (x / 100 for x in range(0, 121, 2)):
                    err = math.sqrt(statistics.fmean(
                        math.log((fixed + pages * (per_page + (1 - h) * cold)) / m) ** 2 for s, m, pages, h in shares))
                    if best is None or err < best[0]:
                        best = (err, cache, fixed, per_page, cold)
    return best


def main(dirs):
    print("per lease: us a MiB, median over 2-4 MiB -> over 24 MiB and more; the rise a 4 KiB page")
    rises = {}
    for d in dirs:
        rows = list(csv.DictReader(open(f"{d}/alloc.csv")))
        name = d.rstrip("/").split("/")[-1]
        print(name)
        for case in ("mallochost", "fault", "populate", "rewrite", "register", "freehost"):
            per_mib = {int(r["size_bytes"]): float(r["median_us"]) / (int(r["size_bytes"]) / MIB)
                       for r in rows if r["case"] == case}
            small = statistics.median(v for s, v in per_mib.items() if s <= 4 * MIB)
            large = statistics.median(v for s, v in per_mib.items() if s >= 24 * MIB)
            rise = (large - small) / (MIB / PAGE)
            rises.setdefault(case, []).append(rise)
            curve = " ".join(f"{s // MIB}:{v:.0f}" for s, v in sorted(per_mib.items()))
            print(f"  {case:10s} {small:6.1f} -> {large:6.1f} us/MiB, rise {rise:+.3f} us a page   [{curve}]")
        points = [(int(r["size_bytes"]), float(r["median_us"])) for r in rows if r["case"] == "mallochost"]
        err, cache, fixed, per_page, cold = fit_curve(points)
        print(f"  mallochost fit: cache {cache} MiB, fixed {fixed} us, {per_page:.2f} us a page, "
              f"{cold:.2f} us more a page out of the cache (rms log error {err:.3f})")
    print("median over leases of the rise a page:",
          ", ".join(f"{c} {statistics.median(v):+.3f} us" for c, v in rises.items()))


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    main(sys.argv[1:])
