/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The kernel's AMR values under KUAP and KUEP (<asm/book3s/64/kup.h>) and
 * kpkeys (<asm/kpkeys.h>), and whether kpkeys is in use: for C and
 * assembly, so that both can use them without including each other.
 */
#ifndef _ASM_POWERPC_BOOK3S_64_AMR_H
#define _ASM_POWERPC_BOOK3S_64_AMR_H

#include <linux/const.h>

/*
 * kpkeys (CONFIG_PPC_KPKEYS, <asm/kpkeys.h>): key 4 carries page-table
 * pages.  Its AMR pair is kpkeys', not KUAP's: no user page carries key 4,
 * so KUAP need not block it, and the KUAP values hold kpkeys' default
 * context there (loads allowed, stores denied): entry, which installs
 * AMR_KUAP_BLOCKED, resets the context, and no user access window opens
 * page tables for writing.
 */
#define AMR_KPKEYS_MASK		UL(0x00c0000000000000)	/* key 4 */
#define AMR_KPKEYS_CTX_DEFAULT	UL(0x0080000000000000)	/* key 4: R */
#define AMR_KPKEYS_CTX_PGTABLES	UL(0)			/* key 4: RW */

#ifdef CONFIG_PPC_KPKEYS
#define AMR_KUAP_BLOCK_READ	UL(0x5415555555555555)
#else
#define AMR_KUAP_BLOCK_READ	UL(0x5455555555555555)
#endif
#define AMR_KUAP_BLOCK_WRITE	UL(0xa8aaaaaaaaaaaaaa)
#define AMR_KUEP_BLOCKED	UL(0x5455555555555555)
#define AMR_KUAP_BLOCKED	(AMR_KUAP_BLOCK_READ | AMR_KUAP_BLOCK_WRITE)

#if defined(CONFIG_PPC_KPKEYS) && !defined(__ASSEMBLER__)
#include <linux/types.h>

/* kpkeys is in use: set once, on the boot CPU, by kpkeys_ppc_setup(). */
extern bool kpkeys_ppc_enabled;
#endif

#endif /* _ASM_POWERPC_BOOK3S_64_AMR_H */
