#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Check that what the project ships speaks of the software only.

The README, the tooling (overlay-tools/, the Makefile, .ci/) and what the
series posts (series/*.msg, series/cover-letter.txt, series/bench.md, the
patches under */patches/, Documentation/) describe the software, not the
sittings in which it was worked on nor a tracker's numbers.  A line fails
when it has:

  - the word for a sitting of work (WORK_WORD below, any case, singular
    or plural), except in a technical sense of the software it describes
    (a login or TTY one, its leader or ID: TECHNICAL below);
  - an issue number: "issue" followed by a number, with or without "#";
  - a name made of a sitting's number: a build directory such as
    build/bench-s<N>, or an "(s<N>)" label, <N> a number.

What the series posts also fails on a line that cites a review or the
project's own tooling (REVIEW_RE, TOOLING_RE).

README.md also fails when it is longer than README_MAX_LINES lines.
A patch is checked on the lines it adds only: its context lines are the
kernel's (or QEMU's) own text.

usage: check-wording.py [--repo DIR] [FILE ...]
  Without FILE, every file of the repository in the scope above (tracked,
  or new and not ignored).  Prints "file:line: text" for each hit, and
  exits 1 if there is one.
"""

import argparse
import os
import re
import subprocess
import sys

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
README_MAX_LINES = 300

# Spelled in two parts, so that this file passes its own check.
WORK_WORD = "sess" + "ion"
WORD_RE = re.compile(r"\b%ss?\b" % WORK_WORD, re.I)
# Technical senses: a login, TTY, SSH or terminal one, a process
# group's leader or ID, a keyring.
TECHNICAL = [
    re.compile(r"\b(login|tty|terminal|ssh|tmux|screen|shell|user|x11|desktop|tls|"
               r"debug(ger)?|gdb|monitor)[ -]%ss?\b" % WORK_WORD, re.I),
    re.compile(r"\b%ss?[ _-]?(leader|id|ids|keyring|key|keys|ticket|cookie|"
               r"manager)s?\b" % WORK_WORD, re.I),
    re.compile(r"\b(setsid|getsid)\b.*\b%s\b" % WORK_WORD, re.I),
]
ISSUE_RE = re.compile(r"\bissues?\s*(no\.?\s*)?#?\s*\d+", re.I)
NUMBERED_RE = re.compile(r"\bbuild/[\w./-]*-s\d+\b|\(s\d+\)")
# In what the series posts only: a review of the series, the project's
# own tooling.
REVIEW_RE = re.compile(r"\breview(s|ed|er|ers|ing)?\b", re.I)
TOOLING_RE = re.compile(r"\bthe project'?s\b|\bmake (check|bench|test)\b|overlay-tools/", re.I)


def posted(path):
    """Whether a repository path is part of what the series posts: a
    commit message, the cover letter and its table, a patch, or a file a
    commit adds whole (kernel paths under generic/, arch/, tools/testing/,
    Documentation/, and MAINTAINERS)."""
    if re.match(r"series/([^/]+\.msg|cover-letter(-[a-z0-9-]+)?\.txt)$", path) \
            or path in ("series/bench.md", "MAINTAINERS"):
        return True
    return path.split("/", 1)[0] in ("generic", "arch", "tools", "Documentation")


def in_scope(path):
    """Whether a repository path is one this check reads."""
    if path in ("README.md", "Makefile"):
        return True
    top = path.split("/", 1)[0]
    if top in ("overlay-tools", ".ci") or posted(path):
        return True
    return bool(re.search(r"(^|/)patches/[^/]+\.patch$", path))


def repo_files(repo):
    out = subprocess.run(["git", "-C", repo, "ls-files", "-z", "-co",
                          "--exclude-standard"], capture_output=True,
                         check=True).stdout.decode()
    return sorted(p for p in set(out.split("\0"))
                  if p and in_scope(p) and os.path.isfile(os.path.join(repo, p)))


def line_hits(text, in_posted=False):
    """What is wrong with one line, as a list of short reasons."""
    why = []
    if in_posted and REVIEW_RE.search(text):
        why.append("cites a review")
    if in_posted and TOOLING_RE.search(text):
        why.append("cites the project's tooling")
    plain = text
    for t in TECHNICAL:
        plain = t.sub(" ", plain)
    if WORD_RE.search(plain):
        why.append("names a working %s" % WORK_WORD)
    if ISSUE_RE.search(text):
        why.append("cites an issue number")
    if NUMBERED_RE.search(text):
        why.append("a name numbered after a working %s" % WORK_WORD)
    return why


def check_file(path, shown=None):
    """The hits of one file, as "file:line: text" strings."""
    shown = shown or path
    in_posted = posted(shown)
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError as e:
        return ["%s: cannot read (%s)" % (shown, e.strerror)]
    if b"\0" in data:
        return []
    lines = data.decode("utf-8", "replace").split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    hits = []
    patch = path.endswith(".patch")
    for n, line in enumerate(lines, 1):
        if patch:
            if not line.startswith("+") or line.startswith("+++ "):
                continue
            line = line[1:]
        for why in line_hits(line, in_posted):
            hits.append("%s:%d: %s: %s" % (shown, n, why, line.strip()[:160]))
    if os.path.basename(shown) == "README.md" and os.path.dirname(shown) in ("", "."):
        if len(lines) > README_MAX_LINES:
            hits.append("%s: %d lines, more than %d" % (shown, len(lines),
                                                          README_MAX_LINES))
    return hits


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repo", default=REPO)
    ap.add_argument("files", nargs="*", help="repository paths (default: all in scope)")
    args = ap.parse_args()
    files = args.files or repo_files(args.repo)
    hits = []
    for p in files:
        path = os.path.join(args.repo, p)
        hits += check_file(path, os.path.relpath(path, args.repo))
    for h in hits:
        print(h)
    if hits:
        print("check-wording: %d line(s) to rewrite in %d file(s)"
              % (len(hits), len({h.split(":", 1)[0] for h in hits})), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
