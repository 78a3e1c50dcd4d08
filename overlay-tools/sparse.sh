#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# sparse for the kpkeys kernel.
#
# usage: sparse.sh which <kernel tree>
#   Print the sparse binary to pass to Kbuild as CHECK=: the system's
#   sparse if the tree's scripts/checker-valid.sh accepts it, else the one
#   fetch-sparse.sh builds (once) from Debian sid's source package.
#
# usage: sparse.sh check [--no-build] [--results-json FILE] <arch> <kernel tree> [<file.c> ...]
#   Run sparse (Kbuild C=2 on single objects) on every .c file the series
#   adds or changes (git diff kpkeys-base) that the arch's test configuration
#   compiles (its .o is in build/<arch>), and report as new the warnings on
#   lines the series added, in those files or in the headers it adds or
#   changes.  Warnings on other lines are the base kernel's: counted, not
#   failed.  Exits 1 if there is a new warning or sparse could not run.
#   Without build/<arch>/vmlinux the kernel is built first (build.sh), unless
#   --no-build.  --results-json writes a result file for summary.py: one
#   case, passed when there is no new warning.  Files named after the tree
#   restrict the check to those (of the series' files).
#
# usage: sparse.sh report <kernel tree> <build dir> <sparse output>
#   Only the classification, of a saved sparse output (as check prints it).
# env:   LLVM=1 (the build/<arch>-llvm build), CHECK (a sparse to use instead)
set -euo pipefail
. "$(dirname "$0")/lib.sh"

usage() {
	echo "usage: $0 which <kernel tree>" >&2
	echo "       $0 check [--no-build] [--results-json FILE] <arch> <kernel tree> [<file.c> ...]" >&2
	echo "       $0 report <kernel tree> <build dir> <sparse output>" >&2
	exit 2
}

# checker-valid.sh prints 1 when the checker parses what Linux 7.3 needs.
checker_valid() {
	local tree=$1 bin=$2
	[ "$(cd "$tree" && sh scripts/checker-valid.sh "$bin" 2>/dev/null)" = 1 ]
}

# The sparse to use for <tree> on stdout; why, on stderr.
select_sparse() {
	local tree=$1 sys
	[ -f "$tree/scripts/checker-valid.sh" ] ||
		die "$tree is not a kernel tree (no scripts/checker-valid.sh)"
	if [ -n "${CHECK:-}" ]; then
		checker_valid "$tree" "$CHECK" ||
			die "CHECK=$CHECK fails $tree/scripts/checker-valid.sh (Kbuild would check nothing)"
		echo "$CHECK"
		return
	fi
	sys=$(command -v sparse || true)
	if [ -n "$sys" ] && checker_valid "$tree" "$sys"; then
		echo "$sys"
		return
	fi
	if [ -n "$sys" ]; then
		say "system sparse ($sys, $("$sys" --version 2>/dev/null || echo "unknown version")) fails scripts/checker-valid.sh; using Debian sid's sparse from the project cache"
	else
		say "no system sparse; using Debian sid's sparse from the project cache"
	fi
	"$KPKEYS_REPO/overlay-tools/fetch-sparse.sh" "$tree"
}

# classify <tree> <build dir> <sparse output> <work dir>: print the new
# warnings, set nnew and nbase.
classify() {
	local tree=$1 out=$2 log=$3 work=$4 tree_abs out_abs
	local added=$work/sparse.added counts=$work/sparse.counts
	tree_abs=$(cd "$tree" && pwd -P)
	out_abs=$(cd "$out" && pwd -P)
	# Lines the series added: "<path>:<line>" for every added line of every
	# file (headers included) in git diff -U0 kpkeys-base.
	git -C "$tree" diff --no-renames --no-color --no-ext-diff -U0 kpkeys-base |
		awk '
		hdr && /^\+\+\+ / { file = substr($0, 5); sub(/^b\//, "", file) }
		{ hdr = /^--- / }
		/^@@ / {
			split($3, r, ",")
			start = substr(r[1], 2) + 0
			n = (2 in r) ? r[2] + 0 : 1
			for (i = 0; i < n; i++)
				print file ":" (start + i)
		}' > "$added"

	# Sparse's diagnostics: a "<file>:<line>:<col>: warning|error: " line,
	# its continuation lines ("<file>:<line>:<col>:    expected ..."), and
	# the "<file>: note: in included file" line before it; paths made
	# relative to the tree, each diagnostic once (those of a header repeat
	# for every file that includes it).  The new ones go to stdout, the
	# counts to $counts.
	awk -v tree="$tree_abs/" -v out="$out_abs/" -v added="$added" -v counts="$counts" '
		function strip(s, pre,   i, r) {
			r = ""
			while ((i = index(s, pre)) > 0) {
				r = r substr(s, 1, i - 1)
				s = substr(s, i + length(pre))
			}
			return r s
		}
		function rel(s) {
			s = strip(strip(s, tree), out)
			sub(/^\.\//, "", s)
			return s
		}
		function flush() {
			if (cur != "" && !(cur in seen)) {
				seen[cur] = 1
				if (isnew) { nnew++; printf "%s%s\n", note, cur }
				else nbase++
			}
			cur = ""
		}
		BEGIN { while ((getline l < added) > 0) A[l] = 1 }
		/^[^ \t:][^:]*:[0-9]+:[0-9]+: (warning|error): / {
			flush()
			note = pending; pending = ""
			cur = rel($0)
			split(cur, f, ":")
			isnew = ((f[1] ":" f[2]) in A)
			next
		}
		/^[^ \t:][^:]*:[0-9]+:[0-9]+:  / || /^[ \t]/ {
			if (cur != "") { cur = cur "\n" rel($0); next }
		}
		/^[^ \t:][^:]*: note: / { flush(); pending = rel($0) "\n"; next }
		{ flush(); pending = "" }
		END { flush(); print nnew + 0, nbase + 0 > counts }
	' "$log"
	read -r nnew nbase < "$counts"
}

[ $# -ge 1 ] || usage
cmd=$1
shift
case "$cmd" in
which)
	[ $# -eq 1 ] || usage
	select_sparse "$1"
	exit 0
	;;
report)
	# The classification alone, of a saved sparse output (tooling tests).
	[ $# -eq 3 ] || usage
	[ -f "$3" ] || die "$3: no such file"
	work=$(mktemp -d)
	trap 'rm -rf "$work"' EXIT
	classify "$1" "$2" "$3" "$work"
	say "$nnew new warnings on lines the series added, $nbase in base-kernel lines"
	[ "$nnew" = 0 ]
	exit
	;;
check) ;;
*) usage ;;
esac

no_build=0 json=
while [ $# -gt 0 ]; do
	case "$1" in
	--no-build) no_build=1 ;;
	--results-json) [ $# -ge 2 ] || usage; json=$2; shift ;;
	-*) usage ;;
	*) break ;;
	esac
	shift
done
[ $# -ge 2 ] || usage
arch=$1 src=$2
shift 2
only=("$@")
check_arch "$arch"
[ -f "$src/Makefile" ] || die "$src is not a kernel tree"
llvm=$(llvm_arg "${LLVM:-}")
out=$(build_dir "$arch" "$llvm")
label=sparse-$arch${llvm:+-llvm}

# Result file for summary.py: result pass|fail|problem [reason]
result() {
	[ -n "$json" ] || return 0
	local status=PASS problems='' reason=${2:-}
	reason=${reason//\\/\/} reason=${reason//\"/\'}
	case "$1" in
	fail) status=FAIL ;;
	problem) problems="\"$reason\"" ;;
	esac
	if [ -n "$problems" ]; then
		printf '{"label": "%s", "problems": [%s], "suites": {}}\n' "$label" "$problems"
	else
		printf '{"label": "%s", "problems": [], "suites": {"sparse": [{"name": "no_new_warnings", "status": "%s"}]}}\n' \
			"$label" "$status"
	fi > "$json"
}
problem() { result problem "$1"; die "$1"; }

if [ ! -f "$out/vmlinux" ]; then
	[ "$no_build" = 0 ] || problem "$arch: $out/vmlinux missing (not built)"
	say "$arch: $out/vmlinux missing: building the kernel first"
	LLVM=${LLVM:-} "$KPKEYS_REPO/overlay-tools/build.sh" "$arch" "$src" ||
		problem "$arch: the kernel build failed"
fi
bin=$(select_sparse "$src") || problem "$arch: no usable sparse (see above)"

# Files of the series: what differs from kpkeys-base, edits not yet
# committed included (a tree is built as it is).
changed=$(git -C "$src" diff --no-renames --diff-filter=d --name-only kpkeys-base) ||
	problem "$arch: git diff kpkeys-base failed in $src"
for f in "${only[@]}"; do
	grep -qxF "$f" <<<"$changed" || die "$f is not a file the series adds or changes"
done
objs=()
for f in $changed; do
	[ ${#only[@]} = 0 ] || printf '%s\n' "${only[@]}" | grep -qxF "$f" || continue
	case "$f" in
	*.c) [ -f "$out/${f%.c}.o" ] && objs+=("${f%.c}.o") ;;
	esac
done
if [ ${#objs[@]} = 0 ]; then
	result pass
	say "$arch: no file of the series is compiled in $out: nothing to check"
	exit 0
fi

# The same make as build.sh, so that the objects are up to date and only
# the checker runs.
unset MAKEFLAGS MAKELEVEL MFLAGS
kernel_make "$arch" "$src" "$out" "$llvm"
# shellcheck disable=SC2206
kmake+=(${KMAKEFLAGS:-})

say "$arch: sparse ($bin) on ${#objs[@]} files of the series"
start=$SECONDS
log=$out/sparse.log
# First bring the objects up to date (a no-op after a build; compiler
# warnings, if any, are shown as in a build), then check them (C=2 checks
# up-to-date objects too).
"${kmake[@]}" "${objs[@]}" || problem "$arch: building ${objs[*]} failed"
rc=0
"${kmake[@]}" C=2 CHECK="$bin" "${objs[@]}" >"$log" 2>&1 || rc=$?
if grep -q "is not available or not up to date" "$log"; then
	cat "$log" >&2
	problem "$arch: Kbuild refused $bin (checker-valid.sh)"
fi

classify "$src" "$out" "$log" "$out"

if [ "$rc" != 0 ]; then
	tail -n 20 "$log" >&2
	problem "$arch: sparse run failed (exit status $rc, full output in $log)"
fi
say "$arch: sparse checked ${#objs[@]} files in $((SECONDS - start)) s: $nnew new warnings on lines the series added, $nbase in base-kernel lines (not counted; all in $log)"
if [ "$nnew" != 0 ]; then
	result fail
	exit 1
fi
result pass
