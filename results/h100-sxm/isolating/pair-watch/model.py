#!/usr/bin/env python3
"""pair-watch: the model's paces for the watchers' cells of one size both ways, from its timeline.

  model.py DMASIM OUT.txt      (DMASIM: the dmasim binary, e.g. build/model/dmasim)

Runs dmaprobe's duplex burst (results/h200x2-nvlink/isolating/duplex-burst/scenario.yaml, its first
scenario: the pair, then each way's burst alone) at 16, 64 and 256 KiB on the h100-sxm platform
with its calibration, with --trace, and reads the copy engines' spans: into the GPU from the first
read request to the last completion, out of it from the first write sent to the last. A
direction's pace is the mean of its copies' span ends, copy to copy, over the copies whose span
starts while the other direction's burst runs (alone: all of them), averaged over the eight gate
phases the duplex rows take. Writes OUT.txt.
"""
import json
import os
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
SCENARIO = os.path.join(HERE, "../../../h200x2-nvlink/isolating/duplex-burst/scenario.yaml")


def first_scenario(sizes):
    text = open(SCENARIO).read().split("\n---\n")[0]
    lines = [("sizes: [" + ", ".join(sizes) + "]") if l.startswith("sizes:") else l for l in text.splitlines()]
    return "\n".join(lines) + "\n"


def spans(trace):
    d = json.load(open(trace))
    events = d["traceEvents"] if isinstance(d, dict) else d
    names = {(e["pid"], e["tid"]): e["args"]["name"] for e in events if e.get("ph") == "M" and e.get("name") == "thread_name"}
    xs = sorted((e for e in events if e.get("ph") == "X"), key=lambda e: e["ts"])
    cases = [e for e in xs if names.get((e["pid"], e["tid"])) == "case"]
    out = []
    for c in cases:
        t0, t1 = c["ts"], c["ts"] + c["dur"]
        per = {}
        for ce in ("ce0", "ce1"):
            s = [(e["ts"], e["ts"] + e["dur"]) for e in xs if names.get((e["pid"], e["tid"])) == ce and t0 <= e["ts"] <= t1]
            # The timed run is the case's last: its copies follow the last long idle stretch.
            runs = [[]]
            for a in s:
                if runs[-1] and a[0] - runs[-1][-1][1] > 30:
                    runs.append([])
                runs[-1].append(a)
            per[ce] = runs[-1]
        out.append((c["name"], per))
    return out


def pace(own, other):
    if len(own) < 2:
        return None
    if other:
        lo, hi = other[0][0], other[-1][1]
        steps = [own[k][1] - own[k - 1][1] for k in range(1, len(own)) if lo <= own[k][0] <= hi]
    else:
        steps = [own[k][1] - own[k - 1][1] for k in range(1, len(own))]
    return statistics.mean(steps) if steps else None


def main(dmasim, out_path):
    sizes = ["16KiB", "64KiB", "256KiB"]
    with tempfile.TemporaryDirectory() as tmp:
        scen = os.path.join(tmp, "pairwatch.yaml")
        open(scen, "w").write(first_scenario(sizes))
        trace = os.path.join(tmp, "trace.json")
        subprocess.run([dmasim, "run", scen, "--set", "platform=h100-sxm", "--calibration", "h100-sxm",
                        "--trace", trace, "--out", os.path.join(tmp, "out")], check=True, stdout=subprocess.DEVNULL)
        cases = spans(trace)
    # Per size, the cases come as pair, into the GPU alone, out of it alone, phase after phase.
    rows = []
    per_size = len(cases) // len(sizes)
    for i, size in enumerate(sizes):
        mine = cases[i * per_size:(i + 1) * per_size]
        pair_in, pair_out, alone_in, alone_out, span_alone, span_pair = [], [], [], [], [], []
        for k in range(0, len(mine), 3):
            p, a_in, a_out = mine[k][1], mine[k + 1][1], mine[k + 2][1]
            pair_in.append(pace(p["ce0"], p["ce1"]))
            pair_out.append(pace(p["ce1"], p["ce0"]))
            alone_in.append(pace(a_in["ce0"], []))
            alone_out.append(pace(a_out["ce1"], []))
            span_alone.append(statistics.mean(b - a for a, b in a_in["ce0"]))
            span_pair.append(statistics.mean(b - a for a, b in p["ce0"]))
        m = lambda v: statistics.mean(x for x in v if x is not None)  # the trace counts in us
        rows.append((size, m(alone_in), m(alone_out), m(pair_in), m(pair_out), m(span_alone), m(span_pair), len(pair_in)))
        if size == sizes[-1]:
            # The first phase's pair, copy by copy, from the start event (the last record on
            # stream 0 before the copies is not in the spans: from the first span instead).
            p = mine[0][1]
            t0 = min(p["ce0"][0][0], p["ce1"][0][0])
            timeline = {ce: " ".join("%.1f-%.1f" % (a - t0, b - t0) for a, b in p[ce]) for ce in ("ce0", "ce1")}
    with open(out_path, "w") as f:
        f.write("# model.py: the h100-sxm calibration's paces (us a copy), mean over the gate phases\n")
        f.write("# span: a copy into the GPU from its first read request to its last completion, mean\n")
        f.write("size,alone_into_us,alone_out_us,pair_into_us,pair_out_us,span_into_alone_us,span_into_pair_us,phases\n")
        for r in rows:
            f.write("%s,%.2f,%.2f,%.2f,%.2f,%.2f,%.2f,%d\n" % r)
        f.write("# %s pair, first gate phase, us from the first copy's first TLP:\n" % sizes[-1])
        f.write("#   into the GPU (first request to last completion): %s\n" % timeline["ce0"])
        f.write("#   out of it (first write sent to last): %s\n" % timeline["ce1"])
    print(open(out_path).read(), end="")


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2])
