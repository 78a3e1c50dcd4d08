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
 * Each context is one PKRS value, defined here and nowhere else:
 *
 *	context			key 0	key 1 (page tables)
 *	KPKEYS_CTX_DEFAULT	RW	read-only (WD)
 *	KPKEYS_CTX_PGTABLES	RW	RW
 *
 * kpkeys manages keys 0 and 1 (PKRS bits 3:0, ARCH_KPKEYS_REG_MASK) and
 * never changes the bits of keys 2-15, which another PKS user may own.
 *
 * struct arch_kpkeys_state holds PKRS bits 3:0 and bit 31
 * (ARCH_KPKEYS_STATE_MARK), set in every state read or switched from; a
 * state keeps only the masked bits, and the mark is never written to the
 * register.  The page-table context's bits are all clear, so without the
 * mark its state would be zero, which says that nothing was written.
 * Zeroed memory therefore restores nothing, and never the page-table
 * context.
 *
 * Reading IA32_PKRS with RDMSR is slow, so the value last written on this
 * CPU is kept in a per-CPU copy, read by the entry code, the scheduler,
 * every kpkeys_enter_context() and leave, and every page-table guard.  The
 * copy and the MSR are written together with interrupts off: an
 * interrupt, or a preemption, between the two would find a copy that says
 * "default" over an MSR that still allows writes to page tables, and
 * leave it so.  An NMI can still land in between: NMI
 * entry does not trust the copy (kpkeys_irqentry_nmi_enter()).  WRMSR to
 * PKRS is not serialising; the SDM orders it with later accesses as
 * needed, as for WRPKRU.
 */
#ifndef _ASM_X86_KPKEYS_H
#define _ASM_X86_KPKEYS_H

#include <linux/jump_label.h>
#include <linux/kpkeys_types.h>
#include <linux/percpu.h>
#include <asm/irqflags.h>
#include <asm/msr.h>

#define KPKEYS_PKEY_DEFAULT	0
#define KPKEYS_PKEY_PGTABLES	1

#define PKRS_AD_BIT(pkey)	(1U << (2 * (pkey)))
#define PKRS_WD_BIT(pkey)	(1U << (2 * (pkey) + 1))

#define PKRS_KEY_BITS(pkey)	(3U << (2 * (pkey)))	/* AD and WD */
#define ARCH_KPKEYS_REG_MASK	(PKRS_KEY_BITS(KPKEYS_PKEY_DEFAULT) | \
				 PKRS_KEY_BITS(KPKEYS_PKEY_PGTABLES))
#define ARCH_KPKEYS_STATE_MARK	0x80000000UL

#define PKRS_CTX_DEFAULT	PKRS_WD_BIT(KPKEYS_PKEY_PGTABLES)
#define PKRS_CTX_PGTABLES	0U

DECLARE_PER_CPU(u32, kpkeys_pkrs);
DECLARE_STATIC_KEY_FALSE(kpkeys_pks_enabled);

/*
 * X86_FEATURE_PKS says the CPU has PKS from early CPU identification on;
 * setup_pks() decides later whether kpkeys uses it, and clears it if not.
 * Until then nothing may write IA32_PKRS: a patched-out branch, enabled
 * by setup_pks() on the boot CPU once CR4.PKS is set.
 */
static __always_inline bool arch_kpkeys_supported(void)
{
	return static_branch_unlikely(&kpkeys_pks_enabled);
}

static __always_inline unsigned long __arch_kpkeys_ctx_reg(enum kpkeys_ctx ctx)
{
	return ctx == KPKEYS_CTX_PGTABLES ? PKRS_CTX_PGTABLES : PKRS_CTX_DEFAULT;
}

/* The per-CPU copy; noinstr-safe. */
static __always_inline unsigned long __arch_kpkeys_reg_read(void)
{
	return raw_cpu_read(kpkeys_pkrs);
}

#define ARCH_KPKEYS_REG_COPY

/* IA32_PKRS itself, not the per-CPU copy. */
static __always_inline unsigned long __arch_kpkeys_reg_read_hw(void)
{
	return native_rdmsrq(MSR_IA32_PKRS);
}

/* The copy and the MSR; also for CPU bring-up and resume. */
static __always_inline void __arch_kpkeys_reg_write(unsigned long reg)
{
	unsigned long flags = arch_local_irq_save();

	raw_cpu_write(kpkeys_pkrs, (u32)reg);
	native_wrmsrq(MSR_IA32_PKRS, reg);
	arch_local_irq_restore(flags);
}

#include <asm-generic/kpkeys.h>

#endif /* _ASM_X86_KPKEYS_H */
