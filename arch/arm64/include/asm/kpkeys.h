/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * kpkeys on arm64: the Permission Overlay Extension (FEAT_S1POE) at EL1.
 *
 * Block and page descriptors carry a 3-bit POIndex (bits 62:60).  With
 * TCR2_EL1.POE set, every privileged data access and instruction fetch is
 * also checked against the 4-bit field of POR_EL1 that the index selects
 * (POR_EL0 checks unprivileged accesses: EL0, and the LDTR/STTR of
 * uaccess).  An overlay only takes rights away from what the descriptor,
 * or PIR_EL1 under S1PIE, gives.  POR_EL1, like TCR2_EL1.POE, may not be
 * cached in a TLB: a write takes effect at the next context
 * synchronisation event, with no TLB maintenance.
 *
 *	POIndex	what carries it			POR_EL1: default  pgtables
 *	0	every kernel page, user pages	RWX		  RWX
 *		without a pkey
 *	1-6	user pages (pkey_alloc())	RWX		  RWX
 *	7	page-table pages		R		  RW
 *		(KPKEYS_PKEY_PGTABLES)
 *
 * kpkeys manages the fields of indexes 0 and 7 (ARCH_KPKEYS_REG_MASK);
 * fields 1-6 are set to RWX once per CPU (POR_EL1_INIT) and never change.
 *
 * Why 7, and why the overlay cannot hurt privileged accesses to user
 * pages: a few kernel accesses to user memory are privileged (the futex
 * and SWP emulation LL/SC sequences under uaccess_enable_privileged(),
 * with PAN cleared), so they are checked against POR_EL1 with the user
 * page's own POIndex, not against POR_EL0.  While kpkeys is armed
 * (arch_kpkeys_supported()), every mm has index 7 marked allocated from
 * creation on and it cannot be freed (<asm/pkeys.h>), so no user page
 * ever carries it, and POR_EL1 gives RWX to every index a
 * user page can carry, in every context: those accesses see exactly the
 * rights they had without kpkeys.  The highest index is taken because
 * pkey_alloc() hands out the lowest free one: programs that allocate few
 * keys see no difference.  Ordinary uaccess (LDTR/STTR) uses POR_EL0 and
 * never POR_EL1.
 *
 * struct arch_kpkeys_state holds fields 0 and 7 of POR_EL1.  Every
 * context gives POIndex 0 (every kernel page) RWX, so field 0 is never
 * zero in a state read or switched from, and zero can say that nothing
 * was written without a mark bit (ARCH_KPKEYS_STATE_MARK is 0).
 *
 * Under VHE the kernel runs at EL2 and the POR_EL1 and TCR2_EL1 encodings
 * reach POR_EL2 and TCR2_EL2, which control the EL2&0 regime the same way.
 */
#ifndef __ASM_KPKEYS_H
#define __ASM_KPKEYS_H

#define KPKEYS_PKEY_DEFAULT	0
#define KPKEYS_PKEY_PGTABLES	7

/*
 * The contexts, as POR_EL1 values: constants usable from assembly
 * (POR_ELx_PERM_PREP() is not).  Field n is bits 4n+3:4n; POE_RWX is 7,
 * POE_RW 5, POE_R 1.
 */
#define POR_EL1_KPKEYS_MASK	0xf000000f	/* fields 0 and 7 */
#define POR_EL1_CTX_DEFAULT	0x10000007	/* 0: RWX, 7: R */
#define POR_EL1_CTX_PGTABLES	0x50000007	/* 0: RWX, 7: RW */
/* The whole register, written once per CPU: indexes 1-6 RWX. */
#define POR_EL1_INIT		(0x07777770 | POR_EL1_CTX_DEFAULT)

#ifndef __ASSEMBLER__

#include <linux/kpkeys_types.h>
#include <linux/types.h>
#include <asm/alternative-macros.h>
#include <asm/barrier.h>
#include <asm/cpucaps.h>
#include <asm/pgtable-types.h>
#include <asm/sysreg.h>

#define ARCH_KPKEYS_REG_MASK	((unsigned long)POR_EL1_KPKEYS_MASK)
#define ARCH_KPKEYS_STATE_MARK	0UL

static_assert(POR_EL1_CTX_DEFAULT ==
	      (POR_ELx_PERM_PREP(KPKEYS_PKEY_DEFAULT, POE_RWX) |
	       POR_ELx_PERM_PREP(KPKEYS_PKEY_PGTABLES, POE_R)));
static_assert(POR_EL1_CTX_PGTABLES ==
	      (POR_ELx_PERM_PREP(KPKEYS_PKEY_DEFAULT, POE_RWX) |
	       POR_ELx_PERM_PREP(KPKEYS_PKEY_PGTABLES, POE_RW)));
static_assert(POR_EL1_KPKEYS_MASK ==
	      (POR_ELx_PERM_PREP(KPKEYS_PKEY_DEFAULT, POE_MASK) |
	       POR_ELx_PERM_PREP(KPKEYS_PKEY_PGTABLES, POE_MASK)));

/*
 * Armed: the boot CPU has POE and a kpkeys user asked for it
 * (kpkeys_requested()).  A boot CPU feature: a CPU that comes up later
 * without POE is not allowed in, so the capability, patched in before any
 * secondary runs, holds for every CPU.  TCR2_EL1.POE is set on each CPU
 * by cpu_enable_kpkeys(); before that POR_EL1 already holds POR_EL1_INIT
 * (__cpu_setup), so a context entered on a CPU coming up is read and
 * restored correctly, just not enforced yet.
 */
static __always_inline bool arch_kpkeys_supported(void)
{
	return alternative_has_cap_unlikely(ARM64_HAS_S1POE_KPKEYS);
}

static __always_inline unsigned long __arch_kpkeys_ctx_reg(enum kpkeys_ctx ctx)
{
	return ctx == KPKEYS_CTX_PGTABLES ? POR_EL1_CTX_PGTABLES :
					    POR_EL1_CTX_DEFAULT;
}

static __always_inline unsigned long __arch_kpkeys_reg_read(void)
{
	return read_sysreg_s(SYS_POR_EL1);
}

/*
 * The ISB makes the new rights apply to the very next access, in both
 * directions: a switch to the page-table context must not fault on the
 * write it is for, and a switch back must not leave a window.  An
 * exception taken between the MSR and the ISB is itself a context
 * synchronisation event, and its entry reads the new value.
 */
static __always_inline void __arch_kpkeys_reg_write(unsigned long reg)
{
	write_sysreg_s(reg, SYS_POR_EL1);
	isb();
}

#include <asm-generic/kpkeys.h>

/* Trees the kpkeys walker checks beyond init_mm and processes (EFI). */
#ifdef CONFIG_KPKEYS_HARDENED_PGTABLES
pgd_t *arch_kpkeys_extra_pgd(unsigned int i, unsigned long *nr_pgds,
			     const char **what);
#define arch_kpkeys_extra_pgd arch_kpkeys_extra_pgd
#endif

#endif /* __ASSEMBLER__ */

#endif /* __ASM_KPKEYS_H */
