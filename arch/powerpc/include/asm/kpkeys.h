/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * kpkeys on powerpc book3s64: hash MMU storage keys, through the AMR.
 *
 * Under the hash MMU every HPTE carries a 5-bit storage key, and the AMR
 * holds a pair of bits per key (key k at bits 63-2k:62-2k, key 0 in the
 * most significant pair): the first bit of the pair disables stores, the
 * second loads.  The AMR applies to the kernel as well as to user space,
 * which is how KUAP and KUEP work on hash: every kernel HPTE carries key 3
 * (HASH_DEFAULT_KERNEL_KEY), and the kernel runs with AMR_KUAP_BLOCKED,
 * which denies loads and stores through every key but 3.
 *
 *	key	what carries it			AMR: default	pgtables
 *	0	user pages without a pkey	blocked (KUAP)
 *	1, 2	reserved, execute-only		blocked (KUAP)
 *	3	every kernel page		RW		RW
 *	4	page-table pages		R		RW
 *		(KPKEYS_PKEY_PGTABLES)
 *	5-31	user pkeys			blocked (KUAP)
 *
 * The AMR is KUAP's register: it changes on every user access window
 * (allow_user_access()), and exception entry saves it and installs
 * AMR_KUAP_BLOCKED.  kpkeys only ever changes key 4's pair
 * (ARCH_KPKEYS_REG_MASK), with a read-modify-write, and the default
 * context is folded into the KUAP values: AMR_KUAP_BLOCKED gives key 4
 * read-only access.  So entry resets the context for free, interrupt exit
 * restores the interrupted one (regs->amr), and a context entered inside a
 * window keeps the window.  Each edge of a user access window keeps key
 * 4's pair as the AMR holds it (kuap_amr_keep_kpkeys()), never the thread
 * AMR's: a window keeps the context it was opened in, and opens nothing
 * for writing.
 *
 * Key 4 is the lowest key that is free: 0 and 1 are reserved, 2 is the
 * execute-only key and 3 the kernel's.  With 4K pages the Linux PTE holds
 * 3 key bits, so only keys 0-7 exist.  Key 4 is taken away from user
 * space (reserved_allocation_mask, UAMOR, default_amr) whenever this is
 * built in, so no user page carries it and KUAP need not block it.
 *
 * Only under the hash MMU with KUAP on: radix has no keys for kernel
 * pages, and without KUAP nothing resets the AMR on entry.
 *
 * struct arch_kpkeys_state holds key 4's pair and the AMR's least
 * significant bit (ARCH_KPKEYS_STATE_MARK: bit 63 in the ISA's numbering,
 * key 31's load bit), which is never written
 * from a state: the page-table context's pair is 00, so without the mark
 * its state would be zero, which says that nothing was written.  Zeroed
 * memory therefore restores nothing, and never the page-table context.
 *
 * Not under a hypervisor yet: the key of a bolted HPTE can only be
 * changed by the bare-metal HPTE code.  Key 4 is still kept from user
 * space there (AMR_KUAP_BLOCK_READ does not block it), so an LPAR's
 * programs get one pkey fewer (3 instead of 4 with 4K pages).
 */
#ifndef _ASM_POWERPC_KPKEYS_H
#define _ASM_POWERPC_KPKEYS_H

#include <asm/book3s/64/amr.h>

#define KPKEYS_PKEY_DEFAULT	3
#define KPKEYS_PKEY_PGTABLES	4

#ifndef __ASSEMBLER__

#include <linux/kpkeys_types.h>
#include <linux/types.h>
#include <asm/reg.h>
#include <asm/synch.h>

#define ARCH_KPKEYS_REG_MASK	AMR_KPKEYS_MASK
#define ARCH_KPKEYS_STATE_MARK	UL(0x1)

static __always_inline bool arch_kpkeys_supported(void)
{
	return READ_ONCE(kpkeys_ppc_enabled);
}

static __always_inline unsigned long __arch_kpkeys_ctx_reg(enum kpkeys_ctx ctx)
{
	return ctx == KPKEYS_CTX_PGTABLES ? AMR_KPKEYS_CTX_PGTABLES :
					    AMR_KPKEYS_CTX_DEFAULT;
}

static __always_inline unsigned long __arch_kpkeys_reg_read(void)
{
	return mfspr(SPRN_AMR);
}

/*
 * The ISA asks for a context synchronising instruction before and after
 * an AMR write (as set_kuap() does): the store the switch is for must see
 * the new rights, and so must the first store after a switch back.
 */
static __always_inline void __arch_kpkeys_reg_write(unsigned long reg)
{
	isync();
	mtspr(SPRN_AMR, reg);
	isync();
}

#include <asm-generic/kpkeys.h>

#endif /* __ASSEMBLER__ */

#endif /* _ASM_POWERPC_KPKEYS_H */
