"""What this folder's scripts share: reading one lease's CSV (one clear error when it cannot be
read) and the quantile they report. Standard library only."""
import csv
import os
import sys

# overlap.cu's modes that sweep the host delay D before the gate, one file each.
DELAY_FILES = ("overlap.csv", "overlap-large.csv", "growth.csv")


def read_rows(path, tool):
    """The rows of the CSV at `path`, or exit naming `tool` and the file."""
    try:
        with open(path, newline="") as f:
            return list(csv.DictReader(f))
    except OSError as e:
        sys.exit(f"{tool}: {path}: {e.strerror}")


def delay_cells(lease_dir, tool):
    """A lease folder's delay sweeps: {(bytes, shape, file): [rows, one per D]} over DELAY_FILES."""
    cells = {}
    for name in DELAY_FILES:
        path = os.path.join(lease_dir, name)
        if os.path.exists(path):
            for r in read_rows(path, tool):
                cells.setdefault((int(r["bytes"]), r["shape"], name), []).append(r)
    return cells


def quantile(v, q):
    """The value at fraction `q` of the sorted values (no interpolation)."""
    v = sorted(v)
    return v[min(len(v) - 1, int(q * len(v)))]


def cli(main, doc):
    """Runs main(arguments), or exits with the docstring's Usage line when there are none."""
    if len(sys.argv) < 2:
        sys.exit(next(line for line in doc.splitlines() if line.startswith("Usage:")))
    main(sys.argv[1:])
