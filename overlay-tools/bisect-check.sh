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
# usage: bisect-check.sh <assembled kernel tree> [<arch> ...]
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

failed=() built=0 skipped=0 start=$SECONDS
for i in "${!revs[@]}"; do
	rev=${revs[$i]}
	subject=$(git -C "$src" log -1 --format=%s "$rev")
	git -C "$wt" checkout -q --detach "$rev" || die "checkout of $rev failed"
	kconfig_changed=$(git -C "$src" diff-tree -r --no-commit-id --name-only "$rev" | grep -c 'Kconfig' || true)
	for arch in "${arches[@]}"; do
		out=$KPKEYS_BUILD/bisect-$arch
		if [ "$i" -gt 0 ] && [ -f "$out/.config" ] && ! relevant "$arch" "$rev"; then
			skipped=$((skipped + 1))
			continue
		fi
		[ "$kconfig_changed" = 0 ] || rm -f "$out/.kpkeys-config-inputs"
		say "bisect-check: $((i + 1))/${#revs[@]} $arch: $subject"
		if KPKEYS_O=$out KPKEYS_CONFIG_LENIENT=1 \
			"$KPKEYS_REPO/overlay-tools/build.sh" "$arch" "$wt" > "$out.log" 2>&1 &&
		   ! grep -E '^[^ ]+:[0-9]+:[0-9]+: (warning|error):' "$out.log" | grep -q .; then
			built=$((built + 1))
		else
			failed+=("$((i + 1)) $arch: $subject")
			say "bisect-check: FAILED, see $out.log:"
			grep -E '(warning|error):' "$out.log" | head -n 5 >&2
			cp "$out.log" "$out-$((i + 1)).log"
		fi
	done
done
say "bisect-check: ${#revs[@]} commits, $built builds, $skipped skipped (nothing the arch compiles), ${#failed[@]} failed, $((SECONDS - start)) s"
for f in "${failed[@]}"; do say "  failed: $f"; done
[ ${#failed[@]} -eq 0 ]
