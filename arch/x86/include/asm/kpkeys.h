/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * kpkeys on x86: Protection Keys for Supervisor pages (PKS).
 *
 * Supervisor pages carry a key in PTE bits 62:59 (the same bits as user
 * pkeys, which apply to user pages only: the two sets of 16 keys are
 * independent).  IA32_PKRS holds two bits per key: AD (access disable) at
 * bit 2k and WD (write disable) at bit 2k+1.  Key 0 is the default key of
 * every kernel page; key 1 is the page-table key.
 *
 * Each level is one PKRS value, defined here and nowhere else:
 *
 *	level			key 0	key 1 (page tables)
 *	KPKEYS_LVL_DEFAULT	RW	read-only (WD)
 *	KPKEYS_LVL_PGTABLES	RW	RW
 *
 * kpkeys manages keys 0 and 1 (PKRS bits 3:0, KPKEYS_PKEY_REG_MASK) and
 * never changes the bits of keys 2-15, which another PKS user may own.
 *
 * Reading IA32_PKRS with RDMSR is slow, so the value last written on this
 * CPU is kept in a per-CPU copy, read by the entry code, the scheduler and
 * every level switch.  The copy and the MSR are written together with
 * interrupts off: an interrupt, or a preemption, between the two would
 * find a copy that says "default" over an MSR that still allows writes to
 * page tables, and leave it so.  An NMI can still land in between: NMI
 * entry does not trust the copy (kpkeys_irqentry_nmi_enter()).  WRMSR to
 * PKRS is not serialising; the SDM orders it with later accesses as
 * needed, as for WRPKRU.
 */
#ifndef _ASM_X86_KPKEYS_H
#define _ASM_X86_KPKEYS_H

#include <linux/cpufeature.h>
#include <linux/instrumentation.h>
#include <linux/jump_label.h>
#include <linux/percpu.h>
#include <asm/irqflags.h>
#include <asm/msr.h>

#define KPKEYS_PKEY_DEFAULT	0
#define KPKEYS_PKEY_PGTABLES	1

#define PKRS_AD_BIT(pkey)	(1U << (2 * (pkey)))
#define PKRS_WD_BIT(pkey)	(1U << (2 * (pkey) + 1))

#define PKRS_KEY_BITS(pkey)	(3U << (2 * (pkey)))	/* AD and WD */
#define KPKEYS_PKEY_REG_MASK	(PKRS_KEY_BITS(KPKEYS_PKEY_DEFAULT) | \
				 PKRS_KEY_BITS(KPKEYS_PKEY_PGTABLES))

#define PKRS_LVL_DEFAULT	PKRS_WD_BIT(KPKEYS_PKEY_PGTABLES)
#define PKRS_LVL_PGTABLES	0U

DECLARE_PER_CPU(u32, kpkeys_pkrs);

static __always_inline bool arch_kpkeys_enabled(void)
{
	return cpu_feature_enabled(X86_FEATURE_PKS);
}

static __always_inline u64 arch_kpkeys_level_pkey_reg(int level)
{
	return level == KPKEYS_LVL_PGTABLES ? PKRS_LVL_PGTABLES :
					      PKRS_LVL_DEFAULT;
}

/*
 * A test hook between the two writes of arch_kpkeys_write_pkey_reg()
 * (mm/tests/kpkeys_kunit.c), in kernels with the kpkeys KUnit test built
 * in; patched out unless a test arms it.
 */
#if IS_BUILTIN(CONFIG_KPKEYS_KUNIT_TEST)
#define KPKEYS_TEST_WRITE_WINDOW
DECLARE_STATIC_KEY_FALSE(kpkeys_test_write_window_key);
void kpkeys_test_write_window(void);

static __always_inline void kpkeys_test_write_window_hook(void)
{
	if (static_branch_unlikely(&kpkeys_test_write_window_key)) {
		instrumentation_begin();
		kpkeys_test_write_window();
		instrumentation_end();
	}
}
#else
static __always_inline void kpkeys_test_write_window_hook(void) {}
#endif

/* noinstr-safe: entry code saves and restores PKRS with these. */
static __always_inline u64 arch_kpkeys_read_pkey_reg(void)
{
	return raw_cpu_read(kpkeys_pkrs);
}

/* IA32_PKRS itself, not the per-CPU copy: for tests. */
static __always_inline u64 arch_kpkeys_read_pkey_reg_hw(void)
{
	return native_rdmsrq(MSR_IA32_PKRS);
}

#define arch_kpkeys_read_pkey_reg_hw arch_kpkeys_read_pkey_reg_hw

static __always_inline void arch_kpkeys_write_pkey_reg(u64 reg)
{
	unsigned long flags = arch_local_irq_save();

	raw_cpu_write(kpkeys_pkrs, (u32)reg);
	kpkeys_test_write_window_hook();
	native_wrmsrq(MSR_IA32_PKRS, reg);
	arch_local_irq_restore(flags);
}

#endif /* _ASM_X86_KPKEYS_H */
