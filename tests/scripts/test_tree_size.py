"""The tracked working tree stays small enough to travel to a GPU machine: the device tool copies
tracked and untracked files there, at most 64 MiB in all, and a session adds untracked leases and
build inputs of its own. Raw isolating data past a few hundred kB a lease is kept gzipped
(results/h100-sxm/isolating/d2h-landing) for this."""
import os
import subprocess
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
# The device tool's limit less room for what a session writes before it commits (leases, plans).
BUDGET = 58 << 20


def tracked_sizes(root):
    """(size, path) of every tracked file present in the working tree; None outside a git checkout."""
    try:
        out = subprocess.run(["git", "-C", root, "ls-files", "-z"], check=True, capture_output=True).stdout
    except (OSError, subprocess.CalledProcessError):
        return None
    sizes = []
    for name in out.decode().split("\0"):
        path = os.path.join(root, name)
        if name and os.path.isfile(path):
            sizes.append((os.path.getsize(path), name))
    return sizes


def over_budget(sizes, budget):
    """A message naming the largest files when the total is over `budget` bytes, else None."""
    total = sum(s for s, _ in sizes)
    if total <= budget:
        return None
    largest = ", ".join(f"{n} ({s / 2**20:.2f} MiB)" for s, n in sorted(sizes, reverse=True)[:8])
    return (f"tracked files {total / 2**20:.1f} MiB, over {budget / 2**20:.0f} MiB (the device tool sends at most "
            f"64 MiB of working tree): gzip large raw data; the largest: {largest}")


class TreeSize(unittest.TestCase):
    def test_the_tracked_tree_fits_the_device_transfer(self):
        sizes = tracked_sizes(ROOT)
        if sizes is None:
            self.skipTest("not a git checkout: nothing to measure")
        self.assertIsNone(over_budget(sizes, BUDGET))

    def test_a_tree_over_the_budget_is_reported_with_its_largest_files(self):
        msg = over_budget([(40 << 20, "a.csv"), (20 << 20, "b.csv"), (1 << 10, "c.txt")], BUDGET)
        self.assertIsNotNone(msg)
        self.assertIn("a.csv (40.00 MiB)", msg)
        self.assertIsNone(over_budget([(1 << 20, "a.csv")], BUDGET))


if __name__ == "__main__":
    unittest.main()
