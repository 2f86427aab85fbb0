#!/usr/bin/env python3
"""dmaprobe's pinned and duplex rows on the copy-release leases (plan.txt): per lease, the blocking
copies each way, their difference, and the gated pair with its aggregate over the copy into the GPU.
Usage: dmaprobe_summary.py LEASE_DIR...  (each holding dmaprobe's measured.csv)"""
import csv
import sys
from pathlib import Path


def main(dirs):
    print("per lease (us): blocking into the GPU, out of it, their difference; the duplex pair, 2 x into / pair")
    for d in dirs:
        rows = {(r["scenario"], r["direction"], int(r["size_bytes"]), r["variant"]): float(r["time_us"])
                for r in csv.DictReader((Path(d) / "measured.csv").open()) if r["status"] == "ok"}
        print(Path(d).name)
        for n in sorted({k[2] for k in rows if k[0] == "pinned"}):
            h, o = rows.get(("pinned", "h2d", n, "")), rows.get(("pinned", "d2h", n, ""))
            pair = rows.get(("duplex", "both", n, ""))
            ratio = f"{2 * h / pair:5.3f}" if h and pair else "  -  "
            print(f"  {n:8d} B: h2d {h:8.2f} d2h {o:8.2f} diff {h - o:+6.2f} | pair {pair:8.2f} ratio {ratio}")


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    main(sys.argv[1:])
