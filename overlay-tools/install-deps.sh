#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Install the Debian packages the kpkeys build, test and benchmark jobs need.
# Idempotent: packages already present are not touched, and nothing is done
# when everything is there.  QEMU 10.0 comes from bookworm-backports: when a
# package from it is missing and no apt source lists that suite, one is
# added in its own file ($bp_list below), after saying which and why.
set -euo pipefail

usage() {
	echo "usage: $0 [--check]" >&2
	echo "  --check  only report missing packages, exit 1 if any" >&2
	exit 2
}

check_only=0
case "${1:-}" in
"") ;;
--check) check_only=1 ;;
*) usage ;;
esac

# Packages from bookworm itself.  sparse is used when it can check the
# kernel (scripts/checker-valid.sh); otherwise fetch-sparse.sh builds one
# from Debian sid's source package with apt-get source (dpkg-dev), make,
# gcc and libc6-dev.  ovmf is the UEFI firmware (/usr/share/ovmf/OVMF.fd)
# of the x86_64 debug-uefi boot (check.sh).  The cross libc6-dev packages
# link the kselftest build of selftests/kpkeys statically (mkinitrd.sh).
# python3-sphinx is the kernel's 'make htmldocs' (test-tooling.sh test_docs).
base_pkgs=(make gcc libc6-dev flex bison bc libelf-dev libssl-dev cpio rsync
	   kmod xz-utils git python3 perl sparse ccache gnuplot-nox
	   gcc-aarch64-linux-gnu gcc-powerpc64le-linux-gnu
	   libc6-dev-arm64-cross libc6-dev-ppc64el-cross
	   clang-19 lld-19 llvm-19 dpkg-dev apt ca-certificates
	   python3-ply python3-git ovmf python3-sphinx
	   libglib2.0-dev libpixman-1-dev libfdt-dev device-tree-compiler
	   ninja-build python3-venv)
# Packages that must come from bookworm-backports: QEMU 10.0 (powernv
# icount; x86_64 guests and the firmware of the others), and what building
# the project's QEMU for arm64 and powerpc needs besides the bookworm
# packages above (build-qemu.sh: meson >= 1.5, pycotap for its tests).
bp_pkgs=(qemu-system-x86 qemu-system-arm qemu-system-ppc qemu-system-data
	 meson python3-pycotap)
bp_list=/etc/apt/sources.list.d/kpkeys-bookworm-backports.list
bp_line="deb http://deb.debian.org/debian bookworm-backports main"

missing() {
	local p
	for p in "$@"; do
		dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null |
			grep -q '^install ok installed$' || echo "$p"
	done
}

qemu_is_new() {
	local v
	v=$(qemu-system-x86_64 --version 2>/dev/null | sed -n 's/.*version \([0-9]*\)\..*/\1/p')
	[ -n "$v" ] && [ "$v" -ge 10 ]
}

need_base=$(missing "${base_pkgs[@]}")
need_bp=$(missing "${bp_pkgs[@]}")
qemu_is_new || need_bp="${bp_pkgs[*]}"

# An apt source that lists bookworm-backports, if there is one.
bp_source() {
	local f
	for f in "$bp_list" /etc/apt/sources.list /etc/apt/sources.list.d/*.list \
		 /etc/apt/sources.list.d/*.sources; do
		[ -f "$f" ] && grep -qs '^[^#]*bookworm-backports' "$f" && { echo "$f"; return 0; }
	done
	return 1
}
bp_why="Debian bookworm's own QEMU is 7.2 and its meson 1.0; the project needs QEMU 10.0 (powernv icount, the x86_64 guests, the firmware of the others) and meson >= 1.5 and python3-pycotap to build its own QEMU"

if [ -z "$need_base" ] && [ -z "$need_bp" ]; then
	echo "deps: all packages present (no apt source added, nothing installed)"
	exit 0
fi
if [ "$check_only" = 1 ]; then
	echo "deps: missing:" $need_base $need_bp
	if [ -n "$need_bp" ] && ! bp_source >/dev/null; then
		echo "deps: installing them would add the apt source '$bp_line' ($bp_list): $bp_why"
	fi
	exit 1
fi

SUDO=
if [ "$(id -u)" != 0 ]; then
	command -v sudo >/dev/null || { echo "deps: need root or sudo to install:" $need_base $need_bp >&2; exit 1; }
	SUDO=sudo
fi
export DEBIAN_FRONTEND=noninteractive
apt_opts=(-y -q --no-install-recommends -o Dpkg::Use-Pty=0)

if [ -z "$need_bp" ]; then
	echo "deps: every package needed comes from bookworm itself: no apt source added"
elif src=$(bp_source); then
	echo "deps: bookworm-backports is already an apt source ($src): no apt source added"
else
	echo "deps: adding the apt source '$bp_line' in $bp_list: $bp_why."
	echo "deps: from it (apt prefers bookworm's own packages otherwise):" $need_bp
	echo "$bp_line" | $SUDO tee "$bp_list" >/dev/null
fi
echo "deps: apt-get update (the index of every configured apt source)"
$SUDO apt-get -q update -o Dpkg::Use-Pty=0 >/dev/null
if [ -n "$need_base" ]; then
	echo "deps: installing" $need_base
	$SUDO apt-get install "${apt_opts[@]}" $need_base >/dev/null
fi
if [ -n "$need_bp" ]; then
	echo "deps: installing from bookworm-backports:" $need_bp
	$SUDO apt-get install "${apt_opts[@]}" -t bookworm-backports $need_bp >/dev/null
fi
qemu_is_new || { echo "deps: QEMU >= 10 not installed (got: $(qemu-system-x86_64 --version | head -1))" >&2; exit 1; }
echo "deps: done"
