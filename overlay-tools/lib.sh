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
		die "LLVM=1 needs clang-19, lld-19 and llvm-19 (run overlay-tools/install-deps.sh)"
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

# A private apt configuration under <dir> (source list, state, cache), so
# that the system's is not touched: private_apt <dir> <sources.list line>.
# Sets the array apt_opts for apt-get.
private_apt() {
	local dir=$1 line=$2
	mkdir -p "$dir/lists/partial" "$dir/archives/partial" "$dir/etc"
	echo "$line" > "$dir/etc/sources.list"
	touch "$dir/status"
	apt_opts=(-q
		-o Dir::Etc::SourceList="$dir/etc/sources.list"
		-o Dir::Etc::SourceParts=/dev/null
		-o Dir::State::Lists="$dir/lists"
		-o Dir::State::Status="$dir/status"
		-o Dir::Cache="$dir"
		-o Dir::Cache::Archives="$dir/archives"
		-o Debug::NoLocking=1
		-o APT::Sandbox::User=root)
}

# Download a Debian source package with a private apt configuration:
# apt_source_download <apt dir> <deb-src line> <package[=version]> <dir>
# <hint>.  <dir> must not exist; it receives the package's files.  On a
# failure, prints apt's errors and dies (the caller's die()) with <hint>,
# what to do about it; the caller's temporary directory then goes, so
# nothing is changed.  The source index (tens of MB) is removed after a
# download: it is not needed again.
apt_source_download() {
	local apt_dir=$1 line=$2 spec=$3 dir=$4 hint=$5
	private_apt "$apt_dir" "$line"
	mkdir "$dir"
	# apt-get update exits 0 when a source cannot be fetched: look for the index.
	if ! apt-get "${apt_opts[@]}" update >"$dir.update.log" 2>&1 ||
	   ! ls "$apt_dir"/lists/*_Sources* >/dev/null 2>&1; then
		grep -E '^(E|W|Err):' "$dir.update.log" >&2 || cat "$dir.update.log" >&2
		die "apt-get update could not fetch the source index of '$line' (no network? $hint); nothing was changed"
	fi
	(cd "$dir" && apt-get "${apt_opts[@]}" source --download-only "$spec") >"$dir.source.log" 2>&1 || {
		cat "$dir.source.log" >&2
		die "apt-get source $spec failed: no network, or '$line' does not list it ($hint); nothing was changed"
	}
	rm -rf "$apt_dir/lists"
}

# The kernel make command of a build flavour, in the array kmake:
# kernel_make <arch> <kernel tree> <output dir> <Kbuild LLVM= value or "">.
# One job more than CPUs keeps both busy while the other job waits on I/O.
kernel_make() {
	local arch=$1 src=$2 out=$3 llvm=${4:-} cross
	cross=$(cross_compile "$arch")
	kmake=(make -s -C "$src" O="$out" ARCH="$arch" -j"$(($(nproc) + 1))")
	# Paths under the repository are hashed relative to the build
	# directory, so that a second checkout (CI's clean clone) hits the
	# entries of the first.
	export CCACHE_BASEDIR CCACHE_NOHASHDIR=1
	CCACHE_BASEDIR=$(cd "$src/../.." && pwd)
	if [ -n "$llvm" ]; then
		kmake+=(LLVM="$llvm")
		command -v ccache >/dev/null && kmake+=(CC="ccache clang$llvm")
	else
		kmake+=(CROSS_COMPILE="$cross")
		command -v ccache >/dev/null && kmake+=(CC="ccache ${cross}gcc")
	fi
	return 0
}
