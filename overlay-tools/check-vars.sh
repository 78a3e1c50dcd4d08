#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Check the variables of make targets before anything runs: the Makefile
# calls this while it reads itself, so that a bad value stops make before
# the package step, the kernel download or a build.  Only the variables
# that the given targets (or the scripts they run) read are checked.
# Each bad value is reported on stderr, with what is accepted; nothing is
# changed.  Exit status 1 if a value is bad, 0 otherwise.
#
# usage: check-vars.sh <target> ... [-- [env:]NAME=VALUE ...]
#        check-vars.sh --targets    list the targets it knows
#        check-vars.sh --vars       list the variables it checks
#   A NAME=VALUE pair is a variable that is set (possibly empty); an unset
#   variable is not given.  "env:" marks a value from the environment.
#   A target it does not know is not checked (make reports it).
set -uo pipefail
. "$(dirname "$0")/lib.sh"

# What each target reads, with what its prerequisites read (every target
# that builds first assembles build/tree: tree_vars).
tree_vars="KSRC KPKEYS_CACHE KPKEYS_BUILD"
build_vars="$tree_vars LLVM C CHECK KPKEYS_O KPKEYS_CONFIG_ONLY KPKEYS_CONFIG_LENIENT KPKEYS_BUSYBOX_MIRROR"
boot_vars="QEMU_TIMEOUT QEMU_CPU KPKEYS_APPEND ICOUNT KPKEYS_MODES KPKEYS_QEMU_BINDIR KPKEYS_QEMU_SOURCE KPKEYS_QEMU_JOBS"
series_vars="$tree_vars SIGNOFF BENCH_REPORT"
declare -A uses=(
	[all]="ARCH $build_vars"
	[build]="ARCH $build_vars"
	[check]="ARCH $build_vars $boot_vars"
	[check-all]="$build_vars $boot_vars"
	[test-llvm]="$build_vars $boot_vars"
	[test]="$build_vars $boot_vars KPKEYS_SPARSE_SOURCE"
	[test-tooling]="$build_vars KPKEYS_QEMU_BINDIR KPKEYS_QEMU_SOURCE KPKEYS_QEMU_JOBS"
	[sparse]="ARCH $build_vars KPKEYS_SPARSE_SOURCE"
	[kunit]="ARCH $tree_vars LLVM"
	[bench]="ARCH $build_vars KPKEYS_QEMU_BINDIR KPKEYS_QEMU_SOURCE KPKEYS_QEMU_JOBS"
	[bench-all]="$build_vars KPKEYS_QEMU_BINDIR KPKEYS_QEMU_SOURCE KPKEYS_QEMU_JOBS"
	[bench-all-run]="$build_vars KPKEYS_QEMU_BINDIR KPKEYS_QEMU_SOURCE KPKEYS_QEMU_JOBS"
	[bisect-check]="$tree_vars LLVM C BISECT_ARCHES BISECT_COMMITS BISECT_FRESH BISECT_OPTIONS_ONLY BISECT_RECORD BISECT_GAPS KPKEYS_BISECT_BUILD"
	[tree]="$tree_vars"
	[tree-if-needed]="$tree_vars"
	[series]="$series_vars"
	[am-check]="$series_vars"
	[checkpatch]="$series_vars"
	# Read nothing this script checks (bench-report's RUNS and BEFORE are
	# checked by its recipe, BENCH by the Makefile itself).
	[bench-report]="" [export]="" [results]="" [deps]="" [clean]="" [distclean]="" [help]=""
)

# Every variable checked, in the order the messages come in.
checked=(ARCH LLVM KSRC C CHECK ICOUNT QEMU_TIMEOUT QEMU_CPU KPKEYS_APPEND KPKEYS_MODES
	 BISECT_ARCHES BISECT_COMMITS BISECT_FRESH BISECT_OPTIONS_ONLY BISECT_RECORD BISECT_GAPS
	 KPKEYS_BISECT_BUILD SIGNOFF BENCH_REPORT KPKEYS_CACHE KPKEYS_BUILD KPKEYS_QEMU_BINDIR
	 KPKEYS_QEMU_SOURCE KPKEYS_QEMU_JOBS KPKEYS_SPARSE_SOURCE KPKEYS_BUSYBOX_MIRROR
	 KPKEYS_O KPKEYS_CONFIG_ONLY KPKEYS_CONFIG_LENIENT)

case "${1:-}" in
--targets) printf '%s\n' "${!uses[@]}" | sort; exit 0 ;;
--vars) echo "${checked[*]}"; exit 0 ;;
esac

goals=()
while [ $# -gt 0 ] && [ "$1" != -- ]; do
	goals+=("$1")
	shift
done
[ $# -eq 0 ] || shift
declare -A val from
for a in "$@"; do
	src=
	case "$a" in env:*) a=${a#env:} src=" (from the environment)" ;; esac
	case "$a" in
	[A-Za-z_]*=*) ;;
	*) echo "check-vars: error: '$a' is not NAME=VALUE" >&2; exit 2 ;;
	esac
	val[${a%%=*}]=${a#*=}
	from[${a%%=*}]=$src
done

declare -A wanted
for g in "${goals[@]}"; do
	for v in ${uses[$g]:-}; do wanted[$v]=1; done
done

bad=0
# refuse <NAME> <what is wrong and what is accepted>
refuse() {
	echo "make: error: $1='${val[$1]}'${from[$1]}: $2" >&2
	bad=1
}
is_pos() { [[ $1 =~ ^[1-9][0-9]*$ ]]; }
# A deb-src line: deb-src [options] <URI> <suite> [<component> ...].
deb_src_re='^deb-src[[:space:]]+(\[[^]]*\][[:space:]]+)?[a-z][a-z0-9+.-]*:[^[:space:]]+[[:space:]]+[^[:space:]]+([[:space:]]+[^[:space:]]+)*$'
arches=${KPKEYS_ARCHES// /, }

check() {
	local v=$1 x=${val[$1]} w
	case "$v" in
	ARCH)
		case "$x" in
		x86_64|arm64|powerpc) ;;
		*) refuse ARCH "not an architecture the project supports; accepted: $arches (default: the host's, if it is one of them)" ;;
		esac ;;
	LLVM)
		case "$x" in
		""|0|1) ;;
		-*)
			if ! [[ $x =~ ^-[0-9]+$ ]]; then
				refuse LLVM "accepted: empty or 0 (gcc), 1 (clang-19), or Kbuild's version suffix -<N> (clang-<N>, ld.lld-<N>, llvm-ar-<N>)"
			elif [ "$x" != -19 ] && ! command -v "clang$x" >/dev/null; then
				refuse LLVM "clang$x is not installed, and the package step installs only clang-19 (LLVM=1)"
			fi ;;
		*) refuse LLVM "accepted: empty or 0 (gcc), 1 (clang-19), or Kbuild's version suffix -<N> such as -19 (a path prefix is not supported: the scripts run clang\$LLVM)" ;;
		esac ;;
	KSRC)
		[ -z "$x" ] || w=$(python3 "$KPKEYS_REPO/overlay-tools/tree.py" check-version --ksrc "$x" 2>&1 >/dev/null) ||
			case "$w" in
			*7.3.x*) refuse KSRC "${w#tree: error: }" ;;
			*) refuse KSRC "${w#tree: error: }; accepted: a Linux 7.3.x source tree (empty: Debian's linux-source-7.3)" ;;
			esac ;;
	C)
		case "$x" in
		""|0|1|2) ;;
		*) refuse C "accepted: empty or 0 (no sparse), 1 (sparse on what is recompiled) or 2 (on every file compiled)" ;;
		esac ;;
	CHECK)
		[ -z "$x" ] || command -v "$x" >/dev/null ||
			refuse CHECK "not an executable; accepted: a sparse binary (empty: the one sparse.sh chooses)" ;;
	ICOUNT|BISECT_FRESH|BISECT_OPTIONS_ONLY)
		case "$x" in
		""|1) ;;
		*) refuse "$v" "accepted: 1 (on), or empty/unset (off); any other value would turn it on" ;;
		esac ;;
	QEMU_TIMEOUT)
		[ -z "$x" ] || is_pos "$x" || refuse QEMU_TIMEOUT "accepted: a positive whole number of seconds per boot (default 300)" ;;
	KPKEYS_QEMU_JOBS)
		[ -z "$x" ] || is_pos "$x" || refuse KPKEYS_QEMU_JOBS "accepted: a positive number of make jobs (default: CPUs + 1)" ;;
	QEMU_CPU)
		[ -z "$x" ] || [[ $x =~ ^[A-Za-z0-9_.,=+-]+$ ]] ||
			refuse QEMU_CPU "accepted: a QEMU -cpu value such as max or max,-pks (empty: the default per architecture)" ;;
	KPKEYS_APPEND)
		;;	# any kernel parameters
	KPKEYS_MODES)
		declare -A seen=()
		for w in $x; do
			if [ "$w" = on ]; then
				refuse KPKEYS_MODES "'on' is the default boot, which always runs; accepted: space-separated words, each nobatch, off, or any other word [A-Za-z0-9_.-] (a value the kernel must refuse, as in the default 'nobatch off bogus'); empty: the default boot only"
			elif ! [[ $w =~ ^[A-Za-z0-9_.-]+$ ]]; then
				refuse KPKEYS_MODES "'$w' cannot be a boot label; accepted: space-separated words of [A-Za-z0-9_.-], each nobatch, off, or a value the kernel must refuse (default 'nobatch off bogus'); empty: the default boot only"
			elif [ -n "${seen[$w]:-}" ]; then
				refuse KPKEYS_MODES "'$w' is given twice (each mode is one boot, with one result file)"
			fi
			seen[$w]=1
		done ;;
	BISECT_ARCHES)
		for w in $x; do
			case "$w" in
			x86_64|arm64|powerpc) ;;
			*) refuse BISECT_ARCHES "'$w' is not an architecture; accepted: any of $arches, space-separated (default: all three)" ;;
			esac
		done ;;
	BISECT_COMMITS)
		if [ -n "$x" ]; then
			if ! [[ $x =~ ^([0-9]+)-([0-9]+)$ ]] || [ "${BASH_REMATCH[1]}" -lt 1 ] ||
			   [ "${BASH_REMATCH[1]}" -gt "${BASH_REMATCH[2]}" ]; then
				refuse BISECT_COMMITS "accepted: <m>-<n> with 1 <= m <= n, patch numbers of the posted series (empty: all)"
			fi
		fi ;;
	BISECT_RECORD)
		[ -z "$x" ] || [ -d "$(dirname -- "$x")" ] ||
			refuse BISECT_RECORD "its directory does not exist; accepted: a file to keep the passes in (default series/bisect-check[-llvm].txt)" ;;
	BISECT_GAPS)
		[ -z "$x" ] || [ -f "$x" ] ||
			refuse BISECT_GAPS "no such file; accepted: an existing gaps file (default series/bisect-gaps.txt)" ;;
	KPKEYS_BISECT_BUILD)
		if [ -n "$x" ]; then
			command -v "$x" >/dev/null ||
				refuse KPKEYS_BISECT_BUILD "not an executable; accepted: a command called as build.sh is"
			[ -n "${val[BISECT_RECORD]:-}" ] ||
				refuse KPKEYS_BISECT_BUILD "needs BISECT_RECORD=<file>: a stand-in build must not record passes in series/"
		fi ;;
	SIGNOFF)
		[ -z "$x" ] || [[ $x =~ ^[^\<\>]+\ \<[^\<\>@[:space:]]+@[^\<\>[:space:]]+\>$ ]] ||
			refuse SIGNOFF "accepted: 'Name <address>' (empty: git's user.name and user.email)" ;;
	BENCH_REPORT)
		if [ -n "$x" ]; then
			if [ ! -e "$x" ]; then
				refuse BENCH_REPORT "no such file or directory; accepted: the output directory of 'make bench-all' or 'make bench-report', or its report.md"
			elif ! w=$(PYTHONPATH=$KPKEYS_REPO/overlay-tools python3 -c '
import sys, tree
try:
    tree.bench_table(sys.argv[1])
except tree.TreeError as e:
    sys.exit(str(e))' "$x" 2>&1); then
				refuse BENCH_REPORT "${w:-not a bench.py report}"
			fi
		fi ;;
	KPKEYS_CACHE|KPKEYS_BUILD)
		if [ -n "$x" ]; then
			if [[ $x != /* ]]; then
				refuse "$v" "accepted: an absolute path (the scripts run in several directories)"
			elif [ -e "$x" ] && [ ! -d "$x" ]; then
				refuse "$v" "exists and is not a directory; accepted: an absolute path of a directory (empty: the default)"
			fi
		fi ;;
	KPKEYS_QEMU_BINDIR)
		[ -z "$x" ] || compgen -G "$x/qemu-system-*" >/dev/null ||
			refuse KPKEYS_QEMU_BINDIR "has no qemu-system-*; accepted: a directory of qemu-system-aarch64 and qemu-system-ppc64 (unset: the project's QEMU, built once)" ;;
	KPKEYS_QEMU_SOURCE|KPKEYS_SPARSE_SOURCE)
		[ -z "$x" ] || [[ $x =~ $deb_src_re ]] ||
			refuse "$v" "accepted: one apt line 'deb-src <URI> <suite> [<component> ...]' (default: deb-src http://deb.debian.org/debian sid main)" ;;
	KPKEYS_BUSYBOX_MIRROR)
		[ -z "$x" ] || [[ $x =~ ^[a-z][a-z0-9+.-]*://[^[:space:]]+$ ]] ||
			refuse KPKEYS_BUSYBOX_MIRROR "accepted: a Debian mirror URL such as http://deb.debian.org/debian" ;;
	KPKEYS_O|KPKEYS_CONFIG_ONLY|KPKEYS_CONFIG_LENIENT)
		[ -z "$x" ] || refuse "$v" "internal to the scripts (build.sh's output directory and configure-only modes); accepted: unset (the target chooses it)" ;;
	esac
}

for v in "${checked[@]}"; do
	[ -n "${wanted[$v]:-}" ] && [ -n "${val[$v]+set}" ] && check "$v"
done
exit $bad
