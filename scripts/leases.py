"""Reading measured data by lease (docs/results.md, "Leases"). Standard library only.

A machine's measured folder holds one folder per lease (one freshly started machine); a lease
holds measured.csv and/or run<N>/measured.csv (runs of the plan on that machine) and maybe
lease.json. The same rules as `dmasim` (model/src/app/leases.cpp):

- a CSV path is one lease of one run;
- a folder with measured.csv or run<N>/measured.csv is one lease;
- otherwise every sub-folder that is such a lease folder is a lease, sorted by name.

A lease's value of a row is the median over its runs; across leases, the median of those.
"""
import csv
import json
import os
import re
import statistics


def _run_number(name):
    m = re.fullmatch(r"run(\d+)", name)
    return int(m.group(1)) if m else None


def _lease_runs(folder):
    """The measured.csv files of one lease folder, in run order."""
    files = []
    if os.path.isfile(os.path.join(folder, "measured.csv")):
        files.append(os.path.join(folder, "measured.csv"))
    runs = []
    for name in os.listdir(folder):
        n = _run_number(name)
        path = os.path.join(folder, name, "measured.csv")
        if n is not None and os.path.isfile(path):
            runs.append((n, path))
    return files + [p for _, p in sorted(runs)]


def lease_info(folder):
    """lease.json of a lease folder as a dict ({} when there is none)."""
    path = os.path.join(folder, "lease.json")
    if not os.path.isfile(path):
        return {}
    with open(path) as f:
        return json.load(f)


def find_leases(path):
    """[(lease name, lease folder, [measured.csv paths])] for a CSV, a lease or a machine folder."""
    if os.path.isfile(path):
        folder = os.path.dirname(os.path.abspath(path))
        return [(os.path.basename(folder) or path, folder, [path])]
    if not os.path.isdir(path):
        return []
    own = _lease_runs(path)
    if own:
        return [(os.path.basename(os.path.normpath(path)), path, own)]
    leases = []
    for name in sorted(os.listdir(path)):
        folder = os.path.join(path, name)
        if os.path.isdir(folder):
            files = _lease_runs(folder)
            if files:
                leases.append((name, folder, files))
    return leases


def row_key(r):
    """(scenario, strategy, direction, size, variant), with the peer mode of old rows."""
    v = r.get("variant") or ""
    if r.get("strategy") == "peer" and v == "":
        v = "peer=off" if "disabled" in (r.get("note") or "") else "peer=on"
    return (r.get("scenario", ""), r.get("strategy", ""), r.get("direction", ""), int(float(r.get("size_bytes") or 0)), v)


def load_ok_rows(path):
    """{key: row dict} of the status=ok rows with a positive time; the first row of a key counts."""
    rows = {}
    with open(path, newline="") as f:
        for r in csv.DictReader(f):
            if (r.get("status") or "").strip() != "ok":
                continue
            try:
                if float(r.get("time_us") or 0) <= 0:
                    continue
            except ValueError:
                continue
            rows.setdefault(row_key(r), r)
    return rows


def cross_lease(path):
    """{key: row dict} whose time_us (and gbps) are the median over leases of each lease's median
    over its runs; 'leases' says how many leases had the row, 'spread_pct' how far apart they were."""
    per_lease = []
    for _name, _folder, files in find_leases(path):
        runs = [load_ok_rows(f) for f in files]
        values = {}
        for run in runs:
            for key, r in run.items():
                values.setdefault(key, []).append(r)
        per_lease.append({k: (statistics.median(float(r["time_us"]) for r in rs), rs[0]) for k, rs in values.items()})
    out = {}
    for lease in per_lease:
        for key, (_t, first) in lease.items():
            if key in out:
                continue
            vals = [l[key][0] for l in per_lease if key in l]
            row = dict(first)
            t = statistics.median(vals)
            row["time_us"] = f"{t:.4f}"
            directions = int(float(row.get("directions") or 1))
            row["gbps"] = f"{key[3] * directions / t / 1e3:.6g}"
            row["variant"] = key[4]
            row["leases"] = len(vals)
            row["spread_pct"] = (max(vals) / min(vals) - 1.0) * 100.0
            out[key] = row
    return out
