#!/usr/bin/env python3
"""The gated pair's mean over where the polls put it, across leases, against the model's mean over
the gate's phases: for each size, each lease's mean over the host delays D (overlap.cu's
`overlap`, `overlap-large` and `growth` modes, the `both` shape) of the pair, the copy into the GPU
and the copy out of it, then their median over the leases and range; with a `dmasim run` of the
duplex scenario's results.csv, the model's rows and the differences. Then what each copy loses
beside the other: its mean over D in the pair less the same copy's alone (the `d2h_only` and
`h2d_only` shapes: the other copy's call left out), median over the leases and range.
Standard library only.
Usage: phase_mean.py [--model RESULTS_CSV] LEASE_DIR..."""
import statistics
import sys

from repsio import delay_cells, read_rows
COLS = (("pair", "interval_us", ""), ("into the GPU", "h2d_us", "h2d"), ("out of it", "d2h_us", "d2h"))


def main(argv):
    model_csv = None
    if argv[:1] == ["--model"]:
        if len(argv) < 2:
            sys.exit("phase_mean.py: --model needs a results.csv")
        model_csv, argv = argv[1], argv[2:]
    if not argv:
        sys.exit(next(line for line in __doc__.splitlines() if line.startswith("Usage:")))
    per_size = {}  # size -> column -> [lease means]
    loss = {}  # size -> [(copy out of the GPU, copy into it): beside less alone, one per lease]
    for d in argv:
        cells = delay_cells(d, "phase_mean.py")
        for n, name in sorted({(n, name) for n, _, name in cells}):
            mean = {}
            for shape in ("both", "d2h_only", "h2d_only"):
                g = cells.get((n, shape, name))
                if g:
                    mean[shape] = {col: statistics.mean(float(r[col]) for r in g) for _, col, _ in COLS}
            if "both" not in mean:
                continue
            for label, col, _ in COLS:
                per_size.setdefault(n, {}).setdefault(label, []).append(mean["both"][col])
            if "d2h_only" in mean and "h2d_only" in mean:
                loss.setdefault(n, []).append((mean["both"]["d2h_us"] - mean["d2h_only"]["d2h_us"],
                                               mean["both"]["h2d_us"] - mean["h2d_only"]["h2d_us"]))
    model = {}
    if model_csv:
        for r in read_rows(model_csv, "phase_mean.py"):
            if r["strategy"] == "duplex":
                model[(int(r["size_bytes"]), r.get("variant", ""))] = float(r["time_us"])
    for n in sorted(per_size):
        parts = []
        for label, _, variant in COLS:
            v = per_size[n][label]
            med = statistics.median(v)
            text = f"{label} {med:8.2f} ({min(v):.2f}-{max(v):.2f})"
            if (n, variant) in model:
                m = model[(n, variant)]
                text += f" model {m:8.2f} ({100 * (m / med - 1):+5.1f} %)"
            parts.append(text)
        print(f"{n:>9} B, {len(per_size[n]['pair'])} leases: " + "; ".join(parts))
    print("beside the other copy less alone (us, median over leases, range):")
    for n in sorted(loss):
        out = [x for x, _ in loss[n]]
        into = [y for _, y in loss[n]]
        print(f"{n:>9} B, {len(loss[n])} leases: out of the GPU {statistics.median(out):+6.2f} ({min(out):+.2f}..{max(out):+.2f}), "
              f"into it {statistics.median(into):+6.2f} ({min(into):+.2f}..{max(into):+.2f})")


if __name__ == "__main__":
    main(sys.argv[1:])
