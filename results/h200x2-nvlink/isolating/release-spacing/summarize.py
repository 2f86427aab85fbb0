#!/usr/bin/env python3
"""Quantiles of each case's intervals per GPU: summarize.py spacing.csv... > summary.txt"""
import collections
import csv
import sys


def q(v, p):
    v = sorted(v)
    return v[min(len(v) - 1, int(p * (len(v) - 1) + 0.5))]


def main():
    if len(sys.argv) < 2:
        sys.exit("usage: summarize.py spacing.csv... > summary.txt")
    for path in sys.argv[1:]:
        print(f"## {path}")
        cells = collections.defaultdict(lambda: ([], []))
        with open(path, newline="") as f:
            for r in csv.DictReader(f):
                c = cells[(r["case"], r["gpu"])]
                c[0].append(float(r["first_us"]))
                c[1].append(float(r["second_us"]))
        for (case, gpu), (a, b) in cells.items():
            line = f"{case:8s} GPU {gpu}: p10 {q(a, 0.1):5.2f} p50 {q(a, 0.5):5.2f} p90 {q(a, 0.9):5.2f} us"
            if case == "rrr":
                line += f"; C - B p10 {q(b, 0.1):5.2f} p50 {q(b, 0.5):5.2f} p90 {q(b, 0.9):5.2f} us"
            print(line + f" ({len(a)} repetitions)")
        print()


if __name__ == "__main__":
    main()
