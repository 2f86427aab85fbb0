#!/usr/bin/env python3
"""Prints the headline numbers of measured data (or a results.csv) as a Markdown table.

Usage: scripts/headlines.py results/h100-sxm/measured [more ...]
Each argument is a column: a machine's measured folder (the median over its leases of each
lease's median over its runs), a lease folder, or one CSV (a run's measured.csv, the model's
results.csv). Periodic miss counts are those of the first lease's first run. Standard library only.
"""
import sys

import leases

GIB, MIB = 1 << 30, 1 << 20


def load(path):
    # Old peer rows carry their mode in the note only: the keys have the peer=on/off variant.
    return leases.cross_lease(path)


def pick(rows, scenario, strategy, direction, size, variant="", what="gbps"):
    r = rows.get((scenario, strategy, direction, size, variant))
    if r is None:
        return "-"
    if what == "gbps":
        return f"{float(r['gbps']):.1f} GB/s"
    if what == "us":
        return f"{float(r['time_us']):.2f} µs"
    if what == "note":
        return r["note"].split(";")[0]
    return r[what]


HEADLINES = [
    ("pinned H2D 1 GiB", ("pinned", "pinned", "h2d", GIB)),
    ("pinned D2H 1 GiB", ("pinned", "pinned", "d2h", GIB)),
    ("pageable H2D 1 GiB", ("pageable", "pageable", "h2d", GIB)),
    ("pageable D2H 1 GiB", ("pageable", "pageable", "d2h", GIB)),
    ("pageable H2D 64 MiB", ("pageable", "pageable", "h2d", 64 * MIB)),
    ("duplex aggregate 1 GiB", ("duplex", "duplex", "both", GIB)),
    ("zero-copy read 256 MiB (16 B, 264 blocks)", ("zero-copy", "zero_copy", "h2d", 256 * MIB)),
    ("zero-copy write 256 MiB", ("zero-copy", "zero_copy", "d2h", 256 * MIB)),
    ("zero-copy exchange 256 MiB (aggregate)", ("zero-copy", "zero_copy", "both", 256 * MIB)),
    ("zero-copy read, 4 B stride 1", ("zero-copy-stride1-4B", "zero_copy", "h2d", 64 * MIB)),
    ("zero-copy read, 4 B stride 2", ("zero-copy-stride2", "zero_copy", "h2d", 64 * MIB)),
    ("zero-copy read, 4 B stride 8", ("zero-copy-stride8", "zero_copy", "h2d", 64 * MIB)),
    ("zero-copy read, 4 B stride 32", ("zero-copy-stride32", "zero_copy", "h2d", 64 * MIB)),
    ("zero-copy read, 1 block", ("zero-copy-blocks1", "zero_copy", "h2d", 64 * MIB)),
    ("zero-copy read, 4 blocks", ("zero-copy-blocks4", "zero_copy", "h2d", 64 * MIB)),
    ("zero-copy read, 16 blocks", ("zero-copy-blocks16", "zero_copy", "h2d", 64 * MIB)),
]


def main(paths):
    data = [load(p) for p in paths]
    print("| what | " + " | ".join(paths) + " |")
    print("|---|" + "---|" * len(paths))
    for label, key in HEADLINES:
        print(f"| {label} | " + " | ".join(pick(d, *key) for d in data) + " |")
    for n, scen in [(1, "async-overlap-s1"), (2, "async-overlap-s2"), (4, "async-overlap"), (8, "async-overlap-s8"),
                    (16, "async-overlap-s16")]:
        cells = []
        for d in data:
            main_row = d.get((scen, "async_overlap", "both", 256 * MIB, ""))
            serial = d.get((scen, "async_overlap", "both", 256 * MIB, "serial"))
            if main_row and serial:
                cells.append(f"{float(main_row['time_us']) / 1e3:.2f} ms "
                             f"(×{float(serial['time_us']) / float(main_row['time_us']):.2f} vs serial)")
            else:
                cells.append("-")
        print(f"| async_overlap, {n} streams, 256 MiB + 5 ms kernel | " + " | ".join(cells) + " |")
    for size, label in [(4, "4 B"), (4096, "4 KiB"), (65536, "64 KiB")]:
        for dirn in ["h2d", "d2h"]:
            print(f"| small pinned {dirn.upper()} {label} | " +
                  " | ".join(pick(d, "latency", "pinned", dirn, size, what="us") for d in data) + " |")
    for scen, label in [("radar-8ms", "4 MiB / 8 ms pinned"), ("radar-2gbps", "4 MiB / 2 ms pinned"),
                        ("radar-8ms-pageable", "4 MiB / 8 ms pageable")]:
        cells = []
        for d in data:
            p50 = pick(d, scen, "periodic", "h2d", 4 * MIB, what="us")
            p99 = pick(d, scen, "periodic", "h2d", 4 * MIB, "p99", what="us")
            misses = pick(d, scen, "periodic", "h2d", 4 * MIB, "misses", what="note")
            cells.append(f"p50 {p50}, p99 {p99}, {misses}")
        print(f"| periodic {label} | " + " | ".join(cells) + " |")
    for dirn, label in [("h2d", "one way"), ("both", "both ways (aggregate)")]:
        rows = []
        for d in data:
            on = d.get(("peer", "peer", dirn, 256 * MIB, "peer=on"))
            off = d.get(("peer", "peer", dirn, 256 * MIB, "peer=off"))
            rows.append(f"on {float(on['gbps']):.1f} / off {float(off['gbps']):.1f} GB/s" if on and off else "-")
        print(f"| peer 256 MiB {label} | " + " | ".join(rows) + " |")


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    main(sys.argv[1:])
