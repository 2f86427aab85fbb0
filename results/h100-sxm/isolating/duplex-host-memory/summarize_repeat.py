#!/usr/bin/env python3
"""Medians of `duplexmem repeat` (nothing flushed, as dmaprobe runs) per size: the duplex pair's
copies, what the pair moves together, each direction alone, and the share of the I/O cache's
lines a random cache of 40 MiB would evict at that size (docs/model.md, io_cache).

Usage: summarize_repeat.py repeat/*/repeat.csv"""
import csv
import math
import statistics
import sys


def evicted(extent_mib, cache_mib=40.0):
    r = extent_mib / cache_mib
    if r <= 1.0:
        return 0.0
    lo, hi = 0.0, 1.0 - math.log(r) / r
    for _ in range(60):
        mid = 0.5 * (lo + hi)
        if mid - math.exp(-r * (1.0 - mid)) < 0.0:
            lo = mid
        else:
            hi = mid
    return 1.0 - lo


def main(paths):
    if not paths:
        sys.exit(__doc__)
    print("lease,size_mib,duplex_h2d_us,duplex_d2h_us,pair_gbps,h2d_alone_gbps,d2h_alone_gbps,random_cache_evicted")
    for path in paths:
        lease = path.rstrip("/").split("/")[-2]
        rows = [r for r in csv.DictReader(open(path)) if r["label"] != "cpu-alone"]
        for n in sorted({int(r["size_bytes"]) for r in rows}):
            def med(label, key):
                return statistics.median(float(r[key]) for r in rows if r["label"] == label and int(r["size_bytes"]) == n)
            h, d = med("duplex", "h2d_us"), med("duplex", "d2h_us")
            h1, d1 = med("h2d", "h2d_us"), med("d2h", "d2h_us")
            print(f"{lease},{n >> 20},{h:.1f},{d:.1f},{2 * n / max(h, d) / 1e3:.1f},{n / h1 / 1e3:.1f},{n / d1 / 1e3:.1f},"
                  f"{evicted(n / 2**20):.3f}")


if __name__ == "__main__":
    main(sys.argv[1:])
