#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Unit tests of run-qemu.py's console judge, on synthetic console logs."""

import importlib.util
import os
import unittest

_spec = importlib.util.spec_from_file_location(
    "run_qemu", os.path.join(os.path.dirname(__file__), "run-qemu.py"))
run_qemu = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(run_qemu)

OWN = {"mm/kpkeys.c", "arch/x86/mm/kpkeys.c"}


class JudgeTest(unittest.TestCase):
    def judge(self, *lines):
        return run_qemu.find_problems(list(lines), OWN)

    def test_clean_log_has_no_problem(self):
        problems, notes = self.judge("[    0.1] Linux version 7.3.4",
                                     "kpkeys-init: done")
        self.assertEqual(problems, [])
        self.assertEqual(notes, [])

    def test_oops_is_a_problem(self):
        problems, _ = self.judge("[    1.0] Oops: general protection fault, "
                                 "probably for non-canonical address")
        self.assertTrue(problems)

    def test_arm64_oops_is_a_problem(self):
        problems, _ = self.judge("[    1.0] Internal error: Oops: "
                                 "0000000096000044 [#1]  SMP")
        self.assertTrue(problems)

    def test_bug_and_panic_are_problems(self):
        for line in ("[    1.0] BUG: unable to handle page fault for address",
                     "[    1.0] kernel BUG at mm/slub.c:123!",
                     "[    1.0] Kernel panic - not syncing: Attempted to kill init!"):
            problems, _ = self.judge(line)
            self.assertTrue(problems, line)

    def test_warning_in_project_code_is_a_problem(self):
        problems, _ = self.judge("[    1.0] WARNING: CPU: 0 PID: 1 at "
                                 "mm/kpkeys.c:42 kpkeys_check+0x10/0x20")
        self.assertTrue(problems)

    def test_warning_elsewhere_is_only_noted(self):
        problems, notes = self.judge("[    1.0] WARNING: CPU: 1 PID: 0 at "
                                     "kernel/time/clocksource.c:9 foo+0x1/0x2")
        self.assertEqual(problems, [])
        self.assertEqual(len(notes), 1)

    def test_kpkeys_check_report_is_a_problem(self):
        problems, _ = self.judge("[    1.0] kpkeys_check: write at the wrong "
                                 "kpkeys level at foo+0x1/0x2: level 0, expected 1")
        self.assertTrue(problems)

    def test_expected_kpkeys_check_report_is_allowed(self):
        problems, _ = self.judge("[    1.0] kpkeys_check: write at the wrong "
                                 "kpkeys level at foo+0x1/0x2: level 0, "
                                 "expected 1 (expected by a test)")
        self.assertEqual(problems, [])

    def test_kunit_suite_summary_is_not_a_report(self):
        problems, _ = self.judge("[    0.8] # kpkeys_check: pass:5 fail:0 skip:0 total:5")
        self.assertEqual(problems, [])

    def test_ktap_documents_are_split(self):
        docs = run_qemu.ktap_documents([
            "noise", "[    1.0] KTAP version 1", "[    1.0] 1..1",
            "KTAP version 1", "1..1", "ok 1 guest"])
        self.assertEqual(len(docs), 2)
        self.assertEqual(docs[1][-1], "ok 1 guest")


if __name__ == "__main__":
    unittest.main()
