#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Fetch and extract the default base kernel: Debian's linux-source-7.3 from
# trixie-backports.  apt runs with a private source list, state directory and
# cache under $KPKEYS_CACHE, so the system's apt configuration is not touched.
# Prints the path of the extracted tree on stdout; progress goes to stderr.
set -euo pipefail

cache=${KPKEYS_CACHE:-$HOME/.cache/kpkeys}
suite_line="deb http://deb.debian.org/debian trixie-backports main"
pkg=linux-source-7.3

. "$(dirname "$0")/lib.sh"
log() { echo "fetch-kernel: $*" >&2; }
die() { echo "fetch-kernel: error: $*" >&2; exit 1; }

mkdir -p "$cache"
src_dir=$cache/linux-7.3
if [ -f "$src_dir/.kpkeys-extracted" ]; then
	echo "$src_dir"
	exit 0
fi

apt_dir=$cache/apt
private_apt "$apt_dir" "$suite_line"

deb=$(ls "$apt_dir"/archives/${pkg}_*.deb 2>/dev/null | sort -V | tail -n 1 || true)
if [ -z "$deb" ]; then
	log "downloading $pkg from trixie-backports (about 170 MB, once) into $apt_dir"
	apt-get "${apt_opts[@]}" update >&2 || die "apt-get update for trixie-backports failed (is deb.debian.org reachable?)"
	(cd "$apt_dir/archives" && apt-get "${apt_opts[@]}" download "$pkg" >&2) ||
		die "could not download $pkg from trixie-backports"
	deb=$(ls "$apt_dir"/archives/${pkg}_*.deb | sort -V | tail -n 1)
fi
version=$(dpkg-deb -f "$deb" Version)
case "$version" in
7.3.*|7.3-*) ;;
*) die "$deb has version $version, expected 7.3.x" ;;
esac

log "extracting $(basename "$deb") (version $version)"
rm -rf "$cache/pkg" "$src_dir.tmp"
dpkg-deb -x "$deb" "$cache/pkg"
tarball=$(ls "$cache"/pkg/usr/src/linux-source-7.3*.tar.* | head -n 1)
[ -f "$tarball" ] || die "no source tarball in $deb"
mkdir -p "$src_dir.tmp"
tar -xf "$tarball" -C "$src_dir.tmp" --strip-components=1
rm -rf "$cache/pkg" "$src_dir"
mv "$src_dir.tmp" "$src_dir"
echo "$version" > "$src_dir/.kpkeys-extracted"
log "base kernel ready in $src_dir"
echo "$src_dir"
