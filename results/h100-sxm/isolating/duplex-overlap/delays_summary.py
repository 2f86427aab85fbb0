#!/usr/bin/env python3
"""The gated pair averaged over where the polls put it: for each lease folder, the mean over the
host delays D of each shape's pair, copy into the GPU and copy out of it (overlap.csv,
overlap-large.csv, growth.csv of overlap.cu), per size, with the pair's range over D. The model
reports the mean over the gate's phases against the channels' polls, which is this mean when D
spans a poll period evenly. Standard library only.
Usage: delays_summary.py LEASE_DIR..."""
import statistics

from repsio import cli, delay_cells


def main(dirs):
    for d in dirs:
        print(f"== {d}")
        cells = delay_cells(d, "delays_summary.py")
        if not cells:
            print("  (no overlap.csv, overlap-large.csv or growth.csv)")
        for (n, shape, name) in sorted(cells, key=lambda k: (k[0], ("both", "d2h_only", "h2d_only").index(k[1]), k[2])):
            rows = cells[(n, shape, name)]
            mean = lambda k: statistics.mean(float(r[k]) for r in rows)
            pairs = [float(r["interval_us"]) for r in rows]
            print(f"  {n:>9} {shape:<9} {name:<18} D {len(rows):2d} values: pair {mean('interval_us'):8.2f} us "
                  f"({min(pairs):.2f}-{max(pairs):.2f}), into the GPU {mean('h2d_us'):8.2f}, out of it {mean('d2h_us'):8.2f}")


if __name__ == "__main__":
    cli(main, __doc__)
