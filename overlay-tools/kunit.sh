#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Run the project's KUnit suites through the kernel's standard runner,
# tools/testing/kunit/kunit.py, with the kunitconfig the series ships
# (mm/tests/kpkeys.kunitconfig).  powerpc uses the series' powernv9 QEMU
# configuration, so the hash MMU runs with storage keys.
#
# usage: kunit.sh <arch> <kernel tree>     (env: LLVM=1)
set -euo pipefail
. "$(dirname "$0")/lib.sh"

[ $# -eq 2 ] || { echo "usage: $0 <arch> <kernel tree>" >&2; exit 2; }
arch=$1 src=$(cd "$2" && pwd)
check_arch "$arch"
llvm=$(llvm_arg "${LLVM:-}")
out=$KPKEYS_BUILD/kunit-$arch${llvm:+-llvm}
args=(run --kunitconfig="$src/mm/tests/kpkeys.kunitconfig" --build_dir="$out"
      --jobs="$(nproc)" --timeout=600)
case "$arch" in
powerpc) args+=(--qemu_config="$src/tools/testing/kunit/qemu_configs/powernv9_hash.py") ;;
*) args+=(--arch="$arch") ;;
esac
cross=$(cross_compile "$arch")
if [ -n "$llvm" ]; then
	args+=(--make_options "LLVM=$llvm")
elif [ -n "$cross" ]; then
	args+=(--cross_compile="$cross")
fi
unset MAKEFLAGS MAKELEVEL MFLAGS
cd "$src"
set -x
exec python3 tools/testing/kunit/kunit.py "${args[@]}"
