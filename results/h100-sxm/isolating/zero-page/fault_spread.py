#!/usr/bin/env python3
"""zero-page (README.md): how a page fault's cost moves between the main plans' leases, and with what.

Usage: fault_spread.py MEASURED_DIR [MEASURED_DIR ...]   (e.g. ../../measured ../../../h200x2-nvlink/measured)

Per lease, a fault's cost is the pageable-fresh row less the pageable row of the same size and
direction, a page. Prints its spread between leases (sigma of its log, and the p10-p90 width over
2.563, what host_spread's groups are measured by) and its correlation over the leases with the
lease's setup rows of 16 MiB (cudaMallocHost, cudaHostRegister, cudaHostUnregister: the kernel's
work on pages) and with its pageable copy of 4 MiB (the CPU's copy rate). Standard library only.
"""
import csv
import glob
import math
import os
import statistics
import sys

PAGE = 4096
FAULTS = [("write 4 MiB", "d2h", 4 << 20), ("read 4 MiB", "h2d", 4 << 20), ("write 64 MiB", "d2h", 64 << 20),
          ("read 64 MiB", "h2d", 64 << 20), ("write 64 KiB", "d2h", 64 << 10), ("read 64 KiB", "h2d", 64 << 10)]
OTHERS = [("cudaMallocHost 16 MiB", ("setup-mallochost", "pinned", "h2d", 16 << 20, "setup=mallochost")),
          ("cudaHostRegister 16 MiB", ("setup-register", "registered", "h2d", 16 << 20, "setup=register")),
          ("cudaHostUnregister 16 MiB", ("setup-register", "registered", "h2d", 16 << 20, "setup=unregister")),
          ("pageable copy 4 MiB", ("pageable", "pageable", "h2d", 4 << 20, ""))]


def corr(a, b):
    ma, mb = statistics.mean(a), statistics.mean(b)
    num = sum((x - ma) * (y - mb) for x, y in zip(a, b))
    return num / math.sqrt(sum((x - ma) ** 2 for x in a) * sum((y - mb) ** 2 for y in b))


def main(dirs):
    for root in dirs:
        leases = []
        for path in sorted(glob.glob(os.path.join(root, "*", "measured.csv"))):
            with open(path) as f:
                d = {(r["scenario"], r["strategy"], r["direction"], int(r["size_bytes"]), r["variant"]): float(r["time_us"])
                     for r in csv.DictReader(f)}
            try:
                faults = [(d["pageable-fresh", "pageable", dr, n, ""] - d["pageable", "pageable", dr, n, ""]) / (n / PAGE)
                          for _, dr, n in FAULTS]
                others = [d[k] for _, k in OTHERS]
            except KeyError:
                continue
            leases.append((faults, others))
        print(f"{root}: {len(leases)} leases")
        for i, (name, _, _) in enumerate(FAULTS):
            v = [x[0][i] for x in leases]
            logs = sorted(math.log(x) for x in v if x > 0)
            p10, p90 = logs[int(0.1 * (len(logs) - 1))], logs[int(0.9 * (len(logs) - 1))]
            cells = " ".join(f"{n} {corr(v, [x[1][j] for x in leases]):+.2f}" for j, (n, _) in enumerate(OTHERS))
            print(f"  {name:>12} fault: median {statistics.median(v):.3f} us a page, sigma(log) {statistics.stdev(logs):.3f}, "
                  f"p10-p90 / 2.563 {(p90 - p10) / 2.563:.3f}; correlation with {cells}")


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    main(sys.argv[1:])
