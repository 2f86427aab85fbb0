#!/usr/bin/env python3
"""What a blocking copy costs beyond the `loop` mode (the copy before it on its engine its own
stream's), per mode, run and lease, and the turn (dma.channel_turn): the median of the
differences where the engine's last copy was another stream's (`other` and `other64` out of the
GPU, `other64` and `other_then_same` into it from 64 KiB).
    summarize.py [LEASES_DIR]   (default: leases/ beside this script)"""
import csv
import glob
import os
import statistics
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def turned(direction, size, mode):
    if direction == "d2h":
        return mode in ("other", "other64")
    return size >= 65536 and mode in ("other64", "other_then_same")


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(HERE, "leases")
    turns, others = [], []
    for path in sorted(glob.glob(os.path.join(root, "*", "engineturn-*.csv"))):
        rows = list(csv.DictReader(open(path)))
        loop = {(r["dir"], int(r["size"])): float(r["median_us"]) for r in rows if r["mode"] == "loop"}
        print(os.path.relpath(path, root))
        for r in rows:
            key = (r["dir"], int(r["size"]))
            if r["mode"] == "loop":
                print(f"  {key[0]} {key[1]:>8} loop {loop[key]:7.3f} us")
                continue
            d = float(r["median_us"]) - loop[key]
            t = turned(key[0], key[1], r["mode"])
            (turns if t else others).append(d)
            print(f"  {key[0]} {key[1]:>8} {r['mode']:<16} {d:+.3f}{'  (turn)' if t else ''}")
    memset, copies = [], []
    for path in sorted(glob.glob(os.path.join(root, "*", "memsetturn-*.csv"))):
        rows = list(csv.DictReader(open(path)))
        base = {(r["dir"], int(r["size"])): float(r["median_us"]) for r in rows if r["mode"] == "kernel"}
        print(os.path.relpath(path, root), "(the timed copy on another stream; each mode less `kernel`)")
        for r in rows:
            key = (r["dir"], int(r["size"]))
            if r["mode"] == "kernel":
                continue
            d = float(r["median_us"]) - base[key]
            {"memset": memset, "copy": copies}.get(r["mode"], []).append(d)
            print(f"  {key[0]} {key[1]:>8} {r['mode']:<10} {d:+.3f}")
    if memset:
        print(f"memsetturn: cudaMemset before the copy {len(memset)} differences, median {statistics.median(memset):+.3f} us "
              f"({min(memset):+.3f} to {max(memset):+.3f}); a copy on the legacy stream {statistics.median(copies):+.3f} "
              f"({min(copies):+.3f} to {max(copies):+.3f})")
    for path in sorted(glob.glob(os.path.join(root, "*", "queuedturn-*.csv"))):
        rows = {(r["dir"], r["mode"]): r for r in csv.DictReader(open(path))}
        print(os.path.relpath(path, root), "(the small copy's end after the long one's, queued behind it)")
        for d in ("d2h", "h2d"):
            same, other = float(rows[(d, "same")]["y_after_x_us"]), float(rows[(d, "other")]["y_after_x_us"])
            print(f"  {d} own stream {same:.3f} us, another stream {other:.3f}: {other - same:+.3f}")
    print(f"turn: {len(turns)} differences, median {statistics.median(turns):.3f} us, "
          f"range {min(turns):.3f} to {max(turns):.3f}")
    print(f"no turn: {len(others)} differences, median {statistics.median(others):+.3f} us, "
          f"range {min(others):+.3f} to {max(others):+.3f}")


if __name__ == "__main__":
    main()
