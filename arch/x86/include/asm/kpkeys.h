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
 * Keys 2-15 are unused and left at 0 (no kernel page carries them).
 *
 * Reading IA32_PKRS with RDMSR is slow, so the value last written on this
 * CPU is cached in a per-CPU variable; the cache is written before the
 * MSR, so an interrupt that lands in between sees the new value and puts
 * it back on exit.  Writes are WRMSR, which is not serialising for PKRS:
 * the SDM orders it with later accesses as needed, as for WRPKRU.
 */
#ifndef _ASM_X86_KPKEYS_H
#define _ASM_X86_KPKEYS_H

#include <linux/cpufeature.h>
#include <linux/percpu.h>
#include <asm/msr.h>

#define KPKEYS_PKEY_DEFAULT	0
#define KPKEYS_PKEY_PGTABLES	1

#define PKRS_AD_BIT(pkey)	(1U << (2 * (pkey)))
#define PKRS_WD_BIT(pkey)	(1U << (2 * (pkey) + 1))

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

/* noinstr-safe: entry code saves and restores PKRS with these. */
static __always_inline u64 arch_kpkeys_read_pkey_reg(void)
{
	return raw_cpu_read(kpkeys_pkrs);
}

static __always_inline void arch_kpkeys_write_pkey_reg(u64 reg)
{
	raw_cpu_write(kpkeys_pkrs, (u32)reg);
	native_wrmsrq(MSR_IA32_PKRS, reg);
}

#endif /* _ASM_X86_KPKEYS_H */
