#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Build every posted patch of the series on its own, for each architecture:
# the test configuration (tinyconfig + common.config + <arch>.config) of
# build.sh, in a worktree of the tree at each commit in turn, out of tree
# in build/bisect-<arch>, incrementally and with ccache.  A build passes
# when it succeeds and prints no warning (compiler, objtool, modpost or
# linker).  The configuration is made afresh for every build.  A commit
# that touches nothing the architecture compiles (documentation, another
# architecture, the selftests) is not built again for it.
#
# Options a commit cannot have yet (no Kconfig defines them, or their
# dependencies come with a later patch) are left out (build.sh's
# KPKEYS_CONFIG_LENIENT).  So that this cannot hide a patch that breaks a
# dependency and compiles the feature out, every run first configures the
# base and each commit that changes a Kconfig input: it fails if an option
# that the configuration had is left out by a later patch, unless the
# patches that build without it are a gap series/bisect-gaps.txt lists
# (BISECT_GAPS=<file> for another) and a later patch has it again.
#
# Not in CI: a cold run is hours on two cores.  Run it before posting.
#
# A run can be spread over several sittings: every build that passes is
# recorded in series/bisect-check.txt (series/bisect-check-llvm.txt with
# LLVM=; BISECT_RECORD=<file> for another),
#
#   <arch> <tree of the commit> <build key> <date> <seconds> <subject>
#
# (<seconds> is "-" for a commit that changes nothing the arch compiles,
# after one that passed), and a later run skips a commit whose tree
# already passed for that arch with the same build key: what a build
# depends on besides the source, i.e. the pass criteria (BISECT_CRITERIA
# below), build.sh and lib.sh, the config fragments, LLVM=, KMAKEFLAGS=,
# C=, and the compiler's and the linker's versions.  The tree of a commit
# names all of its source, so editing an earlier patch of the series
# changes the tree of every commit after it, and they are all built
# again.  A build that fails removes its commit's line.  Lines of trees no
# longer in the series, and lines of the architectures checked with
# another key, are dropped from the record.
#
# usage: bisect-check.sh <assembled kernel tree> [<arch> ...]
#        bisect-check.sh --keys [<arch> ...]
#               print "<arch> <build key>" ("<arch> -" without a compiler)
#               and the record's path, for tree.py's cover letter
# env:   BISECT_RECORD, BISECT_GAPS (above); BISECT_FRESH=1 ignores the record and
#        builds every commit that changes what the arch compiles;
#        BISECT_COMMITS=<m>-<n> builds only patches m to n of the posted
#        series (1-based, as the progress lines number them; the option
#        check still covers the whole series); BISECT_OPTIONS_ONLY=1 runs
#        only the option check (minutes); KPKEYS_BISECT_BUILD=<command>
#        instead of build.sh, called as build.sh is (the tooling tests)
set -uo pipefail
. "$(dirname "$0")/lib.sh"

# What counts as a pass.  Bump it when that changes, so that the passes
# recorded under the old rules are built again.
BISECT_CRITERIA=4

# build.sh's "configure only" is for the option check below, never for
# a build that records a pass.
unset KPKEYS_CONFIG_ONLY

# Kbuild's LLVM= value ("" for gcc); llvm_arg says what is missing.
llvm=$(llvm_arg "${LLVM:-}") || exit 1
record=${BISECT_RECORD:-$KPKEYS_REPO/series/bisect-check${llvm:+-llvm}.txt}
# The options a patch may build without for a while, by design.
gaps=${BISECT_GAPS:-$KPKEYS_REPO/series/bisect-gaps.txt}

# What a passing build depends on besides the kernel source: fails when
# the arch's compiler or linker is missing.
build_key() {	# build_key <arch>
	local arch=$1 cc ld
	if [ -n "$llvm" ]; then
		cc=clang$llvm ld=ld.lld$llvm
	else
		cc=$(cross_compile "$arch")gcc ld=$(cross_compile "$arch")ld
	fi
	command -v "$cc" >/dev/null && command -v "$ld" >/dev/null || return 1
	{ echo "criteria $BISECT_CRITERIA"
	  cat "$KPKEYS_REPO/overlay-tools/build.sh" "$KPKEYS_REPO/overlay-tools/lib.sh" \
	      "$KPKEYS_REPO/overlay-tools/configs/common.config" \
	      "$KPKEYS_REPO/overlay-tools/configs/$arch.config"
	  echo "LLVM=$llvm"
	  [ -z "${KMAKEFLAGS:-}" ] || echo "KMAKEFLAGS=$KMAKEFLAGS"
	  [ -z "${C:-}" ] || [ "$C" = 0 ] || echo "C=$C"
	  # Kbuild's flags from the environment (KCFLAGS=-w hides warnings).
	  for v in KCFLAGS KCPPFLAGS KAFLAGS KRUSTFLAGS KBUILD_EXTRA_WARN; do
		[ -z "${!v:-}" ] || echo "$v=${!v}"
	  done
	  "$cc" --version | head -n 1
	  "$ld" --version | head -n 1; } | sha256sum | cut -c1-16
}

if [ "${1:-}" = --keys ]; then
	shift
	[ $# -gt 0 ] || set -- x86_64 arm64 powerpc
	for a in "$@"; do
		check_arch "$a"
		echo "$a $(build_key "$a" || echo -)"
	done
	echo "record $record"
	exit 0
fi

[ $# -ge 1 ] || { echo "usage: $0 <kernel tree> [<arch> ...] | --keys [<arch> ...]" >&2; exit 2; }
src=$(cd "$1" && pwd)
shift
arches=("$@")
[ ${#arches[@]} -gt 0 ] || arches=(x86_64 arm64 powerpc)
for a in "${arches[@]}"; do check_arch "$a"; done
build=${KPKEYS_BISECT_BUILD:-$KPKEYS_REPO/overlay-tools/build.sh}
[ -z "${KPKEYS_BISECT_BUILD:-}" ] || [ -n "${BISECT_RECORD:-}" ] ||
	die "KPKEYS_BISECT_BUILD needs BISECT_RECORD: a stand-in build must not record passes in $record"

range=$(PYTHONPATH=$KPKEYS_REPO/overlay-tools python3 -c '
import sys, tree
first, last, n, _ = tree.posted_range(sys.argv[1])
print(first, last)' "$src") || die "cannot find the posted range of $src (see above)"
read -r first last <<<"$range"
mapfile -t revs < <(git -C "$src" rev-list --reverse "$first^..$last")
[ ${#revs[@]} -gt 0 ] || die "no posted commit in $src"
lo=1 hi=${#revs[@]}
if [ -n "${BISECT_COMMITS:-}" ]; then
	[[ $BISECT_COMMITS =~ ^([0-9]+)-([0-9]+)$ ]] &&
		[ "${BASH_REMATCH[1]}" -ge 1 ] && [ "${BASH_REMATCH[1]}" -le "${BASH_REMATCH[2]}" ] &&
		[ "${BASH_REMATCH[2]}" -le "$hi" ] ||
		die "BISECT_COMMITS=$BISECT_COMMITS: expected <m>-<n> with 1 <= m <= n <= $hi (the posted patches)"
	lo=${BASH_REMATCH[1]} hi=${BASH_REMATCH[2]}
fi
fresh=${BISECT_FRESH:-}
declare -A tree_of key_of
for rev in "${revs[@]}"; do
	tree_of[$rev]=$(git -C "$src" rev-parse "$rev^{tree}")
done
for a in "${arches[@]}"; do
	key_of[$a]=$(build_key "$a") ||
		die "$a: no compiler or linker for ${llvm:+LLVM=$LLVM}$([ -n "$llvm" ] || echo "$(cross_compile "$a")gcc") (run overlay-tools/install-deps.sh)"
done

# Keep the record's lines of the trees still in the series, and of the
# arches checked now only those of their current key.
if [ -f "$record" ]; then
	tmp=$(mktemp)
	{ grep '^#' "$record"
	  grep -v '^#' "$record" | grep -F -f <(printf ' %s \n' "${tree_of[@]}") |
		awk -v cur="$(for a in "${arches[@]}"; do printf '%s=%s ' "$a" "${key_of[$a]}"; done)" '
			BEGIN { n = split(cur, kv, " "); for (i = 1; i <= n; i++) { split(kv[i], p, "="); key[p[1]] = p[2] } }
			!($1 in key) || key[$1] == $3'; } > "$tmp"
	if ! cmp -s "$tmp" "$record"; then
		say "dropping $(( $(wc -l < "$record") - $(wc -l < "$tmp") )) line(s) of trees no longer in the series or of another build key from $record"
		cat "$tmp" > "$record"
	fi
	rm -f "$tmp"
else
	mkdir -p "$(dirname "$record")"
	cat > "$record" <<-'END'
	# make bisect-check: each line a build that passed (overlay-tools/bisect-check.sh)
	# arch tree key date seconds subject
	END
fi
passed_before() {	# passed_before <arch> <rev>: prints "<date> <seconds>"
	[ -z "$fresh" ] || return 1
	awk -v a="$1" -v t="${tree_of[$2]}" -v k="${key_of[$1]}" \
		'$1 == a && $2 == t && $3 == k { d = $4 " " $5 } END { if (d == "") exit 1; print d }' "$record"
}

forget() {	# forget <arch> <rev>: removes the line of <rev> for <arch>
	awk -v a="$1" -v t="${tree_of[$2]}" -v k="${key_of[$1]}" \
		'!($1 == a && $2 == t && $3 == k)' "$record" > "$record.new" &&
	mv "$record.new" "$record" || die "cannot write $record"
}

record_pass() {	# record_pass <arch> <rev> <seconds> <subject>: replaces an older line
	forget "$1" "$2"
	echo "$1 ${tree_of[$2]} ${key_of[$1]} $(date -u +%F) $3 $4" >> "$record" ||
		die "cannot write $record"
}

# The problems in a build log: whatever the compiler, the assembler,
# objtool, modpost, Kconfig, the linkers or the arch's checks print as a
# warning or an error, in any of their spellings (make -s prints nothing
# else; build.sh's own lines carry none of these words).
build_problems() {	# build_problems <log>
	grep -E '(^|:[ ]?)(warning|Warning|WARNING|error|Error|ERROR)[: ]' "$1"
}

wt=$KPKEYS_BUILD/bisect-tree
# A worktree of a tree assembled before (another repository) is replaced.
if [ -d "$wt" ] && [ "$(git -C "$wt" rev-parse --path-format=absolute --git-common-dir 2>/dev/null)" != \
			"$(git -C "$src" rev-parse --path-format=absolute --git-common-dir)" ]; then
	say "replacing $wt, a worktree of another tree"
	rm -rf "$wt"
fi
if [ ! -d "$wt" ]; then
	git -C "$src" worktree prune
	git -C "$src" worktree add -q --detach "$wt" "${revs[0]}" ||
		die "cannot create the worktree $wt"
fi

# Paths whose change can change what <arch> compiles.
relevant() {	# relevant <arch> <rev>
	local arch=$1 rev=$2 kdir f
	kdir=$arch
	[ "$arch" = x86_64 ] && kdir=x86
	while IFS= read -r f; do
		case "$f" in
		# Documentation/Kconfig is sourced by the top-level Kconfig; the
		# rest of tools/ builds objtool and its headers.
		Documentation/Kconfig) return 0 ;;
		Documentation/*|MAINTAINERS|tools/testing/*) continue ;;
		arch/"$kdir"/*) return 0 ;;
		# Another arch's files; arch/Kconfig and the like are everyone's.
		arch/*/*) continue ;;
		*) return 0 ;;
		esac
	done < <(git -C "$src" diff-tree -r --no-commit-id --name-only "$rev")
	return 1
}

# The commit changes what the configuration can come out as: a Kconfig
# file, the scripts Kconfig runs, a defconfig fragment, the top Makefile.
config_input_changed() {	# config_input_changed <rev>
	git -C "$src" diff-tree -r --no-commit-id --name-only "$1" |
		grep -qE '(^|/)Kconfig|^scripts/|/configs/|^Makefile$'
}

# The requested options a configuration left out, one per line, sorted.
left_out() {	# left_out <log>
	sed -n 's/^  requested: //p' "$1" | LC_ALL=C sort
}

# An option the configuration has must stay: configure (only) the base and
# each patch that changes a Kconfig input for the arch, in order, and
# compare what each leaves out with the one before.  A patch may build
# without an option for a while only where series/bisect-gaps.txt says so
# (a backend patch turns the software-only hardened page tables off until
# the patch that guards the arch's writers turns them on again); any other
# gap, and a loss that no later patch undoes, fails.
gap_listed() {	# gap_listed <arch> <option as requested> <first patch> <patches>
	local name subject
	name=$(echo "$2" | grep -oE 'CONFIG_[A-Za-z0-9_]+' | head -n 1)
	subject=$(git -C "$src" log -1 --format=%s "${revs[$(($3 - 1))]}")
	[ -f "$gaps" ] && awk -v a="$1" -v o="$name" -v n="$4" -v s="$subject" '
		/^#/ || NF == 0 { next }
		{ subj = $0; sub(/^[^ ]+ +[^ ]+ +[^ ]+ +/, "", subj) }
		$1 == a && $2 == o && $3 == n && subj == s { found = 1 }
		END { exit !found }' "$gaps"
}

# Each line of the gaps file: <arch> <option> <patches> <subject>.
check_gaps() {
	local bad
	[ -f "$gaps" ] || return 0
	bad=$(awk '/^#/ || NF == 0 { next }
		NF < 4 || $2 !~ /^CONFIG_[A-Za-z0-9_]+$/ || $3 !~ /^[1-9][0-9]*$/ { print FILENAME ":" NR ": " $0 }' "$gaps")
	[ -z "$bad" ] || die "malformed line(s) in $gaps, expected <arch> <CONFIG_option> <number of patches> <subject of the first patch without it>:
$bad"
}

options_stay() {	# options_stay <arch>
	local arch=$1
	local out=$KPKEYS_BUILD/bisect-$arch-config j rev prev="" now o gap bad=0
	local -A gone_at=()
	mkdir -p "$out"
	# j = 0 is the base, j = 1..n the posted patches.
	for j in $(seq 0 "${#revs[@]}"); do
		if [ "$j" = 0 ]; then
			rev=$(git -C "$src" rev-parse "$first^")
		else
			rev=${revs[$((j - 1))]}
			[ "$j" = 1 ] || { relevant "$arch" "$rev" && config_input_changed "$rev"; } || continue
		fi
		git -C "$wt" checkout -q --detach "$rev" || die "checkout of $rev failed"
		rm -f "$out/.kpkeys-config-inputs"
		if ! KPKEYS_O=$out KPKEYS_CONFIG_ONLY=1 KPKEYS_CONFIG_LENIENT=1 \
			"$build" "$arch" "$wt" > "$out.log" 2>&1; then
			say "bisect-check: $arch: configuring patch $j failed, see $out.log:"
			tail -n 5 "$out.log" >&2
			return 1
		fi
		now=$(left_out "$out.log")
		if [ "$j" -gt 0 ]; then
			while IFS= read -r o; do
				[ -n "$o" ] && gone_at[$o]=$j
			done < <(LC_ALL=C comm -13 <(echo "$prev") <(echo "$now"))
			while IFS= read -r o; do
				[ -n "$o" ] && [ -n "${gone_at[$o]:-}" ] || continue
				if [ "${gone_at[$o]}" = $((j - 1)) ]; then
					gap="patch $((j - 1)) builds"
				else
					gap="patches ${gone_at[$o]}-$((j - 1)) build"
				fi
				gap+=" without $o, which patch $((${gone_at[$o]} - 1)) has and patch $j has again"
				if gap_listed "$arch" "$o" "${gone_at[$o]}" $((j - ${gone_at[$o]})); then
					say "bisect-check: $arch: $gap (by design: $gaps)"
				else
					say "bisect-check: $arch: $gap, and $gaps does not list it"
					bad=1
				fi
				unset "gone_at[$o]"
			done < <(LC_ALL=C comm -23 <(echo "$prev") <(echo "$now"))
		fi
		prev=$now
	done
	rm -f "$out/.kpkeys-config-inputs"
	for o in "${!gone_at[@]}"; do
		say "bisect-check: $arch: patch ${gone_at[$o]} ($(git -C "$src" log -1 --format=%s "${revs[$((${gone_at[$o]} - 1))]}")) loses $o, which the patch before it has, and no later patch has it again"
		bad=1
	done
	[ "$bad" = 0 ]
}

check_gaps
failed=() built=0 skipped=0 recorded=0 start=$SECONDS
for arch in "${arches[@]}"; do
	say "bisect-check: $arch: checking that no patch loses a configuration option"
	options_stay "$arch" || failed+=("$arch: a patch loses a configuration option for good (above)")
done

if [ -n "${BISECT_OPTIONS_ONLY:-}" ]; then
	say "bisect-check: option check only: ${#failed[@]} failed, $((SECONDS - start)) s"
	for f in "${failed[@]}"; do say "  failed: $f"; done
	[ ${#failed[@]} -eq 0 ]
	exit
fi

declare -A prev_ok=() without=()
# prev_ok[arch]: the commit before passed for arch (built or recorded), so a
# commit that changes nothing arch compiles passes too.
for i in "${!revs[@]}"; do
	[ $((i + 1)) -ge "$lo" ] && [ $((i + 1)) -le "$hi" ] || continue
	rev=${revs[$i]}
	subject=$(git -C "$src" log -1 --format=%s "$rev")
	git -C "$wt" checkout -q --detach "$rev" || die "checkout of $rev failed"
	for arch in "${arches[@]}"; do
		out=$KPKEYS_BUILD/bisect-$arch
		if [ -n "${prev_ok[$arch]:-}" ] && ! relevant "$arch" "$rev"; then
			skipped=$((skipped + 1))
			passed_before "$arch" "$rev" >/dev/null ||
				record_pass "$arch" "$rev" - "$subject"
			continue
		fi
		# A pass without a build ("-") holds only while the commit
		# before it passes too.
		if when=$(passed_before "$arch" "$rev") &&
		   { [ "${when#* }" != - ] || [ -n "${prev_ok[$arch]:-}" ]; }; then
			recorded=$((recorded + 1)) prev_ok[$arch]=1
			say "bisect-check: $((i + 1))/${#revs[@]} $arch: passed on ${when% *}: $subject"
			continue
		fi
		say "bisect-check: $((i + 1))/${#revs[@]} $arch: $subject"
		# Configured afresh: the directory may hold the configuration
		# of another commit, from an earlier run.  Unchanged options
		# rebuild nothing.
		# Objects of a build that did not pass (it failed, was
		# interrupted, or was never checked) may have printed warnings
		# that make does not print again while they are up to date:
		# start such a directory from scratch (ccache replays the
		# compiler's warnings).
		if [ -d "$out" ] && [ ! -e "$out/.bisect-passed" ]; then
			say "bisect-check: $arch: $out holds a build that did not pass; building from scratch"
			rm -rf "$out"
		fi
		mkdir -p "$out"
		rm -f "$out/.kpkeys-config-inputs" "$out/.bisect-passed"
		t0=$SECONDS
		if KPKEYS_O=$out KPKEYS_CONFIG_LENIENT=1 "$build" "$arch" "$wt" > "$out.log" 2>&1 &&
		   ! build_problems "$out.log" >/dev/null; then
			built=$((built + 1)) prev_ok[$arch]=1
			record_pass "$arch" "$rev" "$((SECONDS - t0))" "$subject"
			touch "$out/.bisect-passed"
			without[$arch]=$(left_out "$out.log" | sed -n 's/^\(CONFIG_[A-Za-z0-9_]*\)=.*/\1/p' | tr '\n' ' ')
		else
			failed+=("$((i + 1)) $arch: $subject")
			unset "prev_ok[$arch]"
			forget "$arch" "$rev"
			say "bisect-check: FAILED, see $out-$((i + 1)).log:"
			{ build_problems "$out.log" || tail -n 5 "$out.log"; } | head -n 5 >&2
			cp "$out.log" "$out-$((i + 1)).log"
		fi
		# A build.sh of this directory without KPKEYS_CONFIG_LENIENT
		# must configure again, and refuse what this one left out.
		rm -f "$out/.kpkeys-config-inputs"
	done
done
say "bisect-check: patches $lo-$hi of ${#revs[@]}, $built builds, $recorded passed before (see $record), $skipped skipped (nothing the arch compiles), ${#failed[@]} failed, $((SECONDS - start)) s"
for a in "${!without[@]}"; do
	[ -z "${without[$a]}" ] || say "  $a: the last patch built was configured without options it cannot have yet: ${without[$a]}"
done
for f in "${failed[@]}"; do say "  failed: $f"; done
[ ${#failed[@]} -eq 0 ]
