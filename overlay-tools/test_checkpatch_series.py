#!/usr/bin/env python3
"""Tests of checkpatch-series.py against a stand-in checkpatch.pl."""
import importlib.util
import os
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPT = os.path.join(HERE, "checkpatch-series.py")

REPORT = """CHECK:SPACING: spaces preferred around that '*' (ctx:VxV)
#178: FILE: arch/x86/include/asm/cpufeatures.h:425:
+#define X86_FEATURE_PKS\t\t\t(16*32+31)

WARNING:COMMIT_LOG_LONG_LINE: Prefer a maximum 75 chars per line
#12:\x20
a very long line

total: 0 errors, 1 warnings, 1 checks, 494 lines checked
"""


class CheckpatchSeries(unittest.TestCase):
    def run_with(self, output, allow):
        with tempfile.TemporaryDirectory() as d:
            os.makedirs(os.path.join(d, "scripts"))
            fake = os.path.join(d, "scripts", "checkpatch.pl")
            with open(os.path.join(d, "out.txt"), "w") as f:
                f.write(output)
            with open(fake, "w") as f:
                f.write("#!/bin/sh\ncat %s/out.txt\nexit 1\n" % d)
            os.chmod(fake, 0o755)
            allow_path = os.path.join(d, "allow")
            with open(allow_path, "w") as f:
                f.write(allow)
            patch = os.path.join(d, "0001-x.patch")
            open(patch, "w").close()
            r = subprocess.run([sys.executable, SCRIPT, d, allow_path, patch],
                               capture_output=True, text=True)
            return r.returncode, r.stdout + r.stderr

    def test_listed_report_is_excused_and_others_are_not(self):
        rc, out = self.run_with(REPORT, "CHECK\tSPACING\tarch/x86/include/asm/cpufeatures.h\t"
                                "#define X86_FEATURE_PKS\t\t\t(16*32+31)\n")
        self.assertEqual(rc, 1)
        self.assertIn("COMMIT_LOG_LONG_LINE", out)
        self.assertIn("1 reports not excused, 1 excused", out)

    def test_everything_excused_passes(self):
        only = REPORT.split("\n\n")[0] + "\n\ntotal: 0 errors, 0 warnings, 1 checks, 4 lines checked\n"
        rc, out = self.run_with(only, "CHECK\tSPACING\tarch/x86/include/asm/cpufeatures.h\t"
                                "#define X86_FEATURE_PKS\t\t\t(16*32+31)\n")
        self.assertEqual(rc, 0, out)

    def test_other_level_is_not_excused(self):
        only = REPORT.split("\n\n")[0].replace("CHECK:", "ERROR:", 1) + \
            "\n\ntotal: 1 errors, 0 warnings, 0 checks, 4 lines checked\n"
        rc, out = self.run_with(only, "CHECK\tSPACING\tarch/x86/include/asm/cpufeatures.h\t"
                                "#define X86_FEATURE_PKS\t\t\t(16*32+31)\n")
        self.assertEqual(rc, 1)
        self.assertIn("matches no report", out)

    def test_stale_entry_fails(self):
        rc, out = self.run_with("total: 0 errors, 0 warnings, 0 checks, 4 lines checked\n",
                                "CHECK\tSPACING\ta.c\tx = 1;\n")
        self.assertEqual(rc, 1)
        self.assertIn("matches no report; remove it", out)

    def test_reports_not_read_fail(self):
        rc, out = self.run_with("\x1b[31mCHECK:SPACING\x1b[0m: x\n"
                                "total: 0 errors, 0 warnings, 1 checks, 4 lines checked\n", "")
        self.assertEqual(rc, 1)
        self.assertIn("unknown output", out)

    def test_no_total_fails(self):
        rc, out = self.run_with("Can't open patch\n", "")
        self.assertEqual(rc, 1)
        self.assertIn("no total", out)

    def test_empty_field_is_refused(self):
        rc, out = self.run_with("total: 0 errors, 0 warnings, 0 checks, 4 lines checked\n",
                                "CHECK\tSPACING\t\tx\n")
        self.assertEqual(rc, 1)
        self.assertIn("none empty", out)


if __name__ == "__main__":
    unittest.main()
