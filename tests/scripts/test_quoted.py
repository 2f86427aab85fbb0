"""scripts/quoted.py: numbers quoted in README.md and docs/ come from the committed results files.
Standard library only; run from the repository root."""
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SCRIPT = os.path.join(ROOT, "scripts", "quoted.py")


def run(*args):
    return subprocess.run([sys.executable, SCRIPT, *args], capture_output=True, text=True, cwd=ROOT)


def gen5_pinned_h2d():
    """The shipped sweep's Gen5 x16 pinned H2D row at 64 MiB: GB/s, µs and its line."""
    with open(os.path.join(ROOT, "results/sim/results.csv")) as f:
        for line in f:
            if line.startswith("gen5-x16,pinned,h2d,1,67108864,") and ",,ok," in line:
                fields = line.split(",")
                return float(fields[6]), float(fields[5]), line.rstrip("\n")
    raise AssertionError("results/sim/results.csv has no gen5-x16 pinned h2d 64 MiB row")


class Quoted(unittest.TestCase):
    def setUp(self):
        # A checkout of its own: the committed results files the passages read, and docs to check.
        self.root = tempfile.mkdtemp()
        for rel in ("results/sim/results.csv", "results/h100-sxm/compare/compare.csv"):
            os.makedirs(os.path.dirname(os.path.join(self.root, rel)), exist_ok=True)
            shutil.copy(os.path.join(ROOT, rel), os.path.join(self.root, rel))
        os.mkdir(os.path.join(self.root, "docs"))

    def tearDown(self):
        shutil.rmtree(self.root)

    def doc(self, text, name="docs/a.md"):
        with open(os.path.join(self.root, name), "w") as f:
            f.write(text)

    def check(self):
        return run("--check", "--root", self.root)

    def test_the_committed_docs_quote_only_results(self):
        r = run("--check")
        self.assertEqual(r.returncode, 0, r.stderr)

    def test_a_number_in_no_results_file_is_named_with_its_line(self):
        # Gen5 pinned H2D at 64 MiB in the shipped sweep, and a value a little off it.
        g, t, _ = gen5_pinned_h2d()
        off = f"{g + 0.0031:.3f}"
        self.doc(f"# A\n\nPinned moves {g:.2f} GB/s.\nOr {off} GB/s.\n")
        r = self.check()
        self.assertEqual(r.returncode, 1)
        self.assertIn(f"docs/a.md:4: {off} GB/s is in no results file", r.stderr)
        self.assertNotIn("docs/a.md:3:", r.stderr)
        # Coarser printing of the same value matches it; times in ms match results' µs.
        self.doc("An error of 12.3456 %.\n")  # percentages: the pct columns (error_pct, spread_pct)
        self.assertIn("docs/a.md:1: 12.3456 % is in no results file", self.check().stderr)
        self.doc(f"About {g:.1f} GB/s, or {round(g)} GB/s; the copy takes {t / 1000:.3f} ms ({t:.2f} µs).\n")
        self.assertEqual(self.check().returncode, 0, self.check().stderr)

    def test_code_and_marked_lines_are_not_quotes(self):
        self.doc("```\n12345.6 GB/s\n```\nThe default `99.99GB/s` and `99.99 GB/s`.\n"
                 "A vendor's 77.77 GB/s. <!-- not a result: published -->\n")
        self.assertEqual(self.check().returncode, 0, self.check().stderr)

    def test_passages_are_written_from_results_and_stale_ones_fail(self):
        self.doc("Links:\n\n<!-- quoted:pcie-links -->\nold text 1.00 GB/s\n<!-- /quoted:pcie-links -->\n\nEnd.\n")
        r = self.check()
        self.assertEqual(r.returncode, 1)
        self.assertIn("docs/a.md:4: generated passage is stale", r.stderr)
        w = run("--write", "--root", self.root)
        self.assertEqual(w.returncode, 0, w.stderr)
        with open(os.path.join(self.root, "docs/a.md")) as f:
            text = f.read()
        g, _, line = gen5_pinned_h2d()
        self.assertIn(f"| Gen5 x16 | {g:.2f} GB/s |", text)
        self.assertNotIn("old text", text)
        self.assertTrue(text.endswith("<!-- /quoted:pcie-links -->\n\nEnd.\n"))
        self.assertEqual(self.check().returncode, 0, self.check().stderr)
        # A changed result makes the passage stale again.
        sim = os.path.join(self.root, "results/sim/results.csv")
        with open(sim) as f:
            fields = line.split(",")
            fields[6] = "1.000"
            rows = f.read().replace(line, ",".join(fields))
        with open(sim, "w") as f:
            f.write(rows)
        self.assertIn("generated passage is stale", self.check().stderr)

    def test_bad_markers_and_missing_results_are_errors(self):
        self.doc("<!-- quoted:pcie-links -->\nnever closed\n")
        r = self.check()
        self.assertEqual(r.returncode, 2)
        self.assertIn("docs/a.md:1: passage 'pcie-links' is not closed", r.stderr)
        self.doc("<!-- quoted:nonesuch -->\n<!-- /quoted:nonesuch -->\n")
        self.assertIn("no passage named 'nonesuch'", self.check().stderr)
        self.doc("<!-- quoted:pcie-links -->\n<!-- /quoted:pcie-links -->\n")
        os.remove(os.path.join(self.root, "results/sim/results.csv"))
        r = self.check()
        self.assertEqual(r.returncode, 2)
        self.assertIn("results/sim/results.csv: missing", r.stderr)


if __name__ == "__main__":
    unittest.main()
