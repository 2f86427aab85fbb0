#!/usr/bin/python3
"""Publication figures: the model (results/sim) against the GPU measurements.

Usage: scripts/figures.py [--sim CSV] [--measured DIR|CSV|LABEL=DIR ...] [--out DIR]
                          [--only NAME ...]

Reads the results schema (docs/results.md): the simulator's results.csv and the harness's
measured.csv files: per --measured machine folder every lease (sub-folder) and each lease's runs
(its measured.csv, run<N>/measured.csv), or one lease folder, or the CSV named.
Writes each figure as PDF (for LaTeX) and PNG (for slides) into --out and prints the files
written. A figure whose data is missing is skipped with a message; the others still draw.
Model = lines, measurements = markers at the median over leases of each lease's median over its
runs, with p10-p90 bars (the envelope over every run of every lease).
See docs/figures.md. Needs Debian's python3-matplotlib (run with /usr/bin/python3).
"""
import argparse
import csv
import glob
import json
import math
import os
import re
import statistics
import sys
import traceback

import matplotlib

import leases

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib import ticker  # noqa: E402
from matplotlib.lines import Line2D  # noqa: E402
from matplotlib.transforms import blended_transform_factory  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# Okabe-Ito, colour-blind-safe.
BLACK, ORANGE, SKY, GREEN = "#000000", "#E69F00", "#56B4E9", "#009E73"
YELLOW, BLUE, VERMILLION, PURPLE = "#F0E442", "#0072B2", "#D55E00", "#CC79A7"
# The visual code, the same in every figure (docs/figures.md#visual-code):
# - colour says which way data moves: host to device, device to host, both ways at once;
# - line style says how, where one figure has several ways of one direction (strategy, peer mode);
# - the model is a line without markers (a short bar where it is a single value);
# - a measurement is a marker, one shape and fill per machine (the first measured machine a
#   filled circle, the second an open triangle, ...), with a bar for its spread;
# - black is for references (deadlines, bounds), never for data of one direction.
# No colour or marker is used for anything else.
MACHINE_MARKERS = ["o", "^", "s", "v", "P", "h"]  # not "D", "x", "|", "_": latency glyphs, model bars
DIRECTION_COLOURS = {"h2d": BLUE, "d2h": VERMILLION, "both": GREEN}
STRATEGY_STYLES = {"pinned": "-", "pageable": ":", "zero_copy": "-."}
PEER_STYLES = {"peer=on": "-", "peer=off": "--"}
MODEL_BAR = dict(marker="_", ms=9, mew=1.8, ls="none")  # the model at one x on a categorical axis
KEY_GREY = "#555555"  # legend entries that explain a line style or glyph, not a series

SINGLE_W = 3.5   # in, one column of a two-column paper
WIDE_W = 7.16    # in, both columns
PNG_DPI = 300

KIB, MIB, GIB = 1 << 10, 1 << 20, 1 << 30

STYLE = {
    "font.size": 8,
    "axes.titlesize": 8,
    "axes.labelsize": 8,
    "xtick.labelsize": 7,
    "ytick.labelsize": 7,
    "legend.fontsize": 7,
    "legend.frameon": False,
    "legend.handlelength": 1.8,
    "legend.columnspacing": 1.2,
    "axes.linewidth": 0.6,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "xtick.major.width": 0.6,
    "ytick.major.width": 0.6,
    "xtick.minor.width": 0.4,
    "ytick.minor.width": 0.4,
    "xtick.major.size": 3,
    "ytick.major.size": 3,
    "xtick.minor.size": 1.5,
    "ytick.minor.size": 1.5,
    "lines.linewidth": 1.2,
    "lines.markersize": 4,
    "errorbar.capsize": 1.5,
    "axes.grid": True,
    "grid.linewidth": 0.4,
    "grid.color": "#d9d9d9",
    "axes.axisbelow": True,
    "pdf.fonttype": 42,   # TrueType in the PDF: editable text, accepted by IEEE/ACM checks
    "ps.fonttype": 42,
    "svg.hashsalt": "dmasim",
}


class Skip(Exception):
    """A figure cannot be drawn from the data given; the message says why."""


# --------------------------------------------------------------------------------------------
# Data


def _num(text, default=None):
    text = (text or "").strip()
    if text == "":
        return default
    return float(text)


def load_rows(path):
    """The status=ok rows of one results file, numbers parsed, peer variants normalised."""
    rows = []
    with open(path, newline="") as f:
        for r in csv.DictReader(f):
            if (r.get("status") or "").strip() != "ok":
                continue
            try:
                t = _num(r.get("time_us"))
                if t is None or t <= 0:
                    continue
                row = {
                    "scenario": r.get("scenario", ""),
                    "strategy": r.get("strategy", ""),
                    "direction": r.get("direction", ""),
                    "directions": int(_num(r.get("directions"), 1)),
                    "size": int(_num(r.get("size_bytes"), 0)),
                    "time": t,
                    "p10": _num(r.get("p10_us"), t),
                    "p90": _num(r.get("p90_us"), t),
                    "min": _num(r.get("min_us"), t),
                    "max": _num(r.get("max_us"), t),
                    "variant": r.get("variant") or "",
                    "note": r.get("note") or "",
                    "calibration": r.get("calibration") or "",
                }
            except (TypeError, ValueError):
                continue
            if row["strategy"] == "peer" and row["variant"] == "":
                # Harness rows carry the mode in the note only; the model uses variants.
                row["variant"] = "peer=off" if "disabled" in row["note"] else "peer=on"
            rows.append(row)
    return rows


class Source:
    """One back end: the model (one run) or a measured machine (its leases, each of one or more
    runs)."""

    def __init__(self, label, runs, kind, index=0, link=None, run_leases=None):
        self.label = label
        self.runs = runs          # list of lists of rows
        self.kind = kind          # "sim" or "hw"
        self.index = index        # position among measured sources (style)
        self.link = link          # (generation, lanes) of the measured GPU, if known
        # The lease of each run (a lease is one freshly started machine); the model: one.
        self.run_leases = run_leases or ["model"] * len(runs)
        self.config = []          # the model: config.json beside its results.csv (scenario options)
        self.meta = {}            # the model: meta.json beside its results.csv (commit)
        self.drawn, self.used = set(), False
        self.folders = []         # measured: the lease folders (metadata.json, machine.txt)

    @property
    def leases(self):
        return list(dict.fromkeys(self.run_leases))

    def runs_by_lease(self):
        """[(lease, [runs])] in lease order."""
        return [(l, [r for r, rl in zip(self.runs, self.run_leases) if rl == l]) for l in self.leases]

    @property
    def marker(self):
        return MACHINE_MARKERS[self.index % len(MACHINE_MARKERS)]

    @property
    def filled(self):
        return self.index % 2 == 0

    def select(self, run, scenario, strategy=None, direction=None, variant="", size=None):
        rows = [r for r in run
                if r["scenario"] == scenario
                and (strategy is None or r["strategy"] == strategy)
                and (direction is None or r["direction"] == direction)
                and (variant is None or r["variant"] == variant)
                and (size is None or r["size"] == size)]
        # What the figure being drawn read: its caption names these calibrations and machines.
        self.drawn.update(r["calibration"] or "not recorded" for r in rows)
        if rows:
            self.used = True
        return rows

    def reset_drawn(self):
        self.drawn, self.used = set(), False

    def has(self, scenario, **kw):
        kw.setdefault("variant", None)  # any variant
        return any(self.select(run, scenario, **kw) for run in self.runs)

    def series(self, scenario, strategy=None, direction=None, variant=""):
        """{size: Agg}: time = median over leases of each lease's median over its runs, lo/hi =
        the lowest p10 and the highest p90 of any run (the envelope of the spread)."""
        per_size = {}
        for run, lease in zip(self.runs, self.run_leases):
            for r in self.select(run, scenario, strategy, direction, variant):
                per_size.setdefault(r["size"], []).append((lease, r))
        out = {}
        for size, pairs in per_size.items():
            rows = [r for _, r in pairs]
            out[size] = {
                "time": cross_lease_median(pairs, lambda r: r["time"]),
                "lo": min(r["p10"] for r in rows),
                "hi": max(r["p90"] for r in rows),
                "directions": rows[0]["directions"],
                "runs": rows,
            }
        return dict(sorted(out.items()))


def cross_lease_median(pairs, value):
    """Median over leases of each lease's median of value(row); pairs: [(lease, row)]."""
    by_lease = {}
    for lease, r in pairs:
        by_lease.setdefault(lease, []).append(value(r))
    return statistics.median(statistics.median(v) for v in by_lease.values())


def measured_label(folder, files):
    """Short GPU name from the first metadata.json (e.g. 'H100'), else the machine folder."""
    for f in files:
        meta = os.path.join(os.path.dirname(f), "metadata.json")
        try:
            with open(meta) as fh:
                name = json.load(fh).get("gpu", {}).get("name", "")
        except (OSError, ValueError, AttributeError):
            continue
        m = re.search(r"\b([A-Z]{1,3}\d{2,4}[A-Za-z]*)\b", name)
        if m:
            return m.group(1)
    base = os.path.basename(os.path.normpath(folder))
    if base == "measured":
        base = os.path.basename(os.path.dirname(os.path.normpath(folder)))
    return base


def measured_link(files):
    for f in files:
        try:
            with open(os.path.join(os.path.dirname(f), "metadata.json")) as fh:
                pcie = json.load(fh).get("gpu", {}).get("pcie", {})
            return int(pcie["gen_current"]), int(pcie["width_current"])
        except (OSError, ValueError, KeyError, TypeError, AttributeError):
            continue
    return None


def load_measured(specs):
    sources = []
    for spec in specs:
        label = None
        if "=" in spec and not os.path.exists(spec):
            label, spec = spec.split("=", 1)
        found = leases.find_leases(spec)
        files = [f for _, _, fs in found for f in fs]
        if not files:
            print(f"note: no measured.csv under {spec}; ignored", file=sys.stderr)
            continue
        runs = [load_rows(f) for f in files]
        run_leases = [name for name, _, fs in found for _ in fs]
        label = label or measured_label(spec, files)
        sources.append(Source(label, runs, "hw", len(sources), measured_link(files), run_leases))
        sources[-1].folders = [folder for _, folder, _ in found]
    seen = {}
    for s in sources:  # keep labels unique
        seen[s.label] = seen.get(s.label, 0) + 1
        if seen[s.label] > 1:
            s.label = f"{s.label} ({seen[s.label]})"
    return sources


# --------------------------------------------------------------------------------------------
# Drawing helpers


def gbps(size, directions, time_us):
    return size * directions / time_us / 1e3


def fmt_size(b):
    for unit, name in ((GIB, "GiB"), (MIB, "MiB"), (KIB, "KiB")):
        if b >= unit and b % unit == 0:
            return f"{b // unit} {name}"
    return f"{b} B"


def fmt_us(v, _pos=None):
    if v >= 1000:
        return f"{v / 1000:g} ms"
    return f"{v:g} µs"


def size_axis(ax, sizes, step=6, label="Transfer size"):
    """Log2 size axis: labels every 2**step from 4 KiB (or the smallest size), ticks at
    every power of 4."""
    lo, hi = min(sizes), max(sizes)
    e_lo, e_hi = math.floor(math.log2(lo)), math.ceil(math.log2(hi))
    anchor = 12 if e_lo <= 12 else e_lo
    ax.set_xscale("log", base=2)
    ax.xaxis.set_major_locator(ticker.FixedLocator(
        [2.0 ** e for e in range(e_lo, e_hi + 1) if (e - anchor) % step == 0]))
    ax.xaxis.set_minor_locator(ticker.FixedLocator(
        [2.0 ** e for e in range(e_lo, e_hi + 1) if e % 2 == 0]))
    ax.xaxis.set_major_formatter(ticker.FuncFormatter(lambda v, _p: fmt_size(int(round(v)))))
    ax.xaxis.set_minor_formatter(ticker.NullFormatter())
    ax.set_xlim(lo / 2 ** 0.6, hi * 2 ** 0.6)
    ax.grid(True, which="major")
    ax.grid(False, which="minor")
    if label:
        ax.set_xlabel(label)


def pow2_axis(ax, values, label):
    ax.set_xscale("log", base=2)
    ax.xaxis.set_major_locator(ticker.FixedLocator(values))
    ax.xaxis.set_major_formatter(ticker.FuncFormatter(lambda v, _p: f"{v:g}"))
    ax.xaxis.set_minor_locator(ticker.NullLocator())
    ax.set_xlim(min(values) / 2 ** 0.5, max(values) * 2 ** 0.5)
    ax.set_xlabel(label)


def log_y(ax):
    """Log y axis labelled at 1-2-5 steps, so a reader can read values off it."""
    ax.set_yscale("log")
    ax.yaxis.set_major_locator(ticker.LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
    ax.yaxis.set_major_formatter(ticker.FuncFormatter(lambda v, _p: f"{v:g}"))
    ax.yaxis.set_minor_locator(ticker.NullLocator())


def dodge(k, n, step=0.16):
    """Multiplicative x offset (log2 axis) of item k of n, so markers do not hide each other."""
    return 2.0 ** ((k - (n - 1) / 2.0) * step)


def model_plot(ax, xs, ys, colour=BLACK, ls="-", marker=None, zorder=2):
    ax.plot(xs, ys, color=colour, ls=ls, marker=marker, ms=2.5, lw=1.2, zorder=zorder)


def model_band(ax, xs, lo, hi, colour):
    """The model's band of machines (results.csv p10..p90 of a sim row: machines whose host costs
    differ, docs/model.md), shaded under its line; nothing where the band is a point."""
    if xs and any(h > l for l, h in zip(lo, hi)):
        ax.fill_between(xs, lo, hi, color=colour, alpha=0.18, lw=0, zorder=1)


def measured_plot(ax, xs, centre, lo, hi, colour, src):
    """Markers with asymmetric spread bars (lo <= centre <= hi, in plotted units)."""
    if not xs:
        return
    yerr = [[max(0.0, c - l) for c, l in zip(centre, lo)],
            [max(0.0, h - c) for c, h in zip(centre, hi)]]
    ax.errorbar(xs, centre, yerr=yerr, fmt=src.marker, color=colour, ms=3.8,
                mfc=colour if src.filled else "white", mec=colour, mew=0.9,
                elinewidth=0.7, capsize=1.5, lw=0, zorder=3)


def throughput_points(series):
    """(sizes, centre, lo, hi) in GB/s from a Source.series() dict."""
    sizes, c, lo, hi = [], [], [], []
    for size, a in series.items():
        d = a["directions"]
        sizes.append(size)
        c.append(gbps(size, d, a["time"]))
        lo.append(gbps(size, d, a["hi"]))   # slowest repetitions -> lowest GB/s
        hi.append(gbps(size, d, a["lo"]))
    return sizes, c, lo, hi


def h_model(label="model", colour=BLACK, ls="-"):
    return Line2D([], [], color=colour, ls=ls, lw=1.2, label=label)


def h_machine(src, colour=None, label=None):
    colour = colour or BLACK
    return Line2D([], [], color=colour, marker=src.marker, ls="none", ms=3.8,
                  mfc=colour if src.filled else "white", mec=colour, mew=0.9,
                  label=label or f"{src.label} (measured)")


def h_colour(colour, label):
    return Line2D([], [], color=colour, lw=2.5, label=label)


def new_figure(width, height, legend_rows=0):
    """A constrained-layout figure; legend_rows reserves room on top for a figure legend."""
    fig = plt.figure(figsize=(width, height), layout="constrained")
    if legend_rows:
        top = 1.0 - (0.06 + 0.15 * legend_rows) / height
        fig.get_layout_engine().set(rect=(0, 0, 1, top))
    return fig


def top_legend(fig, handles, ncol):
    fig.legend(handles=handles, loc="upper center", bbox_to_anchor=(0.5, 1.0), ncol=ncol,
               handletextpad=0.5, borderaxespad=0.2)


# What each figure shows, for its caption file.
CAPTIONS = {
    "throughput_vs_size": "Throughput against transfer size for pinned and pageable cudaMemcpy (each direction) "
                          "and duplex (both directions at once, the sum).",
    "zero_copy": "Zero-copy reads of host memory by a kernel: throughput against the number of thread blocks (a) "
                 "and against the distance between neighbouring threads' accesses (b).",
    "stream_overlap": "Speed-up of a 256 MiB H2D → kernel → D2H pipeline split over N streams against one stream, "
                      "with the bound an ideal pipeline of the model's stage times would reach.",
    "duplex": "Duplex: both directions at once (the sum), beside the model's one-way pinned copies.",
    "peer": "Copies between two GPUs with peer access on and off (staged through host memory), one way and "
            "both ways at once.",
    "frame_latency": "Periodic frames (the radar thread): the latency of each frame from its release to its "
                     "completion, per scenario; the model beside every lease of each machine.",
    "whatif_links": "What-if links (model): copies on PCIe Gen3–Gen6 x16 (a) and Gen5 x4–x16 (b), and peer "
                    "copies through a PCIe switch (c); measured points where a lent GPU has that link.",
    "whatif_radar": "What-if radar boxes (model only): frame latency against the deadline for capture-card "
                    "placements, link speeds and data rates.",
}
VISUAL_CODE = ("Visual code (every figure): colour = direction (blue host→device, vermillion device→host, green "
               "both ways at once); line style = strategy or peer mode where one figure has several; model = "
               "lines (a short bar for a single value); measured = markers, one shape and fill per machine; "
               "black = references (deadlines, bounds); a shaded band around a model line (throughput figure) = "
               "the model's p10–p90 machine, host costs drawn as they differ between machines.")
SPREAD = ("Measured marker: the median over leases (freshly started machines) of each lease's median; bar: from "
          "the lowest 10th to the highest 90th percentile of any run on any lease.")
SPREADS = {
    "frame_latency": "Each measured row is one lease (a freshly started machine; a lease of several runs: the median "
                     "of their percentiles, the worst maximum): band p10–p90 of its frames, p50 marker, p99 diamond, "
                     "max cross; the dashed line is the deadline.",
    "stream_overlap": "Measured marker: the median over leases of each lease's median speed-up; bar: the serial time "
                      "over the slowest (p90) to the fastest (p10) pipeline run of any lease.",
}


def machine_facts(src):
    """'NVIDIA H100 80GB HBM3, driver 580.65.06 (CUDA 13.0), PCIe Gen5 x16, 5 leases' from the
    leases' metadata.json and machine.txt."""
    gpu, cuda, driver, link, commits = None, None, None, None, set()
    for folder in src.folders:
        # A lease.json's commit is the one its harness was built from, where the device machine's
        # git said something else into metadata.json (results/README.md).
        lease_commit = None
        try:
            with open(os.path.join(folder, "lease.json")) as f:
                lease_commit = json.load(f).get("commit")
        except (OSError, ValueError, AttributeError):
            pass
        if lease_commit:
            commits.add(lease_commit)
        for meta_path in glob.glob(os.path.join(folder, "**", "metadata.json"), recursive=True):
            try:
                with open(meta_path) as f:
                    meta = json.load(f)
            except (OSError, ValueError):
                continue
            gpu = gpu or meta.get("gpu", {}).get("name")
            cuda = cuda or meta.get("cuda", {}).get("driver_version")
            if meta.get("commit") and not lease_commit:
                commits.add(meta["commit"])
        try:
            with open(os.path.join(folder, "machine.txt"), errors="replace") as f:
                m = re.search(r"Driver Version:\s*([\d.]+)", f.read())
            driver = driver or (m.group(1) if m else None)
        except OSError:
            pass
    if src.link:
        link = f"PCIe Gen{src.link[0]} x{src.link[1]}"
    parts = [gpu or src.label]
    if driver or cuda:
        parts.append("driver " + (driver or "?") + (f" (CUDA {cuda})" if cuda else ""))
    if link:
        parts.append(link)
    parts.append(f"{len(src.leases)} lease{'s' if len(src.leases) != 1 else ''}")
    if commits:
        parts.append("dmaprobe at " + ", ".join(sorted(commits)))
    return ", ".join(parts)


def caption(name, sim, meas):
    """The caption file's text: what the figure shows and from which data, machines and code."""
    lines = [f"{name}: {CAPTIONS.get(name, '')}", ""]
    cal = ", ".join(sorted(sim.drawn)) or "none drawn"
    commit = sim.meta.get("commit", "unknown")
    lines.append(f"Model: dmasim at {commit}, calibration {cal} (results.csv's calibration column).")
    used = [s for s in meas if s.used]
    for s in used:
        lines.append(f"Measured, {s.label}: {machine_facts(s)}.")
    if not used:
        lines.append("Measured: none in this figure.")
    else:
        lines.append(SPREADS.get(name, SPREAD))
    lines += [VISUAL_CODE, "Written by scripts/figures.py from the results files only."]
    return "\n".join(lines) + "\n"


def save(fig, out, name):
    paths = []
    pdf = os.path.join(out, name + ".pdf")
    png = os.path.join(out, name + ".png")
    txt = os.path.join(out, name + ".txt")
    text = caption(name, SOURCES["sim"], SOURCES["meas"])
    # No dates in the files, so a rerun on the same data gives the same bytes; the caption goes
    # into both files' metadata as well as beside them.
    fig.savefig(pdf, metadata={"CreationDate": None, "ModDate": None, "Producer": None,
                               "Creator": "dmasim scripts/figures.py", "Title": name, "Subject": text})
    fig.savefig(png, dpi=PNG_DPI, metadata={"Software": None, "Title": name, "Description": text})
    plt.close(fig)
    with open(txt, "w") as f:
        f.write(text)
    paths += [pdf, png, txt]
    return paths


SOURCES = {"sim": None, "meas": []}  # the figure run's sources, for captions


def measured_with(meas, scenario, **kw):
    return [s for s in meas if s.has(scenario, **kw)]


def note_missing(meas, what, scenario, **kw):
    missing = [s.label for s in meas if not s.has(scenario, **kw)]
    if missing:
        print(f"note: {what}: no measured rows in {', '.join(missing)}", file=sys.stderr)


# --------------------------------------------------------------------------------------------
# Figures


def fig_throughput(sim, meas, out):
    """1. Throughput vs size: pinned, pageable (h2d and d2h), duplex (aggregate)."""
    panels = [("pinned", "pinned", ("h2d", "d2h"), "Pinned (cudaMemcpy)"),
              ("pageable", "pageable", ("h2d", "d2h"), "Pageable (cudaMemcpy)"),
              ("duplex", "duplex", ("both",), "Duplex (h2d + d2h at once)")]
    panels = [p for p in panels if any(sim.has(p[0], strategy=p[1], direction=d) for d in p[2])]
    if not panels:
        raise Skip("no sim rows for the pinned, pageable or duplex scenarios")
    fig = new_figure(WIDE_W, 2.35, legend_rows=1)
    axes = fig.subplots(1, len(panels), squeeze=False)[0]
    dirs_used = []
    for ax, (scen, strat, dirs, title) in zip(axes, panels):
        all_sizes = []
        srcs = measured_with(meas, scen, strategy=strat)
        note_missing(meas, title, scen, strategy=strat)
        n = len(dirs) * max(1, len(srcs))
        for di, d in enumerate(dirs):
            colour = DIRECTION_COLOURS[d]
            model = sim.series(scen, strat, d)
            if model:
                xs, ys, band_lo, band_hi = throughput_points(model)
                model_plot(ax, xs, ys, colour)
                model_band(ax, xs, band_lo, band_hi, colour)
                all_sizes += xs
                if d not in dirs_used:
                    dirs_used.append(d)
            for si, s in enumerate(srcs):
                xs, c, lo, hi = throughput_points(s.series(scen, strat, d))
                k = di * len(srcs) + si
                measured_plot(ax, [x * dodge(k, n) for x in xs], c, lo, hi, colour, s)
                all_sizes += xs
        if all_sizes:
            size_axis(ax, all_sizes, step=6, label="Transfer size (per direction)")
        ax.set_title(title)
        ax.set_ylim(bottom=0)
    axes[0].set_ylabel("Throughput (GB/s)")
    labels = {"h2d": "host→device", "d2h": "device→host", "both": "both ways (sum)"}
    handles = [h_colour(DIRECTION_COLOURS[d], labels[d]) for d in dirs_used]
    handles += [h_model()] + [h_machine(s) for s in meas]
    top_legend(fig, handles, len(handles))
    return save(fig, out, "throughput_vs_size")


def fig_zero_copy(sim, meas, out):
    """2. Zero-copy reads (h2d) vs thread blocks and vs access stride."""
    blocks = [(1, "zero-copy-blocks1"), (4, "zero-copy-blocks4"), (16, "zero-copy-blocks16"),
              (264, "zero-copy")]
    strides = [(1, "zero-copy-stride1-4B"), (2, "zero-copy-stride2"), (8, "zero-copy-stride8"),
               (32, "zero-copy-stride32")]

    def panel_size(spec):
        """The size most of the panel's scenarios have in the model (the largest of a tie)."""
        counts = {}
        for _, scen in spec:
            for size in sim.series(scen, "zero_copy", "h2d"):
                counts[size] = counts.get(size, 0) + 1
        return max(counts, key=lambda sz: (counts[sz], sz)) if counts else None

    def points(src, spec, size, on_curve):
        """The points at the panel's size (on_curve) or, for a scenario the model has not run at
        it, at its largest size (drawn apart, not joined to the curve)."""
        xs, c, lo, hi, sizes = [], [], [], [], []
        for x, scen in spec:
            model_sizes = sim.series(scen, "zero_copy", "h2d")
            if not model_sizes or (size in model_sizes) != on_curve:
                continue
            at = size if on_curve else max(model_sizes)
            ser = src.series(scen, "zero_copy", "h2d")
            if at not in ser:
                continue
            _, cc, ll, hh = throughput_points({at: ser[at]})
            xs.append(x)
            c += cc
            lo += ll
            hi += hh
            sizes.append(at)
        return xs, c, lo, hi, sizes

    panels = [(blocks, "Thread blocks", "(a) 16 B reads, 256 thr/block"),
              (strides, "Stride (elements)", "(b) 4 B reads, 264 blocks")]
    panels = [(spec, xl, t, panel_size(spec)) for spec, xl, t in panels if panel_size(spec)]
    if not panels:
        raise Skip("no sim rows for zero-copy-blocks*/zero-copy-stride*")
    fig = new_figure(SINGLE_W, 2.45, legend_rows=1)
    axes = fig.subplots(1, len(panels), sharey=True, squeeze=False)[0]
    srcs = [s for s in meas if any(s.has(scen) for p in panels for _, scen in p[0])]
    colour = DIRECTION_COLOURS["h2d"]
    for ax, (spec, xlabel, title, size) in zip(axes, panels):
        xs, ys, _, _, _ = points(sim, spec, size, True)
        model_plot(ax, xs, ys, colour)
        for si, s in enumerate(srcs):
            mx, c, lo, hi, _ = points(s, spec, size, True)
            measured_plot(ax, [x * dodge(si, len(srcs), 0.25) for x in mx], c, lo, hi, colour, s)
        # A point the model ran at another size only: its own value, apart, with its size.
        ox, oy, _, _, osz = points(sim, spec, size, False)
        for x, y, at in zip(ox, oy, osz):
            ax.plot([x], [y], color=colour, zorder=3, **MODEL_BAR)
            ax.annotate(fmt_size(at), (x, y), textcoords="offset points", xytext=(0, -11), ha="center", fontsize=6)
        for si, s in enumerate(srcs):
            mx, c, lo, hi, _ = points(s, spec, size, False)
            measured_plot(ax, [x * dodge(si, len(srcs), 0.25) for x in mx], c, lo, hi, colour, s)
        pow2_axis(ax, [x for x, _ in spec], xlabel)
        log_y(ax)
        ax.set_title(f"{title},\n{fmt_size(size)} each")
    axes[0].set_ylabel("Read throughput (GB/s)")
    handles = [h_model("model (host→device reads)", colour)] + [h_machine(s, colour, s.label) for s in srcs]
    top_legend(fig, handles, len(handles))
    return save(fig, out, "zero_copy")


def fig_overlap(sim, meas, out):
    """3. Speed-up of the chunked N-stream pipeline over one stream."""
    def streams(src, scen):
        m = re.fullmatch(r"async-overlap-s(\d+)", scen)
        if m:
            return int(m.group(1))
        for run in src.runs:
            for r in src.select(run, scen, "async_overlap", variant=""):
                m = re.search(r"(\d+) streams?\b", r["note"])
                if m:
                    return int(m.group(1))
        return None

    def points(src):
        pts = {}
        scenarios = sorted({r["scenario"] for run in src.runs for r in run
                            if re.fullmatch(r"async-overlap(-s\d+)?", r["scenario"])})
        for scen in scenarios:
            n = streams(src, scen)
            if n is None or n in pts:
                continue
            per_run = []
            for run, lease in zip(src.runs, src.run_leases):
                ov = src.select(run, scen, "async_overlap", variant="")
                se = src.select(run, scen, "async_overlap", variant="serial")
                if ov and se:
                    per_run.append((lease, (se[0]["time"], ov[0])))
            if not per_run:
                continue
            pts[n] = (cross_lease_median(per_run, lambda so: so[0] / so[1]["time"]),
                      min(s / o["p90"] for _, (s, o) in per_run),
                      max(s / o["p10"] for _, (s, o) in per_run))
        return dict(sorted(pts.items()))

    model = points(sim)
    if not model:
        raise Skip("no sim async-overlap rows with a serial variant")
    colour = DIRECTION_COLOURS["both"]
    fig = new_figure(SINGLE_W, 2.5, legend_rows=2)
    ax = fig.subplots()
    model_plot(ax, list(model), [v[0] for v in model.values()], colour)
    srcs = []
    for s in meas:
        p = points(s)
        if p:
            srcs.append((s, p))
    for si, (s, p) in enumerate(srcs):
        measured_plot(ax, [x * dodge(si, len(srcs), 0.2) for x in p],
                      [v[0] for v in p.values()], [v[1] for v in p.values()],
                      [v[2] for v in p.values()], colour, s)
    xs = sorted(set(model) | {x for _, p in srcs for x in p})
    handles = [h_model("model (H2D → kernel → D2H per chunk)", colour)]
    # The ideal pipeline with the model's stage times: the longest stage's total plus one
    # chunk of each other stage (fill and drain), against running them one after another.
    stages = overlap_stages(sim)
    top = max(v[0] for v in model.values())
    if stages:
        h, k, d = stages
        longest, serial = max(stages), h + k + d
        bound = [serial / (longest + (serial - longest) / n) for n in xs]
        ax.plot(xs, bound, color=BLACK, ls=":", lw=1.0, zorder=1)
        top = max(top, max(bound))
        handles.append(h_model("ideal pipeline bound (model's stages)", BLACK, ":"))
        ax.text(0.98, 0.04, f"model, whole 256 MiB: H2D {h / 1e3:.2f} ms,\nkernel {k / 1e3:.2f} ms, "
                f"D2H {d / 1e3:.2f} ms", transform=ax.transAxes, ha="right", va="bottom", fontsize=6.5)
    pow2_axis(ax, xs, "Streams (= chunks of the 256 MiB)")
    ax.set_ylabel("Speed-up over one stream")
    ax.set_ylim(0, top * 1.15 + 0.1)
    handles += [h_machine(s, colour, s.label) for s, _ in srcs]
    top_legend(fig, handles, 2)
    return save(fig, out, "stream_overlap")


def overlap_stages(sim):
    """(H2D, kernel, D2H) in µs for the whole async-overlap size in the model: the pinned copies
    of that size and the kernel the scenario asks for (config.json beside results.csv), or None."""
    rows = [r for r in sim.runs[0] if r["scenario"] == "async-overlap" and r["strategy"] == "async_overlap"]
    if not rows or not sim.config:
        return None
    size = rows[0]["size"]
    kernel_ps = next((scenario_option(c, "async_overlap", "kernel") for c in sim.config
                      if c.get("name") == "async-overlap"), None)
    h2d, d2h = sim.series("pinned", "pinned", "h2d"), sim.series("pinned", "pinned", "d2h")
    if kernel_ps is None or size not in h2d or size not in d2h:
        return None
    return h2d[size]["time"], kernel_ps / 1e6, d2h[size]["time"]


def scenario_option(config, section, key):
    """A duration option of a scenario in config.json ("5ms", "2500000ps") in ps, or None."""
    value = (config.get(section) or {}).get(key)
    units = {"ps": 1, "ns": 1e3, "us": 1e6, "µs": 1e6, "ms": 1e9, "s": 1e12}
    m = re.fullmatch(r"([\d.]+)\s*(ps|ns|us|µs|ms|s)", str(value or "").strip())
    return float(m.group(1)) * units[m.group(2)] if m else None


def fig_duplex(sim, meas, out):
    """4. Duplex aggregate throughput, with the model's one-way pinned curves."""
    model = sim.series("duplex", "duplex", "both")
    if not model:
        raise Skip("no sim rows for scenario duplex")
    fig = new_figure(SINGLE_W, 2.6, legend_rows=2)
    ax = fig.subplots()
    xs, ys, _, _ = throughput_points(model)
    model_plot(ax, xs, ys, GREEN)
    sizes = list(xs)
    handles = [h_model("model, both ways (sum)", GREEN)]
    for d, lab in (("h2d", "model, pinned h2d"), ("d2h", "model, pinned d2h")):
        one = sim.series("pinned", "pinned", d)
        if one:
            ox, oy, _, _ = throughput_points(one)
            model_plot(ax, ox, oy, DIRECTION_COLOURS[d], ls=STRATEGY_STYLES["pinned"])
            handles.append(h_model(lab + " (one way)", DIRECTION_COLOURS[d], STRATEGY_STYLES["pinned"]))
            sizes += ox
    srcs = measured_with(meas, "duplex", strategy="duplex")
    note_missing(meas, "duplex", "duplex", strategy="duplex")
    for si, s in enumerate(srcs):
        mx, c, lo, hi = throughput_points(s.series("duplex", "duplex", "both"))
        measured_plot(ax, [x * dodge(si, len(srcs), 0.25) for x in mx], c, lo, hi, GREEN, s)
        handles.append(h_machine(s, GREEN, f"{s.label}, both ways"))
    size_axis(ax, sizes, step=4, label="Transfer size (per direction)")
    ax.set_ylim(bottom=0)
    ax.set_ylabel("Throughput (GB/s)")
    top_legend(fig, handles, 2 if len(handles) > 3 else len(handles))
    return save(fig, out, "duplex")


def peer_route(meas):
    """How the measured machine joins GPU 0 and GPU 1 (nvidia-smi topo -m in a lease's
    machine.txt), e.g. 'NV18'; None when no lease says."""
    for s in meas:
        for folder in s.folders:
            try:
                with open(os.path.join(folder, "machine.txt"), errors="replace") as f:
                    text = re.sub(r"\x1b\[[0-9;]*m", "", f.read())
            except OSError:
                continue
            m = re.search(r"^GPU0\t\s*X\s*\t(\S+)", text, re.M)
            if m:
                return m.group(1)
    return None


def fig_peer(sim, meas, out):
    """5. GPU-to-GPU copies with peer access on (NVLink here) and off (staged through host)."""
    panels = [("h2d", "One way (GPU 0 → GPU 1)"), ("both", "Both ways at once (sum)")]
    panels = [p for p in panels if any(sim.has("peer", strategy="peer", direction=p[0], variant=v)
                                       for v in PEER_STYLES)]
    if not panels:
        raise Skip("no sim rows for scenario peer")
    srcs = measured_with(meas, "peer", strategy="peer")
    note_missing(meas, "peer", "peer", strategy="peer")
    fig = new_figure(SINGLE_W, 2.7, legend_rows=3)
    axes = fig.subplots(1, len(panels), sharey=True, squeeze=False)[0]
    for ax, (d, title) in zip(axes, panels):
        sizes = []
        colour = DIRECTION_COLOURS[d]
        n = len(PEER_STYLES) * max(1, len(srcs))
        for vi, (v, ls) in enumerate(PEER_STYLES.items()):
            model = sim.series("peer", "peer", d, v)
            if model:
                xs, ys, _, _ = throughput_points(model)
                model_plot(ax, xs, ys, colour, ls=ls)
                sizes += xs
            for si, s in enumerate(srcs):
                mx, c, lo, hi = throughput_points(s.series("peer", "peer", d, v))
                k = vi * len(srcs) + si
                measured_plot(ax, [x * dodge(k, n, 0.3) for x in mx], c, lo, hi, colour, s)
                sizes += mx
        size_axis(ax, sizes, step=4, label="Size (per direction)")
        log_y(ax)
        ax.set_title(title)
    axes[0].set_ylabel("Throughput (GB/s)")
    route = peer_route(srcs)
    on = "peer access on" + (f" (GPUs joined by {route}: NVLink)" if route and route.startswith("NV") else
                             f" ({route})" if route else "")
    handles = [h_model("model, " + on, KEY_GREY, PEER_STYLES["peer=on"]),
               h_model("model, peer access off (staged through host memory)", KEY_GREY, PEER_STYLES["peer=off"])]
    handles += [h_machine(s) for s in srcs]
    top_legend(fig, handles, 1 if len(handles) > 2 else len(handles))
    return save(fig, out, "peer")


def periodic_summary(src, run, scen):
    """Latency summary of one periodic scenario in one run, or None."""
    main = src.select(run, scen, "periodic", variant="")
    if not main:
        return None
    m = main[0]
    p99 = src.select(run, scen, "periodic", variant="p99")
    misses = src.select(run, scen, "periodic", variant="misses")
    out = {"p10": m["p10"], "p50": m["time"], "p90": m["p90"], "max": m["max"],
           "p99": p99[0]["time"] if p99 else None, "size": m["size"],
           "deadline": misses[0]["time"] if misses else None, "misses": None, "frames": None}
    for r in (misses or []) + [m]:
        mm = (re.search(r"misses=(\d+)\s+frames=(\d+)", r["note"])
              or re.search(r"(\d+) of (\d+) frames missed", r["note"]))
        if mm:
            out["misses"], out["frames"] = int(mm.group(1)), int(mm.group(2))
            break
    if out["deadline"] is None:
        mm = re.search(r"deadline_us=([\d.]+)", m["note"])
        if mm:
            out["deadline"] = float(mm.group(1))
    via = re.search(r"via (\w+)", m["note"])
    out["via"] = via.group(1) if via else None
    return out


def lease_periodic_summary(src, runs, scen):
    """periodic_summary over a lease's runs: medians of the percentiles, the worst maximum, the
    frames and misses of every run added up."""
    summs = [s for s in (periodic_summary(src, run, scen) for run in runs) if s]
    if not summs:
        return None
    out = dict(summs[0])
    for k in ("p10", "p50", "p90"):
        out[k] = statistics.median(s[k] for s in summs)
    p99 = [s["p99"] for s in summs if s["p99"] is not None]
    out["p99"] = statistics.median(p99) if p99 else None
    out["max"] = max(s["max"] for s in summs)
    if all(s["misses"] is not None for s in summs):
        out["misses"] = sum(s["misses"] for s in summs)
        out["frames"] = sum(s["frames"] for s in summs)
    return out


def draw_latency_rows(ax, rows, group_title_rows):
    """rows: (y, label, src, summary); src None for the model. Draws the distribution glyphs in
    the host→device colour (frames go to the GPU), the p50 as the model's bar or the machine's
    marker. Returns the legend handles of the glyphs drawn, and only those."""
    colour = DIRECTION_COLOURS["h2d"]
    used = {}
    for y, _label, src, s in rows:
        if s["p90"] > s["p10"]:
            ax.plot([s["p10"], s["p90"]], [y, y], color=colour, lw=4.5, alpha=0.35,
                    solid_capstyle="butt", zorder=2)
            used["band"] = Line2D([], [], color=colour, lw=4.5, alpha=0.35, label="p10–p90")
        if s["max"] > s["p90"]:
            ax.plot([s["p90"], s["max"]], [y, y], color=colour, lw=0.7, zorder=2)
        if src is None:
            ax.plot([s["p50"]], [y], marker="|", ms=8, mew=1.6, color=colour, zorder=4)
            used["p50 model"] = Line2D([], [], color=colour, marker="|", ms=8, mew=1.6, ls="none",
                                       label="p50, model")
        else:
            ax.plot([s["p50"]], [y], marker=src.marker, ms=3.8, mew=0.9, color=colour,
                    mfc=colour if src.filled else "white", mec=colour, zorder=4)
            used["p50 " + src.label] = h_machine(src, colour, f"p50, {src.label} (measured)")
        if s["p99"] is not None:
            ax.plot([s["p99"]], [y], marker="D", ms=2.8, color=colour, zorder=4)
            used["p99"] = Line2D([], [], color=colour, marker="D", ms=2.8, ls="none", label="p99")
        if s["max"] > s["p50"]:
            ax.plot([s["max"]], [y], marker="x", ms=3.2, mew=0.9, color=colour, zorder=4)
            used["max"] = Line2D([], [], color=colour, marker="x", ms=3.2, mew=0.9, ls="none", label="max")
    ax.set_yticks([r[0] for r in rows], [r[1] for r in rows])
    ax.tick_params(axis="y", length=0)
    ax.spines["left"].set_visible(False)   # categorical rows: no axis line needed
    ax.set_xscale("log")
    ax.xaxis.set_major_formatter(ticker.FuncFormatter(fmt_us))
    ax.xaxis.set_minor_formatter(ticker.NullFormatter())
    ax.grid(True, which="major", axis="x")
    ax.grid(False, axis="y")
    ax.invert_yaxis()
    order = ["band", "p50 model"] + sorted(k for k in used if k.startswith("p50 ") and k != "p50 model") + ["p99", "max"]
    return [used[k] for k in order if k in used]


DEADLINE = dict(color=BLACK, ls="--", lw=1)


def periodic_scenarios(src):
    seen = []
    for run in src.runs:
        for r in run:
            if r["strategy"] == "periodic" and r["variant"] == "" and r["scenario"] not in seen:
                seen.append(r["scenario"])
    return seen


def fig_latency(sim, meas, out):
    """6. Periodic frames: latency distribution per radar scenario, model vs measured."""
    measured_scen = {sc for s in meas for sc in periodic_scenarios(s)}
    groups = [sc for sc in periodic_scenarios(sim) if sc in measured_scen]
    if not groups:
        raise Skip("no periodic scenario with both sim and measured rows")
    rows, titles, deadlines = [], [], []
    y = 0.0
    for scen in groups:
        model = periodic_summary(sim, sim.runs[0], scen)
        title = scen
        if model:
            via = f" via {model['via']}" if model["via"] else ""
            title = f"{scen}: {fmt_size(model['size'])}{via}"
        title_at = len(titles)
        titles.append((y, title))
        y += 1
        first = y
        entries = [("model", None, model)] if model else []
        for s in meas:
            if len(s.leases) == 1:
                # One lease: each run of it.
                for i, run in enumerate(s.runs):
                    summ = periodic_summary(s, run, scen)
                    if summ:
                        lab = f"{s.label} run {i + 1}" if len(s.runs) > 1 else s.label
                        entries.append((lab, s, summ))
                continue
            for lease, runs in s.runs_by_lease():  # several: one entry per lease
                summ = lease_periodic_summary(s, runs, scen)
                if summ:
                    entries.append((f"{s.label} {lease}", s, summ))
        for lab, src, summ in entries:
            if summ["misses"]:
                lab += f" ({summ['misses']}/{summ['frames']} late)"
            rows.append((y, lab, src, summ))
            y += 1
        d = next((e[2]["deadline"] for e in entries if e[2]["deadline"]), None)
        if d:
            deadlines.append((d, first - 0.5, y - 0.5))
            titles[title_at] = (titles[title_at][0], f"{title}, deadline {fmt_us(d)}")
        y += 0.4
    height = 0.9 + 0.15 * y
    fig = new_figure(SINGLE_W, height + 0.15, legend_rows=2)
    ax = fig.subplots()
    handles = draw_latency_rows(ax, rows, titles)
    # Group titles start at the figure's left edge, above the row labels; kept out of the
    # layout so that constrained layout does not shrink the axes to make room for them.
    trans = blended_transform_factory(fig.transFigure, ax.transData)
    for ty, text in titles:
        t = ax.text(0.015, ty, text, transform=trans, ha="left", va="center", fontsize=7,
                    fontweight="bold")
        t.set_in_layout(False)
    for d, y0, y1 in deadlines:
        ax.plot([d, d], [y0, y1], zorder=3, **DEADLINE)
    if deadlines:
        handles.append(Line2D([], [], label="deadline", **DEADLINE))
    lo = min(r[3]["p10"] for r in rows)
    hi = max([r[3]["max"] for r in rows] + [d for d, _, _ in deadlines])
    ax.set_xlim(lo / 1.6, hi * 1.6)
    ax.set_ylim(y - 0.2, -0.7)
    ax.set_xlabel("Frame latency")  # from release to completion (the caption says so)
    top_legend(fig, handles, math.ceil(len(handles) / 3))
    return save(fig, out, "frame_latency")


def whatif_radar_label(sc):
    """radar-switch-fpga-via-host-gen3x8 -> 'switch, via host, card on Gen3 x8' (the scenario's
    links section sets the card's own link)."""
    m = re.fullmatch(r"radar-(\w+)-(fpga-direct|fpga-via-host|2gbps-direct)-gen(\d+)x(\d+)", sc)
    if not m:
        return sc[len("radar-"):] if sc.startswith("radar-") else sc
    how = {"fpga-direct": "direct", "fpga-via-host": "via host",
           "2gbps-direct": "direct, 2 GB/s"}[m.group(2)]
    return f"{m.group(1)}, {how}, card on Gen{m.group(3)} x{m.group(4)}"


def fig_whatif_radar(sim, meas, out):
    """8. Periodic what-if scenarios (sim only): latency against the deadline."""
    measured_scen = {sc for s in meas for sc in periodic_scenarios(s)}
    scen = [sc for sc in periodic_scenarios(sim) if sc not in measured_scen]
    if not scen:
        raise Skip("no sim-only periodic scenarios")
    rows, deadlines, late = [], [], []
    for i, sc in enumerate(scen):
        s = periodic_summary(sim, sim.runs[0], sc)
        if not s:
            continue
        rows.append((i, whatif_radar_label(sc), None, s))
        if s["deadline"]:
            deadlines.append((s["deadline"], i))
        if s["misses"]:
            late.append((i, f"{s['misses']}/{s['frames']} late"))
    height = 0.95 + 0.16 * len(rows)
    fig = new_figure(SINGLE_W, height, legend_rows=1)
    ax = fig.subplots()
    handles = draw_latency_rows(ax, rows, [])
    for d, yy in deadlines:
        ax.plot([d, d], [yy - 0.4, yy + 0.4], zorder=3, **DEADLINE)
    if deadlines:
        handles.append(Line2D([], [], label="deadline", **DEADLINE))
    hi = max([r[3]["max"] for r in rows] + [d for d, _ in deadlines])
    lo = min(r[3]["p10"] for r in rows)
    ax.set_xlim(lo / 1.6, hi * 4)
    for yy, text in late:
        ax.text(hi * 1.25, yy, text, ha="left", va="center", fontsize=6.5, color=BLACK)
    ax.set_ylim(len(scen) - 0.4, -0.6)
    ax.set_xlabel("Frame latency (model)")
    top_legend(fig, handles, len(handles))
    return save(fig, out, "whatif_radar")


def fig_whatif_links(sim, meas, out):
    """7. What-if sweeps (sim only): PCIe generation, lane count, peer through a switch."""
    links = {}
    for r in sim.runs[0]:
        m = re.fullmatch(r"gen(\d+)-x(\d+)", r["scenario"])
        if m:
            links[(int(m.group(1)), int(m.group(2)))] = r["scenario"]
    peer = {}
    for r in sim.runs[0]:
        m = re.fullmatch(r"peer-switch-gen(\d+)", r["scenario"])
        if m:
            peer[int(m.group(1))] = r["scenario"]
    gen_sweep = sorted((g, sc) for (g, w), sc in links.items() if w == 16)
    width_sweep = sorted((w, sc) for (g, w), sc in links.items() if g == 5)
    panels = []
    if len(gen_sweep) > 1:
        panels.append(("gen", gen_sweep, "PCIe generation (x16)", "(a) Gen3–Gen6, x16"))
    if len(width_sweep) > 1:
        panels.append(("width", width_sweep, "Lanes (Gen5)", "(b) Gen5, x4–x16"))
    if len(peer) > 1:
        panels.append(("peer", sorted(peer.items()), "PCIe generation (x16)",
                       "(c) GPU→GPU via a PCIe switch"))
    if not panels:
        raise Skip("no gen*-x*/peer-switch-gen* what-if rows in the sim results")
    # Two legend rows: strategies and line styles, then the era hosts and measured anchors.
    fig = new_figure(WIDE_W, 2.65, legend_rows=2)
    axes = fig.subplots(1, len(panels), squeeze=False)[0]
    strategies_used, anchors = [], []
    era_hosts = False
    for ax, (kind, sweep, xlabel, title) in zip(axes, panels):
        pos = list(range(len(sweep)))
        ticks = [f"Gen{k}" if kind != "width" else f"x{k}" for k, _ in sweep]
        if kind == "peer":
            for v, ls in PEER_STYLES.items():
                for d in ("h2d", "both"):
                    xs, ys = [], []
                    for x, (_, sc) in zip(pos, sweep):
                        ser = sim.series(sc, "peer", d, v)
                        if ser:
                            size = max(ser)
                            xs.append(x)
                            ys.append(gbps(size, ser[size]["directions"], ser[size]["time"]))
                    if xs:
                        model_plot(ax, xs, ys, DIRECTION_COLOURS[d], ls=ls)
            ax.legend(handles=[h_model("peer access on", KEY_GREY, PEER_STYLES["peer=on"]),
                               h_model("peer off (via host)", KEY_GREY, PEER_STYLES["peer=off"]),
                               h_colour(DIRECTION_COLOURS["h2d"], "one way"),
                               h_colour(DIRECTION_COLOURS["both"], "both ways (sum)")],
                      loc="upper left")
        else:
            for strat, ls in STRATEGY_STYLES.items():
                for d in ("h2d", "d2h"):
                    colour = DIRECTION_COLOURS[d]
                    xs, ys = [], []
                    for x, (_, sc) in zip(pos, sweep):
                        ser = sim.series(sc, strat, d)
                        if ser:
                            size = max(ser)
                            xs.append(x)
                            ys.append(gbps(size, ser[size]["directions"], ser[size]["time"]))
                            # Measured anchor: the machine's own link, same size, same strategy.
                            for si, s in enumerate(meas):
                                key = sweep[x][0]
                                if s.link is None or strat == "zero_copy":
                                    continue
                                match = (s.link == (key, 16)) if kind == "gen" else (s.link == (5, key))
                                if not match:
                                    continue
                                mser = s.series(strat, strat, d)
                                if size in mser:
                                    _, c, lo, hi = throughput_points({size: mser[size]})
                                    off = (si * 2 + (d == "d2h")) * 0.07 - 0.1
                                    measured_plot(ax, [x + off], c, lo, hi, colour, s)
                                    if s not in anchors:
                                        anchors.append(s)
                    if xs:
                        model_plot(ax, xs, ys, colour, ls=ls)
                        if strat not in strategies_used:
                            strategies_used.append(strat)
        if kind == "gen":
            # The same copies on a host of the link's own era (platform files v100-gen3,
            # a100-gen4: 64-byte read completions), at the sweep's size: model values, so bars.
            for x, (g, sc) in zip(pos, sweep):
                era = next((r["scenario"] for r in sim.runs[0]
                            if re.fullmatch(rf"[a-z]\d+-gen{g}-host", r["scenario"])), None)
                ref = sim.series(sc, "pinned", "h2d")
                if era is None or not ref:
                    continue
                for d in ("h2d", "d2h"):
                    ser = sim.series(era, "pinned", d)
                    size = max(ref)
                    if size in ser:
                        y = gbps(size, ser[size]["directions"], ser[size]["time"])
                        ax.plot([x + (0.12 if d == "d2h" else -0.12)], [y], color=DIRECTION_COLOURS[d],
                                zorder=4, **MODEL_BAR)
                        era_hosts = True
        ax.set_xticks(pos, ticks)
        ax.set_xlim(-0.4, len(pos) - 0.6)
        ax.grid(False, axis="x")
        ax.set_xlabel(xlabel)
        ax.set_ylim(bottom=0)
        ax.set_title(title)
    axes[0].set_ylabel("Throughput (GB/s)")
    names = {"pinned": "pinned", "pageable": "pageable", "zero_copy": "zero-copy"}
    handles = []
    if strategies_used:
        handles += [h_colour(DIRECTION_COLOURS["h2d"], "host→device"), h_colour(DIRECTION_COLOURS["d2h"], "device→host")]
    handles += [h_model(f"model, {names[s]}", KEY_GREY, STRATEGY_STYLES[s]) for s in strategies_used]
    if era_hosts:
        handles.append(Line2D([], [], color=KEY_GREY, label="model, pinned on a host of that era (h2d left, d2h right)",
                              **MODEL_BAR))
    handles += [h_machine(s, label=f"{s.label} (measured, Gen{s.link[0]} x{s.link[1]})")
                for s in anchors]
    if handles:
        top_legend(fig, handles, math.ceil(len(handles) / 2))
    return save(fig, out, "whatif_links")


FIGURES = [
    ("throughput_vs_size", fig_throughput),
    ("zero_copy", fig_zero_copy),
    ("stream_overlap", fig_overlap),
    ("duplex", fig_duplex),
    ("peer", fig_peer),
    ("frame_latency", fig_latency),
    ("whatif_links", fig_whatif_links),
    ("whatif_radar", fig_whatif_radar),
]


def main(argv=None):
    ap = argparse.ArgumentParser(
        description="Draw the model-vs-measured figures (PDF + PNG) from the results CSVs.")
    ap.add_argument("--sim", default=os.path.join(ROOT, "results", "sim", "results.csv"),
                    help="simulator results.csv (default: results/sim/results.csv)")
    ap.add_argument("--measured", nargs="*", metavar="[LABEL=]DIR",
                    help="machine folders (every lease below, each of its runs), lease folders "
                         "or CSV files; default: every results/*/measured/")
    # Never the committed results/figures by default: regenerating those is asked for by name
    # (--out results/figures, or scripts/run-main.sh --regenerate).
    ap.add_argument("--out", default=os.path.join(ROOT, "out", "figures"),
                    help="output folder (default: out/figures; the committed ones: --out results/figures)")
    ap.add_argument("--only", nargs="*", metavar="NAME", choices=[n for n, _ in FIGURES],
                    help="draw only these figures")
    args = ap.parse_args(argv)

    if not os.path.isfile(args.sim):
        print(f"error: {args.sim}: no such file", file=sys.stderr)
        return 2
    sim = Source("model", [load_rows(args.sim)], "sim")
    for name, attr in (("config.json", "config"), ("meta.json", "meta")):
        path = os.path.join(os.path.dirname(args.sim), name)
        if os.path.isfile(path):
            with open(path) as f:
                setattr(sim, attr, json.load(f))
    specs = args.measured
    if specs is None:
        specs = sorted(d for d in glob.glob(os.path.join(ROOT, "results", "*", "measured"))
                       if os.path.isdir(d))
    meas = load_measured(specs)
    os.makedirs(args.out, exist_ok=True)
    plt.rcParams.update(STYLE)

    written, failed = [], 0
    SOURCES["sim"], SOURCES["meas"] = sim, meas
    for name, func in FIGURES:
        if args.only and name not in args.only:
            continue
        for src in [sim] + meas:
            src.reset_drawn()
        try:
            written += func(sim, meas, args.out)
        except Skip as e:
            print(f"skipped {name}: {e}", file=sys.stderr)
        except Exception:  # a bug or odd data in one figure must not lose the others
            failed += 1
            print(f"error in {name}:", file=sys.stderr)
            traceback.print_exc()
        finally:
            plt.close("all")
    for p in written:
        print(os.path.relpath(p))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
