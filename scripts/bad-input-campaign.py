#!/usr/bin/env python3
"""Bad-input campaign: feeds dmasim broken and mutated inputs and checks how it fails.

Every input the tools read is attacked: scenario files, platform files, calibration files,
measured CSVs, command-line flags and output paths. Two kinds of case:

* rule cases break a documented rule (a PCIe width of 3, a duplicate key, a negative size, a
  loop in the PCIe tree, ...). dmasim must refuse each with exit status 2 and one line naming
  the file (and the key where there is one), and must write nothing.
* mutation cases change shipped files at random (values swapped for extremes, lines dropped or
  repeated, bytes flipped, files cut short). Any outcome is allowed except a hang, a crash, an
  exit status other than 0 or 2, an error of several lines or naming no file, or an output
  directory holding files of two different runs.

Every case runs under a time limit and an address-space limit, so a hang or a runaway
allocation is caught as such. The campaign is seeded: the same seed draws the same cases.

    scripts/bad-input-campaign.py --dmasim build/model/dmasim --seed 1 --mutations 400

Exit status 0 when no case broke a rule, 1 otherwise; --report writes every case to a CSV.
"""

import argparse
import csv
import hashlib
import os
import random
import re
import resource
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# Small scenarios that simulate in well under a second each: the bases `run` is attacked with.
RUN_BASES = {
    "pinned": "strategy: pinned\ndirection: [h2d, d2h]\nsizes: [4KiB, 64KiB]\nrepetitions: 2\nwarmup: 1\n",
    "duplex": "strategy: duplex\nsizes: 256KiB\nrepetitions: 2\n",
    "zero_copy": "strategy: zero_copy\ndirection: h2d\nsizes: 64KiB\nrepetitions: 1\n",
    "async": "strategy: async_overlap\nsizes: 1MiB\nrepetitions: 1\nasync_overlap: {streams: 4}\n",
    "periodic": "strategy: periodic\nframe: {size: 64KiB, period: 1ms, count: 3}\n",
    "pageable": "strategy: pageable\ndirection: h2d\nsizes: [4KiB, 1MiB]\nrepetitions: 1\n",
    "peer": "platform: 2gpu-rootports\nstrategy: peer\nsizes: 1MiB\nrepetitions: 1\n",
}

# Values that are wrong for any key expecting a quantity: the campaign's extremes.
EXTREMES = ["0", "-1", "-4096", "1e30", "nan", "inf", "-inf", "1TiB", "1000000000", "18446744073709551616",
            "0B", "1B", "1ps", "1000000s", "''", "[]", "{}", "~", "x" * 300, "\"\\x01\"", "9" * 40, "0x10",
            "1e-300", "true", "1GT/s", "-0"]

# (key path, bad value, why it is bad): each must be refused.
SCENARIO_RULES = [
    ("link.lanes", "3", "not a PCIe width"), ("link.lanes", "0", "no lanes"), ("link.lanes", "-16", "negative"),
    ("link.generation", "7", "no Gen7"), ("link.generation", "0", "no Gen0"),
    ("link.rate", "1GT/s", "rate of no generation"), ("link.mps", "100B", "not a power of two"),
    ("link.mps", "8192B", "above 4096"), ("link.mrrs", "64B", "below 128"), ("link.rcb", "32B", "RCB is 64 or 128"),
    ("link.credits_posted_data", "1", "below one MPS"), ("link.latency", "1000000s", "no upper bound"),
    ("link.latency", "-1ns", "negative"), ("root_complex.completion_size", "0B", "zero"),
    ("root_complex.completion_size", "100B", "not a multiple of RCB"), ("sizes", "1TiB", "above the size limit"),
    ("sizes", "0B", "empty copy"), ("sizes", "-4096", "negative"), ("sizes", "nan", "not a size"),
    ("sizes", "{from: 1B, to: 1TiB, step: 1B}", "10^12 sizes"), ("repetitions", "0", "no repetition"),
    ("repetitions", "1000000000000", "no upper bound"), ("warmup", "-1", "negative"),
    ("frame.count", "1000000000", "no upper bound"), ("frame.period", "0s", "zero period"),
    ("dma.engines", "0", "no engine"), ("host_memory.bandwidth", "0GB/s", "zero"),
    ("host_memory.bandwidth", "-5GB/s", "negative"), ("cpu.page_size", "3000B", "not a power of two"),
    ("gpu.bar_aperture", "1B", "smaller than a page"), ("async_overlap.streams", "0", "no stream"),
    ("zero_copy.access", "3B", "not an access width"), ("compute.threads", "33", "not a multiple of 32"),
]

# Platform rules: a link or node key broken in the shipped h100-sxm platform.
PLATFORM_LINK_RULES = [
    ("lanes", "3"), ("lanes", "0"), ("generation", "7"), ("rate", "1GT/s"), ("mps", "100B"), ("mps", "8192B"),
    ("rcb", "32B"), ("credits_posted_data", "1"), ("latency", "1000000s"), ("bogus_key", "1"),
]
H100_PLATFORM = (
    "name: bad\nnodes:\n  - { name: cpu0, kind: cpu, socket: 0 }\n  - { name: rc0, kind: root_complex, socket: 0 }\n"
    "  - { name: gpu0, kind: gpu, socket: 0 }\nlinks:\n  - { a: cpu0, b: rc0, kind: internal }\n"
    "  - { a: rc0, b: gpu0, kind: pcie, generation: 5, lanes: 16 }\n")
PLATFORM_STRUCTURE_RULES = {
    "self-link": H100_PLATFORM + "  - { a: gpu0, b: gpu0, kind: pcie }\n",
    "parallel links": H100_PLATFORM + "  - { a: rc0, b: gpu0, kind: pcie }\n",
    "unknown node": H100_PLATFORM + "  - { a: rc0, b: gpu9, kind: pcie }\n",
    "nodes not maps": "name: bad\nnodes: [1, 2]\nlinks: []\n",
    "gpu without a link": H100_PLATFORM.replace("  - { a: rc0, b: gpu0, kind: pcie, generation: 5, lanes: 16 }\n", ""),
    "duplicate name": H100_PLATFORM.replace("name: gpu0", "name: rc0"),
    "nvlink between bridges": H100_PLATFORM.replace("  - { name: gpu0", "  - { name: sw0, kind: switch, socket: 0 }\n"
                                                    "  - { name: gpu0") + "  - { a: rc0, b: sw0, kind: nvlink }\n",
    "pcie loop": H100_PLATFORM.replace("  - { name: gpu0", "  - { name: sw0, kind: switch, socket: 0 }\n"
                                       "  - { name: gpu0") +
    "  - { a: rc0, b: sw0, kind: pcie }\n  - { a: sw0, b: gpu0, kind: pcie }\n",
    "duplicate key": H100_PLATFORM.replace("generation: 5, lanes: 16", "generation: 5, lanes: 16, lanes: 3"),
}

# Measured-CSV rules: one field of one row of a committed measured.csv broken.
CSV_RULES = [("size_bytes", "-4096"), ("size_bytes", "0"), ("time_us", "nan"), ("time_us", "-3"), ("time_us", "inf"),
             ("directions", "1e20"), ("directions", "0"), ("repetitions", "-1"), ("size_bytes", "1e400")]

# Command-line rules: a flag out of its range.
FLAG_RULES = [
    ["calibrate", "--max-evaluations", "-1"], ["calibrate", "--folds", "1"], ["calibrate", "--folds", "-3"],
    ["run", "--trace-resolution", "1ps"], ["run", "--trace-resolution", "-1us"], ["run", "--set", "link.lanes=3"],
    ["run", "--set", "=4"], ["calibrate", "--max-size", "-1MiB"],
    ["run", "--jobs", "0"], ["run", "--jobs", "-2"], ["run", "--jobs", "100000"], ["run", "--shard", "3/2"],
    ["run", "--shard", "x"], ["run", "--shard", "0/0"], ["run", "--shard", "-1/4"], ["run", "--fidelity", "ultra"],
    ["calibrate", "--jobs", "0"],
]


@dataclass
class Outcome:
    kind: str
    case: str
    rc: int
    stderr: str
    problems: list = field(default_factory=list)


class Campaign:
    def __init__(self, dmasim, work, timeout, mem_mib):
        self.dmasim = dmasim
        self.work = Path(work)
        self.timeout = timeout
        self.mem = mem_mib << 20
        self.outcomes = []

    def _limit(self):
        # A sanitizer build reserves terabytes of address space for its shadow memory: no limit.
        if self.mem > 0:
            resource.setrlimit(resource.RLIMIT_AS, (self.mem, self.mem))
        os.setsid()

    def invoke(self, args, cwd):
        try:
            p = subprocess.run([self.dmasim] + args, cwd=cwd, capture_output=True, text=True, errors="replace",
                               timeout=self.timeout, preexec_fn=self._limit)
            return p.returncode, p.stderr
        except subprocess.TimeoutExpired as e:
            # The process group: a forked child must not outlive the case.
            return None, (e.stderr.decode(errors="replace") if isinstance(e.stderr, bytes) else (e.stderr or ""))

    def judge(self, kind, case, args, cwd, must_reject, names=None, out_dir=None):
        before = snapshot(out_dir) if out_dir else None
        rc, err = self.invoke(args, cwd)
        o = Outcome(kind, case, -999 if rc is None else rc, err.strip())
        lines = [l for l in err.strip().splitlines() if l.strip() and not l.startswith("dmasim: [")]
        errors = [l for l in lines if "error" in l]
        if rc is None:
            o.problems.append("hang: no exit within %ds" % self.timeout)
        elif rc < 0:
            o.problems.append("crash: signal %d" % -rc)
        elif rc not in (0, 2):
            o.problems.append("exit status %d (only 0 or 2 are allowed)" % rc)
        if rc == 2:
            if len(errors) != 1:
                o.problems.append("error of %d lines" % len(errors))
            elif names and not any(n in errors[0] for n in names):
                o.problems.append("error names none of: " + ", ".join(names))
        if must_reject and rc == 0:
            o.problems.append("accepted")
        if out_dir is not None:
            after = snapshot(out_dir)
            if rc != 0 and after != before:
                o.problems.append("failed run changed the output directory")
            if rc == 0 and after and len({v[1] for v in after.values()}) > 1:
                o.problems.append("output directory mixes runs")
        self.outcomes.append(o)
        return o


def snapshot(d):
    """{file: (digest, run id)} of a results directory; the run id is meta.json's, or the file's own."""
    d = Path(d)
    if not d.is_dir():
        return {}
    out = {}
    run = None
    meta = d / "meta.json"
    if meta.is_file():
        m = re.search(r'"(run_id|started|date)"\s*:\s*"([^"]*)"', meta.read_text(errors="replace"))
        run = m.group(2) if m else hashlib.sha1(meta.read_bytes()).hexdigest()
    for f in sorted(d.iterdir()):
        if f.is_file():
            out[f.name] = (hashlib.sha1(f.read_bytes()).hexdigest(), run)
    return out


def set_key(yaml_text, path, value):
    """Appends a top-level section setting `path` (a.b) to value; the base never sets it twice."""
    parts = path.split(".")
    if len(parts) == 1:
        return re.sub(r"(?m)^%s:.*\n" % re.escape(parts[0]), "", yaml_text) + "%s: %s\n" % (parts[0], value)
    return yaml_text + "%s: { %s: %s }\n" % (parts[0], parts[1], value)


def mutate(text, rng):
    """One random change to a YAML or CSV text."""
    lines = text.splitlines(keepends=True)
    op = rng.randrange(8)
    if op == 0 and lines:  # a value swapped for an extreme
        i = rng.randrange(len(lines))
        m = list(re.finditer(r"(:\s*|,\s*|\[\s*)([^,\]\}\n#]+)", lines[i]))
        if m:
            g = rng.choice(m)
            lines[i] = lines[i][:g.start(2)] + rng.choice(EXTREMES) + lines[i][g.end(2):]
    elif op == 1 and lines:
        del lines[rng.randrange(len(lines))]
    elif op == 2 and lines:
        i = rng.randrange(len(lines))
        lines.insert(i, lines[i])
    elif op == 3:
        return text[:rng.randrange(len(text) + 1)]
    elif op == 4 and text:
        b = bytearray(text.encode())
        for _ in range(rng.randint(1, 4)):
            b[rng.randrange(len(b))] = rng.randrange(256)
        return b.decode(errors="replace")
    elif op == 5 and lines:
        i = rng.randrange(len(lines))
        lines[i] = lines[i].replace(":", rng.choice([": \"", ": '", ": [", ": {", ": &a", ": *a", "::"]), 1)
    elif op == 6 and lines:
        i = rng.randrange(len(lines))
        lines[i] = "  " * rng.randint(0, 3) + lines[i].lstrip()
    else:
        n = re.findall(r"\d+", text)
        if n:
            v = rng.choice(n)
            text = text.replace(v, str(int(v) * rng.choice([0, 1000, 10 ** 9, -1])), 1)
        return text
    return "".join(lines)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--dmasim", default=str(ROOT / "build/model/dmasim"), help="the dmasim binary")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--mutations", type=int, default=300, help="random mutation cases (rule cases always run)")
    ap.add_argument("--timeout", type=int, default=60, help="seconds a case may take before it counts as a hang")
    ap.add_argument("--memory", type=int, default=4096,
                    help="MiB of address space a case may use (0: no limit, for sanitizer builds)")
    ap.add_argument("--report", help="CSV of every case")
    a = ap.parse_args()
    if not os.access(a.dmasim, os.X_OK):
        sys.exit("bad-input-campaign: no dmasim binary at %s (build first)" % a.dmasim)
    rng = random.Random(a.seed)
    work = Path(tempfile.mkdtemp(prefix="dmasim-campaign-"))
    c = Campaign(os.path.abspath(a.dmasim), work, a.timeout, a.memory)
    try:
        run_rules(c, work)
        run_mutations(c, work, rng, a.mutations)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    bad = [o for o in c.outcomes if o.problems]
    by_kind = {}
    for o in c.outcomes:
        t = by_kind.setdefault(o.kind, [0, 0, 0])
        t[0] += 1
        t[1] += o.rc == 2
        t[2] += bool(o.problems)
    print("%-22s %6s %9s %9s" % ("kind", "cases", "refused", "defects"))
    for k, (n, r, d) in sorted(by_kind.items()):
        print("%-22s %6d %9d %9d" % (k, n, r, d))
    for o in bad[:60]:
        print("DEFECT [%s] %s: %s (rc %d) %s" % (o.kind, o.case, "; ".join(o.problems), o.rc,
                                                  o.stderr.splitlines()[-1][:200] if o.stderr else ""))
    if a.report:
        with open(a.report, "w", newline="") as f:
            w = csv.writer(f)
            w.writerow(["kind", "case", "rc", "problems", "stderr"])
            for o in c.outcomes:
                w.writerow([o.kind, o.case, o.rc, "; ".join(o.problems), o.stderr[:500]])
    print("%d cases, %d defects (seed %d)" % (len(c.outcomes), len(bad), a.seed))
    return 1 if bad else 0


def run_rules(c, work):
    base = RUN_BASES["pinned"]
    for i, (key, value, why) in enumerate(SCENARIO_RULES):
        f = work / ("rule%d.yaml" % i)
        text = set_key(base, key, value)
        if key.startswith(("frame.", "async_overlap.")):
            text = set_key(RUN_BASES["periodic" if key.startswith("frame") else "async"], key, value)
        if key == "gpu.bar_aperture":
            text = "platform: radar-switch\nstrategy: third_party_dma\nsizes: 64KiB\ngpu: { bar_aperture: 1B }\n"
        f.write_text(text)
        c.judge("scenario-rule", "%s=%s (%s)" % (key, value, why), ["validate", f.name], work, True, [f.name])
        out = work / "out-rule"
        c.judge("scenario-rule-run", "%s=%s" % (key, value), ["run", "-q", "-o", str(out), f.name], work, True,
                [f.name], out)
    for key, value in PLATFORM_LINK_RULES:
        p = work / "plat.yaml"
        p.write_text(H100_PLATFORM.replace("generation: 5, lanes: 16", "generation: 5, lanes: 16, %s: %s" % (key, value))
                     if key != "lanes" and key != "generation" else
                     H100_PLATFORM.replace("%s: %s" % (key, {"lanes": 16, "generation": 5}[key]), "%s: %s" % (key, value)))
        s = work / "on-plat.yaml"
        s.write_text("platform: plat.yaml\n" + RUN_BASES["pinned"])
        for cmd in (["validate", s.name], ["topo", "show", p.name], ["run", "-q", "-o", "out-plat", s.name]):
            c.judge("platform-rule", "%s: %s (%s)" % (key, value, cmd[0]), cmd, work, True, ["plat.yaml"],
                    work / "out-plat" if cmd[0] == "run" else None)
    for name, text in PLATFORM_STRUCTURE_RULES.items():
        p = work / "plat.yaml"
        p.write_text(text)
        s = work / "on-plat.yaml"
        s.write_text("platform: plat.yaml\n" + RUN_BASES["pinned"])
        for cmd in (["validate", s.name], ["topo", "show", p.name]):
            c.judge("platform-structure", "%s (%s)" % (name, cmd[0]), cmd, work, True, ["plat.yaml"])
    # Peer between GPUs that have no path.
    p = work / "plat.yaml"
    p.write_text(H100_PLATFORM.replace("  - { name: gpu0", "  - { name: rc1, kind: root_complex, socket: 1 }\n"
                                       "  - { name: gpu1, kind: gpu, socket: 1 }\n  - { name: gpu0") +
                 "  - { a: rc1, b: gpu1, kind: pcie }\n")
    s = work / "peer.yaml"
    s.write_text("platform: plat.yaml\nstrategy: peer\nsizes: 1MiB\n")
    c.judge("platform-structure", "peer between unconnected GPUs", ["validate", s.name], work, True,
            ["plat.yaml", "peer.yaml"])
    # Measured CSVs.
    src = next(iter(sorted((ROOT / "results/h100-sxm/measured").glob("*/measured.csv"))))
    rows = list(csv.reader(src.open()))
    header = rows[0]
    for col, value in CSV_RULES:
        d = work / "csvrule"
        shutil.rmtree(d, ignore_errors=True)
        d.mkdir()
        bad = [header] + [r[:] for r in rows[1:6]]
        bad[1][header.index(col)] = value
        with (d / "measured.csv").open("w", newline="") as f:
            csv.writer(f).writerows(bad)
        c.judge("csv-rule", "%s=%s" % (col, value),
                ["compare", "--measured", str(d / "measured.csv"), "--scenarios", str(ROOT / "scenarios"), "-o",
                 str(work / "cmp")], work, True, ["measured.csv"], work / "cmp")
    # A lease's machine.txt whose nvidia-smi topo -m matrix is broken (it tells which path a
    # peer row took): refused, naming machine.txt, before anything is written.
    for case, matrix in [("ragged row", "\tGPU0\tGPU1\tCPU Affinity\nGPU0\t X \tNV18\t0\nGPU1\tNV18\n"),
                         ("unknown class", "\tGPU0\tGPU1\tCPU Affinity\nGPU0\t X \tNVX\t0\nGPU1\tNVX\t X \t0\n"),
                         ("not symmetric", "\tGPU0\tGPU1\tCPU Affinity\nGPU0\t X \tNV18\t0\nGPU1\tPIX\t X \t0\n"),
                         ("no header", "GPU0\t X \tNV18\t0\n")]:
        d = work / "lease-topo"
        shutil.rmtree(d, ignore_errors=True)
        d.mkdir()
        shutil.copy(src, d / "measured.csv")
        (d / "machine.txt").write_text("## nvidia-smi\nok\n## nvidia-smi topo -m\n" + matrix + "\n## lspci\n")
        c.judge("machine-txt", case, ["compare", "--measured", str(d), "--scenarios", str(ROOT / "scenarios"), "-o",
                                      str(work / "cmp")], work, True, ["machine.txt"], work / "cmp")
    # Flags.
    (work / "ok.yaml").write_text(RUN_BASES["pinned"])
    for flags in FLAG_RULES:
        if flags[0] == "calibrate":
            args = flags[:1] + ["--measured", str(src), "--scenarios", str(ROOT / "scenarios"), "-o",
                                str(work / "cal.yaml")] + flags[1:]
        else:
            args = flags[:1] + ["-q", "-o", str(work / "out-flag"), "ok.yaml"] + flags[1:]
        c.judge("flag-rule", " ".join(flags), args, work, True, [flags[1], flags[-1], "ok.yaml"])
    # dmasim merge: folders that are not every shard of one run are refused, and the output
    # folder stays as it was.
    (work / "other.yaml").write_text(RUN_BASES["pinned"].replace("4KiB", "8KiB", 1))
    for i in (0, 1):
        c.invoke(["run", "-q", "--shard", "%d/2" % i, "-o", str(work / ("shard%d" % i)), "ok.yaml"], work)
        c.invoke(["run", "-q", "--shard", "%d/2" % i, "-o", str(work / ("oshard%d" % i)), "other.yaml"], work)
    c.invoke(["run", "-q", "-o", str(work / "whole"), "ok.yaml"], work)
    merged = work / "merged"
    c.judge("merge", "every shard", ["merge", "-o", str(merged), "shard0", "shard1"], work, False, None, merged)
    for case, dirs, names in [("a missing folder", ["shard0", "nowhere"], ["nowhere"]),
                              ("one shard of two", ["shard0"], ["shard"]),
                              ("a shard twice", ["shard0", "shard0"], ["shard0"]),
                              ("shards of two runs", ["shard0", "oshard1"], ["shard"]),
                              ("a run that is not a shard", ["whole"], ["whole"]),
                              ("a file", ["ok.yaml"], ["ok.yaml"])]:
        c.judge("merge", case, ["merge", "-o", str(merged)] + dirs, work, True, names, merged)
    # Output paths: a file where the directory should be, a directory where a file should be.
    (work / "afile").write_text("x")
    c.judge("output", "-o at a file", ["run", "-q", "-o", "afile", "ok.yaml"], work, True, ["afile"])
    out = work / "out-dmg"
    c.judge("output", "first run", ["run", "-q", "-o", str(out), "ok.yaml"], work, False, None, out)
    (out / "links.csv").unlink(missing_ok=True)
    (out / "links.csv").mkdir()
    c.judge("output", "links.csv is a directory", ["run", "-q", "-o", str(out), "ok.yaml"], work, True,
            ["links.csv"], out)
    (work / "tdir").mkdir()
    c.judge("output", "--trace at a directory", ["run", "-q", "-o", "out-t", "--trace", "tdir", "ok.yaml"], work, True,
            ["tdir"], work / "out-t")
    os.mkfifo(work / "fifo.yaml")
    c.judge("input", "FIFO scenario", ["validate", "fifo.yaml"], work, True, ["fifo.yaml"])
    c.judge("input", "directory scenario", ["validate", "tdir"], work, True, ["tdir"])
    (work / "q.yaml").write_text('strategy: "pinned\nsizes: 4KiB\n')
    c.judge("input", "unclosed quote", ["validate", "q.yaml"], work, True, ["q.yaml"])
    (work / "dup.yaml").write_text("strategy: pinned\nstrategy: duplex\nsizes: 4KiB\n")
    c.judge("input", "duplicate key", ["validate", "dup.yaml"], work, True, ["dup.yaml"])


def run_mutations(c, work, rng, count):
    shipped = sorted((ROOT / "scenarios").rglob("*.yaml"))
    platforms = sorted((ROOT / "platforms").glob("*.yaml"))
    csvs = sorted((ROOT / "results").glob("*/measured/*/measured.csv"))
    for i in range(count):
        kind = rng.choice(["scenario", "scenario", "run", "platform", "csv"])
        if kind == "scenario":
            src = rng.choice(shipped)
            f = work / ("m%d.yaml" % i)
            f.write_text(mutate(src.read_text(), rng))
            c.judge("mutated-scenario", "%s #%d" % (src.name, i), ["validate", f.name], work, False, [f.name])
            f.unlink()
        elif kind == "run":
            name, text = rng.choice(sorted(RUN_BASES.items()))
            f = work / ("r%d.yaml" % i)
            f.write_text(mutate(text, rng))
            out = work / "out-m"
            c.judge("mutated-run", "%s #%d" % (name, i), ["run", "-q", "-o", str(out), f.name], work, False, [f.name],
                    out)
            f.unlink()
        elif kind == "platform":
            src = rng.choice(platforms)
            p = work / "mp.yaml"
            p.write_text(mutate(src.read_text(), rng))
            s = work / "ms.yaml"
            s.write_text("platform: mp.yaml\nstrategy: pinned\nsizes: 64KiB\nrepetitions: 1\n")
            cmd = rng.choice([["validate", s.name], ["topo", "show", p.name], ["run", "-q", "-o", "out-p", s.name]])
            c.judge("mutated-platform", "%s #%d (%s)" % (src.name, i, cmd[0]), cmd, work, False, ["mp.yaml", "ms.yaml"],
                    work / "out-p" if cmd[0] == "run" else None)
        else:
            src = rng.choice(csvs)
            d = work / "mc"
            shutil.rmtree(d, ignore_errors=True)
            d.mkdir()
            lines = src.read_text().splitlines(keepends=True)
            (d / "measured.csv").write_text(lines[0] + mutate("".join(lines[1:8]), rng))
            c.judge("mutated-csv", "%s #%d" % (src.parent.name, i),
                    ["compare", "--measured", str(d / "measured.csv"), "--scenarios", str(ROOT / "scenarios"), "-o",
                     str(work / "mcmp")], work, False, ["measured.csv"], work / "mcmp")


if __name__ == "__main__":
    sys.exit(main())
