"""scripts/accuracy.py: the accuracy measures from a compare.csv, on a small synthetic one.
Standard library only; run from the repository root."""
import csv
import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SCRIPT = os.path.join(ROOT, "scripts", "accuracy.py")
FIELDS = ["scenario", "strategy", "direction", "size_bytes", "variant", "measured_us", "predicted_us", "error_pct",
          "spread_pct"]
MIB = 1 << 20


def row(scenario, strategy, direction, size, variant, measured, predicted, spread):
    return {"scenario": scenario, "strategy": strategy, "direction": direction, "size_bytes": str(size),
            "variant": variant, "measured_us": str(measured), "predicted_us": str(predicted),
            "error_pct": f"{100 * (predicted / measured - 1):.2f}", "spread_pct": str(spread)}


class Accuracy(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp()

    def tearDown(self):
        shutil.rmtree(self.tmp)

    def write(self, rows, fields=FIELDS):
        path = os.path.join(self.tmp, "compare.csv")
        with open(path, "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=fields, extrasaction="ignore")
            w.writeheader()
            w.writerows(rows)
        return path

    def run_script(self, *args):
        return subprocess.run([sys.executable, SCRIPT, *args], capture_output=True, text=True, cwd=ROOT)

    def test_steady_rows_zero_copy_and_duplex_ratio(self):
        path = self.write([
            row("pinned", "pinned", "h2d", 64 * MIB, "", 1000.0, 1010.0, 1.0),      # +1 %, steady
            row("pinned", "pinned", "d2h", 64 * MIB, "", 1000.0, 970.0, 2.0),       # -3 %, steady
            row("pageable", "pageable", "h2d", 64 * MIB, "", 1000.0, 1500.0, 40.0),  # +50 %, not steady
            row("latency", "pinned", "h2d", 4096, "", 10.0, 20.0, 1.0),             # small: left out
            row("pinned", "pinned", "h2d", 64 * MIB, "setup=mallochost", 10.0, 30.0, 1.0),  # setup: left out
            row("zero-copy", "zero_copy", "h2d", 16 * MIB, "", 300.0, 330.0, 9.0),  # +10 %
            row("duplex", "duplex", "both", 64 * MIB, "", 1250.0, 1100.0, 3.0),
        ])
        r = self.run_script(path)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("spread <= 5 %: 3 rows, median 3.00 %, worst 12.00 % (duplex both 67108864, spread 3.0 %)",
                      r.stdout)
        self.assertIn("zero-copy: 1 rows, median 10.00 %, worst 10.00 %", r.stdout)
        # aggregate over one way: measured 2 x 1000 / 1250 = 1.6, model 2 x 1010 / 1100 = 1.836
        self.assertIn("duplex 64 MiB: over h2d measured 1.600 model 1.836 (+14.77 %)", r.stdout)
        self.assertIn("over d2h measured 1.600 model 1.764 (+10.23 %)", r.stdout)
        # A tighter spread leaves out the rows that spread more.
        r = self.run_script(path, "--spread", "1.5")
        self.assertIn("spread <= 1.5 %: 1 rows, median 1.00 %", r.stdout)

    def test_spread_from_the_training_leases_picks_the_rows(self):
        # Held-out machines agree on the pageable row by chance and disagree on the d2h one; the
        # training machines' spread says which rows machines agree on.
        held = self.write([
            row("pinned", "pinned", "h2d", 64 * MIB, "", 1000.0, 1010.0, 1.0),
            row("pinned", "pinned", "d2h", 64 * MIB, "", 1000.0, 970.0, 9.0),
            row("pageable", "pageable", "h2d", 64 * MIB, "", 1000.0, 1500.0, 2.0),
        ])
        train = os.path.join(self.tmp, "train.csv")
        os.rename(held, train)
        with open(train) as f:
            text = f.read()
        # The training comparison: the same rows, spreads swapped for d2h and pageable.
        text = text.replace(",9.0", ",X").replace(",2.0", ",9.0").replace(",X", ",2.0")
        with open(train, "w") as f:
            f.write(text)
        held = self.write([
            row("pinned", "pinned", "h2d", 64 * MIB, "", 1000.0, 1010.0, 1.0),
            row("pinned", "pinned", "d2h", 64 * MIB, "", 1000.0, 970.0, 9.0),
            row("pageable", "pageable", "h2d", 64 * MIB, "", 1000.0, 1500.0, 2.0),
        ])
        r = self.run_script(held)
        self.assertIn("spread <= 5 %: 2 rows, median 25.50 %, worst 50.00 %", r.stdout)
        r = self.run_script(held, "--spread-from", train)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("train.csv's leases: 2 rows, median 2.00 %, worst 3.00 % (pinned d2h 67108864, spread 2.0 %)", r.stdout)

    def test_peer_rows_carry_the_interval_of_their_leases_median(self):
        # Five leases in two groups: the median is known only to lie between them.
        measured = os.path.join(self.tmp, "measured")
        names = []
        for i, t in enumerate([10.0, 10.0, 10.0, 14.0, 14.0]):
            name = f"lease{i}"
            names.append(name)
            os.makedirs(os.path.join(measured, name))
            with open(os.path.join(measured, name, "measured.csv"), "w", newline="") as f:
                w = csv.DictWriter(f, fieldnames=["scenario", "direction", "size_bytes", "variant", "time_us", "status"])
                w.writeheader()
                w.writerow({"scenario": "peer", "direction": "both", "size_bytes": str(MIB), "variant": "peer=on",
                            "time_us": str(t), "status": "ok"})
        path = self.write([row("peer", "peer", "both", MIB, "peer=on", 10.0, 12.0, 40.0)])
        with open(os.path.join(self.tmp, "meta.json"), "w") as f:
            f.write('{"measured": "%s", "lease_names": [%s]}' % (measured, ", ".join(f'"{n}"' for n in names)))
        r = self.run_script(path)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("peer peer both 1048576 peer=on: +20.00 % (spread 40.0 %, 95 % 10.00-14.00 us over 5 leases "
                      "(+0.0/+40.0 %), model inside)", r.stdout)

    def leases(self, times_by_row):
        """A measured folder of one lease per entry of each row's list, and the meta.json beside
        compare.csv that names it; times_by_row: {(scenario, direction, size, variant): [us, ...]}."""
        measured = os.path.join(self.tmp, "measured")
        count = len(next(iter(times_by_row.values())))
        names = [f"lease{i}" for i in range(count)]
        for i, name in enumerate(names):
            os.makedirs(os.path.join(measured, name))
            with open(os.path.join(measured, name, "measured.csv"), "w", newline="") as f:
                w = csv.DictWriter(f, fieldnames=["scenario", "direction", "size_bytes", "variant", "time_us", "status"])
                w.writeheader()
                for (scenario, direction, size, variant), times in times_by_row.items():
                    w.writerow({"scenario": scenario, "direction": direction, "size_bytes": str(size),
                                "variant": variant, "time_us": str(times[i]), "status": "ok"})
        with open(os.path.join(self.tmp, "meta.json"), "w") as f:
            f.write('{"measured": "%s", "lease_names": [%s]}' % (measured, ", ".join(f'"{n}"' for n in names)))

    def test_halves_of_the_leases_say_how_well_machines_reproduce_a_median(self):
        # Eight leases that agree: any two halves give the same median and ratio.
        self.leases({("peer", "both", MIB, "peer=on"): [10.0] * 8,
                     ("duplex", "both", 4096, ""): [14.0] * 8,
                     ("pinned", "h2d", 4096, ""): [8.0] * 8})
        path = self.write([row("peer", "peer", "both", MIB, "peer=on", 10.0, 12.0, 0.0),
                           row("duplex", "duplex", "both", 4096, "", 14.0, 14.0, 0.0),
                           row("pinned", "pinned", "h2d", 4096, "", 8.0, 8.0, 0.0)])
        r = self.run_script(path)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("model outside; two halves of the leases 0.0 % apart (90 %: 0.0 %))", r.stdout)
        self.assertIn("over h2d measured 1.143 model 1.143 (+0.00 %, 95 % 1.143-1.143 over 8 leases (+0.0/+0.0 %), "
                      "model inside; two halves of the leases 0.0 % apart (90 %: 0.0 %))", r.stdout)
        # The same machines on two levels of the host, 7 and 9 us a blocking copy, half on each: a
        # half's median lands on either, and two halves are often apart by up to 2 x 9 / 7 - 1.
        shutil.rmtree(os.path.join(self.tmp, "measured"))
        self.leases({("peer", "both", MIB, "peer=on"): [10.0] * 8,
                     ("duplex", "both", 4096, ""): [14.0] * 8,
                     ("pinned", "h2d", 4096, ""): [7.0, 9.0] * 4})
        r = self.run_script(path)
        self.assertEqual(r.returncode, 0, r.stderr)
        gap = re.search(r"over h2d .*?two halves of the leases ([\d.]+) % apart \(90 %: ([\d.]+) %\)", r.stdout)
        self.assertIsNotNone(gap, r.stdout)
        self.assertGreater(float(gap.group(1)), 0.0)
        self.assertAlmostEqual(float(gap.group(2)), 100 * (9 / 7 - 1), places=1)

    def test_refuses_what_is_not_a_compare_csv(self):
        path = self.write([{"scenario": "x"}], fields=["scenario", "time_us"])
        r = self.run_script(path)
        self.assertNotEqual(r.returncode, 0)
        self.assertIn("not a compare.csv", r.stderr)
        r = self.run_script(os.path.join(self.tmp, "missing.csv"))
        self.assertNotEqual(r.returncode, 0)
        self.assertIn("missing.csv", r.stderr)


if __name__ == "__main__":
    unittest.main()
