#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Summarise result files of run-qemu.py and test-tooling.sh.

Prints one line per suite and run, then "N passed, N failed".  A run with a
problem (timeout, oops, missing results, failed build) counts as one failed
test of its own.  Exits 1 if anything failed.
"""

import json
import sys


def main():
    passed = failed = skipped = 0
    print("\n==== summary ====")
    for path in sys.argv[1:]:
        with open(path) as f:
            res = json.load(f)
        label = res.get("label", path)
        for suite, cases in sorted(res.get("suites", {}).items()):
            p = sum(1 for c in cases if c["status"] == "PASS")
            s = sum(1 for c in cases if c["status"] == "SKIP")
            bad = [c["name"] for c in cases if c["status"] not in ("PASS", "SKIP")]
            passed, skipped, failed = passed + p, skipped + s, failed + len(bad)
            print("%-14s %-34s %3d passed %3d failed %3d skipped%s"
                  % (label, suite, p, len(bad), s,
                     ("  FAILED: " + ", ".join(bad)) if bad else ""))
        for problem in res.get("problems", []):
            failed += 1
            print("%-14s %-34s FAILED: %s" % (label, "(run)", problem))
    if skipped:
        print("%d skipped" % skipped)
    print("%d passed, %d failed" % (passed, failed))
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
