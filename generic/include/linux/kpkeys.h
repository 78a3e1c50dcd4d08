/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * kpkeys: kernel use of memory protection keys.
 *
 * Kernel data that only a few places may write (page tables, to start with)
 * is mapped with a dedicated protection key.  The pkey register (arm64
 * POR_EL1, x86 IA32_PKRS, powerpc AMR) makes that key read-only at the
 * default level; code that needs write access switches to a more
 * privileged level for as short a time as possible:
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
#include <linux/percpu.h>
#include <linux/preempt.h>
#include <linux/sched.h>
#include <linux/types.h>

/*
 * Levels.  A level is a set of access rights to the keys kpkeys manages,
 * not a rank: every level gives read-write access to the default key, and
 * a feature's level adds write access to that feature's key and nothing
 * else.  A second feature's level is neither above nor below the first.
 * An architecture maps each level to the bits of the keys it manages in
 * one place (arch_kpkeys_level_pkey_reg()); the other bits of the pkey
 * register are not kpkeys' and are never changed.
 */
#define KPKEYS_LVL_DEFAULT	0
#define KPKEYS_LVL_PGTABLES	1

#define KPKEYS_LVL_MIN		KPKEYS_LVL_DEFAULT
#define KPKEYS_LVL_MAX		KPKEYS_LVL_PGTABLES
#define KPKEYS_NR_LEVELS	(KPKEYS_LVL_MAX + 1)

/*
 * "Nothing was written": returned by kpkeys_set_level() when the managed
 * bits already held the requested value (or there is no pkey hardware),
 * and ignored by kpkeys_restore_pkey_reg().  A saved value is only ever
 * the managed bits of the register (KPKEYS_PKEY_REG_MASK, never all ones),
 * so it has a zero bit wherever the mask has a zero and cannot be all ones:
 * the same argument on every architecture, checked at build time.
 */
#define KPKEYS_PKEY_REG_INVAL	U64_MAX

/*
 * The software checker (CONFIG_KPKEYS_CHECK), as the inline paths below
 * call it; the rest of its interface is in <linux/kpkeys_check.h>.
 */
#ifdef CONFIG_KPKEYS_CHECK
void kpkeys_check_switch(int level, struct kpkeys_saved *saved);
void kpkeys_check_restore(const struct kpkeys_saved *saved);
void kpkeys_check_level(int level);
void __kpkeys_check_pgtable_write(const void *table);
#else
static inline void kpkeys_check_switch(int level, struct kpkeys_saved *saved) {}
static inline void kpkeys_check_restore(const struct kpkeys_saved *saved) {}
static inline void kpkeys_check_level(int level) {}
#endif

/*
 * Statistics (%CONFIG_KPKEYS_STATS), per CPU, summed in
 * /sys/kernel/debug/kpkeys/stats.  They count only while switched on
 * (kpkeys_stats=, default %CONFIG_KPKEYS_STATS_DEFAULT_ON): switched off,
 * each counted event is a patched-out static branch.
 */
enum kpkeys_stat {
	KPKEYS_STAT_REG_WRITES,		/* register writes by the level API */
	KPKEYS_STAT_ENTRY_REG_WRITES,	/* ... by exception entry and exit */
	KPKEYS_STAT_SCHED_REG_WRITES,	/* ... by context switches */
	KPKEYS_STAT_PGTABLES_SWITCHES,	/* entries to the page-table level */
	KPKEYS_STAT_PGTABLES_SKIPPED,	/* guards skipped while batching */
	KPKEYS_STAT_LAZY_SECTIONS,	/* batched lazy MMU sections */
	KPKEYS_STAT_SET_MEMORY_PKEY,	/* set_memory_pkey() calls */
	KPKEYS_STAT_PKEY_SPLITS,	/* ... large linear-map pages split */
	KPKEYS_STAT_PKEY_FLUSHES,	/* ... TLB flushes */
	KPKEYS_STAT_PTPS_KEYED,		/* pages given the page-table key */
	KPKEYS_STAT_PTPS_UNKEYED,	/* pages given back the default key */
	KPKEYS_STAT_POOL_ALLOCS,	/* page-table pages taken from the pool */
	KPKEYS_STAT_POOL_FREES,		/* page-table pages put back */
	KPKEYS_STAT_POOL_REFILLS,	/* blocks keyed to refill the pool */
	KPKEYS_STAT_POOL_EMPTY,		/* atomic allocations that found none */
	KPKEYS_NR_STATS
};

#ifdef CONFIG_KPKEYS_STATS
DECLARE_PER_CPU(unsigned long, kpkeys_stats[KPKEYS_NR_STATS]);
DECLARE_STATIC_KEY_MAYBE(CONFIG_KPKEYS_STATS_DEFAULT_ON, kpkeys_stats_key);

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
		this_cpu_add(kpkeys_stats[stat], nr);
}

static __always_inline void kpkeys_stat_inc(enum kpkeys_stat stat)
{
	if (kpkeys_stats_enabled())
		this_cpu_inc(kpkeys_stats[stat]);
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
#endif
#include <asm-generic/kpkeys.h>

/* A saved state that restores nothing: no register write, no level change. */
static __always_inline struct kpkeys_saved kpkeys_saved_unchanged(void)
{
	return (struct kpkeys_saved){ .reg = KPKEYS_PKEY_REG_INVAL };
}

#ifdef CONFIG_KPKEYS

u64 kpkeys_restore_invalid(u64 reg);

/**
 * kpkeys_set_level() - switch the pkey register to a kpkeys level
 * @level: %KPKEYS_LVL_*, a compile-time constant
 *
 * Always inlined, and @level must be a constant: no callable function that
 * sets an arbitrary level exists in the kernel image.
 *
 * Return: the state to hand to kpkeys_restore_pkey_reg(); its @reg is
 * %KPKEYS_PKEY_REG_INVAL when nothing was written.
 */
static __always_inline struct kpkeys_saved kpkeys_set_level(int level)
{
	struct kpkeys_saved saved = kpkeys_saved_unchanged();

	BUILD_BUG_ON_MSG(!__builtin_constant_p(level),
			 "a kpkeys level must be a compile-time constant");
	BUILD_BUG_ON_MSG(level < KPKEYS_LVL_MIN || level > KPKEYS_LVL_MAX,
			 "kpkeys level out of range");

	kpkeys_check_switch(level, &saved);
	if (arch_kpkeys_enabled()) {
		saved.reg = kpkeys_switch_managed(arch_kpkeys_level_pkey_reg(level));
		if (saved.reg != KPKEYS_PKEY_REG_INVAL)
			kpkeys_stat_inc(KPKEYS_STAT_REG_WRITES);
	}
	return saved;
}

/**
 * kpkeys_restore_pkey_reg() - undo a kpkeys_set_level()
 * @saved: what the matching kpkeys_set_level() returned
 *
 * A saved value that no level produces (a corrupted stack, say) is not
 * written: the default level is restored instead, with a warning.
 */
static __always_inline void kpkeys_restore_pkey_reg(struct kpkeys_saved saved)
{
	if (saved.reg != KPKEYS_PKEY_REG_INVAL) {
		if (unlikely(!kpkeys_managed_valid(saved.reg)))
			saved.reg = kpkeys_restore_invalid(saved.reg);
		if (kpkeys_switch_managed(saved.reg) != KPKEYS_PKEY_REG_INVAL)
			kpkeys_stat_inc(KPKEYS_STAT_REG_WRITES);
	}
	kpkeys_check_restore(&saved);
}

#else /* !CONFIG_KPKEYS */

static __always_inline struct kpkeys_saved kpkeys_set_level(int level)
{
	return kpkeys_saved_unchanged();
}

static __always_inline void kpkeys_restore_pkey_reg(struct kpkeys_saved saved) {}

#endif /* CONFIG_KPKEYS */

/**
 * KPKEYS_GUARD() - define a scoped guard that runs at a kpkeys level
 * @_name: guard name, used as guard(_name)()
 * @_level: %KPKEYS_LVL_* constant
 *
 * The level is entered when the guard is declared and the previous state
 * restored when it goes out of scope.
 */
#define KPKEYS_GUARD(_name, _level)					\
	DEFINE_LOCK_GUARD_0(_name,					\
			    _T->saved = kpkeys_set_level(_level),	\
			    kpkeys_restore_pkey_reg(_T->saved),	\
			    struct kpkeys_saved saved)

/**
 * KPKEYS_GUARD_COND() - like KPKEYS_GUARD(), entered only if @_cond holds
 * @_name: guard name
 * @_level: %KPKEYS_LVL_* constant
 * @_cond: evaluated once, when the guard is declared
 */
#define KPKEYS_GUARD_COND(_name, _level, _cond)				\
	DEFINE_LOCK_GUARD_0(_name,					\
			    _T->saved = (_cond) ? kpkeys_set_level(_level) :	\
						  kpkeys_saved_unchanged(),	\
			    kpkeys_restore_pkey_reg(_T->saved),	\
			    struct kpkeys_saved saved)

/*
 * Hardened page tables (CONFIG_KPKEYS_HARDENED_PGTABLES): page-table pages
 * carry KPKEYS_PKEY_PGTABLES in the linear map, and page-table writers run
 * at KPKEYS_LVL_PGTABLES:
 *
 *	guard(kpkeys_hardened_pgtables)();
 *	WRITE_ONCE(*ptep, pte);
 *
 * Inside a lazy MMU section the level is switched once, by the first
 * write's guard, and restored by lazy_mmu_mode_disable(); the guards of
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

struct page;
struct page *kpkeys_pgtable_alloc(gfp_t gfp, unsigned int order);
bool kpkeys_pgtable_free(struct page *page);
bool kpkeys_pgtable_free_reserved(struct page *page);
bool kpkeys_pgtable_keyed(const void *table);
void kpkeys_pgtables_unkeyed_begin(void);
void kpkeys_pgtables_unkeyed_end(void);
void kpkeys_pgtables_key_unkeyed(void);

/*
 * The writer runs inside a batched lazy MMU section.  Never in an
 * interrupt or a softirq: exception and NMI entry through the generic
 * entry code (kpkeys_irqentry_enter(), kpkeys_irqentry_nmi_enter()) and
 * softirq processing (kpkeys_softirq_enter()) clear the interrupted
 * task's state for the handler and give it back on exit, so the state
 * alone says it, with no test of preempt_count() in every page-table
 * write.  Code under local_bh_disable() inside a section runs in the
 * section's task and is batched like the rest of it.
 *
 * The task's own state, through current: a load that preemption cannot
 * split, on every architecture.  A per-CPU copy needs this_cpu_read(),
 * which on arm64 and powerpc brackets the load with preempt_disable() and
 * preempt_enable().
 */
static __always_inline bool kpkeys_pgtables_batched(void)
{
#ifdef CONFIG_ARCH_HAS_LAZY_MMU_MODE
	return static_branch_unlikely(&kpkeys_pgtables_batching_key) &&
	       READ_ONCE(current->lazy_mmu_state.kpkeys.batching) == KPKEYS_BATCH_ACTIVE;
#else
	return false;
#endif
}

/*
 * What the page-table guard restores: the state its switch replaced, which
 * is never KPKEYS_LVL_PGTABLES itself (a guard taken at that level writes
 * nothing and restores nothing).  A saved value that says it is, forged
 * or corrupted, restores the default level instead, so that no restore
 * can enter the page-table level.
 */
static __always_inline void kpkeys_hardened_pgtables_restore(struct kpkeys_saved saved)
{
	if (unlikely(saved.reg == arch_kpkeys_level_pkey_reg(KPKEYS_LVL_PGTABLES)))
		saved.reg = kpkeys_restore_invalid(saved.reg);
	kpkeys_restore_pkey_reg(saved);
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
static __always_inline struct kpkeys_saved __kpkeys_hardened_pgtables_enter(void)
{
	kpkeys_stat_inc(KPKEYS_STAT_PGTABLES_SWITCHES);
	return kpkeys_set_level(KPKEYS_LVL_PGTABLES);
}

static __always_inline void __kpkeys_hardened_pgtables_leave(struct kpkeys_saved saved)
{
	kpkeys_hardened_pgtables_restore(saved);
}
#else
struct kpkeys_saved __kpkeys_hardened_pgtables_enter(void);
void __kpkeys_hardened_pgtables_leave(struct kpkeys_saved saved);
#endif

/*
 * The guard's entry and exit.  Only the two tests are inlined into every
 * page-table writer: the static branch (a NOP when hardened page tables
 * are off) and, when on, the batching check.
 */
static __always_inline struct kpkeys_saved kpkeys_hardened_pgtables_enter(void)
{
	if (!kpkeys_hardened_pgtables_enabled())
		return kpkeys_saved_unchanged();
	if (kpkeys_pgtables_batched()) {
		kpkeys_check_level(KPKEYS_LVL_PGTABLES);
		kpkeys_stat_inc(KPKEYS_STAT_PGTABLES_SKIPPED);
		return kpkeys_saved_unchanged();
	}
	return __kpkeys_hardened_pgtables_enter();
}

static __always_inline void kpkeys_hardened_pgtables_leave(struct kpkeys_saved saved)
{
	/* The checker sees every restore; it pairs them with the switches. */
	if (saved.reg != KPKEYS_PKEY_REG_INVAL || IS_ENABLED(CONFIG_KPKEYS_CHECK))
		__kpkeys_hardened_pgtables_leave(saved);
}

/**
 * kpkeys_check_pgtable_write() - a page-table store is about to be made
 * @table: the entry that is written
 *
 * Every page-table writer of an architecture calls this at its store,
 * after its guard.  With %CONFIG_KPKEYS_CHECK, a store to a keyed table
 * at any level but %KPKEYS_LVL_PGTABLES is reported, with or without pkey
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
 * write enters the level (__kpkeys_hardened_pgtables_enter()), so that a
 * section with one write writes the register as often as the write alone
 * would (one switch and one restore), and a section with none never.
 */
static __always_inline void kpkeys_lazy_mmu_enter(struct kpkeys_lazy_mmu *lazy)
{
	if (!static_branch_unlikely(&kpkeys_pgtables_batching_key))
		return;
	kpkeys_stat_inc(KPKEYS_STAT_LAZY_SECTIONS);
	lazy->batching = KPKEYS_BATCH_PENDING;
}

/**
 * kpkeys_lazy_mmu_leave() - stop batching, restore the state before the
 *	section's first page-table write
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
		kpkeys_hardened_pgtables_leave(lazy->saved);
}

#else /* !CONFIG_KPKEYS_HARDENED_PGTABLES */

static __always_inline bool kpkeys_hardened_pgtables_enabled(void)
{
	return false;
}

static __always_inline bool kpkeys_pgtables_batched(void)
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

static __always_inline struct kpkeys_saved kpkeys_hardened_pgtables_enter(void)
{
	return kpkeys_saved_unchanged();
}

static __always_inline void kpkeys_hardened_pgtables_leave(struct kpkeys_saved saved) {}

static __always_inline void kpkeys_lazy_mmu_enter(struct kpkeys_lazy_mmu *lazy) {}
static __always_inline void kpkeys_lazy_mmu_leave(struct kpkeys_lazy_mmu *lazy) {}
static __always_inline void kpkeys_check_pgtable_write(const void *table) {}

#endif /* CONFIG_KPKEYS_HARDENED_PGTABLES */

/*
 * guard(kpkeys_hardened_pgtables)(): write access to page-table pages for
 * the rest of the scope.  Without CONFIG_KPKEYS_HARDENED_PGTABLES it is
 * empty and generates no code.
 */
#ifdef CONFIG_KPKEYS_HARDENED_PGTABLES
DEFINE_LOCK_GUARD_0(kpkeys_hardened_pgtables,
		    _T->saved = kpkeys_hardened_pgtables_enter(),
		    kpkeys_hardened_pgtables_leave(_T->saved),
		    struct kpkeys_saved saved)
#else
DEFINE_LOCK_GUARD_0(kpkeys_hardened_pgtables, (void)_T, (void)_T)
#endif

#endif /* _LINUX_KPKEYS_H */
