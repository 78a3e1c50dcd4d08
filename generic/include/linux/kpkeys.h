/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * kpkeys: kernel use of memory protection keys.
 *
 * Kernel data that only a few places may write (page tables, to start with)
 * is mapped with a dedicated protection key.  The pkey register (arm64
 * POR_EL1, x86 IA32_PKRS, powerpc AMR) makes that key read-only in the
 * default context; code that needs write access enters the context that
 * allows it for as short a time as possible:
 *
 *	guard(kpkeys_hardened_pgtables)();
 *	WRITE_ONCE(*ptep, pte);
 *
 * See Documentation/core-api/kpkeys.rst.
 */
#ifndef _LINUX_KPKEYS_H
#define _LINUX_KPKEYS_H

#include <linux/build_bug.h>
#include <linux/cleanup.h>
#include <linux/compiler.h>
#include <linux/jump_label.h>
#include <linux/kpkeys_types.h>
#include <linux/types.h>

/*
 * Every architecture's <asm/pgtable.h> may include this header, so nothing
 * inline here uses current, and per-CPU data only inside a backend whose
 * per-CPU header does not need <asm/pgtable.h> (x86's PKRS copy): on
 * powerpc both need the paca, whose header needs <asm/pgtable.h>.
 */

/*
 * The software checker (CONFIG_KPKEYS_CHECK), as the inline paths below
 * call it; the rest of its interface is in <linux/kpkeys_check.h>.
 */
#ifdef CONFIG_KPKEYS_CHECK
void kpkeys_check_enter(enum kpkeys_ctx ctx, struct kpkeys_state *state);
void kpkeys_check_leave(const struct kpkeys_state *state);
void kpkeys_check_ctx(enum kpkeys_ctx ctx);
void __kpkeys_check_pgtable_write(const void *table);
#else
static inline void kpkeys_check_enter(enum kpkeys_ctx ctx, struct kpkeys_state *state) {}
static inline void kpkeys_check_leave(const struct kpkeys_state *state) {}
static inline void kpkeys_check_ctx(enum kpkeys_ctx ctx) {}
#endif

/*
 * Statistics (%CONFIG_KPKEYS_STATS), per CPU, summed in
 * /sys/kernel/debug/kpkeys/stats.  They count only while switched on
 * (kpkeys_stats=, default %CONFIG_KPKEYS_STATS_DEFAULT_ON): switched off,
 * each counted event is a patched-out static branch.
 */
enum kpkeys_stat {
	KPKEYS_STAT_REG_WRITES,		/* register writes by the context API */
	KPKEYS_STAT_ENTRY_REG_WRITES,	/* ... by exception entry and exit */
	KPKEYS_STAT_SCHED_REG_WRITES,	/* ... by the scheduler */
	KPKEYS_STAT_PGTABLES_SWITCHES,	/* entries to the page-table context */
	KPKEYS_STAT_PGTABLES_SKIPPED,	/* guards that found the context in place */
	KPKEYS_STAT_LAZY_SECTIONS,	/* batched lazy MMU sections */
	KPKEYS_STAT_SET_MEMORY_PKEY,	/* set_memory_pkey() calls */
	KPKEYS_STAT_PTPS_KEYED,		/* pages given the page-table key */
	KPKEYS_STAT_PTPS_UNKEYED,	/* pages given back the default key */
	KPKEYS_STAT_POOL_ALLOCS,	/* page-table pages taken from the pool */
	KPKEYS_STAT_POOL_FREES,		/* page-table pages put back */
	KPKEYS_STAT_POOL_REFILLS,	/* blocks keyed to refill the pool */
	KPKEYS_STAT_POOL_EMPTY,		/* atomic allocations that found none */
	KPKEYS_NR_STATS
};

#ifdef CONFIG_KPKEYS_STATS
DECLARE_STATIC_KEY_MAYBE(CONFIG_KPKEYS_STATS_DEFAULT_ON, kpkeys_stats_key);
void __kpkeys_stat_add(enum kpkeys_stat stat, unsigned long nr);

/**
 * kpkeys_stats_enabled() - whether the statistics count
 *
 * Return: true when the kernel has %CONFIG_KPKEYS_STATS and counts: from
 * boot with %CONFIG_KPKEYS_STATS_DEFAULT_ON unless booted with
 * kpkeys_stats=off, else only when booted with kpkeys_stats=on.
 */
static __always_inline bool kpkeys_stats_enabled(void)
{
	return static_branch_maybe(CONFIG_KPKEYS_STATS_DEFAULT_ON,
				   &kpkeys_stats_key);
}

static __always_inline void kpkeys_stat_add(enum kpkeys_stat stat,
					    unsigned long nr)
{
	if (kpkeys_stats_enabled())
		__kpkeys_stat_add(stat, nr);
}

static __always_inline void kpkeys_stat_inc(enum kpkeys_stat stat)
{
	kpkeys_stat_add(stat, 1);
}
#else
static __always_inline bool kpkeys_stats_enabled(void)
{
	return false;
}

static __always_inline void kpkeys_stat_add(enum kpkeys_stat stat,
					    unsigned long nr) {}
static __always_inline void kpkeys_stat_inc(enum kpkeys_stat stat) {}
#endif

#ifdef CONFIG_ARCH_HAS_KPKEYS
#include <asm/kpkeys.h>
#else
/* No backend: kpkeys is the software checker (CONFIG_KPKEYS_CHECK) or off. */
#define KPKEYS_PKEY_DEFAULT		0
#define KPKEYS_PKEY_PGTABLES		1
#define ARCH_KPKEYS_STATE_UNCHANGED	((struct arch_kpkeys_state){ })

static __always_inline bool arch_kpkeys_supported(void)
{
	return false;
}

static __always_inline struct arch_kpkeys_state arch_kpkeys_ctx_state(enum kpkeys_ctx ctx)
{
	return ARCH_KPKEYS_STATE_UNCHANGED;
}

static __always_inline struct arch_kpkeys_state arch_kpkeys_read(void)
{
	return ARCH_KPKEYS_STATE_UNCHANGED;
}

static __always_inline struct arch_kpkeys_state arch_kpkeys_switch(struct arch_kpkeys_state to)
{
	return ARCH_KPKEYS_STATE_UNCHANGED;
}

static __always_inline bool arch_kpkeys_state_written(struct arch_kpkeys_state s)
{
	return false;
}

static __always_inline bool arch_kpkeys_state_equal(struct arch_kpkeys_state a,
						    struct arch_kpkeys_state b)
{
	return true;
}
#endif /* CONFIG_ARCH_HAS_KPKEYS */

/* An arch_kpkeys_switch_nmi() of its own writes the register, whatever
 * it returns.
 */
#ifndef arch_kpkeys_switch_nmi
#define arch_kpkeys_switch_nmi arch_kpkeys_switch
#define ARCH_KPKEYS_NMI_WRITES	false
#else
#define ARCH_KPKEYS_NMI_WRITES	true
#endif

/* What kpkeys_enter_context() returns when it wrote nothing. */
#define KPKEYS_STATE_UNCHANGED \
	((struct kpkeys_state){ .arch_state = ARCH_KPKEYS_STATE_UNCHANGED })

/**
 * kpkeys_supported() - whether kpkeys hardware is in use
 *
 * Return: true when contexts are enforced by hardware on this machine;
 * constant once the boot CPU is set up.  Without it kpkeys_enter_context()
 * writes nothing.
 */
static __always_inline bool kpkeys_supported(void)
{
	return arch_kpkeys_supported();
}

/* Does some context put @s in place?  States are kept in writable memory. */
static __always_inline bool kpkeys_arch_state_valid(struct arch_kpkeys_state s)
{
	unsigned int ctx;

	for (ctx = 0; ctx < KPKEYS_NR_CTX; ctx++)
		if (arch_kpkeys_state_equal(s, arch_kpkeys_ctx_state(ctx)))
			return true;
	return false;
}

#ifdef CONFIG_KPKEYS

void kpkeys_leave_invalid(struct arch_kpkeys_state *arch_state);

/**
 * kpkeys_enter_context() - give this CPU the access rights of a context
 * @ctx: %KPKEYS_CTX_*, a compile-time constant
 *
 * Always inlined, and @ctx must be a constant: no callable function that
 * enters an arbitrary context exists in the kernel image.  Nothing is
 * written if the CPU already has the context's rights, or if kpkeys is not
 * supported.
 *
 * Return: what to give kpkeys_leave_context().
 */
static __always_inline struct kpkeys_state kpkeys_enter_context(enum kpkeys_ctx ctx)
{
	struct kpkeys_state state = KPKEYS_STATE_UNCHANGED;

	BUILD_BUG_ON_MSG(!__builtin_constant_p(ctx),
			 "a kpkeys context must be a compile-time constant");
	BUILD_BUG_ON_MSG((unsigned int)ctx >= KPKEYS_NR_CTX, "no such kpkeys context");

	kpkeys_check_enter(ctx, &state);
	if (kpkeys_supported()) {
		state.arch_state = arch_kpkeys_switch(arch_kpkeys_ctx_state(ctx));
		if (arch_kpkeys_state_written(state.arch_state))
			kpkeys_stat_inc(KPKEYS_STAT_REG_WRITES);
	}
	return state;
}

/**
 * kpkeys_leave_context() - undo kpkeys_enter_context()
 * @state: what it returned
 *
 * Writes nothing if kpkeys_enter_context() wrote nothing.  A state that no
 * context produces (a corrupted stack, say) is not loaded: the default
 * context is, with a warning.
 */
static __always_inline void kpkeys_leave_context(struct kpkeys_state *state)
{
	if (arch_kpkeys_state_written(state->arch_state)) {
		if (unlikely(!kpkeys_arch_state_valid(state->arch_state)))
			kpkeys_leave_invalid(&state->arch_state);
		if (arch_kpkeys_state_written(arch_kpkeys_switch(state->arch_state)))
			kpkeys_stat_inc(KPKEYS_STAT_REG_WRITES);
	}
	kpkeys_check_leave(state);
}

#else /* !CONFIG_KPKEYS */

static __always_inline struct kpkeys_state kpkeys_enter_context(enum kpkeys_ctx ctx)
{
	return KPKEYS_STATE_UNCHANGED;
}

static __always_inline void kpkeys_leave_context(struct kpkeys_state *state) {}

#endif /* CONFIG_KPKEYS */

/**
 * KPKEYS_GUARD() - define a scoped guard that runs in a kpkeys context
 * @_name: guard name, used as guard(_name)()
 * @_ctx: %KPKEYS_CTX_* constant
 *
 * The context is entered when the guard is declared and left when it goes
 * out of scope.
 */
#define KPKEYS_GUARD(_name, _ctx)					\
	DEFINE_LOCK_GUARD_0(_name,					\
			    _T->state = kpkeys_enter_context(_ctx),	\
			    kpkeys_leave_context(&_T->state),		\
			    struct kpkeys_state state)

/**
 * KPKEYS_GUARD_COND() - like KPKEYS_GUARD(), entered only if @_cond holds
 * @_name: guard name
 * @_ctx: %KPKEYS_CTX_* constant
 * @_cond: evaluated once, when the guard is declared
 */
#define KPKEYS_GUARD_COND(_name, _ctx, _cond)				\
	DEFINE_LOCK_GUARD_0(_name,					\
			    _T->state = (_cond) ? kpkeys_enter_context(_ctx) :	\
						  KPKEYS_STATE_UNCHANGED,	\
			    kpkeys_leave_context(&_T->state),		\
			    struct kpkeys_state state)

/**
 * KPKEYS_GUARD_NOOP() - a guard that enters nothing
 * @_name: guard name
 *
 * The same interface as KPKEYS_GUARD(), for a feature's guard when the
 * feature is configured out: it generates no code.
 */
#define KPKEYS_GUARD_NOOP(_name)	DEFINE_LOCK_GUARD_0(_name, (void)_T, (void)_T)

/*
 * Hardened page tables (CONFIG_KPKEYS_HARDENED_PGTABLES): page-table pages
 * carry KPKEYS_PKEY_PGTABLES in the linear map, and page-table writers run
 * in KPKEYS_CTX_PGTABLES:
 *
 *	guard(kpkeys_hardened_pgtables)();
 *	WRITE_ONCE(*ptep, pte);
 *
 * Inside a lazy MMU section the context is entered once, by the first
 * write's guard, and left by lazy_mmu_mode_disable(); the guards of
 * the writes after the first only check it ("batching").  A section that
 * writes no page table switches nothing.  Interrupts are never batched.
 */
#ifdef CONFIG_KPKEYS_HARDENED_PGTABLES

DECLARE_STATIC_KEY_FALSE(kpkeys_hardened_pgtables_key);
DECLARE_STATIC_KEY_FALSE(kpkeys_pgtables_batching_key);
/**
 * kpkeys_hardened_pgtables_enabled() - page-table pages are being keyed
 *
 * Return: true from early boot on when hardened page tables are active
 * (with pkey hardware, or in software with %CONFIG_KPKEYS_CHECK); it never
 * turns false.
 */
static __always_inline bool kpkeys_hardened_pgtables_enabled(void)
{
	return static_branch_unlikely(&kpkeys_hardened_pgtables_key);
}

bool kpkeys_requested(void);

struct page;
struct page *kpkeys_pgtable_alloc(gfp_t gfp, unsigned int order);
bool kpkeys_pgtable_free(struct page *page);
bool kpkeys_pgtable_free_reserved(struct page *page);
bool kpkeys_pgtable_keyed(const void *table);
void kpkeys_pgtables_unkeyed_begin(void);
void kpkeys_pgtables_unkeyed_end(void);
void kpkeys_pgtables_key_unkeyed(void);

/*
 * Does this CPU have the page-table context's rights already?  Inside a
 * guard, and inside a batched lazy MMU section after its first write: the
 * register (x86: its per-CPU copy) says it, with no load through current.  Exception entry gives
 * a handler the default context, and the scheduler keeps the register
 * with the task, so what the register says is this code's own.  Without
 * kpkeys hardware it says nothing, and the out-of-line switch reads the
 * task's batching state instead.
 */
static __always_inline bool kpkeys_pgtables_in_place(void)
{
	return kpkeys_supported() &&
	       arch_kpkeys_state_equal(arch_kpkeys_read(),
				       arch_kpkeys_ctx_state(KPKEYS_CTX_PGTABLES));
}

/*
 * What the page-table guard leaves to: the state its entry replaced, which
 * is never KPKEYS_CTX_PGTABLES itself (a guard taken in that context writes
 * nothing and leaves nothing).  A state that says it is, forged or
 * corrupted, loads the default context instead, so that no leave can
 * enter the page-table context.
 */
static __always_inline void kpkeys_hardened_pgtables_restore(struct kpkeys_state *state)
{
	if (unlikely(arch_kpkeys_state_written(state->arch_state) &&
		     arch_kpkeys_state_equal(state->arch_state,
					     arch_kpkeys_ctx_state(KPKEYS_CTX_PGTABLES))))
		kpkeys_leave_invalid(&state->arch_state);
	kpkeys_leave_context(state);
}

/*
 * The guard's register switch.  In the kernel image it is out of line
 * (mm/kpkeys_hardened_pgtables.c): inlined into every writer, its code made
 * the core mm's batch helpers and x86's writers too large for the inliner,
 * and their callers paid for a call per page-table entry even when the
 * feature is off.  The two functions are not exported, and nothing takes
 * their address, so with IBT objtool seals them (an exported function
 * keeps its ENDBR): no indirect call can reach them.  Modules inline the
 * switch instead.
 */
#ifdef MODULE
static __always_inline struct kpkeys_state __kpkeys_hardened_pgtables_enter(void)
{
	kpkeys_stat_inc(KPKEYS_STAT_PGTABLES_SWITCHES);
	return kpkeys_enter_context(KPKEYS_CTX_PGTABLES);
}

static __always_inline void __kpkeys_hardened_pgtables_leave(struct kpkeys_state *state)
{
	kpkeys_hardened_pgtables_restore(state);
}
#else
struct kpkeys_state __kpkeys_hardened_pgtables_enter(void);
void __kpkeys_hardened_pgtables_leave(struct kpkeys_state *state);
#endif

/*
 * The guard's entry and exit.  Only the two tests are inlined into every
 * page-table writer: the static branch (a NOP when hardened page tables
 * are off) and, when on, whether the context is in place already (a
 * nested guard, or a batched section after its first write).
 */
static __always_inline struct kpkeys_state kpkeys_hardened_pgtables_enter(void)
{
	if (!kpkeys_hardened_pgtables_enabled())
		return KPKEYS_STATE_UNCHANGED;
	if (kpkeys_pgtables_in_place()) {
		kpkeys_check_ctx(KPKEYS_CTX_PGTABLES);
		kpkeys_stat_inc(KPKEYS_STAT_PGTABLES_SKIPPED);
		return KPKEYS_STATE_UNCHANGED;
	}
	return __kpkeys_hardened_pgtables_enter();
}

static __always_inline void kpkeys_hardened_pgtables_leave(struct kpkeys_state *state)
{
	/* The checker sees every leave; it pairs them with the entries. */
	if (arch_kpkeys_state_written(state->arch_state) || IS_ENABLED(CONFIG_KPKEYS_CHECK))
		__kpkeys_hardened_pgtables_leave(state);
}

/**
 * kpkeys_check_pgtable_write() - a page-table store is about to be made
 * @table: the entry that is written
 *
 * Every page-table writer of an architecture calls this at its store,
 * after its guard.  With %CONFIG_KPKEYS_CHECK, a store to a keyed table
 * in any context but %KPKEYS_CTX_PGTABLES is reported, with or without pkey
 * hardware: a guard skipped (a batching bug) or taken out is found in
 * software; a raw store that never calls this is not.  Empty otherwise.
 */
static __always_inline void kpkeys_check_pgtable_write(const void *table)
{
#ifdef CONFIG_KPKEYS_CHECK
	if (kpkeys_hardened_pgtables_enabled())
		__kpkeys_check_pgtable_write(table);
#endif
}

/**
 * kpkeys_lazy_mmu_enter() - start batching page-table writes
 * @lazy: the task's state, in its &struct lazy_mmu_state
 *
 * Called by lazy_mmu_mode_enable() when entering the outermost section and
 * by lazy_mmu_mode_resume(); only for the current task, never in interrupt
 * context.  No register is written here: the section's first page-table
 * write enters the context (__kpkeys_hardened_pgtables_enter()), so that a
 * section with one write writes the register as often as the write alone
 * would (one entry and one leave), and a section with none never.
 */
static __always_inline void kpkeys_lazy_mmu_enter(struct kpkeys_lazy_mmu *lazy)
{
	if (!static_branch_unlikely(&kpkeys_pgtables_batching_key))
		return;
	kpkeys_stat_inc(KPKEYS_STAT_LAZY_SECTIONS);
	lazy->batching = KPKEYS_BATCH_PENDING;
}

/**
 * kpkeys_lazy_mmu_leave() - stop batching, leave the context the
 *	section's first page-table write entered
 * @lazy: the task's state, in its &struct lazy_mmu_state
 *
 * A section entered before hardened page tables were enabled, or that
 * wrote no page table, has nothing to restore.
 */
static __always_inline void kpkeys_lazy_mmu_leave(struct kpkeys_lazy_mmu *lazy)
{
	u8 batching = lazy->batching;

	if (batching == KPKEYS_BATCH_NONE)
		return;
	lazy->batching = KPKEYS_BATCH_NONE;
	if (batching == KPKEYS_BATCH_ACTIVE)
		kpkeys_hardened_pgtables_leave(&lazy->state);
}

#else /* !CONFIG_KPKEYS_HARDENED_PGTABLES */

static __always_inline bool kpkeys_hardened_pgtables_enabled(void)
{
	return false;
}

static inline bool kpkeys_requested(void)
{
	return false;
}

static inline struct page *kpkeys_pgtable_alloc(gfp_t gfp, unsigned int order)
{
	return NULL;
}

static inline bool kpkeys_pgtable_free(struct page *page)
{
	return false;
}

static inline bool kpkeys_pgtable_free_reserved(struct page *page)
{
	return true;
}

static inline void kpkeys_pgtables_unkeyed_begin(void) {}
static inline void kpkeys_pgtables_unkeyed_end(void) {}
static inline void kpkeys_pgtables_key_unkeyed(void) {}

static __always_inline struct kpkeys_state kpkeys_hardened_pgtables_enter(void)
{
	return KPKEYS_STATE_UNCHANGED;
}

static __always_inline void kpkeys_hardened_pgtables_leave(struct kpkeys_state *state) {}

static __always_inline void kpkeys_lazy_mmu_enter(struct kpkeys_lazy_mmu *lazy) {}
static __always_inline void kpkeys_lazy_mmu_leave(struct kpkeys_lazy_mmu *lazy) {}
static __always_inline void kpkeys_check_pgtable_write(const void *table) {}

#endif /* CONFIG_KPKEYS_HARDENED_PGTABLES */

/*
 * guard(kpkeys_hardened_pgtables)(): write access to page-table pages for
 * the rest of the scope; each store is checked by its writer
 * (kpkeys_check_pgtable_write()).  guard(kpkeys_pgtable_write)(entry):
 * the same for the stores to one table entry, checked by the guard.
 * Without CONFIG_KPKEYS_HARDENED_PGTABLES both are empty and generate no
 * code.
 */
#ifdef CONFIG_KPKEYS_HARDENED_PGTABLES
DEFINE_LOCK_GUARD_0(kpkeys_hardened_pgtables,
		    _T->state = kpkeys_hardened_pgtables_enter(),
		    kpkeys_hardened_pgtables_leave(&_T->state),
		    struct kpkeys_state state)
DEFINE_LOCK_GUARD_1(kpkeys_pgtable_write, const void,
		    _T->state = kpkeys_hardened_pgtables_enter();
		    kpkeys_check_pgtable_write(_T->lock),
		    kpkeys_hardened_pgtables_leave(&_T->state),
		    struct kpkeys_state state)
#else
KPKEYS_GUARD_NOOP(kpkeys_hardened_pgtables)
DEFINE_LOCK_GUARD_1(kpkeys_pgtable_write, const void, (void)_T, (void)_T)
#endif

#endif /* _LINUX_KPKEYS_H */
