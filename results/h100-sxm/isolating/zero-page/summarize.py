#!/usr/bin/env python3
"""zero-page (README.md): per lease, what a never-touched source costs a pageable copy into the GPU.

Usage: summarize.py LEASE_DIR [LEASE_DIR ...]   (each holding zeropage.csv)

Prints, per size: the read fault a page (fresh - zero), what the fresh source costs more than an
old one a page (fresh - warm, what dmaprobe's pageable-fresh rows less its pageable rows give), the
staged copy's rate from the zero page and from an old source; the zero page's rate as the copy grows
(between two sizes, where the copy's fixed costs cancel); out of the GPU the write fault a page
(fresh - warm, fresh - touched); and one thread's memcpy alone. Standard library only.
"""
import csv
import os
import statistics
import sys

MIB = 1 << 20
PAGE = 4096


def load(lease):
    with open(os.path.join(lease, "zeropage.csv")) as f:
        return {(r["what"], int(r["bytes"]), r["state"]): float(r["us_median"]) for r in csv.DictReader(f)}


def size_text(n):
    return f"{n // MIB} MiB" if n >= MIB else f"{n >> 10} KiB"


def cells(values, fmt="{:.3f}"):
    return " ".join(fmt.format(v) for v in values) + " | median " + fmt.format(statistics.median(values))


def main(leases):
    runs = [load(lease) for lease in leases]
    print("leases:", " ".join(os.path.basename(os.path.normpath(x)) for x in leases))
    sizes = sorted({k[1] for k in runs[0] if k[0] == "h2d"})
    faults = []
    print("\ninto the GPU, us a 4 KiB page: read fault (fresh - zero) | fresh - warm; staged copy GB/s: zero page | old source")
    for n in sizes:
        pages = n / PAGE
        fz = [(r["h2d", n, "fresh"] - r["h2d", n, "zero"]) / pages for r in runs]
        fw = [(r["h2d", n, "fresh"] - r["h2d", n, "warm"]) / pages for r in runs]
        gz = [n / r["h2d", n, "zero"] / 1e3 for r in runs]
        gw = [n / r["h2d", n, "warm"] / 1e3 for r in runs]
        faults += fz
        print(f"  {size_text(n):>8}: {cells(fz)} || {cells(fw)} || {cells(gz, '{:.1f}')} / {cells(gw, '{:.1f}')}")
    print(f"  read fault, median over leases and sizes: {statistics.median(faults):.3f} us a page ({len(faults)} cells, "
          f"{min(faults):.3f}-{max(faults):.3f})")
    print("\nthe staged copy's growth from the zero page between sizes, GB/s (old source: 4 -> 16 MiB)")
    growth = []
    for a, b in ((4, 16), (16, 64), (4, 64), (64, 256)):
        g = [(b - a) * MIB / (r["h2d", b * MIB, "zero"] - r["h2d", a * MIB, "zero"]) / 1e3 for r in runs]
        if (a, b) == (4, 64):
            growth = g
        print(f"  {a:>3} -> {b:>3} MiB: {cells(g, '{:.2f}')}")
    old = [12 * MIB / (r["h2d", 16 * MIB, "warm"] - r["h2d", 4 * MIB, "warm"]) / 1e3 for r in runs]
    print(f"  old source 4 -> 16 MiB: {cells(old, '{:.2f}')}")
    print(f"  zero page 4 -> 64 MiB, median: {statistics.median(growth):.2f} GB/s (cpu.zero_page_bandwidth)")
    print("\nout of the GPU, us a 4 KiB page: write fault (fresh - warm) | (fresh - touched)")
    writes = []
    for n in sorted({k[1] for k in runs[0] if k[0] == "d2h"}):
        pages = n / PAGE
        fw = [(r["d2h", n, "fresh"] - r["d2h", n, "warm"]) / pages for r in runs]
        ft = [(r["d2h", n, "fresh"] - r["d2h", n, "touched"]) / pages for r in runs]
        writes += fw
        print(f"  {size_text(n):>8}: {cells(fw)} || {cells(ft)}")
    print(f"  write fault (fresh - warm), median over leases and sizes: {statistics.median(writes):.3f} us a page "
          f"({len(writes)} cells, {min(writes):.3f}-{max(writes):.3f}); with page-faults' freshcopy leases: cpu.first_touch_write")
    print("\none thread's memcpy alone into a warm buffer, GB/s: zero page | old source")
    for n in sorted({k[1] for k in runs[0] if k[0] == "memcpy"}):
        z = [n / r["memcpy", n, "zero"] / 1e3 for r in runs]
        w = [n / r["memcpy", n, "warm"] / 1e3 for r in runs]
        print(f"  {size_text(n):>8}: {cells(z, '{:.1f}')} || {cells(w, '{:.1f}')}")


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    main(sys.argv[1:])
