#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Assemble the kpkeys kernel tree from the repository, and export it back.

The repository holds the project as an overlay on Linux 7.3:

  generic/              arch-independent kernel files (generic/mm/x.c -> mm/x.c)
  arch/<arch>/          arch files, at their kernel path
  Documentation/        at its kernel path
  tools/testing/        at its kernel path
  MAINTAINERS           our MAINTAINERS entry (whole entries, nothing else)
  <component>/patches/<slug>.patch
                        edits to files that exist in the base kernel (or to
                        files added by an earlier commit), one per commit
  series/series         the commit manifest, in order
  series/<slug>.msg     the commit message of each commit, verbatim

Commit <-> file mapping (what keeps export mechanical):

  * a new file belongs to the commit that adds it and is stored as the
    whole series leaves it, so that the repository shows the final code;
    later changes to it are part of the later commits' patches, and the
    version the adding commit holds is what undoing them gives;
  * a commit's edits to pre-existing files are stored per component in
    <component>/patches/<slug>.patch (plain 'git diff' output);
  * MAINTAINERS entries are added whole by the commit that lists
    'maintainers' in the manifest, at their sorted position.

  tree.py assemble --ksrc DIR --tree DIR    (re)build the git tree
  tree.py export --tree DIR                 write the tree's commits back
  tree.py series --tree DIR --out DIR       git format-patch + cover letter
  tree.py am-check --tree DIR --out DIR     that series, 'git am' to the base

Commits marked 'unposted' in the manifest (the project's own tooling, such
as the test-harness self-test) must come last; 'series' formats the ones
before them.  A commit marked 'series <name>' is posted in a separate
series of that name (a fix the feature needs, a test tool built on it),
with its own cover letter, series/cover-letter-<name>.txt; the others
are the main series.  Each series is one run of consecutive commits.
"""

import argparse
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SERIES_DIR = os.path.join(REPO, "series")
MANIFEST = os.path.join(SERIES_DIR, "series")
ARCH_COMPONENTS = ("arch/arm64", "arch/x86", "arch/powerpc")
PLAIN_COMPONENTS = ARCH_COMPONENTS + ("Documentation", "tools/testing")
COMPONENTS = PLAIN_COMPONENTS + ("generic",)
BASE_TAG = "kpkeys-base"
MAIN_SERIES = "kpkeys"
# Fixed identity and dates: the same repository always gives the same commits.
GIT_ENV = {
    "GIT_AUTHOR_NAME": "kpkeys developers",
    "GIT_AUTHOR_EMAIL": "kpkeys@lists.example.org",
    "GIT_COMMITTER_NAME": "kpkeys developers",
    "GIT_COMMITTER_EMAIL": "kpkeys@lists.example.org",
    "GIT_AUTHOR_DATE": "2026-01-01T00:00:00+0000",
    "GIT_COMMITTER_DATE": "2026-01-01T00:00:00+0000",
}
DIFF_OPTS = ["--no-color", "--no-ext-diff", "--no-renames", "--abbrev=12",
             "--src-prefix=a/", "--dst-prefix=b/", "--no-relative"]


class TreeError(Exception):
    pass


def log(msg):
    print("tree: " + msg, file=sys.stderr)


def git(tree, *args, check=True, env=None, stdin=None, binary=False):
    full_env = dict(os.environ)
    full_env.update(GIT_ENV)
    if env:
        full_env.update(env)
    res = subprocess.run(["git", "-C", tree, "-c", "core.quotepath=off",
                          "-c", "core.autocrlf=false", *args],
                         input=stdin, capture_output=True, env=full_env)
    if check and res.returncode != 0:
        raise TreeError("git %s failed: %s" % (" ".join(args),
                        res.stderr.decode(errors="replace").strip()))
    return res.stdout if binary else res.stdout.decode()


# ---------------------------------------------------------------- paths

def component_of(kpath):
    """Component directory that holds kernel path @kpath."""
    if kpath == "MAINTAINERS":
        return "MAINTAINERS"
    for comp in PLAIN_COMPONENTS:
        if kpath.startswith(comp + "/"):
            return comp
    if kpath.startswith("arch/"):
        raise TreeError("%s: no component for this architecture (only %s)"
                        % (kpath, ", ".join(ARCH_COMPONENTS)))
    return "generic"


def repo_path_of(kpath):
    comp = component_of(kpath)
    if comp == "generic":
        return "generic/" + kpath
    return kpath


def kernel_path_of(rpath):
    if rpath.startswith("generic/"):
        return rpath[len("generic/"):]
    return rpath


def patch_path(comp, slug):
    return os.path.join(comp, "patches", slug + ".patch")


# ---------------------------------------------------------------- manifest

class Commit:
    def __init__(self, slug):
        self.slug = slug
        self.adds = []
        self.maintainers = False
        self.unposted = False
        self.series = None      # a separate series' name; None: the main one

    def msg_path(self):
        return os.path.join(SERIES_DIR, self.slug + ".msg")


def read_manifest():
    commits = []
    if not os.path.exists(MANIFEST):
        return commits
    with open(MANIFEST) as f:
        for n, line in enumerate(f, 1):
            if not line.strip() or line.startswith("#"):
                continue
            words = line.split()
            if words[0] == "commit" and len(words) == 2:
                commits.append(Commit(words[1]))
            elif words[0] == "add" and len(words) == 2 and commits:
                commits[-1].adds.append(words[1])
            elif words == ["maintainers"] and commits:
                commits[-1].maintainers = True
            elif words == ["unposted"] and commits:
                commits[-1].unposted = True
            elif words[0] == "series" and len(words) == 2 and commits \
                    and re.match(r"^[a-z0-9][a-z0-9-]*$", words[1]) \
                    and words[1] != MAIN_SERIES:
                commits[-1].series = words[1]
            else:
                raise TreeError("%s:%d: cannot parse '%s'"
                                % (MANIFEST, n, line.rstrip()))
    return commits


MANIFEST_HEADER = """\
# The kpkeys series, one block per commit, in posting order.
#   commit <slug>        message in series/<slug>.msg; edits to existing
#                        files in <component>/patches/<slug>.patch
#   add <path>           a new file this commit adds (repository path)
#   maintainers          this commit adds the entries in MAINTAINERS
#   unposted             project tooling, not a kernel patch: 'make series'
#                        leaves it out (unposted commits come last)
#   series <name>        posted in the separate series <name> (cover letter
#                        series/cover-letter-<name>.txt), not the main one
# Written by 'make export', which keeps 'unposted' and 'series' by slug;
# edit the kernel tree, not this file (but for those two).
"""


# ---------------------------------------------------------------- base

def kernel_version(ksrc):
    try:
        with open(os.path.join(ksrc, "Makefile")) as f:
            head = f.read(4096)
    except OSError as e:
        raise TreeError("%s: not a kernel tree (%s)" % (ksrc, e.strerror))
    fields = {}
    for key in ("VERSION", "PATCHLEVEL", "SUBLEVEL"):
        m = re.search(r"^%s = *(\S*)" % key, head, re.M)
        fields[key] = m.group(1) if m else ""
    if not fields["VERSION"]:
        raise TreeError("%s: Makefile has no VERSION, not a kernel tree" % ksrc)
    return "%s.%s.%s" % (fields["VERSION"], fields["PATCHLEVEL"],
                         fields["SUBLEVEL"] or "0")


def check_version(ksrc):
    ver = kernel_version(ksrc)
    if not ver.startswith("7.3."):
        raise TreeError("%s is Linux %s; kpkeys applies to Linux 7.3.x only. "
                        "Point KSRC= at a 7.3 tree, or leave it unset to use "
                        "Debian's linux-source-7.3." % (ksrc, ver))
    return ver


def base_id(ksrc):
    return "%s %s" % (os.path.realpath(ksrc), check_version(ksrc))


def clone_base(other, tree):
    """Create @tree from the base commit of the assembled tree @other."""
    log("cloning the base commit of %s" % other)
    shutil.rmtree(tree, ignore_errors=True)
    subprocess.run(["git", "clone", "-q", "--shared", "--no-checkout",
                    other, tree], check=True)
    git(tree, "checkout", "-q", "-B", "kpkeys", BASE_TAG)
    git(tree, "fetch", "-q", other, "tag", BASE_TAG)
    shutil.copy(os.path.join(other, ".git", "kpkeys-base"),
                os.path.join(tree, ".git", "kpkeys-base"))


def unignore_top_level(tree):
    """Drop Debian's ignore-everything-at-the-top-level rule, if present.

    linux-source's .gitignore ends with '/*' (Debian keeps its packaging
    repository separate), which would hide every new file from 'git add'.
    The change is its own commit after the pristine one, below the series.
    """
    path = os.path.join(tree, ".gitignore")
    try:
        with open(path) as f:
            text = f.read()
    except OSError:
        return
    cut = text.find("\n#\n# Debian packaging")
    if cut < 0:
        return
    with open(path, "w") as f:
        f.write(text[:cut + 1])
    git(tree, "commit", "-q", "-a", "-m",
        "Drop Debian's top-level ignore-all rule so new files can be added")


def make_base(ksrc, tree):
    """Create @tree as a git repository whose first commit is @ksrc."""
    ver = check_version(ksrc)
    log("creating base commit from %s (Linux %s), about a minute" % (ksrc, ver))
    tmp = tree + ".tmp"
    shutil.rmtree(tmp, ignore_errors=True)
    os.makedirs(os.path.dirname(tmp) or ".", exist_ok=True)
    subprocess.run(["cp", "-a", "--reflink=auto", ksrc, tmp], check=True)
    for junk in (".kpkeys-extracted", ".git"):
        p = os.path.join(tmp, junk)
        if os.path.isdir(p):
            shutil.rmtree(p)
        elif os.path.exists(p):
            os.unlink(p)
    git(tmp, "init", "-q", "-b", "kpkeys")
    git(tmp, "config", "gc.auto", "0")
    # The base commit must be the pristine tree: ignore rules must not drop
    # anything (Debian's tarball ships no generated files).
    git(tmp, "add", "-A", "-f", ".")
    git(tmp, "commit", "-q", "-m", "Linux %s (base)" % ver)
    unignore_top_level(tmp)
    git(tmp, "tag", BASE_TAG)
    with open(os.path.join(tmp, ".git", "kpkeys-base"), "w") as f:
        f.write(base_id(ksrc) + "\n")
    shutil.rmtree(tree, ignore_errors=True)
    os.rename(tmp, tree)


def tree_base_id(tree):
    try:
        with open(os.path.join(tree, ".git", "kpkeys-base")) as f:
            return f.read().strip()
    except OSError:
        return None


def ensure_clean(tree, what):
    if git(tree, "status", "--porcelain", "--untracked-files=no").strip():
        raise TreeError("%s has uncommitted edits; commit them in the tree "
                        "(git commit, or --fixup + rebase -i --autosquash) "
                        "and run 'make export' before %s" % (tree, what))


# ---------------------------------------------------------------- assemble

def maintainers_entries():
    path = os.path.join(REPO, "MAINTAINERS")
    with open(path) as f:
        text = f.read()
    entries = [e.strip("\n") + "\n" for e in re.split(r"\n\s*\n", text)
               if e.strip()]
    for e in entries:
        if not re.match(r"^[A-Z0-9]", e):
            raise TreeError("MAINTAINERS: entry must start with its title: "
                            + e.splitlines()[0])
    return entries


def insert_maintainers(tree, entries):
    path = os.path.join(tree, "MAINTAINERS")
    with open(path) as f:
        lines = f.read().split("\n")
    for entry in entries:
        title = entry.splitlines()[0]
        # Entries start after the "Maintainers List" banner: a title line
        # followed by a tag line, separated by blank lines.
        start = next(i for i, l in enumerate(lines)
                     if l.startswith("3C59X NETWORK DRIVER"))
        pos = None
        for i in range(start, len(lines)):
            if (lines[i - 1] == "" and lines[i] and lines[i][0].isalnum()
                    and i + 1 < len(lines)
                    and re.match(r"^[A-Z]:\t", lines[i + 1])):
                if lines[i].upper() > title.upper():
                    pos = i
                    break
        if pos is None:
            raise TreeError("MAINTAINERS: no place found for " + title)
        lines[pos:pos] = entry.rstrip("\n").split("\n") + [""]
    with open(path, "w") as f:
        f.write("\n".join(lines))


def repo_digest():
    """Digest of everything the repository's series is made of."""
    h = hashlib.sha256()
    paths = sorted(owned_paths() | {os.path.relpath(MANIFEST, REPO)})
    for p in paths:
        h.update(p.encode() + b"\0")
        with open(os.path.join(REPO, p), "rb") as f:
            h.update(f.read() + b"\0")
    return h.hexdigest()


def stamp_path(tree):
    return os.path.join(tree, ".git", "kpkeys-assembled")


def write_stamp(tree):
    with open(stamp_path(tree), "w") as f:
        f.write("%s %s\n" % (repo_digest(), git(tree, "rev-parse", "HEAD").strip()))


def has_local_work(tree):
    """True if @tree holds edits or commits that 'make export' has not seen."""
    try:
        with open(stamp_path(tree)) as f:
            head = f.read().split()[1]
    except (OSError, IndexError):
        return True
    dirty = git(tree, "status", "--porcelain", "--untracked-files=no").strip()
    return bool(dirty) or git(tree, "rev-parse", "HEAD").strip() != head


def tree_state(tree, ksrc):
    """'missing', 'current', 'stale' (repo moved on) or 'local' (edits)."""
    if not os.path.isdir(os.path.join(tree, ".git")) or tree_base_id(tree) != base_id(ksrc):
        return "missing"
    if has_local_work(tree):
        return "local"
    with open(stamp_path(tree)) as f:
        digest = f.read().split()[0]
    return "current" if digest == repo_digest() else "stale"


def assemble(ksrc, tree, if_needed, reuse_base=None):
    state = tree_state(tree, ksrc)
    if state == "current":
        return
    if state == "missing" and os.path.isdir(os.path.join(tree, ".git")):
        # Another base: the tree is rebuilt, so it must hold nothing unexported.
        if has_local_work(tree):
            raise TreeError("%s was built from another base (%s) and has "
                            "edits that are not exported; run 'make export' "
                            "with that KSRC first, or remove the tree"
                            % (tree, tree_base_id(tree)))
    if state == "local":
        if if_needed:
            log("%s has edits that are not exported; building it as it is "
                "(run 'make export' to keep them)" % tree)
            return
        ensure_clean(tree, "re-assembling it")
        raise TreeError("%s has commits that were not exported; run "
                        "'make export' first, or remove the tree" % tree)
    # Before the tree is touched: a repository whose new files do not
    # match its patches changes nothing.
    commits = read_manifest()
    versions = added_versions(commits)
    if state == "stale":
        git(tree, "checkout", "-q", "-B", "kpkeys", BASE_TAG)
    elif reuse_base and tree_base_id(os.path.abspath(reuse_base)) == base_id(ksrc):
        reuse_base = os.path.abspath(reuse_base)
        clone_base(reuse_base, tree)
    else:
        make_base(ksrc, tree)
    for c in commits:
        apply_commit(tree, c, versions)
    write_stamp(tree)
    log("%s: %d commits on top of %s" % (tree, len(commits),
                                         git(tree, "log", "-1", "--format=%s",
                                             BASE_TAG).strip()))


def patched_paths(patch):
    """The kernel paths a 'git diff' patch changes."""
    paths = []
    with open(patch, "rb") as f:
        for line in f:
            m = re.match(rb"^diff --git a/(\S+) b/\S+$", line)
            if m:
                paths.append(m.group(1).decode())
    return paths


def added_versions(commits):
    """Repository path -> the content its adding commit gives a new file.

    The repository holds a new file as the whole series leaves it; the
    later commits' changes to it are in their patches.  Undoing those
    changes on a copy of the final files, last commit first, gives each
    file as the commit that adds it has it.
    """
    import tempfile
    work = tempfile.mkdtemp(prefix="kpkeys-added.")
    try:
        live = set()
        for c in commits:
            for rpath in c.adds:
                src = os.path.join(REPO, rpath)
                if not os.path.isfile(src):
                    raise TreeError("series/series: commit %s adds %s, which "
                                    "does not exist" % (c.slug, rpath))
                dst = os.path.join(work, kernel_path_of(rpath))
                os.makedirs(os.path.dirname(dst), exist_ok=True)
                shutil.copyfile(src, dst)
                live.add(kernel_path_of(rpath))
        versions = {}
        for c in reversed(commits):
            for comp in COMPONENTS:
                p = os.path.join(REPO, patch_path(comp, c.slug))
                if not os.path.exists(p):
                    continue
                touched = [k for k in patched_paths(p) if k in live]
                if not touched:
                    continue
                res = subprocess.run(["git", "apply", "-R", "--whitespace=nowarn"]
                                     + ["--include=" + k for k in touched] + [p],
                                     cwd=work, capture_output=True, text=True)
                if res.returncode:
                    raise TreeError("%s: its changes to %s cannot be undone on "
                                    "the final version of the file, so the "
                                    "version of the commit that adds it is not "
                                    "known (was the file edited in the "
                                    "repository and not in the tree?): %s"
                                    % (patch_path(comp, c.slug), ", ".join(touched),
                                       res.stderr.strip()))
            for rpath in c.adds:
                kpath = kernel_path_of(rpath)
                with open(os.path.join(work, kpath), "rb") as f:
                    versions[rpath] = f.read()
                live.discard(kpath)
        return versions
    finally:
        shutil.rmtree(work, ignore_errors=True)


def apply_commit(tree, c, versions):
    for rpath in c.adds:
        dst = os.path.join(tree, kernel_path_of(rpath))
        if os.path.lexists(dst):
            raise TreeError("%s: commit %s adds it but the kernel already "
                            "has it; store the change as a patch"
                            % (rpath, c.slug))
        os.makedirs(os.path.dirname(dst), exist_ok=True)
        with open(dst, "wb") as f:
            f.write(versions[rpath])
        shutil.copymode(os.path.join(REPO, rpath), dst)
    for comp in COMPONENTS:
        p = os.path.join(REPO, patch_path(comp, c.slug))
        if os.path.exists(p):
            res = subprocess.run(["git", "-C", tree, "apply", "--index",
                                  "--whitespace=nowarn", p],
                                 capture_output=True, text=True)
            if res.returncode:
                raise TreeError("%s does not apply: %s"
                                % (patch_path(comp, c.slug), res.stderr.strip()))
    if c.maintainers:
        insert_maintainers(tree, maintainers_entries())
    git(tree, "add", "-A", "-f", "--", *[kernel_path_of(a) for a in c.adds]
        + ["MAINTAINERS"])
    git(tree, "commit", "-q", "--allow-empty", "--cleanup=verbatim",
        "-F", c.msg_path())


# ---------------------------------------------------------------- export

def slugify(subject):
    s = re.sub(r"[^a-z0-9]+", "-", subject.lower()).strip("-")
    return s[:60].rstrip("-") or "commit"


def commit_message(tree, rev):
    raw = git(tree, "cat-file", "commit", rev, binary=True)
    return raw.split(b"\n\n", 1)[1] if b"\n\n" in raw else b""


def read_manifest_text():
    try:
        with open(MANIFEST) as f:
            return f.read()
    except OSError:
        return None


def manifest_text(tree):
    return render_manifest([c for c, _ in tree_commits(tree)])


def render_manifest(commits):
    out = [MANIFEST_HEADER]
    for c in commits:
        out.append("\ncommit %s\n" % c.slug)
        for a in c.adds:
            out.append("\tadd %s\n" % a)
        if c.maintainers:
            out.append("\tmaintainers\n")
        if c.series:
            out.append("\tseries %s\n" % c.series)
        if c.unposted:
            out.append("\tunposted\n")
    return "".join(out)


def tree_commits(tree):
    """(Commit, rev) for every commit after the base.

    A commit keeps the slug of the manifest entry at the same position when
    the subject is unchanged, else the slug of any entry with its subject;
    a new commit gets a slug made from its subject.
    """
    old = read_manifest()
    old_subjects = []
    for c in old:
        try:
            with open(c.msg_path(), "rb") as f:
                old_subjects.append(f.read().split(b"\n", 1)[0])
        except OSError:
            old_subjects.append(None)
    revs = git(tree, "rev-list", "--reverse", BASE_TAG + "..HEAD").split()
    result = []
    used = set()
    for i, rev in enumerate(revs):
        subject = commit_message(tree, rev).split(b"\n", 1)[0]
        slug = None
        if i < len(old) and old_subjects[i] == subject:
            slug = old[i].slug
        elif subject in old_subjects:
            slug = old[old_subjects.index(subject)].slug
        if slug is None or slug in used:
            base = slugify(subject.decode(errors="replace"))
            slug, n = base, 2
            while slug in used:
                slug, n = "%s-%d" % (base, n), n + 1
        used.add(slug)
        c = Commit(slug)
        c.unposted = any(o.slug == slug and o.unposted for o in old)
        c.series = next((o.series for o in old if o.slug == slug), None)
        status = git(tree, "diff-tree", "-r", "--no-commit-id", "--no-renames",
                     "--name-status", rev + "^", rev)
        for line in status.splitlines():
            st, path = line.split("\t", 1)
            if path == "MAINTAINERS":
                c.maintainers = True
            elif st == "A":
                c.adds.append(repo_path_of(path))
        c.adds.sort()
        result.append((c, rev))
    return result


def maintainers_added(tree, rev):
    diff = git(tree, "diff", *DIFF_OPTS, "-U0", rev + "^", rev, "--",
               "MAINTAINERS")
    added = []
    for line in diff.splitlines():
        if line.startswith("+++") or line.startswith("---"):
            continue
        if line.startswith("-"):
            raise TreeError("MAINTAINERS: a commit may only add whole entries "
                            "(it removes: %s)" % line)
        if line.startswith("+"):
            added.append(line[1:])
    text = "\n".join(added).strip("\n")
    return text + "\n" if text else ""


def collect(tree):
    """Map repository path -> bytes for everything the tree's series holds."""
    files = {}
    commits = tree_commits(tree)
    maint = ""
    for c, rev in commits:
        for rpath in c.adds:
            kpath = kernel_path_of(rpath)
            # As the whole series leaves it (assemble() derives the
            # version of the adding commit).
            res = subprocess.run(["git", "-C", tree, "cat-file", "-e",
                                  "HEAD:" + kpath], capture_output=True)
            if res.returncode:
                raise TreeError("%s: commit %s adds it and a later commit "
                                "removes it; the repository holds a new file "
                                "as the series leaves it, so fold the two "
                                "commits' changes to it" % (kpath, c.slug))
            files[rpath] = git(tree, "show", "HEAD:" + kpath, binary=True)
        if c.maintainers:
            if maint:
                raise TreeError("MAINTAINERS: only one commit may add entries")
            maint = maintainers_added(tree, rev)
        changed = git(tree, "diff-tree", "-r", "--no-commit-id", "--no-renames",
                      "--name-status", rev + "^", rev)
        per_comp = {}
        for line in changed.splitlines():
            st, kpath = line.split("\t", 1)
            if kpath == "MAINTAINERS" or (st == "A"):
                continue
            per_comp.setdefault(component_of(kpath), []).append(kpath)
        for comp, paths in per_comp.items():
            diff = git(tree, "diff", *DIFF_OPTS, rev + "^", rev, "--", *paths,
                       binary=True)
            files[patch_path(comp, c.slug)] = diff
        files[os.path.relpath(c.msg_path(), REPO)] = commit_message(tree, rev)
    if maint:
        # Blank line between entries, as in the kernel's MAINTAINERS.
        files["MAINTAINERS"] = maint.encode()
    return files


def owned_paths():
    """Every repository path the current manifest accounts for."""
    paths = set()
    for c in read_manifest():
        paths.update(c.adds)
        paths.add(os.path.relpath(c.msg_path(), REPO))
        for comp in COMPONENTS:
            p = patch_path(comp, c.slug)
            if os.path.exists(os.path.join(REPO, p)):
                paths.add(p)
        if c.maintainers:
            paths.add("MAINTAINERS")
    return paths


def export(tree):
    if not os.path.isdir(os.path.join(tree, ".git")):
        raise TreeError("%s is not an assembled tree; run 'make tree'" % tree)
    ensure_clean(tree, "exporting")
    files = collect(tree)
    manifest = manifest_text(tree)
    stale = owned_paths() - set(files)
    for p in sorted(stale):
        os.unlink(os.path.join(REPO, p))
        log("removed %s" % p)
    changed = 0
    for p, data in sorted(files.items()):
        full = os.path.join(REPO, p)
        try:
            with open(full, "rb") as f:
                if f.read() == data:
                    continue
        except OSError:
            pass
        os.makedirs(os.path.dirname(full), exist_ok=True)
        with open(full, "wb") as f:
            f.write(data)
        changed += 1
        log("wrote %s" % p)
    # Keep executable bits of new files.
    for c, rev in tree_commits(tree):
        for rpath in c.adds:
            mode = git(tree, "ls-tree", "HEAD", kernel_path_of(rpath)).split()[0]
            os.chmod(os.path.join(REPO, rpath), 0o755 if mode == "100755" else 0o644)
    gone = {c.slug for c in read_manifest() if c.unposted or c.series} - {
        c.slug for c, _ in tree_commits(tree)}
    for slug in sorted(gone):
        log("warning: %s was marked 'unposted' or 'series' and is no longer "
            "in the tree (its subject changed?): mark its successor so in "
            "series/series, or 'make series' posts it in the main series"
            % slug)
    if read_manifest_text() != manifest:
        os.makedirs(SERIES_DIR, exist_ok=True)
        with open(MANIFEST, "w") as f:
            f.write(manifest)
        changed += 1
        log("wrote series/series")
    write_stamp(tree)
    log("export: %d files changed, %d removed" % (changed, len(stale)))


# ---------------------------------------------------------------- series

PRISTINE_SUBJECT = "Drop Debian's top-level ignore-all rule"


def pristine_base(tree):
    """The pristine kernel commit: below the local .gitignore commit, if any."""
    subject = git(tree, "log", "-1", "--format=%s", BASE_TAG).strip()
    return BASE_TAG + "^" if subject.startswith(PRISTINE_SUBJECT) else BASE_TAG


def posted_range(tree):
    """(first, last) revisions of the posted series, or an error.

    Unposted commits (the manifest's 'unposted') must all come after the
    posted ones: a posted patch cannot build on one that is not sent.
    """
    commits = tree_commits(tree)
    if not commits:
        raise TreeError("the series is empty")
    flags = [c.unposted for c, _ in commits]
    n = flags.index(True) if True in flags else len(flags)
    if any(not f for f in flags[n:]):
        raise TreeError("unposted commit %s is followed by posted ones; move "
                        "it to the end of the series" % commits[n][0].slug)
    if n == 0:
        raise TreeError("every commit is unposted: nothing to post")
    return commits[0][1], commits[n - 1][1], n, len(commits) - n


def series_blocks(tree):
    """[(name, [rev, ...])] of the posted series, in the tree's order.

    The main series is MAIN_SERIES; each series must be one run of
    consecutive commits, so that it applies on the ones before it.
    """
    first, last, n, _ = posted_range(tree)
    blocks = []
    for c, rev in tree_commits(tree)[:n]:
        name = c.series or MAIN_SERIES
        if blocks and blocks[-1][0] == name:
            blocks[-1][1].append(rev)
            continue
        if any(b[0] == name for b in blocks):
            raise TreeError("series %s is not one run of consecutive commits "
                            "(at %s): move its commits together" % (name, c.slug))
        blocks.append((name, [rev]))
    if not any(b[0] == MAIN_SERIES for b in blocks):
        raise TreeError("no commit is in the main series")
    return blocks


def series_out(out, name):
    """Where 'series' writes series @name: the main one in @out itself."""
    return out if name == MAIN_SERIES else os.path.join(out, name)


def cover_prefix(name):
    """The subject prefix of series @name: its cover text may start with a
    line "prefix: <prefix>"; "RFC PATCH" otherwise."""
    try:
        with open(cover_path(name)) as f:
            m = re.match(r"^prefix: (.+)\n", f.read())
    except OSError:
        m = None
    return m.group(1).strip() if m else "RFC PATCH"


def cover_path(name):
    return os.path.join(SERIES_DIR, "cover-letter.txt" if name == MAIN_SERIES
                        else "cover-letter-%s.txt" % name)


def bench_table(report):
    """The cross-architecture table of a bench.py report, with its legend.

    @report: a report.md of 'make bench-all' or 'make bench-report', or
    the directory that holds one.
    """
    if os.path.isdir(report):
        report = os.path.join(report, "report.md")
    try:
        with open(report) as f:
            text = f.read()
    except OSError as e:
        raise TreeError("%s: %s (give a report.md of 'make bench-all' or 'make "
                        "bench-report', or its directory)" % (report, e.strerror))
    # The legend is the paragraph between the heading and the table; older
    # reports have none there, and the first per-arch legend serves.
    table = re.search(r"^## Cross-architecture overhead\n\n(?:([^|\n].*)\n\n)?((?:\|.*\n)+)",
                      text, re.M)
    if not table:
        raise TreeError("%s has no 'Cross-architecture overhead' table: is it "
                        "a report of 'make bench-all' or 'make bench-report' "
                        "(bench.py)?" % report)
    legend = table.group(1)
    if legend is None:
        m = re.search(r"^Overhead relative to the baseline.*$", text, re.M)
        legend = m.group(0) if m else None
    # Where the numbers come from, from the run's own record (bench-all's
    # run.json) where there is one: no local path goes into the cover letter.
    head = ""
    meta = os.path.join(os.path.dirname(report), "run.json")
    if os.path.exists(meta):
        with open(meta) as f:
            run = json.load(f)
        qemus = sorted({p.get("machine", "") for p in run.get("provenance", [])} - {""})
        head = ("The %s run of %s, series commit %s, %d boots x %d repetitions per "
                "cell (%s).\n\n" % (run.get("set", "benchmark"), run.get("date", "?")[:10],
                                    run.get("commit", "?")[:12], run.get("boots", 0),
                                    run.get("reps", 0), "; ".join(qemus) or "QEMU"))
    return head + (legend + "\n\n" if legend else "") + table.group(2)


KERNEL_SHA_RE = re.compile(r"Linux version \S+?-g([0-9a-f]{7,})(-dirty)?\b")


def verified_summary(results, head):
    """One line per boot of the latest 'make check' runs in @results.

    Only boots of a kernel built from @head, with no uncommitted change,
    are listed (the kernel's version string carries both); the others are
    counted as left out.
    """
    import json
    lines = []
    stale = []
    for name in sorted(os.listdir(results)) if os.path.isdir(results) else []:
        if not name.endswith(".log.json"):
            continue
        try:
            with open(os.path.join(results, name[:-len(".json")]), errors="replace") as f:
                m = KERNEL_SHA_RE.search(f.read())
        except OSError:
            m = None
        if not m or m.group(2) or not head.startswith(m.group(1)):
            stale.append(name[:-len(".log.json")])
            continue
        with open(os.path.join(results, name)) as f:
            r = json.load(f)
        counts = {"PASS": 0, "SKIP": 0}
        bad = 0
        for cases in r.get("suites", {}).values():
            for c in cases:
                if c["status"] in counts:
                    counts[c["status"]] += 1
                else:
                    bad += 1
        when = time.strftime("%Y-%m-%d", time.gmtime(
            os.path.getmtime(os.path.join(results, name))))
        lines.append("  %-24s %s %4d passed, %d failed, %3d skipped%s"
                     % (r.get("label", name), when, counts["PASS"], bad,
                        counts["SKIP"], "" if not r.get("problems") else
                        " (%d problems)" % len(r["problems"])))
    if not lines:
        lines.append("  (no results of commit %s in %s: run 'make check-all' "
                     "before 'make series')" % (head[:12], os.path.relpath(results, REPO)))
    if stale:
        import textwrap
        lines.append(textwrap.fill(
            "(left out, not of commit %s or built with local changes: %s)"
            % (head[:12], " ".join(stale)), 72,
            initial_indent="  ", subsequent_indent="   "))
    return "\n".join(lines)


ARCHES = ("x86_64", "arm64", "powerpc")


def bisect_keys():
    """The build key of each arch for gcc, and the record's path.

    From 'bisect-check.sh --keys', the one place that says what a pass
    depends on; an arch without a compiler gets None.
    """
    env = dict(os.environ)
    env.pop("LLVM", None)
    keys, record = {}, os.path.join(SERIES_DIR, "bisect-check.txt")
    try:
        out = subprocess.run([os.path.join(REPO, "overlay-tools", "bisect-check.sh"),
                              "--keys"] + list(ARCHES), env=env, check=True,
                             stdout=subprocess.PIPE, universal_newlines=True).stdout
        for line in out.splitlines():
            name, value = line.split(None, 1)
            if name == "record":
                record = value
            else:
                keys[name] = None if value == "-" else value
    except (OSError, subprocess.CalledProcessError, ValueError) as e:
        print("tree: bisect-check.sh --keys failed (%s): the cover letter says "
              "'not known' for every arch" % e, file=sys.stderr)
        keys = {}
    return keys, record


def bisect_summary(tree, record=None, keys=None):
    """Per arch, how many posted patches 'make bisect-check' has passed.

    A patch counts for an arch when the record has a line of its tree
    (its whole source) for that arch with the arch's current build key: a
    pass of this very patch under today's rules, built, or (seconds "-")
    changing nothing the arch compiles after a patch that passed.
    """
    if keys is None or record is None:
        k, r = bisect_keys()
        keys, record = keys or k, record or r
    first, last, n, _ = posted_range(tree)
    trees = git(tree, "log", "--format=%T", first + "^.." + last).split()
    passed = {a: {} for a in ARCHES}
    built = {a: set() for a in ARCHES}
    stale = {a: 0 for a in ARCHES}
    try:
        with open(record) as f:
            for line in f:
                w = line.split()
                if len(w) < 5 or line.startswith("#") or w[0] not in passed \
                        or w[1] not in trees:
                    continue
                if w[2] != keys.get(w[0]):
                    stale[w[0]] += 1
                    continue
                passed[w[0]][w[1]] = max(w[3], passed[w[0]].get(w[1], ""))
                if w[4] != "-":
                    built[w[0]].add(w[1])
    except OSError:
        pass
    # A pass without a build ("-") holds only after a pass of the patch
    # before it.
    for a in ARCHES:
        ok = False
        for t in reversed(trees):
            if t in passed[a] and t not in built[a] and not ok:
                del passed[a][t]
            ok = t in passed[a]
    lines = []
    for a in ARCHES:
        got = passed[a]
        old = " (%d older passes under another build key not counted)" % stale[a] \
            if stale[a] else ""
        if not keys.get(a):
            lines.append("  %-8s not known: no compiler for it here%s" % (a, old))
            continue
        if not got:
            lines.append("  %-8s not run%s" % (a, old))
            continue
        dates = sorted(set(got.values()))
        when = dates[0] if len(dates) == 1 else "%s to %s" % (dates[0], dates[-1])
        lines.append("  %-8s %d of %d patches pass (%d built, %d change nothing"
                     " it compiles), %s%s%s" % (
                         a, len(got), n, len(built[a]), len(got) - len(built[a]),
                         when, "" if len(got) == n else " (not finished)", old))
    return "\n".join(lines)


def fill_cover_letter(out, tree, results, name=MAIN_SERIES, drop_prereq=None):
    """Build the cover letter of series @name from its text (cover_path()).

    The text is an optional "prefix: ..." line (cover_prefix()), then
    "subject, blank line, blurb"; in the blurb, @BENCH@ becomes
    series/bench.md (the table of the latest 'make bench-all'),
    @VERIFIED@ the per-boot results of the latest 'make check' runs and
    @BISECT@ what series/bisect-check.txt says 'make bisect-check' passed.
    """
    parts = {}
    for part in (cover_path(name), os.path.join(SERIES_DIR, "bench.md")):
        try:
            with open(part) as f:
                parts[os.path.basename(part)] = f.read()
        except OSError as e:
            raise TreeError("%s: %s (the cover letter is built from it)"
                            % (os.path.relpath(part, REPO), e.strerror))
    text = re.sub(r"^prefix: .*\n", "", parts[os.path.basename(cover_path(name))])
    subject, _, blurb = text.partition("\n\n")
    blurb = blurb.replace("@BENCH@", parts["bench.md"].strip())
    blurb = blurb.replace("@VERIFIED@", verified_summary(
        results, git(tree, "rev-parse", "HEAD").strip()))
    blurb = blurb.replace("@BISECT@", bisect_summary(tree))
    blurb = blurb.replace("@BASE@", git(tree, "rev-parse", "--short=12",
                                        pristine_base(tree)).strip())
    path = os.path.join(out, "0000-cover-letter.patch")
    with open(path) as f:
        text = f.read()
    if "*** SUBJECT HERE ***" not in text:
        raise TreeError("git format-patch wrote no cover-letter template")
    text = text.replace("*** SUBJECT HERE ***", subject.strip())
    text = text.replace("*** BLURB HERE ***", blurb.strip())
    # format-patch lists the commits between the pristine base and the
    # series as prerequisites: the earlier series' patches, and the local
    # .gitignore commit, which the series does not need.
    if drop_prereq:
        text = text.replace("prerequisite-patch-id: %s\n" % drop_prereq, "")
    with open(path, "w") as f:
        f.write(text)


SIGNOFF_RE = re.compile(r"^([^<>]+?) <([^<>@\s]+@[^<>\s]+)>$")


def default_signoff():
    """'Name <address>' from git's user.name and user.email, or None."""
    ident = []
    for key in ("user.name", "user.email"):
        res = subprocess.run(["git", "config", key], capture_output=True, text=True)
        ident.append(res.stdout.strip())
    return "%s <%s>" % tuple(ident) if all(ident) else None


def series(tree, out, signoff, bench=None, results=None):
    ensure_clean(tree, "writing the series")
    signoff = signoff or default_signoff()
    if not signoff:
        raise TreeError("no sign-off: the series is signed off by whoever posts "
                        "it (Developer's Certificate of Origin); give "
                        "SIGNOFF='Name <address>' or set git's user.name and "
                        "user.email")
    m = SIGNOFF_RE.match(signoff)
    if not m:
        raise TreeError("SIGNOFF='%s' is not 'Name <address>'" % signoff)
    first, last, n, unposted = posted_range(tree)
    if bench:
        table = bench_table(bench)
        with open(os.path.join(SERIES_DIR, "bench.md"), "w") as f:
            f.write(table)
        log("series/bench.md: the table of %s (commit it)" % bench)
    base = pristine_base(tree)
    shutil.rmtree(out, ignore_errors=True)
    os.makedirs(out)
    # Whoever signs off posts the patches as their author (the commits'
    # author is the project's fixed identity): the same commits, trees and
    # messages, with that author, on a temporary line of history.
    who = {"GIT_AUTHOR_NAME": m.group(1), "GIT_AUTHOR_EMAIL": m.group(2),
           "GIT_COMMITTER_NAME": m.group(1), "GIT_COMMITTER_EMAIL": m.group(2)}
    parent = git(tree, "rev-parse", first + "^").strip()
    posted = {}
    for rev in git(tree, "rev-list", "--reverse", first + "^.." + last).split():
        msg = commit_message(tree, rev)
        parent = git(tree, "commit-tree", rev + "^{tree}", "-p", parent, stdin=msg,
                     env=dict(who, GIT_AUTHOR_DATE=git(
                         tree, "log", "-1", "--format=%aI", rev).strip())).strip()
        posted[rev] = parent
    # The pristine commit as the base: the .gitignore commit above it is
    # local (Debian's tarball ignores every top-level file), and not a
    # prerequisite of any series.
    local = None
    if base != BASE_TAG:
        local = git(tree, "patch-id", "--unstable", stdin=git(
            tree, "show", "--format=", BASE_TAG, binary=True)).split()[0]
    said = []
    for name, revs in series_blocks(tree):
        where = series_out(out, name)
        prefix = cover_prefix(name)
        git(tree, "format-patch", "-q", "--cover-letter", "--thread", "--signoff",
            "--subject-prefix=" + prefix, "--base=" + git(tree, "rev-parse", base).strip(),
            "-o", os.path.abspath(where),
            posted[revs[0]] + "^.." + posted[revs[-1]], env=who)
        fill_cover_letter(where, tree, results or os.path.join(REPO, "build", "results"),
                          name, local)
        said.append("%s: %d in %s" % (name, len(revs), os.path.relpath(where, REPO)
                                      if os.path.abspath(where).startswith(REPO)
                                      else where))
    nq = qemu_series(out, signoff)
    log("wrote %d patches with their cover letters (%s; %d unposted commit(s) "
        "left out), signed off by %s; and %d QEMU patches for qemu-devel in "
        "qemu-*/" % (n, "; ".join(said), unposted, signoff, nq))


QEMU_DIR = os.path.join(REPO, "overlay-tools", "qemu")


def qemu_series(out, signoff):
    """The QEMU patches as the series overlay-tools/qemu/series lists.

    Each goes to <out>/qemu-<name>/ with its cover letter, renumbered
    "[PATCH n/N]", with whoever posts them as author and in the
    Signed-off-by line.  Returns the number of patches written.
    """
    listing = os.path.join(QEMU_DIR, "series")
    patches = {f[:4]: os.path.join(QEMU_DIR, "patches", f)
               for f in os.listdir(os.path.join(QEMU_DIR, "patches"))
               if re.match(r"^\d{4}-.*\.patch$", f)}
    listed = []
    total = 0
    with open(listing) as f:
        lines = [l.split() for l in f if l.strip() and not l.startswith("#")]
    for words in lines:
        name, nums = words[0], words[1:]
        missing = [n for n in nums if n not in patches]
        if missing or not nums:
            raise TreeError("overlay-tools/qemu/series: %s lists %s, which "
                            "overlay-tools/qemu/patches/ does not have"
                            % (name, " ".join(missing) or "no patch"))
        listed += nums
        where = os.path.join(out, "qemu-" + name)
        os.makedirs(where)
        try:
            with open(os.path.join(QEMU_DIR, "cover-letter-%s.txt" % name)) as f:
                subject, _, blurb = f.read().partition("\n\n")
        except OSError as e:
            raise TreeError("overlay-tools/qemu/cover-letter-%s.txt: %s"
                            % (name, e.strerror))
        summary = []
        for k, num in enumerate(nums, 1):
            with open(patches[num]) as f:
                text = f.read()
            m = re.search(r"^Subject: \[PATCH[^]]*\] (.*(?:\n .*)*)$", text, re.M)
            if not m:
                raise TreeError("%s: no Subject line" % patches[num])
            title = " ".join(m.group(1).split())
            text = text.replace(m.group(0), "Subject: [PATCH %d/%d] %s"
                                % (k, len(nums), m.group(1)), 1)
            text = re.sub(r"^From: .*$", "From: " + signoff, text, count=1, flags=re.M)
            text = re.sub(r"^Signed-off-by: .*$", "Signed-off-by: " + signoff, text,
                          flags=re.M)
            stat = re.search(r"^ \d+ files? changed.*$", text, re.M)
            summary.append("  %s\n   %s" % (title, stat.group(0).strip() if stat else ""))
            base = slugify(title)[:52]
            with open(os.path.join(where, "%04d-%s.patch" % (k, base)), "w") as f:
                f.write(text)
        with open(os.path.join(where, "0000-cover-letter.patch"), "w") as f:
            f.write("From: %s\nSubject: [PATCH 0/%d] %s\n\n%s\n\n%s\n\n"
                    "Based on QEMU 10.2.2.\n\n-- \n"
                    % (signoff, len(nums), subject.strip(), blurb.strip(),
                       "\n".join(summary)))
        total += len(nums)
    unlisted = sorted(set(patches) - set(listed))
    if unlisted:
        raise TreeError("overlay-tools/qemu/patches/ %s in no series of "
                        "overlay-tools/qemu/series" % " ".join(unlisted))
    return total


def am_check(tree, out):
    """The series in @out applies with 'git am' to the pristine base.

    It is applied in a temporary worktree of @tree; the result must be the
    tree of the last posted commit but for the local .gitignore change,
    and so hold nothing of the unposted commits.
    """
    first, last, n, _ = posted_range(tree)
    patches = []
    for name, revs in series_blocks(tree):
        where = os.path.abspath(series_out(out, name))
        got = sorted(os.path.join(where, f) for f in
                     (os.listdir(where) if os.path.isdir(where) else [])
                     if re.match(r"^\d{4}-.*\.patch$", f) and not f.startswith("0000-"))
        if len(got) != len(revs):
            raise TreeError("%s has %d patches, the series %s %d: run 'make series'"
                            % (where, len(got), name, len(revs)))
        patches += got
    base = git(tree, "rev-parse", pristine_base(tree)).strip()
    import tempfile
    wt = tempfile.mkdtemp(prefix="kpkeys-am-check.")
    os.rmdir(wt)
    git(tree, "worktree", "prune")
    git(tree, "worktree", "add", "-q", "--detach", wt, base)
    try:
        res = subprocess.run(["git", "-C", wt, "am", "-q", "--no-3way", *patches],
                             capture_output=True, text=True,
                             env=dict(os.environ, **GIT_ENV))
        if res.returncode:
            failed = git(wt, "am", "--show-current-patch=raw", check=False)
            subj = re.search(r"^Subject: (.*)$", failed, re.M)
            raise TreeError("git am onto %s failed at '%s': %s"
                            % (base[:12], subj.group(1) if subj else "?",
                               res.stderr.strip().splitlines()[-1]
                               if res.stderr.strip() else "no message"))
        diff = [f for f in git(wt, "diff", "--name-only", "HEAD", last).split()
                if f != ".gitignore"]
        if diff:
            raise TreeError("the applied series differs from the tree's "
                            "commit %s in: %s" % (last[:12], " ".join(diff[:10])))
    finally:
        git(wt, "am", "--abort", check=False)
        git(tree, "worktree", "remove", "--force", wt, check=False)
        shutil.rmtree(wt, ignore_errors=True)
    log("am-check: %d patches apply with 'git am' to %s, giving the tree of "
        "%s" % (n, base[:12], git(tree, "log", "-1", "--format=%h (%s)", last).strip()))


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    a = sub.add_parser("assemble")
    a.add_argument("--ksrc", required=True)
    a.add_argument("--tree", required=True)
    a.add_argument("--if-needed", action="store_true",
                   help="keep a tree with unexported edits as it is")
    a.add_argument("--reuse-base", metavar="TREE",
                   help="clone the base commit from this assembled tree")
    v = sub.add_parser("check-version")
    v.add_argument("--ksrc", required=True)
    e = sub.add_parser("export")
    e.add_argument("--tree", required=True)
    s = sub.add_parser("series")
    s.add_argument("--tree", required=True)
    s.add_argument("--out", required=True)
    s.add_argument("--signoff", default="",
                   help="'Name <address>' of whoever posts the series "
                   "(default: git's user.name and user.email)")
    s.add_argument("--bench", metavar="REPORT",
                   help="bench.py report.md (of 'make bench-all' or 'make "
                   "bench-report'), or its directory, whose cross-architecture "
                   "table replaces series/bench.md")
    s.add_argument("--results", metavar="DIR",
                   help="run-qemu.py results for the cover letter "
                   "(default: build/results)")
    k = sub.add_parser("am-check")
    k.add_argument("--tree", required=True)
    k.add_argument("--out", required=True, help="where 'series' wrote the patches")
    args = ap.parse_args()
    try:
        if args.cmd == "assemble":
            assemble(args.ksrc, args.tree, args.if_needed, args.reuse_base)
        elif args.cmd == "check-version":
            print(check_version(args.ksrc))
        elif args.cmd == "export":
            export(args.tree)
        elif args.cmd == "series":
            series(args.tree, args.out, args.signoff, args.bench, args.results)
        elif args.cmd == "am-check":
            am_check(args.tree, args.out)
    except TreeError as err:
        print("tree: error: %s" % err, file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
