#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Run the kpkeys benchmark suite and write the report.

For each architecture with a kpkeys backend, two kernels of the same
tree are built (the row sets headline and full):

  bench           the production kernel: the test configuration without
                  what only the tests use (configs/bench-lean.config),
                  without CONFIG_KPKEYS_CHECK and KUnit, at -O2
                  (configs/bench-prod.config).  Every timing comes from
                  it.  It has CONFIG_KPKEYS_STATS without
                  CONFIG_KPKEYS_STATS_DEFAULT_ON: its timing boots do not
                  count, and one more boot per mode, with kpkeys_stats=on,
                  gives the kpkeys counters per operation and the
                  assertions on them;
  bench-nokpkeys  the same without kpkeys (configs/bench-nokpkeys.config):
                  the second baseline, "what the feature costs when off",
                  and the baseline of the rows a boot parameter cannot
                  change (null syscall, lseek1, pipe ping-pong).

Each kernel is booted under QEMU with -icount shift=0,sleep=off -smp 1,
BOOTS times per kpkeys_hardened_pgtables= mode (off, nobatch, on); in each
boot the benchmark (the series' tools/testing/selftests/kpkeys/kpkeys_bench,
built with nolibc) measures every row of the set REPS times after
a warm-up.  The row sets (--set):

  headline  the 14 rows of the cover letter's cross-architecture table,
            every mode and the kernel without kpkeys, 4 repetitions (the
            default);
  full      every row: the size sweep and the 2-vCPU rows too, 5
            repetitions;
  quick     CI's reduced set (--quick): smaller sizes and loops, no size
            sweep; it boots make check's kernels (the production kernel of
            QUICK_PROD_ARCHES, the test kernel elsewhere) and builds no
            kernel without kpkeys.

The metric is guest time, which under -icount counts executed
instructions (1 ns each), whatever else the host runs: so the boots
under -icount run --jobs at once, beside the builds of the next
architecture's kernels.  Host wall-clock time per measurement is
recorded as a secondary number.  The rows on two CPUs at once (SMP_ROWS) get boots
of their own, as many, with -smp 2 and no -icount: their time is wall
clock, noisy, and marked only from a larger floor (SMP_FLOOR_PCT); they
run after all the others, one at a time.  An architecture without a
backend times the baseline only.

Modes an architecture cannot run (no kpkeys backend, or a CPU without
the feature) are reported as "n/a: <reason>", with the baseline measured
all the same.  A difference to the baseline is marked (R) regression or
(I) improvement only when a two-sided Mann-Whitney U test gives p < 0.05
and the difference of the medians is at least FLOOR_PCT: under icount the
samples are nearly deterministic, and p alone would mark +0.01%.

Output, in --out (default build/bench, build/bench/quick for the quick
set): <arch>.json (every sample and the summary), results.csv, <arch>.md
(per-arch table), report.md (per-arch and cross-arch tables),
overhead.svg and overhead.png (gnuplot), run.json (what ran, for
overlay-tools/results.py), and per boot <arch>-<mode>-<kernel>*.log (the
console) and .jsonl (kpkeys_bench's JSON Lines).

'bench.py report FILE...' writes the same outputs from kpkeys_bench -j
files of any machines (see report_main()).
"""

import argparse
import csv
import importlib.util
import itertools
import json
import math
import os
import re
import shutil
import statistics
import subprocess
import sys
import threading
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ARCHES = ["x86_64", "arm64", "powerpc"]
# The architectures whose production kernel the quick run times (make
# check builds it and boots it with the stress workload,
# CONFIG_KPKEYS_CHECK off); the quick run builds no kernel without kpkeys.
QUICK_PROD_ARCHES = ("arm64", "powerpc")
MODES = ["off", "nobatch", "on"]
MODE_TITLE = {"nobatch": "Without batching", "on": "With batching"}

# Row id in the guest -> (benchmark, result class), in report order.
ROWS = [
    ("fork_h0", "fork", "fork: h:0"),
    ("fork_h1", "fork", "fork: h:1"),
    ("munmap_h0", "munmap", "munmap: h:0"),
    ("munmap_h1", "munmap", "munmap: h:1"),
    ("fork_h0_16m", "fork", "fork: h:0 16 MiB"),
    ("fork_h0_256m", "fork", "fork: h:0 256 MiB"),
    ("fork_h1_16m", "fork", "fork: h:1 16 MiB"),
    ("fork_h1_256m", "fork", "fork: h:1 256 MiB"),
    ("munmap_h0_16m", "munmap", "munmap: h:0 16 MiB"),
    ("munmap_h0_256m", "munmap", "munmap: h:0 256 MiB"),
    ("munmap_h1_16m", "munmap", "munmap: h:1 16 MiB"),
    ("munmap_h1_256m", "munmap", "munmap: h:1 256 MiB"),
    ("vmalloc_fix_p1_h0", "vmalloc", "fix_size_alloc_test p:1 h:0"),
    ("vmalloc_fix_p4_h0", "vmalloc", "fix_size_alloc_test p:4 h:0"),
    ("vmalloc_fix_p16_h0", "vmalloc", "fix_size_alloc_test p:16 h:0"),
    ("vmalloc_fix_p64_h0", "vmalloc", "fix_size_alloc_test p:64 h:0"),
    ("vmalloc_fix_p256_h0", "vmalloc", "fix_size_alloc_test p:256 h:0"),
    ("vmalloc_fix_p16_h1", "vmalloc", "fix_size_alloc_test p:16 h:1"),
    ("vmalloc_fix_p64_h1", "vmalloc", "fix_size_alloc_test p:64 h:1"),
    ("vmalloc_fix_p256_h1", "vmalloc", "fix_size_alloc_test p:256 h:1"),
    ("vmalloc_fix_p512_h0", "vmalloc", "fix_size_alloc_test p:512 h:0"),
    ("vmalloc_fix_p512_h1", "vmalloc", "fix_size_alloc_test p:512 h:1"),
    ("vmalloc_fix_p1024_h1", "vmalloc", "fix_size_alloc_test p:1024 h:1"),
    ("vmalloc_random_p1", "vmalloc", "random_size_alloc_test p:1"),
    ("vmalloc_vm_map_ram_p1", "vmalloc", "vm_map_ram_test p:1"),
    ("null_syscall", "syscall", "null syscall (getppid)"),
    ("lseek", "syscall", "lseek1 (private file)"),
    ("pipe_ctxsw", "sched", "pipe ping-pong (2 switches/op)"),
    ("spawn", "system", "spawn (fork + exec + exit)"),
    ("page_fault1", "system", "page_fault1 (one fault/op)"),
    ("pgtable_churn", "churn", "mmap/touch/mprotect/munmap 256 KiB"),
    ("fork_smp2", "smp", "2 x fork 16 MiB h:0 at once, 2 vCPUs, wall clock (noisy)"),
    ("vmalloc_fix_p64_smp2", "smp", "2 threads x vmalloc p:64, 2 vCPUs, wall clock (noisy)"),
]
ROW_IDS = [r[0] for r in ROWS]
COUNTERS = ["reg_writes", "reg_writes_entry", "reg_writes_sched",
            "pgtables_switches", "pgtables_switches_skipped",
            "lazy_mmu_sections", "ptps_keyed", "set_memory_pkey_calls",
            "pool_refills"]
# The row sets (--set).  headline: the rows of the cover letter's
# cross-architecture table (series/bench.md).
HEADLINE_ROWS = [
    "fork_h0", "fork_h1", "munmap_h0", "munmap_h1",
    "vmalloc_fix_p1_h0", "vmalloc_fix_p4_h0", "vmalloc_fix_p16_h0",
    "vmalloc_fix_p64_h0", "vmalloc_fix_p256_h0",
    "vmalloc_random_p1", "vmalloc_vm_map_ram_p1",
    "null_syscall", "lseek", "spawn"]
SETS = ["headline", "full", "quick"]
# Rows whose cost a boot parameter cannot show (entry code): their mode
# columns are against the kernel without kpkeys, not against "off".
NOKPKEYS_BASE_ROWS = {"null_syscall", "lseek", "pipe_ctxsw"}
# Left out of --quick (CI) unless asked for with --rows: the size sweep,
# whose 64 MiB point the quick run has, and the vmalloc h:1 rows that are
# not the one the huge-mapping assertion needs (p:512).
FULL_ONLY_ROWS = {r for r in (
    "fork_h0_16m fork_h0_256m fork_h1_16m fork_h1_256m "
    "munmap_h0_16m munmap_h0_256m munmap_h1_16m munmap_h1_256m "
    "vmalloc_fix_p16_h1 vmalloc_fix_p64_h1 vmalloc_fix_p256_h1 "
    "vmalloc_fix_p1024_h1").split()}
# The smallest vmalloc(..., use_huge=1) that test_vmalloc gets mapped with
# huge entries, per architecture (4K pages): x86-64 and arm64 map PMDs from
# 512 pages (arm64 also contiguous PTEs from 16); powerpc maps huge vmalloc
# only with the radix MMU, never with the hash MMU the tests boot.
HUGE_VMALLOC_FROM = {"x86_64": 512, "arm64": 512, "powerpc": None}
# The rows of the huge-mapping assertion (counter_problems()): the counting
# boots of a set without them run them too, on the architectures that map
# huge vmalloc.
HUGE_ASSERTION_ROWS = ["vmalloc_fix_p512_h0", "vmalloc_fix_p512_h1"]
FLOOR_PCT = 0.5         # smallest |difference| marked (R)/(I)
# Rows on two CPUs at once (the pool lock, TLB shootdowns, which -smp 1
# hides): timed in their own boots with -smp 2 and no -icount, by wall
# clock, which the host's load moves; marked only from a larger floor.
SMP_ROWS = {"fork_smp2", "vmalloc_fix_p64_smp2"}
SMP_FLOOR_PCT = 5.0
MIN_REPS = 4            # fewer cannot reach p < 0.05 with the exact test
MIN_BOOTS = 2           # boot-to-boot variation must be seen
VARIANTS = {            # kernel -> (build dir suffix, extra config fragments)
    # make check's kernels: the quick set (CI) times them.
    "test": ("", []),
    "prod": ("-prod", ["bench-prod.config"]),
    # The headline and full sets' kernels: production, without what only
    # the tests use (bench-lean.config); counters built in, counting only
    # in the boots given kpkeys_stats=on.
    "bench": ("-bench", ["bench-lean.config", "bench-prod.config"]),
    "bench-nokpkeys": ("-bench-nokpkeys", ["bench-lean.config", "bench-prod.config",
                                           "bench-nokpkeys.config"]),
}
# What a boot adds to the command line to count (CONFIG_KPKEYS_STATS).
COUNT_ARG = "kpkeys_stats=on"
SET_REPS = {"headline": MIN_REPS, "full": 5, "quick": MIN_REPS}
SET_TITLE = {"headline": "Headline (the cover letter's rows)",
             "full": "Full (every row)", "quick": "Quick (reduced sizes)"}


def set_rows(name):
    """The row ids of row set @name, in report order."""
    if name == "headline":
        return [r for r in ROW_IDS if r in HEADLINE_ROWS]
    if name == "quick":
        return [r for r in ROW_IDS if r not in FULL_ONLY_ROWS]
    if name == "full":
        return list(ROW_IDS)
    raise ValueError("unknown row set %r (the sets are %s)" % (name, ", ".join(SETS)))


def counting_rows(arch, wanted):
    """The rows of the counting boots: the timed ones, and those the
    huge-mapping assertion needs on an architecture that maps huge
    vmalloc, when any vmalloc row is timed."""
    extra = [r for r in HUGE_ASSERTION_ROWS if r not in wanted] \
        if HUGE_VMALLOC_FROM.get(arch) and any(r.startswith("vmalloc_fix") for r in wanted) \
        else []
    return [r for r in ROW_IDS if r in wanted or r in extra]


def result_set(res):
    """The row set of a result file (older ones only say whether quick)."""
    return res.get("set") or ("quick" if res.get("quick") else "full")


JSON_PREFIX = "# kpkeys-bench-json: "
LINE_RE = re.compile(r"kpkeys-bench: (begin|result|error|skip|start|done)\s*(.*)$")


def load_run_qemu():
    spec = importlib.util.spec_from_file_location(
        "run_qemu", os.path.join(REPO, "overlay-tools", "run-qemu.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def die(msg):
    sys.stderr.write("bench.py: error: %s\n" % msg)
    sys.exit(1)


def note(msg):
    sys.stderr.write("bench.py: %s\n" % msg)
    sys.stderr.flush()


def shell_lib(expr):
    return subprocess.run(["bash", "-c", ". %s/overlay-tools/lib.sh && %s"
                           % (REPO, expr)], check=True, text=True,
                          stdout=subprocess.PIPE).stdout.strip()


def variant_dir(arch, variant):
    return shell_lib("build_dir %s" % arch) + VARIANTS[variant][0]


def build(arch, tree, variant="test"):
    out = variant_dir(arch, variant)
    frags = [os.path.join(REPO, "overlay-tools", "configs", f) for f in VARIANTS[variant][1]]
    env = dict(os.environ, LLVM="", KPKEYS_O=out)
    alive = os.path.join(REPO, "overlay-tools", "alive.sh")
    for args in ([alive, "%s: building the %s kernel in %s" % (arch, variant, os.path.relpath(out, REPO)),
                  "--", os.path.join(REPO, "overlay-tools", "build.sh"), arch, tree] + frags,
                 [os.path.join(REPO, "overlay-tools", "mkinitrd.sh"), arch, tree, out]):
        if subprocess.run(args, env=env).returncode:
            die("%s: %s of the %s kernel failed (see above)" % (
                arch, "the build" if args[0] == alive else "mkinitrd.sh", variant))
    return out


def use_project_qemu(rq, arch):
    """arm64 and powerpc boot the project's QEMU, as make check does.

    overlay-tools/build-qemu.sh builds it once and caches it;
    KPKEYS_QEMU_BINDIR, if set, names another directory of qemu-system-*.
    """
    if not rq.QEMU[arch].get("project_qemu") or os.environ.get("KPKEYS_QEMU_BINDIR"):
        return
    r = subprocess.run([os.path.join(REPO, "overlay-tools", "alive.sh"),
                        "the project's QEMU (built once per machine)", "--",
                        os.path.join(REPO, "overlay-tools", "build-qemu.sh")],
                       stdout=subprocess.PIPE, text=True)
    if r.returncode or not r.stdout.strip():
        die("%s boots the project's QEMU, and overlay-tools/build-qemu.sh could "
            "not build it (see above)" % arch)
    os.environ["KPKEYS_QEMU_BINDIR"] = r.stdout.strip()


def provenance(tree, out, qemu):
    """Where a result comes from: enough to rebuild and rerun it."""
    def run(cmd):
        r = subprocess.run(cmd, capture_output=True, text=True)
        return r.stdout.strip() if r.returncode == 0 else "unknown"
    try:
        with open(os.path.join(out, ".config"), "rb") as f:
            import hashlib
            config = hashlib.sha256(f.read()).hexdigest()[:16]
    except OSError:
        config = "unknown"
    ver = run([qemu, "--version"]).splitlines()
    return {"series_commit": run(["git", "-C", tree, "rev-parse", "--short=12", "HEAD"]),
            "config_sha256": config,
            "machine": "QEMU TCG: " + (ver[0] if ver else "unknown"),
            "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}


def kconfig(out, name):
    try:
        with open(os.path.join(out, ".config")) as f:
            return any(l.strip() == "CONFIG_%s=y" % name for l in f)
    except OSError:
        return False


# Statistics

def mann_whitney_p(a, b):
    """Exact two-sided p-value of the Mann-Whitney U test (small samples)."""
    n1, n2 = len(a), len(b)
    if not n1 or not n2:
        return 1.0
    pooled = sorted(a + b)
    # Mid-ranks for ties.
    ranks = {}
    i = 0
    while i < len(pooled):
        j = i
        while j < len(pooled) and pooled[j] == pooled[i]:
            j += 1
        ranks[pooled[i]] = (i + j + 1) / 2.0
        i = j
    r1 = sum(ranks[x] for x in a)
    u = r1 - n1 * (n1 + 1) / 2.0
    mean = n1 * n2 / 2.0
    allranks = [ranks[x] for x in pooled]
    if math.comb(n1 + n2, n1) <= 20000:
        # Enumerate every assignment of the pooled ranks to sample a.
        extreme = total = 0
        for combo in itertools.combinations(range(n1 + n2), n1):
            uc = sum(allranks[k] for k in combo) - n1 * (n1 + 1) / 2.0
            total += 1
            if abs(uc - mean) >= abs(u - mean) - 1e-9:
                extreme += 1
        return extreme / total
    # Normal approximation for large samples.
    sd = math.sqrt(n1 * n2 * (n1 + n2 + 1) / 12.0)
    z = (abs(u - mean) - 0.5) / sd if sd else 0.0
    return math.erfc(z / math.sqrt(2))


def summarise(samples):
    per_op = [s["ns"] / s["ops"] for s in samples]
    boots = {}
    for s in samples:
        boots.setdefault(s.get("boot", 0), []).append(s["ns"] / s["ops"])
    return {
        "n": len(per_op),
        "median": statistics.median(per_op),
        "min": min(per_op),
        "max": max(per_op),
        "per_op": per_op,
        "boot_medians": [statistics.median(v) for _, v in sorted(boots.items())],
    }


# One boot

def parse_result(rest):
    """A "result <row> <rep> ns=.. ops=.. [k=v ...]" record, or None if it
    is not one (garbled on the console)."""
    f = rest.split()
    try:
        vals = dict(kv.split("=", 1) for kv in f[2:])
        s = {"row": f[0], "rep": int(f[1]), "ns": int(vals["ns"]),
             "ops": int(vals["ops"])}
        if "thp_kb" in vals:
            s["thp_kb"] = int(vals["thp_kb"])
        s["counters"] = {c: int(vals[c]) for c in COUNTERS if c in vals}
    except (IndexError, KeyError, ValueError):
        return None
    return s if s["ops"] > 0 else None


def boot(rq, arch, out, mode, reps, quick, timeout, logdir, cpu, rows, tag="",
         smp=1, extra="", progress=None):
    """One boot: -smp 1 under -icount, or @smp vCPUs by wall clock."""
    append = ("kpkeys_hardened_pgtables=%s kunit.enable=0 kpkeys_init.bench=1 "
              "kpkeys_bench.reps=%d%s%s%s" % (mode, reps,
                                              " kpkeys_bench.quick=1" if quick else "",
                                              " kpkeys_bench.rows=" + ",".join(rows)
                                              if rows != ROW_IDS else "",
                                              " " + extra if extra else ""))
    image = os.path.join(out, shell_lib("kernel_image %s" % arch))
    cmd = rq.qemu_command(arch, image, os.path.join(out, "initrd.gz"), append,
                          cpu, smp, smp == 1)
    label = "%s %s%s" % (arch, mode, tag)
    stamps = {}
    progress_rows = {"rows": 0}

    def on_line(line, t):
        m = LINE_RE.search(line)
        if not m:
            return
        kind, rest = m.groups()
        if kind in ("begin", "result"):
            row, rep = rest.split()[:2]
            stamps[(kind, row, rep)] = t
            if kind == "result" and rep == "0":
                progress_rows["rows"] += 1
                note("[%s] row %d/%d: %s%s" % (label, progress_rows["rows"],
                                              len(rows), row,
                                              progress.row_done() if progress else ""))
        elif kind == "error":
            note("[%s] %s" % (label, line.strip()))

    log = os.path.join(logdir, "%s-%s%s.log" % (arch, mode, tag.replace(" ", "-")))
    note("[%s] booting (%s)" % (label, " ".join(
        cmd[:1] + (["-icount", "shift=0,sleep=off", "-smp", "1"] if smp == 1
                   else ["-smp", str(smp), "(wall clock)"]))))
    lines, timed_out, rc, wall = rq.run(cmd, log, timeout, label, on_line=on_line)
    # A kernel message can split a guest line on the shared console (with
    # two vCPUs, often): put the benchmark's lines back together first.
    lines, _ = rq.reassemble(lines)
    problems, _ = rq.find_problems(lines, set())
    # The program's own JSON Lines (kpkeys_bench -j -), as it writes them
    # on a real machine: the input of 'bench.py report'.
    with open(log[:-len(".log")] + ".jsonl", "w") as f:
        for line in lines:
            i = line.find(JSON_PREFIX)
            if i < 0:
                continue
            rec = line[i + len(JSON_PREFIX):].strip()
            try:
                json.loads(rec)
            except ValueError:
                # A kernel message cut into the record on the console.
                note("[%s] a JSON record was garbled on the console, left out: %s"
                     % (label, rec[:80]))
                continue
            f.write(rec + "\n")
    if timed_out:
        problems.append("timed out after %d s (see %s)" % (timeout, log))
    samples, errors, skipped, start = {}, {}, {}, None
    for line in lines:
        m = LINE_RE.search(line)
        if not m:
            continue
        kind, rest = m.groups()
        if kind == "start":
            start = dict(kv.split("=", 1) for kv in rest.split())
        elif kind == "error":
            row, what = (rest.split(None, 1) + [""])[:2]
            errors[row] = what
        elif kind == "skip":
            row, what = (rest.split(None, 1) + [""])[:2]
            skipped[row] = what
        elif kind == "result":
            s = parse_result(rest)
            if s is None:
                note("[%s] a result line was garbled on the console, left out: %s"
                     % (label, rest[:80]))
                continue
            row, f = s.pop("row"), rest.split()
            if s["rep"] == 0:
                continue        # warm-up
            b = stamps.get(("begin", row, f[1]))
            e = stamps.get(("result", row, f[1]))
            if b is not None and e is not None:
                s["wall_s"] = round(e - b, 4)
            samples.setdefault(row, []).append(s)
    if start is None and not problems:
        problems.append("the guest benchmark did not start (see %s)" % log)
    mode_line = next((l for l in lines if "kpkeys: hardened page tables: " in l
                      and ("software only" in l or " off" in l
                           or " nobatch" in l or " on" in l)), "")
    software = next((l.split("software only", 1)[1].strip(" ()")
                     .split(")")[0] for l in lines if "software only (" in l), None)
    cmdline = next((l.split("Command line:", 1)[1].strip() for l in lines
                    if "Command line:" in l), append)
    return {"samples": samples, "errors": errors, "skipped": skipped,
            "problems": problems,
            "start": start, "wall_s": round(wall, 1), "log": log,
            "mode_line": mode_line.strip(), "software_only": software,
            "cmdline": cmdline}


def mode_problem(mode, mode_line):
    """The mode the boot reports must be the mode requested."""
    m = re.search(r"hardened page tables: (\w+)", mode_line)
    if not m or m.group(1) != mode:
        return "booted with kpkeys_hardened_pgtables=%s, but the kernel says %r" % (
            mode, mode_line or "nothing about hardened page tables")
    return None


def counter_problems(counting, arch=None):
    """What the counters of the counting boots must show, per mode."""
    problems = []
    huge = HUGE_VMALLOC_FROM.get(arch)
    nb = counting.get("nobatch", {}).get("rows", {})
    small, big = nb.get("vmalloc_fix_p512_h0"), nb.get("vmalloc_fix_p512_h1")
    if huge == 512 and small and big:
        # Huge mapped: a PMD per 512 pages instead of 512 PTEs.
        if big.get("pgtables_switches", 0) * 8 > small.get("pgtables_switches", 0):
            problems.append("nobatch: vmalloc_fix_p512_h1: %.2f page-table switches/op "
                            "against %.2f for h:0: not huge mapped"
                            % (big.get("pgtables_switches", 0),
                               small.get("pgtables_switches", 0)))
    for mode, r in counting.items():
        if "na" in r:
            continue
        for row, c in sorted(r["rows"].items()):
            if mode == "off":
                for k in ("reg_writes", "reg_writes_entry", "reg_writes_sched",
                          "pgtables_switches"):
                    if c.get(k):
                        problems.append("off: row %s: %s = %.2f/op, expected 0 "
                                        "(nothing switches when off)" % (row, k, c[k]))
            elif mode == "nobatch":
                # A nested guard finds the context in place and counts as
                # skipped in every mode; only a batched section is off.
                if c.get("lazy_mmu_sections"):
                    problems.append("nobatch: row %s: lazy_mmu_sections = %.2f/op, "
                                    "expected 0 (batching is off)"
                                    % (row, c["lazy_mmu_sections"]))
        if mode == "on":
            for row in ("fork_h0", "fork_h1", "munmap_h0"):
                c, n = r["rows"].get(row), nb.get(row, {})
                if c is None:
                    continue
                if c.get("pgtables_switches_skipped", 0) <= \
                        n.get("pgtables_switches_skipped", 0):
                    problems.append("on: row %s: no guard skipped by batching "
                                    "(pgtables_switches_skipped %.2f/op, %.2f/op "
                                    "without batching)"
                                    % (row, c.get("pgtables_switches_skipped", 0),
                                       n.get("pgtables_switches_skipped", 0)))
            # munmap h:1 zaps a PTE-mapped THP per lazy MMU section with
            # one guard (one per batch), which enters the level for the
            # section: nothing is left to skip.  Batching must not add
            # switches there either.
            c, n = r["rows"].get("munmap_h1"), nb.get("munmap_h1")
            if c is not None and n is not None and \
                    c.get("pgtables_switches", 0) > n.get("pgtables_switches", 0) * 1.05 + 1:
                problems.append("on: row munmap_h1: %.2f page-table switches/op "
                                "against %.2f without batching"
                                % (c.get("pgtables_switches", 0),
                                   n.get("pgtables_switches", 0)))
    return problems


# Reports

def rows_run(res):
    """The ROWS entries this run measured (all of them in results from
    before "rows_run" was recorded)."""
    run = set(res.get("rows_run", ROW_IDS))
    return [r for r in ROWS if r[0] in run]


def fmt_ns(v):
    if v >= 1e6:
        return "%.2f ms" % (v / 1e6)
    if v >= 1e3:
        return "%.1f us" % (v / 1e3)
    return "%.0f ns" % v


def fmt_pct(c, spread=True):
    mark = {"R": "(R) ", "I": "(I) "}.get(c.get("mark", ""), "")
    out = "%s%+.2f%%" % (mark, c["overhead_pct"])
    if "lo_pct" in c and spread:
        out += " [%+.2f, %+.2f]" % (c["lo_pct"], c["hi_pct"])
    if c.get("vs") == "nokpkeys":
        out += " *"
    return out


def short_na(why):
    """A reason without its explanation in brackets."""
    return why.split(" (", 1)[0]


def cell(res, row, mode, spread=True):
    """One cell of a table; @spread: with the fastest and slowest sample
    in brackets, and the reasons for n/a in full."""
    na = (lambda why: "n/a: " + why) if spread else (lambda why: "n/a: " + short_na(why))
    if mode == "nokpkeys":
        nk = res.get("nokpkeys", {})
        if "na" in nk or not nk:
            return na(nk.get("na", "not run"))
        c = res.get("off_vs_nokpkeys", {}).get(row)
        if c:
            return fmt_pct(c, spread)
        for r in (res["modes"].get("off", {}), nk):
            if row in r.get("skipped", {}):
                return na(r["skipped"][row])
        return "missing"
    r = res["modes"].get(mode, {})
    if "na" in r:
        return na(r["na"])
    if row in r.get("skipped", {}):
        return na(r["skipped"][row])
    c = r.get("rows", {}).get(row)
    if not c:
        return "missing"
    if "overhead_pct" not in c:
        return fmt_ns(c["median"])
    return fmt_pct(c, spread)


def arch_table(arch, res):
    kernel = res.get("timing_kernel", "test")
    out = ["### %s" % arch, "", res["description"] if "description" in res else
           "Overhead relative to the baseline (kpkeys_hardened_pgtables=off) "
           "of the same build (the %s kernel), median of %d samples (%d boots "
           "x %d in-guest repetitions) per cell; positive = slower; in "
           "brackets the fastest and slowest sample against the baseline "
           "median. (R)/(I): regression/improvement, Mann-Whitney U p < 0.05 "
           "and |difference| >= %.1f%%. \"off vs no kpkeys\": the off mode "
           "against the same tree built without kpkeys, the cost of the "
           "feature when off. *: against the kernel without kpkeys (entry "
           "code, which no boot parameter turns off). Time = guest "
           "instructions (QEMU -icount shift=0, -smp 1), except for the "
           "rows marked 2 vCPUs: booted apart with -smp 2 and no -icount, "
           "timed by wall clock, which the host's load moves; those are "
           "marked from |difference| >= %.0f%%." % (
               kernel, res["reps"] * res.get("boots", 1), res.get("boots", 1),
               res["reps"], FLOOR_PCT, SMP_FLOOR_PCT), "",
           "| Benchmark | Result class | Baseline (median) | off vs no kpkeys "
           "| Without batching | With batching |",
           "|---|---|---|---|---|---|"]
    last = None
    for row, bench, cls in rows_run(res):
        base = res["modes"].get("off", {}).get("rows", {}).get(row)
        out.append("| %s | %s | %s | %s | %s | %s |" % (
            bench if bench != last else "", cls,
            fmt_ns(base["median"]) + "/op" if base else cell(res, row, "off"),
            cell(res, row, "nokpkeys"),
            cell(res, row, "nobatch"), cell(res, row, "on")))
        last = bench
    return "\n".join(out) + "\n"


def counters_table(results):
    out = ["| Arch | Mode | Benchmark | " + " | ".join(
        c + "/op" for c in COUNTERS) + " |",
        "|---|---|---|" + "---|" * len(COUNTERS)]
    for arch, res in results.items():
        for mode in MODES:
            r = res.get("counting", {}).get(mode, {})
            for row in ROW_IDS:
                c = r.get("rows", {}).get(row)
                if not c:
                    continue
                out.append("| %s | %s | %s | %s |" % (
                    arch, mode, row, " | ".join(
                        "%.2f" % c.get(k, float("nan")) for k in COUNTERS)))
    return "\n".join(out) + "\n"


def cross_legend(results):
    """The legend of the cross-architecture table (series/bench.md takes
    it with the table)."""
    per_arch = {}
    for arch, res in results.items():
        per_arch[arch] = ("median of %d samples, %d boots x %d repetitions" % (
            res["reps"] * res.get("boots", 1), res.get("boots", 1), res["reps"])
            if "reps" in res else "median of every timed repetition of every run")
    samples = sorted(set(per_arch.values()))
    if len(samples) > 1:
        samples = ["%s: %s" % kv for kv in per_arch.items()]
    clocks = sorted({res.get("clock", "guest instructions under QEMU -icount")
                     for res in results.values()})
    if len(clocks) == 1:
        clock = clocks[0]
    else:
        clock = "; ".join("%s: %s" % (a, res.get("clock", "?"))
                          for a, res in results.items())
    wall = any(r[0] in SMP_ROWS for res in results.values() for r in rows_run(res))
    return ("Overhead relative to the baseline (kpkeys_hardened_pgtables=off) "
            "of the same kernel (%s); positive = slower. (R)/(I): regression/"
            "improvement, Mann-Whitney U p < 0.05 and |difference| >= %.1f%%%s. "
            "\"off vs no kpkeys\": the off mode against the same tree built "
            "without kpkeys, the cost of the feature when off. *: against the "
            "kernel without kpkeys (entry code, which no boot parameter turns "
            "off). Time: %s%s. The spread of each cell is in the "
            "per-architecture tables." % (
                "; ".join(samples), FLOOR_PCT,
                " (%.0f%% for the 2-vCPU rows)" % SMP_FLOOR_PCT if wall else "",
                clock, ", except for the 2-vCPU rows: wall clock" if wall else ""))


def cross_table(results):
    """The cross-architecture table: one row per benchmark row, per
    architecture the off-vs-no-kpkeys, without-batching and with-batching
    overheads (the layout of the cover letter's, series/bench.md)."""
    cols = [(a, m) for a in results for m in ("nokpkeys", "nobatch", "on")]
    names = {"nokpkeys": "off vs no kpkeys", "nobatch": "without batching",
             "on": "with batching"}
    out = ["| Benchmark | Result class | " + " | ".join(
        "%s %s" % (a, names[m]) for a, m in cols) + " |",
        "|---|---|" + "---|" * len(cols)]
    last = None
    for row, bench, cls in ROWS:
        if not any(row in results[a].get("rows_run", ROW_IDS) for a in results):
            continue
        out.append("| %s | %s | %s |" % (
            bench if bench != last else "", cls,
            " | ".join(cell(results[a], row, m, spread=False) for a, m in cols)))
        last = bench
    return "\n".join(out) + "\n"


def write_csv(results, path):
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["arch", "kernel", "mode", "row", "benchmark", "result_class", "n",
                    "median_ns_per_op", "min_ns_per_op", "max_ns_per_op",
                    "boot_medians_ns_per_op", "overhead_pct", "against",
                    "p_value", "mark", "median_wall_s"]
                   + [c + "_per_op" for c in COUNTERS])
        for arch, res in results.items():
            runs = [(res.get("timing_kernel", "test"), m, res["modes"][m]) for m in MODES]
            if "rows" in res.get("nokpkeys", {}):
                runs.append(("nokpkeys", "off", res["nokpkeys"]))
            for kern, mode, r in runs:
                cnt = res.get("counting", {}).get(mode, {}).get("rows", {}) \
                    if kern != "nokpkeys" else {}
                for row, bench, cls in rows_run(res):
                    if "na" in r or row in r.get("skipped", {}):
                        why = r["na"] if "na" in r else r["skipped"][row]
                        w.writerow([arch, kern, mode, row, bench, cls, 0, "", "", "", "",
                                    "n/a: " + why, "", "", "", ""] + [""] * len(COUNTERS))
                        continue
                    c = r["rows"].get(row)
                    if not c:
                        continue
                    walls = [s["wall_s"] for s in r["samples"][row] if "wall_s" in s]
                    cpo = cnt.get(row, {})
                    w.writerow([arch, kern, mode, row, bench, cls, c["n"],
                                "%.1f" % c["median"], "%.1f" % c["min"], "%.1f" % c["max"],
                                " ".join("%.1f" % x for x in c.get("boot_medians", [])),
                                "%.3f" % c["overhead_pct"] if "overhead_pct" in c else "",
                                c.get("vs", ""),
                                "%.4f" % c["p"] if "p" in c else "", c.get("mark", ""),
                                "%.4f" % statistics.median(walls) if walls else ""]
                               + ["%.3f" % cpo[k] if k in cpo else "" for k in COUNTERS])


def write_report(results, problems, outdir, title, intro):
    """Every output of a report, into @outdir: <arch>.json, <arch>.md,
    results.csv, overhead.svg and overhead.png, report.md (printed too).
    'make bench-all' and the report step of 'make bench-report' both
    write theirs here.  Returns the paths written."""
    os.makedirs(outdir, exist_ok=True)
    paths = []
    for arch, res in results.items():
        for name, write in (("%s.json" % arch, lambda f: json.dump(res, f, indent=1)),
                            ("%s.md" % arch, lambda f: f.write(arch_table(arch, res)))):
            with open(os.path.join(outdir, name), "w") as f:
                write(f)
            paths.append(os.path.join(outdir, name))
    write_csv(results, os.path.join(outdir, "results.csv"))
    paths.append(os.path.join(outdir, "results.csv"))
    charts = chart(results, outdir)
    report = [title, "", intro, ""]
    for arch, res in results.items():
        report.append(arch_table(arch, res))
    report += ["## Cross-architecture overhead", "", cross_legend(results), "",
               cross_table(results)]
    if any(res.get("counting") for res in results.values()):
        report += ["## kpkeys counters per operation (kernel with CONFIG_KPKEYS_STATS)",
                   "", counters_table(results)]
    prov = ["| Arch | Kernel | Built from | Config | Machine | Date |",
            "|---|---|---|---|---|---|"]
    for arch, res in results.items():
        for kern, p in res.get("provenance", {}).items():
            prov.append("| %s | %s | %s | %s | %s | %s |" % (
                arch, kern, p["series_commit"], p["config_sha256"], p["machine"], p["date"]))
    report += ["## Provenance", "", "\n".join(prov), ""]
    if charts:
        report += ["![overhead per architecture](%s)" % os.path.basename(charts[0]), ""]
    if problems:
        report += ["## Problems", ""] + ["- " + p for p in problems] + [""]
    with open(os.path.join(outdir, "report.md"), "w") as f:
        f.write("\n".join(report))
    print("\n".join(report))
    return [os.path.join(outdir, "report.md")] + paths + charts


# The chart: one panel per architecture, a group of bars per row.

CHART_SERIES = [    # (what, key title, bar colour, text colour), top to bottom
    ("on", "with batching (on vs off)", "#1b5e9e", "#1b5e9e"),
    ("nobatch", "without batching (nobatch vs off)", "#e8871e", "#b8600a"),
    ("nokpkeys", "off vs no kpkeys (the cost when off)", "#9a9a9a", "#5e5e5e"),
]


def chart_label(row):
    _, bench, cls = ROWS[ROW_IDS.index(row)]
    label = cls.split(", 2 vCPUs")[0]
    if bench == "vmalloc":
        label = "vmalloc " + label
    return label + (" *" if row in NOKPKEYS_BASE_ROWS else "")


def chart_point(res, row, what):
    """(median, fastest, slowest) overhead in % of one bar, or None."""
    if what == "nokpkeys":
        c = res.get("off_vs_nokpkeys", {}).get(row)
    else:
        r = res["modes"].get(what, {})
        c = None if "na" in r else r.get("rows", {}).get(row)
    if not c or "overhead_pct" not in c:
        return None
    v = c["overhead_pct"]
    return v, c.get("lo_pct", v), c.get("hi_pct", v)


def chart_gap(res, row):
    """Why a row of an architecture has no bar, or ''."""
    if row not in res.get("rows_run", ROW_IDS):
        return "not run"
    for what in ("off", "on", "nobatch"):
        r = res["modes"].get(what, {})
        if row in r.get("skipped", {}):
            return "n/a: " + short_na(r["skipped"][row])
    off = res["modes"].get("off", {})
    if "rows" in off and row not in off["rows"]:
        return "no result"
    return ""


def chart_panel_notes(res):
    """The bars an architecture cannot have at all, and why."""
    out = []
    for what, title, _, _ in CHART_SERIES:
        r = res.get("nokpkeys", {}) if what == "nokpkeys" else res["modes"].get(what, {})
        if "na" in r:
            out.append("%s: n/a (%s)" % (title.split(" (")[0], short_na(r["na"])))
    return out


def gp_str(s):
    """@s as a gnuplot string (double-quoted: a newline starts a line)."""
    return '"%s"' % s.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def chart(results, outdir):
    """overhead.svg and overhead.png in @outdir (gnuplot); returns the
    paths written."""
    for name in ("overhead.svg", "overhead.png"):
        if os.path.exists(os.path.join(outdir, name)):
            os.unlink(os.path.join(outdir, name))     # an earlier run's
    gp = shutil.which("gnuplot")
    if not gp:
        note("gnuplot not found: no chart (install gnuplot-nox)")
        return []
    arches = list(results)
    run = [r for r in ROW_IDS if any(r in res.get("rows_run", ROW_IDS)
                                     for res in results.values())]
    blocks = [(rows, smp) for rows, smp in (
        ([r for r in run if r not in SMP_ROWS], False),
        ([r for r in run if r in SMP_ROWS], True)) if rows]
    if not any(chart_point(res, row, what) for res in results.values() for row in run
               for what, _, _, _ in CHART_SERIES):
        note("no overhead to draw (no mode but the baseline ran): no chart")
        return []
    # Geometry in pixels: row labels on the left, a panel per architecture.
    label_w, panel_w, gap_w, right_w = 300, 400, 30, 30
    head_h, title_h, axis_h, block_gap = 100, 46, 52, 26
    row_h = 40
    width = label_w + len(arches) * panel_w + (len(arches) - 1) * gap_w + right_w
    height = head_h + sum(title_h + len(rows) * row_h + axis_h for rows, _ in blocks) \
        + block_gap * (len(blocks) - 1) + 10
    dat = os.path.join(outdir, "overhead.dat")
    script = ["set datafile missing '?'",
              "set style fill solid 0.9 noborder",
              "set errorbars small",
              "set border 3 lc rgb '#555555'",
              "set tics nomirror out scale 0.6",
              "set grid xtics lc rgb '#dddddd' lt 1",
              "unset key",
              "rx(v, hi) = (hi > v ? hi : v) < 0 ? 0 : (hi > v ? hi : v)",
              "lo0(v) = v < 0 ? v : 0",
              "hi0(v) = v > 0 ? v : 0",
              "pct(v) = abs(v) < 0.05 ? '0.0%' : sprintf('%+.1f%%', v)",
              "set multiplot title %s font ',13'" % gp_str(
                  "kpkeys hardened page tables: overhead against the same kernel "
                  "booted with kpkeys_hardened_pgtables=off\n"
                  "bars: median overhead, positive = slower; "
                  "*: against the kernel without kpkeys (entry code)")]
    index = 0
    top = height - head_h
    with open(dat, "w") as f:
        for bi, (rows, smp) in enumerate(blocks):
            vals = [0.0]
            for res in results.values():
                for row in rows:
                    for what, _, _, _ in CHART_SERIES:
                        p = chart_point(res, row, what)
                        if p:
                            vals += list(p)
            xmin, xmax = min(vals), max(vals + [1.0])
            span = xmax - xmin
            xmin, xmax = xmin - 0.03 * span, xmax + 0.16 * span
            y1 = top - title_h
            y0 = y1 - len(rows) * row_h
            for ai, arch in enumerate(arches):
                res = results[arch]
                for i, row in enumerate(rows):
                    cols = [str(i)]
                    for what, _, _, _ in CHART_SERIES:
                        p = chart_point(res, row, what)
                        cols += ["%.4f" % x for x in p] if p else ["?"] * 3
                    cols.append('"%s"' % chart_gap(res, row).replace('"', "'"))
                    f.write(" ".join(cols) + "\n")
                f.write("\n\n")
                x0 = label_w + ai * (panel_w + gap_w)
                what = ("2 CPUs at once, wall clock (noisy)" if smp else
                        res.get("clock", "guest instructions under QEMU -icount"))
                notes = chart_panel_notes(res) if bi == 0 else []
                script += [
                    "unset object",
                    "set lmargin at screen %.5f" % (x0 / width),
                    "set rmargin at screen %.5f" % ((x0 + panel_w) / width),
                    "set tmargin at screen %.5f" % (y1 / height),
                    "set bmargin at screen %.5f" % (y0 / height),
                    "set title %s font ',11'" % gp_str(
                        "%s: %s" % (arch, what) + ("\n" + "; ".join(notes) if notes
                                                    else "")),
                    "set xrange [%.4f:%.4f]" % (xmin, xmax),
                    "set yrange [%.1f:-0.5]" % (len(rows) - 0.5),
                    "set xlabel %s" % gp_str("overhead %% (%s)" % (
                        "wall clock" if smp else "guest instructions"
                        if "guest instructions" in what else "time")),
                    "set format x '%+.0f%%'" if span >= 5 else "set format x '%+.1f%%'",
                ]
                if ai == 0:
                    script.append("set ytics (%s) font ',10'" % ", ".join(
                        "%s %d" % (gp_str(chart_label(r)), i) for i, r in enumerate(rows)))
                else:
                    script.append("set ytics (%s) format ''" % ", ".join(
                        "'' %d" % i for i in range(len(rows))))
                for i in range(0, len(rows), 2):
                    script.append("set object rect from graph 0, first %.1f to graph 1, "
                                  "first %.1f behind fc rgb '#f1f4f8' fs solid 1.0 noborder"
                                  % (i - 0.5, i + 0.5))
                script.append("set arrow 1 from first 0, graph 0 to first 0, graph 1 "
                              "nohead lc rgb '#333333' lw 1 front")
                script.append("unset label")
                if bi == 0 and ai == 0:
                    # The key, in its own band under the title: every
                    # series, even one no architecture has.
                    ky = (height - 74) / height
                    kx = label_w
                    for k, (_, title, colour, _) in enumerate(CHART_SERIES):
                        script += [
                            "set object rect from screen %.5f, screen %.5f to screen "
                            "%.5f, screen %.5f fc rgb '%s' fs solid 0.9 noborder front"
                            % (kx / width, ky - 6 / height, (kx + 26) / width,
                               ky + 6 / height, colour),
                            "set label %s at screen %.5f, screen %.5f left font ',11'"
                            % (gp_str(title), (kx + 34) / width, ky)]
                        kx += 34 + 8 * len(title) + 40
                    script.append("set label %s at screen %.5f, screen %.5f left font ',11'"
                                  % (gp_str("|-| fastest to slowest sample"),
                                     kx / width, ky))
                plots = []
                h = 0.13
                for k, (wh, title, colour, tcolour) in enumerate(CHART_SERIES):
                    c = 2 + 3 * k
                    dy = (k - 1) * 0.29
                    plots.append(
                        "%s index %d using %d:($1%+.2f):(lo0($%d)):(hi0($%d)):($1%+.2f):"
                        "($1%+.2f) with boxxyerror fc rgb '%s' title %s"
                        % (gp_str(dat), index, c, dy, c, c, dy - h, dy + h, colour,
                           gp_str(title)))
                    plots.append(
                        "'' index %d using %d:($1%+.2f):%d:%d with xerrorbars pt 0 ps 0 "
                        "lw 1 lc rgb '#222222' notitle" % (index, c, dy, c + 1, c + 2))
                    plots.append(
                        "'' index %d using (rx($%d, $%d)):($1%+.2f):(pct($%d)) "
                        "with labels left offset char 0.4,0 font ',8' tc rgb '%s' notitle"
                        % (index, c, c + 2, dy, c, tcolour))
                plots.append("'' index %d using (0):1:11 with labels left offset char 0.5,0 "
                             "font ',9' tc rgb '#555555' notitle" % index)
                script.append("plot " + ", \\\n     ".join(plots))
                index += 1
            top = y0 - axis_h - block_gap
    script.append("unset multiplot")
    body = "\n".join(script) + "\n"
    written = []
    for name, terms in (("overhead.svg", ["svg size %d,%d dynamic noenhanced "
                                          "font 'sans,10' background rgb 'white'"]),
                        ("overhead.png", ["pngcairo size %d,%d noenhanced font 'sans,10' "
                                          "background rgb 'white'",
                                          "png size %d,%d noenhanced font 'sans,10' "
                                          "background rgb 'white'"])):
        path = os.path.join(outdir, name)
        for term in terms:
            r = subprocess.run([gp], input="set terminal %s\nset output %s\n" % (
                term % (width, height), gp_str(path)) + body,
                text=True, capture_output=True)
            if r.returncode == 0 and os.path.exists(path) and os.path.getsize(path):
                written.append(path)
                break
            note("gnuplot (%s) failed: %s" % (term.split()[0], r.stderr.strip()[-300:]))
    return written


def compare(c, base):
    """Overhead of summary @c against summary @base, in place."""
    c["overhead_pct"] = (c["median"] / base["median"] - 1) * 100
    c["lo_pct"] = (c["min"] / base["median"] - 1) * 100
    c["hi_pct"] = (c["max"] / base["median"] - 1) * 100
    c["p"] = mann_whitney_p(c["per_op"], base["per_op"])
    floor = SMP_FLOOR_PCT if c.get("smp") else FLOOR_PCT
    c["mark"] = ("R" if c["median"] > base["median"] else "I") \
        if c["p"] < 0.05 and abs(c["overhead_pct"]) >= floor else ""


def analyse(res):
    base = res["modes"].get("off", {}).get("rows", {})
    nok = res.get("nokpkeys", {}).get("rows", {})
    for mode in MODES:
        r = res["modes"].get(mode)
        if not r or "na" in r:
            continue
        for row, c in r["rows"].items():
            c["smp"] = row in SMP_ROWS
            if mode == "off":
                if row in nok:
                    d = {k: v for k, v in c.items()}
                    compare(d, nok[row])
                    res.setdefault("off_vs_nokpkeys", {})[row] = d
                continue
            if row in NOKPKEYS_BASE_ROWS and row in nok:
                compare(c, nok[row])
                c["vs"] = "nokpkeys"
            elif row in base:
                compare(c, base[row])
                c["vs"] = "off"


def counters_per_op(samples):
    """kpkeys counters per operation of one row of a counting boot."""
    rows = {}
    for row, ss in samples.items():
        ops = sum(s["ops"] for s in ss)
        if ops and all(s.get("counters") for s in ss):
            rows[row] = {k: sum(s["counters"].get(k, 0) for s in ss) / ops
                         for k in COUNTERS}
    return rows


def fmt_duration(seconds):
    seconds = int(round(seconds))
    if seconds >= 60:
        return "%d min %02d s" % (seconds // 60, seconds % 60)
    return "%d s" % seconds


class BootPool:
    """Runs the boots of a benchmark run.

    Under -icount a boot's time is the guest's instruction count, which
    the host's load does not change: the boots under -icount run up to
    @jobs at once, beside one another and beside the kernel builds still
    going on.  The boots timed by wall clock (two vCPUs, no -icount) run
    after all of them, one at a time, with nothing else running.  Each
    row a boot finishes reports the rows done of all those planned, and
    an estimate of the time left.
    """

    def __init__(self, jobs):
        self.sem = threading.Semaphore(jobs)
        self.lock = threading.Lock()
        self.threads, self.deferred = [], []
        self.planned = self.done = 0
        self.t0 = None
        self.all_planned = False

    def submit(self, job):
        with self.lock:
            self.planned += len(job["rows"])
        if job["smp"] > 1:
            self.deferred.append(job)
            return
        t = threading.Thread(target=self._run, args=(job,), daemon=True)
        self.threads.append(t)
        t.start()

    def _call(self, job):
        with self.lock:
            if self.t0 is None:
                self.t0 = time.monotonic()
        try:
            job["result"] = job["fn"](self)
        except Exception as e:      # reported as the boot's problem
            job["error"] = "%s: %s" % (type(e).__name__, e)

    def _run(self, job):
        with self.sem:
            self._call(job)

    def row_done(self):
        with self.lock:
            self.done += 1
            done, planned = self.done, self.planned
            elapsed = time.monotonic() - (self.t0 or time.monotonic())
        left = (planned - done) * elapsed / done if done else 0
        return " (all boots: %d/%d rows%s; about %s left)" % (
            done, planned, "" if self.all_planned else " planned so far",
            fmt_duration(left))

    def wait(self):
        self.all_planned = True
        for t in self.threads:
            t.join()
        if self.deferred:
            note("the boots timed by wall clock, one at a time: %d" % len(self.deferred))
        for job in self.deferred:
            self._call(job)


def plan_boots(rq, arch, out, mode, nboots, reps, args, timeout, outdir, wanted,
               kernel, extra=""):
    """The boots of one kernel in one mode: BOOTS boots of the rows under
    -icount, and as many of the rows on two CPUs (-smp 2, wall clock)."""
    parts = [(rows, smp) for rows, smp in
             (([r for r in wanted if r not in SMP_ROWS], 1),
              ([r for r in wanted if r in SMP_ROWS], 2)) if rows]
    jobs = []
    for n, (rows, smp) in itertools.product(range(nboots), parts):
        tag = " %s" % kernel + (" boot%d" % (n + 1) if nboots > 1 else "") + \
            (" smp%d" % smp if smp > 1 else "")

        def fn(pool, rows=rows, smp=smp, tag=tag):
            return boot(rq, arch, out, mode, reps, args.quick, timeout, outdir, None,
                        rows, tag, smp, extra, pool)
        jobs.append({"n": n, "rows": rows, "smp": smp, "fn": fn})
    return jobs


def run_boots(rq, arch, out, mode, nboots, reps, args, timeout, outdir, wanted,
              problems, kernel, extra="", expect_stats=None):
    """plan_boots(), the boots one after another, collect_boots()."""
    jobs = plan_boots(rq, arch, out, mode, nboots, reps, args, timeout, outdir,
                      wanted, kernel, extra)
    pool = BootPool(1)
    for job in jobs:
        pool.submit(job)
    pool.wait()
    return collect_boots(jobs, arch, mode, kernel, wanted, problems, expect_stats)


def collect_boots(jobs, arch, mode, kernel, wanted, problems, expect_stats=None):
    """The samples of finished boots, pooled and tagged by boot.

    @expect_stats, "yes" or "no", is what the boots' kpkeys_bench must
    find: counters in the counting boots, none in the timing boots of a
    kernel that counts only when asked to.
    """
    pooled, skipped, boots, software = {}, {}, [], None
    for job in jobs:
        n, smp = job["n"], job["smp"]
        where = "%s %s (%s kernel, boot %d%s)" % (
            arch, mode, kernel, n + 1, ", %d vCPUs" % smp if smp > 1 else "")
        b = job.get("result")
        if b is None:
            problems.append("%s: the boot failed: %s" % (where, job.get("error", "no result")))
            continue
        for p in b["problems"]:
            problems.append("%s: %s" % (where, p))
        for row, what in b["errors"].items():
            problems.append("%s: row %s: %s" % (where, row, what))
        if kernel != "nokpkeys" and not b["software_only"]:
            p = mode_problem(mode, b["mode_line"])
            if p:
                problems.append("%s: %s" % (where, p))
        got = (b["start"] or {}).get("stats")
        if expect_stats and got and got != expect_stats:
            problems.append("%s: %s" % (where, (
                "the counters count in a timing boot: the timings include them "
                "(CONFIG_KPKEYS_STATS_DEFAULT_ON, or %s on the command line?)" % COUNT_ARG)
                if expect_stats == "no" else (
                "no counters in a counting boot: %s did not switch them on "
                "(no /sys/kernel/debug/kpkeys/stats)" % COUNT_ARG)))
        software = software or b["software_only"]
        for row, ss in b["samples"].items():
            for x in ss:
                x["boot"] = n + 1
            pooled.setdefault(row, []).extend(ss)
        skipped.update(b["skipped"])
        boots.append({"wall_s": b["wall_s"], "log": b["log"], "cmdline": b["cmdline"],
                      "mode_line": b["mode_line"], "start": b["start"], "smp": smp})
        note("[%s] %d rows in %.0f s" % (where, len(b["samples"]), b["wall_s"]))
    for row in wanted:
        if row not in pooled and row not in skipped and \
                not any("row %s:" % row in p for p in problems):
            problems.append("%s %s (%s kernel): row %s produced no result"
                            % (arch, mode, kernel, row))
    return pooled, skipped, boots, software


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tree", default=os.path.join(REPO, "build", "tree"))
    ap.add_argument("--arch", action="append", choices=ARCHES,
                    help="architecture (repeatable; default: all three)")
    ap.add_argument("--set", choices=SETS,
                    help="row set: headline (default: the %d rows of the cover "
                    "letter's table), full (every row) or quick (CI: reduced "
                    "sizes and loops)" % len(HEADLINE_ROWS))
    ap.add_argument("--quick", action="store_true", help="the same as --set quick")
    ap.add_argument("--reps", type=int,
                    help="in-guest repetitions per boot (default: headline %d, "
                    "full %d, quick %d; at least %d)" % (
                        SET_REPS["headline"], SET_REPS["full"], SET_REPS["quick"],
                        MIN_REPS))
    ap.add_argument("--boots", type=int, default=MIN_BOOTS,
                    help="boots per kernel and mode (default and minimum %d)" % MIN_BOOTS)
    ap.add_argument("--out", help="report directory (default build/bench, "
                    "build/bench/quick for the quick set)")
    ap.add_argument("--timeout", type=int, help="seconds per boot")
    ap.add_argument("--results-json",
                    help="also write a summary.py result file (one case per row and mode)")
    ap.add_argument("--no-build", action="store_true", help="use the existing builds")
    ap.add_argument("--rows", help="comma-separated row ids (default: the set's): %s"
                    % ", ".join(ROW_IDS))
    ap.add_argument("--modes", help="comma-separated modes (default: off,nobatch,on)")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1,
                    help="boots under -icount at once (default: the CPUs, %(default)s)")
    ap.add_argument("--reuse", action="append", default=[], choices=ARCHES,
                    help="take this arch's results from <out>/<arch>.json of an "
                    "earlier run instead of booting it (to redo one arch and "
                    "rewrite the cross-arch report)")
    args = ap.parse_args()

    if args.quick and args.set not in (None, "quick"):
        die("--quick and --set %s: --quick is --set quick" % args.set)
    rowset = "quick" if args.quick else (args.set or "headline")
    # The guest's reduced sizes and loops (kpkeys_bench -q).
    args.quick = rowset == "quick"
    arches = args.arch or ARCHES
    wanted = args.rows.split(",") if args.rows else set_rows(rowset)
    bad = [r for r in wanted if r not in ROW_IDS]
    if bad:
        die("--rows: unknown row(s) %s (known: %s)" % (", ".join(bad), ", ".join(ROW_IDS)))
    modes = args.modes.split(",") if args.modes else MODES
    bad = [m for m in modes if m not in MODES]
    if bad:
        die("--modes: %s: the modes are %s" % (args.modes, ", ".join(MODES)))
    if "off" not in modes:
        note("--modes without off: this run has no baseline of its own; combine "
             "its .jsonl files with those of a run that has one (bench.py report)")
    reps = args.reps if args.reps is not None else SET_REPS[rowset]
    if not MIN_REPS <= reps <= 50:
        die("--reps %d: must be between %d and 50 (with fewer, the exact "
            "Mann-Whitney test cannot reach p < 0.05)" % (reps, MIN_REPS))
    if args.jobs < 1:
        die("--jobs %d: at least one boot at a time" % args.jobs)
    if not MIN_BOOTS <= args.boots <= 10:
        die("--boots %d: must be between %d and 10 (one boot shows no "
            "boot-to-boot variation)" % (args.boots, MIN_BOOTS))
    outdir = args.out or os.path.join(REPO, "build", "bench", *(["quick"] if args.quick else []))
    os.makedirs(outdir, exist_ok=True)
    timeout = args.timeout or (900 if args.quick else 3600)
    rq = load_run_qemu()
    if "on_line" not in rq.run.__code__.co_varnames:
        die("overlay-tools/run-qemu.py has no on_line hook")

    results = {}
    problems = []
    t0 = time.monotonic()
    started = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    pool = BootPool(args.jobs)
    pending = []
    for arch in arches:
        if arch in args.reuse:
            path = os.path.join(outdir, "%s.json" % arch)
            try:
                with open(path) as f:
                    results[arch] = json.load(f)
            except (OSError, ValueError) as e:
                die("--reuse %s: cannot read %s: %s" % (arch, path, e))
            if result_set(results[arch]) != rowset:
                die("--reuse %s: %s is from a run of the %s set, this one runs "
                    "the %s set" % (arch, path, result_set(results[arch]), rowset))
            note("[%s] results of an earlier run: %s" % (arch, path))
            continue
        # The boots of an earlier run of this arch are not this run's.
        for name in os.listdir(outdir):
            if re.match(r"%s-(%s)-.*\.(log|jsonl)$" % (arch, "|".join(MODES)), name):
                os.unlink(os.path.join(outdir, name))

        def kernel(variant):
            if args.no_build:
                out = variant_dir(arch, variant)
                if not os.path.exists(os.path.join(out, "initrd.gz")):
                    die("--no-build: %s has no %s kernel (%s)" % (arch, variant, out))
                return out
            return build(arch, args.tree, variant)

        # Built here while the boots of the architectures before run.
        use_project_qemu(rq, arch)
        if args.quick:
            # The quick run (CI) checks that the suite works, not timings:
            # it times make check's production kernel on QUICK_PROD_ARCHES
            # and its test kernel elsewhere, and builds no kernel without
            # kpkeys (more kernel builds do not fit CI's time).
            test_out = kernel("test")
            backend = kconfig(test_out, "ARCH_HAS_KPKEYS_HARDENED_PGTABLES")
            timing = "prod" if backend and arch in QUICK_PROD_ARCHES else "test"
            time_out = kernel("prod") if timing == "prod" else test_out
            base_out = None
        else:
            time_out = kernel("bench")
            backend = kconfig(time_out, "ARCH_HAS_KPKEYS_HARDENED_PGTABLES")
            timing = "prod"
            base_out = kernel("bench-nokpkeys") if backend else None
        # A kernel that counts only when asked to: its timing boots must
        # not count, its counting boots must.
        on_demand = kconfig(time_out, "KPKEYS_STATS") and \
            not kconfig(time_out, "KPKEYS_STATS_DEFAULT_ON")
        qemu = rq.qemu_command(arch, "x", "x", "", None, 1, True)[0]
        res = {"arch": arch, "reps": reps, "boots": args.boots, "quick": args.quick,
               "set": rowset, "rows_run": wanted, "modes": {}, "build": time_out,
               "backend": backend, "timing_kernel": timing,
               "clock": "guest instructions under QEMU -icount",
               "provenance": {timing: provenance(args.tree, time_out, qemu)}}
        groups = []
        for mode in MODES:
            if mode not in modes:
                res["modes"][mode] = {"na": "not run (--modes)"}
                continue
            if mode != "off" and not backend:
                res["modes"][mode] = {"na": "no backend"}
                continue
            groups.append(("mode", mode, timing, wanted, "no" if on_demand else None,
                           plan_boots(rq, arch, time_out, mode, args.boots, reps, args,
                                      timeout, outdir, wanted, timing)))
        if backend:
            if base_out:
                res["provenance"]["nokpkeys"] = provenance(args.tree, base_out, qemu)
                groups.append(("nokpkeys", "off", "nokpkeys", wanted, None,
                               plan_boots(rq, arch, base_out, "off", args.boots, reps,
                                          args, timeout, outdir, wanted, "nokpkeys")))
            else:
                res["nokpkeys"] = {"na": "not built in a quick run"}
            # Counting: the timing kernel booted with the counters on, one
            # boot per mode, with the rows the counter assertions need.
            crows = counting_rows(arch, wanted)
            for mode in modes:
                groups.append(("counting", mode, "count", crows, "yes" if on_demand else None,
                               plan_boots(rq, arch, time_out, mode, 1, 1, args, timeout,
                                          outdir, crows, "count", COUNT_ARG)))
        else:
            res["nokpkeys"] = {"na": "no backend"}
        for g in groups:
            for job in g[-1]:
                pool.submit(job)
        pending.append((arch, res, groups))
    pool.wait()

    for arch, res, groups in pending:
        for kind, mode, kern, rows, expect, jobs in groups:
            pooled, skipped, boots, software = collect_boots(
                jobs, arch, mode, kern, rows, problems, expect)
            if kind == "mode":
                if mode != "off" and software:
                    res["modes"][mode] = {"na": "no hardware (%s)" % software,
                                          "boots": boots}
                    continue
                for row, ss in pooled.items():
                    if row.endswith("_h1") and not row.startswith("vmalloc") and \
                            not any(x.get("thp_kb", 0) > 0 for x in ss):
                        problems.append("%s %s: row %s: no THP was allocated "
                                        "(AnonHugePages 0), so h:1 measured small "
                                        "folios" % (arch, mode, row))
                res["modes"][mode] = {"rows": {r: summarise(ss) for r, ss in pooled.items()},
                                      "samples": pooled, "skipped": skipped,
                                      "boots": boots}
            elif kind == "nokpkeys":
                res["nokpkeys"] = {"rows": {r: summarise(ss) for r, ss in pooled.items()},
                                   "samples": pooled, "skipped": skipped,
                                   "boots": boots}
            else:
                counting = res.setdefault("counting", {})
                if mode != "off" and software:
                    counting[mode] = {"na": "no hardware (%s)" % software}
                    continue
                counting[mode] = {"rows": counters_per_op(pooled), "boots": boots}
                missing = [r for r in pooled if r not in counting[mode]["rows"]]
                if missing:
                    problems.append("%s %s (counting boot): no counters for %s "
                                    "(no /sys/kernel/debug/kpkeys/stats?)"
                                    % (arch, mode, ", ".join(missing)))
        if res["backend"]:
            for p in counter_problems(res.get("counting", {}), arch):
                problems.append("%s %s" % (arch, p))
        analyse(res)
        results[arch] = res
        with open(os.path.join(outdir, "%s.json" % arch), "w") as f:
            json.dump(res, f, indent=1)
    results = {a: results[a] for a in arches if a in results}

    intro = ("%s run: %d boots per kernel and mode, %d in-guest repetitions "
             "per row after a warm-up in each; timings from %s where the "
             "architecture has a backend, counters from one more boot per "
             "mode with kpkeys_stats=on; QEMU TCG -icount "
             "shift=0,sleep=off -smp 1 (time = guest instructions), and for "
             "the 2-vCPU rows -smp 2 without -icount (wall clock). Total %%.0f s."
             % (SET_TITLE[rowset], args.boots, reps,
                ", ".join("%s: the %s kernel" % (a, r.get("timing_kernel", "?"))
                          for a, r in results.items()) if args.quick else
                "the production kernel (no CONFIG_KPKEYS_CHECK, counters built "
                "in but not counting)") % (time.monotonic() - t0))
    paths = write_report(results, problems, outdir, "# kpkeys benchmark report", intro)

    # What ran, for overlay-tools/results.py.
    if sorted(arches) == sorted(ARCHES) and not (args.rows or args.modes or args.reps
                                                 or args.boots != MIN_BOOTS):
        command = "make bench-all" + ("" if rowset == "headline" else " BENCH=" + rowset)
    elif len(arches) == 1 and not (args.rows or args.modes or args.reps
                                   or args.boots != MIN_BOOTS):
        command = "make bench ARCH=%s" % arches[0] + (
            "" if rowset == "headline" else " BENCH=" + rowset)
    else:
        command = "overlay-tools/bench.py " + " ".join(sys.argv[1:])
    prov = [dict(p, arch=a, kernel=k) for a, res in results.items()
            for k, p in res.get("provenance", {}).items()]
    run = {"command": command, "set": rowset, "date": started,
           "commit": next((p["series_commit"] for p in prov), "unknown"),
           "arches": list(results), "boots": args.boots, "reps": reps,
           "provenance": prov, "host": host_machine(), "problems": len(problems)}
    with open(os.path.join(outdir, "run.json"), "w") as f:
        json.dump(run, f, indent=1)
    paths.append(os.path.join(outdir, "run.json"))

    if args.results_json:
        for arch, res in results.items():
            cases = []
            for mode in MODES:
                r = res["modes"][mode]
                for row, _, _ in rows_run(res):
                    name = "%s.%s" % (mode, row)
                    if "na" in r or row in r.get("skipped", {}):
                        cases.append({"name": name, "status": "SKIP"})
                    else:
                        ok = row in r["rows"]
                        cases.append({"name": name, "status": "PASS" if ok else "FAIL"})
            mine = [p for p in problems if p.startswith(arch + " ")]
            if res.get("backend"):
                bad = [p for p in mine if "expected 0" in p or "skipped by batching" in p
                       or "but the kernel says" in p or "not huge mapped" in p]
                cases.append({"name": "counters_and_modes_as_expected",
                              "status": "FAIL" if bad else "PASS"})
            suite = "bench%s" % ("_quick" if args.quick else "")
            with open(args.results_json.replace("{arch}", arch), "w") as f:
                json.dump({"label": "bench-" + arch, "suites": {suite: cases},
                           "problems": mine}, f, indent=1)
    print(where_line(outdir, paths, "and per boot <arch>-<mode>-<kernel>*.log "
                     "(console) and .jsonl (kpkeys_bench -j)"))
    sys.exit(1 if problems else 0)


def host_machine():
    """The machine the benchmark ran on, as overlay-tools/timed.sh records it."""
    m = {"cpus": os.cpu_count() or 0, "cpu": os.uname().machine, "mem_kib": 0}
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.split(":")[0].strip() in ("model name", "cpu"):
                    m["cpu"] = line.split(":", 1)[1].strip()
                    break
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemTotal:"):
                    m["mem_kib"] = int(line.split()[1])
    except OSError:
        pass
    return m


def where_line(outdir, paths, extra=""):
    """The last line of a run: where every output is."""
    names = [os.path.relpath(p, outdir) for p in paths]
    d = os.path.relpath(outdir)
    if d.startswith(".."):
        d = os.path.abspath(outdir)
    return "bench: outputs in %s/: %s%s" % (d, ", ".join(names),
                                           ", " + extra if extra else "")


# The report step: JSON Lines of kpkeys_bench runs -> the same tables

ARCH_NAMES = {"aarch64": "arm64", "ppc64": "powerpc", "ppc64le": "powerpc"}


def load_run(path):
    """One kpkeys_bench -j file: (header, samples by row, skipped, errors).
    A line that is not JSON is an error of the run, not of the report."""
    header, samples, skipped, errors = None, {}, {}, {}
    bad = []
    with open(path) as f:
        for n, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                rec = json.loads(line)
            except ValueError as e:
                bad.append("line %d is not JSON (%s)" % (n, e))
                continue
            if not isinstance(rec, dict):
                bad.append("line %d is not a JSON object" % n)
                continue
            if "kpkeys_bench" in rec:
                header = rec
            elif "skip" in rec:
                skipped[rec["row"]] = rec["skip"]
            elif "error" in rec:
                errors[rec["row"]] = rec["error"]
            elif "ns" in rec and rec.get("rep", 0) > 0 and rec.get("ops"):
                s = {"rep": rec["rep"], "ns": rec["ns"], "ops": rec["ops"],
                     "counters": {c: rec[c] for c in COUNTERS if c in rec}}
                samples.setdefault(rec["row"], []).append(s)
    if header is None:
        die("%s: no kpkeys_bench header record: not a kpkeys_bench -j file" % path)
    header["arch"] = ARCH_NAMES.get(header.get("arch"), header.get("arch", "unknown"))
    if bad:
        errors["(file)"] = "; ".join(bad)
    return header, samples, skipped, errors


def run_kind(header):
    """'nokpkeys', the mode of a kernel with kpkeys, or None when the run
    could not tell (debugfs was not mounted)."""
    if header.get("kpkeys") is None:
        return None
    if not header["kpkeys"]:
        return "nokpkeys"
    mode = header.get("mode", "")
    m = re.match(r"(off|nobatch|on)\b", mode)
    if m:
        return m.group(1)
    m = re.search(r"\bkpkeys_hardened_pgtables=(off|nobatch|on)\b", header.get("cmdline", ""))
    return m.group(1) if m else "on"


def mode_mismatch(header):
    """What is wrong when the mode a kpkeys kernel reports is not the one its
    command line asked for (the kernel fell back to off: no pkey hardware,
    a pool failure), or when it reports none; None when they agree."""
    if not header.get("kpkeys"):
        return None
    m = re.match(r"(off|nobatch|on)\b", header.get("mode", ""))
    asked = re.search(r"\bkpkeys_hardened_pgtables=(off|nobatch|on)\b",
                      header.get("cmdline", ""))
    asked = asked.group(1) if asked else "on"
    if not m:
        return "reports no hardened page-table mode (asked for %s)" % asked
    if m.group(1) != asked:
        return "ran in mode %s, its command line asked for %s" % (m.group(1), asked)
    return None


def results_from_runs(paths):
    """Group runs by architecture and mode into bench.py's result layout:
    timings from runs without CONFIG_KPKEYS_STATS where there are any,
    counters from the runs with it."""
    by_arch = {}
    for i, path in enumerate(paths):
        header, samples, skipped, errors = load_run(path)
        for row in samples:
            for s in samples[row]:
                s["boot"] = i
        a = by_arch.setdefault(header.get("arch", "unknown"), [])
        a.append((path, header, samples, skipped, errors))
    results, problems = {}, []
    for arch, runs in list(by_arch.items()):
        for x in runs:
            if run_kind(x[1]) is None:
                problems.append("%s: %s: left out: the run could not tell whether "
                                "the kernel has kpkeys (debugfs not mounted)" % (arch, x[0]))
        runs = [x for x in runs if run_kind(x[1]) is not None]
        for x in runs:
            why = mode_mismatch(x[1])
            if why:
                problems.append("%s: %s: left out: it %s" % (arch, x[0], why))
        runs = [x for x in runs if not mode_mismatch(x[1])]
        for what in ("quick", "map_bytes", "cpu", "virtual"):
            seen = sorted({str(x[1].get(what)) for x in runs})
            if len(seen) > 1:
                problems.append("%s: runs with different %s (%s) are pooled: compare "
                                "runs of one machine and one size" % (arch, what, ", ".join(seen)))
        # Timings from the runs without counters, where the mode has any.
        timing = {}
        for kind in MODES + ["nokpkeys"]:
            mine = [x for x in runs if run_kind(x[1]) == kind]
            timing[kind] = [x for x in mine if not x[1].get("stats")] or mine
        timed = [x for t in timing.values() for x in t]
        # Under QEMU (bench.py's boots), CLOCK_MONOTONIC counts guest
        # instructions; on a machine, it is time.
        qemu = all("kpkeys_init.bench=1" in x[1].get("cmdline", "") for x in timed)
        cpus = sorted({str(x[1].get("cpu", "?")) for x in timed})
        res = {"arch": arch, "modes": {}, "counting": {}, "provenance": {},
               "timing_kernel": "kpkeys",
               "clock": "guest instructions under QEMU -icount" if qemu else
               "CLOCK_MONOTONIC on %s" % ", ".join(cpus),
               "rows_run": [r for r in ROW_IDS
                            if any(r in x[2] or r in x[3] for x in timed)]}
        for kind in MODES + ["nokpkeys"]:
            mine = timing[kind]
            pooled, skipped = {}, {}
            for path, h, samples, sk, errs in mine:
                for row, ss in samples.items():
                    pooled.setdefault(row, []).extend(ss)
                skipped.update(sk)
                for row, why in errs.items():
                    problems.append("%s %s: row %s: %s (%s)" % (arch, kind, row, why, path))
            if mine:
                res["provenance"]["%s (%d runs)" % (kind, len(mine))] = {
                    "series_commit": mine[0][1].get("kernel", "?"),
                    "config_sha256": "n/a",
                    "machine": ("virtual: " if mine[0][1].get("virtual") else "hardware: ")
                    + mine[0][1].get("cpu", "?"),
                    "date": time.strftime("%Y-%m-%dT%H:%M:%SZ",
                                          time.gmtime(mine[0][1].get("time", 0)))}
            for r, ss in sorted(pooled.items()):
                if len(ss) < MIN_REPS:
                    problems.append("%s %s: row %s: %d timed samples in all runs, at "
                                    "least %d are needed (kpkeys_bench -r %d, or more runs)"
                                    % (arch, kind, r, len(ss), MIN_REPS, MIN_REPS))
            entry = ({"rows": {r: summarise(ss) for r, ss in pooled.items()},
                      "samples": pooled, "skipped": skipped}
                     if mine else {"na": "no run in this mode"})
            if kind == "nokpkeys":
                res["nokpkeys"] = entry
            else:
                res["modes"][kind] = entry
        for kind in MODES:
            counting = [x for x in runs if x[1].get("stats") and run_kind(x[1]) == kind]
            pooled = {}
            for x in counting:
                for row, ss in x[2].items():
                    pooled.setdefault(row, []).extend(ss)
            if pooled:
                res["counting"][kind] = {"rows": counters_per_op(pooled)}
        problems += ["%s %s" % (arch, p) for p in counter_problems(res["counting"], arch)]
        res["description"] = (
            "Overhead relative to kpkeys_hardened_pgtables=off, median per op "
            "of every timed repetition of every run in the mode (runs: %s); "
            "positive = slower; in brackets the fastest and slowest sample "
            "against the baseline median. (R)/(I): Mann-Whitney U p < 0.05 "
            "and |difference| >= %.1f%%. \"off vs no kpkeys\" and *: against "
            "the runs on a kernel without kpkeys. Time: %s%s." % (
                ", ".join("%s %d" % (k, len(timing[k])) for k in MODES + ["nokpkeys"]),
                FLOOR_PCT, res["clock"],
                "; the 2-vCPU rows: wall clock" if SMP_ROWS & set(res["rows_run"]) else ""))
        analyse(res)
        results[arch] = res
    order = {a: i for i, a in enumerate(ARCHES)}
    results = dict(sorted(results.items(), key=lambda kv: (order.get(kv[0], len(order)),
                                                           kv[0])))
    return results, problems


def compare_runs(before, after):
    """Markdown: each row and mode of @after against the same of @before."""
    out = ["| Arch | Mode | Row | Before (median) | After (median) | Change |",
           "|---|---|---|---|---|---|"]
    for arch, ra in after.items():
        rb = before.get(arch)
        if not rb:
            continue
        for kind in MODES + ["nokpkeys"]:
            a = ra["modes"].get(kind) if kind != "nokpkeys" else ra.get("nokpkeys")
            b = rb["modes"].get(kind) if kind != "nokpkeys" else rb.get("nokpkeys")
            if not a or not b or "rows" not in a or "rows" not in b:
                continue
            for row, bench, cls in ROWS:
                if row in a["rows"] and row in b["rows"]:
                    c = dict(a["rows"][row])
                    compare(c, b["rows"][row])
                    out.append("| %s | %s | %s | %s/op | %s/op | %s |" % (
                        arch, kind, cls, fmt_ns(b["rows"][row]["median"]),
                        fmt_ns(c["median"]), fmt_pct(c)))
    return "\n".join(out) + "\n"


def report_main(argv):
    ap = argparse.ArgumentParser(
        prog="bench.py report",
        description="The report from the JSON Lines files of any number of "
        "kpkeys_bench runs (kpkeys_bench -j FILE on a machine, or the "
        "<arch>-<mode>-*.jsonl that bench.py keeps from each boot): one "
        "run per boot, in any mode, on any kernel and machine; runs are "
        "grouped by architecture and mode (a kernel without kpkeys is the "
        "'no kpkeys' baseline). It writes the outputs 'make bench-all' "
        "writes (report.md with the per-arch and cross-arch tables, "
        "results.csv, <arch>.json, <arch>.md, overhead.svg and "
        "overhead.png) into --out. With --before, the runs given are "
        "compared with the ones before a change instead (report.md only).")
    ap.add_argument("runs", nargs="+", help="kpkeys_bench -j files")
    ap.add_argument("--before", action="append", default=[],
                    help="a run from before the change (repeatable)")
    ap.add_argument("--out", default=os.path.join(REPO, "build", "bench-report"),
                    help="output directory (default build/bench-report)")
    args = ap.parse_args(argv)
    for p in args.runs + args.before:
        if not os.path.isfile(p):
            die("%s: no such file" % p)
    if os.path.isfile(args.out):
        die("--out %s: a file; the report step writes a directory of outputs" % args.out)
    results, problems = results_from_runs(args.runs)
    title = "# kpkeys benchmark report (%d runs)" % len(args.runs)
    if not args.before:
        intro = ("From %d kpkeys_bench runs, grouped by architecture and "
                 "mode; per architecture, the timings of a mode come from its "
                 "runs on a kernel without CONFIG_KPKEYS_STATS where there are "
                 "any, the counters from the runs with it." % len(args.runs))
        paths = write_report(results, problems, args.out, title, intro)
        print(where_line(args.out, paths))
        return 1 if problems else 0
    before, bprob = results_from_runs(args.before)
    problems += bprob
    text = [title, "", "## After (%d runs) against before (%d runs)" % (
        len(args.runs), len(args.before)), "", compare_runs(before, results)]
    prov = ["| Arch | Kernel | Built from | Config | Machine | Date |",
            "|---|---|---|---|---|---|"]
    for label, rs in (("before", before), ("after", results)):
        for arch, res in rs.items():
            for kern, p in res["provenance"].items():
                prov.append("| %s | %s, %s | %s | %s | %s | %s |" % (
                    arch, label, kern, p["series_commit"], p["config_sha256"],
                    p["machine"], p["date"]))
    text += ["## Provenance", "", "\n".join(prov), ""]
    if problems:
        text += ["## Problems", ""] + ["- " + p for p in problems] + [""]
    os.makedirs(args.out, exist_ok=True)
    path = os.path.join(args.out, "report.md")
    with open(path, "w") as f:
        f.write("\n".join(text))
    print("\n".join(text))
    print(where_line(args.out, [path]))
    return 1 if problems else 0


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "report":
        sys.exit(report_main(sys.argv[2:]))
    main()
