/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * kpkeys types embedded in task_struct (through <linux/mm_types_task.h>),
 * kept apart from <linux/kpkeys.h> so that low-level headers can use them.
 */
#ifndef _LINUX_KPKEYS_TYPES_H
#define _LINUX_KPKEYS_TYPES_H

#include <linux/types.h>

/**
 * struct kpkeys_saved - pkey register state saved by kpkeys_set_level()
 * @reg: the previous pkey register value, or %KPKEYS_PKEY_REG_INVAL.  u64
 *	holds each backend's register: POR_EL1 and AMR are 64 bits, PKRS is
 *	32 bits, zero-extended.  powerpc switches AMR alone: no level changes
 *	execute permissions, so IAMR is never part of the state.
 * @level: the previous level as tracked in software (%CONFIG_KPKEYS_CHECK).
 * @depth: the nesting depth this switch created (%CONFIG_KPKEYS_CHECK), so
 *	that a restore out of order is reported; 0 when nothing was switched.
 *
 * A structure, not a bare u64: the checker's state travels with the
 * register value without stealing bits from it, and a random integer cannot
 * be handed to kpkeys_restore_pkey_reg() by mistake.  Without
 * %CONFIG_KPKEYS_CHECK it is one u64, returned in a register.
 */
struct kpkeys_saved {
	u64 reg;
#ifdef CONFIG_KPKEYS_CHECK
	u8 level;
	u8 depth;
#endif
};

/* The kpkeys level as CONFIG_KPKEYS_CHECK tracks it in software. */
struct kpkeys_check_state {
	u8 level;
	u8 depth;
};

/* struct kpkeys_lazy_mmu.batching */
#define KPKEYS_BATCH_NONE	0	/* not in a batched lazy MMU section */
#define KPKEYS_BATCH_PENDING	1	/* in one, no page-table write yet */
#define KPKEYS_BATCH_ACTIVE	2	/* in one, at %KPKEYS_LVL_PGTABLES */

/**
 * struct kpkeys_lazy_mmu - batching state of a task's lazy MMU section
 * @saved: the state the section's first page-table write replaced, when
 *	it entered %KPKEYS_LVL_PGTABLES (%KPKEYS_BATCH_ACTIVE)
 * @batching: %KPKEYS_BATCH_*, for the section entered and not paused
 */
struct kpkeys_lazy_mmu {
#ifdef CONFIG_KPKEYS_HARDENED_PGTABLES
	struct kpkeys_saved saved;
	u8 batching;
#endif
};

/**
 * struct kpkeys_irqentry_state - what exception entry saves (irqentry_state_t)
 * @reg: the managed bits of the pkey register entry replaced by the
 *	default level's, or %KPKEYS_PKEY_REG_INVAL
 * @batching: the interrupted task's %KPKEYS_BATCH_* state, which entry
 *	cleared and exit puts back
 * @check: the interrupted context's level in the software checker
 */

struct kpkeys_irqentry_state {
	u64 reg;
	u8 batching;
	struct kpkeys_check_state check;
};

#endif /* _LINUX_KPKEYS_TYPES_H */
