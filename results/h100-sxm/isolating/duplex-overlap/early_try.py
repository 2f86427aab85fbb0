#!/usr/bin/env python3
"""Does the stop event follow the rule "the first stream's wait is tried as its copy goes, then
every poll period"? Repetition by repetition, from `overlap reps`' reps.csv.

Usage: early_try.py LEASE_DIR [LEASE_DIR ...]  (writes to stdout; early-try.txt is its output)

For each repetition, with the copy into the GPU ending at h and the one out of it at d (µs after
the start event), the rule gives the stop event at max(h, t) + HANDOFF, where t is the first of
the tries g, g + P, g + 2P, ... at or after d + LAG, g = h - OWN the copy into the GPU's going
(P = 8.08 us, runtime.poll_period; HANDOFF = 1.31 us, the stop's handoff behind a satisfied wait
in reps-order.txt). Per lease and size, OWN (the copy's own time from its going, 0.25 us steps)
and LAG (0-4 us) are those that put the most repetitions within 0.5 us of the measured stop; an
OWN differs from the copy's own time by whole periods only (g moves the tries by P). Standard
library only.
"""
import math
import os
import statistics
import sys

from repsio import read_rows

PERIOD = 8.08
HANDOFF = 1.31


def predicted(h, d, own, lag):
    go = h - own
    seen = d + lag
    tried = go if seen <= go else go + PERIOD * math.ceil((seen - go) / PERIOD)
    return max(tried, h) + HANDOFF


def main(dirs):
    for d in dirs:
        rows = read_rows(os.path.join(d, "reps.csv"), "early_try.py")
        print(f"== {os.path.basename(os.path.normpath(d))}")
        for size in sorted({int(r["bytes"]) for r in rows}):
            sel = [r for r in rows if int(r["bytes"]) == size]
            h = [float(r["h2d_us"]) for r in sel]
            dd = [float(r["d2h_us"]) for r in sel]
            s = [float(r["interval_us"]) for r in sel]
            best = None
            for lag in [0.25 * i for i in range(17)]:
                for own in [0.25 * i for i in range(4, 140)]:
                    err = [abs(predicted(a, b, own, lag) - c) for a, b, c in zip(h, dd, s)]
                    within = sum(e < 0.5 for e in err) / len(err)
                    if best is None or within > best[0]:
                        best = (within, own, lag, statistics.median(err),
                                statistics.median(predicted(a, b, own, lag) for a, b in zip(h, dd)))
            within, own, lag, med, pred = best
            print(f"  {size:>8}: own {own:5.2f} us (mod P {own % PERIOD:4.2f}), lag {lag:4.2f} us: {100 * within:3.0f} % of "
                  f"{len(sel)} within 0.5 us, median |error| {med:4.2f} us; stop median measured {statistics.median(s):6.2f}, "
                  f"by the rule {pred:6.2f}")


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__.strip().splitlines()[3])
    main(sys.argv[1:])
