#!/usr/bin/env python3
"""The duplex-burst case, lease by lease: the aggregate over one way of copies back to back
(2 x one way's burst alone / both ways' burst, each lease's medians), its two runs (first and again
last), what a chain loses beside the other way's traffic (chainpair.csv: us a copy, and over
the same chain alone), and beside copies inside the GPU and kernels (chainengines.csv,
chainkernels.csv, chainunrolled.csv, chaincontrol.csv, chainfront.csv, chainturn.csv, chainflush.csv, chainsizes.csv: the same, each kind of host's medians over
its leases, and what ran beside alone), and where a chain out of the GPU loses it beside chains into the GPU of
64 KiB-1 MiB (chainland-mid*.csv: a copy's share, the gaps between copies, the neighbour's own pace), and what
sets a chain's own pace (chaincontext/*/chainctx*.csv: the cells, the window with its fit, the profile, the
sources of chains into the GPU). With a
compare.csv (dmasim compare over leases/), the model's aggregate.
    summarize.py [CASE_DIR] [COMPARE_CSV]   (defaults: this folder, none)"""
import csv
import glob
import os
import statistics
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
SIZES = [("duplex-burst", 4096), ("duplex-burst", 16384), ("duplex-burst", 65536), ("duplex-burst", 262144),
         ("duplex-burst-large", 1048576), ("duplex-burst-large", 4194304)]


def read(path):
    rows = {}
    for r in csv.DictReader(open(path)):
        rows[(r["scenario"], int(r["size_bytes"]), r["variant"])] = float(r["time_us"])
    return rows


def aggregate(rows, scenario, size):
    pair = rows[(scenario, size, "")]
    return (2 * rows[(scenario, size, "burst_h2d")] / pair, 2 * rows[(scenario, size, "burst_d2h")] / pair, pair,
            rows[(scenario, size, "burst_h2d")], rows[(scenario, size, "burst_d2h")])


def label(size):
    return f"{size >> 20} MiB" if size >= 1 << 20 else f"{size >> 10} KiB"


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else HERE
    model = {}
    if len(sys.argv) > 2:
        for r in csv.DictReader(open(sys.argv[2])):
            model[(r["scenario"], int(r["size_bytes"]), r["variant"])] = float(r["predicted_us"])
    for folder in ("leases", "leases-one-gpu"):
        paths = sorted(glob.glob(os.path.join(root, folder, "*", "measured.csv")))
        if not paths:
            continue
        print(f"{folder}: aggregate over one way, over the copy into the GPU / out of it "
              "(pair, each way alone: us for the whole burst)")
        per_size = {}
        for path in paths:
            rows = read(path)
            print(f"  {os.path.basename(os.path.dirname(path))}")
            for scenario, size in SIZES:
                up, down, pair, one_up, one_down = aggregate(rows, scenario, size)
                per_size.setdefault(size, []).append((up, down))
                line = f"    {label(size):>7} {up:.3f} / {down:.3f} (pair {pair:8.2f}, alone {one_up:8.2f} {one_down:8.2f})"
                again = ("duplex-burst-again", size, "")
                if again in rows:
                    a_up, a_down, *_ = aggregate(rows, "duplex-burst-again", size)
                    line += f" | again {a_up:.3f} / {a_down:.3f}"
                print(line)
        print("  medians over the leases" + (" | the model" if model and folder == "leases" else ""))
        for scenario, size in SIZES:
            up = statistics.median(x[0] for x in per_size[size])
            down = statistics.median(x[1] for x in per_size[size])
            line = f"    {label(size):>7} {up:.3f} / {down:.3f}"
            if model and folder == "leases" and (scenario, size, "") in model:
                p_up, p_down, *_ = aggregate(model, scenario, size)
                line += f" | {p_up:.3f} / {p_down:.3f} ({100 * (p_up / up - 1):+.1f} / {100 * (p_down / down - 1):+.1f} %)"
            print(line)
    for path in sorted(glob.glob(os.path.join(root, "chainpair", "*", "chainpair.csv"))):
        cells = {(r["dir"], int(r["size"]), r["beside"]): float(r["median_us"]) for r in csv.DictReader(open(path))}
        print(f"chainpair {os.path.basename(os.path.dirname(path))}: us a copy of a chain of 64, alone and what it "
              "costs more beside")
        besides = [b for b in ("chain4K", "chain16K", "chain64K", "chain256K", "chain1024K", "long", "same4K", "peer")
                   if any(k[2] == b for k in cells)]
        print("    " + " " * 14 + "  alone " + " ".join(f"{b:>10}" for b in besides))
        for d in ("h2d", "d2h"):
            for size in (4096, 65536):
                alone = cells[(d, size, "none")]
                print(f"    {d} {label(size):>7}: {alone:6.2f} " +
                      " ".join(f"{cells[(d, size, b)] - alone:+10.2f}" for b in besides))
    for name in ("chainengines", "chainkernels", "chainunrolled", "chaincontrol", "chainfront", "chainturn", "chainflush",
                 "chainsizes"):
        neighbours(root, name)
    landing_mid(root)
    context(root)


def context(root):
    """chaincontext/*/chainctx*.csv (chainctx.cu): per kind of host, medians over its leases and both
    runs. The cells: a chain's pace (us a copy, first copy's end to last's over N - 1). The window: a
    chain out of the GPU of N copies against N, and the fit of N - 1 stretches of which the last W run
    at one pace (e) and the rest at another (m), with a cost X once at the chain's end (least squares
    over W = 40..80). The profile: the pace between events along a chain of 512 copies."""
    for mode, columns in (("", ("dir", "size", "cell")), ("-window", ("dir", "size", "cell", "n")), ("-profile", ("dir", "size", "from", "to")),
                          ("-source", ("dir", "size", "cell"))):
        kinds = {}
        for path in sorted(glob.glob(os.path.join(root, "chaincontext", "*", f"chainctx{mode}.csv")) +
                           glob.glob(os.path.join(root, "chaincontext", "*", f"chainctx{mode}-again.csv"))):
            kind = os.path.basename(os.path.dirname(path)).split("-")[0]
            lease = os.path.basename(os.path.dirname(path))
            for r in csv.DictReader(open(path)):
                kinds.setdefault(kind, {}).setdefault(tuple(r[c] for c in columns), {}).setdefault(lease, []).append(
                    float(r["copy_us"]))
        for kind, cells in sorted(kinds.items()):
            leases = sorted({lease for v in cells.values() for lease in v})
            what = {"": "cells", "-window": "window", "-profile": "profile", "-source": "source"}[mode]
            print(f"chaincontext {what} {kind} ({len(leases)} leases, both runs): us a copy, medians")
            values = {k: statistics.median(x for runs in v.values() for x in runs) for k, v in cells.items()}
            if mode in ("", "-source"):
                for d in ("h2d", "d2h"):
                    for size in ("4096", "16384"):
                        row = [(k[2], v) for k, v in values.items() if k[0] == d and k[1] == size]
                        if row:
                            print(f"    {d} {label(int(size)):>7}: " + "  ".join(f"{c} {v:.2f}" for c, v in row))
            elif mode == "-window":
                for size in sorted({k[1] for k in values}, key=int):
                    row = sorted(((int(k[3]), k[2], v) for k, v in values.items() if k[1] == size))
                    print(f"    d2h {label(int(size)):>7}: " + "  ".join(f"{c}{n} {v:.3f}" for n, c, v in row))
                base = {n: v for n, c, v in ((int(k[3]), k[2], v) for k, v in values.items() if k[1] == "4096") if c == "base"}
                fit = window_fit(base)
                if fit:
                    w, e, m, x, rms = fit
                    print(f"    fit (4 KiB, N = {min(base)}..{max(base)}): the last {w} copies at {e:.3f}, the others at "
                          f"{m:.3f} ({m - e:+.3f}), {x:.2f} us once at the end; rms {rms:.4f} us")
            else:
                for (d, size) in sorted({(k[0], k[1]) for k in values}, key=lambda t: (t[0], int(t[1]))):
                    row = sorted(((int(k[2]), int(k[3]), v) for k, v in values.items() if k[0] == d and k[1] == size))
                    print(f"    {d} {label(int(size)):>7}: " + " ".join(f"{a}-{b} {v:.2f}" for a, b, v in row))


def window_fit(base):
    """(W, e, m, X, rms) minimising the squared error of e + X / (N - 1) + max(0, N - 1 - W) (m - e) / (N - 1)
    over the chains of N copies; linear in (e, m - e, X) for each W."""
    best = None
    for w in range(40, 81):
        rows = [(1.0, max(0, n - 1 - w) / (n - 1), 1.0 / (n - 1), v) for n, v in base.items()]
        # Normal equations of a three-parameter least-squares fit.
        a = [[sum(r[i] * r[j] for r in rows) for j in range(3)] for i in range(3)]
        b = [sum(r[i] * r[3] for r in rows) for i in range(3)]
        try:
            sol = solve3(a, b)
        except ZeroDivisionError:
            continue
        rms = (sum((sol[0] * r[0] + sol[1] * r[1] + sol[2] * r[2] - r[3]) ** 2 for r in rows) / len(rows)) ** 0.5
        if best is None or rms < best[4]:
            best = (w, sol[0], sol[0] + sol[1], sol[2], rms)
    return best


def solve3(a, b):
    """Gaussian elimination for a 3x3 system."""
    m = [row[:] + [b[i]] for i, row in enumerate(a)]
    for c in range(3):
        p = max(range(c, 3), key=lambda r: abs(m[r][c]))
        m[c], m[p] = m[p], m[c]
        if m[c][c] == 0:
            raise ZeroDivisionError
        for r in range(3):
            if r != c:
                f = m[r][c] / m[c][c]
                m[r] = [x - f * y for x, y in zip(m[r], m[c])]
    return [m[i][3] / m[i][i] for i in range(3)]


def landing_mid(root):
    """chainland/*/chainland-mid*.csv: per kind of host, medians over its leases and both runs of a
    chain out of the GPU's time a copy (events) and what it costs more than alone, the quartiles of
    the gaps from one copy's last data to the next one's first, and the neighbour chain's time a
    copy (us) beside the chain and alone."""
    kinds = {}
    for path in sorted(glob.glob(os.path.join(root, "chainland", "*", "chainland-mid*.csv"))):
        kind = os.path.basename(os.path.dirname(path)).split("-")[0]
        kinds.setdefault(kind, []).append({(int(r["size"]), r["beside"]): r for r in csv.DictReader(open(path))})
    for kind, runs in kinds.items():
        leases = len({p for p in glob.glob(os.path.join(root, "chainland", kind + "-*", "chainland-mid.csv"))})
        print(f"chainland mid {kind} ({leases} leases, {len(runs)} runs): a chain of 64 copies out of the GPU beside a "
              "chain into it, us: a copy (events), more than alone, the gaps' p25 / p50 / p75, the neighbour a copy "
              "(alone)")

        def med(size, beside, col):
            return statistics.median(float(r[(size, beside)][col]) for r in runs)
        besides = [k[1] for k in runs[0] if k[0] == 4096 and k[1] != "none"]
        for size in (4096, 65536):
            alone = med(size, "none", "event_us")
            print(f"    {label(size):>7} alone {alone:5.2f}, gaps {med(size, 'none', 'gap_p25_us'):.2f} / "
                  f"{med(size, 'none', 'gap_us'):.2f} / {med(size, 'none', 'gap_p75_us'):.2f}")
            for b in besides:
                line = (f"      {b:>10}: {med(size, b, 'event_us'):5.2f} {med(size, b, 'event_us') - alone:+5.2f}, gaps "
                        f"{med(size, b, 'gap_p25_us'):.2f} / {med(size, b, 'gap_us'):.2f} / {med(size, b, 'gap_p75_us'):.2f}")
                if b != "long":
                    line += f", neighbour {med(size, b, 'other_us'):5.2f} ({med(0, b, 'other_us'):5.2f})"
                print(line)


def neighbours(root, name):
    """NAME/*/NAME.csv: per kind of host, the median over its leases of each cell's cost a copy more
    than the chain alone, and of each neighbour's own time alone (size 0: no measured chain), with
    what a kernel moved (other_gbps)."""
    kinds = {}
    for path in sorted(glob.glob(os.path.join(root, name, "*", name + ".csv"))):
        kind = os.path.basename(os.path.dirname(path)).split("-")[0]
        kinds.setdefault(kind, []).append({(r["dir"], int(r["size"]), r["beside"]): r for r in csv.DictReader(open(path))})
    for kind, leases in kinds.items():
        print(f"{name} {kind} ({len(leases)} leases): us a copy of a chain of 64, alone and what it costs more "
              "beside (medians over the leases)")
        # Some leases ran fewer cells: each cell's median is over the leases that ran it.
        besides = []
        for c in leases:
            for k in c:
                if k[1] > 0 and k[2] != "none" and k[2] not in besides:
                    besides.append(k[2])
        print("    " + " " * 17 + "  alone " + " ".join(f"{b:>8}" for b in besides))
        dirs = []  # h2d, d2h, and chaincontrol's other operations
        for c in leases:
            for k in c:
                if k[1] > 0 and k[0] not in dirs:
                    dirs.append(k[0])
        sizes = sorted({k[1] for c in leases for k in c if k[1] > 0})
        for d in dirs:
            for size in sizes:
                if not any((d, size, "none") in c for c in leases):
                    continue
                alone = statistics.median(float(c[(d, size, "none")]["median_us"]) for c in leases)
                more = [statistics.median(float(c[(d, size, b)]["median_us"]) - float(c[(d, size, "none")]["median_us"])
                                          for c in leases if (d, size, b) in c) for b in besides]
                print(f"    {d:>6} {label(size):>7}: {alone:6.2f} " + " ".join(f"{m:+8.2f}" for m in more))
        alone = {}
        rates = {}
        for c in leases:
            for (d, size, b), r in c.items():
                if size == 0 and "other_us" in r:
                    key = f"{b} ({'d2h' if d == 'h2d' else 'h2d'})" if b == "long" else b
                    alone.setdefault(key, []).append(float(r["other_us"]))
                    if float(r.get("other_gbps") or 0) > 0:
                        rates.setdefault(key, []).append(float(r["other_gbps"]))
        if alone:
            print("    alone, us: " + ", ".join(f"{b} {statistics.median(v):.0f}" +
                                            (f" ({statistics.median(rates[b]):.1f} GB/s)" if b in rates else "")
                                            for b, v in alone.items()))


if __name__ == "__main__":
    main()
