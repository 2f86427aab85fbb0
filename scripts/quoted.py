#!/usr/bin/env python3
"""Numbers quoted in README.md and docs/: written from the committed results files, and checked
against them.

Usage: scripts/quoted.py --write     rewrite the generated passages from results/
       scripts/quoted.py --check     exit 1 naming file:line when a passage is stale or a quoted
                                     number is in no results file (a test runs this)

Generated passages sit between `<!-- quoted:NAME -->` and `<!-- /quoted:NAME -->`; NAME is one
of PASSAGES below, and the text between the markers is what the script writes from results/
(the same NAME may appear in several files). scripts/run-main.sh --regenerate rewrites them.

Every other quoted measurement — a number followed by GB/s, µs, us, ms or % in prose or a table,
outside code blocks and `inline code` — must be found in a results file under results/ at the
precision it is printed with (54.2 GB/s matches 54.2143; 1.23 ms matches 1231.4 µs). A line that
quotes something that is not a result of this project (a published figure, a parameter's
value, a specification's rate) says so with `<!-- not a result: why -->`. Standard library only.
"""
import argparse
import bisect
import csv
import glob
import gzip
import math
import os
import re
import sys

import questions

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def docs():
    """README.md, results/README.md and docs/*.md that exist under ROOT."""
    found = [d for d in ("README.md", "results/README.md") if os.path.isfile(os.path.join(ROOT, d))]
    return found + sorted(os.path.relpath(p, ROOT) for p in glob.glob(os.path.join(ROOT, "docs", "*.md")))

# Written by scripts/questions.py, checked by its own test.
GENERATED_ELSEWHERE = {"docs/questions.md"}
SIM = "results/sim/results.csv"
COMPARE = "results/h100-sxm/compare/compare.csv"
MIB, GIB = 1 << 20, 1 << 30

NUMBER = re.compile(r"(?<![\w.])(\d+(?:\.\d+)?)\s?(GB/s|µs|us|ms|%)(?![\w/])")
INLINE_CODE = re.compile(r"`[^`]*`")
EXEMPT = "<!-- not a result"
MARK = re.compile(r"<!-- (/?)quoted:([\w-]+) -->")


class InputProblem(Exception):
    pass


def read_rows(path):
    full = os.path.join(ROOT, path)
    if not os.path.isfile(full):
        raise InputProblem(f"{path}: missing (run scripts/run-main.sh --regenerate)")
    with open(full, newline="") as f:
        return list(csv.DictReader(f))


class Sim(questions.Sim):
    """The model's rows, read as docs/questions.md reads them, and the calibrations behind some."""

    def __init__(self):
        if not os.path.isfile(os.path.join(ROOT, SIM)):
            raise InputProblem(f"{SIM}: missing (run scripts/run-main.sh --regenerate)")
        super().__init__(os.path.join(ROOT, SIM))

    def calibration(self, *keys, base=False):
        """The calibrations the rows name; `base`: without a platform's host part (", host of ...")."""
        cals = sorted({(self.row(*k).get("calibration") or "not recorded").split(", host of ")[0] if base
                       else self.row(*k).get("calibration") or "not recorded" for k in keys})
        return ", ".join(f"`{c}`" for c in cals)


def measured_gbps(strategy, direction, size):
    for r in read_rows(COMPARE):
        if (r["scenario"], r["strategy"], r["direction"], int(r["size_bytes"]), r["variant"]) == (
                strategy, strategy, direction, size, ""):
            return float(r["measured_gbps"])
    raise InputProblem(f"{COMPARE}: no row for {strategy} {direction} {size}")


def pcie_links(sim):
    """README: the same copies on links of four generations and three widths."""
    links = [("gen3-x16", "Gen3 x16"), ("gen4-x16", "Gen4 x16"), ("gen5-x16", "Gen5 x16"), ("gen6-x16", "Gen6 x16"),
             ("gen5-x8", "Gen5 x8"), ("gen5-x4", "Gen5 x4")]
    cols = [("pinned", "h2d"), ("pinned", "d2h"), ("pageable", "h2d"), ("zero_copy", "h2d")]
    keys = [(s, st, d, 64 * MIB) for s, _ in links for st, d in cols]
    out = [
        "The shipped sweep (`results/sim/`, `scenarios/whatif/pcie-links.yaml`; calibration "
        + sim.calibration(*keys) + "), 64 MiB, the H100 host's root complex (256-byte read",
        "completions; its port's data path, 55.2 GB/s each way, and its 93 GB/s of host memory left out so that the link "
        "shows) at every link:",
        "",
        "| link | pinned H2D | pinned D2H | pageable H2D | zero-copy H2D |",
        "|---|---|---|---|---|",
    ]
    for s, label in links:
        out.append(f"| {label} | " + " | ".join(f"{sim.gbps(s, st, d, 64 * MIB):.2f} GB/s" for st, d in cols) + " |")
    return out


# Published figures for hosts of older generations (not measured here).
PUBLISHED = {
    "v100-gen3": "12–13 GB/s (V100/P100, bandwidthTest)",
    "a100-gen4": "25.1 GB/s (A100); 24.8 (nvbandwidth on HGX A100, NVIDIA/nvbandwidth#53)",
}
PUBLISHED_PAGEABLE = {
    "v100-gen3": "5–6 GB/s, large copies (V100, most likely a DGX-1: rapidsai/dask-cuda#98)",
    "a100-gen4": "10.0 / 10.8 GB/s at 32 MB (DGX A100, bandwidthTest: gengwg/gpu `nvda_gpu_benchmark.md`)",
}


def host_eras(sim):
    """README and docs/platforms.md: one copy on hosts of three GPU generations."""
    hosts = [("v100-gen3-host", "v100-gen3", "Gen3 x16 behind a switch"),
             ("a100-gen4-host", "a100-gen4", "Gen4 x16 behind a switch"),
             ("h100-gen5-host", "h100-sxm", "Gen5 x16, the lent machine")]
    keys = [(s, "pinned", d, GIB) for s, _, _ in hosts for d in ("h2d", "d2h")]
    m_h2d, m_d2h = measured_gbps("pinned", "h2d", GIB), measured_gbps("pinned", "d2h", GIB)
    out = [
        "`dmasim run scenarios/whatif/host-eras.yaml` (`results/sim/`; calibration " + sim.calibration(*keys, base=True)
        + ", the H100 host's",
        "runtime costs on every platform, the older hosts' CPU and DRAM from their platform files' `host:`), 1 GiB pinned:",
        "",
        "| host | H2D | published or measured H2D | D2H |",
        "|---|---|---|---|",
    ]
    for s, platform, what in hosts:
        h2d, d2h = sim.gbps(s, "pinned", "h2d", GIB), sim.gbps(s, "pinned", "d2h", GIB)
        if platform in PUBLISHED:
            ref, tail, exempt = PUBLISHED[platform], "", " <!-- not a result: published figures -->"
        else:
            ref, tail, exempt = f"{m_h2d:.1f} GB/s measured here", f" ({m_d2h:.1f} measured)", ""
        out.append(f"| `{platform}` ({what}) | {h2d:.2f} GB/s | {ref} | {d2h:.2f} GB/s{tail} |{exempt}")
    out += ["", "Pageable, with each platform's `host:` values (H2D / D2H):", "",
            "| host | 32 MiB | 256 MiB | published |", "|---|---|---|---|"]
    for platform, _ in PUBLISHED_PAGEABLE.items():
        s = platform + "-pageable"
        cells = [f"{sim.gbps(s, 'pageable', 'h2d', n):.2f} / {sim.gbps(s, 'pageable', 'd2h', n):.2f} GB/s"
                 for n in (32 * MIB, 256 * MIB)]
        out.append(f"| `{platform}` | {cells[0]} | {cells[1]} | {PUBLISHED_PAGEABLE[platform]} |"
                   " <!-- not a result: published figures -->")
    return out


PASSAGES = {"pcie-links": pcie_links, "host-eras": host_eras}


def render(text, path, sim):
    """The file with every passage rewritten; raises InputProblem for unbalanced markers."""
    lines = text.split("\n")
    out, i = [], 0
    while i < len(lines):
        line = lines[i]
        out.append(line)
        m = MARK.fullmatch(line.strip())
        i += 1
        if not m:
            continue
        closing, name = m.group(1) == "/", m.group(2)
        if closing:
            raise InputProblem(f"{path}:{i}: '<!-- /quoted:{name} -->' closes no passage")
        if name not in PASSAGES:
            raise InputProblem(f"{path}:{i}: no passage named '{name}' (known: {', '.join(PASSAGES)})")
        end = next((j for j in range(i, len(lines)) if lines[j].strip() == f"<!-- /quoted:{name} -->"), None)
        if end is None:
            raise InputProblem(f"{path}:{i}: passage '{name}' is not closed by '<!-- /quoted:{name} -->'")
        out += PASSAGES[name](sim)
        out.append(lines[end])
        i = end + 1
    return "\n".join(out)


def results_values():
    """{"GB/s": sorted values, "µs": sorted values} from the results files. In a CSV only the
    columns that hold that quantity count (gbps, measured_gbps, ...; time_us, p90_us, ...), so
    that a rate is not found among times or byte counts; other files (JSON, YAML, text) count
    every number for both."""
    rates, times, pcts = set(), set(), set()
    number = re.compile(r"\d+(?:\.\d+)?(?:[eE][-+]?\d+)?")

    def add(to, text):
        for m in number.finditer(text):
            v = float(m.group(0))
            if v > 0 and math.isfinite(v):
                to.add(v)

    for path in glob.glob(os.path.join(ROOT, "results", "**", "*"), recursive=True):
        if not os.path.isfile(path) or not path.endswith((".csv", ".json", ".json.gz", ".yaml", ".txt")):
            continue
        # A lease's every repetition (measured.json) is kept compressed (scripts/measure-on-gpu.sh).
        opener = gzip.open if path.endswith(".gz") else open
        with opener(path, "rt", errors="replace", newline="") as f:
            if not path.endswith(".csv"):
                # Metadata (machine.txt, plan.txt, config.json, meta.json) holds no results:
                # only benchmark outputs, calibration files and JSON results count.
                if path.endswith(".txt") and os.sep + "bench" + os.sep not in path:
                    continue
                if os.path.basename(path) in ("config.json", "meta.json", "metadata.json"):
                    continue
                text = f.read()
                for to in (rates, times, pcts):
                    add(to, text)
                continue
            reader = csv.reader(f)
            header = next(reader, [])
            rate_cols = [i for i, h in enumerate(header) if "gbps" in h or "GB/s" in h]
            pct_cols = [i for i, h in enumerate(header) if "pct" in h or h.endswith("%")]
            time_cols = [i for i, h in enumerate(header) if h.endswith("_us") or "_us_" in h]
            for row in reader:
                for cols, to in ((rate_cols, rates), (time_cols, times), (pct_cols, pcts)):
                    for i in cols:
                        if i < len(row):
                            add(to, row[i])
    return {"GB/s": sorted(rates), "µs": sorted(times), "%": sorted(pcts)}


def in_results(values, text, unit):
    """Whether some results value of the quantity (GB/s, or a time in µs) prints as text."""
    decimals = len(text.split(".")[1]) if "." in text else 0
    v, half = float(text), 0.5 * 10 ** -decimals
    # Times: results hold µs (bench JSON: ms); a quoted ms value may be either.
    scales = {"GB/s": [1], "%": [1], "µs": [1, 1e-3], "us": [1, 1e-3], "ms": [1e3, 1]}[unit]
    pool = values["µs"] if unit in ("µs", "us", "ms") else values[unit]
    for scale in scales:
        lo, hi = (v - half) * scale, (v + half) * scale
        i = bisect.bisect_left(pool, lo * (1 - 1e-12))
        if i < len(pool) and pool[i] <= hi * (1 + 1e-12):
            return True
    return False


def quoted_numbers(path, text):
    """(line number, number, unit, line) of every quoted measurement outside code and passages."""
    in_code, in_passage = False, False
    for n, line in enumerate(text.split("\n"), 1):
        if line.strip().startswith("```"):
            in_code = not in_code
            continue
        m = MARK.fullmatch(line.strip())
        if m:
            in_passage = m.group(1) != "/"
            continue
        if in_code or in_passage or EXEMPT in line:
            continue
        for q in NUMBER.finditer(INLINE_CODE.sub("", line)):
            yield n, q.group(1), q.group(2), line.strip()


def main():
    global ROOT
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    mode = ap.add_mutually_exclusive_group(required=True)
    mode.add_argument("--write", action="store_true", help="rewrite the generated passages from results/")
    mode.add_argument("--check", action="store_true", help="fail on a stale passage or a number in no results file")
    ap.add_argument("--root", default=ROOT, help="the checkout whose docs and results/ are used (default: this one)")
    args = ap.parse_args()
    ROOT = os.path.abspath(args.root)
    try:
        sim = Sim()
        problems, changed = [], []
        values = results_values() if args.check else []
        for doc in docs():
            full = os.path.join(ROOT, doc)
            with open(full) as f:
                text = f.read()
            new = render(text, doc, sim)
            if args.write and new != text:
                with open(full, "w") as f:
                    f.write(new)
                changed.append(doc)
            if args.check:
                if new != text:
                    old_lines, new_lines = text.split("\n"), new.split("\n")
                    line = next((i + 1 for i, (a, b) in enumerate(zip(old_lines, new_lines)) if a != b),
                                min(len(old_lines), len(new_lines)))
                    problems.append(f"{doc}:{line}: generated passage is stale (scripts/quoted.py --write)")
                if doc in GENERATED_ELSEWHERE:
                    continue
                for n, number, unit, line in quoted_numbers(doc, text):
                    if not in_results(values, number, unit):
                        problems.append(f"{doc}:{n}: {number} {unit} is in no results file under results/ "
                                        f"(write it from one, or mark the line '{EXEMPT}: why -->'): {line[:100]}")
    except (InputProblem, questions.MissingRow) as e:
        print(f"quoted.py: error: {e}", file=sys.stderr)
        return 2
    if args.write:
        print("rewrote " + (", ".join(changed) if changed else "nothing (passages current)"))
    for p in problems:
        print(p, file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
