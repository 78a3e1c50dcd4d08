#!/usr/bin/env python3
"""checkpatch.pl --strict on each patch of the series, with reviewed exceptions.

usage: checkpatch-series.py TREE ALLOW PATCH...

Runs the tree's scripts/checkpatch.pl --strict on every PATCH and prints
each report.  A report is excused only if ALLOW lists it, one line per
report: "LEVEL<TAB>TYPE<TAB>FILE<TAB>CODE" (LEVEL is ERROR, WARNING or
CHECK; CODE the added line checkpatch quotes, without its '+' and
surrounding blanks); a '#' line above says why checkpatch is wrong there.
A report without a file and a quoted line (commit message, sign-off) is
never excused.  An entry that matches nothing is an error too, so the
list cannot go stale.  The reports parsed must add up to checkpatch's
own "total:" line, so that an output format this script does not know is
not taken for a clean patch.  Exit status 1 on any of these.
"""
import os
import re
import subprocess
import sys

HEAD = re.compile(r"^(ERROR|WARNING|CHECK):([A-Z0-9_]+): (.*)$")
WHERE = re.compile(r"^#\d+: FILE: ([^:]+):\d+:")
TOTAL = re.compile(r"^total: (\d+) errors, (\d+) warnings, (?:(\d+) checks, )?\d+ lines checked",
                   re.M)


def load_allow(path):
    allow = {}
    with open(path) as f:
        for n, line in enumerate(f, 1):
            line = line.rstrip("\n")
            if not line.strip() or line.startswith("#"):
                continue
            parts = [p.strip() for p in line.split("\t", 3)]
            if len(parts) != 4 or not all(parts) or \
                    parts[0] not in ("ERROR", "WARNING", "CHECK"):
                sys.exit("%s:%d: expected LEVEL<TAB>TYPE<TAB>FILE<TAB>CODE, "
                         "none empty, got %r" % (path, n, line))
            key = tuple(parts)
            if key in allow:
                sys.exit("%s:%d: duplicate entry" % (path, n))
            allow[key] = 0
    return allow


def reports(text):
    """(level, type, file, code, the report's lines) for each report."""
    lines = text.split("\n")
    for i, line in enumerate(lines):
        m = HEAD.match(line)
        if not m:
            continue
        path = code = ""
        shown = [line]
        if i + 1 < len(lines) and lines[i + 1].startswith("#"):
            shown.append(lines[i + 1])
            w = WHERE.match(lines[i + 1])
            if w:
                path = w.group(1)
                if i + 2 < len(lines) and lines[i + 2].startswith("+"):
                    code = lines[i + 2][1:].strip()
                    shown.append(lines[i + 2])
        yield m.group(1), m.group(2), path, code, shown


def main():
    if len(sys.argv) < 4:
        sys.exit(__doc__.strip().split("\n\n")[1])
    tree, allow_path, patches = sys.argv[1], sys.argv[2], sys.argv[3:]
    allow = load_allow(allow_path)
    env = dict(os.environ, PATH="/usr/bin:" + os.environ.get("PATH", ""))
    bad = excused = 0
    for patch in patches:
        name = os.path.basename(patch)
        r = subprocess.run(["./scripts/checkpatch.pl", "--strict", "--show-types",
                            "--color=never", "--ignore", "FILE_PATH_CHANGES",
                            os.path.abspath(patch)],
                           cwd=tree, env=env, capture_output=True, text=True)
        total = TOTAL.search(r.stdout)
        if not total:
            print("%s: checkpatch printed no total (exit %d): %s"
                  % (name, r.returncode, r.stderr.strip()[-300:]))
            bad += 1
            continue
        found = list(reports(r.stdout))
        counted = sum(int(n or 0) for n in total.groups())
        if counted != len(found):
            print("%s: checkpatch counts %d reports, %d were read: unknown output"
                  % (name, counted, len(found)))
            bad += 1
        for level, kind, path, code, shown in found:
            key = (level, kind, path, code)
            if path and code and key in allow:
                allow[key] += 1
                excused += 1
                continue
            bad += 1
            print("%s:\n  %s" % (name, "\n  ".join(shown)))
    for key, hits in allow.items():
        if not hits:
            bad += 1
            print("%s: %s: matches no report; remove it" % (allow_path, "\t".join(key)))
    print("checkpatch --strict: %d patches, %d reports not excused, %d excused by %s"
          % (len(patches), bad, excused, allow_path))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
