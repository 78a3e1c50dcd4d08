# SPDX-License-Identifier: GPL-2.0
# Shared helpers for the kpkeys scripts: sourced, not run.

# shellcheck disable=SC2034
KPKEYS_REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
KPKEYS_BUILD=${KPKEYS_BUILD:-$KPKEYS_REPO/build}
KPKEYS_ARCHES="x86_64 arm64 powerpc"

die() { echo "${0##*/}: error: $*" >&2; exit 1; }
say() { echo "${0##*/}: $*" >&2; }

# The kernel's ARCH for a user-facing arch name; dies on anything else.
check_arch() {
	case "$1" in
	x86_64|arm64|powerpc) ;;
	*) die "unsupported ARCH '$1' (supported: $KPKEYS_ARCHES)" ;;
	esac
}

host_arch() {
	case "$(uname -m)" in
	x86_64) echo x86_64 ;;
	aarch64|arm64) echo arm64 ;;
	ppc64le) echo powerpc ;;
	*) uname -m ;;
	esac
}

# Cross prefix for gcc builds and the guest init.
cross_compile() {
	case "$1" in
	x86_64) [ "$(host_arch)" = x86_64 ] && echo "" || echo x86_64-linux-gnu- ;;
	arm64) [ "$(host_arch)" = arm64 ] && echo "" || echo aarch64-linux-gnu- ;;
	powerpc) [ "$(host_arch)" = powerpc ] && echo "" || echo powerpc64le-linux-gnu- ;;
	esac
}

# Kbuild's LLVM= value for the user's LLVM= setting.  Bookworm's default
# clang (14) is too old for Linux 7.3, so LLVM=1 means the versioned
# clang-19 toolchain (Kbuild's LLVM=-19 suffix form).
llvm_arg() {
	case "${1:-}" in
	""|0) echo "" ;;
	1) command -v clang-19 >/dev/null ||
		die "LLVM=1 needs clang-19, lld-19 and llvm-19 (run scripts/install-deps.sh)"
	   echo "-19" ;;
	*) echo "$1" ;;
	esac
}

# Output directory of one build flavour.
build_dir() {
	local arch=$1 llvm=${2:-}
	if [ -n "$llvm" ]; then
		echo "$KPKEYS_BUILD/$arch-llvm"
	else
		echo "$KPKEYS_BUILD/$arch"
	fi
}

kernel_image() {
	case "$1" in
	x86_64) echo arch/x86/boot/bzImage ;;
	arm64) echo arch/arm64/boot/Image ;;
	powerpc) echo vmlinux ;;
	esac
}
