#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Boot a kpkeys test kernel under QEMU and judge the console log.

The guest's /init runs the in-guest tests, prints KTAP and reboots; QEMU
runs with -no-reboot, so it exits when the guest is done.  The run fails on
a timeout, a panic, an oops or BUG, a WARNING raised in the project's own
code, a missing "kpkeys-init: done" line, or any failed KTAP test.  KTAP is
parsed with the kernel's own tools/testing/kunit/kunit.py, after guest
lines that a kernel message split on the shared console are put back
together (reassemble()).

Writes <log> (the console) and <log>.json (per-suite results).
"""

import argparse
import json
import os
import re
import select
import shutil
import subprocess
import sys
import tempfile
import time

DONE_MARKER = "kpkeys-init: done"
BASE_APPEND = "panic=-1"

QEMU = {
    "x86_64": {
        "bin": "qemu-system-x86_64",
        # qboot starts faster than SeaBIOS and its MP table lists every vCPU
        # (a tinyconfig kernel has no ACPI).
        "args": ["-M", "q35", "-m", "1024", "-bios", "qboot.rom"],
        "cpu": "max",
        "console": "console=ttyS0",
    },
    "arm64": {
        "bin": "qemu-system-aarch64",
        # The project's QEMU (FEAT_S1POE) has no NIC models: no default NIC.
        "args": ["-M", "virt", "-m", "1024", "-nic", "none"],
        "project_qemu": True,
        "cpu": "max",
        "console": "console=ttyAMA0",
    },
    "powerpc": {
        "bin": "qemu-system-ppc64",
        # powernv9 + skiboot: hash MMU with storage keys, KUAP and KUEP.
        # -nodefaults skips PHB link training; the BMC makes reboot work.
        "args": ["-M", "powernv9", "-nodefaults", "-serial", "mon:stdio",
                 "-device", "ipmi-bmc-sim,id=bmc0",
                 "-device", "isa-ipmi-bt,bmc=bmc0,irq=10"],
        "cpu": None,
        "console": "console=hvc0 disable_radix",
        "project_qemu": True,
    },
}

# Console patterns that fail a run whatever else happened.
FATAL = [
    (re.compile(r"Kernel panic - not syncing"), "kernel panic"),
    (re.compile(r"\bOops\b|Internal error: Oops"), "oops"),
    (re.compile(r"\bBUG: |kernel BUG at"), "BUG"),
    (re.compile(r"general protection fault|Unable to handle kernel"), "kernel fault"),
]
# "WARNING: CPU: 0 PID: 1 at mm/x.c:42 f+0x1/0x2" (before 6.19) and
# "WARNING: mm/x.c:42 at f+0x1/0x2, CPU#0: comm/1" (7.3).
WARNING_RE = re.compile(r"WARNING: (?:.* at )?(\S+?):(\d+)\b")
# A page table that hardened page tables left writable at the default
# level fails any boot, whatever its configuration or mode: the walker's
# reports (the enable-time keying walk and debugfs kpkeys/walk) and a
# boot-time keying that left tables unkeyed.
UNKEYED_RE = re.compile(r"kpkeys: walk: .* (is not keyed|but key -?\d+ in its linear-map PTE)"
                        r"|kpkeys: hardened page tables: keyed \d+ boot page-table pages "
                        r"\([1-9]\d* unkeyed")
# kpkeys' software checker (CONFIG_KPKEYS_CHECK); a test that provokes a
# report on purpose gets it marked, and only those are allowed.
KPKEYS_CHECK_RE = re.compile(r"^(\[[ \d.]+\] )?kpkeys_check: ")
KPKEYS_CHECK_EXPECTED = "(expected by a test)"
KTAP_START = re.compile(r"^(\[[ \d.]+\] )?KTAP version 1$")
# The time prefix of every printk record (CONFIG_PRINTK_TIME: "[%5lu.%06lu]").
PRINTK_TIME = re.compile(r"\[ *\d+\.\d{6}\]")
# kunit.py's case statuses that are not failures.
CASE_OK = ("PASS", "SKIP")
# kunit.py's name for a test whose result line it did not find.
UNNAMED = "<unnamed: a result line is missing>"


def machine_args(arch, bios=None, machine=None):
    """QEMU's machine options for @arch; @bios replaces its -bios firmware.

    With UEFI firmware (OVMF on x86_64), -kernel/-initrd still boot the
    kernel directly: the firmware reads them from fw_cfg and starts the
    kernel's EFI stub.
    """
    args = list(QEMU[arch]["args"])
    if machine:
        args[args.index("-M") + 1] = machine
    if bios:
        if "-bios" in args:
            i = args.index("-bios")
            del args[i:i + 2]
        args += ["-bios", bios]
    return args


def qemu_binary(arch):
    """The QEMU that boots @arch.

    arm64 and powerpc boot the project's QEMU (overlay-tools/build-qemu.sh:
    FEAT_S1POE, and AMR/IAMR writes that take effect at once), found in
    $KPKEYS_QEMU_BINDIR; x86_64, and the others when it is not set, boot
    the qemu-system-* on PATH (Debian's).
    """
    conf = QEMU[arch]
    bindir = os.environ.get("KPKEYS_QEMU_BINDIR")
    if conf.get("project_qemu") and bindir:
        return os.path.join(bindir, conf["bin"])
    return conf["bin"]


def qemu_command(arch, kernel, initrd, append, cpu, smp, icount, bios=None,
                 machine=None):
    conf = QEMU[arch]
    cmd = [qemu_binary(arch), *machine_args(arch, bios, machine),
           "-nographic", "-no-reboot",
           "-kernel", kernel, "-initrd", initrd,
           "-append", "%s %s %s" % (conf["console"], BASE_APPEND, append)]
    cpu = cpu or conf["cpu"]
    if cpu:
        cmd += ["-cpu", cpu]
    if icount:
        # Guest clock = instructions executed: stable benchmark numbers.
        cmd += ["-icount", "shift=0,sleep=off", "-smp", "1"]
    else:
        cmd += ["-smp", str(smp)]
    return cmd


def run(cmd, log_path, timeout, label, on_line=None):
    """Run QEMU, tee the console to @log_path, show progress; return lines.

    @on_line, if given, is called with each line and the host's
    time.monotonic() when it arrived (overlay-tools/bench.py times with it).
    """
    lines = []
    start = time.monotonic()
    last_note = start
    interactive = sys.stderr.isatty()
    with open(log_path, "w", errors="replace") as log, \
            subprocess.Popen(cmd, stdin=subprocess.DEVNULL,
                             stdout=subprocess.PIPE,
                             stderr=subprocess.STDOUT) as proc:
        buf = b""
        timed_out = False
        while True:
            now = time.monotonic()
            if now - start > timeout:
                proc.kill()
                timed_out = True
                break
            ready, _, _ = select.select([proc.stdout], [], [], 1.0)
            if ready:
                chunk = os.read(proc.stdout.fileno(), 65536)
                if not chunk:
                    break
                buf += chunk
                *complete, buf = buf.split(b"\n")
                for raw in complete:
                    line = raw.decode(errors="replace").rstrip("\r")
                    lines.append(line)
                    log.write(line + "\n")
                    if on_line:
                        on_line(line, time.monotonic())
                log.flush()
            if now - last_note >= (2 if interactive else 30):
                last_note = now
                tail = lines[-1][:60] if lines else "(no output yet)"
                msg = "[%s] %3d s  %s" % (label, now - start, tail)
                if interactive:
                    sys.stderr.write("\r\033[K" + msg)
                else:
                    sys.stderr.write(msg + "\n")
                sys.stderr.flush()
        if buf:
            lines.append(buf.decode(errors="replace"))
            log.write(lines[-1] + "\n")
        proc.wait()
        if interactive:
            sys.stderr.write("\r\033[K")
    return lines, timed_out, proc.returncode, time.monotonic() - start


def project_files(listing):
    if not listing:
        return set()
    with open(listing) as f:
        return {l.strip() for l in f if l.strip()}


# A KUnit case that provokes a WARNING on purpose prints this just before
# it (mm/tests/kpkeys_test.h); only the next WARNING is let through, and
# only before the case's result line (a WARN_ONCE() that stays silent must
# not excuse a later WARNING).
EXPECTED_WARNING = "kpkeys-test: the next WARNING is expected"
KTAP_RESULT_RE = re.compile(r"^(\[[ \d.]+\] )?\s*(not )?ok \d+ ")
# A guest test that provokes an oops on purpose (LKDTM, in a child it
# kills) prints the first line before and the second after: the oops,
# BUG and fault lines in between are let through.  A panic never is.
EXPECTED_OOPS = "kpkeys-test: the next oops is expected"
EXPECTED_OOPS_END = "kpkeys-test: the expected oops is over"


def find_problems(lines, own_files):
    problems = []
    notes = []
    expect_warning = False
    expect_oops = False
    for line in lines:
        if EXPECTED_WARNING in line:
            expect_warning = True
            continue
        if KTAP_RESULT_RE.match(line):
            expect_warning = False
        if EXPECTED_OOPS in line or EXPECTED_OOPS_END in line:
            expect_oops = EXPECTED_OOPS in line
            continue
        for pat, what in FATAL:
            if pat.search(line):
                if expect_oops and what != "kernel panic":
                    notes.append("%s expected by a test: %s" % (what, line.strip()))
                else:
                    problems.append("%s: %s" % (what, line.strip()))
                break
        if UNKEYED_RE.search(line):
            problems.append("unkeyed page table: %s" % line.strip())
        if KPKEYS_CHECK_RE.search(line) and KPKEYS_CHECK_EXPECTED not in line:
            problems.append("kpkeys checker report: %s" % line.strip())
        m = WARNING_RE.search(line)
        if m:
            path = m.group(1)
            if expect_warning:
                notes.append("WARNING expected by a test: %s" % line.strip())
                expect_warning = False
            elif any(path == f or path.endswith("/" + f) for f in own_files):
                problems.append("WARNING in project code: %s" % line.strip())
            else:
                notes.append("WARNING outside project code: %s" % line.strip())
    return problems, notes


# printk's marker before a record it writes again (a console handover
# interrupted it); the line before the marker is the cut first copy.
PRINTK_REPLAY = "** replaying previous printk message **"


def reassemble(lines):
    """Undo kernel messages that split a guest line on the shared console.

    The guest's output and the kernel's printk records share one serial
    console, and a record can be written while the guest is in the middle
    of a line ("    ok " + "[    2.187011] clocksource: ..." + "5 name").
    A record is written whole and ends the console line, so on the console
    a line that does not start with the time prefix but has one further on
    is the start of a guest line, then a kernel record; the guest line goes
    on with the next console line that has no time prefix (after any more
    kernel records, which may split it again).  Returns (lines, joined):
    each kernel record as a line of its own, in console order, then the
    guest line it split, whole, and how many guest lines were put back
    together.  Text before the first kernel record of the log (firmware
    output) is left as it is.  A record cut short by a console handover and
    written again after printk's replay marker is kept once, whole.
    """
    out = []
    pending = None
    kernel_up = False
    joined = 0
    for line in lines:
        if line.strip() == PRINTK_REPLAY:
            # A console was registered while this record was being
            # written: printk writes it again, whole, on the next line.
            if out and pending is None:
                out.pop()
            continue
        m = PRINTK_TIME.search(line)
        if m and m.start() == 0:
            kernel_up = True
            out.append(line)
        elif m and kernel_up:
            # The start of a guest line, then a kernel record.
            pending = (pending or "") + line[:m.start()].rstrip("\r")
            out.append(line[m.start():])
        elif pending is not None:
            out.append(pending + line)
            pending = None
            joined += 1
        else:
            if m:
                kernel_up = True
            out.append(line)
    if pending is not None:
        # The log ended before the rest of the guest line.
        out.append(pending)
    return out, joined


# What KUnit prints inside a KTAP document, once the printk time prefix is
# off: KTAP lines at any nesting level (4 spaces each), and a test's own
# log lines, indented by whole levels.  Anything else is a kernel message
# that landed in the middle ("Freeing initrd memory: 20K" between a nested
# "KTAP version 1" and its "# Subtest:", a stack trace, the " #1" of a CPU
# coming up), which kunit.py cannot tell apart from broken KTAP.
KTAP_LINE = re.compile(r"^(    )*(KTAP version \d+|TAP version \d+|\d+\.\.\d+|ok |not ok |#)"
                       r"|^(    )+\S")


def ktap_documents(lines):
    """Split the console into top-level KTAP documents, without the kernel
    messages that interleaved with them (find_problems() judges those)."""
    docs = []
    for line in lines:
        if KTAP_START.match(line):
            docs.append([])
        if not docs:
            continue
        m = PRINTK_TIME.match(line)
        body = line[m.end():] if m else line
        if m and body.startswith(" "):
            body = body[1:]         # printk puts one space after the stamp
        if KTAP_LINE.match(body):
            docs[-1].append(line)
    return docs


def parse_ktap(doc, kunit_py):
    with tempfile.NamedTemporaryFile("w", suffix=".log", delete=False) as f:
        f.write("\n".join(doc) + "\n")
        src = f.name
    out = src + ".json"
    try:
        subprocess.run([sys.executable, kunit_py, "parse", "--json=" + out, src],
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                       check=False)
        with open(out) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None
    finally:
        for p in (src, out):
            if os.path.exists(p):
                os.unlink(p)


def suites_of(group):
    """Flatten kunit.py JSON into {suite: [(case, status)]}."""
    result = {}
    for sub in group.get("sub_groups", []):
        cases = [(c["name"], c["status"]) for c in sub.get("test_cases", [])]
        nested = suites_of(sub)
        if cases or not nested:
            result[sub["name"]] = cases
        result.update(nested)
    return result


def top_level_failures(group):
    """Failed KTAP tests of @group's own level (suites_of() skips them).

    A top-level test without subtests, or one whose result kunit.py found
    missing (named ""), is a case of the root group, not of a suite.
    """
    return ["%s (%s)" % (c["name"] or UNNAMED, c["status"])
            for c in group.get("test_cases", []) if c["status"] not in CASE_OK]


def failed_cases(suites):
    """["suite.case (STATUS)"] of every case that neither passed nor skipped."""
    return ["%s.%s (%s)" % (s, n or UNNAMED, st)
            for s, cases in sorted(suites.items())
            for n, st in cases if st not in CASE_OK]


def judge(lines, kunit_py, own_files=(), expect_lines=(), forbid_lines=(),
          expect_pass=(), expect_suites=(), expect_all_pass=()):
    """Judge a console log; returns (problems, notes, suites, failed).

    @lines are the console lines as QEMU printed them; guest lines split by
    kernel messages are put back together first (reassemble()).  @failed
    lists the failed KTAP cases ("suite.case (STATUS)"); a run fails when
    there is a problem or a failed case (exit_status()).
    """
    lines, joined = reassemble(lines)
    problems, notes = find_problems(lines, own_files)
    if joined:
        notes.append("%d guest line(s) split by kernel messages were put "
                     "back together" % joined)
    if not any(DONE_MARKER in l for l in lines):
        problems.append("guest did not finish (no '%s' line)" % DONE_MARKER)

    suites = {}
    for doc in ktap_documents(lines):
        parsed = parse_ktap(doc, kunit_py)
        if parsed is None:
            problems.append("kunit.py could not parse a KTAP document")
            continue
        found = suites_of(parsed)
        for f in top_level_failures(parsed):
            problems.append("top-level KTAP test failed: %s, in the document "
                            "of %s" % (f, ", ".join(sorted(found)) or "no suite"))
        errors = parsed.get("misc", {}).get("errors", 0)
        if errors and not failed_cases(found):
            notes.append("kunit.py found %d error(s) in the KTAP of %s"
                         % (errors, ", ".join(sorted(found)) or "a document"))
        suites.update(found)
    for text in expect_lines:
        if not any(text in l for l in lines):
            problems.append("the console never printed '%s'" % text)
    for text in forbid_lines:
        if any(text in l for l in lines):
            problems.append("the console printed '%s'" % text)
    for spec in expect_pass:
        suite, _, case = spec.partition(".")
        status = dict(suites.get(suite, [])).get(case)
        if status != "PASS":
            problems.append("%s did not pass (%s)" % (spec, status or "missing"))
    for name in expect_all_pass:
        cases = suites.get(name)
        if not cases:
            problems.append("suite %s, whose every case must pass, %s"
                            % (name, "ran no test" if name in suites else "is missing"))
            continue
        for case, status in cases:
            if status != "PASS":
                problems.append("%s.%s did not pass (%s): every case of %s must "
                                "pass here" % (name, case or UNNAMED, status, name))
    for name in expect_suites:
        if name not in suites:
            problems.append("missing results of suite %s" % name)
        elif not suites[name]:
            problems.append("suite %s ran no test" % name)
    return problems, notes, suites, failed_cases(suites)


def verdict(problems, failed):
    if problems or failed:
        return "FAILED"
    return "boot ok"


def exit_status(problems, failed):
    return 1 if problems or failed else 0


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--arch", required=True, choices=sorted(QEMU))
    ap.add_argument("--kernel", required=True)
    ap.add_argument("--initrd", required=True)
    ap.add_argument("--kernel-tree", required=True,
                    help="tree whose tools/testing/kunit/kunit.py parses KTAP")
    ap.add_argument("--log", required=True)
    ap.add_argument("--append", default="", help="extra kernel parameters")
    ap.add_argument("--cpu", help="QEMU -cpu value (default per arch)")
    ap.add_argument("--bios", metavar="PATH",
                    help="firmware image for QEMU's -bios, replacing the "
                    "default (x86_64: qboot.rom), e.g. /usr/share/ovmf/OVMF.fd")
    ap.add_argument("--machine", metavar="MACHINE",
                    help="QEMU -M value (default per arch), e.g. virt,virtualization=on")
    ap.add_argument("--smp", type=int, default=2)
    ap.add_argument("--icount", action="store_true")
    ap.add_argument("--timeout", type=int, default=300)
    ap.add_argument("--expect-suite", action="append", default=[],
                    help="a KTAP suite that must appear in the results")
    ap.add_argument("--expect-line", action="append", default=[],
                    help="text that must appear in the console log")
    ap.add_argument("--forbid-line", action="append", default=[],
                    help="text that must not appear in the console log")
    ap.add_argument("--expect-pass", action="append", default=[],
                    metavar="SUITE.CASE",
                    help="a test case that must pass (not skip)")
    ap.add_argument("--expect-all-pass", action="append", default=[],
                    metavar="SUITE",
                    help="a suite whose every case must pass (none may skip)")
    ap.add_argument("--project-files",
                    help="file listing the project's kernel paths (for WARNINGs)")
    ap.add_argument("--label", default=None)
    args = ap.parse_args()

    label = args.label or args.arch
    qemu_bin = qemu_binary(args.arch)
    if not shutil.which(qemu_bin):
        if os.sep in qemu_bin:
            sys.exit("run-qemu: error: %s not found (KPKEYS_QEMU_BINDIR names the "
                     "project's QEMU: build it with overlay-tools/build-qemu.sh)"
                     % qemu_bin)
        sys.exit("run-qemu: error: %s not found (run overlay-tools/install-deps.sh)"
                 % qemu_bin)
    for path in (args.kernel, args.initrd):
        if not os.path.exists(path):
            sys.exit("run-qemu: error: %s does not exist" % path)
    if args.bios and not os.path.exists(args.bios):
        sys.exit("run-qemu: error: firmware %s does not exist" % args.bios)
    kunit_py = os.path.join(args.kernel_tree, "tools/testing/kunit/kunit.py")

    cmd = qemu_command(args.arch, args.kernel, args.initrd, args.append,
                       args.cpu, args.smp, args.icount, args.bios,
                       args.machine)
    print("[%s] %s" % (label, " ".join(cmd)), file=sys.stderr)
    lines, timed_out, rc, wall = run(cmd, args.log, args.timeout, label)

    problems, notes, suites, failed = judge(
        lines, kunit_py, project_files(args.project_files),
        expect_lines=args.expect_line, forbid_lines=args.forbid_line,
        expect_pass=args.expect_pass, expect_suites=args.expect_suite,
        expect_all_pass=args.expect_all_pass)
    if timed_out:
        problems.insert(0, "timeout after %d s" % args.timeout)
    if rc not in (0, None) and not timed_out:
        problems.append("QEMU exited with status %d" % rc)

    # Failed cases are in "suites" (summary.py counts them there), so they
    # are listed apart from the problems, which summary.py counts as well.
    result = {"arch": args.arch, "label": label, "wall_s": round(wall, 1),
              "problems": problems, "failed": failed, "notes": notes,
              "suites": {s: [{"name": n, "status": st} for n, st in cases]
                         for s, cases in suites.items()}}
    with open(args.log + ".json", "w") as f:
        json.dump(result, f, indent=1)

    for s, cases in sorted(suites.items()):
        counts = {k: sum(1 for _, st in cases if st == k)
                  for k in ("PASS", "FAIL", "SKIP", "ERROR")}
        state = "FAIL" if counts["FAIL"] or counts["ERROR"] else "ok"
        print("[%s] %-34s %-4s %d passed, %d failed, %d skipped"
              % (label, s, state, counts["PASS"],
                 counts["FAIL"] + counts["ERROR"], counts["SKIP"]))
        for n, st in cases:
            if st not in ("PASS",):
                print("[%s]     %s %s" % (label, st, n))
    for n in notes:
        print("[%s] note: %s" % (label, n))
    for p in problems:
        print("[%s] PROBLEM: %s" % (label, p))
    for f in failed:
        print("[%s] FAILED: %s" % (label, f))
    print("[%s] %s in %.0f s, console log: %s"
          % (label, verdict(problems, failed), wall, args.log))
    sys.exit(exit_status(problems, failed))


if __name__ == "__main__":
    main()
