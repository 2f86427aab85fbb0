#!/usr/bin/env python3
"""Summarises inline-copy leases: per lease (the median of its runs) and per size and source,
the call's CPU time, the GPU's side after it, their sum, and the blocking copies each way (us);
then least-squares slopes from 4 to 24 KiB (GB/s), and the carried 4 KiB copy against the
28 KiB one an engine reads.

Usage: summarize.py [LEASES_DIR]   (default: leases/ beside this script)"""
import csv
import statistics
import sys
from pathlib import Path


def read_lease(d):
    runs = sorted(d.glob("inlinecopy-*.csv"))
    if not runs:
        return None
    cells = {}
    for run in runs:
        with open(run, newline="") as f:
            for r in csv.DictReader(f):
                key = (int(r["bytes"]), r["source"], r["what"])
                cells.setdefault(key, []).append(float(r["median_us"]))
    return {k: statistics.median(v) for k, v in cells.items()}


def slope_gbps(points):
    xs = [b for b, _ in points]
    ys = [t for _, t in points]
    mx, my = statistics.mean(xs), statistics.mean(ys)
    sxx = sum((x - mx) ** 2 for x in xs)
    if sxx == 0:
        return float("nan")
    us_per_byte = sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sxx
    return float("inf") if us_per_byte <= 0 else 1e-3 / us_per_byte


def main():
    root = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).resolve().parent / "leases"
    leases = sorted(p for p in root.iterdir() if p.is_dir())
    if not leases:
        sys.exit(f"summarize.py: no lease folders in {root}")
    for d in leases:
        cells = read_lease(d)
        if cells is None:
            continue
        print(f"## {d.name} (us, medians of {len(list(d.glob('inlinecopy-*.csv')))} runs)")
        extra = (4096, "clean", "async_sync") in cells or (4096, "flushed", "async_sync") in cells
        print("bytes source   call    gpu    sum  blocking  blocking_d2h" + ("  async_call  async_sync" if extra else ""))
        sizes = sorted({k[0] for k in cells})
        sources = [x for x in ("flushed", "dirty", "clean") if (4096, x, "call") in cells]
        for source in sources:
            for b in sizes:
                c, g = cells[(b, source, "call")], cells[(b, source, "gpu")]
                line = (f"{b:6d} {source:7s} {c:6.2f} {g:6.2f} {c + g:6.2f} {cells[(b, source, 'blocking')]:8.2f}"
                        f" {cells[(b, source, 'blocking_d2h')]:12.2f}")
                if extra:
                    line += f" {cells[(b, source, 'async_call')]:11.2f} {cells[(b, source, 'async_sync')]:11.2f}"
                print(line)
        for source in sources:
            carried = [b for b in sizes if 4096 <= b <= 24576]
            parts = []
            for what in ("call", "sum", "blocking") + (("async_sync",) if extra else ()):
                pts = []
                for b in carried:
                    t = cells[(b, source, "call")] + cells[(b, source, "gpu")] if what == "sum" else cells[(b, source, what)]
                    pts.append((b, t))
                parts.append(f"{what} {slope_gbps(pts):.1f}")
            four, engine = cells[(4096, source, "blocking")], cells[(28672, source, "blocking")]
            print(f"# {source}: 4-24 KiB least squares (GB/s): {', '.join(parts)};"
                  f" blocking 4 KiB carried {four:.2f} against 28 KiB read by an engine {engine:.2f}")
        print()


if __name__ == "__main__":
    main()
