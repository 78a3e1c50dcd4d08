#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Run the kpkeys benchmark suite and write the report.

For each architecture: build the kernel and initramfs (the same build as
'make check'), then boot it under QEMU with -icount shift=0,sleep=off
-smp 1 once per kpkeys_hardened_pgtables= mode (off, nobatch, on).  The
guest program (guest/bench.c) measures every row REPS times in the same
boot after a warm-up.  The metric is guest time, which under -icount
counts executed instructions (1 ns each); host wall-clock time per
measurement is recorded as a secondary number.

Modes an architecture cannot run (no kpkeys backend, or a CPU without
the feature) are reported as "n/a: <reason>", with the baseline measured
all the same.  A difference to the baseline is marked (R) regression or
(I) improvement only when a two-sided Mann-Whitney U test says it is
significant at 95%.

Output, in --out (default build/bench): <arch>.json (every sample and the
summary), results.csv, <arch>.md (per-arch table), report.md (cross-arch
tables), overhead.svg (gnuplot) and <arch>-<mode>.log (console).
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
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ARCHES = ["x86_64", "arm64", "powerpc"]
MODES = ["off", "nobatch", "on"]
MODE_TITLE = {"nobatch": "Without batching", "on": "With batching"}

# Row id in the guest -> (benchmark, result class), in report order.
ROWS = [
    ("fork_h0", "fork", "fork: h:0"),
    ("fork_h1", "fork", "fork: h:1"),
    ("munmap_h0", "munmap", "munmap: h:0"),
    ("munmap_h1", "munmap", "munmap: h:1"),
    ("vmalloc_fix_p1_h0", "vmalloc", "fix_size_alloc_test p:1 h:0"),
    ("vmalloc_fix_p4_h0", "vmalloc", "fix_size_alloc_test p:4 h:0"),
    ("vmalloc_fix_p16_h0", "vmalloc", "fix_size_alloc_test p:16 h:0"),
    ("vmalloc_fix_p64_h0", "vmalloc", "fix_size_alloc_test p:64 h:0"),
    ("vmalloc_fix_p256_h0", "vmalloc", "fix_size_alloc_test p:256 h:0"),
    ("vmalloc_fix_p16_h1", "vmalloc", "fix_size_alloc_test p:16 h:1"),
    ("vmalloc_fix_p64_h1", "vmalloc", "fix_size_alloc_test p:64 h:1"),
    ("vmalloc_fix_p256_h1", "vmalloc", "fix_size_alloc_test p:256 h:1"),
    ("vmalloc_random_p1", "vmalloc", "random_size_alloc_test p:1"),
    ("vmalloc_vm_map_ram_p1", "vmalloc", "vm_map_ram_test p:1"),
    ("null_syscall", "syscall", "null syscall (getppid)"),
    ("lseek", "syscall", "lseek1 (private file)"),
    ("pgtable_churn", "churn", "mmap/touch/mprotect/munmap 256 KiB"),
]
ROW_IDS = [r[0] for r in ROWS]
COUNTERS = ["reg_writes", "pgtables_switches", "pgtables_switches_skipped",
            "ptps_keyed", "set_memory_pkey_calls", "pool_refills"]

LINE_RE = re.compile(r"kpkeys-bench: (begin|result|error|skip|start|done)\s*(.*)$")


def load_run_qemu():
    spec = importlib.util.spec_from_file_location(
        "run_qemu", os.path.join(REPO, "scripts", "run-qemu.py"))
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
    return subprocess.run(["bash", "-c", ". %s/scripts/lib.sh && %s"
                           % (REPO, expr)], check=True, text=True,
                          stdout=subprocess.PIPE).stdout.strip()


def build(arch, tree):
    for script, extra in (("build.sh", []), ("mkinitrd.sh", None)):
        out = shell_lib("build_dir %s" % arch)
        args = [os.path.join(REPO, "scripts", script), arch, tree]
        if extra is None:
            args.append(out)
        if subprocess.run(args, env=dict(os.environ, LLVM="")).returncode:
            die("%s: %s failed" % (arch, script))
    return out


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
    if math.comb(n1 + n2, n1) <= 200000:
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
    return {
        "n": len(per_op),
        "median": statistics.median(per_op),
        "min": min(per_op),
        "max": max(per_op),
        "per_op": per_op,
    }


# One boot

def boot(rq, arch, out, mode, reps, quick, timeout, logdir, cpu, rows):
    append = ("kpkeys_hardened_pgtables=%s kunit.enable=0 kpkeys_init.bench=1 "
              "kpkeys_bench.reps=%d%s%s" % (mode, reps,
                                            " kpkeys_bench.quick=1" if quick else "",
                                            " kpkeys_bench.rows=" + ",".join(rows)
                                            if rows != ROW_IDS else ""))
    image = os.path.join(out, shell_lib("kernel_image %s" % arch))
    cmd = rq.qemu_command(arch, image, os.path.join(out, "initrd.gz"), append,
                          cpu, 1, True)
    label = "%s %s" % (arch, mode)
    stamps = {}
    progress = {"rows": 0}

    def on_line(line, t):
        m = LINE_RE.search(line)
        if not m:
            return
        kind, rest = m.groups()
        if kind in ("begin", "result"):
            row, rep = rest.split()[:2]
            stamps[(kind, row, rep)] = t
            if kind == "result" and rep == "0":
                progress["rows"] += 1
                note("[%s] row %d/%d: %s" % (label, progress["rows"],
                                            len(ROWS), row))
        elif kind == "error":
            note("[%s] %s" % (label, line.strip()))

    log = os.path.join(logdir, "%s-%s.log" % (arch, mode))
    note("[%s] booting (%s)" % (label, " ".join(cmd[:1] + ["-icount", "shift=0,sleep=off", "-smp", "1"])))
    lines, timed_out, rc, wall = rq.run(cmd, log, timeout, label, on_line=on_line)
    problems, _ = rq.find_problems(lines, set())
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
            f = rest.split()
            row, rep = f[0], int(f[1])
            vals = dict(kv.split("=", 1) for kv in f[2:])
            if rep == 0:
                continue        # warm-up
            s = {"rep": rep, "ns": int(vals["ns"]), "ops": int(vals["ops"])}
            if "thp_kb" in vals:
                s["thp_kb"] = int(vals["thp_kb"])
            s["counters"] = {c: int(vals[c]) for c in COUNTERS if c in vals}
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
    return {"samples": samples, "errors": errors, "skipped": skipped,
            "problems": problems,
            "start": start, "wall_s": round(wall, 1), "log": log,
            "mode_line": mode_line.strip(), "software_only": software}


# Reports

def fmt_ns(v):
    if v >= 1e6:
        return "%.2f ms" % (v / 1e6)
    if v >= 1e3:
        return "%.1f us" % (v / 1e3)
    return "%.0f ns" % v


def cell(res, row, mode):
    r = res["modes"].get(mode, {})
    if "na" in r:
        return "n/a: " + r["na"]
    if row in r.get("skipped", {}):
        return "n/a: " + r["skipped"][row]
    c = r.get("rows", {}).get(row)
    if not c:
        return "missing"
    if "overhead_pct" not in c:
        return fmt_ns(c["median"])
    mark = {"R": "(R) ", "I": "(I) "}.get(c["mark"], "")
    return "%s%+.2f%%" % (mark, c["overhead_pct"])


def arch_table(arch, res):
    out = ["### %s" % arch, "",
           "Overhead relative to the baseline (kpkeys_hardened_pgtables=off) "
           "of the same build, median of %d in-guest repetitions; positive = "
           "slower. (R)/(I): regression/improvement significant at 95%% "
           "(Mann-Whitney U). Time = guest instructions (QEMU -icount "
           "shift=0)." % res["reps"], "",
           "| Benchmark | Result class | Baseline (median) | Without batching | With batching |",
           "|---|---|---|---|---|"]
    last = None
    for row, bench, cls in ROWS:
        base = res["modes"].get("off", {}).get("rows", {}).get(row)
        out.append("| %s | %s | %s | %s | %s |" % (
            bench if bench != last else "", cls,
            fmt_ns(base["median"]) + "/op" if base else cell(res, row, "off"),
            cell(res, row, "nobatch"), cell(res, row, "on")))
        last = bench
    return "\n".join(out) + "\n"


def counters_table(results):
    out = ["| Arch | Mode | Benchmark | " + " | ".join(
        c + "/op" for c in COUNTERS) + " |",
        "|---|---|---|" + "---|" * len(COUNTERS)]
    for arch, res in results.items():
        for mode in MODES[1:]:      # the baseline counts nothing
            r = res["modes"].get(mode, {})
            for row in ROW_IDS:
                c = r.get("rows", {}).get(row)
                if not c or not c.get("counters_per_op"):
                    continue
                out.append("| %s | %s | %s | %s |" % (
                    arch, mode, row, " | ".join(
                        "%.2f" % c["counters_per_op"].get(k, float("nan"))
                        for k in COUNTERS)))
    return "\n".join(out) + "\n"


def cross_table(results):
    cols = [(a, m) for a in results for m in ("nobatch", "on")]
    out = ["| Benchmark | " + " | ".join("%s %s" % (a, m) for a, m in cols) + " |",
           "|---|" + "---|" * len(cols)]
    for row, bench, cls in ROWS:
        out.append("| %s | %s |" % (cls, " | ".join(
            cell(results[a], row, m) for a, m in cols)))
    return "\n".join(out) + "\n"


def chart(results, outdir):
    gp = shutil.which("gnuplot")
    if not gp:
        note("gnuplot not found: no chart (install gnuplot-nox)")
        return None
    cols = [(a, m) for a in results for m in ("nobatch", "on")
            if "na" not in results[a]["modes"].get(m, {"na": 1})]
    if not cols:
        note("no mode other than the baseline ran: no chart")
        return None
    dat = os.path.join(outdir, "overhead.dat")
    with open(dat, "w") as f:
        f.write("row " + " ".join("%s-%s" % c for c in cols) + "\n")
        for row in ROW_IDS:
            vals = []
            for a, m in cols:
                c = results[a]["modes"][m].get("rows", {}).get(row, {})
                vals.append("%.3f" % c["overhead_pct"] if "overhead_pct" in c else "NaN")
            f.write("%s %s\n" % (row, " ".join(vals)))
    svg = os.path.join(outdir, "overhead.svg")
    na = ["%s %s" % (a, m) for a in results for m in ("nobatch", "on")
          if (a, m) not in cols]
    title = "kpkeys hardened page tables: overhead vs. baseline (guest instructions, median)"
    if na:
        title += "\\nnot applicable: " + ", ".join(na)
    script = """set terminal svg size 1200,600 dynamic noenhanced font 'sans,10'
set output '%s'
set title "%s"
set ylabel 'overhead %% (positive = slower)'
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.8 border -1
set xtics rotate by -45 scale 0 font 'sans,8'
set key top left
set grid ytics
plot for [i=2:%d] '%s' using i:xtic(1) title columnhead(i)
""" % (svg, title, len(cols) + 1, dat)
    r = subprocess.run([gp], input=script, text=True, capture_output=True)
    if r.returncode:
        note("gnuplot failed: %s" % r.stderr.strip())
        return None
    return svg


def analyse(res):
    base = res["modes"].get("off", {}).get("rows", {})
    for mode in MODES:
        r = res["modes"].get(mode)
        if not r or "na" in r:
            continue
        for row, c in r["rows"].items():
            samples = r["samples"][row]
            ops = sum(s["ops"] for s in samples)
            if samples and all(s.get("counters") for s in samples):
                c["counters_per_op"] = {
                    k: sum(s["counters"].get(k, 0) for s in samples) / ops
                    for k in COUNTERS}
            if mode == "off" or row not in base:
                continue
            c["overhead_pct"] = (c["median"] / base[row]["median"] - 1) * 100
            c["p"] = mann_whitney_p(c["per_op"], base[row]["per_op"])
            c["mark"] = ("R" if c["median"] > base[row]["median"] else "I") \
                if c["p"] < 0.05 else ""


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tree", default=os.path.join(REPO, "build", "tree"))
    ap.add_argument("--arch", action="append", choices=ARCHES,
                    help="architecture (repeatable; default: all three)")
    ap.add_argument("--quick", action="store_true",
                    help="reduced sizes and loops, 2 repetitions (CI)")
    ap.add_argument("--reps", type=int, help="in-guest repetitions (default 5, quick 2)")
    ap.add_argument("--out", help="report directory (default build/bench, "
                    "build/bench/quick with --quick)")
    ap.add_argument("--timeout", type=int, help="seconds per boot")
    ap.add_argument("--results-json",
                    help="also write a summary.py result file (one case per row and mode)")
    ap.add_argument("--no-build", action="store_true", help="use the existing build")
    ap.add_argument("--rows", help="comma-separated row ids (default: all): %s"
                    % ", ".join(ROW_IDS))
    ap.add_argument("--modes", help="comma-separated modes (default: off,nobatch,on)")
    ap.add_argument("--reuse", action="append", default=[], choices=ARCHES,
                    help="take this arch's results from <out>/<arch>.json of an "
                    "earlier run instead of booting it (to redo one arch and "
                    "rewrite the cross-arch report)")
    args = ap.parse_args()

    arches = args.arch or ARCHES
    wanted = args.rows.split(",") if args.rows else ROW_IDS
    bad = [r for r in wanted if r not in ROW_IDS]
    if bad:
        die("--rows: unknown row(s) %s (known: %s)" % (", ".join(bad), ", ".join(ROW_IDS)))
    modes = args.modes.split(",") if args.modes else MODES
    bad = [m for m in modes if m not in MODES]
    if bad or "off" not in modes:
        die("--modes: %s: the modes are %s, and off (the baseline) must be one"
            % (args.modes, ", ".join(MODES)))
    reps = args.reps or (2 if args.quick else 5)
    if not 1 <= reps <= 50:
        die("--reps %d: must be between 1 and 50" % reps)
    outdir = args.out or os.path.join(REPO, "build", "bench", *(["quick"] if args.quick else []))
    os.makedirs(outdir, exist_ok=True)
    timeout = args.timeout or (900 if args.quick else 3600)
    rq = load_run_qemu()
    if "on_line" not in rq.run.__code__.co_varnames:
        die("scripts/run-qemu.py has no on_line hook")

    results = {}
    problems = []
    t0 = time.monotonic()
    for arch in arches:
        if arch in args.reuse:
            path = os.path.join(outdir, "%s.json" % arch)
            try:
                with open(path) as f:
                    results[arch] = json.load(f)
            except (OSError, ValueError) as e:
                die("--reuse %s: cannot read %s: %s" % (arch, path, e))
            if results[arch].get("quick") != args.quick:
                die("--reuse %s: %s is from a %s run" % (
                    arch, path, "quick" if results[arch].get("quick") else "full"))
            note("[%s] results of an earlier run: %s" % (arch, path))
            continue
        out = shell_lib("build_dir %s" % arch) if args.no_build else build(arch, args.tree)
        backend = kconfig(out, "ARCH_HAS_KPKEYS_HARDENED_PGTABLES")
        res = {"arch": arch, "reps": reps, "quick": args.quick, "modes": {},
               "build": out, "backend": backend}
        for mode in MODES:
            if mode not in modes:
                res["modes"][mode] = {"na": "not run (--modes)"}
                continue
            if mode != "off" and not backend:
                res["modes"][mode] = {"na": "no backend"}
                continue
            b = boot(rq, arch, out, mode, reps, args.quick, timeout, outdir, None, wanted)
            for p in b["problems"]:
                problems.append("%s %s: %s" % (arch, mode, p))
            for row, what in b["errors"].items():
                problems.append("%s %s: row %s: %s" % (arch, mode, row, what))
            if mode != "off" and b["software_only"]:
                res["modes"][mode] = {"na": "no hardware (%s)" % b["software_only"],
                                      "log": b["log"]}
                continue
            for row, s in b["samples"].items():
                if row.endswith("_h1") and not row.startswith("vmalloc") and \
                        not any(x.get("thp_kb", 0) > 0 for x in s):
                    problems.append("%s %s: row %s: no THP was allocated "
                                    "(AnonHugePages 0), so h:1 measured small "
                                    "folios" % (arch, mode, row))
            rows = {row: summarise(s) for row, s in b["samples"].items()}
            for row in wanted:
                if row not in rows and row not in b["errors"] and \
                        row not in b["skipped"]:
                    problems.append("%s %s: row %s produced no result" % (arch, mode, row))
            res["modes"][mode] = {"rows": rows, "samples": b["samples"],
                                  "skipped": b["skipped"],
                                  "wall_s": b["wall_s"], "log": b["log"],
                                  "mode_line": b["mode_line"], "start": b["start"]}
            note("[%s %s] %d rows in %.0f s" % (arch, mode, len(rows), b["wall_s"]))
        analyse(res)
        results[arch] = res
        with open(os.path.join(outdir, "%s.json" % arch), "w") as f:
            json.dump(res, f, indent=1)
        with open(os.path.join(outdir, "%s.md" % arch), "w") as f:
            f.write(arch_table(arch, res))

    with open(os.path.join(outdir, "results.csv"), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["arch", "mode", "row", "benchmark", "result_class", "n",
                    "median_ns_per_op", "min_ns_per_op", "max_ns_per_op",
                    "overhead_pct", "p_value", "mark", "median_wall_s"]
                   + [c + "_per_op" for c in COUNTERS])
        for arch, res in results.items():
            for mode in MODES:
                r = res["modes"][mode]
                for row, bench, cls in ROWS:
                    if "na" in r:
                        w.writerow([arch, mode, row, bench, cls, 0, "", "", "",
                                    "n/a: " + r["na"], "", "", ""] + [""] * len(COUNTERS))
                        continue
                    if row in r.get("skipped", {}):
                        w.writerow([arch, mode, row, bench, cls, 0, "", "", "",
                                    "n/a: " + r["skipped"][row], "", "", ""] + [""] * len(COUNTERS))
                        continue
                    c = r["rows"].get(row)
                    if not c:
                        continue
                    walls = [s["wall_s"] for s in r["samples"][row] if "wall_s" in s]
                    cpo = c.get("counters_per_op", {})
                    w.writerow([arch, mode, row, bench, cls, c["n"],
                                "%.1f" % c["median"], "%.1f" % c["min"], "%.1f" % c["max"],
                                "%.3f" % c["overhead_pct"] if "overhead_pct" in c else "",
                                "%.4f" % c["p"] if "p" in c else "", c.get("mark", ""),
                                "%.4f" % statistics.median(walls) if walls else ""]
                               + ["%.3f" % cpo[k] if k in cpo else "" for k in COUNTERS])
    svg = chart(results, outdir)
    report = ["# kpkeys benchmark report", "",
              "%s run, %d in-guest repetitions per row after a warm-up, one "
              "boot per mode; QEMU TCG -icount shift=0,sleep=off -smp 1 (time "
              "= guest instructions). Total %.0f s." % (
                  "Quick (reduced sizes)" if args.quick else "Full", reps,
                  time.monotonic() - t0), ""]
    for arch, res in results.items():
        report.append(arch_table(arch, res))
    report += ["## Cross-architecture overhead", "", cross_table(results),
               "## kpkeys counters per operation", "", counters_table(results)]
    if svg:
        report += ["![overhead](overhead.svg)", ""]
    if problems:
        report += ["## Problems", ""] + ["- " + p for p in problems] + [""]
    with open(os.path.join(outdir, "report.md"), "w") as f:
        f.write("\n".join(report))
    print("\n".join(report))
    print("bench: report in %s" % outdir)

    if args.results_json:
        suites = {}
        for arch, res in results.items():
            cases = []
            for mode in MODES:
                r = res["modes"][mode]
                for row in ROW_IDS:
                    name = "%s.%s" % (mode, row)
                    if "na" in r or row in r.get("skipped", {}):
                        cases.append({"name": name, "status": "SKIP"})
                    else:
                        ok = row in r["rows"]
                        cases.append({"name": name, "status": "PASS" if ok else "FAIL"})
            suites["bench%s" % ("_quick" if args.quick else "")] = cases
            with open(args.results_json.replace("{arch}", arch), "w") as f:
                json.dump({"label": "bench-" + arch, "suites": suites,
                           "problems": [p for p in problems if p.startswith(arch + " ")]},
                          f, indent=1)
            suites = {}
    sys.exit(1 if problems else 0)


if __name__ == "__main__":
    main()
