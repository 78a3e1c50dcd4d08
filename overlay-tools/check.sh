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
#        QEMU_CPU (QEMU -cpu override), ICOUNT=1 (-icount, one vCPU),
#        KPKEYS_MODES (boot parameter values booted after the default,
#        default "nobatch off bogus"; empty: only the default boot)
#
# On x86_64, unless KPKEYS_MODES is empty, a second kernel is built as
# well (overlay-tools/configs/x86_64-debug.config, in build/<arch>[-llvm]-debug) and
# booted under UEFI firmware (OVMF): the "<label>+debug-uefi" boot.  On
# arm64 and powerpc the production kernel (bench-prod.config, in
# build/<arch>[-llvm]-prod) is built and booted: "<label>+prod-nocheck".
set -euo pipefail
. "$(dirname "$0")/lib.sh"

[ $# -eq 2 ] || { echo "usage: $0 <arch> <kernel tree>" >&2; exit 2; }
arch=$1 src=$2
check_arch "$arch"
# arm64 and powerpc boot the project's QEMU (built once, then cached);
# KPKEYS_QEMU_BINDIR, if set, names another directory of qemu-system-*.
case "$arch" in
arm64|powerpc)
	if [ -z "${KPKEYS_QEMU_BINDIR:-}" ]; then
		KPKEYS_QEMU_BINDIR=$("$KPKEYS_REPO/overlay-tools/alive.sh" "the project's QEMU (built once per machine)" -- \
			"$KPKEYS_REPO/overlay-tools/build-qemu.sh") ||
			die "$arch boots the project's QEMU, and it could not be built (see above)"
		export KPKEYS_QEMU_BINDIR
	fi
	;;
esac
llvm=$(llvm_arg "${LLVM:-}")
out=$(build_dir "$arch" "$llvm")
label=$arch${llvm:+-llvm}
results=$KPKEYS_BUILD/results
mkdir -p "$results"

"$KPKEYS_REPO/overlay-tools/alive.sh" "$arch: building the test kernel in ${out#$KPKEYS_REPO/}" -- \
	"$KPKEYS_REPO/overlay-tools/build.sh" "$arch" "$src"
"$KPKEYS_REPO/overlay-tools/mkinitrd.sh" "$arch" "$src" "$out"

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

# The suites every boot must report: KUnit's and the guest's.  A kernel
# without CONFIG_KPKEYS_CHECK has no kpkeys_check suite, and the
# production kernel no KUnit at all ($guest_suites only).
guest_suites=(--expect-suite kpkeys_guest_harness
	      --expect-suite kpkeys_hardened_pgtables_guest)
kunit_suites=(--expect-suite kpkeys_harness --expect-suite kpkeys
	      --expect-suite kpkeys_hardened_pgtables
	      --expect-suite kpkeys_hardened_pgtables_boot
	      --expect-suite kpkeys_conformance)
# Every case of the conformance suite must pass in the default boot of
# every architecture, none may skip: each one has its backend in use there.
conf=(--expect-all-pass kpkeys_conformance)
# The backend's own suite, where there is one.
[ "$arch" = x86_64 ] && kunit_suites+=(--expect-suite kpkeys_x86)
[ "$arch" = arm64 ] && kunit_suites+=(--expect-suite kpkeys_arm64)
[ "$arch" = powerpc ] && kunit_suites+=(--expect-suite kpkeys_powerpc)
all_suites=("${kunit_suites[@]}" --expect-suite kpkeys_check "${guest_suites[@]}")
suites=("${all_suites[@]}")

# One boot: boot <label> <extra kernel parameters> [run-qemu.py options]
# of the kernel in $kout, with a timeout of $timeout seconds, expecting
# the suites in $suites.
kout=$out
timeout=${QEMU_TIMEOUT:-300}
boot() {
	local name=$1 params=$2
	shift 2
	"$KPKEYS_REPO/overlay-tools/run-qemu.py" --arch "$arch" --label "$name" \
		--kernel "$kout/$(kernel_image "$arch")" --initrd "$kout/initrd.gz" \
		--kernel-tree "$src" --log "$results/$name.log" \
		--project-files "$kout/project-files" \
		--timeout "$timeout" ${QEMU_CPU:+--cpu "$QEMU_CPU"} \
		--append "$append${params:+ $params}" ${ICOUNT:+--icount} \
		"${expect[@]}" "$@" "${suites[@]}"
}

# The default boot, then each value of the boot parameter (same kernel):
# a mode that is not what the log says, or an invalid value that is not
# refused, fails.  KPKEYS_MODES= (empty) boots only the default.
# Where the CPU enforces kpkeys (x86 PKS under TCG), the default boot must
# use the hardware and run the enforcement test; two more boots turn PKS
# off (nopks, and a CPU without it) and must fall back to software, and
# one (pti=on) runs with page-table isolation.
hw=()
case "$arch" in
x86_64)
	hw=(--expect-line "x86: PKS: enabled, kpkeys available"
	    --expect-line "# cpuinfo: pks present"
	    --forbid-line "hardened page tables: software only"
	    --expect-pass kpkeys_hardened_pgtables.default_context_write_faults
	    --expect-pass kpkeys_x86.pkrs_holds_each_context
	    --expect-pass kpkeys_x86.nmi_in_a_leave_runs_at_default
	    --expect-pass kpkeys_x86.nmi_in_an_enter_restores_the_copy
	    --expect-pass kpkeys_hardened_pgtables_boot.unkeyed_window_tables_keyed_after)
	;;
arm64)
	# The project's QEMU has FEAT_S1POE: POR_EL1 is read back, page
	# tables carry POIndex 7, and writes to them fault.
	hw=(--expect-line "kpkeys: POE enabled at EL1: POR_EL1 0x17777777, page tables POIndex 7"
	    --forbid-line "hardened page tables: software only"
	    --forbid-line "is not mapped with its own PTE: its image alias is not keyed"
	    --expect-pass kpkeys_hardened_pgtables.default_context_write_faults
	    --expect-pass kpkeys.cpu_comes_up_at_default
	    --expect-pass kpkeys_arm64.image_pgtables_keyed_in_image_alias
	    --expect-pass kpkeys_arm64.por_el1_holds_each_context
	    --expect-pass kpkeys_arm64.every_cpu_has_poe_at_default
	    --expect-pass kpkeys_arm64.unmanaged_fields_survive_a_switch
	    --expect-pass kpkeys_arm64.pgtable_page_has_poindex_7
	    --expect-pass kpkeys_hardened_pgtables_boot.unkeyed_window_tables_keyed_after
	    --expect-line "MiB mapped with pages, 0 MiB with blocks (Linux maps it with pages here with or without kpkeys: no extra cost)")
	;;
powerpc)
	# powernv9, hash MMU: storage key 4 in the AMR beside KUAP's key 3,
	# page tables keyed in their bolted linear-map HPTEs, writes fault.
	hw=(--expect-line "kpkeys: hash storage key 4 for page tables: AMR 0xfcbfffffffffffff in the default context, 0xfc3fffffffffffff in the page-table context"
	    --expect-line "kpkeys: linear map: 1024 MiB with one bolted HPTE per 4K page"
	    --forbid-line "hardened page tables: software only"
	    --expect-pass kpkeys_hardened_pgtables.default_context_write_faults
	    --expect-pass kpkeys_hardened_pgtables.linear_map_tables_keyed
	    --expect-pass kpkeys_hardened_pgtables_boot.unkeyed_window_tables_keyed_after
	    --expect-pass kpkeys_powerpc.amr_holds_each_context
	    --expect-pass kpkeys.cpu_comes_up_at_default
	    --expect-pass kpkeys_powerpc.kuap_window_survives_a_switch
	    --expect-pass kpkeys_powerpc.kuap_windows_keep_pgtables_read_only
	    --expect-pass kpkeys_powerpc.kuap_windows_keep_the_context
	    --expect-pass kpkeys_powerpc.kuap_faults_diagnosed_in_either_context
	    --expect-pass kpkeys_powerpc.pgd_and_pud_pages_are_constructed
	    --expect-pass kpkeys_powerpc.every_cpu_at_default
	    --expect-pass kpkeys_powerpc.pgtable_page_has_key_4
	    --expect-pass kpkeys_powerpc.user_cannot_get_key_4
	    --expect-pass kpkeys_hardened_pgtables_guest.kuap_blocks_user_access
	    --expect-pass kpkeys_hardened_pgtables_guest.kuep_blocks_user_exec)
	;;
esac
# arm64 and powerpc: the default boot also shows that the project's QEMU
# enforces the user pkey register (POR_EL0, the AMR) as the architecture
# says: our own test of a permission taken away, and Linux's own pkey
# selftests (guest/init.c: kpkeys_init.pkeys=1, a full plan required).
pkeys=() pkeys_param=
case "$arch" in
arm64|powerpc)
	pkeys_param=kpkeys_init.pkeys=1
	pkeys=(--expect-suite emulator_keys --expect-suite upstream_pkey_selftests
	       --expect-pass emulator_keys.key_write_disable_faults_at_once
	       --expect-pass upstream_pkey_selftests.protection_keys)
	pkeys+=(--expect-pass emulator_keys.kernel_pkey_is_reserved)
	if [ "$arch" = arm64 ]; then
		pkeys+=(--expect-pass upstream_pkey_selftests.pkey_sighandler_tests)
	else
		pkeys+=(--expect-pass upstream_pkey_selftests.pkey_exec_prot)
	fi
	;;
esac

rc=0
# The default boot also runs kselftest's runner on the series' selftests
# (the suite kpkeys_kselftest, see guest/init.c).
boot "$label" "kpkeys_init.kselftest=1${pkeys_param:+ $pkeys_param}" \
	--expect-line "kpkeys: hardened page tables: " "${hw[@]}" "${pkeys[@]}" "${conf[@]}" \
	--expect-suite kpkeys_kselftest \
	--expect-pass "kpkeys_kselftest.selftests: kpkeys: kpkeys_bench" || rc=1
if [ "$arch" = x86_64 ] && [ -n "${KPKEYS_MODES-x}" ]; then
	nopks="hardened page tables: software only (this CPU has no usable protection keys for the kernel)"
	boot "$label+nopks" "nopks" \
		--expect-line "x86: PKS: disabled by 'nopks', kpkeys unavailable" \
		--expect-line "# cpuinfo: pks absent" \
		--expect-pass kpkeys_x86.pkrs_untouched_when_pks_is_off \
		--expect-line "$nopks" || rc=1
	boot "$label+cpu-pks" "" --cpu max,-pks \
		--expect-line "x86: PKS: not supported by this CPU, kpkeys unavailable" \
		--expect-line "# cpuinfo: pks absent" \
		--expect-pass kpkeys_x86.pkrs_untouched_when_pks_is_off \
		--expect-line "$nopks" || rc=1
	# PTI's user copy of the kernel part is walked, keyed and checked too.
	boot "$label+pti" "pti=on" \
		--expect-line "Kernel/User page tables isolation: enabled" \
		"${hw[@]}" || rc=1
fi
for mode in ${KPKEYS_MODES-nobatch off bogus}; do
	case $mode in
	nobatch)
		line="kpkeys: hardened page tables: nobatch" ;;
	off)
		line="kpkeys: hardened page tables: off (disabled on the command line" ;;
	*)
		line="kpkeys_hardened_pgtables=$mode: invalid value, valid values are on, nobatch and off; keeping on" ;;
	esac
	extra=() params="kpkeys_hardened_pgtables=$mode"
	# x86: PKS present but unused: IA32_PKRS is never written.
	[ "$arch" = x86_64 ] && [ "$mode" = off ] &&
		extra=(--expect-pass kpkeys_x86.pkrs_untouched_when_pks_is_off)
	saved_expect=("${expect[@]}")
	# powerpc keeps its large linear-map pages when the feature is off.
	[ "$arch" = powerpc ] && [ "$mode" = off ] &&
		extra=(--expect-line "kpkeys: linear map: large pages, page-table pages cannot be keyed (kpkeys_hardened_pgtables=off)")
	# x86_64 and arm64 emulate two NUMA nodes in the nobatch boot: node
	# setup, per-node memory maps and page tables of a second node.
	if [ "$mode" = nobatch ] && [ "$arch" != powerpc ]; then
		params+=" numa=fake=2"
		expect=()
		[ -z "${ICOUNT:-}" ] && expect+=(--expect-line "smp: Brought up 2 nodes, 2 CPUs")
	fi
	boot "$label+$mode" "$params" \
		--expect-line "$line" "${extra[@]}" || rc=1
	expect=("${saved_expect[@]}")
done

# powerpc under the radix MMU (disable_radix=no undoes the runner's
# disable_radix): no storage keys for kernel pages, so kpkeys says why and
# hardened page tables run in software only; KUAP (radix's) still blocks
# kernel accesses to user memory.  No pkey line under radix.
if [ "$arch" = powerpc ] && [ -n "${KPKEYS_MODES-x}" ]; then
	saved_expect=("${expect[@]}")
	expect=(--expect-line "Activating Kernel Userspace Access Prevention")
	[ -z "${ICOUNT:-}" ] && expect+=(--expect-line "smp: Brought up 1 node, 2 CPUs")
	boot "$label+radix" "disable_radix=no" \
		--expect-line "radix-mmu: Initializing Radix MMU" \
		--expect-line "kpkeys: unavailable: the radix MMU has no storage keys for kernel pages (boot with disable_radix for the hash MMU)" \
		--expect-line "hardened page tables: software only (this CPU has no usable protection keys for the kernel)" \
		--expect-pass kpkeys_hardened_pgtables_guest.kuap_blocks_user_access || rc=1
	expect=("${saved_expect[@]}")
fi


# A boot that could not run: say why, and leave a result file with the
# reason, so that the summary (check-many.sh) counts it as failed.
no_boot() {
	local name=$1 why=$2
	echo "${0##*/}: error: $name: $why" >&2
	printf '{"label": "%s", "problems": ["%s"], "suites": {}}\n' \
		"$name" "$why" > "$results/$name.log.json"
}

# arm64 on Debian's own QEMU, which has no FEAT_S1POE: the same kernel
# falls back to software and says why.
stock_qemu=/usr/bin/qemu-system-aarch64
if [ "$arch" = arm64 ] && [ -n "${KPKEYS_MODES-x}" ]; then
	if [ ! -x "$stock_qemu" ]; then
		no_boot "$label+stock-qemu" "$stock_qemu not found: install Debian's qemu-system-arm (overlay-tools/install-deps.sh)"
		rc=1
	else
		KPKEYS_QEMU_BINDIR=${stock_qemu%/*} boot "$label+stock-qemu" "" \
			--expect-line "kpkeys: unavailable: this CPU has no FEAT_S1POE (ID_AA64MMFR3_EL1.S1POE is 0)" \
			--expect-line "hardened page tables: software only (this CPU has no usable protection keys for the kernel)" || rc=1
	fi
	# Booted at EL2: VHE (the kernel at EL2, POR_EL1 and TCR2_EL1 reach
	# POR_EL2 and TCR2_EL2) and nVHE (the kernel at EL1 under the hyp
	# stub, which must not trap POR_EL1: HFGxTR_EL2.nPOR_EL1).
	boot "$label+vhe" "" --machine virt,virtualization=on \
		--expect-line "CPU: All CPU(s) started at EL2" \
		--expect-line "kpkeys: POE enabled at EL2: POR_EL2 0x17777777, page tables POIndex 7" \
		"${hw[@]:2}" || rc=1
	boot "$label+nvhe" "id_aa64mmfr1.vh=0" --machine virt,virtualization=on \
		--expect-line "CPU: All CPU(s) started at EL2" \
		"${hw[@]}" || rc=1
	# rodata=noalias: the linear map keeps block mappings that cannot be
	# split live, so no page can be keyed: hardened page tables stay
	# off, say why, and neither retry nor leak the pool's pages.
	boot "$label+rodata-noalias" "rodata=noalias" \
		--expect-line "kpkeys: cannot key linear-map pages: the linear map uses block mappings that cannot be split live (rodata=noalias or rodata=off)" \
		--expect-line "hardened page tables: off (the linear map cannot be keyed on this system" \
		--expect-line "MiB with blocks (its blocks cannot be split live, so no page in them can be keyed)" \
		--forbid-line "leaking" --forbid-line "set_memory_pkey(pfn" || rc=1
fi

# arm64 and powerpc: the production kernel (the benchmark's,
# overlay-tools/configs/bench-prod.config: -O2, no CONFIG_KPKEYS_CHECK,
# no KUnit) with the backend in use: the guest's page-table workload
# (fork, exec, mmap/munmap, mprotect, THP, vmalloc, 2 vCPUs) and the
# walker with the software check compiled out.  The benchmark's quick run
# times this build (bench.py QUICK_PROD_ARCHES).
prodhw=()
case "$arch" in
arm64)
	prodhw=(--expect-line "kpkeys: POE enabled at EL1: POR_EL1 0x17777777, page tables POIndex 7") ;;
powerpc)
	prodhw=("${hw[@]:0:4}"
		--expect-pass kpkeys_hardened_pgtables_guest.kuap_blocks_user_access
		--expect-pass kpkeys_hardened_pgtables_guest.kuep_blocks_user_exec) ;;
esac
if [ ${#prodhw[@]} -gt 0 ] && [ -n "${KPKEYS_MODES-x}" ]; then
	prod=$out-prod
	say "$arch: building the production kernel (no CONFIG_KPKEYS_CHECK) in $prod"
	if KPKEYS_O=$prod "$KPKEYS_REPO/overlay-tools/alive.sh" "$arch: production kernel" -- \
		"$KPKEYS_REPO/overlay-tools/build.sh" "$arch" "$src" \
		"$KPKEYS_REPO/overlay-tools/configs/bench-prod.config" &&
	   "$KPKEYS_REPO/overlay-tools/mkinitrd.sh" "$arch" "$src" "$prod" &&
	   git -C "$src" diff --name-only kpkeys-base HEAD > "$prod/project-files"; then
		kout=$prod suites=("${guest_suites[@]}")
		boot "$label+prod-nocheck" "" "${prodhw[@]}" \
			--expect-line "kpkeys: hardened page tables: on" \
			--forbid-line "hardened page tables: software only" \
			--forbid-line "kpkeys: software context checker enabled" \
			--expect-pass kpkeys_hardened_pgtables_guest.pgtable_workload \
			--expect-pass kpkeys_hardened_pgtables_guest.walker_finds_no_unkeyed_tables || rc=1
		kout=$out suites=("${all_suites[@]}")
	else
		no_boot "$label+prod-nocheck" "the production kernel or its initramfs did not build (see above)"
		rc=1
	fi
fi

# x86_64: the debug kernel (overlay-tools/configs/x86_64-debug.config: ACPI, EFI,
# lockdep, DEBUG_ATOMIC_SLEEP, fault injection on the kpkeys pool refill
# path, no CONFIG_KPKEYS_CHECK) booted under OVMF.  Its guest reads an EFI variable through
# efivarfs: a GetVariable() runtime-service call on the keyed EFI page
# tables.  The KUnit case pool_refill_failure_leaves_nothing_keyed
# injects a refill failure halfway through keying a block, and the
# command line ($debug_faults) injects page allocation and pool keying
# failures from boot on.  Lockdep and sleep-in-atomic splats fail the boot: the "BUG:"
# ones (sleeping function called from invalid context, Invalid wait
# context) already do in run-qemu.py; lockdep's "WARNING: <what>" lines
# name no file, so they are forbidden here, by their text.
ovmf=/usr/share/ovmf/OVMF.fd
# Fault injection from the command line: the first 3 allocations that
# fail_page_alloc may fail (non-reclaiming, order >= 1), and every fifth
# keying of a pool refill (the pool retries; no page may stay keyed):
# every fifth, not a 20% chance, which can inject nothing in a boot and
# so fail it.
debug_faults="fail_page_alloc=1,100,0,3 fail_kpkeys_pool=5,100,0,-1"
# Lockdep makes the boot several times slower under TCG.
debug_timeout=$((2 * ${QEMU_TIMEOUT:-300}))
if [ "$arch" = x86_64 ] && [ -n "${KPKEYS_MODES-x}" ]; then
	dbg=$out-debug
	if [ ! -f "$ovmf" ]; then
		no_boot "$label+debug-uefi" "UEFI firmware $ovmf not found: install Debian's ovmf package (apt-get install ovmf, or run overlay-tools/install-deps.sh)"
		rc=1
	else
		say "$arch: building the debug kernel (UEFI, lockdep, fault injection) in $dbg"
		if KPKEYS_O=$dbg "$KPKEYS_REPO/overlay-tools/alive.sh" "$arch: debug kernel" -- \
			"$KPKEYS_REPO/overlay-tools/build.sh" "$arch" "$src" \
			"$KPKEYS_REPO/overlay-tools/configs/x86_64-debug.config" &&
		   "$KPKEYS_REPO/overlay-tools/mkinitrd.sh" "$arch" "$src" "$dbg" &&
		   git -C "$src" diff --name-only kpkeys-base HEAD > "$dbg/project-files"; then
			kout=$dbg timeout=$debug_timeout
			suites=("${kunit_suites[@]}" "${guest_suites[@]}")
			boot "$label+debug-uefi" "$debug_faults" \
				--bios "$ovmf" \
				--expect-line "FAULT_INJECTION: forcing a failure" \
				--expect-line "efi: EFI v" \
				--expect-line "Lock dependency validator" \
				--expect-line "kpkeys: hardened page tables: " "${hw[@]}" \
				--expect-pass kpkeys_hardened_pgtables_guest.efi_runtime_variable_read \
				--expect-pass kpkeys_hardened_pgtables.pool_refill_failure_leaves_nothing_keyed \
				--expect-pass kpkeys_hardened_pgtables_guest.pgtable_workload \
				--expect-pass kpkeys_hardened_pgtables_guest.walker_finds_no_unkeyed_tables \
				--forbid-line "kpkeys: software context checker enabled" \
				--forbid-line "possible circular locking dependency" \
				--forbid-line "possible recursive locking" \
				--forbid-line "inconsistent lock state" \
				--forbid-line "suspicious RCU usage" \
				--forbid-line "sleeping function called from invalid context" \
				--forbid-line "Invalid wait context" \
				--forbid-line "possible irq lock inversion" || rc=1
		else
			no_boot "$label+debug-uefi" "the debug kernel or its initramfs did not build (see above)"
			rc=1
		fi
	fi

	# 32-bit x86 has no kpkeys backend but shares <asm/pgtable.h> with
	# x86-64: the series must not break it.  tinyconfig, and only the mm
	# files that use every page-table writer (a minute with ccache).
	kernel_make i386 "$src" "$KPKEYS_BUILD/i386-headers" ""
	if "${kmake[@]}" tinyconfig >/dev/null &&
	   "${kmake[@]}" mm/memory.o mm/mprotect.o mm/mmap.o kernel/fork.o \
		> "$results/$label+i386-build.log" 2>&1; then
		printf '{"label": "%s+i386-build", "problems": [], "suites": {"build": [{"name": "i386_mm_files_build", "status": "PASS"}]}}\n' "$label" \
			> "$results/$label+i386-build.log.json"
	else
		no_boot "$label+i386-build" "ARCH=i386 tinyconfig: mm/memory.o and friends do not build (see $results/$label+i386-build.log)"
		rc=1
	fi
fi
exit $rc
