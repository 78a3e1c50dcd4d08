#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Fetch Debian bookworm's busybox-static for a guest architecture: the
# shell and tools that kselftest's runner (run_kselftest.sh) needs in the
# guest, which otherwise has only the project's /init.  apt runs with a
# private source list, state directory and cache under $KPKEYS_CACHE, for
# the package's Debian architecture (amd64, arm64, ppc64el), so the
# system's apt configuration is not touched and no foreign architecture is
# added to dpkg.
#
# Usage: fetch-busybox.sh <x86_64|arm64|powerpc>
# Prints the path of the static busybox binary on stdout.
# KPKEYS_BUSYBOX_MIRROR: another Debian mirror URL for the download.
set -euo pipefail

. "$(dirname "$0")/lib.sh"
log() { echo "fetch-busybox: $*" >&2; }
die() { echo "fetch-busybox: error: $*" >&2; exit 1; }

[ $# -eq 1 ] || die "usage: $0 <x86_64|arm64|powerpc>"
case "$1" in
x86_64) darch=amd64 ;;
arm64) darch=arm64 ;;
powerpc) darch=ppc64el ;;
*) die "unknown architecture '$1' (x86_64, arm64 or powerpc)" ;;
esac

cache=${KPKEYS_CACHE:-$HOME/.cache/kpkeys}
dir=$cache/busybox-$darch
bin=$dir/busybox
if [ -x "$bin" ]; then
	echo "$bin"
	exit 0
fi

apt_dir=$cache/apt-busybox-$darch
mirror=${KPKEYS_BUSYBOX_MIRROR:-http://deb.debian.org/debian}
private_apt "$apt_dir" "deb [arch=$darch] $mirror bookworm main"
apt_opts+=(-o APT::Architecture="$darch" -o APT::Architectures="$darch")
deb=$(ls "$apt_dir"/archives/busybox-static_*_"$darch".deb 2>/dev/null | sort -V | tail -n 1 || true)
if [ -z "$deb" ]; then
	log "downloading busybox-static ($darch) from bookworm (about 1 MB, once) into $apt_dir"
	apt-get "${apt_opts[@]}" update >&2 ||
		die "apt-get update for bookworm ($darch) from $mirror failed (is it reachable? KPKEYS_BUSYBOX_MIRROR sets another); no busybox was installed"
	(cd "$apt_dir/archives" && apt-get "${apt_opts[@]}" download "busybox-static:$darch" >&2) ||
		die "could not download busybox-static:$darch from bookworm ($mirror); no busybox was installed"
	deb=$(ls "$apt_dir"/archives/busybox-static_*_"$darch".deb 2>/dev/null | sort -V | tail -n 1 || true)
	[ -n "$deb" ] || die "apt-get download left no busybox-static_*_$darch.deb in $apt_dir/archives"
fi
rm -rf "$dir.tmp"
dpkg-deb -x "$deb" "$dir.tmp" || die "cannot extract $deb"
[ -f "$dir.tmp/bin/busybox" ] || die "$deb has no bin/busybox"
rm -rf "$dir"
mkdir -p "$dir"
mv "$dir.tmp/bin/busybox" "$bin"
rm -rf "$dir.tmp"
log "busybox for $darch: $bin ($(dpkg-deb -f "$deb" Version))"
echo "$bin"
