#!/usr/bin/env python3
"""Does the copy out of the GPU end a fixed time after its own call, whatever the calls after it
cost? From `overlap alone`'s alone.csv (the copy out of the GPU alone, `d2h_only`): per lease and
size, the median of the copy's end after the start event (d2h_us), of the CPU's time from the
copy's call returning to its store to the gate's flag (d2h_call_to_gate_us), and of their sum, the
copy's end after its own call on one clock if the start event follows the gate's store by a fixed
time. If the copy's channel counts its tries from its own call (../duplex-phase-anchor), the sum
stays put across leases while each part moves with the calls' CPU time; with the event records'
median call time from alone-calls.csv, which sorts the hosts into fast and slow ones.

Usage: anchor_check.py LEASE_DIR [LEASE_DIR ...]  (writes to stdout; anchor-check.txt is its output)
Standard library only.
"""
import os
import statistics

from repsio import cli, read_rows


def main(dirs):
    sums = {}
    print(f"{'lease':>10} {'record call':>11} {'bytes':>7} {'d2h end':>8} {'call to gate':>12} {'sum':>6}  (us, medians)")
    for d in dirs:
        name = os.path.basename(os.path.normpath(d))
        calls = {r["call"]: float(r["median_us"]) for r in read_rows(os.path.join(d, "alone-calls.csv"), "anchor_check.py")}
        rows = read_rows(os.path.join(d, "alone.csv"), "anchor_check.py")
        for size in sorted({int(r["bytes"]) for r in rows}):
            sel = [r for r in rows if int(r["bytes"]) == size and r["shape"] == "d2h_only"]
            if not sel:
                continue
            end = statistics.median(float(r["d2h_us"]) for r in sel)
            to_gate = statistics.median(float(r["d2h_call_to_gate_us"]) for r in sel)
            sums.setdefault(size, []).append((end, to_gate, end + to_gate))
            print(f"{name[-8:]:>10} {calls.get('event_record', float('nan')):11.2f} {size:7d} {end:8.2f} {to_gate:12.2f} {end + to_gate:6.2f}")
    for size, v in sorted(sums.items()):
        ends, gates, s = zip(*v)
        print(f"{size:7d} over {len(v)} leases: d2h end {min(ends):.2f}-{max(ends):.2f}, call to gate {min(gates):.2f}-{max(gates):.2f}, "
              f"sum {min(s):.2f}-{max(s):.2f} (median {statistics.median(s):.2f})")


if __name__ == "__main__":
    cli(main, __doc__)
