"""scripts/kernel_launch.py: the harness's empty kernel per lease and its median, on synthetic
leases. Standard library only; run from the repository root."""
import csv
import json
import os
import subprocess
import sys
import tempfile
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SCRIPT = os.path.join(ROOT, "scripts", "kernel_launch.py")


def lease(machine, name, meta):
    folder = os.path.join(machine, name)
    os.makedirs(folder)
    with open(os.path.join(folder, "measured.csv"), "w") as f:
        f.write("scenario,strategy,direction,size_bytes,time_us,source,status\nx,pinned,h2d,4096,9.0,hw,ok\n")
    if meta is not None:
        with open(os.path.join(folder, "metadata.json"), "w") as f:
            f.write(meta if isinstance(meta, str) else json.dumps(meta))


def run(*args):
    return subprocess.run([sys.executable, SCRIPT, *args], capture_output=True, text=True)


class KernelLaunch(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp()
        self.machine = os.path.join(self.dir, "measured")
        for name, us in (("2026-01-01-aaaa", 3.5), ("2026-01-01-bbbb", 4.5), ("2026-01-01-cccc", 3.9)):
            lease(self.machine, name, {"gpu": {"name": "H100"}, "kernel_calibration": {"overhead_us": us}})
        lease(self.machine, "2026-01-01-dddd", {"kernel_calibration": None})  # no synthetic kernel ran
        lease(self.machine, "2026-01-01-eeee", None)                        # no metadata at all

    def test_median_over_the_leases_that_ran_it(self):
        r = run(self.machine)
        self.assertEqual(r.returncode, 0, r.stderr)
        rows = list(csv.reader(r.stdout.splitlines()))
        self.assertEqual(rows[0], ["lease", "overhead_us"])
        self.assertEqual([x[0] for x in rows[1:4]], ["2026-01-01-aaaa", "2026-01-01-bbbb", "2026-01-01-cccc"])
        self.assertEqual(rows[4], ["median of 3", "3.900"])
        self.assertEqual(rows[5:], [["min", "3.500"], ["max", "4.500"]])

    def test_leases_named_by_boot_id(self):
        out = os.path.join(self.dir, "k.csv")
        r = run(self.machine, "--leases", "aaaa,bbbb", "--out", out)
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(out) as f:
            self.assertIn("median of 2,4.000", f.read())

    def test_bad_metadata_names_the_file_and_key(self):
        lease(self.machine, "2026-01-01-ffff", {"kernel_calibration": {"overhead_us": "fast"}})
        r = run(self.machine)
        self.assertNotEqual(r.returncode, 0)
        self.assertIn("2026-01-01-ffff", r.stderr)
        self.assertIn("kernel_calibration.overhead_us", r.stderr)

    def test_no_lease_with_the_kernel_is_an_error(self):
        r = run(self.machine, "--leases", "dddd")
        self.assertNotEqual(r.returncode, 0)
        self.assertIn("no lease", r.stderr)


if __name__ == "__main__":
    unittest.main()
