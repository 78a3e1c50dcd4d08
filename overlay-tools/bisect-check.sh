#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Build every posted patch of the series on its own, for each architecture:
# the test configuration (tinyconfig + common.config + <arch>.config) of
# build.sh, in a worktree of the tree at each commit in turn, out of tree
# in build/bisect-<arch>, incrementally and with ccache.  Options a commit
# does not have yet are left out (build.sh's KPKEYS_CONFIG_LENIENT); the
# configuration is made again where a commit changes a Kconfig file.  A
# commit that touches nothing the architecture compiles (documentation,
# another architecture, the selftests) is not built again for it.
#
# Not in CI: a cold run is hours on two cores.  Run it before posting.
#
# A run can be spread over several sittings: every build that passes is
# appended to series/bisect-check.txt (BISECT_RECORD=<file> for another),
#
#   <arch> <tree of the commit> <build key> <date> <seconds> <subject>
#
# (<seconds> is "-" for a commit that changes nothing the arch compiles,
# after one that passed.)
# and a later run skips a commit whose tree already passed for that arch
# with the same build key: the hash of build.sh and lib.sh, the config
# fragments (common and the arch's), LLVM= and the compiler's version.
# The tree of a commit names all of its source, so editing an earlier
# patch of the series changes the tree of every commit after it, and they
# are all built again.
# BISECT_FRESH=1 builds every commit and rewrites nothing it did not build.
# Lines of trees no longer in the series are dropped from the record.
#
# usage: bisect-check.sh <assembled kernel tree> [<arch> ...]
# env:   BISECT_RECORD, BISECT_FRESH (above); BISECT_COMMITS=<m>-<n> checks
#        only patches m to n of the posted series (1-based, as the progress
#        lines number them); KPKEYS_BISECT_BUILD=<command>
#        instead of build.sh, called as build.sh is (the tooling tests)
set -uo pipefail
. "$(dirname "$0")/lib.sh"

[ $# -ge 1 ] || { echo "usage: $0 <kernel tree> [<arch> ...]" >&2; exit 2; }
src=$(cd "$1" && pwd)
shift
arches=("$@")
[ ${#arches[@]} -gt 0 ] || arches=(x86_64 arm64 powerpc)
for a in "${arches[@]}"; do check_arch "$a"; done

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
record=${BISECT_RECORD:-$KPKEYS_REPO/series/bisect-check.txt}
fresh=${BISECT_FRESH:-}
declare -A tree_of key_of
for rev in "${revs[@]}"; do
	tree_of[$rev]=$(git -C "$src" rev-parse "$rev^{tree}")
done

# What a passing build depends on besides the kernel source.
build_key() {	# build_key <arch>
	local arch=$1 cc
	if [ -n "${LLVM:-}" ] && [ "$LLVM" != 0 ]; then
		cc="clang$(llvm_arg "$LLVM")"
	else
		cc="$(cross_compile "$arch")gcc"
	fi
	command -v "$cc" >/dev/null || die "$arch: compiler $cc not found (run overlay-tools/install-deps.sh)"
	{ cat "$KPKEYS_REPO/overlay-tools/build.sh" "$KPKEYS_REPO/overlay-tools/lib.sh" \
	      "$KPKEYS_REPO/overlay-tools/configs/common.config" \
	      "$KPKEYS_REPO/overlay-tools/configs/$arch.config"
	  echo "LLVM=${LLVM:-}"
	  "$cc" --version | head -n 1; } | sha256sum | cut -c1-16
}
for a in "${arches[@]}"; do key_of[$a]=$(build_key "$a"); done

# Keep the record's lines of the trees still in the series.
if [ -f "$record" ]; then
	tmp=$(mktemp)
	{ grep '^#' "$record"
	  grep -v '^#' "$record" | grep -F -f <(printf ' %s \n' "${tree_of[@]}"); } > "$tmp"
	if ! cmp -s "$tmp" "$record"; then
		say "dropping $(( $(wc -l < "$record") - $(wc -l < "$tmp") )) line(s) of trees no longer in the series from $record"
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
passed_before() {	# passed_before <arch> <rev>: prints the date
	[ -z "$fresh" ] || return 1
	awk -v a="$1" -v t="${tree_of[$2]}" -v k="${key_of[$1]}" \
		'$1 == a && $2 == t && $3 == k { d = $4 } END { if (d == "") exit 1; print d }' "$record"
}

record_pass() {	# record_pass <arch> <rev> <seconds> <subject>: replaces an older line
	local t=${tree_of[$2]} k=${key_of[$1]}
	awk -v a="$1" -v t="$t" -v k="$k" '!($1 == a && $2 == t && $3 == k)' "$record" > "$record.new" &&
	echo "$1 $t $k $(date -u +%F) $3 $4" >> "$record.new" &&
	mv "$record.new" "$record" || die "cannot write $record"
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
		arch/*) continue ;;
		*) return 0 ;;
		esac
	done < <(git -C "$src" diff-tree -r --no-commit-id --name-only "$rev")
	return 1
}

failed=() without=() built=0 skipped=0 recorded=0 start=$SECONDS
# prev_ok[arch]: the commit before passed for arch (built or recorded), so a
# commit that changes nothing arch compiles passes too.
declare -A kconfig_pending prev_ok
for i in "${!revs[@]}"; do
	[ $((i + 1)) -ge "$lo" ] && [ $((i + 1)) -le "$hi" ] || continue
	rev=${revs[$i]}
	subject=$(git -C "$src" log -1 --format=%s "$rev")
	git -C "$wt" checkout -q --detach "$rev" || die "checkout of $rev failed"
	kconfig_changed=$(git -C "$src" diff-tree -r --no-commit-id --name-only "$rev" | grep -c 'Kconfig' || true)
	for arch in "${arches[@]}"; do
		out=$KPKEYS_BUILD/bisect-$arch
		if [ -n "${prev_ok[$arch]:-}" ] && ! relevant "$arch" "$rev"; then
			skipped=$((skipped + 1))
			passed_before "$arch" "$rev" >/dev/null ||
				record_pass "$arch" "$rev" - "$subject"
			continue
		fi
		[ "$kconfig_changed" = 0 ] || kconfig_pending[$arch]=1
		if when=$(passed_before "$arch" "$rev"); then
			recorded=$((recorded + 1)) prev_ok[$arch]=1
			say "bisect-check: $((i + 1))/${#revs[@]} $arch: passed on $when: $subject"
			continue
		fi
		[ -z "${kconfig_pending[$arch]:-}" ] || rm -f "$out/.kpkeys-config-inputs"
		unset "kconfig_pending[$arch]"
		say "bisect-check: $((i + 1))/${#revs[@]} $arch: $subject"
		t0=$SECONDS
		if KPKEYS_O=$out KPKEYS_CONFIG_LENIENT=1 \
			"${KPKEYS_BISECT_BUILD:-$KPKEYS_REPO/overlay-tools/build.sh}" "$arch" "$wt" > "$out.log" 2>&1 &&
		   ! grep -E '^[^ ]+:[0-9]+:[0-9]+: (warning|error):' "$out.log" | grep -q .; then
			built=$((built + 1)) prev_ok[$arch]=1
			record_pass "$arch" "$rev" "$((SECONDS - t0))" "$subject"
			if grep -q 'KPKEYS_CONFIG_LENIENT: building without' "$out.log"; then
				without+=("$((i + 1)) $arch: $(sed -n 's/^  requested: \(CONFIG_[A-Za-z0-9_]*\)=.*/\1/p' "$out.log" | tr '\n' ' ')")
			fi
		else
			failed+=("$((i + 1)) $arch: $subject")
			unset "prev_ok[$arch]"
			say "bisect-check: FAILED, see $out.log:"
			grep -E '(warning|error):' "$out.log" | head -n 5 >&2
			cp "$out.log" "$out-$((i + 1)).log"
		fi
	done
done
say "bisect-check: patches $lo-$hi of ${#revs[@]}, $built builds, $recorded passed before (see $record), $skipped skipped (nothing the arch compiles), ${#failed[@]} failed, $((SECONDS - start)) s"
for f in "${without[@]}"; do say "  configured without options it cannot have yet: $f"; done
for f in "${failed[@]}"; do say "  failed: $f"; done
[ ${#failed[@]} -eq 0 ]
