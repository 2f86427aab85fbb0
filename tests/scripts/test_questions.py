"""scripts/questions.py: docs/questions.md is what the committed results files say, and its
decisions follow the numbers. Standard library only; run from the repository root."""
import csv
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SCRIPT = os.path.join(ROOT, "scripts", "questions.py")
SIM = os.path.join(ROOT, "results", "sim", "results.csv")
DOC = os.path.join(ROOT, "docs", "questions.md")
MIB = 1 << 20


def run(*args):
    return subprocess.run([sys.executable, SCRIPT, *args], capture_output=True, text=True, cwd=ROOT)


class Questions(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp()
        self.empty = os.path.join(self.tmp, "no-leases")
        os.mkdir(self.empty)

    def tearDown(self):
        shutil.rmtree(self.tmp)

    def edited_sim(self, edit):
        """A copy of the shipped sweep's results.csv with edit(row) -> row or None applied."""
        with open(SIM, newline="") as f:
            reader = csv.DictReader(f)
            fields = reader.fieldnames
            rows = [edit(dict(r)) for r in reader]
        path = os.path.join(self.tmp, "results.csv")
        with open(path, "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=fields)
            w.writeheader()
            w.writerows(r for r in rows if r is not None)
        return path

    def test_committed_document_matches_the_committed_results(self):
        r = run("--check", DOC)
        self.assertEqual(r.returncode, 0, r.stderr)

    def test_a_number_that_moved_makes_the_document_stale(self):
        def slower_duplex(r):
            if r["scenario"] == "duplex" and int(r["size_bytes"]) == 256 * MIB:
                r["time_us"] = f"{float(r['time_us']) * 1.1:.4f}"
                r["gbps"] = f"{float(r['gbps']) / 1.1:.6g}"
            return r

        r = run("--sim", self.edited_sim(slower_duplex), "--check", DOC)
        self.assertEqual(r.returncode, 1)
        self.assertIn("stale", r.stderr)

    def test_a_row_the_document_needs_is_an_error_naming_file_and_row(self):
        sim = self.edited_sim(lambda r: None if r["scenario"] == "cpu-mapped" else r)
        out = os.path.join(self.tmp, "q.md")
        r = run("--sim", sim, "--out", out)
        self.assertEqual(r.returncode, 2)
        self.assertIn(sim, r.stderr)
        self.assertIn("cpu-mapped", r.stderr)
        self.assertFalse(os.path.exists(out), "no half-written document")

    def test_the_decision_follows_the_numbers(self):
        # Without measurements the model decides: the exchange kernel at twice, then at half its
        # speed, against the same two streams.
        def exchange_takes(factor):
            def edit(r):
                if r["scenario"] == "zero-copy" and r["direction"] == "both" and int(r["size_bytes"]) == 256 * MIB:
                    r["time_us"] = f"{float(r['time_us']) * factor:.4f}"
                    r["gbps"] = f"{float(r['gbps']) / factor:.6g}"
                return r
            return edit

        for factor, decision in ((0.5, "Use the zero-copy exchange."), (2.0, "Use two streams.")):
            r = run("--sim", self.edited_sim(exchange_takes(factor)), "--measured", f"none={self.empty}")
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertIn("**Decision.** " + decision, r.stdout)

    def test_bad_arguments_are_one_clear_error(self):
        r = run("--measured", "no-equals-sign")
        self.assertEqual(r.returncode, 2)
        self.assertIn("LABEL=DIR", r.stderr)
        r = run("--sim", os.path.join(self.tmp, "absent.csv"))
        self.assertEqual(r.returncode, 2)
        self.assertIn("absent.csv", r.stderr)


if __name__ == "__main__":
    unittest.main()
