#!/usr/bin/python3
"""Runs scripts/figures.py on a tiny synthetic sim/measured pair and checks its output.

Standard library only. Run: /usr/bin/python3 -m unittest tests/scripts/test_figures.py
(or /usr/bin/python3 tests/scripts/test_figures.py). Skips when no interpreter with
matplotlib is found (Debian: python3-matplotlib for /usr/bin/python3).
"""
import csv
import os
import subprocess
import sys
import tempfile
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SCRIPT = os.path.join(ROOT, "scripts", "figures.py")
COLUMNS = ["scenario", "strategy", "direction", "directions", "size_bytes", "time_us", "gbps",
           "source", "repetitions", "p10_us", "p90_us", "min_us", "max_us", "variant", "status",
           "note", "calibration"]
MIB = 1 << 20


def python_with_matplotlib():
    for exe in (sys.executable, "/usr/bin/python3"):
        if exe and os.path.exists(exe):
            ok = subprocess.run([exe, "-c", "import matplotlib, numpy"],
                                capture_output=True).returncode == 0
            if ok:
                return exe
    return None


def row(scenario, strategy, direction, size, time_us, source, variant="", spread=0.0,
        note="", status="ok", directions=None, maximum=None):
    d = directions or (2 if direction == "both" else 1)
    return {"scenario": scenario, "strategy": strategy, "direction": direction, "directions": d,
            "size_bytes": size, "time_us": f"{time_us:.4f}",
            "gbps": f"{size * d / time_us / 1e3:.4f}", "source": source,
            "repetitions": 1 if source == "sim" else 10,
            "p10_us": f"{time_us * (1 - spread):.4f}", "p90_us": f"{time_us * (1 + spread):.4f}",
            "min_us": f"{time_us * (1 - spread):.4f}",
            "max_us": f"{(maximum or time_us * (1 + 2 * spread)):.4f}",
            "variant": variant, "status": status, "note": note,
            "calibration": "test-cal" if source == "sim" else ""}


def rows_for(source, slow=1.0, spread=0.0):
    """A small but complete set of rows; slow scales hw times."""
    s = slow
    out = []
    for size in (4096, MIB, 64 * MIB):
        for d, rate in (("h2d", 50.0), ("d2h", 55.0)):
            out.append(row("pinned", "pinned", d, size, 5 + size / rate / 1e3 * s, source,
                           spread=spread))
            out.append(row("pageable", "pageable", d, size, 6 + size / 25.0 / 1e3 * s, source,
                           spread=spread))
        out.append(row("duplex", "duplex", "both", size, 8 + size / 50.0 / 1e3 * s, source,
                       spread=spread))
    for blocks, t in ((1, 9000.0), (4, 2300.0), (16, 1300.0)):
        out.append(row(f"zero-copy-blocks{blocks}", "zero_copy", "h2d", 64 * MIB, t * s, source))
    out.append(row("zero-copy", "zero_copy", "h2d", 256 * MIB, 5200.0 * s, source))
    for stride, t in ((2, 2600.0), (8, 10000.0), (32, 40000.0)):
        out.append(row(f"zero-copy-stride{stride}", "zero_copy", "h2d", 64 * MIB, t * s, source))
    out.append(row("zero-copy-stride1-4B", "zero_copy", "h2d", 64 * MIB, 1300.0 * s, source))
    for name, n, t in (("async-overlap-s1", 1, 14600.0), ("async-overlap-s2", 2, 9800.0),
                       ("async-overlap", 4, 7400.0)):
        out.append(row(name, "async_overlap", "both", 256 * MIB, t * s, source,
                       note=f"{n} streams, H2D -> kernel -> D2H per chunk", spread=spread))
        out.append(row(name, "async_overlap", "both", 256 * MIB, 14600.0 * s, source,
                       variant="serial"))
        if source == "hw":
            out.append(row(name, "async_overlap", "both", 256 * MIB, 5000.0, source,
                           variant="kernel"))
    for size in (MIB, 16 * MIB):
        for d in ("h2d", "both"):
            if source == "sim":
                out.append(row("peer", "peer", d, size, 8 + size / 400e3 * s, source,
                               variant="peer=on", note="peer access enabled"))
                out.append(row("peer", "peer", d, size, 40 + size / 45e3 * s, source,
                               variant="peer=off", note="peer access disabled"))
            else:  # the harness leaves the variant empty and says it in the note
                out.append(row("peer", "peer", d, size, 8 + size / 350e3 * s, source,
                               note="GPU 0 -> GPU 1, peer access enabled", spread=spread))
                out.append(row("peer", "peer", d, size, 40 + size / 38e3 * s, source,
                               note="GPU 0 -> GPU 1, peer access disabled (staged through host)"))
    for name, dl in (("radar-8ms", 8000.0), ("radar-what-if", 1000.0)):
        if name == "radar-what-if" and source == "hw":
            continue
        p50 = 85.0 * s
        note = (f"misses=0 frames=500 deadline_us={dl:g}" if source == "hw"
                else "0 of 500 frames missed the deadline")
        out.append(row(name, "periodic", "h2d", 4 * MIB, p50, source, spread=0.1,
                       maximum=p50 * 3, note="via pinned, latency p50"))
        out.append(row(name, "periodic", "h2d", 4 * MIB, p50 * 1.5, source, variant="p99",
                       maximum=p50 * 3))
        out.append(row(name, "periodic", "h2d", 4 * MIB, dl, source, variant="misses", note=note))
    if source == "sim":
        for g, t in ((3, 5000.0), (4, 2500.0), (5, 1250.0)):
            for strat in ("pinned", "pageable", "zero_copy"):
                for d in ("h2d", "d2h"):
                    out.append(row(f"gen{g}-x16", strat, d, 64 * MIB, t, source))
            for v in ("peer=on", "peer=off"):
                for d in ("h2d", "both"):
                    out.append(row(f"peer-switch-gen{g}", "peer", d, 256 * MIB, t * 4, source,
                                   variant=v))
    out.append(row("cpu-mapped", "cpu_mapped", "h2d", 4096, 0.0001, source, status="skipped"))
    return out


def write_csv(path, rows):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=COLUMNS)
        w.writeheader()
        w.writerows(rows)


EXPECTED = ["throughput_vs_size", "zero_copy", "stream_overlap", "duplex", "peer",
            "frame_latency", "whatif_links", "whatif_radar"]


class FiguresTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.python = python_with_matplotlib()
        if cls.python is None:
            raise unittest.SkipTest("no python3 with matplotlib (Debian: python3-matplotlib)")

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.dir = self.tmp.name
        self.sim = os.path.join(self.dir, "sim", "results.csv")
        write_csv(self.sim, rows_for("sim"))
        self.machine = os.path.join(self.dir, "gpu-a", "measured")
        write_csv(os.path.join(self.machine, "run1", "measured.csv"), rows_for("hw", 1.2, 0.05))
        write_csv(os.path.join(self.machine, "run2", "measured.csv"), rows_for("hw", 1.3, 0.1))

    def tearDown(self):
        self.tmp.cleanup()

    def run_script(self, *args):
        return subprocess.run([self.python, SCRIPT, *args], capture_output=True, text=True,
                              cwd=self.dir, timeout=300)

    def test_all_figures_written(self):
        out = os.path.join(self.dir, "figs")
        p = self.run_script("--sim", self.sim, "--measured", self.machine, "--out", out)
        self.assertEqual(p.returncode, 0, p.stderr)
        for name in EXPECTED:
            for ext in ("pdf", "png"):
                path = os.path.join(out, f"{name}.{ext}")
                self.assertTrue(os.path.isfile(path), f"{path} missing; stderr:\n{p.stderr}")
                self.assertGreater(os.path.getsize(path), 1000)
                self.assertIn(f"{name}.{ext}", p.stdout)
        with open(os.path.join(out, "peer.png"), "rb") as f:
            self.assertEqual(f.read(8), b"\x89PNG\r\n\x1a\n")
        with open(os.path.join(out, "peer.pdf"), "rb") as f:
            data = f.read()
        self.assertTrue(data.startswith(b"%PDF"))
        self.assertNotIn(b"CreationDate", data)

    def test_captions_say_which_data_and_code(self):
        # A lease's metadata names the GPU and its link; machine.txt the driver.
        import json
        with open(os.path.join(self.machine, "run1", "metadata.json"), "w") as f:
            json.dump({"gpu": {"name": "NVIDIA H100 80GB HBM3", "pcie": {"gen_current": 5, "width_current": 16}},
                       "cuda": {"driver_version": "13.0"}, "commit": "abc1234"}, f)
        with open(os.path.join(self.machine, "machine.txt"), "w") as f:
            f.write("| NVIDIA-SMI 580.1  Driver Version: 580.159.04   CUDA Version: 13.0 |\n")
        with open(os.path.join(self.dir, "sim", "meta.json"), "w") as f:
            json.dump({"commit": "0123456789ab"}, f)
        out = os.path.join(self.dir, "figs")
        p = self.run_script("--sim", self.sim, "--measured", self.machine, "--out", out,
                            "--only", "duplex", "whatif_radar")
        self.assertEqual(p.returncode, 0, p.stderr)
        with open(os.path.join(out, "duplex.txt")) as f:
            text = f.read()
        for want in ("dmasim at 0123456789ab", "calibration test-cal",
                     "NVIDIA H100 80GB HBM3, driver 580.159.04 (CUDA 13.0), PCIe Gen5 x16", "dmaprobe at abc1234",
                     "the lowest 10th to the highest 90th percentile", "colour = direction"):
            self.assertIn(want, text)
        with open(os.path.join(out, "whatif_radar.txt")) as f:
            self.assertIn("Measured: none in this figure.", f.read())  # model only
        with open(os.path.join(out, "duplex.png"), "rb") as f:
            png = f.read()
        # The caption as the PNG's Description (an iTXt chunk: it is UTF-8).
        self.assertTrue(b"Description\x00" in png and "dmasim at 0123456789ab".encode() in png)
        self.assertIn("duplex.txt", p.stdout)

    def test_deterministic(self):
        outs = []
        for i in range(2):
            out = os.path.join(self.dir, f"figs{i}")
            p = self.run_script("--sim", self.sim, "--measured", self.machine, "--out", out,
                                "--only", "duplex", "frame_latency")
            self.assertEqual(p.returncode, 0, p.stderr)
            outs.append(out)
        for name in ("duplex.pdf", "duplex.png", "frame_latency.pdf", "frame_latency.png"):
            with open(os.path.join(outs[0], name), "rb") as a, \
                    open(os.path.join(outs[1], name), "rb") as b:
                self.assertEqual(a.read(), b.read(), name)

    def test_missing_data_skips(self):
        only_pinned = [r for r in rows_for("sim") if r["scenario"] == "pinned"]
        write_csv(self.sim, only_pinned)
        out = os.path.join(self.dir, "figs")
        p = self.run_script("--sim", self.sim, "--measured", "--out", out)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertTrue(os.path.isfile(os.path.join(out, "throughput_vs_size.pdf")))
        self.assertFalse(os.path.exists(os.path.join(out, "peer.pdf")))
        self.assertIn("skipped peer", p.stderr)
        self.assertIn("skipped stream_overlap", p.stderr)

    def test_machine_folder_of_leases(self):
        # A machine folder as the multi-lease method writes it: one folder per lease, each with
        # its own measured.csv or run<N>/ folders.
        machine = os.path.join(self.dir, "gpu-b", "measured")
        write_csv(os.path.join(machine, "2026-01-01-legacy", "run1", "measured.csv"),
                  rows_for("hw", 1.2, 0.05))
        write_csv(os.path.join(machine, "2026-01-01-legacy", "run2", "measured.csv"),
                  rows_for("hw", 1.3, 0.1))
        write_csv(os.path.join(machine, "2026-02-01-a", "measured.csv"), rows_for("hw", 1.25, 0.05))
        out = os.path.join(self.dir, "figs")
        p = self.run_script("--sim", self.sim, "--measured", f"B={machine}", "--out", out,
                            "--only", "throughput_vs_size", "stream_overlap", "frame_latency")
        self.assertEqual(p.returncode, 0, p.stderr)
        for name in ("throughput_vs_size", "stream_overlap", "frame_latency"):
            self.assertTrue(os.path.isfile(os.path.join(out, f"{name}.pdf")), p.stderr)
        self.assertNotIn("no measured.csv", p.stderr)

    def test_missing_sim_file(self):
        p = self.run_script("--sim", os.path.join(self.dir, "nope.csv"), "--measured",
                            "--out", os.path.join(self.dir, "figs"))
        self.assertEqual(p.returncode, 2)
        self.assertIn("no such file", p.stderr)


class VisualCodeTest(unittest.TestCase):
    """Every figure keeps the one visual code (docs/figures.md#visual-code): data in a direction
    colour, references black; model lines carry no marker; measured markers are a machine's."""

    @classmethod
    def setUpClass(cls):
        try:
            import matplotlib  # noqa: F401
        except ImportError:
            raise unittest.SkipTest("needs matplotlib in this interpreter (Debian: python3-matplotlib)")
        import importlib.util
        spec = importlib.util.spec_from_file_location("figures", SCRIPT)
        cls.fig = importlib.util.module_from_spec(spec)
        sys.path.insert(0, os.path.join(ROOT, "scripts"))
        try:
            spec.loader.exec_module(cls.fig)
        finally:
            sys.path.pop(0)

    def test_colours_and_markers_mean_one_thing(self):
        from matplotlib.colors import to_hex
        f = self.fig
        with tempfile.TemporaryDirectory() as d:
            sim_csv = os.path.join(d, "sim", "results.csv")
            write_csv(sim_csv, rows_for("sim"))
            machines = []
            for name, slow in (("a", 1.2), ("b", 1.3)):
                m = os.path.join(d, name, "measured")
                write_csv(os.path.join(m, "run1", "measured.csv"), rows_for("hw", slow, 0.05))
                machines.append(m)
            sim = f.Source("model", [f.load_rows(sim_csv)], "sim")
            meas = f.load_measured(machines)
            drawn = {}
            f.save = lambda fig, out, name: drawn.setdefault(name, fig) and []
            for name, func in f.FIGURES:
                func(sim, meas, d)
        self.assertEqual(set(drawn), {n for n, _ in f.FIGURES})
        data = {c.lower() for c in f.DIRECTION_COLOURS.values()}
        machine_markers = set(f.MACHINE_MARKERS[:len(meas)])
        glyphs = {"|", "D", "x", "_"}  # latency percentiles and the model's single-value bar
        for name, fig in drawn.items():
            for ax in fig.axes:
                for line in ax.get_lines():
                    colour = to_hex(line.get_color())
                    self.assertIn(colour, data | {f.BLACK.lower()}, f"{name}: a line in {colour}")
                    marker = line.get_marker()
                    has_line = line.get_linestyle() not in ("None", "", " ") and len(line.get_xdata()) > 1
                    if has_line and colour in data:
                        self.assertIn(marker, ("None", "", None), f"{name}: a model line with marker {marker}")
                    if marker not in ("None", "", None):
                        self.assertIn(marker, machine_markers | glyphs, f"{name}: marker {marker}")
                        if marker in machine_markers:
                            self.assertIn(colour, data, f"{name}: a measurement in {colour}, not a direction's")


class LeasesTest(unittest.TestCase):
    """scripts/leases.py: the cross-lease median the scripts share (standard library only)."""

    def test_cross_lease_median_and_spread(self):
        sys.path.insert(0, os.path.join(ROOT, "scripts"))
        try:
            import leases
        finally:
            sys.path.pop(0)
        with tempfile.TemporaryDirectory() as d:
            m = os.path.join(d, "measured")
            x = lambda t: row("x", "pinned", "h2d", MIB, t, "hw")  # noqa: E731
            write_csv(os.path.join(m, "a", "run1", "measured.csv"), [x(100.0)])
            write_csv(os.path.join(m, "a", "run2", "measured.csv"), [x(110.0)])
            write_csv(os.path.join(m, "b", "measured.csv"), [x(98.0)])
            write_csv(os.path.join(m, "c", "run1", "measured.csv"),
                      [x(120.0), row("z", "peer", "h2d", MIB, 1.0, "hw", status="skipped")])
            os.makedirs(os.path.join(m, "notes"))
            found = leases.find_leases(m)
            self.assertEqual([name for name, _, _ in found], ["a", "b", "c"])
            self.assertEqual(len(found[0][2]), 2)
            rows = leases.cross_lease(m)
            self.assertEqual(list(rows), [("x", "pinned", "h2d", MIB, "")])
            r = rows[("x", "pinned", "h2d", MIB, "")]
            self.assertAlmostEqual(float(r["time_us"]), 105.0)  # median(median(100, 110), 98, 120)
            self.assertEqual(r["leases"], 3)
            self.assertAlmostEqual(r["spread_pct"], (120 / 98 - 1) * 100)
            # One lease folder, and one CSV, are one lease each.
            self.assertEqual(len(leases.find_leases(os.path.join(m, "a"))), 1)
            one = leases.cross_lease(os.path.join(m, "b", "measured.csv"))
            self.assertAlmostEqual(float(one[("x", "pinned", "h2d", MIB, "")]["time_us"]), 98.0)


if __name__ == "__main__":
    unittest.main()
