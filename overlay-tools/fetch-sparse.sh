#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Fetch and build a sparse that can parse Linux 7.3: Debian's source
# package `sparse` from sid (0.6.5~rc1; Debian's sparse 0.6.4 binary
# packages fail the kernel's scripts/checker-valid.sh).  Like
# fetch-kernel.sh, apt runs with a private source list (one deb-src line),
# state directory and cache under $KPKEYS_CACHE, so the system's apt
# configuration is not touched.  Once built, the binary is cached:
#
#   $KPKEYS_CACHE/sparse-src/   the downloaded source package (.dsc, tarballs)
#   $KPKEYS_CACHE/sparse/       bin/sparse and .kpkeys-built (its version)
#
# Everything is built in a temporary directory and moved into place only
# when the build succeeded and the binary passed checker-valid.sh, so a
# failure leaves the cache as it was.  Prints the path of the binary on
# stdout; progress and errors go to stderr.
#
# usage: fetch-sparse.sh [<kernel tree>]
#   With a kernel tree, the new binary must pass its scripts/checker-valid.sh.
# env:   KPKEYS_CACHE (default ~/.cache/kpkeys), KPKEYS_SPARSE_SOURCE (the
#        deb-src line, default deb.debian.org's sid main)
set -euo pipefail
. "$(dirname "$0")/lib.sh"

[ $# -le 1 ] || { echo "usage: $0 [<kernel tree>]" >&2; exit 2; }
tree=${1:-}
[ -z "$tree" ] || [ -f "$tree/scripts/checker-valid.sh" ] ||
	die "$tree is not a kernel tree (no scripts/checker-valid.sh)"

cache=${KPKEYS_CACHE:-$HOME/.cache/kpkeys}
# KPKEYS_SPARSE_SOURCE: another deb-src line (a mirror) for the download.
src_line=${KPKEYS_SPARSE_SOURCE:-"deb-src http://deb.debian.org/debian sid main"}
final=$cache/sparse
src_cache=$cache/sparse-src
mkdir -p "$cache"

# checker-valid.sh prints 1 when the checker parses what the kernel needs.
valid() { [ "$(cd "$tree" && sh scripts/checker-valid.sh "$1" 2>/dev/null)" = 1 ]; }

cached() {
	[ -x "$final/bin/sparse" ] && [ -f "$final/.kpkeys-built" ] &&
		{ [ -z "$tree" ] || valid "$final/bin/sparse"; }
}

if cached; then
	echo "$final/bin/sparse"
	exit 0
fi

# One fetch/build at a time (two CI jobs sharing a cache).
exec 9>"$cache/.sparse.lock"
flock 9
if cached; then
	echo "$final/bin/sparse"
	exit 0
fi
if [ -e "$final" ]; then
	say "the cached sparse in $final is incomplete or fails checker-valid.sh: rebuilding it"
fi

# What the download and the build need.  install-deps.sh installs all of
# it (make deps); say which package is missing otherwise.
missing=()
for tool in apt-get:apt dpkg-source:dpkg-dev make:make gcc:gcc xz:xz-utils; do
	command -v "${tool%%:*}" >/dev/null || missing+=("${tool#*:}")
done
dpkg-query -W -f='${Status}\n' libc6-dev 2>/dev/null | grep -q '^install ok installed$' ||
	missing+=(libc6-dev)
[ ${#missing[@]} = 0 ] ||
	die "building sparse needs ${missing[*]}: run overlay-tools/install-deps.sh (make deps) or apt-get install ${missing[*]}"

tmp=$(mktemp -d "$cache/sparse.tmp.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

# 1. The source package, downloaded once.
if [ ! -f "$src_cache/.kpkeys-downloaded" ]; then
	say "downloading Debian's source package sparse from sid (the sid source index, about 10 MB, and the package, 0.5 MB; once) into $src_cache"
	apt_source_download "$cache/apt-sid-src" "$src_line" sparse "$tmp/src" \
		"set KPKEYS_SPARSE_SOURCE to a reachable deb-src line"
	dsc=$(ls "$tmp"/src/sparse_*.dsc 2>/dev/null | head -n 1)
	[ -n "$dsc" ] || die "apt-get source sparse left no .dsc file; nothing was changed"
	version=$(sed -n 's/^Version: //p' "$dsc")
	echo "$version" > "$tmp/src/.kpkeys-downloaded"
	rm -rf "$src_cache"
	mv "$tmp/src" "$src_cache"
fi
version=$(cat "$src_cache/.kpkeys-downloaded")
dsc=$(ls "$src_cache"/sparse_*.dsc | head -n 1)

# 2. Unpack (Debian's patches applied) and build only the sparse program.
say "building sparse $version in $tmp (about 15 s)"
start=$SECONDS
dpkg-source -q -x "$dsc" "$tmp/build" >"$tmp/unpack.log" 2>&1 || {
	cat "$tmp/unpack.log" >&2
	die "dpkg-source -x $dsc failed (a corrupt download? remove $src_cache to fetch it again); nothing was changed"
}
# Only the sparse program is built, without the optional libraries (LLVM,
# GTK, libxml2, sqlite) of the other programs.  CC=gcc: Debian's
# use-gcc-16.patch names the compiler of sid.
if ! make -C "$tmp/build" -j"$(nproc)" CC=gcc HAVE_LLVM=no HAVE_GTK=no HAVE_LIBXML=no \
	HAVE_SQLITE=no sparse >"$tmp/build.log" 2>&1; then
	tail -n 30 "$tmp/build.log" >&2
	die "building sparse $version failed (log above: a missing header means a missing -dev package, see overlay-tools/install-deps.sh); nothing was changed"
fi
mkdir -p "$tmp/out/bin"
cp "$tmp/build/sparse" "$tmp/out/bin/sparse"
"$tmp/out/bin/sparse" --version >/dev/null 2>&1 ||
	die "the sparse $version just built does not run; nothing was changed"
if [ -n "$tree" ] && ! valid "$tmp/out/bin/sparse"; then
	die "sparse $version from sid fails $tree/scripts/checker-valid.sh, so it cannot check this kernel; nothing was changed"
fi
echo "$version" > "$tmp/out/.kpkeys-built"
rm -rf "$final"
mv "$tmp/out" "$final"
say "sparse $version built in $((SECONDS - start)) s: $final/bin/sparse"
echo "$final/bin/sparse"
