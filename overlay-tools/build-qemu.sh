#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Build the project's QEMU: Debian's qemu source package (a pinned
# version), with the project's patches from overlay-tools/qemu/patches
# (FEAT_S1POE for arm64, AMR/IAMR-coherent hash keys for powerpc), only
# qemu-system-aarch64 and qemu-system-ppc64, TCG only, only the virt and
# powernv machines.  x86_64 guests keep Debian's QEMU.
#
# The result is cached, built once per machine for each source version,
# set of patches and configuration:
#
#   $KPKEYS_CACHE/qemu-src/          the downloaded source package
#   $KPKEYS_CACHE/qemu/<key>/bin/    qemu-system-aarch64, qemu-system-ppc64
#
# <key> is the Debian version and a hash of the patches, the device
# configurations and this script.  A build happens in a temporary
# directory and is moved into place only when both binaries run and list
# their machine, so a failure leaves the cache as it was.  Firmware
# (skiboot for powernv) is Debian's qemu-system-data in /usr/share/qemu,
# compiled in as the firmware path.
#
# usage: build-qemu.sh [--key]
#   Prints the bin directory on stdout (progress and errors on stderr);
#   --key prints the cache key and does nothing else.
# env:   KPKEYS_CACHE (default ~/.cache/kpkeys), KPKEYS_QEMU_SOURCE (the
#        deb-src line, default deb.debian.org's sid main), KPKEYS_QEMU_JOBS
set -euo pipefail
. "$(dirname "$0")/lib.sh"

# The QEMU the patches are written against.
version=1:10.2.2+ds-1
upstream=${version#1:}
upstream=${upstream%-*}

key_only=0
case "${1:-}" in
"") ;;
--key) key_only=1 ;;
*) echo "usage: $0 [--key]" >&2; exit 2 ;;
esac
[ $# -le 1 ] || { echo "usage: $0 [--key]" >&2; exit 2; }

qdir=$KPKEYS_REPO/overlay-tools/qemu
cache=${KPKEYS_CACHE:-$HOME/.cache/kpkeys}
src_line=${KPKEYS_QEMU_SOURCE:-"deb-src http://deb.debian.org/debian sid main"}
src_cache=$cache/qemu-src

shopt -s nullglob
patches=("$qdir"/patches/*.patch)
shopt -u nullglob
key=$(
	{
		echo "$version"
		cat "$0" "$qdir"/devices/*.mak
		[ ${#patches[@]} = 0 ] || cat "${patches[@]}"
	} | sha256sum | cut -c1-16
)
key=$upstream-$key
if [ "$key_only" = 1 ]; then
	echo "$key"
	exit 0
fi
final=$cache/qemu/$key
bins=(qemu-system-aarch64 qemu-system-ppc64)

cached() {
	[ -f "$final/.kpkeys-built" ] && [ -x "$final/bin/qemu-system-aarch64" ] &&
		[ -x "$final/bin/qemu-system-ppc64" ]
}

if cached; then
	echo "$final/bin"
	exit 0
fi

mkdir -p "$cache/qemu"
# One fetch/build at a time (two jobs sharing a cache).
exec 9>"$cache/.qemu.lock"
flock 9
if cached; then
	echo "$final/bin"
	exit 0
fi

# What the download and the build need; install-deps.sh installs all of it.
missing=()
for tool in apt-get:apt dpkg-source:dpkg-dev gcc:gcc ninja:ninja-build \
	    meson:meson dtc:device-tree-compiler python3:python3 xz:xz-utils; do
	command -v "${tool%%:*}" >/dev/null || missing+=("${tool#*:}")
done
for pkg in libglib2.0-dev libpixman-1-dev libfdt-dev python3-venv; do
	dpkg-query -W -f='${Status}\n' "$pkg" 2>/dev/null |
		grep -q '^install ok installed$' || missing+=("$pkg")
done
[ ${#missing[@]} = 0 ] ||
	die "building the project's QEMU needs ${missing[*]}: run overlay-tools/install-deps.sh (make deps)"
# QEMU 10.2 needs meson 1.5 or later: bookworm has 1.0, bookworm-backports 1.7.
mver=$(meson --version 2>/dev/null || echo 0)
printf '1.5.0\n%s\n' "$mver" | sort -V -C ||
	die "meson $mver is too old for QEMU $upstream (1.5 or later): install meson from bookworm-backports (overlay-tools/install-deps.sh does)"
[ -f /usr/share/qemu/skiboot.lid ] ||
	die "/usr/share/qemu/skiboot.lid is missing: install qemu-system-data from bookworm-backports (overlay-tools/install-deps.sh does)"

tmp=$(mktemp -d "$cache/qemu.tmp.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

# 1. The source package, downloaded once.
if [ ! -f "$src_cache/.kpkeys-downloaded" ] ||
   [ "$(cat "$src_cache/.kpkeys-downloaded")" != "$version" ]; then
	say "downloading Debian's source package qemu $version (the source index, about 10 MB, and the package, 39 MB; once) into $src_cache"
	apt_source_download "$cache/apt-qemu-src" "$src_line" "qemu=$version" "$tmp/src" \
		"set KPKEYS_QEMU_SOURCE to a reachable deb-src line that lists it, e.g. a snapshot.debian.org archive of sid"
	[ -f "$tmp/src/qemu_${version#1:}.dsc" ] ||
		die "apt-get source left no qemu_${version#1:}.dsc; nothing was changed"
	echo "$version" > "$tmp/src/.kpkeys-downloaded"
	rm -rf "$src_cache"
	mv "$tmp/src" "$src_cache"
fi

# 2. Unpack (Debian's patches applied), apply ours.
say "building QEMU $upstream with ${#patches[@]} project patches in $tmp (about 10 minutes on 2 cores; once per machine)"
start=$SECONDS
dpkg-source -q -x "$src_cache/qemu_${version#1:}.dsc" "$tmp/src" >"$tmp/unpack.log" 2>&1 || {
	cat "$tmp/unpack.log" >&2
	die "dpkg-source -x failed (a corrupt download? remove $src_cache to fetch it again); nothing was changed"
}
for p in "${patches[@]}"; do
	(cd "$tmp/src" && patch -p1 -s --no-backup-if-mismatch < "$p") >"$tmp/patch.log" 2>&1 || {
		cat "$tmp/patch.log" >&2
		die "${p#"$KPKEYS_REPO"/} does not apply to QEMU $version; nothing was changed"
	}
done
for t in aarch64-softmmu ppc64-softmmu; do
	cp "$qdir/devices/$t.mak" "$tmp/src/configs/devices/$t/kpkeys.mak"
done

# 3. Configure and build the two system emulators only.  /usr/bin/python3:
# configure's venv needs the python that Debian's meson is installed for,
# not whichever python3 comes first on PATH.
mkdir "$tmp/src/build"
# ccache, if there is one, makes a rebuild after a patch change short: the
# paths of the temporary directory are made relative for its hashes.
cc=gcc
if command -v ccache >/dev/null; then
	cc="ccache gcc"
	export CCACHE_BASEDIR=$tmp/src CCACHE_NOHASHDIR=1
fi
if ! (cd "$tmp/src/build" && CC=$cc ../configure \
	--python=/usr/bin/python3 \
	--target-list=aarch64-softmmu,ppc64-softmmu \
	--without-default-features --without-default-devices \
	--with-devices-aarch64=kpkeys --with-devices-ppc64=kpkeys \
	--enable-tcg --enable-fdt=system --disable-install-blobs \
	--disable-docs --disable-tools --disable-werror \
	--with-pkgversion="kpkeys $key" \
	--firmwarepath=/usr/share/qemu) >"$tmp/configure.log" 2>&1; then
	tail -n 30 "$tmp/configure.log" >&2
	die "configuring QEMU $upstream failed (log above; a missing library means a missing -dev package, see overlay-tools/install-deps.sh); nothing was changed"
fi
jobs=${KPKEYS_QEMU_JOBS:-$(($(nproc) + 1))}
if ! ninja -C "$tmp/src/build" -j "$jobs" "${bins[@]}" >"$tmp/build.log" 2>&1; then
	grep -E -B2 -A8 'error:|FAILED' "$tmp/build.log" | head -n 60 >&2 || tail -n 40 "$tmp/build.log" >&2
	die "building QEMU $upstream failed (log above); nothing was changed"
fi

# 4. Both binaries must run and have their machine.
mkdir -p "$tmp/out/bin"
for b in "${bins[@]}"; do
	cp "$tmp/src/build/$b" "$tmp/out/bin/$b"
done
"$tmp/out/bin/qemu-system-aarch64" -machine help 2>/dev/null | grep -q '^virt ' ||
	die "the qemu-system-aarch64 just built has no virt machine; nothing was changed"
"$tmp/out/bin/qemu-system-ppc64" -machine help 2>/dev/null | grep -q '^powernv9 ' ||
	die "the qemu-system-ppc64 just built has no powernv9 machine; nothing was changed"
{
	echo "version $version"
	echo "patches ${#patches[@]}"
	for p in "${patches[@]}"; do echo "  ${p##*/}"; done
	echo "built $(date -u +%Y-%m-%dT%H:%M:%SZ) in $((SECONDS - start)) s"
} > "$tmp/out/.kpkeys-built"
rm -rf "$final"
mv "$tmp/out" "$final"
say "QEMU $upstream built in $((SECONDS - start)) s: $final/bin"
echo "$final/bin"
