/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * kpkeys hooks of the entry code (generic entry, softirqs, the arch paths
 * outside generic entry), the scheduler, fork and the checker.  Only those
 * and the tests of these hooks include this header; everything else uses
 * <linux/kpkeys.h>.
 *
 * Exception entry from kernel mode runs the handler in the default context
 * and outside any batched lazy MMU section: the interrupted code may have
 * been in another context (hardware) or batching (software).  Both are
 * saved in the irqentry state and given back on exit.  Return to user
 * space forces the default context.  The pkey register, the batching
 * state and the checker's context follow the task across context
 * switches.
 */
#ifndef _LINUX_KPKEYS_ENTRY_H
#define _LINUX_KPKEYS_ENTRY_H

#include <linux/kpkeys_check.h>
#include <linux/sched.h>

#ifdef CONFIG_KPKEYS_HARDENED_PGTABLES
/*
 * The writer runs inside a batched lazy MMU section, after its first
 * page-table write.  Never in an interrupt or a softirq: exception and NMI
 * entry through the generic entry code (kpkeys_irqentry_enter(),
 * kpkeys_irqentry_nmi_enter()) and softirq processing
 * (kpkeys_softirq_enter()) clear the interrupted task's state for the
 * handler and give it back on exit, so the state alone says it, with no
 * test of preempt_count().  Code under local_bh_disable() inside a section
 * runs in the section's task and is batched like the rest of it.
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
#else
static __always_inline bool kpkeys_pgtables_batched(void)
{
	return false;
}
#endif

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
 * for themselves, since entry gave it the default context.  The task's state
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
 * kpkeys_enter_default() - run in the default context from here on
 *
 * For code that runs on behalf of no one in particular in whatever
 * context it finds (exception handlers, softirqs run from
 * local_bh_enable(), the WARN path).  noinstr.
 *
 * Return: what to give kpkeys_leave_default(); nothing written if the
 * default context was in place.
 */
static __always_inline struct arch_kpkeys_state kpkeys_enter_default(void)
{
	struct arch_kpkeys_state prev;

	if (!kpkeys_supported())
		return ARCH_KPKEYS_STATE_UNCHANGED;
	prev = arch_kpkeys_switch(arch_kpkeys_ctx_state(KPKEYS_CTX_DEFAULT));
	if (arch_kpkeys_state_written(prev))
		kpkeys_stat_inc_entry(KPKEYS_STAT_ENTRY_REG_WRITES);
	return prev;
}

/**
 * kpkeys_leave_default() - undo kpkeys_enter_default()
 * @prev: what it returned
 *
 * The register gets back exactly what kpkeys_enter_default() found,
 * whatever the code in between left in it: nothing written means the
 * default context was there, and it is put back (a handler that entered a
 * context without leaving it, or that resumed the interrupted task's lazy
 * MMU section, leaves nothing behind).  A state that no context produces
 * (it was kept in writable memory) is not loaded: the default context is
 * put back instead.
 */
static __always_inline void kpkeys_leave_default(struct arch_kpkeys_state prev)
{
	if (!kpkeys_supported())
		return;
	if (!arch_kpkeys_state_written(prev) || !kpkeys_arch_state_valid(prev))
		prev = arch_kpkeys_ctx_state(KPKEYS_CTX_DEFAULT);
	if (arch_kpkeys_state_written(arch_kpkeys_switch(prev)))
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
	state->arch_state = kpkeys_enter_default();
	kpkeys_batching_irqentry_enter(state);
	kpkeys_check_irqentry_enter(&state->check);
}

/**
 * kpkeys_softirq_enter() - softirqs run from local_bh_enable()
 * @state: where to save what the softirqs must not inherit
 *
 * The softirqs run on the task of whoever enabled bottom halves, in its
 * kpkeys context and, inside a lazy MMU section, batching: they get the
 * default context and no batching, as exception entry gives a handler.
 * Interrupts are disabled.
 */
static __always_inline void kpkeys_softirq_enter(struct kpkeys_irqentry_state *state)
{
	state->arch_state = kpkeys_enter_default();
	kpkeys_batching_irqentry_enter(state);
}

static __always_inline void kpkeys_softirq_exit(const struct kpkeys_irqentry_state *state)
{
	kpkeys_batching_irqentry_exit(state);
	kpkeys_leave_default(state->arch_state);
}

/**
 * kpkeys_irqentry_nmi_enter() - NMI-class entry (irqentry_nmi_enter())
 * @state: where to save what the handler must not inherit
 *
 * Interrupts off do not keep NMIs out of the window between an
 * architecture's write of its register copy and of the register (x86:
 * the PKRS copy, then the MSR), so the copy cannot be trusted here: the
 * default context is written whatever the copy says, and what the copy
 * says is what exit loads (arch_kpkeys_switch_nmi()).
 */
static __always_inline void kpkeys_irqentry_nmi_enter(struct kpkeys_irqentry_state *state)
{
	struct arch_kpkeys_state def = arch_kpkeys_ctx_state(KPKEYS_CTX_DEFAULT);

	state->arch_state = ARCH_KPKEYS_STATE_UNCHANGED;
	/*
	 * Without hardened page tables, kpkeys' only user, no context is
	 * entered (but by the kpkeys KUnit tests), so a copy that says
	 * "default" is the register: NMIs (the watchdog, perf sampling)
	 * then write nothing.
	 */
	if (kpkeys_supported() &&
	    (kpkeys_hardened_pgtables_enabled() ||
	     !arch_kpkeys_state_equal(arch_kpkeys_read(), def))) {
		state->arch_state = arch_kpkeys_switch_nmi(def);
		if (ARCH_KPKEYS_NMI_WRITES ||
		    arch_kpkeys_state_written(state->arch_state))
			kpkeys_stat_inc_entry(KPKEYS_STAT_ENTRY_REG_WRITES);
	}
	kpkeys_batching_irqentry_enter(state);
	kpkeys_check_irqentry_enter(&state->check);
}

/**
 * kpkeys_irqentry_exit() - give the interrupted code back its state
 * @state: what kpkeys_irqentry_enter() saved
 *
 * A state that no context produces (the irqentry state is on the stack)
 * is not loaded: the interrupted code gets the default context.
 */
static __always_inline void kpkeys_irqentry_exit(const struct kpkeys_irqentry_state *state)
{
	kpkeys_check_irqentry_exit(&state->check);
	kpkeys_batching_irqentry_exit(state);
	kpkeys_leave_default(state->arch_state);
}

/**
 * kpkeys_exit_to_user_mode() - last kpkeys step before returning to user
 *
 * The context must be the default; the checker reports it if not, and the
 * register is put back to the default whatever the software state says.
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
 * Called by the scheduler, interrupts disabled: a task may sleep in a
 * context other than the default, or inside a batched lazy MMU section
 * (arm64 does), and the task that runs meanwhile inherits neither.  The
 * batching state is the task's own (&task_struct.lazy_mmu_state), so only
 * the register is switched here.  From here to switch_to(), current is
 * still @prev while the register holds @next's context: nothing in
 * between writes a page table.
 */
static __always_inline void kpkeys_sched_switch(struct task_struct *prev,
						struct task_struct *next)
{
#ifdef CONFIG_ARCH_HAS_KPKEYS
	if (kpkeys_supported()) {
		struct arch_kpkeys_state to = next->kpkeys_arch_state;
		struct arch_kpkeys_state from;

		/* Kept in task_struct: only a context's state is loaded. */
		if (!kpkeys_arch_state_valid(to))
			to = arch_kpkeys_ctx_state(KPKEYS_CTX_DEFAULT);
		from = arch_kpkeys_switch(to);
		if (arch_kpkeys_state_written(from))
			kpkeys_stat_inc_entry(KPKEYS_STAT_SCHED_REG_WRITES);
		prev->kpkeys_arch_state = arch_kpkeys_state_written(from) ? from : to;
	}
#endif
}

/**
 * kpkeys_fork() - a new task starts in the default context
 * @p: the new task
 */
static inline void kpkeys_fork(struct task_struct *p)
{
#if defined(CONFIG_KPKEYS_HARDENED_PGTABLES) && defined(CONFIG_ARCH_HAS_LAZY_MMU_MODE)
	/* dup_task_struct() copied the parent's. */
	p->lazy_mmu_state.kpkeys = (struct kpkeys_lazy_mmu){};
#endif
#ifdef CONFIG_ARCH_HAS_KPKEYS
	p->kpkeys_arch_state = arch_kpkeys_ctx_state(KPKEYS_CTX_DEFAULT);
#endif
#ifdef CONFIG_KPKEYS_CHECK
	p->kpkeys_check = (struct kpkeys_check_state){ .ctx = KPKEYS_CTX_DEFAULT };
#endif
}

#else /* !CONFIG_KPKEYS */

static __always_inline struct arch_kpkeys_state kpkeys_enter_default(void)
{
	return ARCH_KPKEYS_STATE_UNCHANGED;
}

static __always_inline void kpkeys_leave_default(struct arch_kpkeys_state prev) {}
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
