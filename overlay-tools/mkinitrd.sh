#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Build the guest initramfs for one architecture: guest/init.c (/init) and
# tools/testing/selftests/kpkeys/kpkeys_bench.c of the tree (/kpkeys_bench)
# compiled statically with the kernel's nolibc
# against the headers_install output of the kernel build,
# lib/test_vmalloc.ko, and the kselftest install of the tree's
# selftests/kpkeys (/kselftest: kselftest's make, static glibc) with
# Debian's busybox-static (/bin) for kselftest's runner, and on arm64 and
# powerpc Linux's user-pkey selftests (/pkeys), packed as a gzip'ed newc
# cpio.
#
# usage: mkinitrd.sh <arch> <kernel tree> <kernel build dir>
# Writes <kernel build dir>/initrd.gz.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

[ $# -eq 3 ] || { echo "usage: $0 <arch> <kernel tree> <kernel build dir>" >&2; exit 2; }
arch=$1 src=$2 out=$3
check_arch "$arch"
[ -d "$out" ] || die "$out: no such kernel build directory"
out=$(cd "$out" && pwd)	# make -C below changes directory
hdrs=$out/usr-headers/include
[ -d "$hdrs" ] || die "$hdrs missing: build the kernel first (make ARCH=$arch)"
nolibc=$src/tools/include/nolibc
[ -f "$nolibc/nolibc.h" ] || die "$nolibc/nolibc.h missing: $src is not a full kernel tree"
cc=$(cross_compile "$arch")gcc
command -v "$cc" >/dev/null || die "$cc not found (run overlay-tools/install-deps.sh)"

# Guest programs are always built with gcc: they are test tooling, not part
# of the kernel under test, and gcc links nolibc against libgcc simply.
stage=$out/initramfs
rm -rf "$stage"
mkdir -p "$stage/proc" "$stage/sys" "$stage/tmp" "$stage/etc"
chmod 1777 "$stage/tmp"
# The pkey selftests run as nobody, and protection_keys reads /etc/passwd.
printf 'root:x:0:0:root:/:/bin/sh\nnobody:x:65534:65534:nobody:/tmp:/bin/false\n' > "$stage/etc/passwd"
printf 'root:x:0:\nnogroup:x:65534:\n' > "$stage/etc/group"
mkdir -p "$stage/lib"
bench=$src/tools/testing/selftests/kpkeys/kpkeys_bench.c
[ -f "$bench" ] || die "$bench missing: $src is not a kpkeys tree (make tree)"
# /init (the project's guest) and the series' benchmark selftest, both
# against the kernel's nolibc.
for prog in "init:$KPKEYS_REPO/overlay-tools/guest/init.c" "kpkeys_bench:$bench"; do
	"$cc" -Os -static -nostdlib -nostdinc -fno-stack-protector -Wall -Werror \
		-I"$nolibc" -I"$hdrs" -include "$nolibc/nolibc.h" \
		-o "$stage/${prog%%:*}" "${prog#*:}" -lgcc
done
# kselftest's runner in the guest (init's kpkeys_init.kselftest=1): the
# series' selftests installed by kselftest's own make, linked statically
# against the cross glibc, and busybox for the shell and the tools the
# runner calls.  No timeout applet: the runner would call it with
# --foreground, which busybox's lacks (without one the runner runs the
# test directly, and run-qemu.py's timeout still applies).
busybox=$("$KPKEYS_REPO/overlay-tools/fetch-busybox.sh" "$arch") ||
	die "no busybox-static for $arch (see above): kselftest's runner needs a shell in the guest"
ksft_build=$out/kselftest-build
rm -rf "$stage/kselftest"
if ! make -s -C "$src/tools/testing/selftests" TARGETS=kpkeys \
	ARCH="$arch" CROSS_COMPILE="$(cross_compile "$arch")" \
	KHDR_INCLUDES="-isystem $hdrs" LDFLAGS=-static O="$ksft_build" \
	INSTALL_PATH="$stage/kselftest" install > "$out/kselftest-build.log" 2>&1; then
	cat "$out/kselftest-build.log" >&2
	die "kselftest's make of selftests/kpkeys failed (above; a static build needs Debian's libc6-dev for the host, libc6-dev-arm64-cross or libc6-dev-ppc64el-cross: overlay-tools/install-deps.sh)"
fi
# Linux's own user-pkey selftests (init's kpkeys_init.pkeys=1, the suite
# upstream_pkey_selftests), static: on arm64 and powerpc they show that
# the project's QEMU enforces POR_EL0 and the AMR.  Built from a copy of
# the tree's tools/ (the mm Makefile writes its local_config into its
# source directory) with the selftests' own make.
pkeys=()
case "$arch" in
arm64) pkeys=(mm/protection_keys mm/pkey_sighandler_tests) ;;
powerpc) pkeys=(mm/protection_keys powerpc/mm/pkey_exec_prot) ;;
esac
if [ ${#pkeys[@]} -gt 0 ]; then
	pk=$out/pkey-selftests
	rm -rf "$pk"
	mkdir -p "$pk/src" "$pk/out" "$stage/pkeys"
	git -C "$src" archive HEAD tools mm/gup_test.h | tar -x -C "$pk/src" ||
		die "cannot copy tools/ of $src for the pkey selftests"
	for t in "${pkeys[@]}"; do
		if ! make -s -C "$pk/src/tools/testing/selftests/${t%/*}" ARCH="$arch" \
			CROSS_COMPILE="$(cross_compile "$arch")" \
			KHDR_INCLUDES="-isystem $hdrs" EXTRA_CFLAGS=-static \
			USERCFLAGS=-static GIT_VERSION=v7.3 OUTPUT="$pk/out" \
			"$pk/out/${t##*/}" >> "$out/pkey-selftests.log" 2>&1 ||
		   [ ! -x "$pk/out/${t##*/}" ]; then
			cat "$out/pkey-selftests.log" >&2
			die "the selftest $t did not build (above; static builds need libc6-dev-arm64-cross or libc6-dev-ppc64el-cross: overlay-tools/install-deps.sh)"
		fi
		cp "$pk/out/${t##*/}" "$stage/pkeys/"
	done
fi
mkdir -p "$stage/bin" "$stage/usr/bin"
cp "$busybox" "$stage/bin/busybox"
for applet in sh basename cat cut dirname echo env false grep head ls mkdir \
	      mktemp printf readlink realpath rm sed sleep sort tail tee test \
	      tr true uname wc; do
	ln -s busybox "$stage/bin/$applet"
done
# The benchmark's vmalloc rows and a guest test load test_vmalloc.
vmtest=$out/lib/test_vmalloc.ko
[ -f "$vmtest" ] || die "$vmtest missing: the configuration must have CONFIG_TEST_VMALLOC=m"
cp "$vmtest" "$stage/lib/"
# The guest maps device memory with the HMM test driver, and unmaps it.
if grep -q '^CONFIG_TEST_HMM=m' "$out/.config"; then
	hmm=$out/lib/test_hmm.ko
	[ -f "$hmm" ] || die "$hmm missing: the kernel was configured with CONFIG_TEST_HMM=m but the module is not built"
	cp "$hmm" "$stage/lib/"
fi
(cd "$stage" && find . | LC_ALL=C sort | cpio -o -H newc --quiet --owner=0:0) |
	gzip -9 > "$out/initrd.gz"
say "$arch: $out/initrd.gz"
