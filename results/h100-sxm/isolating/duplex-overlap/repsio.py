"""What this folder's scripts share: reading one lease's CSV (one clear error when it cannot be
read) and the quantile they report. Standard library only."""
import csv
import sys


def read_rows(path, tool):
    """The rows of the CSV at `path`, or exit naming `tool` and the file."""
    try:
        with open(path, newline="") as f:
            return list(csv.DictReader(f))
    except OSError as e:
        sys.exit(f"{tool}: {path}: {e.strerror}")


def quantile(v, q):
    """The value at fraction `q` of the sorted values (no interpolation)."""
    v = sorted(v)
    return v[min(len(v) - 1, int(q * len(v)))]


def cli(main, doc):
    """Runs main(arguments), or exits with the docstring's Usage line when there are none."""
    if len(sys.argv) < 2:
        sys.exit(next(line for line in doc.splitlines() if line.startswith("Usage:")))
    main(sys.argv[1:])
