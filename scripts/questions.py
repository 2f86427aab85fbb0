#!/usr/bin/env python3
"""docs/questions.md: the five questions of the source material (../shared/seeds), answered with
the model's numbers beside the measured ones.

Usage: scripts/questions.py [--sim CSV] [--measured LABEL=DIR ...] [--out FILE | --check FILE]
                            [--summary]

--sim       the model's results.csv (default results/sim/results.csv: the shipped sweep, each
            scenario with its platform's committed calibration, what the main command writes)
--measured  a machine's measured folder, as LABEL=DIR; repeatable (default: the lent H100 and the
            2xH200, results/h100-sxm/measured and results/h200x2-nvlink/measured). Each row's
            value is the median over leases of each lease's median over its runs.
--out       where to write the Markdown (default: standard output)
--check     rebuild the document from the files named and compare it with FILE: exit status 1
            and the first differing line when FILE is stale (a test runs this on docs/questions.md)
--summary   print one line per question (the decision) on standard output as well

Every number in the document is read from those files; the decisions are worded from the
numbers (which option is faster, by how much), so regenerating after a model change keeps
them true. A row the document needs that a file lacks is an error naming the file and the row
(exit status 2), not a silent dash. Standard library only.
"""
import argparse
import csv
import os
import sys

import leases

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MIB, GIB = 1 << 20, 1 << 30


class MissingRow(Exception):
    pass


class Sim:
    """The model's rows, keyed as leases.row_key keys them."""

    def __init__(self, path):
        self.path = path
        self.rows = {}
        with open(path, newline="") as f:
            for r in csv.DictReader(f):
                self.rows.setdefault(leases.row_key(r), r)

        self.used = []  # the calibrations behind the rows the document quotes, in first-use order

    def row(self, scenario, strategy, direction, size, variant=""):
        key = (scenario, strategy, direction, size, variant)
        r = self.rows.get(key)
        if r is None or r.get("status") != "ok":
            raise MissingRow(f"{self.path}: no ok row for {key} (run the shipped sweep: scripts/run-main.sh)")
        cal = r.get("calibration") or "not recorded"
        if cal not in self.used:
            self.used.append(cal)
        return r

    def us(self, *key):
        return float(self.row(*key)["time_us"])

    def gbps(self, *key):
        return float(self.row(*key)["gbps"])


class Measured:
    """One machine's cross-lease medians."""

    def __init__(self, label, path):
        self.label = label
        self.path = path
        self.rows = leases.cross_lease(path) if os.path.isdir(path) else {}

    def get(self, scenario, strategy, direction, size, variant=""):
        return self.rows.get((scenario, strategy, direction, size, variant))


def fmt_gbps(v):
    return f"{v:.1f} GB/s"


def fmt_us(v):
    if v >= 10000:
        return f"{v / 1000:.1f} ms"
    if v >= 1000:
        return f"{v / 1000:.2f} ms"
    return f"{v:.1f} µs"


def measured_cell(m, key, what):
    r = m.get(*key)
    if r is None:
        return "–"
    v = float(r["gbps"]) if what == "gbps" else float(r["time_us"])
    text = fmt_gbps(v) if what == "gbps" else fmt_us(v)
    if r["leases"] > 1:
        text += f" ({r['leases']} leases, {r['spread_pct']:.0f} % apart)"
    return text


def measured_value(m, key, what):
    r = m.get(*key)
    if r is None:
        return None
    return float(r["gbps"]) if what == "gbps" else float(r["time_us"])


def table(sim, machines, rows, what):
    """rows: [(label, key)]; what: gbps or us. One column for the model, one per machine."""
    head = "| case | model | " + " | ".join(f"measured, {m.label}" for m in machines) + " |"
    out = [head, "|---|---|" + "---|" * len(machines)]
    for label, key in rows:
        model = fmt_gbps(sim.gbps(*key)) if what == "gbps" else fmt_us(sim.us(*key))
        cells = [measured_cell(m, key, what) for m in machines]
        out.append(f"| {label} | {model} | " + " | ".join(cells) + " |")
    return out


def pct(a, b):
    """How much a is above b, in percent of b."""
    return (a / b - 1.0) * 100.0


def misses(sim, scenario):
    note = sim.row(scenario, "periodic", "h2d", 4 * MIB, "misses")["note"]
    for part in note.split(";"):
        part = part.strip()
        if "missed the deadline" in part:
            return part.split(" frames")[0]  # "0 of 500"
    raise MissingRow(f"{sim.path}: the misses row of {scenario} has no miss count in its note")


def q_duplex(sim, ms):
    one_h2d = ("pinned", "pinned", "h2d", 256 * MIB)
    one_d2h = ("pinned", "pinned", "d2h", 256 * MIB)
    duplex = ("duplex", "duplex", "both", 256 * MIB)
    exchange = ("zero-copy", "zero_copy", "both", 256 * MIB)
    duplex_k = ("duplex-compute", "duplex", "both", 256 * MIB)
    exch_k = ("zc-exchange-compute", "zero_copy", "both", 256 * MIB)
    exch_full = ("zc-exchange-compute-full", "zero_copy", "both", 64 * MIB)
    exch_64 = ("zc-exchange-compute", "zero_copy", "both", 64 * MIB)
    lines = [
        "## 1. Full duplex: two streams or a zero-copy kernel, and the cost of a kernel beside it",
        "",
        "*Seed: full-duplex-pcie-zero-copy-thread.txt* — the data swap is symmetric; is a zero-copy",
        "exchange kernel the way to use both directions of PCIe at once, and what does it cost when",
        "other kernels run?",
        "",
        "```",
        f"dmasim run scenarios/pinned.yaml scenarios/duplex.yaml scenarios/zero_copy.yaml \\",
        f"    scenarios/compute_beside.yaml -o out/q1",
        "```",
        "",
        "256 MiB each way (aggregate GB/s for the two-way rows):",
        "",
    ]
    lines += table(sim, ms, [
        ("cudaMemcpy H2D alone", one_h2d),
        ("cudaMemcpy D2H alone", one_d2h),
        ("two streams, cudaMemcpyAsync both ways (duplex)", duplex),
        ("zero-copy exchange kernel (264 blocks, 16 B)", exchange),
        ("duplex beside a compute kernel", duplex_k),
        ("exchange beside a compute kernel (SMs left free)", exch_k),
        ("exchange, 64 MiB, beside a kernel (SMs left free)", exch_64),
        ("exchange, 64 MiB, beside a kernel taking every SM", exch_full),
    ], "gbps")
    ref = ms[0]
    d_m = measured_value(ref, duplex, "gbps")
    e_m = measured_value(ref, exchange, "gbps")
    # One way: the mean of the two directions alone.
    h_m, d2_m = measured_value(ref, one_h2d, "gbps"), measured_value(ref, one_d2h, "gbps")
    one_m = (h_m + d2_m) / 2 if h_m and d2_m else None
    d_s, e_s = sim.gbps(*duplex), sim.gbps(*exchange)
    one_s = (sim.gbps(*one_h2d) + sim.gbps(*one_d2h)) / 2
    below_twice = d_s < 2 * one_s and e_s < 2 * one_s and (one_m is None or ((d_m or 0) < 2 * one_m and (e_m or 0) < 2 * one_m))
    winner = "two streams" if (d_m if d_m else d_s) >= (e_m if e_m else e_s) else "the zero-copy exchange"
    dk_m = measured_value(ref, duplex_k, "gbps")
    dk_note = ""
    if dk_m and d_m:
        dk_note = (f" A compute kernel beside the duplex copy changes the aggregate by {pct(dk_m, d_m):+.0f} % on the "
                   f"{ref.label} (model {pct(sim.gbps(*duplex_k), d_s):+.1f} %: the copy engines need no SMs, and the "
                   "kernel's turns at GPU memory leave them far more than the link can carry). Beside the exchange it costs nothing as long as "
                   "the exchange got its SMs first, as in these rows; a compute kernel that already holds every SM's "
                   "warps makes the exchange wait for its blocks to end (results/h100-sxm/isolating/sm-sharing: "
                   "3.42 ms against 1.62 ms for 64 MiB behind 2 ms of compute; the model shares SM room so).")
    lines += [
        "",
        f"**Decision.** Use {winner}. On the {ref.label} two streams move "
        + (f"{d_m:.1f} GB/s ({d_m / one_m:.2f}× one way)" if d_m and one_m else f"{d_s:.1f} GB/s (model)")
        + " and the exchange kernel "
        + (f"{e_m:.1f} GB/s" if e_m else f"{e_s:.1f} GB/s (model)")
        + f"; the model gives {d_s:.1f} GB/s ({d_s / one_s:.2f}× one way) and {e_s:.1f} GB/s."
        + (" Neither reaches twice one way: the host's root port moves 100 GB/s for both directions together "
           "in 256-byte packets and less in smaller ones, each packet costing it a fixed time besides its bytes "
           "(the exchange's 128-byte stores and completions: results/h100-sxm/isolating/zero-copy-exchange/mixes), "
           "each direction's link also carries the other direction's read requests and the data-link traffic "
           "(`dmasim run scenarios/duplex.yaml --explain` prints the split), and on the H100 host a device-to-host "
           "copy's writes past the host cache's I/O share go back to memory ahead of the host-to-device reads "
           "(results/h100-sxm/isolating/duplex-host-memory)."
           if below_twice else "")
        + " The exchange kernel also occupies SMs that the copy engines leave free." + dk_note,
        "",
    ]
    summary = (f"full duplex: two streams {d_m or d_s:.1f} GB/s vs zero-copy exchange {e_m or e_s:.1f} GB/s "
               f"({ref.label if d_m else 'model'}) -> {winner}")
    return lines, summary


def q_radar(sim, ms):
    cases = [
        ("4 MiB / 8 ms, card → pinned host, cudaMemcpy (pinned bounce)", "radar-8ms"),
        ("4 MiB / 8 ms, card → mmap'd pageable host, cudaMemcpy", "radar-8ms-pageable"),
        ("4 MiB / 2 ms (2 GB/s), pinned bounce", "radar-2gbps"),
        ("4 MiB / 8 ms, pinned, then a 2 ms processing kernel", "radar-8ms-process2ms"),
        ("4 MiB / 8 ms, pinned, then a 9 ms processing kernel", "radar-8ms-process9ms"),
    ]
    whatif = [
        ("4 MiB / 8 ms, card writes GPU memory directly, card on Gen5 x16, behind a switch, 6 ms kernel",
         "radar-switch-fpga-direct-gen5x16"),
        ("4 MiB / 8 ms, card writes GPU memory directly, card on Gen3 x8, behind a switch, 6 ms kernel",
         "radar-switch-fpga-direct-gen3x8"),
        ("4 MiB / 8 ms, card → pinned host → GPU, card on Gen3 x8, behind a switch, 6 ms kernel",
         "radar-switch-fpga-via-host-gen3x8"),
        ("4 MiB / 8 ms, card writes GPU memory directly, card on Gen3 x8, root ports, 6 ms kernel",
         "radar-rootports-fpga-direct-gen3x8"),
        ("4 MiB / 8 ms, card → pinned host → GPU, card on Gen3 x8, root ports, 6 ms kernel",
         "radar-rootports-fpga-via-host-gen3x8"),
        ("4 MiB / 2 ms (2 GB/s), card directly, card on Gen3 x4, behind a switch, 1 ms deadline",
         "radar-switch-2gbps-direct-gen3x4"),
    ]
    lines = [
        "## 2. The radar capture card: 4 MiB every 8 ms, and 2 GB/s",
        "",
        "*Seed: realtime-radar-fpga-to-gpu-thread.txt* — a capture card accumulates 4 MiB every 8 ms;",
        "should it write to the GPU directly, into pinned memory that is then copied, or into an mmap'd",
        "buffer that is copied from; are frames missed?",
        "",
        "```",
        f"dmasim run scenarios/periodic.yaml scenarios/whatif/radar.yaml -o out/q2",
        "```",
        "",
        "Frame latency from the frame's release to the data being in GPU memory (the lent GPUs have no",
        "capture card: measured rows release the frame from the CPU, which then copies it):",
        "",
        "| case | model p50 | model p99 | model misses | " + " | ".join(f"measured p50 / p99, {m.label}" for m in ms) + " |",
        "|---|---|---|---|" + "---|" * len(ms),
    ]
    for label, scen in cases:
        p50 = sim.us(scen, "periodic", "h2d", 4 * MIB)
        p99 = sim.us(scen, "periodic", "h2d", 4 * MIB, "p99")
        cells = []
        for m in ms:
            a = measured_value(m, (scen, "periodic", "h2d", 4 * MIB), "us")
            b = measured_value(m, (scen, "periodic", "h2d", 4 * MIB, "p99"), "us")
            cells.append(f"{fmt_us(a)} / {fmt_us(b)}" if a and b else "–")
        lines.append(f"| {label} | {fmt_us(p50)} | {fmt_us(p99)} | {misses(sim, scen)} | " + " | ".join(cells) + " |")
    lines += [
        "",
        "With a capture card (model only: 100 frames; the scenario's `links:` section sets the card's own",
        "link to the generation and width named, the GPU's and the switch's stay Gen5 x16; latency from",
        "the frame's release to the end of its processing kernel where there is one):",
        "",
        "| case | model frame latency | misses |",
        "|---|---|---|",
    ]
    for label, scen in whatif:
        lines.append(f"| {label} | {fmt_us(sim.us(scen, 'periodic', 'h2d', 4 * MIB))} | {misses(sim, scen)} |")
    def missed(scen):
        return int(misses(sim, scen).split(" of ")[0])

    pin, pag = sim.us("radar-8ms", "periodic", "h2d", 4 * MIB), sim.us("radar-8ms-pageable", "periodic", "h2d", 4 * MIB)
    period = sim.us("radar-8ms", "periodic", "h2d", 4 * MIB, "misses")  # a misses row's time is the deadline
    direct = sim.us("radar-switch-fpga-direct-gen3x8", "periodic", "h2d", 4 * MIB)
    via = sim.us("radar-switch-fpga-via-host-gen3x8", "periodic", "h2d", 4 * MIB)
    fast = sim.us("radar-switch-2gbps-direct-gen3x4", "periodic", "h2d", 4 * MIB)
    fast_deadline = sim.us("radar-switch-2gbps-direct-gen3x4", "periodic", "h2d", 4 * MIB, "misses")
    none_missed = missed("radar-8ms") == 0 and missed("radar-8ms-pageable") == 0
    backlog = "backlog=yes" in sim.row("radar-8ms-process9ms", "periodic", "h2d", 4 * MIB, "backlog")["note"]
    ref = ms[0]
    pin_m = measured_value(ref, ("radar-8ms", "periodic", "h2d", 4 * MIB), "us")
    pag_m = measured_value(ref, ("radar-8ms-pageable", "periodic", "h2d", 4 * MIB), "us")
    p99_m = measured_value(ref, ("radar-8ms", "periodic", "h2d", 4 * MIB, "p99"), "us")
    lines += [
        "",
        f"**Decision.** At 4 MiB every 8 ms the copy from pinned memory takes {fmt_us(pin)} in the model "
        f"({100 * pin / period:.1f} % of the period)" + (f" and {fmt_us(pin_m)} (p99 {fmt_us(p99_m)}) on the {ref.label}" if pin_m and p99_m else "")
        + f"; the copy from an mmap'd pageable buffer {fmt_us(pag)}" + (f" ({fmt_us(pag_m)} measured)" if pag_m else "")
        + f", {pag / pin:.1f}× longer" + (", and no frame misses its deadline either way" if none_missed else "")
        + ". Let the card write into pinned memory, or straight into GPU memory if its driver can: with the card on "
        f"Gen3 x8, going through pinned host memory adds {fmt_us(via - direct)} per frame to writing GPU memory directly "
        f"({fmt_us(via)} against {fmt_us(direct)}, each including its 6 ms kernel). At 2 GB/s from a card on Gen3 x4 "
        "the card "
        + (f"misses {misses(sim, 'radar-switch-2gbps-direct-gen3x4')} {fmt_us(fast_deadline)} deadlines: a frame takes "
           f"{fmt_us(fast)} to arrive" if missed("radar-switch-2gbps-direct-gen3x4") else
           f"delivers each frame in {fmt_us(fast)}, within its {fmt_us(fast_deadline)} deadline")
        + "." + (" Processing that takes longer than the period (9 ms every 8 ms) builds a backlog that keeps "
                 "growing (the backlog row)." if backlog else "")
        + " The model's frame-to-frame spread (its p99) waits for the stochastic host model (issue 14); the "
        "measured p99 shows how much the host adds.",
        "",
    ]
    summary = (f"radar 4 MiB/8 ms: pinned bounce {fmt_us(pin)}, mmap'd pageable {fmt_us(pag)}, "
               f"{misses(sim, 'radar-8ms')} and {misses(sim, 'radar-8ms-pageable')} frames missed; "
               f"card on Gen3 x8: direct {fmt_us(direct)} vs via host {fmt_us(via)}")
    return lines, summary


def q_mapping(sim, ms):
    rows = []
    for size, name in [(4, "4 B"), (4096, "4 KiB"), (65536, "64 KiB")]:
        rows.append((f"CPU stores through the BAR (mapped GPU memory), {name}", ("cpu-mapped", "cpu_mapped", "h2d", size)))
        rows.append((f"cudaMemcpy H2D from pinned memory, {name}", ("latency" if size < 65536 else "pinned", "pinned", "h2d", size)))
        rows.append((f"CPU loads through the BAR, {name}", ("cpu-mapped", "cpu_mapped", "d2h", size)))
        rows.append((f"cudaMemcpy D2H to pinned memory, {name}", ("latency" if size < 65536 else "pinned", "pinned", "d2h", size)))
    lines = [
        "## 3. Mapping GPU memory into the CPU's address space instead of DMA",
        "",
        "*Seed: mapping-gpu-memory-user-space-thread.txt* — map the GPU's BAR into user space and let",
        "the CPU load and store, or keep using DMA copies?",
        "",
        "```",
        f"dmasim run scenarios/third_party.yaml scenarios/latency.yaml scenarios/pinned.yaml -o out/q3",
        "```",
        "",
        "(CPU access through the BAR is modelled only: dmaprobe cannot map the BAR on the lent machines.)",
        "",
    ]
    lines += table(sim, ms, rows, "us")
    st_small = sim.us("cpu-mapped", "cpu_mapped", "h2d", 4)
    cp_small = sim.us("latency", "pinned", "h2d", 4)
    st_big = sim.us("cpu-mapped", "cpu_mapped", "h2d", 65536)
    cp_big = sim.us("pinned", "pinned", "h2d", 65536)
    ld_big = sim.us("cpu-mapped", "cpu_mapped", "d2h", 65536)
    cpd_big = sim.us("pinned", "pinned", "d2h", 65536)
    lines += [
        "",
        "**Decision.** "
        + (f"For a few bytes the mapping wins: a 4-byte store through the BAR takes {fmt_us(st_small)} against "
           f"{fmt_us(cp_small)} for the smallest cudaMemcpy. " if st_small < cp_small else
           f"Even for 4 bytes a store through the BAR ({fmt_us(st_small)}) is no faster than a cudaMemcpy "
           f"({fmt_us(cp_small)}). ")
        + (f"By 64 KiB it loses: the CPU's write-combined stores take {fmt_us(st_big)} against {fmt_us(cp_big)} for "
           "the copy engine" if st_big > cp_big else
           f"At 64 KiB the CPU's stores still take {fmt_us(st_big)} against {fmt_us(cp_big)} for the copy engine")
        + (f", and uncached loads are far slower ({fmt_us(ld_big)} against {fmt_us(cpd_big)}), since each load waits "
           "for its round trip" if ld_big > cpd_big else f"; loads take {fmt_us(ld_big)} against {fmt_us(cpd_big)}")
        + ". Map the BAR for doorbells, flags and small control blocks; move data with DMA.",
        "",
    ]
    summary = (f"mapping GPU memory: 4 B store {fmt_us(st_small)} vs copy {fmt_us(cp_small)}; 64 KiB store "
               f"{fmt_us(st_big)} vs copy {fmt_us(cp_big)}, load {fmt_us(ld_big)} -> DMA for data")
    return lines, summary


def q_pinned(sim, ms):
    big = 256 * MIB
    rows = [
        ("pageable (malloc) H2D", ("pageable", "pageable", "h2d", big)),
        ("pinned (cudaMallocHost) H2D", ("pinned", "pinned", "h2d", big)),
        ("registered (cudaHostRegister) H2D", ("registered", "registered", "h2d", big)),
        ("pageable D2H", ("pageable", "pageable", "d2h", big)),
        ("pinned D2H", ("pinned", "pinned", "d2h", big)),
    ]
    setup = [
        ("cudaMallocHost of 256 MiB", ("pinned", "pinned", "h2d", big, "setup=mallochost")),
        ("cudaHostRegister of 256 MiB", ("registered", "registered", "h2d", big, "setup=register")),
        ("register + 10 copies + unregister, per copy", ("registered", "registered", "h2d", big, "amortised_10")),
    ]
    overlap = [(f"{n} stream{'s' if n > 1 else ''}", (s, "async_overlap", "both", big))
               for n, s in [(1, "async-overlap-s1"), (2, "async-overlap-s2"), (4, "async-overlap"),
                            (8, "async-overlap-s8"), (16, "async-overlap-s16")]]
    lines = [
        "## 4. Pinned, pageable, registered memory and overlap with streams",
        "",
        "*Seed: cuda-pinned-async-streams-slides-fr.txt* — how much faster are copies from pinned memory,",
        "what does pinning cost, and what do several streams buy when copies and kernels overlap?",
        "",
        "```",
        f"dmasim run scenarios/pinned.yaml scenarios/pageable.yaml scenarios/registered.yaml \\",
        f"    scenarios/async_overlap.yaml -o out/q4",
        "```",
        "",
        "Copies of 256 MiB:",
        "",
    ]
    lines += table(sim, ms, rows, "gbps")
    lines += ["", "What pinning costs:", ""]
    lines += table(sim, ms, setup, "us")
    lines += ["", "256 MiB split over N streams, each chunk H2D → 5 ms of kernel (for the whole size) → D2H:", ""]
    lines += table(sim, ms, overlap, "us")
    pin = sim.gbps("pinned", "pinned", "h2d", big)
    pag = sim.gbps("pageable", "pageable", "h2d", big)
    reg_cost = sim.us("registered", "registered", "h2d", big, "setup=register")
    copy_us = sim.us("pinned", "pinned", "h2d", big)
    s1 = sim.us("async-overlap-s1", "async_overlap", "both", big)
    best_n, best_us = min([(n, sim.us(s, "async_overlap", "both", big)) for n, s in
                           [(2, "async-overlap-s2"), (4, "async-overlap"), (8, "async-overlap-s8"),
                            (16, "async-overlap-s16")]], key=lambda x: x[1])
    ref = ms[0]
    pin_m = measured_value(ref, ("pinned", "pinned", "h2d", big), "gbps")
    pag_m = measured_value(ref, ("pageable", "pageable", "h2d", big), "gbps")
    s1_m = measured_value(ref, ("async-overlap-s1", "async_overlap", "both", big), "us")
    s16_m = measured_value(ref, ("async-overlap-s16", "async_overlap", "both", big), "us")
    s8_m = measured_value(ref, ("async-overlap-s8", "async_overlap", "both", big), "us")
    s8 = sim.us("async-overlap-s8", "async_overlap", "both", big)
    s16 = sim.us("async-overlap-s16", "async_overlap", "both", big)
    lines += [
        "",
        f"**Decision.** Pin buffers that are copied more than once: pinned memory copies at {pin:.1f} GB/s in the model "
        + (f"({pin_m:.1f} measured on the {ref.label}) " if pin_m else "")
        + f"against {pag:.1f} GB/s from pageable memory" + (f" ({pag_m:.1f} measured)" if pag_m else "")
        + f". Pinning is not free: registering 256 MiB costs {fmt_us(reg_cost)}, {reg_cost / copy_us:.1f}× the copy "
        "itself, so allocate pinned memory once, at start-up, as the slides say. Streams overlap copies with "
        f"kernels: {best_n} streams take {fmt_us(best_us)} against {fmt_us(s1)} with one "
        f"(×{s1 / best_us:.2f})" + (f"; measured, 16 streams give ×{s1_m / s16_m:.2f}" if s1_m and s16_m else "")
        + f". Going from 8 to 16 streams saves {-pct(s16, s8):.0f} % more in the model"
        + (f" ({-pct(s16_m, s8_m):.0f} % measured)" if s16_m and s8_m else "") + ".",
        "",
    ]
    summary = (f"pinned {pin:.1f} vs pageable {pag:.1f} GB/s; register 256 MiB {fmt_us(reg_cost)}; "
               f"{best_n} streams ×{s1 / best_us:.2f} over one")
    return lines, summary


def q_peer(sim, ms):
    big = 256 * MIB
    rows = []
    for scen, where in [("peer-switch", "two GPUs under one PCIe switch (PIX)"),
                        ("peer-rootports", "two GPUs on two root ports (PHB)")]:
        for v, how in [("peer=on", "peer access on"), ("peer=off", "peer access off (staged through the host)")]:
            rows.append((f"{where}, one way, {how}", (scen, "peer", "h2d", big, v)))
    nv = [(f"2×H200 over NVLink (NV18), one way, peer access {v.split('=')[1]}", ("peer", "peer", "h2d", big, v))
          for v in ("peer=on", "peer=off")]
    lines = [
        "## 5. Peer copies only under one switch",
        "",
        "*Seed: ascend-acl-peer-to-peer-doc.txt* — the Ascend runtime allows device-to-device copies only",
        "between devices under the same PCIe switch. What does a peer copy gain there, and what does the",
        "path through the root complex, or through host memory, cost?",
        "",
        "```",
        f"dmasim run scenarios/peer.yaml -o out/q5",
        "dmasim topo show platforms/workstation-2gpu-switch.yaml",
        "```",
        "",
        "256 MiB (the lent 2×H200 joins its GPUs by NVLink, so the PCIe rows are modelled only; its",
        "measurements of them timed NVLink and are excluded from comparisons):",
        "",
    ]
    lines += table(sim, [], rows, "gbps")
    lines += ["", "Over NVLink, for scale:", ""]
    lines += table(sim, ms, nv, "gbps")
    sw_on = sim.gbps("peer-switch", "peer", "h2d", big, "peer=on")
    sw_off = sim.gbps("peer-switch", "peer", "h2d", big, "peer=off")
    rp_on = sim.gbps("peer-rootports", "peer", "h2d", big, "peer=on")
    nv_on = sim.gbps("peer", "peer", "h2d", big, "peer=on")
    nv_m = next((v for v in (measured_value(m, ("peer", "peer", "h2d", big, "peer=on"), "gbps") for m in ms) if v), None)
    lines += [
        "",
        f"**Decision.** Under one switch a peer copy moves {sw_on:.1f} GB/s, turning around in the switch; staged "
        f"through host memory it moves {sw_off:.1f} GB/s ({pct(sw_off, sw_on):+.0f} %), and through the root complex "
        f"{rp_on:.1f} GB/s ({pct(rp_on, sw_on):+.0f} %). Where GPUs do not share a switch, a runtime with the "
        "same-switch rule leaves staging through the host, which also takes host memory bandwidth. Over NVLink a "
        f"peer copy moves {nv_on / sw_on:.1f}× what it moves under a PCIe switch in the model"
        + (f" ({nv_m:.1f} GB/s measured on the 2×H200)" if nv_m else "") + ".",
        "",
    ]
    summary = f"peer under one switch {sw_on:.1f} GB/s vs staged {sw_off:.1f} vs via root complex {rp_on:.1f}"
    return lines, summary


def calibration_words(used):
    """Which calibrations produced the quoted numbers, from results.csv's calibration column."""
    def one(c):
        if c == "none":
            return "none (the default parameters)"
        if "/" not in c and c != "not recorded":
            return f"`{c}` (`results/{c}/calibration.yaml`)"
        return f"`{c}`"
    return " and ".join(one(c) for c in used) if used else "none"


def build(sim, machines):
    body, summaries = [], []
    for q in (q_duplex, q_radar, q_mapping, q_pinned, q_peer):
        lines, summary = q(sim, machines)
        body += lines
        summaries.append(summary)
    header = [
        "# The source material's questions, answered",
        "",
        "<!-- Written by scripts/questions.py from results/sim/results.csv and the measured folders;",
        "     scripts/run-main.sh --regenerate rewrites it, and a test fails when it is stale. -->",
        "",
        "The five threads and documents in the source material ask questions this tool exists to",
        "answer. Each answer below gives the commands, the model's numbers (the shipped sweep, each",
        "scenario with its platform's committed calibration; here " + calibration_words(sim.used) + ",",
        "as the `calibration` column of results.csv says row by row), the measured numbers where the",
        "lent GPUs can measure the case (each row the median over freshly started machines of each",
        "one's median, with how far the machines were apart), and a short decision worded from those",
        "numbers.",
        "",
    ]
    return "\n".join(header + body).rstrip() + "\n", summaries


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--sim", default=os.path.join(ROOT, "results/sim/results.csv"))
    p.add_argument("--measured", action="append", metavar="LABEL=DIR")
    group = p.add_mutually_exclusive_group()
    group.add_argument("--out")
    group.add_argument("--check")
    p.add_argument("--summary", action="store_true")
    a = p.parse_args()
    specs = a.measured or [f"H100={os.path.join(ROOT, 'results/h100-sxm/measured')}",
                           f"2×H200={os.path.join(ROOT, 'results/h200x2-nvlink/measured')}"]
    machines = []
    for spec in specs:
        label, sep, path = spec.partition("=")
        if not sep or not label or not path:
            print(f"questions.py: --measured {spec}: expected LABEL=DIR", file=sys.stderr)
            return 2
        if not os.path.isdir(path):
            print(f"questions.py: --measured {spec}: {path} is not a folder", file=sys.stderr)
            return 2
        machines.append(Measured(label, path))
    if not os.path.isfile(a.sim):
        print(f"questions.py: --sim {a.sim}: no such file", file=sys.stderr)
        return 2
    try:
        text, summaries = build(Sim(a.sim), machines)
    except MissingRow as e:
        print(f"questions.py: {e}", file=sys.stderr)
        return 2
    if a.check:
        with open(a.check, encoding="utf-8") as f:
            old = f.read()
        if old != text:
            new_lines, old_lines = text.splitlines(), old.splitlines()
            for i in range(max(len(new_lines), len(old_lines))):
                n = new_lines[i] if i < len(new_lines) else "<end>"
                o = old_lines[i] if i < len(old_lines) else "<end>"
                if n != o:
                    print(f"{a.check}:{i + 1}: stale\n  file:      {o}\n  generated: {n}", file=sys.stderr)
                    break
            print(f"{a.check} does not match the results files: rerun scripts/run-main.sh --regenerate", file=sys.stderr)
            return 1
        print(f"{a.check} matches the results files")
    elif a.out:
        tmp = a.out + ".tmp"
        with open(tmp, "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(tmp, a.out)
    else:
        sys.stdout.write(text)
    if a.summary:
        for i, s in enumerate(summaries, 1):
            print(f"  Q{i} {s}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
