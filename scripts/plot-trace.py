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

# The figures' visual code (scripts/figures.py): blue host→device (a copy engine reading host
# memory), vermillion device→host (writing it), purple the GPU computing, grey the CPU's calls.
H2D, D2H, KERNEL, CPU, LINK = "#0072B2", "#D55E00", "#CC79A7", "#B0B0B0", "#555555"
# Rows top to bottom: what the program asked for, then what each engine did, then the links.
ORDER = ["cpu", "streams", "gpu"]


def span_colour(name, row):
    if row.startswith("cpu"):
        return CPU  # the calls, whatever they ask for
    # Copy engines: "read 16MiB" (host memory, i.e. H2D), "write ..."; streams: "... H2D 16MiB".
    if name.startswith("read") or (" H2D" in name and name.startswith("cudaMemcpy")):
        return H2D
    if name.startswith("write") or (" D2H" in name and name.startswith("cudaMemcpy")):
        return D2H
    if name.startswith("kernel"):
        return KERNEL
    return CPU


def main(path, out, case_index=0):
    events = json.load(open(path))["traceEvents"]
    procs = {e["pid"]: e["args"]["name"] for e in events if e["ph"] == "M" and e["name"] == "process_name"}
    threads = {(e["pid"], e["tid"]): e["args"]["name"] for e in events if e["ph"] == "M" and e["name"] == "thread_name"}
    cases = sorted((e for e in events if e["ph"] == "X" and procs.get(e["pid"]) == "cases"), key=lambda e: e["ts"])
    case = cases[case_index]
    t0, t1 = case["ts"], case["ts"] + case["dur"]
    rows = []
    rank = lambda proc: next((i for i, p in enumerate(ORDER) if proc.startswith(p)), len(ORDER))
    for (pid, tid), name in sorted(threads.items(), key=lambda kv: (rank(procs[kv[0][0]]), procs[kv[0][0]], kv[1])):
        if procs[pid] == "cases":
            continue
        spans = [e for e in events if e["ph"] == "X" and e["pid"] == pid and e["tid"] == tid
                 and e["ts"] < t1 and e["ts"] + e["dur"] > t0]
        if spans:
            rows.append((f"{procs[pid]} / {name}", spans))
    # Everything that started inside the case is drawn whole.
    end = max([t1] + [e["ts"] + e["dur"] for _, spans in rows for e in spans])
    links = {}
    for e in events:
        if e["ph"] == "C" and t0 <= e["ts"] <= t1:
            links.setdefault(procs[e["pid"]], []).append((e["ts"], e["args"]["percent"]))
    n = len(rows) + len(links)
    fig, ax = plt.subplots(figsize=(7.0, 0.32 * n + 1.0))
    labels = []
    for i, (label, spans) in enumerate(rows):
        y = n - 1 - i
        for e in spans:
            ax.barh(y, e["dur"] / 1e3, left=(e["ts"] - t0) / 1e3, height=0.6,
                    color=span_colour(e["name"], label), edgecolor="white", linewidth=0.6)
        labels.append((y, label))
    for k, (label, pts) in enumerate(sorted(links.items())):
        y = n - 1 - len(rows) - k
        pts.sort()
        xs = [(t - t0) / 1e3 for t, _ in pts]
        ys = [y - 0.35 + 0.7 * p / 100.0 for _, p in pts]
        ax.fill_between(xs, y - 0.35, ys, step="post", color=LINK)
        labels.append((y, f"{label} (busy %)"))
    ax.set_yticks([y for y, _ in labels])
    ax.set_yticklabels([l for _, l in labels], fontsize=7)
    ax.set_xlabel("time since the first call (ms)")
    ax.set_xlim(0, (end - t0) / 1e3 * 1.01)
    ax.set_title(case["name"], fontsize=8)
    from matplotlib.patches import Patch
    ax.legend(handles=[Patch(color=H2D, label="host→device copy"), Patch(color=D2H, label="device→host copy"),
                       Patch(color=KERNEL, label="kernel"), Patch(color=CPU, label="CPU call"),
                       Patch(color=LINK, label="link busy")],
              loc="upper center", bbox_to_anchor=(0.5, -0.22), ncol=5, fontsize=7, frameon=False)
    fig.tight_layout()
    # No software version or date in the file: the same trace gives the same bytes.
    fig.savefig(out, dpi=150, metadata={"Software": None})


if __name__ == "__main__":
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2], int(sys.argv[4]) if len(sys.argv) > 4 and sys.argv[3] == "--case" else 0)
