#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Unit tests of run-qemu.py's console judge, on synthetic console logs.

The tests that parse KTAP use the kernel's kunit.py from the assembled
tree: $KPKEYS_KERNEL_TREE, else $KPKEYS_BUILD/tree, else build/tree; they
are skipped, saying so, where there is none.
"""

import importlib.util
import json
import os
import stat
import subprocess
import sys
import tempfile
import unittest

_spec = importlib.util.spec_from_file_location(
    "run_qemu", os.path.join(os.path.dirname(__file__), "run-qemu.py"))
run_qemu = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(run_qemu)

OWN = {"mm/kpkeys.c", "arch/x86/mm/kpkeys.c"}
REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TREE = os.environ.get("KPKEYS_KERNEL_TREE") or os.path.join(
    os.environ.get("KPKEYS_BUILD") or os.path.join(REPO, "build"), "tree")
KUNIT_PY = os.path.join(TREE, "tools/testing/kunit/kunit.py")
needs_kunit_py = unittest.skipUnless(
    os.path.exists(KUNIT_PY), "no %s (assemble the tree: make tree)" % KUNIT_PY)

# The kernel message of the run where it split a guest KTAP line.
CLOCKSOURCE = ("[    2.187011] clocksource: tsc: mask: 0xffffffffffffffff "
               "max_cycles: 0x2b3e4e0cf4e, max_idle_ns: 440795222498 ns")
GUEST_CASES = ["proc_cmdline_is_readable", "vmalloc_module_runs",
               "debugfs_has_lkdtm_trigger", "fork_and_wait",
               "anonymous_mmap_is_zeroed_and_writable"]


def kunit_ktap(suite, results, t=0.9):
    """A KUnit suite as the kernel prints it: every line a printk record."""
    body = ["KTAP version 1", "1..1", "    KTAP version 1",
            "    # Subtest: %s" % suite, "    1..%d" % len(results)]
    for i, (case, ok) in enumerate(results, 1):
        if not ok:
            body.append("    # %s: EXPECTATION FAILED at mm/tests/x.c:1" % case)
        body.append("    %s %d %s" % ("ok" if ok else "not ok", i, case))
    bad = any(not ok for _, ok in results)
    body.append("%s 1 %s" % ("not ok" if bad else "ok", suite))
    return ["[%12.6f] %s" % (t + i / 1e6, l) for i, l in enumerate(body)]


def guest_ktap(suite, results):
    """A suite as guest/init.c prints it (no time prefix)."""
    out = ["KTAP version 1", "1..1", "    KTAP version 1",
           "    # Subtest: %s" % suite, "    1..%d" % len(results)]
    for i, (case, ok) in enumerate(results, 1):
        if ok:
            out.append("    ok %d %s" % (i, case))
        else:
            out += ["    # %s: it failed" % case, "    not ok %d %s" % (i, case)]
    out.append("%s 1 %s" % ("ok" if all(ok for _, ok in results) else "not ok",
                            suite))
    return out


def console(kunit=(("level_roundtrip", True), ("guard_restores", True)),
            guest=tuple((c, True) for c in GUEST_CASES)):
    """A whole console: boot, a KUnit suite, the guest suite, the end."""
    return (["[    0.000000] Linux version 7.3.4 (gcc 12)",
             "[    0.512000] smp: Brought up 1 node, 2 CPUs"]
            + kunit_ktap("kpkeys", list(kunit))
            + ["[    1.100000] Run /init as init process"]
            + guest_ktap("kpkeys_guest_harness", list(guest))
            + ["kpkeys-init: done", "[    3.000000] reboot: Restarting system"])


# What OVMF and the kernel's EFI stub print on the serial console before the
# kernel's first printk record (screen control sequences included).
OVMF_PREAMBLE = ["\x1b[2J\x1b[01;01H\x1b[=3h\x1b[2J\x1b[01;01H"
                 "BdsDxe: loading Boot0002 \"EFI Internal Shell\" from Fv(7CB8BDC9)",
                 "EFI stub: Loaded initrd from LINUX_EFI_INITRD_MEDIA_GUID device path",
                 "EFI stub: Measured initrd data into PCR 9"]


def split(lines, text, at, *records):
    """@lines with the line @text cut after @at characters by @records."""
    i = lines.index(text)
    cut = [text[:at] + records[0], *records[1:], text[at:]]
    return lines[:i] + cut + lines[i + 1:]


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

    def test_replayed_printk_record_is_kept_once(self):
        # register_console() during a record: printk cuts it and writes it
        # again after its marker (as seen in a CI console log).
        lines = ["[    1.08]     ok 5 cond_guard_switches_only_when_asked",
                 "[    1.08]     ok 6 softirq_from_bh_enable_runs_at_def",
                 "** replaying previous printk message **",
                 "[    1.08]     ok 6 softirq_from_bh_enable_runs_at_default",
                 "[    1.09] printk: legacy console [kpkeystest-1] enabled"]
        out, _ = run_qemu.reassemble(lines)
        self.assertEqual(out, [lines[0], lines[3], lines[4]])

    def test_kernel_message_inside_kunit_ktap_is_left_out(self):
        # A powerpc CI console: "Freeing initrd memory" between a nested
        # "KTAP version 1" and its "# Subtest:" made kunit.py lose the rest.
        doc = ["[    0.231015] KTAP version 1",
               "[    0.231488] 1..1",
               "[    0.232316]     KTAP version 1",
               "[    0.232665] Freeing initrd memory: 20K",
               "[    0.232953]     # Subtest: kpkeys",
               "[    0.233515]     1..1",
               "[    0.233600] CPU: 1 UID: 0 PID: 81 Comm: kunit_try_catch",
               "[    0.233700]  #1",
               "[    0.247550]     ok 1 enter_then_leave_round_trips",
               "[    0.248000] ok 1 kpkeys"]
        kept = run_qemu.ktap_documents(doc)[0]
        self.assertEqual(kept, [l for i, l in enumerate(doc) if i not in (3, 6, 7)])

    def test_expected_warning_is_let_through_once(self):
        mod = run_qemu
        warn = ("[    1.0] WARNING: mm/tests/kpkeys_kunit.c:42 at "
                "warn_path_runs_at_default+0x10/0x20, CPU#0: kunit_try_catch/64")
        lines = ["[    0.9] " + mod.EXPECTED_WARNING, warn, warn]
        problems, notes = mod.find_problems(lines, {"mm/tests/kpkeys_kunit.c"})
        self.assertEqual(len(problems), 1, "only the first WARNING is expected")
        self.assertIn("WARNING expected by a test", notes[0])

    def test_expected_oops_is_let_through_until_the_end_marker(self):
        mod = run_qemu
        oops = "[    2.0] Oops: Kernel access of bad area, sig: 11 [#1]"
        lines = ["kpkeys-test: the next oops is expected (LKDTM ACCESS_USERSPACE)",
                 "[    2.0] BUG: Unable to handle kernel data access on read at 0x3fff0000",
                 oops, mod.EXPECTED_OOPS_END, oops]
        problems, notes = mod.find_problems(lines, set())
        self.assertEqual(len(notes), 2)
        self.assertEqual(len(problems), 1, "an oops after the end marker fails")
        panic = ["kpkeys-test: the next oops is expected (LKDTM ACCESS_USERSPACE)",
                 "[    2.1] Kernel panic - not syncing: Fatal exception"]
        problems, _ = mod.find_problems(panic, set())
        self.assertEqual(len(problems), 1, "a panic is never expected")

    def test_expected_warning_ends_with_the_case(self):
        # A WARN_ONCE() that stayed silent: the marker must not excuse the
        # next case's WARNING.
        problems, _ = self.judge(
            "[    1.0] kpkeys-test: the next WARNING is expected",
            "[    1.1]     ok 3 forged_saved_value_restores_default",
            "[    1.2] WARNING: mm/kpkeys.c:42 at kpkeys_restore_invalid+0x0/0x1, CPU#0: x/1")
        self.assertTrue(problems)
        problems, notes = self.judge(
            "[    1.0] kpkeys-test: the next WARNING is expected",
            "[    1.2] WARNING: mm/kpkeys.c:42 at kpkeys_restore_invalid+0x0/0x1, CPU#0: x/1",
            "[    1.3]     ok 3 forged_saved_value_restores_default")
        self.assertEqual((problems, len(notes)), ([], 1))

    def test_warning_in_project_code_7_3_format(self):
        problems, _ = self.judge("[    1.1] WARNING: mm/kpkeys.c:42 at "
                                 "kpkeys_check+0x10/0x20, CPU#0: swapper/1")
        self.assertTrue(problems)
        problems, notes = self.judge("[    1.1] WARNING: kernel/time/clocksource.c:9 "
                                     "at foo+0x1/0x2, CPU#1: kworker/1:0/20")
        self.assertEqual((problems, len(notes)), ([], 1))

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

    def test_unkeyed_table_reported_by_the_walker_is_a_problem(self):
        for line in ("[    9.0] kpkeys: walk: kernel page-table page pfn 0x68d "
                     "(pmd level) is not keyed",
                     "[    9.0] kpkeys: walk: user page-table page pfn 0x1234 "
                     "(pte level): PT_kpkeys set but key 0 in its linear-map PTE",
                     "[    0.5] kpkeys: hardened page tables: keyed 80 boot "
                     "page-table pages (2 unkeyed, 0 from kmem caches), pool 60 pages"):
            problems, _ = self.judge(line)
            self.assertTrue(problems, line)
            self.assertIn("unkeyed page table", problems[0])

    def test_unkeyed_table_is_a_problem_even_inside_an_expected_oops(self):
        problems, _ = self.judge("kpkeys-test: the next oops is expected (LKDTM X)",
                                 "[    9.0] kpkeys: walk: kernel page-table page "
                                 "pfn 0x68d (pmd level) is not keyed",
                                 "kpkeys-test: the expected oops is over")
        self.assertTrue(problems)

    def test_boot_keying_with_nothing_unkeyed_is_fine(self):
        problems, _ = self.judge("[    0.5] kpkeys: hardened page tables: keyed 80 "
                                 "boot page-table pages (0 unkeyed, 0 from kmem "
                                 "caches), pool 60 pages")
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



class ReassembleTest(unittest.TestCase):
    """Guest lines split by kernel messages on the shared console."""

    def test_normal_lines_are_left_alone(self):
        lines = console() + ["", "plain text", "  # diagnostic"]
        self.assertEqual(run_qemu.reassemble(lines), (lines, 0))

    def test_message_in_the_middle_of_a_line(self):
        # The line of the issue: "    ok " + record + "5 anonymous...".
        out, joined = run_qemu.reassemble(
            ["[    1.000000] boot", "    ok " + CLOCKSOURCE,
             "5 anonymous_mmap_is_zeroed_and_writable"])
        self.assertEqual(out, ["[    1.000000] boot", CLOCKSOURCE,
                               "    ok 5 anonymous_mmap_is_zeroed_and_writable"])
        self.assertEqual(joined, 1)

    def test_message_at_the_start_of_a_line(self):
        lines = ["[    1.0] a", CLOCKSOURCE, "    ok 1 x", "[    2.500000] b"]
        self.assertEqual(run_qemu.reassemble(lines), (lines, 0))

    def test_two_messages_in_a_row(self):
        out, joined = run_qemu.reassemble(
            ["[    1.000000] boot", "    not ok " + CLOCKSOURCE,
             "[    2.187100] second message", "3 fork_and_wait", "next"])
        self.assertEqual(out, ["[    1.000000] boot", CLOCKSOURCE,
                               "[    2.187100] second message",
                               "    not ok 3 fork_and_wait", "next"])
        self.assertEqual(joined, 1)

    def test_one_line_split_twice(self):
        out, _ = run_qemu.reassemble(
            ["[    1.000000] boot", "    ok " + CLOCKSOURCE,
             "4 fork_" + "[    2.200000] other", "and_wait"])
        self.assertEqual(out, ["[    1.000000] boot", CLOCKSOURCE,
                               "[    2.200000] other", "    ok 4 fork_and_wait"])

    def test_message_at_the_end_of_a_line(self):
        # Whole line printed, then the record, then the line's newline;
        # also with the serial console's "\r" before the record.
        for tail in ("", "\r"):
            out, _ = run_qemu.reassemble(
                ["[    1.000000] boot", "    ok 4 fork_and_wait" + tail + CLOCKSOURCE,
                 "", "    ok 5 x"])
            self.assertEqual(out, ["[    1.000000] boot", CLOCKSOURCE,
                                   "    ok 4 fork_and_wait", "    ok 5 x"])

    def test_message_at_the_end_of_the_log(self):
        out, _ = run_qemu.reassemble(["[    1.000000] boot", "    ok " + CLOCKSOURCE])
        self.assertEqual(out, ["[    1.000000] boot", CLOCKSOURCE, "    ok "])

    def test_firmware_text_before_the_kernel_is_left_alone(self):
        lines = ["SeaBIOS (version 1.16)", "Booting from ROM..[    0.000000] Linux",
                 "[    0.100000] next", "guest line"]
        self.assertEqual(run_qemu.reassemble(lines), (lines, 0))

    def test_ovmf_text_before_the_kernel_is_left_alone(self):
        lines = OVMF_PREAMBLE + console()
        self.assertEqual(run_qemu.reassemble(lines), (lines, 0))
        # Firmware text and the first record on one console line.
        lines = OVMF_PREAMBLE[:-1] + [OVMF_PREAMBLE[-1] + console()[0]] + console()[1:]
        self.assertEqual(run_qemu.reassemble(lines), (lines, 0))

    def test_split_lines_are_found_by_the_line_checks(self):
        lines = split(console(), "kpkeys-init: done", 8, CLOCKSOURCE)
        self.assertNotIn("kpkeys-init: done", lines)
        self.assertIn("kpkeys-init: done", run_qemu.reassemble(lines)[0])


class QemuCommandTest(unittest.TestCase):
    """The QEMU command line (no QEMU run)."""

    def cmd(self, arch, bios=None):
        return run_qemu.qemu_command(arch, "bzImage", "initrd.gz", "", None,
                                     2, False, bios)

    def firmware(self, cmd):
        return [cmd[i + 1] for i, a in enumerate(cmd) if a == "-bios"]

    def test_x86_64_default_is_qboot(self):
        self.assertEqual(self.firmware(self.cmd("x86_64")), ["qboot.rom"])

    def test_bios_replaces_qboot(self):
        cmd = self.cmd("x86_64", "/usr/share/ovmf/OVMF.fd")
        self.assertEqual(self.firmware(cmd), ["/usr/share/ovmf/OVMF.fd"])
        self.assertNotIn("qboot.rom", cmd)
        # Still a direct kernel boot, on the same machine.
        self.assertEqual(cmd[cmd.index("-kernel") + 1], "bzImage")
        self.assertEqual(cmd[cmd.index("-M") + 1], "q35")
        # The table of defaults is not changed by it.
        self.assertIn("qboot.rom", run_qemu.QEMU["x86_64"]["args"])

    def test_bios_is_added_where_there_is_no_default(self):
        self.assertEqual(self.firmware(self.cmd("arm64")), [])
        self.assertEqual(self.firmware(self.cmd("arm64", "QEMU_EFI.fd")),
                         ["QEMU_EFI.fd"])


class FailedCasesTest(unittest.TestCase):
    """What counts as a failed case in kunit.py's JSON (no kunit.py needed)."""

    def test_fail_and_error_are_failed_skip_is_not(self):
        suites = {"s": [("a", "PASS"), ("b", "SKIP"), ("c", "FAIL"), ("", "ERROR")]}
        self.assertEqual(run_qemu.failed_cases(suites),
                         ["s.c (FAIL)", "s.%s (ERROR)" % run_qemu.UNNAMED])

    def test_top_level_failures(self):
        group = {"name": "KUnit Test Group", "sub_groups": [],
                 "test_cases": [{"name": "t", "status": "PASS"},
                                {"name": "", "status": "ERROR"}]}
        self.assertEqual(run_qemu.top_level_failures(group),
                         ["%s (ERROR)" % run_qemu.UNNAMED])

    def test_exit_status(self):
        self.assertEqual(run_qemu.exit_status([], []), 0)
        self.assertEqual(run_qemu.exit_status([], ["s.c (FAIL)"]), 1)
        self.assertEqual(run_qemu.exit_status(["oops: x"], []), 1)
        self.assertEqual(run_qemu.verdict([], ["s.c (FAIL)"]), "FAILED")


@needs_kunit_py
class KtapJudgeTest(unittest.TestCase):
    """Whole consoles through judge(), KTAP parsed by the kernel's kunit.py."""

    def judge(self, lines):
        return run_qemu.judge(lines, KUNIT_PY, OWN,
                              expect_suites=["kpkeys", "kpkeys_guest_harness"])

    def assertPasses(self, lines):
        problems, _, suites, failed = self.judge(lines)
        self.assertEqual((problems, failed), ([], []))
        self.assertEqual([st for _, st in suites["kpkeys_guest_harness"]],
                         ["PASS"] * len(GUEST_CASES))
        self.assertEqual(run_qemu.exit_status(problems, failed), 0)
        return suites

    def assertFailsOnly(self, lines, case):
        problems, _, _, failed = self.judge(lines)
        self.assertEqual(problems, [])
        self.assertEqual(failed, [case])
        self.assertEqual(run_qemu.exit_status(problems, failed), 1)

    def test_all_passing(self):
        suites = self.assertPasses(console())
        self.assertEqual(suites["kpkeys"], [("level_roundtrip", "PASS"),
                                            ("guard_restores", "PASS")])

    def test_failing_guest_case_fails(self):
        guest = [(c, c != "fork_and_wait") for c in GUEST_CASES]
        self.assertFailsOnly(console(guest=guest),
                             "kpkeys_guest_harness.fork_and_wait (FAIL)")

    def test_failing_kunit_case_fails(self):
        self.assertFailsOnly(
            console(kunit=[("level_roundtrip", True), ("guard_restores", False)]),
            "kpkeys.guard_restores (FAIL)")

    def test_skipped_case_does_not_fail(self):
        lines = [l.replace("ok 2 guard_restores", "ok 2 guard_restores # SKIP no")
                 for l in console()]
        problems, _, suites, failed = self.judge(lines)
        self.assertEqual((problems, failed), ([], []))
        self.assertIn(("guard_restores", "SKIP"), suites["kpkeys"])

    def test_expect_all_pass_refuses_a_skip(self):
        lines = [l.replace("ok 2 guard_restores", "ok 2 guard_restores # SKIP no")
                 for l in console()]
        problems, _, _, failed = run_qemu.judge(lines, KUNIT_PY, OWN,
                                                expect_all_pass=["kpkeys"])
        self.assertEqual(failed, [])
        self.assertEqual(len(problems), 1)
        self.assertIn("kpkeys.guard_restores did not pass (SKIP)", problems[0])

    def test_expect_all_pass_accepts_all_passing(self):
        problems, _, _, failed = run_qemu.judge(console(), KUNIT_PY, OWN,
                                                expect_all_pass=["kpkeys"])
        self.assertEqual((problems, failed), ([], []))

    def test_expect_all_pass_refuses_a_missing_suite(self):
        problems, _, _, _ = run_qemu.judge(console(), KUNIT_PY, OWN,
                                           expect_all_pass=["kpkeys_conformance"])
        self.assertEqual(problems, ["suite kpkeys_conformance, whose every case "
                                    "must pass, is missing"])

    def test_missing_case_fails(self):
        lines = [l for l in console() if "ok 4 fork_and_wait" not in l]
        problems, _, _, failed = self.judge(lines)
        self.assertTrue(failed)

    def test_split_ok_line_of_the_issue_passes(self):
        line = "    ok 5 anonymous_mmap_is_zeroed_and_writable"
        lines = split(console(), line, len("    ok "), CLOCKSOURCE)
        # As it was: kunit.py sees case 5 missing.
        doc = run_qemu.ktap_documents(lines)[1]
        parsed = run_qemu.parse_ktap(doc, KUNIT_PY)
        self.assertTrue(run_qemu.failed_cases(run_qemu.suites_of(parsed)))
        self.assertPasses(lines)

    def test_split_ok_lines_pass(self):
        lines = console()
        for case in GUEST_CASES:
            line = next(l for l in lines if l.endswith(" " + case))
            lines = split(lines, line, 5, CLOCKSOURCE, "[    2.187100] second")
        lines = split(lines, "ok 1 kpkeys_guest_harness", 2, CLOCKSOURCE)
        lines = split(lines, "KTAP version 1", 4, CLOCKSOURCE)
        self.assertPasses(lines)

    def test_split_not_ok_line_fails(self):
        guest = [(c, c != "debugfs_has_lkdtm_trigger") for c in GUEST_CASES]
        lines = split(console(guest=guest), "    not ok 3 debugfs_has_lkdtm_trigger",
                      len("    not ok "), CLOCKSOURCE)
        self.assertFailsOnly(lines, "kpkeys_guest_harness.debugfs_has_lkdtm_trigger (FAIL)")
        lines = split(console(guest=guest), "    not ok 3 debugfs_has_lkdtm_trigger",
                      len("    not"), CLOCKSOURCE, "[    2.187100] second")
        self.assertFailsOnly(lines, "kpkeys_guest_harness.debugfs_has_lkdtm_trigger (FAIL)")

    def test_split_line_at_its_end_passes(self):
        line = "    ok 4 fork_and_wait"
        self.assertPasses(split(console(), line, len(line), CLOCKSOURCE))

    def test_ovmf_console_passes(self):
        lines = OVMF_PREAMBLE + console()
        lines.insert(len(OVMF_PREAMBLE) + 1, "[    0.000000] efi: EFI v2.7 by EDK II")
        self.assertPasses(lines)
        problems, _, _, failed = run_qemu.judge(
            lines, KUNIT_PY, OWN, expect_lines=["efi: EFI v", "smp: Brought up"],
            expect_suites=["kpkeys", "kpkeys_guest_harness"])
        self.assertEqual((problems, failed), ([], []))


FAKE_QEMU = """#!/bin/sh
[ -n "$FAKE_ARGS" ] && printf '%s\\n' "$@" > "$FAKE_ARGS"
cat "$FAKE_CONSOLE"
"""


@needs_kunit_py
class RunnerExitTest(unittest.TestCase):
    """run-qemu.py as check.sh runs it, with a QEMU that prints a console."""

    def run_qemu(self, lines, *extra, args_seen=None):
        """Run it on a console; @args_seen, a list, gets QEMU's arguments."""
        with tempfile.TemporaryDirectory() as tmp:
            qemu = os.path.join(tmp, "qemu-system-x86_64")
            with open(qemu, "w") as f:
                f.write(FAKE_QEMU)
            os.chmod(qemu, os.stat(qemu).st_mode | stat.S_IXUSR)
            cons = os.path.join(tmp, "console")
            with open(cons, "w") as f:
                f.write("\r\n".join(lines) + "\r\n")
            fake_args = os.path.join(tmp, "args")
            env = dict(os.environ, FAKE_CONSOLE=cons, FAKE_ARGS=fake_args,
                       PATH=tmp + os.pathsep + os.environ.get("PATH", ""))
            log = os.path.join(tmp, "x86_64.log")
            proc = subprocess.run(
                [sys.executable, os.path.join(REPO, "overlay-tools", "run-qemu.py"),
                 "--arch", "x86_64", "--kernel", cons, "--initrd", cons,
                 "--kernel-tree", TREE, "--log", log, "--timeout", "60",
                 "--expect-suite", "kpkeys", "--expect-suite", "kpkeys_guest_harness",
                 *[a.replace("@TMP@", tmp) for a in extra]],
                env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True)
            result = None
            if os.path.exists(log + ".json"):
                with open(log + ".json") as f:
                    result = json.load(f)
            if args_seen is not None and os.path.exists(fake_args):
                with open(fake_args) as f:
                    args_seen += f.read().splitlines()
        return proc.returncode, proc.stdout + proc.stderr, result

    def test_failed_case_fails_the_run(self):
        guest = [(c, c != "fork_and_wait") for c in GUEST_CASES]
        rc, out, result = self.run_qemu(console(guest=guest))
        self.assertNotEqual(rc, 0, out)
        self.assertIn("FAILED: kpkeys_guest_harness.fork_and_wait (FAIL)", out)
        self.assertEqual(result["failed"], ["kpkeys_guest_harness.fork_and_wait (FAIL)"])
        # Counted once by summary.py: in "suites", not again as a problem.
        self.assertEqual(result["problems"], [])

    def test_passing_run_passes(self):
        rc, out, result = self.run_qemu(console())
        self.assertEqual(rc, 0, out)
        self.assertIn("boot ok", out)
        self.assertEqual((result["problems"], result["failed"]), ([], []))

    def test_split_line_passes(self):
        line = "    ok 5 anonymous_mmap_is_zeroed_and_writable"
        rc, out, _ = self.run_qemu(split(console(), line, len("    ok "), CLOCKSOURCE))
        self.assertEqual(rc, 0, out)

    def test_bios_option_boots_the_given_firmware(self):
        # The firmware must exist: the console file stands in for it.
        seen = []
        rc, out, _ = self.run_qemu(OVMF_PREAMBLE + console(),
                                   "--bios", "@TMP@/console",
                                   "--expect-line", "Linux version",
                                   args_seen=seen)
        self.assertEqual(rc, 0, out)
        bios = [seen[i + 1] for i, a in enumerate(seen) if a == "-bios"]
        self.assertEqual(len(bios), 1, seen)
        self.assertTrue(bios[0].endswith("/console"), seen)
        self.assertNotIn("qboot.rom", seen)
        self.assertIn("-kernel", seen)

    def test_default_firmware_is_qboot(self):
        seen = []
        rc, out, _ = self.run_qemu(console(), args_seen=seen)
        self.assertEqual(rc, 0, out)
        self.assertEqual(seen[seen.index("-bios") + 1], "qboot.rom")

    def test_missing_firmware_is_refused(self):
        seen = []
        rc, out, result = self.run_qemu(console(), "--bios", "@TMP@/no-such.fd",
                                        args_seen=seen)
        self.assertNotEqual(rc, 0)
        self.assertIn("firmware", out)
        self.assertIn("no-such.fd does not exist", out)
        self.assertEqual(seen, [])
        self.assertIsNone(result)


if __name__ == "__main__":
    unittest.main()
