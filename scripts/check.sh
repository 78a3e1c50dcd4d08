#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Build, boot and test the kpkeys kernel for one architecture: the KUnit
# suites run at boot, the guest /init runs the in-guest tests, and
# run-qemu.py judges the console.  Results go to
# build/results/<label>.log and .json.
#
# usage: check.sh <arch> <kernel tree>
# env:   LLVM=1, QEMU_TIMEOUT (seconds), KPKEYS_APPEND (kernel parameters),
#        QEMU_CPU (QEMU -cpu override), ICOUNT=1 (-icount, one vCPU)
set -euo pipefail
. "$(dirname "$0")/lib.sh"

[ $# -eq 2 ] || { echo "usage: $0 <arch> <kernel tree>" >&2; exit 2; }
arch=$1 src=$2
check_arch "$arch"
llvm=$(llvm_arg "${LLVM:-}")
out=$(build_dir "$arch" "$llvm")
label=$arch${llvm:+-llvm}
results=$KPKEYS_BUILD/results
mkdir -p "$results"

"$KPKEYS_REPO/scripts/build.sh" "$arch" "$src"
"$KPKEYS_REPO/scripts/mkinitrd.sh" "$arch" "$src" "$out"

# Kernel paths this project adds or changes: a WARNING raised in one of
# them fails the run.
git -C "$src" diff --name-only kpkeys-base HEAD > "$out/project-files"

append=${KPKEYS_APPEND:-}

# Boot lines that prove the guest is the machine the tests assume.
expect=()
if [ -z "${ICOUNT:-}" ]; then
	expect+=(--expect-line "smp: Brought up 1 node, 2 CPUs")
fi
case "$arch" in
powerpc)
	expect+=(--expect-line "Enabling pkeys with max key count"
		 --expect-line "Activating Kernel Userspace Access Prevention"
		 --expect-line "Activating Kernel Userspace Execution Prevention")
	;;
esac

exec "$KPKEYS_REPO/scripts/run-qemu.py" --arch "$arch" --label "$label" \
	--kernel "$out/$(kernel_image "$arch")" --initrd "$out/initrd.gz" \
	--kernel-tree "$src" --log "$results/$label.log" \
	--project-files "$out/project-files" \
	--timeout "${QEMU_TIMEOUT:-300}" ${QEMU_CPU:+--cpu "$QEMU_CPU"} \
	--append "$append" ${ICOUNT:+--icount} "${expect[@]}" \
	--expect-suite kpkeys_harness --expect-suite kpkeys_guest_harness \
	--expect-suite kpkeys --expect-suite kpkeys_check
