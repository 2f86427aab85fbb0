"""scripts/host_spread.py: the host's sigmas from a spread.csv and the band's coverage, on small
synthetic files. Standard library only; run from the repository root."""
import csv
import math
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SCRIPT = os.path.join(ROOT, "scripts", "host_spread.py")
KEY = ["scenario", "strategy", "direction", "size_bytes", "variant"]
LEASES = [f"2026-11-2{i % 10}-{i:08x}" for i in range(10)]
# Ten machines at even normal quantiles. The p10-p90 of ten values (closest ranks, interpolated)
# lies between the first two and the last two: GRID x sigma, not 2 x 1.2816 x sigma.
Z = [-1.6449, -1.0364, -0.6745, -0.3853, -0.1257, 0.1257, 0.3853, 0.6745, 1.0364, 1.6449]
GRID = 2 * (Z[8] + 0.1 * (Z[9] - Z[8])) / (2 * 1.2815515655446004)


def write(path, fields, rows):
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=fields)
        w.writeheader()
        w.writerows(rows)


class HostSpread(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp()
        self.spread = os.path.join(self.tmp, "spread.csv")
        rows = []
        for kind, sigma, base in (("pinned <64KiB", 0.1, 8.0), ("pageable >=64KiB", 0.2, 900.0),
                                  ("setup=mallochost", 0.3, 50.0), ("setup=register", 0.5, 70.0),
                                  ("zero_copy >=64KiB", 0.0, 400.0)):
            r = {"scenario": kind.split()[0], "strategy": "pinned", "direction": "h2d", "size_bytes": "4096",
                 "variant": "", "category": kind, "status": "ok"}
            for lease, z in zip(LEASES, Z):
                r[lease] = f"{base * math.exp(sigma * z):.6f}"
            rows.append(r)
        write(self.spread, KEY + ["category", "status"] + LEASES, rows)

    def tearDown(self):
        shutil.rmtree(self.tmp)

    def run_script(self, *args):
        p = subprocess.run([sys.executable, SCRIPT, *args], capture_output=True, text=True)
        self.assertEqual(p.returncode, 0, p.stderr)
        return p.stdout

    def value(self, out, name):
        for line in out.splitlines():
            if line.strip().startswith(f"host_spread.{name}:"):
                return float(line.split(":")[1].split()[0])
        self.fail(f"no {name} in {out}")

    def test_fit_gives_each_groups_sigma(self):
        out = self.run_script("fit", self.spread)
        self.assertAlmostEqual(self.value(out, "calls"), 0.1 * GRID, delta=0.0015)
        self.assertAlmostEqual(self.value(out, "cpu_copies"), 0.2 * GRID, delta=0.0015)
        # setup: the median of the setup kinds present (0.3 and 0.5).
        self.assertAlmostEqual(self.value(out, "setup"), 0.4 * GRID, delta=0.0015)
        self.assertIn("r = 1.00..1.00", out)  # every kind follows the same machines here

    def test_fit_keeps_only_the_leases_named(self):
        out = self.run_script("fit", self.spread, "--leases", ",".join(LEASES[3:7]))
        self.assertIn(": 4 leases", out)
        # The four middle machines only: a much narrower spread.
        self.assertLess(self.value(out, "calls"), 0.03)

    def test_coverage_counts_the_medians_inside_the_band(self):
        results = os.path.join(self.tmp, "results.csv")
        # A band over the calls row from its 3rd to its 8th machine: 6 of 10 inside; a band of
        # nothing on the zero-copy row: all 10 inside (they are all equal to it).
        lo, hi = 8.0 * math.exp(0.1 * Z[2]), 8.0 * math.exp(0.1 * Z[7])
        rows = [
            {"scenario": "pinned", "strategy": "pinned", "direction": "h2d", "size_bytes": "4096", "variant": "",
             "time_us": "8.0", "p10_us": f"{lo:.6f}", "p90_us": f"{hi:.6f}", "status": "ok"},
            {"scenario": "zero_copy", "strategy": "pinned", "direction": "h2d", "size_bytes": "4096", "variant": "",
             "time_us": "400.0", "p10_us": "400.0", "p90_us": "400.0", "status": "ok"},
        ]
        write(results, KEY + ["time_us", "p10_us", "p90_us", "status"], rows)
        out = self.run_script("coverage", self.spread, results)
        lines = {l.split()[0]: l for l in out.splitlines() if l.startswith("  ") and not l.strip().startswith("kind")}
        self.assertIn(" 60.0%", lines["pinned"])
        self.assertIn("100.0%", lines["zero_copy"])
        self.assertIn(" 80.0%", lines["all"])
        # The last column is the measured one over the share ten leases show of a population's
        # p10-p90 (0.823 by Blom's scores): wider by that much.
        cols = lines["pinned"].split()
        measured, population = float(cols[-2].rstrip("%")), float(cols[-1].rstrip("%"))
        self.assertAlmostEqual(population / measured, 1 / 0.823, delta=0.01)

    def test_tails_split_the_leases_at_the_widest_gap_and_compare_the_streams(self):
        # Two streams: leases 0-5 quiet, 6-9 noisy in both, but for lease 2, noisy in the pageable
        # stream only.
        tails = os.path.join(self.tmp, "tails.csv")
        rows = []
        for name, quiet, noisy in (("radar-8ms", 120.0, 600.0), ("radar-8ms-pageable", 900.0, 3200.0)):
            r = {"scenario": name, "strategy": "periodic", "direction": "h2d", "size_bytes": "4194304",
                 "variant": "p99", "category": "periodic p99", "status": "ok"}
            for i, lease in enumerate(LEASES):
                loud = i >= 6 or (name == "radar-8ms-pageable" and i == 2)
                r[lease] = f"{(noisy if loud else quiet) * (1 + 0.01 * i):.3f}"
            rows.append(r)
        write(tails, KEY + ["category", "status"] + LEASES, rows)
        out = self.run_script("tails", tails)
        self.assertIn("radar-8ms: widest gap", out)
        self.assertIn("6 leases at 120.0-126.0, 4 at 636.0-654.0", out)
        self.assertIn("5 leases at", out.split("radar-8ms-pageable: widest gap")[1])
        self.assertIn("the same side for 9 of 10 leases", out)
        # A file without periodic p99 rows says so.
        p = subprocess.run([sys.executable, SCRIPT, "tails", self.spread], capture_output=True, text=True)
        self.assertNotEqual(p.returncode, 0)
        self.assertIn("no periodic p99 row", p.stderr)

    def test_a_file_that_is_not_a_spread_csv_is_refused(self):
        bad = os.path.join(self.tmp, "bad.csv")
        with open(bad, "w") as f:
            f.write("a,b\n1,2\n")
        p = subprocess.run([sys.executable, SCRIPT, "fit", bad], capture_output=True, text=True)
        self.assertNotEqual(p.returncode, 0)
        self.assertIn("bad.csv", p.stderr)


    def test_levels_split_the_small_copies_at_the_hosts_two_levels(self):
        # Ten leases, each a measured.csv: the 4 KiB copy out of the GPU at 7.4 us on four of them
        # and 8.6 on six, in both cases, pinned and latency, (a little jitter); the model at 8.5.
        measured = os.path.join(self.tmp, "measured")
        fields = ["scenario", "strategy", "direction", "size_bytes", "variant", "time_us"]
        for i, lease in enumerate(LEASES):
            os.makedirs(os.path.join(measured, lease))
            level = 7.4 if i < 4 else 8.6
            rows = [{"scenario": s, "strategy": "pinned", "direction": "d2h", "size_bytes": "4096", "variant": "",
                     "time_us": f"{level + 0.01 * i:.3f}"} for s in ("pinned", "latency")]
            # Rows levels does not pool: a setup variant, a large copy.
            rows.append({"scenario": "pinned", "strategy": "pinned", "direction": "d2h", "size_bytes": "4096",
                         "variant": "setup=mallochost", "time_us": "3.0"})
            rows.append({"scenario": "pinned", "strategy": "pinned", "direction": "d2h", "size_bytes": str(1 << 20),
                         "variant": "", "time_us": "27.0"})
            write(os.path.join(measured, lease, "measured.csv"), fields, rows)
        results = os.path.join(self.tmp, "results.csv")
        write(results, fields, [{"scenario": "pinned", "strategy": "pinned", "direction": "d2h", "size_bytes": "4096",
                                 "variant": "", "time_us": "8.5"}])
        out = self.run_script("levels", results, measured)
        line = [l for l in out.splitlines() if l.startswith("d2h,4096,")]
        self.assertEqual(len(line), 1, out)
        f = line[0].split(",")
        self.assertEqual(f[2], "20")  # ten leases, two cases each
        self.assertEqual(float(f[3]), 0.40)  # the lower level's share
        self.assertAlmostEqual(float(f[4]), 7.415, delta=0.006)
        self.assertEqual(float(f[5]), 0.60)
        self.assertAlmostEqual(float(f[6]), 8.665, delta=0.006)
        self.assertEqual(f[-1], "gap")  # 8.5 lies between the levels
        self.assertNotIn(str(1 << 20), out)

if __name__ == "__main__":
    unittest.main()
