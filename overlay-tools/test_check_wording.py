#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Tests of check-wording.py on synthetic files: it must catch what it is
for, pass the technical senses and the context lines of patches, and see
every file of its scope."""

import importlib.util
import os
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
spec = importlib.util.spec_from_file_location(
    "check_wording", os.path.join(HERE, "check-wording.py"))
cw = importlib.util.module_from_spec(spec)
spec.loader.exec_module(cw)

# Built from parts, so that this file passes the check it tests.
W = "Sess" "ion"
I = "iss" "ue"


class LineTest(unittest.TestCase):
    def bad(self, text):
        self.assertTrue(cw.line_hits(text), text)

    def good(self, text):
        self.assertEqual(cw.line_hits(text), [], text)

    def test_working_sittings_fail(self):
        self.bad("# failed it (%s 11)." % W.lower())
        self.bad("%ss 9 and 10 measured it" % W)
        self.bad("the next %s should rerun it" % W.upper())
        self.bad("in this %s's fresh clone" % W.lower())

    def test_issue_numbers_fail(self):
        self.bad("fixed (%s 36)" % I)
        self.bad("see %s #12" % I)
        self.bad("%s 7: the runner hangs" % I.capitalize())
        self.bad("%ss 3 and 4" % I)

    def test_numbered_build_dirs_fail(self):
        self.bad("build/bench-s%d/report.md" % 13)
        self.bad("| arm64 with batching (s%d) |" % 13)

    def test_technical_senses_pass(self):
        self.good("the TTY %s of the guest's shell" % W.lower())
        self.good("a login %s, then the %s leader exits" % (W.lower(), W.lower()))
        self.good("setsid() makes a new %s ID" % W.lower())

    def test_technical_sense_does_not_cover_another(self):
        self.bad("a login %s; measured in %s 5" % (W.lower(), W.lower()))

    def test_software_words_pass(self):
        self.good("Exceptions inside a batched lazy MMU section")
        self.good("the possession of the key; an obsession with speed")
        self.good("issue a TLB flush; no issue here; -smp 1; s390")


class FileTest(unittest.TestCase):
    def write(self, d, name, text):
        path = os.path.join(d, name)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as f:
            f.write(text)
        return path

    def test_patch_context_lines_are_the_kernels(self):
        with tempfile.TemporaryDirectory() as d:
            p = self.write(d, "generic/patches/x.patch",
                           "+++ b/drivers/tty/%s.c\n"
                           " \tstruct tty_struct *tty; /* %s 1 */\n"
                           "-\told %s 2\n"
                           "+\tkpkeys_enable();\n" % (W, W, W))
            self.assertEqual(cw.check_file(p, "x.patch"), [])
            with open(p, "a") as f:
                f.write("+ * measured in %s 3\n" % W.lower())
            hits = cw.check_file(p, "x.patch")
            self.assertEqual(len(hits), 1)
            self.assertTrue(hits[0].startswith("x.patch:5: "), hits)

    def test_hit_names_file_and_line(self):
        with tempfile.TemporaryDirectory() as d:
            p = self.write(d, "Makefile", "all:\n\n# see %s 4\n" % I)
            self.assertEqual(cw.check_file(p, "Makefile"),
                             ["Makefile:3: cites an %s number: # see %s 4" % (I, I)])

    def test_readme_length(self):
        with tempfile.TemporaryDirectory() as d:
            p = self.write(d, "README.md", "line\n" * cw.README_MAX_LINES)
            self.assertEqual(cw.check_file(p, "README.md"), [])
            self.write(d, "README.md", "line\n" * (cw.README_MAX_LINES + 1))
            hits = cw.check_file(p, "README.md")
            self.assertEqual(len(hits), 1)
            self.assertIn("more than %d" % cw.README_MAX_LINES, hits[0])
            # Only the top-level README has a length limit.
            q = self.write(d, "overlay-tools/README.md", "line\n" * 400)
            self.assertEqual(cw.check_file(q, "overlay-tools/README.md"), [])

    def test_scope(self):
        for p in ("README.md", "Makefile", ".ci/run", "overlay-tools/new-tool.sh",
                  "overlay-tools/qemu/patches/0001-x.patch",
                  "overlay-tools/configs/common.config",
                  "series/x.msg", "series/cover-letter.txt", "series/bench.md",
                  "generic/patches/x.patch", "arch/x86/patches/y.patch",
                  "Documentation/core-api/kpkeys.rst", "generic/mm/kpkeys.c",
                  "tools/testing/selftests/kpkeys/kpkeys_bench.c", "MAINTAINERS"):
            self.assertTrue(cw.in_scope(p), p)
        for p in ("series/bisect-check.txt", "results/measured.md"):
            self.assertFalse(cw.in_scope(p), p)

    def test_posted_files_cite_no_review_and_no_tooling(self):
        with tempfile.TemporaryDirectory() as d:
            q = os.path.join(d, "x.c")
            with open(q, "w") as f:
                f.write("/* Found in review. */\n/* As make check ARCH=arm64 does. */\n"
                        "/* the project's QEMU */\n/* an ordinary line */\n")
            hits = cw.check_file(q, "generic/mm/x.c")
            self.assertEqual([h.split(":")[1] for h in hits], ["1", "2", "3"])
            # The tooling may name itself.
            self.assertEqual(cw.check_file(q, "overlay-tools/x.c")[:1], [])

    def test_repository_run_sees_a_new_file(self):
        with tempfile.TemporaryDirectory() as d:
            subprocess.run(["git", "init", "-q", d], check=True)
            self.write(d, "README.md", "kpkeys\n")
            self.write(d, ".gitignore", "build/\n")
            self.write(d, "build/x.sh", "# %s 1\n" % W)
            run = [sys.executable, os.path.join(HERE, "check-wording.py"), "--repo", d]
            r = subprocess.run(run, capture_output=True, text=True)
            self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
            self.write(d, "overlay-tools/new.sh", "#!/bin/sh\n# from %s 2\n" % W.lower())
            r = subprocess.run(run, capture_output=True, text=True)
            self.assertEqual(r.returncode, 1)
            self.assertTrue(r.stdout.startswith("overlay-tools/new.sh:2: "), r.stdout)


if __name__ == "__main__":
    unittest.main()
