#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Unit tests of overlay-tools/bench.py's statistics and report (no boot)."""

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
        # The spread: fastest and slowest sample against the baseline median.
        self.assertEqual(bench.cell(res, "fork_h0", "on"), "(R) +10.00% [+9.00, +12.00]")

    def test_tiny_significant_difference_is_not_marked(self):
        # Nearly deterministic samples (icount): p < 0.05, but +0.01%.
        base = [100000, 100000, 100001, 100000, 100000]
        other = [100010, 100011, 100010, 100010, 100011]
        res = result(base, other)
        c = res["modes"]["on"]["rows"]["fork_h0"]
        self.assertLess(c["p"], 0.05)
        self.assertLess(abs(c["overhead_pct"]), bench.FLOOR_PCT)
        self.assertEqual(c["mark"], "")

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


class NoKpkeysBaseline(unittest.TestCase):
    def test_syscall_rows_against_the_kernel_without_kpkeys(self):
        res = result([100] * 5, [100] * 5)
        for mode in ("off", "on"):
            s = {"null_syscall": samples([105, 105, 105, 106, 105])}
            res["modes"][mode]["rows"].update({r: bench.summarise(v) for r, v in s.items()})
            res["modes"][mode]["samples"].update(s)
        s = {"null_syscall": samples([100] * 5), "fork_h0": samples([95] * 5)}
        res["nokpkeys"] = {"rows": {r: bench.summarise(v) for r, v in s.items()}, "samples": s}
        bench.analyse(res)
        c = res["modes"]["on"]["rows"]["null_syscall"]
        self.assertEqual(c["vs"], "nokpkeys")
        self.assertAlmostEqual(c["overhead_pct"], 5.0)
        self.assertTrue(bench.cell(res, "null_syscall", "on").endswith(" *"))
        # Other rows stay against off; the off column is against no kpkeys.
        self.assertEqual(res["modes"]["on"]["rows"]["fork_h0"]["vs"], "off")
        self.assertAlmostEqual(res["off_vs_nokpkeys"]["fork_h0"]["overhead_pct"],
                               100 / 95 * 100 - 100)


class SmpRows(unittest.TestCase):
    def test_smp_rows_boot_apart_with_two_vcpus_by_wall_clock(self):
        calls = []

        def fake_boot(rq, arch, out, mode, reps, quick, timeout, logdir, cpu,
                      rows, tag="", smp=1, extra="", progress=None):
            calls.append((tuple(rows), smp))
            return {"samples": {r: samples([100] * reps) for r in rows},
                    "errors": {}, "skipped": {}, "problems": [], "start": {},
                    "wall_s": 1, "log": "x", "mode_line": "", "cmdline": "",
                    "software_only": None}

        class Args:
            quick = False
        saved, bench.boot = bench.boot, fake_boot
        try:
            problems = []
            pooled, _, boots, _ = bench.run_boots(
                None, "x86_64", "o", "on", 2, 4, Args(), 1, "/tmp",
                ["fork_h0", "fork_smp2", "vmalloc_fix_p64_smp2"], problems,
                "nokpkeys")
        finally:
            bench.boot = saved
        self.assertEqual(problems, [])
        self.assertEqual(sorted(set(calls)), [
            (("fork_h0",), 1), (("fork_smp2", "vmalloc_fix_p64_smp2"), 2)])
        self.assertEqual(len(calls), 4)             # 2 boots of each kind
        self.assertEqual(sorted(b["smp"] for b in boots), [1, 1, 2, 2])
        self.assertEqual(sorted({s["boot"] for s in pooled["fork_smp2"]}), [1, 2])

    def test_smp_rows_are_marked_only_from_the_larger_floor(self):
        res = result([100] * 5, [100] * 5)
        for mode, v in (("off", 100), ("on", 103)):
            s = {"fork_smp2": samples([v, v + 0.1, v, v - 0.1, v])}
            res["modes"][mode]["rows"].update({r: bench.summarise(x) for r, x in s.items()})
        bench.analyse(res)
        c = res["modes"]["on"]["rows"]["fork_smp2"]
        self.assertLess(c["p"], 0.05)
        self.assertAlmostEqual(c["overhead_pct"], 3.0)
        self.assertEqual(c["mark"], "")             # +3% < 5%: noise by wall clock
        for mode, v in (("off", 100), ("on", 110)):
            s = {"fork_smp2": samples([v, v + 0.1, v, v - 0.1, v])}
            res["modes"][mode]["rows"].update({r: bench.summarise(x) for r, x in s.items()})
        bench.analyse(res)
        self.assertEqual(res["modes"]["on"]["rows"]["fork_smp2"]["mark"], "R")


class ConsoleRecords(unittest.TestCase):
    def test_result_records_parse(self):
        s = bench.parse_result("fork_h0 2 ns=1000 ops=2 thp_kb=0 reg_writes=4")
        self.assertEqual((s["row"], s["rep"], s["ns"], s["ops"], s["thp_kb"]),
                         ("fork_h0", 2, 1000, 2, 0))
        self.assertEqual(s["counters"], {"reg_writes": 4})

    def test_garbled_result_records_are_left_out(self):
        # A kernel message written into the line (two vCPUs share a console).
        self.assertIsNone(bench.parse_result("[    1.709781] clocksource: tsc: mask"))
        self.assertIsNone(bench.parse_result("fork_h0 1 ns=12"))
        self.assertIsNone(bench.parse_result("fork_h0 1 ns=12 ops=0"))

    def test_split_result_line_is_put_back_together(self):
        rq = bench.load_run_qemu()
        lines = ["[    1.673282] All test took worker1=46277018 cycles",
                 "# kpkeys-bench: result [    1.709781] clocksource: tsc: mask",
                 "vmalloc_fix_p64_smp2 4 ns=16500000 ops=500"]
        out, joined = rq.reassemble(lines)
        self.assertEqual(joined, 1)
        rec = [l for l in out if "kpkeys-bench: result" in l]
        m = bench.LINE_RE.search(rec[0])
        s = bench.parse_result(m.group(2))
        self.assertEqual((s["row"], s["rep"], s["ns"]), ("vmalloc_fix_p64_smp2", 4, 16500000))


class Counters(unittest.TestCase):
    def counting(self, mode, row, **c):
        base = {k: 0.0 for k in bench.COUNTERS}
        base.update(c)
        return {mode: {"rows": {row: base}}}

    def test_clean_counters_pass(self):
        c = {}
        c.update(self.counting("off", "fork_h0"))
        c.update(self.counting("nobatch", "fork_h0", pgtables_switches=10, reg_writes=20))
        c.update(self.counting("on", "fork_h0", pgtables_switches=2,
                               pgtables_switches_skipped=8, lazy_mmu_sections=2))
        self.assertEqual(bench.counter_problems(c), [])

    def test_switch_when_off_fails(self):
        p = bench.counter_problems(self.counting("off", "fork_h0", reg_writes_entry=0.5))
        self.assertEqual(len(p), 1)
        self.assertIn("reg_writes_entry", p[0])

    def test_section_without_batching_fails(self):
        p = bench.counter_problems(self.counting("nobatch", "munmap_h0",
                                                 lazy_mmu_sections=3))
        self.assertEqual(len(p), 1)

    def test_nested_guards_without_batching_pass(self):
        p = bench.counter_problems(self.counting("nobatch", "munmap_h0",
                                                 pgtables_switches_skipped=3))
        self.assertEqual(p, [])

    def test_batching_that_skips_no_more_than_nesting_fails(self):
        c = {}
        c.update(self.counting("nobatch", "fork_h0", pgtables_switches_skipped=8))
        c.update(self.counting("on", "fork_h0", pgtables_switches_skipped=8,
                               lazy_mmu_sections=2))
        p = bench.counter_problems(c)
        self.assertEqual(len(p), 1)
        self.assertIn("skipped by batching", p[0])

    def test_no_skip_with_batching_fails(self):
        p = bench.counter_problems(self.counting("on", "fork_h1", pgtables_switches=5))
        self.assertEqual(len(p), 1)
        self.assertIn("fork_h1", p[0])

    def test_munmap_h1_may_skip_nothing_but_must_not_add_switches(self):
        # One guard per THP batch, one batch per lazy MMU section: the
        # section's first (only) write switches, nothing is skipped.
        c = self.counting("nobatch", "munmap_h1", pgtables_switches=64)
        c.update(self.counting("on", "munmap_h1", pgtables_switches=65,
                               lazy_mmu_sections=32))
        self.assertEqual(bench.counter_problems(c), [])
        c["on"]["rows"]["munmap_h1"]["pgtables_switches"] = 96
        p = bench.counter_problems(c)
        self.assertEqual(len(p), 1)
        self.assertIn("munmap_h1", p[0])

    def test_huge_vmalloc_must_map_pmds(self):
        c = self.counting("nobatch", "vmalloc_fix_p512_h0", pgtables_switches=1030)
        c["nobatch"]["rows"]["vmalloc_fix_p512_h1"] = dict(
            c["nobatch"]["rows"]["vmalloc_fix_p512_h0"], pgtables_switches=1030)
        p = bench.counter_problems(c, "x86_64")
        self.assertEqual(len(p), 1)
        self.assertIn("not huge mapped", p[0])
        # powerpc hash maps no huge vmalloc: nothing is expected of it.
        self.assertEqual(bench.counter_problems(c, "powerpc"), [])
        c["nobatch"]["rows"]["vmalloc_fix_p512_h1"]["pgtables_switches"] = 6
        self.assertEqual(bench.counter_problems(c, "x86_64"), [])

    def test_mode_reported_must_be_mode_requested(self):
        self.assertIsNone(bench.mode_problem(
            "on", "kpkeys: hardened page tables: on (page-table writes batched in "
            "lazy MMU sections), page-table pkey 1"))
        self.assertIsNone(bench.mode_problem(
            "off", "kpkeys: hardened page tables: off (disabled on the command line: "
            "kpkeys_hardened_pgtables=off)"))
        self.assertIsNotNone(bench.mode_problem(
            "nobatch", "kpkeys: hardened page tables: on (page-table writes "
            "batched in lazy MMU sections), page-table pkey 1"))
        self.assertIsNotNone(bench.mode_problem("on", ""))


class Arguments(unittest.TestCase):
    def run_bench(self, *args):
        import subprocess
        import sys
        return subprocess.run([sys.executable, os.path.join(HERE, "bench.py"),
                               "--arch", "x86_64", "--no-build", *args],
                              capture_output=True, text=True)

    def test_too_few_reps_refused(self):
        for reps in ("0", "3"):
            r = self.run_bench("--reps", reps)
            self.assertNotEqual(r.returncode, 0)
            self.assertIn("--reps %s: must be between" % reps, r.stderr)

    def test_one_boot_refused(self):
        r = self.run_bench("--boots", "1")
        self.assertNotEqual(r.returncode, 0)
        self.assertIn("--boots 1: must be between", r.stderr)


class RowSets(unittest.TestCase):
    def test_headline_is_the_cover_letters_rows(self):
        self.assertEqual(bench.set_rows("headline"), [
            "fork_h0", "fork_h1", "munmap_h0", "munmap_h1",
            "vmalloc_fix_p1_h0", "vmalloc_fix_p4_h0", "vmalloc_fix_p16_h0",
            "vmalloc_fix_p64_h0", "vmalloc_fix_p256_h0", "vmalloc_random_p1",
            "vmalloc_vm_map_ram_p1", "null_syscall", "lseek", "spawn"])
        self.assertEqual(bench.SET_REPS["headline"], bench.MIN_REPS)

    def test_full_and_quick(self):
        self.assertEqual(bench.set_rows("full"), bench.ROW_IDS)
        quick = bench.set_rows("quick")
        self.assertFalse(set(quick) & bench.FULL_ONLY_ROWS)
        # CI's huge-mapping assertion and 2-vCPU rows stay in the quick set.
        for row in bench.HUGE_ASSERTION_ROWS + sorted(bench.SMP_ROWS):
            self.assertIn(row, quick)
        with self.assertRaises(ValueError):
            bench.set_rows("slow")

    def test_counting_boots_run_the_rows_of_the_huge_mapping_assertion(self):
        head = bench.set_rows("headline")
        for arch in ("x86_64", "arm64"):
            rows = bench.counting_rows(arch, head)
            self.assertEqual(rows, [r for r in bench.ROW_IDS
                                    if r in head or r in bench.HUGE_ASSERTION_ROWS])
        # powerpc's hash MMU maps no huge vmalloc: nothing to assert there.
        self.assertEqual(bench.counting_rows("powerpc", head), head)
        self.assertEqual(bench.counting_rows("x86_64", ["fork_h0"]), ["fork_h0"])

    def test_result_set_of_older_results(self):
        self.assertEqual(bench.result_set({"quick": True}), "quick")
        self.assertEqual(bench.result_set({"quick": False}), "full")
        self.assertEqual(bench.result_set({"set": "headline", "quick": False}), "headline")

    def test_unknown_set_and_contradictions_refused(self):
        import subprocess
        import sys
        run = [sys.executable, os.path.join(HERE, "bench.py"), "--arch", "x86_64",
               "--no-build"]
        r = subprocess.run(run + ["--set", "slow"], capture_output=True, text=True)
        self.assertNotEqual(r.returncode, 0)
        self.assertIn("invalid choice: 'slow'", r.stderr)
        r = subprocess.run(run + ["--set", "full", "--quick"], capture_output=True, text=True)
        self.assertNotEqual(r.returncode, 0)
        self.assertIn("--quick is --set quick", r.stderr)


class ReportOutputs(unittest.TestCase):
    """'make bench-report': kpkeys_bench -j runs of two architectures to
    the outputs of 'make bench-all', and a table 'make series' takes."""

    ROWS = {"fork_h0": 1000, "null_syscall": 100, "fork_smp2": 5000}

    def write_run(self, d, arch, kind, boot, factor):
        import json
        kpkeys = kind != "nokpkeys"
        mode = "off" if kind == "nokpkeys" else kind
        path = os.path.join(d, "%s-%s-%d.jsonl" % (arch, kind, boot))
        hdr = {"kpkeys_bench": 1, "arch": {"arm64": "aarch64"}.get(arch, arch),
               "kernel": "7.3.4-gabc", "cmdline": "kpkeys_hardened_pgtables=%s" % mode,
               "mode": mode if kpkeys else "unknown", "cpu": "Test CPU",
               "virtual": False, "time": 0, "reps": 4, "quick": 0,
               "map_bytes": 1 << 26, "stats": False, "kpkeys": kpkeys}
        with open(path, "w") as f:
            f.write(json.dumps(hdr) + "\n")
            for row, base in self.ROWS.items():
                for rep in range(5):       # rep 0: the warm-up
                    ns = int(base * factor.get(row, 1.0)) * 2 + rep
                    f.write(json.dumps({"row": row, "rep": rep, "ns": ns, "ops": 2}) + "\n")
        return path

    def test_two_architectures(self):
        import shutil
        import subprocess
        import sys
        import tempfile
        sys.path.insert(0, HERE)
        import tree
        factors = {"off": {}, "nobatch": {"fork_h0": 1.2},
                   "on": {"fork_h0": 1.1, "null_syscall": 1.02},
                   "nokpkeys": {"fork_h0": 0.95, "null_syscall": 0.98}}
        with tempfile.TemporaryDirectory() as d:
            runs = [self.write_run(d, arch, kind, boot, f)
                    for arch in ("x86_64", "arm64") for kind, f in factors.items()
                    for boot in (1, 2)]
            out = os.path.join(d, "out")
            r = subprocess.run([sys.executable, os.path.join(HERE, "bench.py"), "report",
                                "--out", out] + runs, capture_output=True, text=True)
            self.assertEqual(r.returncode, 0, r.stderr + r.stdout[-2000:])
            last = r.stdout.strip().splitlines()[-1]
            self.assertTrue(last.startswith("bench: outputs in "), last)
            for name in ("report.md", "results.csv", "x86_64.json", "arm64.json",
                         "x86_64.md", "arm64.md"):
                self.assertTrue(os.path.isfile(os.path.join(out, name)), name)
                self.assertIn(name, last)
            if shutil.which("gnuplot"):
                for name in ("overhead.svg", "overhead.png"):
                    self.assertGreater(os.path.getsize(os.path.join(out, name)), 1000)
                    self.assertIn(name, last)
            with open(os.path.join(out, "report.md")) as f:
                report = f.read()
            with open(os.path.join(out, "results.csv")) as f:
                csv_text = f.read()
            table = tree.bench_table(out)
            self.assertEqual(table, tree.bench_table(os.path.join(out, "report.md")))
        self.assertIn("## Cross-architecture overhead", report)
        self.assertIn("x86_64,kpkeys,on,fork_h0,fork,fork: h:0,8,", csv_text)
        lines = table.splitlines()
        head = next(l for l in lines if l.startswith("| Benchmark"))
        for arch in ("x86_64", "arm64"):
            for col in ("off vs no kpkeys", "without batching", "with batching"):
                self.assertIn("| %s %s |" % (arch, col), head + " |")
        self.assertLess(head.index("x86_64"), head.index("arm64"))
        rows = {l.split("|")[2].strip(): l for l in lines if l.startswith("| ")
                and not l.startswith("| Benchmark")}
        self.assertEqual(set(rows) - {"---"}, {
            "fork: h:0", "null syscall (getppid)",
            "2 x fork 16 MiB h:0 at once, 2 vCPUs, wall clock (noisy)"})
        cells = [c.strip() for c in rows["fork: h:0"].split("|")[3:-1]]
        # x86_64 and arm64 alike: off vs no kpkeys, without, with batching.
        self.assertEqual(cells[:3], cells[3:])
        # Medians per op: off 1001.25 ns, nobatch 1201.25, on 1101.25,
        # no kpkeys 951.25 (the warm-up left out).
        self.assertEqual(cells[:3], ["(R) +5.26%", "(R) +19.98%", "(R) +9.99%"])
        self.assertTrue(rows["null syscall (getppid)"].rstrip(" |").endswith("*"))
        self.assertIn("Overhead relative to the baseline", table)

    def test_a_report_without_the_table_is_refused(self):
        import sys
        import tempfile
        sys.path.insert(0, HERE)
        import tree
        with tempfile.TemporaryDirectory() as d:
            with open(os.path.join(d, "report.md"), "w") as f:
                f.write("# kpkeys benchmark report\n")
            with self.assertRaises(tree.TreeError):
                tree.bench_table(d)
            with self.assertRaises(tree.TreeError):
                tree.bench_table(os.path.join(d, "nothing"))


class BenchAllFlow(unittest.TestCase):
    """bench.py's main() with the builds and boots faked: which kernels
    and rows each set boots, and the report it writes."""

    def run_main(self, d, *argv, counting_in_timing_boots=False):
        import contextlib
        import io
        import sys
        calls = []
        factor = {"off": 1.0, "nobatch": 1.2, "on": 1.1}
        counters = {"off": {}, "nobatch": {"pgtables_switches": 100},
                    "on": {"pgtables_switches": 10, "pgtables_switches_skipped": 90,
                           "lazy_mmu_sections": 1}}

        def fake_boot(rq, arch, out, mode, reps, quick, timeout, logdir, cpu,
                      rows, tag="", smp=1, extra="", progress=None):
            kernel = tag.split()[0]
            calls.append((arch, kernel, mode, tuple(rows), smp, quick))
            self.assertEqual(extra == bench.COUNT_ARG, kernel == "count")
            counts = kernel == "count" or (counting_in_timing_boots and kernel == "prod")
            f = 0.95 if kernel == "nokpkeys" else factor[mode]
            out = {}
            for r in rows:
                ss = samples([int(1000 * f) + i for i in range(reps)])
                for x in ss:
                    x["thp_kb"] = 2048
                    c = dict(counters[mode]) if kernel == "count" else {}
                    if kernel == "count" and r == "vmalloc_fix_p512_h1" and mode == "nobatch":
                        c["pgtables_switches"] = 5      # huge mapped
                    x["counters"] = dict({k: 0 for k in bench.COUNTERS}, **c) \
                        if kernel == "count" else {}
                out[r] = ss
            return {"samples": out, "errors": {}, "skipped": {}, "problems": [],
                    "start": {"stats": "yes" if counts else "no"} if kernel != "nokpkeys"
                    else {}, "wall_s": 1, "log": "x", "software_only": None,
                    "mode_line": "kpkeys: hardened page tables: %s" % mode, "cmdline": ""}

        class RQ:
            @staticmethod
            def run(cmd, log, timeout, label, on_line=None):
                pass

            @staticmethod
            def qemu_command(*a):
                return ["qemu-system-x"]

        fakes = {"boot": fake_boot, "load_run_qemu": lambda: RQ,
                 "use_project_qemu": lambda rq, arch: None,
                 "variant_dir": lambda arch, v: d,
                 # Counters built in, counting only when asked to.
                 "kconfig": lambda out, name: name != "KPKEYS_STATS_DEFAULT_ON",
                 "provenance": lambda tree, out, qemu: {
                     "series_commit": "0123456789ab", "config_sha256": "cafe",
                     "machine": "QEMU TCG: test", "date": "2026-01-01T00:00:00Z"}}
        saved = {k: getattr(bench, k) for k in fakes}
        open(os.path.join(d, "initrd.gz"), "w").close()
        out = os.path.join(d, "out")
        argv_saved = sys.argv
        sys.argv = ["bench.py", "--no-build", "--out", out] + list(argv)
        stdout = io.StringIO()
        try:
            for k, v in fakes.items():
                setattr(bench, k, v)
            with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stdout), \
                    self.assertRaises(SystemExit) as e:
                bench.main()
        finally:
            for k, v in saved.items():
                setattr(bench, k, v)
            sys.argv = argv_saved
        return e.exception.code, calls, out, stdout.getvalue()

    def test_headline_set(self):
        import json
        import tempfile
        with tempfile.TemporaryDirectory() as d:
            code, calls, out, stdout = self.run_main(d, "--arch", "x86_64", "--arch", "powerpc")
            with open(os.path.join(out, "report.md")) as f:
                report = f.read()
            with open(os.path.join(out, "run.json")) as f:
                run = json.load(f)
            names = set(os.listdir(out))
        self.assertEqual(code, 0, stdout[-3000:])
        head = tuple(bench.set_rows("headline"))
        timed = {(a, k, m) for a, k, m, rows, smp, quick in calls
                 if rows == head and k != "count"}
        self.assertEqual(timed, {(a, k, m) for a in ("x86_64", "powerpc")
                                 for k, m in [("prod", "off"), ("prod", "nobatch"),
                                              ("prod", "on"), ("nokpkeys", "off")]})
        self.assertEqual(len([c for c in calls if c[1] == "prod"]), 2 * 3 * 2)  # 2 boots
        self.assertFalse(any(c[4] != 1 or c[5] for c in calls))  # no 2-vCPU boot, full sizes
        counting = {a: rows for a, k, m, rows, smp, quick in calls if k == "count"}
        self.assertEqual(set(counting["x86_64"]) - set(head), set(bench.HUGE_ASSERTION_ROWS))
        self.assertEqual(counting["powerpc"], head)
        self.assertEqual((run["set"], run["boots"], run["reps"], run["command"]),
                         ("headline", 2, 4, "overlay-tools/bench.py --no-build --out %s "
                          "--arch x86_64 --arch powerpc" % out))
        for name in ("report.md", "results.csv", "x86_64.json", "powerpc.json", "run.json"):
            self.assertIn(name, names)
            self.assertIn(name, stdout.strip().splitlines()[-1])
        table = report.split("## Cross-architecture overhead")[1].split("\n## ")[0]
        body = [l for l in table.splitlines() if l.startswith("| ")][1:]
        self.assertEqual(len(body), len(bench.HEADLINE_ROWS))
        self.assertIn("| fork | fork: h:0 | (R) +5.", body[0])    # off vs no kpkeys
        self.assertNotIn("vmalloc_fix_p512", table)
        self.assertIn("Headline (the cover letter's rows) run: 2 boots", report)

    def test_counting_in_a_timing_boot_fails_the_run(self):
        import tempfile
        with tempfile.TemporaryDirectory() as d:
            code, calls, out, stdout = self.run_main(d, "--arch", "x86_64",
                                                     counting_in_timing_boots=True)
        self.assertEqual(code, 1)
        self.assertIn("the counters count in a timing boot", stdout)

    def test_quick_set_is_cis(self):
        import tempfile
        with tempfile.TemporaryDirectory() as d:
            code, calls, out, stdout = self.run_main(d, "--arch", "arm64", "--quick")
        self.assertEqual(code, 0, stdout[-3000:])
        self.assertTrue(all(c[5] for c in calls))              # kpkeys_bench -q
        self.assertFalse(any(c[1] == "nokpkeys" for c in calls))
        rows = {r for c in calls for r in c[3]}
        self.assertEqual(rows, set(bench.set_rows("quick")))
        self.assertTrue(any(c[4] == 2 for c in calls))         # the 2-vCPU rows


class ReportStep(unittest.TestCase):
    """bench.py report: kpkeys_bench -j files of any number of runs."""

    def write_run(self, d, name, mode, values, kpkeys=True, stats=False, row="fork_h0",
                  arch="x86_64", extra=""):
        import json
        path = os.path.join(d, name)
        hdr = {"kpkeys_bench": 1, "arch": arch, "kernel": "7.3.4-g0123",
               "cmdline": "kpkeys_hardened_pgtables=%s" % mode,
               "mode": "%s (something)" % mode if kpkeys else "unknown",
               "cpu": "Test CPU", "virtual": False, "time": 0, "reps": len(values),
               "stats": stats, "kpkeys": kpkeys}
        with open(path, "w") as f:
            f.write(json.dumps(hdr) + "\n")
            f.write(json.dumps({"row": row, "rep": 0, "ns": 1, "ops": 1}) + "\n")
            for i, v in enumerate(values):
                rec = {"row": row, "rep": i + 1, "ns": v * 2, "ops": 2}
                if stats:
                    rec.update({c: 0 for c in bench.COUNTERS})
                    rec["pgtables_switches"] = 10
                f.write(json.dumps(rec) + "\n")
            f.write(extra)
        return path

    def test_runs_grouped_by_mode_and_compared_with_off(self):
        import tempfile
        with tempfile.TemporaryDirectory() as d:
            runs = [self.write_run(d, "off1", "off", [100, 101, 100, 102]),
                    self.write_run(d, "off2", "off", [101, 100, 100, 101]),
                    self.write_run(d, "on1", "on", [110, 111, 110, 112]),
                    self.write_run(d, "nok", "off", [99, 99, 98, 99], kpkeys=False)]
            results, problems = bench.results_from_runs(runs)
        res = results["x86_64"]
        self.assertEqual(problems, [])
        self.assertEqual(res["modes"]["off"]["rows"]["fork_h0"]["n"], 8)  # rep 0 dropped
        self.assertEqual(res["modes"]["on"]["rows"]["fork_h0"]["mark"], "R")
        self.assertAlmostEqual(res["modes"]["on"]["rows"]["fork_h0"]["overhead_pct"],
                               (110.5 / 100.5 - 1) * 100)
        self.assertIn("rows", res["nokpkeys"])
        self.assertIn("fork: h:0", bench.arch_table("x86_64", res))

    def test_run_in_another_mode_than_asked_is_left_out(self):
        import json
        import tempfile
        with tempfile.TemporaryDirectory() as d:
            off = self.write_run(d, "off", "off", [100] * 4)
            on = self.write_run(d, "on", "on", [110] * 4)
            # Asked for "on", fell back to "off" (no pkey hardware, say).
            with open(on) as f:
                lines = f.read().splitlines()
            hdr = json.loads(lines[0])
            hdr["mode"] = "off (this CPU has no usable protection keys)"
            with open(on, "w") as f:
                f.write("\n".join([json.dumps(hdr)] + lines[1:]) + "\n")
            results, problems = bench.results_from_runs([off, on])
        self.assertTrue(any("ran in mode off, its command line asked for on" in p
                            for p in problems), problems)
        self.assertEqual(results["x86_64"]["modes"]["off"]["rows"]["fork_h0"]["n"], 4)

    def test_counting_runs_give_counters_not_timings(self):
        import tempfile
        with tempfile.TemporaryDirectory() as d:
            runs = [self.write_run(d, "off", "off", [100] * 4),
                    self.write_run(d, "cnt", "off", [500] * 4, stats=True)]
            results, problems = bench.results_from_runs(runs)
        res = results["x86_64"]
        self.assertEqual(res["modes"]["off"]["rows"]["fork_h0"]["median"], 100)
        # 10 switches per record of 2 ops in "off": the assertion fires.
        self.assertEqual(res["counting"]["off"]["rows"]["fork_h0"]["pgtables_switches"], 5)
        self.assertTrue(any("expected 0" in p for p in problems))

    def test_before_after(self):
        import tempfile
        with tempfile.TemporaryDirectory() as d:
            before, _ = bench.results_from_runs([self.write_run(d, "b", "on", [120] * 4)])
            after, _ = bench.results_from_runs([self.write_run(d, "a", "on", [100] * 4)])
        t = bench.compare_runs(before, after)
        self.assertIn("| x86_64 | on | fork: h:0 | 120 ns/op | 100 ns/op | (I) -16.67%", t)

    def test_too_few_samples_is_a_problem(self):
        import tempfile
        with tempfile.TemporaryDirectory() as d:
            _, problems = bench.results_from_runs([self.write_run(d, "o", "off", [1, 2])])
        self.assertTrue(any("at least 4" in p for p in problems))

    def test_counting_kernels_in_every_mode_still_give_timings(self):
        import tempfile
        with tempfile.TemporaryDirectory() as d:
            runs = [self.write_run(d, m, m, [100 + i] * 4, stats=True)
                    for i, m in enumerate(bench.MODES)]
            runs.append(self.write_run(d, "nok", "off", [90] * 4, kpkeys=False))
            results, _ = bench.results_from_runs(runs)
        res = results["x86_64"]
        for m in bench.MODES:
            self.assertIn("rows", res["modes"][m], m)
        self.assertEqual(res["modes"]["on"]["rows"]["fork_h0"]["median"], 102)

    def test_uname_arch_names_are_the_project_names(self):
        import tempfile
        with tempfile.TemporaryDirectory() as d:
            results, _ = bench.results_from_runs(
                [self.write_run(d, "a", "off", [1] * 4, arch="aarch64"),
                 self.write_run(d, "p", "off", [1] * 4, arch="ppc64le")])
        self.assertEqual(sorted(results), ["arm64", "powerpc"])

    def test_run_that_cannot_tell_kpkeys_is_left_out(self):
        import tempfile
        with tempfile.TemporaryDirectory() as d:
            results, problems = bench.results_from_runs(
                [self.write_run(d, "off", "off", [1] * 4),
                 self.write_run(d, "unk", "off", [9] * 4, kpkeys=None)])
        self.assertEqual(results["x86_64"]["modes"]["off"]["rows"]["fork_h0"]["median"], 1)
        self.assertTrue(any("debugfs not mounted" in p for p in problems))

    def test_garbled_line_is_a_problem_not_a_crash(self):
        import tempfile
        with tempfile.TemporaryDirectory() as d:
            p = self.write_run(d, "g", "off", [1] * 4, extra='{"row": "fork_h0", "re[  1.2] x\n')
            results, problems = bench.results_from_runs([p])
        self.assertEqual(results["x86_64"]["modes"]["off"]["rows"]["fork_h0"]["n"], 4)
        self.assertTrue(any("not JSON" in x for x in problems))

    def test_not_a_run_file_is_refused(self):
        import tempfile
        with tempfile.TemporaryDirectory() as d:
            p = os.path.join(d, "x.json")
            with open(p, "w") as f:
                f.write("kpkeys-bench: result fork_h0 1 ns=1 ops=1\n")
            with self.assertRaises(SystemExit):
                bench.load_run(p)


if __name__ == "__main__":
    unittest.main()
