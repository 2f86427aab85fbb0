#!/usr/bin/python3
"""Draws a dmasim timeline (Chrome trace JSON from `dmasim run --trace`) as a PNG/PDF.

Usage: scripts/plot-trace.py TRACE.json OUT.png [--case N]
Spans become bars on one row per track; link occupancy counters become filled curves.
Only the first case span (or case N) is drawn. Needs python3-matplotlib (Debian).
"""
import json
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

# Okabe-Ito: colour-blind-safe.
PALETTE = ["#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9", "#F0E442", "#000000"]


def main(path, out, case_index=0):
    events = json.load(open(path))["traceEvents"]
    procs = {e["pid"]: e["args"]["name"] for e in events if e["ph"] == "M" and e["name"] == "process_name"}
    threads = {(e["pid"], e["tid"]): e["args"]["name"] for e in events if e["ph"] == "M" and e["name"] == "thread_name"}
    cases = sorted((e for e in events if e["ph"] == "X" and procs.get(e["pid"]) == "cases"), key=lambda e: e["ts"])
    case = cases[case_index]
    t0, t1 = case["ts"], case["ts"] + case["dur"]
    rows = []
    for (pid, tid), name in threads.items():
        if procs[pid] == "cases":
            continue
        spans = [e for e in events if e["ph"] == "X" and e["pid"] == pid and e["tid"] == tid
                 and e["ts"] < t1 and e["ts"] + e["dur"] > t0]
        if spans:
            rows.append((f"{procs[pid]} / {name}", spans))
    links = {}
    for e in events:
        if e["ph"] == "C" and t0 <= e["ts"] <= t1:
            links.setdefault(procs[e["pid"]], []).append((e["ts"], e["args"]["percent"]))
    n = len(rows) + len(links)
    fig, ax = plt.subplots(figsize=(7.0, 0.32 * n + 1.0))
    labels = []
    for i, (label, spans) in enumerate(rows):
        y = n - 1 - i
        for j, e in enumerate(spans):
            ax.barh(y, e["dur"] / 1e3, left=(e["ts"] - t0) / 1e3, height=0.6,
                    color=PALETTE[j % len(PALETTE)], edgecolor="white", linewidth=0.3)
        labels.append((y, label))
    for k, (label, pts) in enumerate(sorted(links.items())):
        y = n - 1 - len(rows) - k
        pts.sort()
        xs = [(t - t0) / 1e3 for t, _ in pts]
        ys = [y - 0.35 + 0.7 * p / 100.0 for _, p in pts]
        ax.fill_between(xs, y - 0.35, ys, step="post", color="#555555")
        labels.append((y, f"{label} (busy %)"))
    ax.set_yticks([y for y, _ in labels])
    ax.set_yticklabels([l for _, l in labels], fontsize=7)
    ax.set_xlabel("time since the first call (ms)")
    ax.set_xlim(0, (t1 - t0) / 1e3)
    ax.set_title(case["name"], fontsize=8)
    fig.tight_layout()
    fig.savefig(out, dpi=150)


if __name__ == "__main__":
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2], int(sys.argv[4]) if len(sys.argv) > 4 and sys.argv[3] == "--case" else 0)
