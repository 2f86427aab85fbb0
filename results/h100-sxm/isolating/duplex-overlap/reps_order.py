#!/usr/bin/env python3
"""What the stop event of dmaprobe's gated pair follows, repetition by repetition (reps.csv of
overlap.cu reps): the repetitions split by which copy's end event came first, and for each group
the stop event's time after the copy into the GPU's end (I - h) and after the copy out of it's
(I - d), median with p10 and p90. Usage: reps_order.py REPS_CSV... Standard library only."""
import statistics
import sys

from repsio import quantile, read_rows


def main():
    if len(sys.argv) < 2:
        sys.exit("usage: reps_order.py REPS_CSV...")
    for path in sys.argv[1:]:
        rows = read_rows(path, "reps_order.py")
        print(f"== {path}")
        for n in sorted({int(r["bytes"]) for r in rows}):
            for first, test in (("d2h ends first", lambda h, d: d < h), ("h2d ends first", lambda h, d: d >= h)):
                g = [(float(r["interval_us"]), float(r["h2d_us"]), float(r["d2h_us"])) for r in rows
                     if int(r["bytes"]) == n and test(float(r["h2d_us"]), float(r["d2h_us"]))]
                if not g:
                    continue
                ih = [i - h for i, h, _ in g]
                idd = [i - d for i, _, d in g]
                print(f"  {n:>8} {first}: {len(g):3d} of {sum(1 for r in rows if int(r['bytes']) == n)}, "
                      f"stop - h2d end {statistics.median(ih):5.2f} us (p10 {quantile(ih, 0.1):5.2f}, p90 {quantile(ih, 0.9):5.2f}), "
                      f"stop - d2h end {statistics.median(idd):5.2f} (p10 {quantile(idd, 0.1):5.2f}, p90 {quantile(idd, 0.9):5.2f}), "
                      f"stop {statistics.median(i for i, _, _ in g):5.2f}")


if __name__ == "__main__":
    main()
