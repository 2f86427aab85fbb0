#!/usr/bin/env python3
"""landing.cu's mode tau, per lease: the 4 KiB copy out of the GPU's wait (its event interval less
alone) by where it starts against the copy into the GPU beside it (both on the GPU's clock, from
that copy's start event), and two summaries:

  plateau  the median wait where it starts at least 4 us after the other copy and at least 25 us
           before that copy ends (the other copy's window of reads out, as in its steady state);
  end      where it starts 3-12 us before the other copy ends (within its last window): the median
           of its end less the other copy's end, and of its wait.

    tau_summary.py LEASE_DIR [LEASE_DIR ...] > tau-summary.txt
"""
import csv
import statistics
import sys
from collections import defaultdict
from pathlib import Path


def main(dirs):
    for d in dirs:
        d = Path(d)
        reps = defaultdict(list)
        for r in csv.DictReader(open(d / "tau-ends.csv")):
            reps[(int(r["x_bytes"]), float(r["tau_us"]))].append(r)
        alone = statistics.median(float(r["out_event_us"]) for r in reps[(0, 0.0)])
        print(f"== {d.name}: the 4 KiB copy out of the GPU alone {alone:.2f} us (event interval)")
        for x in sorted({k[0] for k in reps if k[0] > 0}):
            plateau, end_gap, end_wait = [], [], []
            cells = []
            for tau in sorted(k[1] for k in reps if k[0] == x):
                rows = reps[(x, tau)]
                m = lambda c: statistics.median(float(r[c]) for r in rows)
                start, out_end, in_end = m("in_start_to_out_start_us"), m("in_start_to_out_end_us"), m("in_event_us")
                wait = m("out_event_us") - alone
                cells.append(f"{start:5.1f}:{wait:5.2f}/{out_end - in_end:+6.2f}")
                if start >= 4.0 and start <= in_end - 25.0:
                    plateau.append(wait)
                if in_end - 12.0 <= start <= in_end - 3.0:
                    end_gap.append(out_end - in_end)
                    end_wait.append(wait)
            print(f"  beside {x >> 20} MiB: plateau {statistics.median(plateau):.2f} us ({len(plateau)} cells, "
                  f"{min(plateau):.2f}-{max(plateau):.2f}); last window: ends {statistics.median(end_gap):+.2f} us "
                  f"from the other's end ({min(end_gap):+.2f}..{max(end_gap):+.2f}), waits {statistics.median(end_wait):.2f} "
                  f"({len(end_gap)} cells)")
            print("   start:wait/end-other's end  " + " ".join(cells))


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    main(sys.argv[1:])
