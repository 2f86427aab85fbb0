#!/usr/bin/env python3
"""Which of the host's two call states each 2xH200 main-plan lease ran in, and what that does to its rows.

The staged peer copy both ways at 256 MiB (`peer`, both, peer access off) holds one staged call of 512
pieces, queued piece by piece by the CPU before the other way's call (../staged-both). Its lease medians
fall in two groups; this script splits the leases at that row's widest gap (its outer tenths left out) and checks the split
against the leases' blocking 64 KiB copies (the `pinned` rows into and out of the GPU, one driver call
each): the host's fast and slow call states of this folder's README (`callstate.cu`: every call that
enters the driver about 0.9 us dearer in the slow state). It reports
- the row by state, and the gap between the states per piece past the second (the first MEASURED_DIR
  counted apart: the leases the calibration was fitted on);
- the staged call's own time per piece past the second, case by case, from the CPU times that
  `../staged-both/stagedboth.cu` wrote on the 2xH200 leases of two H200 (copies of 16 MiB and more),
  split in two by two-means: the two levels;
- every row whose medians over the two groups of leases differ by more than --min-split percent.

Usage: lease_states.py [--min-split PCT] TRAINING_DIR [MORE_DIR...] > lease-states.txt
       (each MEASURED_DIR holds one folder per lease with measured.csv, e.g. ../../measured)
"""
import argparse
import csv
import glob
import os
import statistics
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
STAGED_BOTH = os.path.join(HERE, "..", "staged-both", "leases")
PIECE = 512 * 1024  # runtime.peer_staging_piece on this host (../peer-sizes)
STAGED_CALL_US = 5.85  # runtime.peer_staged_call: the call for its first two pieces
STATE_ROWS = (("pinned", "h2d", "65536", ""), ("pinned", "d2h", "65536", ""))
STAGED_ROW = ("peer", "both", "268435456", "peer=off")


def load_lease(path):
    rows = {}
    with open(path, newline="") as f:
        for x in csv.DictReader(f):
            if x["status"] != "ok":
                continue
            rows[(x["scenario"], x["direction"], x["size_bytes"], x["variant"])] = float(x["time_us"])
    return rows


def split_in_two(values):
    """Two groups of sorted values with the least sum of squares about their means (1-D two-means,
    exhaustive); returns the threshold halfway between them and the gap across it."""
    v = sorted(values)
    if len(v) < 4:
        raise ValueError("need four values to split")

    def ss(g):
        m = sum(g) / len(g)
        return sum((x - m) ** 2 for x in g)

    i = min(range(1, len(v) - 2), key=lambda k: ss(v[: k + 1]) + ss(v[k + 1 :]))
    return (v[i] + v[i + 1]) / 2.0, v[i + 1] - v[i]


def split_at_gap(values, trim=0.1):
    """The threshold halfway across the widest gap between consecutive sorted values, the outer
    `trim` share at each end left out (a few leases far out on one side do not move it)."""
    v = sorted(values)
    k = int(trim * len(v))
    inner = v[k : len(v) - k]
    if len(inner) < 2:
        raise ValueError("need more values to split")
    i = max(range(len(inner) - 1), key=lambda j: inner[j + 1] - inner[j])
    return (inner[i] + inner[i + 1]) / 2.0, inner[i + 1] - inner[i]


def piece_levels():
    """Per-piece CPU time of each staged call of 16 MiB or more on the two-H200 leases."""
    out = []
    for path in sorted(glob.glob(os.path.join(STAGED_BOTH, "h200x2-*", "stagedboth*.csv"))):
        with open(path, newline="") as f:
            for x in csv.DictReader(f):
                size = int(x.get("bytes") or 0)
                if size < 16 * 1024 * 1024:
                    continue
                pieces = size // PIECE
                for col in ("call0_us", "call1_us"):
                    call = float(x.get(col) or 0.0)
                    if call > 0.0:
                        out.append((call - STAGED_CALL_US) / (pieces - 2))
    return out


def kind_of(key):
    """A row's kind for the summary: pinned allocation, registration, pageable copies, small blocking
    copies (< 128 KiB), duplex pairs, peer copies; None for the rest."""
    scenario, _direction, size, variant = key
    if variant in ("setup=mallochost", "setup=freehost"):
        return "pinned allocation and freeing"
    if variant in ("setup=register", "setup=unregister"):
        return "registration and unregistration"
    if scenario.startswith("pageable"):
        return "pageable copies"
    if scenario in ("pinned", "latency", "odd-sizes", "offset-1B", "offset-4KiB", "offset-64B") and int(size) < 128 * 1024:
        return "small blocking copies"
    if scenario == "duplex":
        return "duplex pairs"
    if scenario == "peer":
        return "peer copies"
    return None


def by_kind(split):
    groups = {}
    for row in split:
        kind = kind_of(row[1])
        if kind is not None:
            groups.setdefault(kind, []).append(row)
    return sorted(groups.items())


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("measured", nargs="+", help="folders of lease folders with measured.csv")
    ap.add_argument("--min-split", type=float, default=10.0, help="list rows whose state medians differ by more (percent)")
    a = ap.parse_args()
    leases = {}
    first = set()
    for d in a.measured:
        found = sorted(glob.glob(os.path.join(d, "*", "measured.csv")))
        if not found:
            sys.exit(f"lease_states.py: {d}: no */measured.csv")
        for p in found:
            leases[os.path.basename(os.path.dirname(p))] = load_lease(p)
            if d == a.measured[0]:
                first.add(os.path.basename(os.path.dirname(p)))
    for name, rows in leases.items():
        missing = [k for k in (STAGED_ROW,) + STATE_ROWS if k not in rows]
        if missing:
            sys.exit(f"lease_states.py: lease {name}: no row {missing[0]}")
    staged = {n: r[STAGED_ROW] for n, r in leases.items()}
    cut, gap = split_at_gap(staged.values())
    fast = sorted(n for n in leases if staged[n] < cut)
    slow = sorted(n for n in leases if staged[n] >= cut)
    calls = {n: sum(r[k] for k in STATE_ROWS) for n, r in leases.items()}
    by_calls = sorted(leases, key=lambda n: calls[n])
    agree = set(by_calls[: len(fast)]) == set(fast)
    print(f"# {len(leases)} leases split at the widest gap of their staged both-ways row at 256 MiB, the outer tenth at each end left out (at {cut:.0f} us, a gap of "
          f"{gap:.0f} us): {len(fast)} fast, {len(slow)} slow. The {len(fast)} leases whose blocking 64 KiB copies (into + out of "
          f"the GPU, one driver call each) are quickest are {'exactly the fast ones' if agree else 'not the fast ones'}: "
          f"fast {min(calls[n] for n in fast):.2f}-{max(calls[n] for n in fast):.2f} us, slow "
          f"{min(calls[n] for n in slow):.2f}-{max(calls[n] for n in slow):.2f}")
    print("lease,staged_both_256MiB_us,state,pinned_64KiB_h2d_plus_d2h_us")
    for n in sorted(leases, key=lambda n: staged[n]):
        print(f"{n},{staged[n]:.1f},{'fast' if n in fast else 'slow'},{calls[n]:.2f}")

    def med(names, key):
        v = [leases[n][key] for n in names if key in leases[n]]
        return statistics.median(v) if v else float("nan")

    f_rows = sorted(staged[n] for n in fast)
    s_rows = sorted(staged[n] for n in slow)
    pieces = int(STAGED_ROW[2]) // PIECE
    per_piece = (statistics.median(s_rows) - statistics.median(f_rows)) / (pieces - 2)
    print(f"\n# staged peer copy both ways, 256 MiB ({pieces} pieces): fast leases {f_rows[0]:.0f}-{f_rows[-1]:.0f} us "
          f"(median {statistics.median(f_rows):.0f}), slow {s_rows[0]:.0f}-{s_rows[-1]:.0f} (median "
          f"{statistics.median(s_rows):.0f}), all {statistics.median(f_rows + s_rows):.0f}; slow - fast "
          f"{per_piece:.3f} us a piece past the second")
    for label, group in (("training leases", [n for n in fast + slow if n in first]), ("the others", [n for n in fast + slow if n not in first])):
        if group:
            ns = sum(1 for n in group if n in slow)
            print(f"#   {label}: {ns} of {len(group)} slow, median {statistics.median(staged[n] for n in group):.0f} us")

    levels = piece_levels()
    lcut, lgap = split_in_two(levels)
    lo = [v for v in levels if v < lcut]
    hi = [v for v in levels if v >= lcut]
    print(f"# the staged call's time a piece past the second, {len(levels)} calls of 16-256 MiB on the two-H200 leases of "
          f"../staged-both (two-means: split at {lcut:.3f} us, a gap of {lgap:.3f}): fast {len(lo)} calls, median "
          f"{statistics.median(lo):.3f} us ({min(lo):.3f}-{max(lo):.3f}); slow {len(hi)}, median {statistics.median(hi):.3f} us "
          f"({min(hi):.3f}-{max(hi):.3f}); slow - fast {statistics.median(hi) - statistics.median(lo):.3f} us")

    keys = set.intersection(*(set(r) for r in leases.values()))
    split = []
    for k in keys:
        f, s, al = med(fast, k), med(slow, k), med(list(leases), k)
        if al > 0:
            split.append(((s - f) / al * 100.0, k, f, s, al))
    split.sort(key=lambda t: (-abs(t[0]), t[1]))
    print("\n# by kind of row, slow - fast over all rows (% of the median over all leases): median, p10, p90")
    for kind, rows in by_kind(split):
        v = sorted(d for d, _k, _f, _s, _a in rows)
        print(f"#   {kind}: {len(v)} rows, median {statistics.median(v):+.1f} %, p10 {v[len(v) // 10]:+.1f}, p90 {v[(9 * len(v)) // 10]:+.1f}")
    print(f"\n# rows whose medians over the two groups differ by more than {a.min_split:g} % of the median over all leases")
    print("scenario,direction,size_bytes,variant,fast_median_us,slow_median_us,all_median_us,slow_minus_fast_pct")
    for d, k, f, s, al in split:
        if abs(d) > a.min_split:
            print(f"{k[0]},{k[1]},{k[2]},{k[3]},{f:.2f},{s:.2f},{al:.2f},{d:+.1f}")


if __name__ == "__main__":
    main()
