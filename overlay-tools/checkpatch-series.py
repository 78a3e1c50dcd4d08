#!/usr/bin/env python3
"""checkpatch.pl --strict on each patch of the series, with reviewed exceptions.

usage: checkpatch-series.py TREE ALLOW PATCH...

Runs the tree's scripts/checkpatch.pl --strict on every PATCH and prints
its report.  A report is excused only if ALLOW lists it: one line per
report, "TYPE<TAB>FILE<TAB>CODE", where CODE is the added line checkpatch
quotes, without its leading '+' and surrounding blanks; a '#' line above
says why checkpatch is wrong there.  An ALLOW entry that matches nothing
is an error too, so the list cannot go stale.  Exit status 1 on any
report not excused, on a stale entry, or on a patch checkpatch could not
read ("total:" missing).
"""
import os
import re
import subprocess
import sys

HEAD = re.compile(r"^(ERROR|WARNING|CHECK):([A-Z0-9_]+): ")
WHERE = re.compile(r"^#\d+: FILE: ([^:]+):\d+:")


def load_allow(path):
    allow = {}
    with open(path) as f:
        for n, line in enumerate(f, 1):
            line = line.rstrip("\n")
            if not line.strip() or line.startswith("#"):
                continue
            parts = line.split("\t", 2)
            if len(parts) != 3:
                sys.exit("%s:%d: expected TYPE<TAB>FILE<TAB>CODE, got %r" % (path, n, line))
            allow[tuple(p.strip() for p in parts)] = 0
    return allow


def reports(text):
    """(level, type, file, code) for each report in checkpatch's output."""
    lines = text.split("\n")
    for i, line in enumerate(lines):
        m = HEAD.match(line)
        if not m:
            continue
        path = code = ""
        if i + 1 < len(lines):
            w = WHERE.match(lines[i + 1])
            if w:
                path = w.group(1)
                if i + 2 < len(lines) and lines[i + 2].startswith("+"):
                    code = lines[i + 2][1:].strip()
        yield m.group(1), m.group(2), path, code


def main():
    if len(sys.argv) < 4:
        sys.exit(__doc__.strip().split("\n\n")[1])
    tree, allow_path, patches = sys.argv[1], sys.argv[2], sys.argv[3:]
    allow = load_allow(allow_path)
    env = dict(os.environ, PATH="/usr/bin:" + os.environ.get("PATH", ""))
    bad = excused = 0
    for patch in patches:
        r = subprocess.run(["./scripts/checkpatch.pl", "--strict", "--show-types",
                            "--ignore", "FILE_PATH_CHANGES", os.path.abspath(patch)],
                           cwd=tree, env=env, capture_output=True, text=True)
        out = r.stdout
        if "\ntotal: " not in "\n" + out:
            print("%s: checkpatch printed no total (exit %d): %s"
                  % (patch, r.returncode, r.stderr.strip()[-300:]))
            bad += 1
            continue
        for level, kind, path, code in reports(out):
            key = (kind, path, code)
            if key in allow:
                allow[key] += 1
                excused += 1
                continue
            bad += 1
            print("%s: %s:%s: %s: %s" % (os.path.basename(patch), level, kind, path, code))
    for (kind, path, code), hits in allow.items():
        if not hits:
            bad += 1
            print("%s: %s\t%s\t%s: matches no report; remove it" % (allow_path, kind, path, code))
    print("checkpatch --strict: %d patches, %d reports not excused, %d excused by %s"
          % (len(patches), bad, excused, allow_path))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
