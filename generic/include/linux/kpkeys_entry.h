/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * kpkeys hooks of the entry code (generic entry, softirqs, the arch paths
 * outside generic entry), the scheduler, fork and the checker.  Only those
 * and the tests of these hooks include this header; everything else uses
 * <linux/kpkeys.h>.
 *
 * Exception entry from kernel mode runs the handler at the default level
 * and outside any batched lazy MMU section: the interrupted code may have
 * been at another level (hardware) or batching (software).  Both are
 * saved in the irqentry state and given back on exit.  Return to user
 * space forces the default level.  The pkey register, the batching state
 * and the checker's level follow the task across context switches.
 */
#ifndef _LINUX_KPKEYS_ENTRY_H
#define _LINUX_KPKEYS_ENTRY_H

#include <linux/kpkeys_check.h>
#include <linux/sched.h>

#ifdef CONFIG_KPKEYS

/*
 * Counting in noinstr code with interrupts off (or in softirq entry):
 * raw_cpu_inc(), which the generic percpu code does not wrap in
 * preempt_disable_notrace()/preempt_enable_notrace().
 */
static __always_inline void kpkeys_stat_inc_entry(enum kpkeys_stat stat)
{
#ifdef CONFIG_KPKEYS_STATS
	if (kpkeys_stats_enabled())
		raw_cpu_inc(kpkeys_stats[stat]);
#endif
}

#ifdef CONFIG_KPKEYS_CHECK
void kpkeys_check_irqentry_enter(struct kpkeys_check_state *save);
void kpkeys_check_irqentry_exit(const struct kpkeys_check_state *save);
#else
static __always_inline void kpkeys_check_irqentry_enter(struct kpkeys_check_state *save) {}
static __always_inline void kpkeys_check_irqentry_exit(const struct kpkeys_check_state *save) {}
#endif

#if defined(CONFIG_KPKEYS_HARDENED_PGTABLES) && defined(CONFIG_ARCH_HAS_LAZY_MMU_MODE)
/*
 * Leave the batched section for the handler: its page-table writes switch
 * for themselves, since entry gave it the default level.  The task's state
 * is what the guard reads, and clearing it also keeps the batching from
 * coming back if the handler sleeps and the task is switched in again.
 */
static __always_inline void
kpkeys_batching_irqentry_enter(struct kpkeys_irqentry_state *state)
{
	struct kpkeys_lazy_mmu *lazy = &current->lazy_mmu_state.kpkeys;

	state->batching = lazy->batching;
	if (state->batching != KPKEYS_BATCH_NONE)
		WRITE_ONCE(lazy->batching, KPKEYS_BATCH_NONE);
}

/*
 * Exactly as entry found it, whatever the handler left: a handler in task
 * context shares the interrupted task's lazy MMU state, and one that
 * resumed it (lazy_mmu_mode_pause() and _resume(), as KASAN's vmalloc
 * shadow does) would make the interrupted section pending or active
 * behind its back.
 */
static __always_inline void
kpkeys_batching_irqentry_exit(const struct kpkeys_irqentry_state *state)
{
	WRITE_ONCE(current->lazy_mmu_state.kpkeys.batching, state->batching);
}
#else
static __always_inline void kpkeys_batching_irqentry_enter(struct kpkeys_irqentry_state *state) {}
static __always_inline void
kpkeys_batching_irqentry_exit(const struct kpkeys_irqentry_state *state) {}
#endif

/**
 * kpkeys_enter_default() - run at the default level from here on
 *
 * For code that runs on behalf of no one in particular in whatever
 * context it finds (exception handlers, softirqs run from
 * local_bh_enable(), the WARN path).  noinstr.
 *
 * Return: what to give kpkeys_leave_default(); %KPKEYS_PKEY_REG_INVAL if
 * nothing was changed.
 */
static __always_inline u64 kpkeys_enter_default(void)
{
	u64 reg;

	if (!arch_kpkeys_enabled())
		return KPKEYS_PKEY_REG_INVAL;
	reg = kpkeys_switch_managed(arch_kpkeys_level_pkey_reg(KPKEYS_LVL_DEFAULT));
	if (reg != KPKEYS_PKEY_REG_INVAL)
		kpkeys_stat_inc_entry(KPKEYS_STAT_ENTRY_REG_WRITES);
	return reg;
}

/**
 * kpkeys_leave_default() - undo kpkeys_enter_default()
 * @reg: what it returned
 *
 * The register gets back exactly what kpkeys_enter_default() found,
 * whatever the code in between left in it: %KPKEYS_PKEY_REG_INVAL means
 * the default level was there, and it is put back (a handler that
 * switched without restoring, or that resumed the interrupted task's lazy
 * MMU section, leaves nothing behind).  A saved value that no level
 * produces (it was kept in writable memory) is not restored: the default
 * level is put back instead.
 */
static __always_inline void kpkeys_leave_default(u64 reg)
{
	if (!arch_kpkeys_enabled())
		return;
	if (reg == KPKEYS_PKEY_REG_INVAL || !kpkeys_managed_valid(reg))
		reg = arch_kpkeys_level_pkey_reg(KPKEYS_LVL_DEFAULT);
	if (kpkeys_switch_managed(reg) != KPKEYS_PKEY_REG_INVAL)
		kpkeys_stat_inc_entry(KPKEYS_STAT_ENTRY_REG_WRITES);
}

/**
 * kpkeys_irqentry_enter() - exception entry from kernel mode
 * @state: where to save what the handler must not inherit
 *
 * noinstr: the arch primitives used here must be noinstr-safe.
 */
static __always_inline void kpkeys_irqentry_enter(struct kpkeys_irqentry_state *state)
{
	state->reg = kpkeys_enter_default();
	kpkeys_batching_irqentry_enter(state);
	kpkeys_check_irqentry_enter(&state->check);
}

/**
 * kpkeys_softirq_enter() - softirqs run from local_bh_enable()
 * @state: where to save what the softirqs must not inherit
 *
 * The softirqs borrow the context of whoever enabled bottom halves, at
 * its level and, inside a lazy MMU section, batching: they get the
 * default level and no batching, as exception entry gives a handler.
 * Interrupts are disabled.
 */
static __always_inline void kpkeys_softirq_enter(struct kpkeys_irqentry_state *state)
{
	state->reg = kpkeys_enter_default();
	kpkeys_batching_irqentry_enter(state);
}

static __always_inline void kpkeys_softirq_exit(const struct kpkeys_irqentry_state *state)
{
	kpkeys_batching_irqentry_exit(state);
	kpkeys_leave_default(state->reg);
}

/**
 * kpkeys_irqentry_nmi_enter() - NMI-class entry (irqentry_nmi_enter())
 * @state: where to save what the handler must not inherit
 *
 * Interrupts off do not keep NMIs out of the window between an
 * architecture's write of its register copy and of the register (x86:
 * the PKRS copy, then the MSR), so the copy cannot be trusted here: the
 * default level is written whatever the copy says, and the copy's managed
 * bits are what exit restores.  Either order of the interrupted writes
 * then ends with copy and register agreeing.
 */
static __always_inline void kpkeys_irqentry_nmi_enter(struct kpkeys_irqentry_state *state)
{
	u64 def = arch_kpkeys_level_pkey_reg(KPKEYS_LVL_DEFAULT);

	state->reg = KPKEYS_PKEY_REG_INVAL;
	/*
	 * Without hardened page tables, kpkeys' only user, no level is
	 * entered (but by the kpkeys KUnit tests), so a copy that says
	 * "default" is the register: NMIs (the watchdog, perf sampling)
	 * then write nothing.
	 */
	if (arch_kpkeys_enabled() &&
	    (kpkeys_hardened_pgtables_enabled() ||
	     kpkeys_read_managed() != def)) {
		u64 prev = kpkeys_force_managed(def);

		kpkeys_stat_inc_entry(KPKEYS_STAT_ENTRY_REG_WRITES);
		if (prev != def)
			state->reg = prev;
	}
	kpkeys_batching_irqentry_enter(state);
	kpkeys_check_irqentry_enter(&state->check);
}

/**
 * kpkeys_irqentry_exit() - give the interrupted code back its state
 * @state: what kpkeys_irqentry_enter() saved
 *
 * A saved value that no level produces (the irqentry state is on the
 * stack) is not restored: the interrupted code gets the default level.
 */
static __always_inline void kpkeys_irqentry_exit(const struct kpkeys_irqentry_state *state)
{
	kpkeys_check_irqentry_exit(&state->check);
	kpkeys_batching_irqentry_exit(state);
	kpkeys_leave_default(state->reg);
}

/**
 * kpkeys_exit_to_user_mode() - last kpkeys step before returning to user
 *
 * The level must be the default; the checker reports it if not, and the
 * register is put back at the default whatever the software state says.
 */
static __always_inline void kpkeys_exit_to_user_mode(void)
{
	kpkeys_check_user_return();
	kpkeys_enter_default();
}

/**
 * kpkeys_sched_switch() - the kpkeys state follows the task
 * @prev: the task being switched out
 * @next: the task being switched in
 *
 * Called by the scheduler, interrupts disabled: a task may sleep at a
 * level other than the default, or inside a batched lazy MMU section (arm64
 * does), and the task that runs meanwhile inherits neither.  The batching
 * state is the task's own (&task_struct.lazy_mmu_state), so only the
 * register is switched here.  From here to switch_to(), current is still
 * @prev while the register holds @next's level: nothing in between
 * writes a page table.
 */
static __always_inline void kpkeys_sched_switch(struct task_struct *prev,
						struct task_struct *next)
{
#ifdef CONFIG_ARCH_HAS_KPKEYS
	if (arch_kpkeys_enabled()) {
		u64 next_bits = next->kpkeys_pkey_reg;
		u64 prev_bits;

		/* Kept in task_struct: only a level's bits are loaded. */
		if (!kpkeys_managed_valid(next_bits))
			next_bits = arch_kpkeys_level_pkey_reg(KPKEYS_LVL_DEFAULT);
		prev_bits = kpkeys_switch_managed(next_bits);
		if (prev_bits != KPKEYS_PKEY_REG_INVAL)
			kpkeys_stat_inc_entry(KPKEYS_STAT_SCHED_REG_WRITES);
		prev->kpkeys_pkey_reg = prev_bits == KPKEYS_PKEY_REG_INVAL ?
					next_bits : prev_bits;
	}
#endif
}

/**
 * kpkeys_fork() - a new task starts at the default level
 * @p: the new task
 */
static inline void kpkeys_fork(struct task_struct *p)
{
#if defined(CONFIG_KPKEYS_HARDENED_PGTABLES) && defined(CONFIG_ARCH_HAS_LAZY_MMU_MODE)
	/* dup_task_struct() copied the parent's. */
	p->lazy_mmu_state.kpkeys = (struct kpkeys_lazy_mmu){};
#endif
#ifdef CONFIG_ARCH_HAS_KPKEYS
	p->kpkeys_pkey_reg = arch_kpkeys_level_pkey_reg(KPKEYS_LVL_DEFAULT);
#endif
#ifdef CONFIG_KPKEYS_CHECK
	p->kpkeys_check = (struct kpkeys_check_state){ .level = KPKEYS_LVL_DEFAULT };
#endif
}

#else /* !CONFIG_KPKEYS */

static __always_inline u64 kpkeys_enter_default(void)
{
	return KPKEYS_PKEY_REG_INVAL;
}

static __always_inline void kpkeys_leave_default(u64 reg) {}
static __always_inline void kpkeys_irqentry_enter(struct kpkeys_irqentry_state *state) {}
static __always_inline void kpkeys_softirq_enter(struct kpkeys_irqentry_state *state) {}
static __always_inline void kpkeys_softirq_exit(const struct kpkeys_irqentry_state *state) {}
static __always_inline void kpkeys_irqentry_nmi_enter(struct kpkeys_irqentry_state *state) {}
static __always_inline void kpkeys_irqentry_exit(const struct kpkeys_irqentry_state *state) {}
static __always_inline void kpkeys_exit_to_user_mode(void) {}
static __always_inline void kpkeys_sched_switch(struct task_struct *prev,
						struct task_struct *next) {}
static inline void kpkeys_fork(struct task_struct *p) {}

#endif /* CONFIG_KPKEYS */

#endif /* _LINUX_KPKEYS_ENTRY_H */
