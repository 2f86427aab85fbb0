#!/usr/bin/env python3
"""Does dmaprobe's rewrite of the copy's device source before each repetition set where the gated
pair falls? For each lease folder with both reps.csv and reps-fill.csv (overlap.cu `reps` and
`reps-fill`), the median over the repetitions of the pair, the copy into the GPU and the copy out
of it, per size, without and with the rewrite (a fill kernel and a synchronisation before the
repetition's calls, as dmaprobe's CudaBackend::device_fill), and the share of repetitions whose
copy out of the GPU ends first. Standard library only.
Usage: fill_summary.py LEASE_DIR..."""
import os
import statistics

from repsio import cli, read_rows


def main(dirs):
    for d in dirs:
        print(f"== {d}")
        both = [os.path.join(d, f) for f in ("reps.csv", "reps-fill.csv")]
        if not all(os.path.exists(p) for p in both):
            print("  (needs reps.csv and reps-fill.csv)")
            continue
        runs = [read_rows(p, "fill_summary.py") for p in both]
        for n in sorted({int(r["bytes"]) for r in runs[0]}):
            parts = []
            for label, rows in zip(("as reps", "source rewritten"), runs):
                g = [r for r in rows if int(r["bytes"]) == n]
                med = lambda k: statistics.median(float(r[k]) for r in g)
                first = sum(1 for r in g if float(r["d2h_us"]) < float(r["h2d_us"])) / len(g)
                parts.append(f"{label}: pair {med('interval_us'):6.2f} into {med('h2d_us'):6.2f} out {med('d2h_us'):6.2f} "
                             f"(out first {100 * first:3.0f} %)")
            print(f"  {n:>8} " + " | ".join(parts))


if __name__ == "__main__":
    cli(main, __doc__)
