/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * kpkeys types embedded in task_struct (through <linux/mm_types_task.h>),
 * irqentry_state_t and the lazy MMU state, kept apart from <linux/kpkeys.h>
 * so that low-level headers can use them.
 */
#ifndef _LINUX_KPKEYS_TYPES_H
#define _LINUX_KPKEYS_TYPES_H

#include <linux/types.h>

#ifdef CONFIG_ARCH_HAS_KPKEYS
#include <asm/kpkeys_types.h>
#else
struct arch_kpkeys_state { };
#endif

/**
 * enum kpkeys_ctx - the kpkeys contexts
 * @KPKEYS_CTX_DEFAULT: what the kernel runs in: read-write access to
 *	%KPKEYS_PKEY_DEFAULT, read-only access to the keys of kpkeys users
 * @KPKEYS_CTX_PGTABLES: the default's rights, plus write access to
 *	page-table pages (%KPKEYS_PKEY_PGTABLES)
 * @KPKEYS_NR_CTX: the number of contexts
 *
 * A context is a set of access rights to the keys kpkeys manages, not a
 * rank: a feature's context adds write access to that feature's key and
 * nothing else, and a second feature's context would be neither above nor
 * below the first.  Contexts are only ever compared for equality.
 */
enum kpkeys_ctx {
	KPKEYS_CTX_DEFAULT,
	KPKEYS_CTX_PGTABLES,
	KPKEYS_NR_CTX
};

/* The context as CONFIG_KPKEYS_CHECK tracks it in software. */
struct kpkeys_check_state {
	u8 ctx;		/* enum kpkeys_ctx */
	u8 depth;	/* nesting depth; 0: nothing entered */
};

/**
 * struct kpkeys_state - what kpkeys_enter_context() replaced
 * @arch_state: the backend's state, opaque to generic code; the backend
 *	decides how it says that nothing was written
 *	(arch_kpkeys_state_written()), and zeroed memory always says so
 * @check: the checker's previous context and the depth this entry made
 *	(%CONFIG_KPKEYS_CHECK)
 *
 * Without %CONFIG_KPKEYS_CHECK it is one register wide and returned in a
 * register.
 */
struct kpkeys_state {
	struct arch_kpkeys_state arch_state;
#ifdef CONFIG_KPKEYS_CHECK
	struct kpkeys_check_state check;
#endif
};

/* struct kpkeys_lazy_mmu.batching */
#define KPKEYS_BATCH_NONE	0	/* not in a batched lazy MMU section */
#define KPKEYS_BATCH_PENDING	1	/* in one, no page-table write yet */
#define KPKEYS_BATCH_ACTIVE	2	/* in one, in %KPKEYS_CTX_PGTABLES */

/**
 * struct kpkeys_lazy_mmu - batching state of a task's lazy MMU section
 * @state: what the section's first page-table write replaced when it
 *	entered %KPKEYS_CTX_PGTABLES (%KPKEYS_BATCH_ACTIVE)
 * @batching: %KPKEYS_BATCH_*, for the section entered and not paused
 */
struct kpkeys_lazy_mmu {
#ifdef CONFIG_KPKEYS_HARDENED_PGTABLES
	struct kpkeys_state state;
	u8 batching;
#endif
};

/**
 * struct kpkeys_irqentry_state - what exception entry saves (irqentry_state_t)
 * @arch_state: what entry replaced with the default context, or nothing
 *	written
 * @batching: the interrupted task's %KPKEYS_BATCH_* state, which entry
 *	cleared and exit puts back
 * @check: the interrupted code's context in the software checker
 */
struct kpkeys_irqentry_state {
	struct arch_kpkeys_state arch_state;
	u8 batching;
	struct kpkeys_check_state check;
};

#endif /* _LINUX_KPKEYS_TYPES_H */
