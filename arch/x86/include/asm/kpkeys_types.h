/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef _ASM_X86_KPKEYS_TYPES_H
#define _ASM_X86_KPKEYS_TYPES_H

#include <linux/types.h>

/* See <asm/kpkeys.h>. */
struct arch_kpkeys_state {
	unsigned long reg;
};

#endif /* _ASM_X86_KPKEYS_TYPES_H */
