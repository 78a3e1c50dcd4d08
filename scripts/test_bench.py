#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Unit tests of scripts/bench.py's statistics and report (no boot)."""

import importlib.util
import os
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
spec = importlib.util.spec_from_file_location("bench", os.path.join(HERE, "bench.py"))
bench = importlib.util.module_from_spec(spec)
spec.loader.exec_module(bench)


def samples(values, ops=1):
    return [{"rep": i + 1, "ns": v * ops, "ops": ops, "counters": {}}
            for i, v in enumerate(values)]


def result(base, other, backend=True):
    res = {"arch": "x", "reps": len(base), "modes": {}}
    for mode, vals in (("off", base), ("on", other)):
        s = {"fork_h0": samples(vals)}
        res["modes"][mode] = {"rows": {r: bench.summarise(v) for r, v in s.items()},
                              "samples": s}
    res["modes"]["nobatch"] = {"na": "no backend"} if not backend else \
        res["modes"]["on"]
    bench.analyse(res)
    return res


class MannWhitney(unittest.TestCase):
    def test_separated_samples_of_five(self):
        # Smallest two-sided p for 5 vs 5 is 2/252.
        p = bench.mann_whitney_p([1, 2, 3, 4, 5], [6, 7, 8, 9, 10])
        self.assertAlmostEqual(p, 2 / 252)

    def test_identical_samples(self):
        self.assertEqual(bench.mann_whitney_p([3, 3, 3], [3, 3, 3]), 1.0)

    def test_interleaved_samples(self):
        self.assertGreater(bench.mann_whitney_p([1, 3, 5, 7, 9], [2, 4, 6, 8, 10]), 0.5)

    def test_three_reps_cannot_be_significant(self):
        self.assertGreaterEqual(bench.mann_whitney_p([1, 2, 3], [4, 5, 6]), 0.05)


class Report(unittest.TestCase):
    def test_regression_is_marked(self):
        res = result([100, 101, 99, 100, 102], [110, 111, 109, 112, 110])
        c = res["modes"]["on"]["rows"]["fork_h0"]
        self.assertEqual(c["mark"], "R")
        self.assertAlmostEqual(c["overhead_pct"], 10.0)
        self.assertEqual(bench.cell(res, "fork_h0", "on"), "(R) +10.00%")

    def test_improvement_is_marked(self):
        res = result([110, 111, 109, 112, 110], [100, 101, 99, 100, 102])
        self.assertEqual(res["modes"]["on"]["rows"]["fork_h0"]["mark"], "I")

    def test_noise_is_not_marked(self):
        res = result([100, 104, 98, 101, 103], [101, 99, 103, 100, 104])
        self.assertEqual(res["modes"]["on"]["rows"]["fork_h0"]["mark"], "")
        self.assertNotIn("(", bench.cell(res, "fork_h0", "on"))

    def test_no_backend_column(self):
        res = result([1, 2, 3, 4, 5], [1, 2, 3, 4, 5], backend=False)
        self.assertEqual(bench.cell(res, "fork_h0", "nobatch"), "n/a: no backend")
        table = bench.arch_table("x", res)
        self.assertIn("| Benchmark | Result class |", table)
        self.assertIn("positive = slower", table)

    def test_skipped_row_is_not_applicable(self):
        res = result([1, 2, 3, 4, 5], [1, 2, 3, 4, 5])
        res["modes"]["off"]["skipped"] = {"fork_h1": "no THP in this kernel"}
        self.assertEqual(bench.cell(res, "fork_h1", "off"), "n/a: no THP in this kernel")
        self.assertIn("n/a: no THP in this kernel", bench.arch_table("x", res))

    def test_every_row_in_tables(self):
        res = result([1, 2, 3, 4, 5], [1, 2, 3, 4, 5])
        table = bench.arch_table("x", res)
        for _, _, cls in bench.ROWS:
            self.assertIn(cls, table)
        self.assertIn("missing", table)     # rows without samples say so


if __name__ == "__main__":
    unittest.main()
