#!/usr/bin/env python3
"""How a pageable frame's copy slows with the idle time before it: the source of
cpu.cache_cooling_time and cpu.memcpy_bandwidth_cold (docs/model.md, the row on the CPU's caches
cooling between copies).

Usage:
  scripts/cooling_fit.py LEASE_DIR [LEASE_DIR ...] [--idle-wake-us 51.3] [--idle-wake-time-ms 10]

Each LEASE_DIR holds the measured.csv of results/*/isolating/pageable-frames/plan.txt (pageable
frames of 1 and 4 MiB released every 150 us to 16 ms; `dmaprobe --frame-wait sleep`). For each
lease it fits, per row's median frame T (us) of S MiB released every P us,

  T = c0 + S * warm + f * S * (cold - warm) + wake(idle),
  f = 1 - exp(-idle / tau),  idle = P - T,
  wake(idle) = idle_wake * (1 - exp(-idle / idle_wake_time))   (runtime.idle_wake: the GPU's and
                                                                 the core's own wake, in the model)

with warm and cold the copy's cost per MiB with every byte warm and every byte cold: linear least
squares for c0, warm and cold at each tau of a grid, the tau of the least rms log error kept. It
prints each lease's values and their median over the leases, the numbers the model takes.
Standard library only.
"""
import argparse
import csv
import math
import os
import statistics
import sys

MIB = 1 << 20


def load(lease_dir):
    """(size MiB, period us, median frame us) of the pageable rows of one lease."""
    rows = []
    with open(os.path.join(lease_dir, "measured.csv"), newline="") as f:
        for r in csv.DictReader(f):
            if r["variant"] or r["status"] != "ok" or not r["scenario"].startswith("pageable-"):
                continue
            period = r["scenario"].rsplit("-", 1)[1]
            period_us = float(period[:-2]) * (1000.0 if period.endswith("ms") else 1.0)
            rows.append((int(r["size_bytes"]) / MIB, period_us, float(r["time_us"])))
    if len(rows) < 5:
        sys.exit(f"{lease_dir}: {len(rows)} pageable frame rows; the fit needs at least 5")
    return rows


def solve(a, b):
    """Least squares a x = b by the normal equations (Gaussian elimination, partial pivoting)."""
    n = len(a[0])
    m = [[sum(r[i] * r[j] for r in a) for j in range(n)] + [sum(r[i] * y for r, y in zip(a, b))] for i in range(n)]
    for c in range(n):
        p = max(range(c, n), key=lambda r: abs(m[r][c]))
        if abs(m[p][c]) < 1e-12:
            return None
        m[c], m[p] = m[p], m[c]
        for r in range(n):
            if r != c:
                k = m[r][c] / m[c][c]
                m[r] = [x - k * y for x, y in zip(m[r], m[c])]
    return [m[i][n] / m[i][i] for i in range(n)]


def fit(rows, wake_us, wake_time_us):
    best = None
    for step in range(121):
        tau = 500.0 * (200.0 ** (step / 120))  # 0.5 to 100 ms
        design, target = [], []
        for s, p, t in rows:
            idle = max(p - t, 0.0)
            f = -math.expm1(-idle / tau)
            design.append([1.0, s * (1.0 - f), s * f])
            target.append(t - wake_us * -math.expm1(-idle / wake_time_us))
        x = solve(design, target)  # c0, warm, cold
        if x is None or min(x[1:]) <= 0:
            continue
        pred = [sum(a * b for a, b in zip(x, r)) + (t_meas - tgt)
                for r, tgt, (_, _, t_meas) in zip(design, target, rows)]
        if min(pred) <= 0:
            continue
        err = math.sqrt(statistics.fmean([math.log(p_ / t) ** 2 for p_, (_, _, t) in zip(pred, rows)]))
        if best is None or err < best["rms"]:
            best = {"rms": err, "tau_ms": tau / 1000.0, "c0_us": x[0], "warm_us_per_mib": x[1], "cold_us_per_mib": x[2]}
    return best


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("leases", nargs="+")
    ap.add_argument("--idle-wake-us", type=float, default=51.3)
    ap.add_argument("--idle-wake-time-ms", type=float, default=10.0)
    args = ap.parse_args()
    gbps = lambda us_per_mib: MIB / (us_per_mib * 1e-6) / 1e9 if us_per_mib > 0 else float("inf")
    fits = []
    print("lease,tau_ms,warm_GBps,cold_GBps,c0_us,rms_log_error")
    for d in args.leases:
        b = fit(load(d), args.idle_wake_us, args.idle_wake_time_ms * 1000.0)
        if b is None:
            sys.exit(f"{d}: no fit")
        fits.append(b)
        print(f"{os.path.basename(os.path.normpath(d))},{b['tau_ms']:.2f},{gbps(b['warm_us_per_mib']):.2f},"
              f"{gbps(b['cold_us_per_mib']):.2f},{b['c0_us']:.1f},{b['rms']:.4f}")
    med = lambda k: statistics.median(f[k] for f in fits)
    print(f"median,{med('tau_ms'):.2f},{gbps(med('warm_us_per_mib')):.2f},{gbps(med('cold_us_per_mib')):.2f},"
          f"{med('c0_us'):.1f},{med('rms'):.4f}")


if __name__ == "__main__":
    main()
