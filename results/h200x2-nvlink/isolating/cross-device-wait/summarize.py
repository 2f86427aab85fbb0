#!/usr/bin/env python3
"""Writes summary.csv beside this file from the leases' xdwait.csv and pipeline.csv (h100x2/*/ and h200/*/xdwait.csv): the
cross-device wait (half a ping-pong round trip between the GPUs' streams), and the CPU's time in
a staged cudaMemcpyPeerAsync: its median over copies of one or two 512 KiB pieces, and its
growth per further piece. Usage: summarize.py (standard library only)."""
import csv
import glob
import os
import statistics

HERE = os.path.dirname(os.path.abspath(__file__))
PIECE = 512 * 1024
rows = []
waits, calls, slopes = [], [], []
for path in sorted(glob.glob(os.path.join(HERE, "h*", "*", "xdwait.csv"))):
    lease = os.path.basename(os.path.dirname(path))
    r = list(csv.DictReader(open(path)))
    get = lambda t, v, b=0: next(float(x["median"]) for x in r if x["test"] == t and x["variant"] == v and int(x["bytes"]) == b)
    wait = get("pingpong", "cross_gpu") / 2
    waits.append(wait)
    rows.append((lease, "cross_device_wait_us", f"{wait:.4f}", "half the cross-GPU ping-pong round trip"))
    rows.append((lease, "same_device_wait_us", f"{get('pingpong', 'same_gpu') / 2:.4f}", "half the same-GPU round trip"))
    call = {int(x["bytes"]): float(x["median"]) for x in r if x["test"] == "staged" and x["variant"] == "call"}
    events = {int(x["bytes"]): float(x["median"]) for x in r if x["test"] == "staged" and x["variant"] == "events"}
    rows.append((lease, "staged_64KiB_events_less_call_us", f"{events[64 * 1024] - call[64 * 1024]:.4f}",
                 "a one-piece staged copy's event interval less its call's CPU time"))
    calls += [call[b] for b in call if b <= 2 * PIECE]
    pieces = {b: max(1, b // PIECE) for b in call}
    for a, b in ((2 * PIECE, 8 * PIECE), (8 * PIECE, 32 * PIECE), (2 * PIECE, 32 * PIECE)):
        s = (call[b] - call[a]) / (pieces[b] - pieces[a])
        if (a, b) == (2 * PIECE, 32 * PIECE):
            slopes.append(s)
        rows.append((lease, f"staged_call_us_per_piece_{pieces[a]}_to_{pieces[b]}", f"{s:.4f}", "growth of the call's CPU time"))
# The acquire: a pipeline by hand with a buffer per piece, where every piece into the destination
# waits behind the one before and finds its own dependency met (pipeline.csv), against the same
# pieces back to back.
for path in sorted(glob.glob(os.path.join(HERE, "h*", "*", "pipeline.csv"))):
    lease = os.path.basename(os.path.dirname(path))
    r = {(x["test"], x["variant"], x["buffers"]): float(x["us_per_piece_median"]) for x in csv.DictReader(open(path))}
    if ("pipeline", "by_hand", "64") in r:
        acquire = r[("pipeline", "by_hand", "64")] - r[("chain", "h2d", "1")]
        rows.append((lease, "cross_device_acquire_us", f"{acquire:.4f}", "pipeline, a buffer a piece, less the back-to-back pieces"))
rows.append(("all", "cross_device_wait_us", f"{statistics.median(waits):.4f}", "median of the leases"))
rows.append(("all", "staged_call_us", f"{statistics.median(calls):.4f}", "median over 64 KiB-1 MiB, every lease"))
rows.append(("all", "staged_call_us_per_piece", f"{statistics.median(slopes):.4f}", "median of the leases' 2-to-32-piece slopes"))
with open(os.path.join(HERE, "summary.csv"), "w", newline="") as f:
    w = csv.writer(f)
    w.writerow(["lease", "quantity", "value", "note"])
    w.writerows(rows)
