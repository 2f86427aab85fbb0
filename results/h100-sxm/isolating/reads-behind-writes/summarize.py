#!/usr/bin/env python3
"""The reads-behind-writes leases side by side: per lease, each case's median against its alone.

  summarize.py [LEASE_DIR...]   (default: leases/*)
Prints, per mode, a table of lease x case: the median (us; ns a hop for chase) and, for the
cases beside something, its excess over the same size alone; each lease's lead and partner
sweeps; and `landing`: per case and size the copy's event interval, when its last bytes were
seen (both from the gate) and the difference, each beside-case's excess over alone; and `chain`:
per lease the 8 MiB as 1, 16 and 128 copies, and what each copy of a chain costs beside the other
copy over alone (the chain's excess over one copy, beside, less the same alone, per extra copy).
"""
import csv
import glob
import os
import re
import sys


def read(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def main(argv):
    leases = argv[1:] or sorted(glob.glob(os.path.join(os.path.dirname(os.path.abspath(__file__)), "leases", "*")))
    for mode in ("chase", "copies", "gated"):
        rows = {}
        for lease in leases:
            path = os.path.join(lease, mode + ".csv")
            if os.path.exists(path):
                rows[os.path.basename(lease)] = read(path)
        if not rows:
            continue
        print(f"== {mode}: median ({'ns a hop' if mode == 'chase' else 'us'}), beside: + over alone")
        for lease, rs in rows.items():
            alone = {}
            for r in rs:
                kind = r["case"].split("-")[0] if mode != "chase" else ""
                if r["case"].endswith("alone"):
                    alone[(kind, r["size_bytes"])] = float(r["median"])
            cells = []
            for r in rs:
                if "sm-stores" in r["case"]:
                    continue  # the stores outran the chase, or swamp the copies: not read here
                kind = r["case"].split("-")[0] if mode != "chase" else ""
                m = float(r["median"])
                ref = alone.get((kind, r["size_bytes"]))
                size = int(r["size_bytes"]) // 1024
                label = f"{r['case']} {size}K" if mode != "chase" else r["case"]
                cells.append(f"{label} {m:.2f}" + ("" if r["case"].endswith("alone") or ref is None else f" (+{m - ref:.2f})"))
            print(f"  {lease}: " + "; ".join(cells))
    # lead and partner: each measured copy's median by the other copy's head start D.
    for lease in leases:
        for mode in ("lead", "partner"):
            path = os.path.join(lease, mode + ".csv")
            if not os.path.exists(path):
                continue
            print(f"== {mode} ({os.path.basename(lease)}): the measured copy's median (us) by D, the other copy's head start")
            series = {}
            for r in read(path):
                m = re.match(r"^(.*?)-(-?\d+us)$", r["case"])
                series.setdefault((m.group(1), int(r["size_bytes"]) // 1024), []).append((m.group(2), float(r["median"])))
            for (what, kib), points in series.items():
                print(f"  {what} {kib}K: " + " ".join(f"{d}={v:.1f}" for d, v in points))
    landing(leases)
    chain(leases)
    share(leases)
    drain(leases)
    startwhy(leases)
    parts(leases)
    return 0


def chain(leases):
    """`chain` rows: h2d-<case>-<n>x<piece>KiB, the chain's event interval."""
    for lease in leases:
        for mode in ("chain", "chainstores"):
            chain_table(lease, mode)


def chain_table(lease, mode):
    """One lease's `chain` or `chainstores` rows: h2d-<case>-<n>x<piece>KiB, the chain's event interval."""
    path = os.path.join(lease, mode + ".csv")
    if not os.path.exists(path):
        return
    t = {}
    for r in read(path):
        m = re.match(r"^h2d-(.*)-(\d+)x(\d+)KiB$", r["case"])
        t[(m.group(1), int(m.group(2)))] = float(r["median"])
    print(f"== {mode} ({os.path.basename(lease)}): 8 MiB as n copies, median us; per copy: beside over alone")
    for case in sorted({c for c, _ in t}, key=lambda c: (c != "alone", c)):
        if (case, 1) not in t:
            continue
        cells = [f"{n}x {t[(case, n)]:.1f}" for n in (1, 16, 128) if (case, n) in t]
        extra = ""
        if case != "alone":
            per = [((t[(case, n)] - t[(case, 1)]) - (t[("alone", n)] - t[("alone", 1)])) / (n - 1)
                   for n in (16, 128) if (case, n) in t]
            extra = "; per copy " + ", ".join(f"{v:+.2f}" for v in per)
        print(f"  {case}: " + " ".join(cells) + extra)


def mode_rows(leases, mode, header):
    """Each lease that ran `mode`: prints `== mode (lease): header` and yields its rows."""
    for lease in leases:
        path = os.path.join(lease, mode + ".csv")
        if not os.path.exists(path):
            continue
        print(f"== {mode} ({os.path.basename(lease)}): {header}")
        yield read(path)


def landing(leases):
    """`landing` rows: event, data (last bytes seen), done (stamp behind the copy), from the gate."""
    for rows in mode_rows(leases, "landing", "median us from the gate; event, data, event - data; beside: + over alone"):
        cells = {}
        for r in rows:
            m = re.match(r"^h2d-(.*)-(event|data|done)$", r["case"])
            cells[(m.group(1), int(r["size_bytes"]), m.group(2))] = float(r["median"])
        for (case, size, what) in sorted(k for k in cells if k[2] == "event"):
            ev, da = cells[(case, size, "event")], cells[(case, size, "data")]
            line = f"  {case} {size // 1024}K: event {ev:.2f} data {da:.2f} event-data {ev - da:+.2f}"
            if case != "alone" and ("alone", size, "event") in cells:
                ea, dd = cells[("alone", size, "event")], cells[("alone", size, "data")]
                line += f" (event +{ev - ea:.2f}, data +{da - dd:.2f})"
            print(line)


def share(leases):
    """`share` rows: a copy's event interval at 4 KiB, 1 MiB, 16 MiB beside SM stores or loads.
    start: the 4 KiB copy's interval; rate: 15 MiB over the 1 to 16 MiB difference (GB/s)."""
    header = "4 KiB copy us; rate from 1 to 16 MiB GB/s; the SM kernel's 512 MiB ms alone / beside the 16 MiB copy"
    for rows in mode_rows(leases, "share", header):
        t = {}
        for r in rows:
            t[(r["case"], int(r["size_bytes"]))] = float(r["median"])
        for d in ("h2d", "d2h"):
            for side in ["alone"] + [f"beside-{b}-block-{k}" for k in ("stores", "loads") for b in (1, 4, 16, 66, 132)]:
                c = f"{d}-{side}-copy"
                if (c, 4096) not in t:
                    continue
                rate = 15 * 2**20 / (t[(c, 16 << 20)] - t[(c, 1 << 20)]) / 1e3
                line = f"  {d} {side}: 4K {t[(c, 4096)]:.1f} 1M {t[(c, 1 << 20)]:.1f} 16M {t[(c, 16 << 20)]:.1f}; rate {rate:.1f}"
                k = (f"{d}-{side}-kernel", 16 << 20)
                if k in t:
                    alone = t.get((f"kernel-alone-{side[len('beside-'):]}", 512 << 20))
                    line += f"; kernel {t[k] / 1e3:.2f}" + (f" / alone {alone / 1e3:.2f}" if alone else "")
                print(line)


def drain(leases):
    """`drain` rows: the store kernel (64 MiB) and a 4 KiB copy behind it on its stream."""
    for rows in mode_rows(leases, "drain", "kernel us, then the copy behind it (us from the kernel's end)"):
        for r in rows:
            if r["case"].endswith("-kernel"):
                after = next(x for x in rows if x["case"] == r["case"][: -len("kernel")] + "after")
                print(f"  {r['case'][: -len('-kernel')]}: kernel {float(r['median']):.1f}, copy after {float(after['median']):.2f} (p10 {float(after['p10']):.2f}, p90 {float(after['p90']):.2f})")


def startwhy(leases):
    """`startwhy` rows: what waits behind the SMs' traffic (us), and each against the fence."""
    header = "median us; work: 4 KiB copy into the GPU, 4 KiB copy within it, empty kernel; fence: __threadfence_system"
    for rows in mode_rows(leases, "startwhy", header):
        t = {r["case"]: float(r["median"]) for r in rows}
        sides = sorted({c.split("-", 1)[1] for c in t if c.startswith("fence-")}, key=lambda x: (x != "alone", x))
        for side in sides:
            work = [t.get(f"{w}-{side}") for w in ("h2d", "d2d", "empty-kernel")]
            fence = t[f"fence-{side}"]
            ratio = "" if side == "alone" else f"; empty kernel / fence {work[2] / fence:.1f}"
            print(f"  {side}: h2d {work[0]:.1f} d2d {work[1]:.1f} empty kernel {work[2]:.1f} fence {fence:.2f}{ratio}")
        for c in sorted(k for k in t if "-after-" in k):
            print(f"  {c}: {t[c]:.1f}")


def parts(leases):
    """`parts` rows: the interval between two event records on an idle stream, with nothing, an empty
    kernel or a wait for a done event between them, beside the store loop."""
    for rows in mode_rows(leases, "parts", "median us between the two records"):
        t = {r["case"]: float(r["median"]) for r in rows}
        for side in ["alone"] + [f"beside-{b}-block-stores" for b in (4, 16, 66)]:
            print(f"  {side}: records {t[f'records-{side}']:.1f}, kernel between {t[f'kernel-{side}']:.1f}, wait between {t[f'wait-{side}']:.1f}")


if __name__ == "__main__":
    sys.exit(main(sys.argv))
