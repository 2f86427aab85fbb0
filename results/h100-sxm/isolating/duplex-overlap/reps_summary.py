#!/usr/bin/env python3
"""Quantiles and a 1-us histogram of each column of reps.csv (overlap.cu reps), per size: where the
repetitions of dmaprobe's gated pair fall within one machine; and, where reps.csv has the CPU's
times to the gate (all but the first version), their p10-p90 and each copy's correlation with
them over the repetitions without a CPU stall (more than 1 us past the p90). Usage:
reps_summary.py REPS_CSV. Standard library only."""
import csv
import sys


def correlation(pairs):
    n = len(pairs)
    mx = sum(x for x, _ in pairs) / n
    my = sum(y for _, y in pairs) / n
    num = sum((x - mx) * (y - my) for x, y in pairs)
    den = (sum((x - mx) ** 2 for x, _ in pairs) * sum((y - my) ** 2 for _, y in pairs)) ** 0.5
    return num / den if den > 0 else 0.0


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: reps_summary.py REPS_CSV")
    try:
        with open(sys.argv[1], newline="") as f:
            rows = list(csv.DictReader(f))
    except OSError as e:
        sys.exit(f"reps_summary.py: {sys.argv[1]}: {e.strerror}")
    for n in sorted({int(r["bytes"]) for r in rows}):
        rr = [r for r in rows if int(r["bytes"]) == n]
        for col in ("h2d_us", "d2h_us", "interval_us"):
            v = sorted(float(r[col]) for r in rr)
            q = lambda p: v[int(p * (len(v) - 1))]
            lo = int(v[0])
            hist = [0] * (int(v[-1]) + 1 - lo)
            for x in v:
                hist[int(x) - lo] += 1
            print(f"{n:8d} {col:12s} p10 {q(.1):6.2f} p25 {q(.25):6.2f} median {q(.5):6.2f} p75 {q(.75):6.2f} p90 {q(.9):6.2f}"
                  f" | repetitions per us from {lo} us: {' '.join(str(h) for h in hist)}")
        if "d2h_call_to_gate_us" not in rr[0]:
            continue
        for copy, cpu in (("d2h_us", "d2h_call_to_gate_us"), ("h2d_us", "stop_start_to_gate_us")):
            xs = [float(r[cpu]) for r in rr]
            ys = [float(r[copy]) for r in rr]
            s = sorted(xs)
            p10, p90 = s[len(s) // 10], s[len(s) * 9 // 10]
            keep = [(x, y) for x, y in zip(xs, ys) if x <= p90 + 1.0]
            print(f"{n:8d} {cpu:22s} p10 {p10:6.2f} p90 {p90:6.2f} us ({len(xs) - len(keep)} stalls);"
                  f" correlation with {copy}: {correlation(keep):+.2f}")


if __name__ == "__main__":
    main()
