#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Tests of results.py and timed.sh: the measured results are generated,
the same records give the same files, and a timed job is recorded."""

import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
RESULTS_PY = os.path.join(HERE, "results.py")
TIMED = os.path.join(HERE, "timed.sh")


def job_record(**kw):
    rec = {"job": "test", "command": "make test", "commit": "0123456789abcdef",
           "date": "2026-12-01T10:00:00Z", "seconds": 1500, "status": 0,
           "summary": "10 passed, 0 failed", "fresh": True,
           "caches": {"packages": False, "kernel_source": False,
                      "project_qemu": False, "ccache_kib": 0},
           "machine": {"cpus": 2, "mem_kib": 24 * 1048576, "cpu": "Test CPU"}}
    rec.update(kw)
    return rec


class Results(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp()
        self.root = os.path.join(self.tmp, "root")
        os.makedirs(self.root)
        shutil.copy(os.path.join(REPO, "README.md"), self.root)
        os.makedirs(os.path.join(self.root, "series"))
        for name in ("series", "bisect-check.txt"):
            shutil.copy(os.path.join(REPO, "series", name), os.path.join(self.root, "series"))
        if os.path.isdir(os.path.join(REPO, "results")):
            shutil.copytree(os.path.join(REPO, "results"), os.path.join(self.root, "results"))
        self.env = dict(os.environ, KPKEYS_RESULTS_ROOT=self.root)

    def tearDown(self):
        shutil.rmtree(self.tmp)

    def run_results(self, *args, ok=True):
        r = subprocess.run([sys.executable, RESULTS_PY] + list(args), env=self.env,
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           universal_newlines=True)
        if ok:
            self.assertEqual(r.returncode, 0, r.stdout)
        return r

    def clear_jobs(self):
        """Only the records a test imports: the repository's own are newer."""
        shutil.rmtree(os.path.join(self.root, "results", "jobs"), ignore_errors=True)

    def read(self, *path):
        with open(os.path.join(self.root, *path)) as f:
            return f.read()

    def test_committed_results_are_up_to_date(self):
        """results/measured.md and README.md's block are what the records give."""
        r = self.run_results("generate", "--check", ok=False)
        self.assertEqual(r.returncode, 0, r.stdout)

    def test_same_records_same_files(self):
        self.run_results("generate")
        doc, readme = self.read("results", "measured.md"), self.read("README.md")
        self.run_results("generate")
        self.assertEqual(doc, self.read("results", "measured.md"))
        self.assertEqual(readme, self.read("README.md"))

    def test_hand_edit_is_detected(self):
        self.run_results("generate")
        with open(os.path.join(self.root, "results", "measured.md"), "a") as f:
            f.write("| a figure typed in by hand |\n")
        r = self.run_results("generate", "--check", ok=False)
        self.assertNotEqual(r.returncode, 0)
        self.assertIn("not up to date", r.stdout)

    def test_job_record_reaches_doc_and_readme(self):
        self.clear_jobs()
        rec = os.path.join(self.tmp, "test.json")
        with open(rec, "w") as f:
            json.dump(job_record(), f)
        warm = os.path.join(self.tmp, "warm.json")
        with open(warm, "w") as f:
            json.dump(job_record(fresh=False, seconds=900, date="2026-12-02T10:00:00Z",
                                 caches={"packages": True, "kernel_source": True,
                                         "project_qemu": True, "ccache_kib": 400000}), f)
        self.run_results("import", "--job", rec, "--job", warm)
        readme = self.read("README.md")
        row = [l for l in readme.splitlines() if l.startswith("| `make test`")][0]
        self.assertIn("25 min 00 s (2026-12-01, `0123456789ab`)", row)
        self.assertIn("15 min 00 s (2026-12-02", row)
        doc = self.read("results", "measured.md")
        self.assertIn("| 2026-12-01 10:00 | `.ci/run` (`make deps`, `make test`) | fresh | `0123456789ab` | 25 min 00 s "
                      "| 10 passed, 0 failed | Test CPU, 2 CPUs, 24 GiB |", doc)
        self.assertIn("warm", doc)

    def test_empty_caches_stand_for_fresh_and_say_so(self):
        self.clear_jobs()
        rec = os.path.join(self.tmp, "test.json")
        with open(rec, "w") as f:
            json.dump(job_record(fresh=False, caches={
                "packages": True, "kernel_source": False, "project_qemu": False,
                "ccache_kib": 0}), f)
        self.run_results("import", "--job", rec)
        row = [l for l in self.read("README.md").splitlines()
               if l.startswith("| `make test`")][0]
        self.assertIn("25 min 00 s (2026-12-01, `0123456789ab`), Debian packages "
                      "installed before | not measured yet |", row)
        self.assertIn("| empty caches |", self.read("results", "measured.md"))

    def test_failed_job_says_so(self):
        self.clear_jobs()
        rec = os.path.join(self.tmp, "test.json")
        with open(rec, "w") as f:
            json.dump(job_record(status=2, summary="9 passed, 1 failed"), f)
        self.run_results("import", "--job", rec)
        self.assertIn("**failed** (exit 2)", self.read("README.md"))

    def test_bad_record_refused(self):
        os.makedirs(os.path.join(self.root, "results", "jobs"), exist_ok=True)
        with open(os.path.join(self.root, "results", "jobs", "x.json"), "w") as f:
            json.dump({"job": "test"}, f)
        r = self.run_results("generate", ok=False)
        self.assertNotEqual(r.returncode, 0)
        self.assertIn("x.json: no 'commit'", r.stdout)


class Timed(unittest.TestCase):
    def test_records_status_summary_and_machine(self):
        tmp = tempfile.mkdtemp()
        try:
            env = dict(os.environ, KPKEYS_CACHE=os.path.join(tmp, "cache"))
            r = subprocess.run([TIMED, "tooling-test-timed", "--", "sh", "-c",
                                'echo "3 passed, 1 failed"; exit 4'], env=env,
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                               universal_newlines=True)
            self.assertEqual(r.returncode, 4, r.stdout)
            self.assertIn("3 passed, 1 failed", r.stdout)
            path = os.path.join(REPO, "build", "timed", "tooling-test-timed.json")
            with open(path) as f:
                rec = json.load(f)
            self.assertEqual(rec["status"], 4)
            self.assertEqual(rec["summary"], "3 passed, 1 failed")
            self.assertEqual(rec["machine"]["cpus"], os.cpu_count())
            self.assertFalse(rec["caches"]["kernel_source"])
            self.assertFalse(rec["caches"]["project_qemu"])
            for k in ("job", "command", "commit", "date", "seconds", "fresh"):
                self.assertIn(k, rec)
        finally:
            shutil.rmtree(tmp)
            for ext in ("json", "log"):
                p = os.path.join(REPO, "build", "timed", "tooling-test-timed." + ext)
                if os.path.exists(p):
                    os.unlink(p)

    def test_bad_job_name_refused(self):
        r = subprocess.run([TIMED, "Bad Name", "--", "true"], stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, universal_newlines=True)
        self.assertEqual(r.returncode, 2)
        self.assertIn("job name", r.stdout)


class Alive(unittest.TestCase):
    def test_nothing_left_holding_the_output(self):
        """$(alive.sh ...) and alive.sh | tee end when the command does,
        not when the ticker's next tick would come."""
        import time
        env = dict(os.environ, KPKEYS_ALIVE_INTERVAL="30")
        t = time.monotonic()
        r = subprocess.run("out=$(%s quick -- echo hi 2>/dev/null); echo $out | cat"
                           % os.path.join(HERE, "alive.sh"), shell=True, env=env,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           universal_newlines=True)
        self.assertEqual(r.stdout, "hi\n")
        self.assertLess(time.monotonic() - t, 10)


    def test_ticks_and_passes_output_and_status(self):
        env = dict(os.environ, KPKEYS_ALIVE_INTERVAL="1")
        r = subprocess.run([os.path.join(HERE, "alive.sh"), "slow step", "--", "sh", "-c",
                            "sleep 2.5; echo result; exit 3"], env=env,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           universal_newlines=True)
        self.assertEqual(r.returncode, 3)
        self.assertEqual(r.stdout, "result\n")
        self.assertIn("slow step: still running, 1 s", r.stderr)
        self.assertIn("slow step: failed (exit status 3) after", r.stderr)


if __name__ == "__main__":
    unittest.main()
